"""hermesos-core: LLM tools as plugins, with errors a model can act on.

Importing this package has no side effects: it discovers and loads nothing.
"""

from __future__ import annotations

from hermes_core import schema
from hermes_core._errors import (
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
from hermes_core._hookspecs import hookimpl
from hermes_core._names import NAME_MAX, NAME_PATTERN, case_key, is_name, suggest
from hermes_core._permissions import GRANT_PATTERN, EnvGrants, PermissionProvider, StaticGrants
from hermes_core._plugins import (
    Plugin,
    PluginLoadError,
    PluginOrigin,
    PluginProblem,
    PluginSet,
    discover_plugins,
    load_runtime,
)
from hermes_core._resources import Resource, ResourceError
from hermes_core._runtime import Runtime
from hermes_core._settings import read_config_file, setting, user_config_dir, user_config_file
from hermes_core._toolhints import ToolHints
from hermes_core._tools import PERMISSION_PATTERN, Tool, define_tool, tool
from hermes_core._tracing import disable_tracing, enable_tracing, tracing_enabled
from hermes_core._version import __version__
from hermes_core._wire import wire_name

__all__ = [
    "GRANT_PATTERN",
    "NAME_MAX",
    "NAME_PATTERN",
    "PERMISSION_PATTERN",
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
    "ToolHints",
    "ToolNotFoundError",
    "__version__",
    "case_key",
    "define_tool",
    "disable_tracing",
    "discover_plugins",
    "enable_tracing",
    "hookimpl",
    "is_name",
    "load_runtime",
    "read_config_file",
    "reject",
    "schema",
    "setting",
    "shorten",
    "suggest",
    "tool",
    "tracing_enabled",
    "user_config_dir",
    "user_config_file",
    "wire_name",
]
