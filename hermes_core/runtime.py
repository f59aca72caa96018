"""The runtime: calls tools in a fixed order, lookup → permission → input → handler → output.

A :class:`Runtime` is checked when it is built (duplicate names, unresolved
``s.ref`` names, malformed grants and providers) and immutable afterwards, so
it is safe to share across threads and tasks. Everything that can be computed
once (compiled validators, static permission decisions, the name index) is
computed in the constructor; a call is a dict lookup and straight-line code.
"""

from __future__ import annotations

import difflib
import inspect
import re
import sys
from collections.abc import Callable, Coroutine, Iterable, Mapping
from types import MappingProxyType
from typing import Any, final

from hermes_core.errors import (
    InputInvalidError,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    PermissionDeniedError,
    ToolError,
    ToolNotFoundError,
)
from hermes_core.permissions import StaticGrants
from hermes_core.schema import NAME_PATTERN, ObjectSchema, OptionalSchema, RefSchema, Schema
from hermes_core.schema._compile import Validator, compile_schema, raised_issue
from hermes_core.schema._nodes import MISSING
from hermes_core.tool import Tool

__all__ = ["Runtime"]

# Results of these types are never awaitable; skipping the check saves a costly call per await.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})
_SEPARATORS = re.compile(r"[\s_\-/:]+")


def _normalize(name: str) -> str:
    """A tool name as a model might mistype it, folded: ``FS_Write`` and ``fs/write`` → ``fs.write``."""
    return _SEPARATORS.sub(".", name.strip().lower())


@final
class _Entry:
    """Everything a call of one tool needs, resolved at construction."""

    __slots__ = ("check", "handler", "input", "is_async", "missing", "output", "tool")

    def __init__(self, tool: Tool, input_: Validator, output: Validator, missing: str | None, check: bool) -> None:
        self.tool = tool
        self.handler = tool.handler
        self.is_async = tool.is_async
        self.input = input_.entry
        self.output = output.entry
        self.missing = missing  # first permission the static grants leave ungranted
        self.check = check  # False when no permission needs asking at call time


def _checked(
    validate: Callable[[Any, tuple[str | int, ...], list[Issue]], Any],
    value: Any,
    error: type[InputInvalidError | OutputInvalidError],
    tool: str,
) -> Any:
    """Validator.check, inlined, raising *error* for the tool: it runs twice on every call."""
    issues: list[Issue] = []
    try:
        result = validate(value, (), issues)
    except Exception as exc:  # only the value's own code can raise here
        issues = [raised_issue(exc)]
    if issues:
        raise error(tool, issues)
    return result


def _check_provider(index: int, provider: object) -> object:
    if not callable(getattr(provider, "check", None)):
        raise InvalidDefinitionError(
            "Runtime()",
            f"providers[{index}]",
            "must be a permission provider: an object with a method check(tool, permission) "
            f"returning True, False or None; got {type(provider).__name__}",
        )
    return provider


def _resolve_object(schema: Schema, schemas: Mapping[str, Schema]) -> Schema:
    """Follow refs from *schema* to the schema they finally name (a cycle of bare refs stops)."""
    seen: set[str] = set()
    while isinstance(schema, RefSchema) and schema.name in schemas and schema.name not in seen:
        seen.add(schema.name)
        schema = schemas[schema.name]
    return schema


def _check_defaults(decl: str, field: str | None, schema: Schema, schemas: Mapping[str, Schema]) -> None:
    """Check the defaults of optional fields whose schema holds a ref: only now can they be parsed."""
    pending = [schema]
    while pending:
        node = pending.pop()
        # A default whose schema names no other schema was checked when s.optional() made it.
        if isinstance(node, OptionalSchema) and node.default is not MISSING and any(node.schema.ref_names()):
            ok, _, issues = compile_schema(node.schema, schemas).run(node.default)
            if not ok:
                raise InvalidDefinitionError(
                    decl, field, f"has a default that does not match its schema: {issues[0].message('default')}"
                )
        pending.extend(node._children())


_set = object.__setattr__  # the constructor's one way past Runtime.__setattr__


@final
class Runtime:
    """Calls registered tools, checking permissions, input and output on every call.

    Args:
        tools: the tools, each made by :func:`~hermes_core.define_tool`.
        grants: grant patterns: ``fs:write``, ``fs:*`` (a whole namespace) or ``*``.
        providers: permission providers, objects with
            ``check(tool, permission) -> bool | None``, asked on every call of a
            tool that declares permissions. Any False denies, whatever else grants.
        schemas: named schemas, name to schema, that tools use through ``s.ref(name)``.

    Raises:
        InvalidDefinitionError: two tools share a name, an ``s.ref`` names a
            schema *schemas* does not have, or a grant, provider or schema name is
            malformed; the message names the tool and the field.

    """

    __slots__ = ("_by_normal", "_entries", "_grants", "_providers", "_schemas", "_tools")
    _by_normal: dict[str, str]
    _entries: dict[str, _Entry]
    _grants: StaticGrants
    _providers: tuple[object, ...]
    _schemas: Mapping[str, Schema]
    _tools: Mapping[str, Tool]

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        grants: Iterable[str] = (),
        providers: Iterable[object] = (),
        schemas: Mapping[str, Schema] | None = None,
    ) -> None:
        _set(self, "_grants", StaticGrants(grants))
        _set(self, "_providers", tuple(_check_provider(i, p) for i, p in enumerate(providers)))
        _set(self, "_schemas", self._check_schemas(schemas or {}))
        registered: dict[str, Tool] = {}
        for index, tool in enumerate(tools):
            if not isinstance(tool, Tool):
                raise InvalidDefinitionError(
                    "Runtime()", f"tools[{index}]", f"must be a Tool made by define_tool(), got {type(tool).__name__}"
                )
            if tool.name in registered:
                raise InvalidDefinitionError(
                    f'tool "{tool.name}"', "name", "is registered twice; each tool name must be unique in a runtime"
                )
            registered[tool.name] = tool
        _set(self, "_tools", MappingProxyType(registered))
        _set(self, "_entries", {name: self._entry(tool) for name, tool in registered.items()})
        _set(self, "_by_normal", {_normalize(name): name for name in registered})

    # -- construction ----------------------------------------------------------------------

    def _check_schemas(self, schemas: Mapping[str, Schema]) -> Mapping[str, Schema]:
        if not isinstance(schemas, Mapping):
            raise InvalidDefinitionError(
                "Runtime()", "schemas", f"must be a mapping of name to schema, got {type(schemas).__name__}"
            )
        for name, schema in schemas.items():
            if not isinstance(name, str) or not NAME_PATTERN.match(name):
                raise InvalidDefinitionError(
                    "Runtime()", "schemas", f"has the name {name!r}; names are dotted lowercase such as 'fs.path'"
                )
            if not isinstance(schema, Schema) or isinstance(schema, OptionalSchema):
                raise InvalidDefinitionError(
                    f'schema "{name}"', None, f"must be a schema such as s.string(), got {type(schema).__name__}"
                )
        for name, schema in schemas.items():
            self._check_refs(f'schema "{name}"', None, schema, schemas)
            if isinstance(_resolve_object(schema, schemas), RefSchema):
                raise InvalidDefinitionError(
                    f'schema "{name}"', None, "is a ref that leads back to itself; a named schema must describe a value"
                )
        for name, schema in schemas.items():
            _check_defaults(f'schema "{name}"', None, schema, schemas)
        return MappingProxyType(dict(schemas))

    @staticmethod
    def _check_refs(decl: str, field: str | None, schema: Schema, schemas: Mapping[str, Schema]) -> None:
        for ref in schema.ref_names():
            if ref not in schemas:
                known = ", ".join(f'"{n}"' for n in sorted(schemas)[:20]) or "none"
                raise InvalidDefinitionError(
                    decl,
                    field,
                    f'refers to the schema "{ref}" (s.ref), which no registered schema resolves; '
                    f"register it under that name (schemas known: {known})",
                )

    def _entry(self, tool: Tool) -> _Entry:
        decl = f'tool "{tool.name}"'
        self._check_refs(decl, "input", tool.input, self._schemas)
        self._check_refs(decl, "output", tool.output, self._schemas)
        target = _resolve_object(tool.input, self._schemas)
        if not isinstance(target, ObjectSchema):
            name = tool.input.name if isinstance(tool.input, RefSchema) else "?"
            raise InvalidDefinitionError(
                decl,
                "input",
                f'refers to the schema "{name}", which is {target.expected()}, not an object; '
                "a tool's input must be an object schema",
            )
        input_ = tool._input_validator or compile_schema(tool.input, self._schemas)
        output = tool._output_validator or compile_schema(tool.output, self._schemas)
        if tool._input_validator is None:
            _check_defaults(decl, "input", tool.input, self._schemas)
        if tool._output_validator is None:
            _check_defaults(decl, "output", tool.output, self._schemas)
        missing = next((p for p in tool.permissions if not self._grants.allows(p)), None)
        check = bool(tool.permissions) and (bool(self._providers) or missing is not None)
        return _Entry(tool, input_, output, missing, check)

    # -- inspection ------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools, name to :class:`Tool`, in registration order (read-only)."""
        return self._tools

    @property
    def schemas(self) -> Mapping[str, Schema]:
        """The named schemas ``s.ref`` resolves to (read-only)."""
        return self._schemas

    @property
    def grants(self) -> tuple[str, ...]:
        """The grant patterns this runtime was built with."""
        return self._grants.patterns

    @property
    def providers(self) -> tuple[object, ...]:
        """The permission providers, in the order they are asked."""
        return self._providers

    def definitions(self) -> list[dict[str, Any]]:
        """What a model is shown of each tool: ``name``, ``description``, ``inputSchema``, ``outputSchema``.

        The schemas are JSON Schema (draft 2020-12), each standing alone (named
        schemas are included under ``$defs``). The shape is the Model Context
        Protocol's tool listing.
        """
        # The input is written as the object itself even when the tool names it by ref:
        # tool-calling clients expect "type": "object" at the top.
        return [
            {
                "name": tool.name,
                "description": tool.description,
                "inputSchema": _resolve_object(tool.input, self._schemas).json_schema(defs=self._schemas),
                "outputSchema": tool.output.json_schema(defs=self._schemas),
            }
            for tool in self._tools.values()
        ]

    # -- calling ---------------------------------------------------------------------------

    def _lookup(self, name: Any) -> _Entry:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            pass
        suggestions: list[str] = []
        if isinstance(name, str):
            folded = self._by_normal.get(_normalize(name))
            if folded is not None:
                suggestions.append(folded)
            for close in difflib.get_close_matches(name, self._tools, n=3, cutoff=0.6):
                if close not in suggestions:
                    suggestions.append(close)
        raise ToolNotFoundError(name if isinstance(name, str) else repr(name), suggestions[:3])

    def _check_permissions(self, entry: _Entry) -> None:
        if not self._providers:
            raise PermissionDeniedError(entry.tool.name, entry.missing or "")
        tool = entry.tool
        for permission in tool.permissions:
            granted = self._grants.allows(permission)
            for provider in self._providers:
                answer = provider.check(tool, permission)  # type: ignore[attr-defined]
                if answer is False:
                    raise PermissionDeniedError(tool.name, permission)
                if answer is True:
                    granted = True
                elif answer is not None:
                    raise TypeError(
                        f"permission provider {provider!r} returned {answer!r} for {tool.name} / {permission}; "
                        "check() must return True, False or None"
                    )
            if not granted:
                raise PermissionDeniedError(tool.name, permission)

    def _prepare(self, name: Any, value: Any) -> tuple[_Entry, Any]:
        """Lookup, permissions and input: everything before the handler."""
        entry = self._lookup(name)
        if entry.check:
            self._check_permissions(entry)
        return entry, _checked(entry.input, value, InputInvalidError, entry.tool.name)

    async def call(self, name: str, input: Any) -> Any:  # noqa: A002 - mirrors Tool.input
        """Call the tool *name* with *input* and return its parsed output.

        Steps, in order; the handler runs only if every earlier step passed:
        lookup, permissions, input validation, the handler (awaited if async),
        output validation.

        Raises:
            ToolNotFoundError: no tool is registered under *name*.
            PermissionDeniedError: a permission the tool declares is not granted.
            InputInvalidError: *input* does not match the tool's input schema.
            OutputInvalidError: the handler's result does not match the output schema.
            Exception: whatever the handler raised, unchanged.

        """
        entry, parsed = self._prepare(name, input)
        result = entry.handler(parsed)
        if entry.is_async or (type(result) not in _PLAIN and inspect.isawaitable(result)):
            result = await result
        return _checked(entry.output, result, OutputInvalidError, entry.tool.name)

    def call_sync(self, name: str, input: Any) -> Any:  # noqa: A002 - mirrors Tool.input
        """Call the tool *name* from code without an event loop; as :meth:`call` otherwise.

        A plain handler runs inline, with no event loop at all. An ``async``
        handler is run to completion in a new event loop (``asyncio.run``);
        if this thread already runs an event loop that is impossible, and a
        ``RuntimeError`` is raised before the handler runs: use ``await
        runtime.call(...)`` there.
        """
        entry, parsed = self._prepare(name, input)
        if entry.is_async:
            _require_no_loop(entry.tool.name)
        result = entry.handler(parsed)
        if inspect.iscoroutine(result):
            result = _run(entry.tool.name, result)
        return _checked(entry.output, result, OutputInvalidError, entry.tool.name)

    async def observe(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """Call the tool and return what an agent loop sends back to the model.

        Returns:
            ``{"ok": True, "output": ...}``, or ``{"ok": False, "error": error.to_dict()}``
            for any :class:`~hermes_core.ToolError`. Other exceptions propagate.

        """
        try:
            return {"ok": True, "output": await self.call(name, input)}
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def observe_sync(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """:meth:`observe` for code without an event loop, with :meth:`call_sync`'s rules."""
        try:
            return {"ok": True, "output": self.call_sync(name, input)}
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a Runtime is immutable once built; build a new one instead of setting {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Runtime is immutable once built; it has nothing to delete ({name!r})")

    def __repr__(self) -> str:
        return f"<Runtime tools={list(self._tools)!r}>"


def _loop_running() -> bool:
    """Whether this thread runs an event loop (none can while asyncio was never imported)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _require_no_loop(tool: str) -> None:
    if _loop_running():
        raise RuntimeError(
            f"{tool} has an async handler and call_sync() was called inside a running event loop; "
            "use 'await runtime.call(...)' there"
        )


def _run(tool: str, coroutine: Coroutine[Any, Any, Any]) -> Any:
    if _loop_running():
        coroutine.close()
        raise RuntimeError(
            f"{tool}'s handler returned a coroutine and call_sync() was called inside a running event loop; "
            "use 'await runtime.call(...)' there"
        )
    import asyncio  # noqa: PLC0415 - imported on first use: it adds some 30 ms to importing hermes_core

    return asyncio.run(coroutine)
