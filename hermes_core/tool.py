"""Tool definitions, checked where they are declared.

:func:`define_tool` runs at module load, so a malformed tool is a crash on
boot with a message saying which tool, which field, what was wrong and what
would have been right, never a failure on the first call.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, final

from hermes_core.errors import InvalidDefinitionError
from hermes_core.schema import NAME_PATTERN, AnySchema, ObjectSchema, OptionalSchema, RefSchema, Schema
from hermes_core.schema._compile import Validator, closed_validator

__all__ = ["PERMISSION_PATTERN", "Handler", "Tool", "define_tool"]

#: What a handler is: a plain or ``async`` function of the parsed input.
Handler = Callable[[Any], Any] | Callable[[Any], Awaitable[Any]]

#: A permission a tool declares: ``namespace:action``, each part ``[a-z][a-z0-9_-]*``.
PERMISSION_PATTERN = re.compile(r"[a-z][a-z0-9_-]*:[a-z][a-z0-9_-]*\Z")

_NAME_MAX = 64
# semver.org's own expression: no leading zeros, optional pre-release and build.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\Z"
)


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Tool:
    """A checked, immutable tool declaration. Build it with :func:`define_tool`.

    Every field is checked when the tool is made, however it is made
    (``define_tool``, ``Tool(...)`` or ``dataclasses.replace``), and a
    malformed one raises :class:`~hermes_core.InvalidDefinitionError`.

    Attributes:
        name: dotted lowercase name, e.g. ``fs.write``.
        description: what the tool does; the model reads it to decide whether to call it.
        version: semantic version of the tool.
        input: the object schema (or ``s.ref``) its input must match.
        output: the schema its result must match.
        permissions: the permissions a caller must be granted, e.g. ``("fs:write",)``.
        handler: the function called with the parsed input.
        is_async: whether the handler is an ``async def`` function (derived).

    """

    name: str
    description: str
    version: str
    input: Schema
    output: Schema = field(default_factory=AnySchema)
    permissions: tuple[str, ...] = ()
    handler: Handler
    is_async: bool = field(init=False, default=False)
    # Compiled here, at definition time, unless the schema holds a ref (the runtime resolves those).
    _input_validator: Validator | None = field(init=False, default=None, repr=False, compare=False)
    _output_validator: Validator | None = field(init=False, default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        decl = _check_fields(self)
        derive = functools.partial(object.__setattr__, self)  # a frozen dataclass sets its derived fields so
        if self.output is None:
            derive("output", AnySchema())
        derive("permissions", _check_permissions(decl, self.permissions))
        derive("is_async", _check_handler(decl, self.handler))
        derive("_input_validator", _compile_if_closed(self.input))
        derive("_output_validator", _compile_if_closed(self.output))


def _describe(value: object) -> str:
    if isinstance(value, Schema):
        return type(value).__name__  # its dataclass repr lists every field: too much for a message
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_name(decl: str, name: object) -> str:
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or len(name) > _NAME_MAX:
        raise InvalidDefinitionError(
            decl,
            "name",
            "must be dot-separated lowercase segments, each a letter then letters, digits or "
            f"underscores, at most {_NAME_MAX} characters (such as 'fs.write'), got {_describe(name)}",
        )
    return name


def _check_handler(decl: str, handler: object) -> bool:
    """Check *handler* takes one positional argument; return whether it is async."""
    if not callable(handler):
        raise InvalidDefinitionError(
            decl, "handler", f"must be a function taking the parsed input, got {type(handler).__name__}"
        )
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        signature = None  # some builtins have no signature: trust them
    if signature is not None:
        try:
            signature.bind(object())
        except TypeError:
            raise InvalidDefinitionError(
                decl,
                "handler",
                f"must accept exactly one positional argument (the parsed input), but its signature is {signature}",
            ) from None
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - an async __call__ makes an async handler
    )


def _compile_if_closed(schema: Schema) -> Validator | None:
    """Compile *schema* now unless it names other schemas, which only a runtime can resolve."""
    if any(True for _ in schema.ref_names()):
        return None
    return closed_validator(schema)


def define_tool(
    *,
    name: str,
    description: str,
    version: str,
    input: Schema,  # noqa: A002 - the field is called input everywhere a tool is described
    output: Schema | None = None,
    permissions: Iterable[str] = (),
    handler: Handler,
) -> Tool:
    """Declare a tool, checking every field now.

    Args:
        name: dot-separated lowercase segments, each ``[a-z][a-z0-9_]*``, at
            most 64 characters (``fs.write``, ``http.get``).
        description: what the tool does and when to use it; must not be blank,
            because it is what a model reads to decide whether to call the tool.
        version: a semantic version such as ``1.0.0`` or ``2.1.0-rc.1+build.5``.
        input: an ``s.object(...)`` schema, or an ``s.ref(...)`` to one.
        output: the schema the handler's result must match; default ``s.any()``.
        permissions: what the caller must be granted, each ``namespace:action``
            with parts ``[a-z][a-z0-9_-]*`` (``fs:write``).
        handler: a plain or ``async`` function taking the parsed input as its one
            positional argument, returning the output.

    Returns:
        The immutable :class:`Tool`, with its schemas compiled.

    Raises:
        InvalidDefinitionError: naming the tool and the field at fault.

    """
    return Tool(
        name=name,
        description=description,
        version=version,
        input=input,
        output=AnySchema() if output is None else output,
        permissions=permissions,  # type: ignore[arg-type] # any iterable: Tool makes it a checked tuple
        handler=handler,
    )


def _check_fields(tool: Tool) -> str:
    """Check the fields a tool holds as given; return how messages name it (``tool "fs.write"``)."""
    name, description, version = tool.name, tool.description, tool.version
    decl = f"tool {json.dumps(name)}" if isinstance(name, str) else "tool"
    _check_name(decl, name)
    decl = f'tool "{name}"'
    if not isinstance(description, str) or not description.strip():
        raise InvalidDefinitionError(
            decl,
            "description",
            f"must be a non-blank string saying what the tool does (a model reads it to decide "
            f"whether to call the tool), got {_describe(description)}",
        )
    if not isinstance(version, str) or not _SEMVER.match(version):
        raise InvalidDefinitionError(
            decl,
            "version",
            f"must be a semantic version MAJOR.MINOR.PATCH such as '1.0.0' or '2.1.0-rc.1', got {_describe(version)}",
        )
    if not isinstance(tool.input, ObjectSchema | RefSchema):
        raise InvalidDefinitionError(
            decl,
            "input",
            "must be an object schema such as s.object({'path': s.string()}) (or an s.ref to one), "
            f"got {_describe(tool.input)}",
        )
    output: object = tool.output
    if output is not None and (not isinstance(output, Schema) or isinstance(output, OptionalSchema)):
        raise InvalidDefinitionError(
            decl, "output", f"must be a schema such as s.string(), or None for any JSON value, got {_describe(output)}"
        )
    return decl


def _check_permissions(decl: str, permissions: Iterable[str]) -> tuple[str, ...]:
    """The permissions, checked, each kept once, in order."""
    if isinstance(permissions, str):
        raise InvalidDefinitionError(
            decl, "permissions", f"must be a list of permissions such as ['fs:write'], got the string {permissions!r}"
        )
    checked: list[str] = []
    for index, permission in enumerate(permissions):
        if not isinstance(permission, str) or not PERMISSION_PATTERN.match(permission):
            raise InvalidDefinitionError(
                decl,
                f"permissions[{index}]",
                "must be 'namespace:action', each part a lowercase letter then letters, digits, "
                f"'_' or '-' (such as 'fs:write'), got {_describe(permission)}",
            )
        if permission not in checked:
            checked.append(permission)
    return tuple(checked)
