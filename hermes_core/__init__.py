"""hermesos-core: LLM tools as plugins, with errors a model can act on.

Importing this package has no side effects: it discovers and loads nothing. It
imports nothing either until a name is asked for: each public name is imported
from its private module on first use (PEP 562), so that ``hermesos --version``
and a plugin that needs one name do not pay for the rest (docs/performance.md,
start-up). ``from hermes_core import Tool`` works as with any module.
"""

from __future__ import annotations

from hermes_core._base._version import __version__

# Not typing.TYPE_CHECKING: importing typing would cost 'hermesos --version' a fifth of its time.
TYPE_CHECKING = False
if TYPE_CHECKING:  # what type checkers and the reference see: the real objects
    from typing import Any

    from hermes_core import schema
    from hermes_core._base._errors import (
        ErrorCode,
        InputInvalidError,
        InputRejected,
        InvalidDefinitionError,
        OutputInvalidError,
        PermissionDeniedError,
        SchemaError,
        ToolError,
        ToolFailedError,
        ToolNotFoundError,
        reject,
    )
    from hermes_core._base._frozen import frozen
    from hermes_core._base._issues import Issue, IssueKind, shorten
    from hermes_core._base._names import NAME_MAX, NAME_PATTERN, case_key, is_name, suggest
    from hermes_core._base._tracing import disable_tracing, enable_tracing, tracing_enabled
    from hermes_core._door._wire import wire_name
    from hermes_core._plugins._discover import discover_plugins, load_runtime
    from hermes_core._plugins._hookspecs import hookimpl
    from hermes_core._plugins._set import Plugin, PluginLoadError, PluginOrigin, PluginProblem, PluginSet
    from hermes_core._runtime._permissions import GRANT_PATTERN, EnvGrants, PermissionProvider, StaticGrants
    from hermes_core._runtime._runtime import Runtime
    from hermes_core._tool._approval import Approval, ApprovalRequest, Ask
    from hermes_core._tool._behaviour import ToolHints
    from hermes_core._tool._blocks import MEDIA_MAX, Audio, Content, EmbeddedResource, Image, ResourceLink, Text
    from hermes_core._tool._call_context import CallContext, LogMessage, Progress, current_call
    from hermes_core._tool._decorator import tool
    from hermes_core._tool._definition import PERMISSION_PATTERN, TIMEOUT_MAX, Tool, define_tool
    from hermes_core._tool._resources import Resource, ResourceError

    # Moved to hermes_core.config; here until 0.6 (_MOVED, below), and typed for the code that still imports them.
    from hermes_core.config import check_toml_depth as check_toml_depth
    from hermes_core.config import read_config_file as read_config_file
    from hermes_core.config import read_token_file as read_token_file
    from hermes_core.config import toml_tokens as toml_tokens
    from hermes_core.config import user_config_dir as user_config_dir
    from hermes_core.config import user_config_file as user_config_file
    from hermes_core.config._settings import setting

__all__ = [
    "GRANT_PATTERN",
    "MEDIA_MAX",
    "NAME_MAX",
    "NAME_PATTERN",
    "PERMISSION_PATTERN",
    "TIMEOUT_MAX",
    "Approval",
    "ApprovalRequest",
    "Ask",
    "Audio",
    "CallContext",
    "Content",
    "EmbeddedResource",
    "EnvGrants",
    "ErrorCode",
    "Image",
    "InputInvalidError",
    "InputRejected",
    "InvalidDefinitionError",
    "Issue",
    "IssueKind",
    "LogMessage",
    "OutputInvalidError",
    "PermissionDeniedError",
    "PermissionProvider",
    "Plugin",
    "PluginLoadError",
    "PluginOrigin",
    "PluginProblem",
    "PluginSet",
    "Progress",
    "Resource",
    "ResourceError",
    "ResourceLink",
    "Runtime",
    "SchemaError",
    "StaticGrants",
    "Text",
    "Tool",
    "ToolError",
    "ToolFailedError",
    "ToolHints",
    "ToolNotFoundError",
    "__version__",
    "case_key",
    "current_call",
    "define_tool",
    "disable_tracing",
    "discover_plugins",
    "enable_tracing",
    "frozen",
    "hookimpl",
    "is_name",
    "load_runtime",
    "reject",
    "schema",
    "setting",
    "shorten",
    "suggest",
    "tool",
    "tracing_enabled",
    "wire_name",
]

# Where each public name lives: a module of the package (schema), or the private module defining it.
_PLACES: dict[str, str] = {
    "Approval": "hermes_core._tool._approval",
    "ApprovalRequest": "hermes_core._tool._approval",
    "Ask": "hermes_core._tool._approval",
    "CallContext": "hermes_core._tool._call_context",
    "LogMessage": "hermes_core._tool._call_context",
    "Progress": "hermes_core._tool._call_context",
    "current_call": "hermes_core._tool._call_context",
    "MEDIA_MAX": "hermes_core._tool._blocks",
    "Audio": "hermes_core._tool._blocks",
    "Content": "hermes_core._tool._blocks",
    "EmbeddedResource": "hermes_core._tool._blocks",
    "Image": "hermes_core._tool._blocks",
    "ResourceLink": "hermes_core._tool._blocks",
    "Text": "hermes_core._tool._blocks",
    "tool": "hermes_core._tool._decorator",
    "ErrorCode": "hermes_core._base._errors",
    "InputInvalidError": "hermes_core._base._errors",
    "InputRejected": "hermes_core._base._errors",
    "InvalidDefinitionError": "hermes_core._base._errors",
    "Issue": "hermes_core._base._issues",
    "IssueKind": "hermes_core._base._issues",
    "OutputInvalidError": "hermes_core._base._errors",
    "PermissionDeniedError": "hermes_core._base._errors",
    "SchemaError": "hermes_core._base._errors",
    "ToolError": "hermes_core._base._errors",
    "ToolFailedError": "hermes_core._base._errors",
    "ToolNotFoundError": "hermes_core._base._errors",
    "reject": "hermes_core._base._errors",
    "shorten": "hermes_core._base._issues",
    "frozen": "hermes_core._base._frozen",
    "hookimpl": "hermes_core._plugins._hookspecs",
    "NAME_MAX": "hermes_core._base._names",
    "NAME_PATTERN": "hermes_core._base._names",
    "case_key": "hermes_core._base._names",
    "is_name": "hermes_core._base._names",
    "suggest": "hermes_core._base._names",
    "EnvGrants": "hermes_core._runtime._permissions",
    "GRANT_PATTERN": "hermes_core._runtime._permissions",
    "PermissionProvider": "hermes_core._runtime._permissions",
    "StaticGrants": "hermes_core._runtime._permissions",
    "Plugin": "hermes_core._plugins._set",
    "PluginLoadError": "hermes_core._plugins._set",
    "PluginOrigin": "hermes_core._plugins._set",
    "PluginProblem": "hermes_core._plugins._set",
    "PluginSet": "hermes_core._plugins._set",
    "discover_plugins": "hermes_core._plugins._discover",
    "load_runtime": "hermes_core._plugins._discover",
    "Resource": "hermes_core._tool._resources",
    "ResourceError": "hermes_core._tool._resources",
    "Runtime": "hermes_core._runtime._runtime",
    "setting": "hermes_core.config._settings",
    "ToolHints": "hermes_core._tool._behaviour",
    "PERMISSION_PATTERN": "hermes_core._tool._definition",
    "TIMEOUT_MAX": "hermes_core._tool._definition",
    "Tool": "hermes_core._tool._definition",
    "define_tool": "hermes_core._tool._definition",
    "disable_tracing": "hermes_core._base._tracing",
    "enable_tracing": "hermes_core._base._tracing",
    "tracing_enabled": "hermes_core._base._tracing",
    "__version__": "hermes_core._base._version",
    "wire_name": "hermes_core._door._wire",
    "schema": "hermes_core.schema",
}

# Names that moved to a public module of their own, kept here until 0.6 (CHANGELOG.md): not in __all__; the
# first use through the facade warns, saying where the name lives now.
_MOVED: dict[str, str] = {
    "check_toml_depth": "hermes_core.config",
    "read_config_file": "hermes_core.config",
    "read_token_file": "hermes_core.config",
    "toml_tokens": "hermes_core.config",
    "user_config_dir": "hermes_core.config",
    "user_config_file": "hermes_core.config",
}


def __getattr__(name: str) -> Any:
    place = _PLACES.get(name)
    if place is None:
        if name in _MOVED:
            return _moved(name, _MOVED[name])
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib  # noqa: PLC0415 - see TYPE_CHECKING

    module = importlib.import_module(place)
    value = module if place == f"{__name__}.{name}" else getattr(module, name)
    globals()[name] = value  # asked once: the next access is a plain attribute
    return value


def _moved(name: str, place: str) -> Any:
    """The name that moved to *place*, after a warning saying so; kept, as other names are, once warned of."""
    import importlib  # noqa: PLC0415 - see TYPE_CHECKING
    import warnings  # noqa: PLC0415

    warnings.warn(
        f"hermes_core.{name} has moved to {place}: import it with 'from {place} import {name}'; "
        f"hermes_core.{name} will be removed in 0.6",
        DeprecationWarning,
        stacklevel=3,  # the code that asked: past this function and __getattr__
    )
    # Kept once warned of: "from hermes_core import name" asks twice, and one warning is enough.
    value = globals()[name] = getattr(importlib.import_module(place), name)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
