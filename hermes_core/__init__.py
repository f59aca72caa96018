"""hermesos-core: LLM tools as plugins, with errors a model can act on.

Importing this package has no side effects: it discovers and loads nothing.
"""

from __future__ import annotations

from hermes_core import schema
from hermes_core._version import __version__
from hermes_core.errors import (
    ErrorCode,
    InputInvalidError,
    InputRejected,
    InvalidDefinitionError,
    Issue,
    IssueKind,
    OutputInvalidError,
    PermissionDeniedError,
    SchemaError,
    ToolError,
    ToolFailedError,
    ToolNotFoundError,
    reject,
    shorten,
)
from hermes_core.hookspecs import hookimpl
from hermes_core.permissions import EnvGrants, PermissionProvider, Permissions, StaticGrants
from hermes_core.plugins import (
    Plugin,
    PluginLoadError,
    PluginOrigin,
    PluginProblem,
    PluginSet,
    discover_plugins,
    load_runtime,
)
from hermes_core.runtime import Resource, ResourceError, Runtime
from hermes_core.settings import read_config_file, setting, user_config_dir, user_config_file
from hermes_core.tools import Tool, define_tool, tool
from hermes_core.tracing import disable_tracing, enable_tracing, tracing_enabled

__all__ = [
    "EnvGrants",
    "ErrorCode",
    "InputInvalidError",
    "InputRejected",
    "InvalidDefinitionError",
    "Issue",
    "IssueKind",
    "OutputInvalidError",
    "PermissionDeniedError",
    "PermissionProvider",
    "Permissions",
    "Plugin",
    "PluginLoadError",
    "PluginOrigin",
    "PluginProblem",
    "PluginSet",
    "Resource",
    "ResourceError",
    "Runtime",
    "SchemaError",
    "StaticGrants",
    "Tool",
    "ToolError",
    "ToolFailedError",
    "ToolNotFoundError",
    "__version__",
    "define_tool",
    "disable_tracing",
    "discover_plugins",
    "enable_tracing",
    "hookimpl",
    "load_runtime",
    "read_config_file",
    "reject",
    "schema",
    "setting",
    "shorten",
    "tool",
    "tracing_enabled",
    "user_config_dir",
    "user_config_file",
]
