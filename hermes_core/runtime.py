"""The runtime: calls tools in a fixed order, lookup → permission → input → handler → output.

A :class:`Runtime` is checked when it is built (by :mod:`hermes_core.checks`,
the same checks the plugin loader applies) and immutable afterwards, so it is
safe to share across threads and tasks. Everything that can be computed once
(compiled validators, each tool's permission gate, the name index) is
computed in the constructor; a call is a dict lookup and straight-line code.
Permission decisions live in :mod:`hermes_core.permissions`, name suggestions
in :mod:`hermes_core.names`, the sync/async bridge in ``_aio``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, final

from hermes_core._aio import require_no_loop, run_coroutine
from hermes_core._frozen import derive, frozen
from hermes_core.checks import check_providers, check_schemas, check_tools, check_wiring
from hermes_core.errors import (
    InputInvalidError,
    InputRejected,
    Issue,
    OutputInvalidError,
    ToolError,
    ToolNotFoundError,
)
from hermes_core.names import suggest
from hermes_core.permissions import Gate, PermissionProvider, Permissions, StaticGrants
from hermes_core.schema import Schema
from hermes_core.schema.validators import compile_schema, follow_refs, raised_issue
from hermes_core.tool import Tool

__all__ = ["Runtime"]

# Results of these types are never awaitable; skipping the check saves a costly call per await.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


_Check = Callable[[Any, tuple[str | int, ...], list[Issue]], Any]


@final
@frozen
class _Entry:
    """Everything a call of one tool needs, resolved at construction."""

    tool: Tool
    name: str
    handler: Callable[[Any], Any]
    is_async: bool
    input: _Check
    output: _Check
    gate: Gate | None  # None when no permission needs asking at call time

    @classmethod
    def make(cls, tool: Tool, schemas: Mapping[str, Schema], permissions: Permissions) -> _Entry:
        """The entry of *tool*, its validators compiled against *schemas* where it names them."""
        return cls(
            tool,
            tool.name,
            tool.handler,
            tool.is_async,
            (tool._input_validator or compile_schema(tool.input, schemas)).entry,
            (tool._output_validator or compile_schema(tool.output, schemas)).entry,
            permissions.gate(tool),
        )


def _checked(
    validate: _Check,
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


@final
@frozen(init=False, eq=False, repr=False)
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

    _tools: Mapping[str, Tool]
    _schemas: Mapping[str, Schema]
    _permissions: Permissions
    _entries: dict[str, _Entry]

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        grants: Iterable[str] = (),
        providers: Iterable[PermissionProvider] = (),
        schemas: Mapping[str, Schema] | None = None,
    ) -> None:
        permissions = Permissions(StaticGrants(grants), check_providers("Runtime()", "providers", providers))
        named = MappingProxyType(check_schemas("Runtime()", "schemas", {} if schemas is None else schemas))
        registered = check_tools("Runtime()", "tools", tools)
        check_wiring(registered.values(), named, named)
        entries = {name: _Entry.make(tool, named, permissions) for name, tool in registered.items()}
        derive(self, _tools=MappingProxyType(registered), _schemas=named, _permissions=permissions, _entries=entries)

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
        return self._permissions.grants.patterns

    @property
    def providers(self) -> tuple[PermissionProvider, ...]:
        """The permission providers, in the order they are asked."""
        return self._permissions.providers

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
                "inputSchema": follow_refs(tool.input, self._schemas).json_schema(defs=self._schemas),
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
        if not isinstance(name, str):
            raise ToolNotFoundError(repr(name)) from None
        raise ToolNotFoundError(name, suggest(name, self._entries)) from None

    def _prepare(self, name: Any, value: Any) -> tuple[_Entry, Any]:
        """Lookup, permissions and input: everything before the handler."""
        entry = self._lookup(name)
        if entry.gate is not None:
            entry.gate()
        return entry, _checked(entry.input, value, InputInvalidError, entry.name)

    async def call(self, name: str, input: Any) -> Any:  # noqa: A002 - mirrors Tool.input
        """Call the tool *name* with *input* and return its parsed output.

        Steps, in order; the handler runs only if every earlier step passed:
        lookup, permissions, input validation, the handler (awaited if async),
        output validation.

        Raises:
            ToolNotFoundError: no tool is registered under *name*.
            PermissionDeniedError: a permission the tool declares is not granted.
            InputInvalidError: *input* does not match the tool's input schema, or
                the handler refused it by raising :class:`~hermes_core.InputRejected`.
            OutputInvalidError: the handler's result does not match the output schema.
            Exception: whatever the handler raised, unchanged.

        """
        entry, parsed = self._prepare(name, input)
        try:
            result = entry.handler(parsed)
            if entry.is_async or (type(result) not in _PLAIN and inspect.isawaitable(result)):
                result = await result
        except InputRejected as rejected:
            raise InputInvalidError(entry.name, rejected.issues) from rejected
        return _checked(entry.output, result, OutputInvalidError, entry.name)

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
            require_no_loop(entry.name)
        try:
            result = entry.handler(parsed)
            if inspect.iscoroutine(result):
                result = run_coroutine(entry.name, result)
        except InputRejected as rejected:
            raise InputInvalidError(entry.name, rejected.issues) from rejected
        return _checked(entry.output, result, OutputInvalidError, entry.name)

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

    def __repr__(self) -> str:
        return f"<Runtime tools={list(self._tools)!r}>"
