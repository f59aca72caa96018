"""The runtime: a set of tools, checked once, and what calls them in a fixed order.

A :class:`Runtime` is checked when it is built (by :mod:`hermes_core._runtime._checks`,
the same checks the plugin loader applies) and immutable afterwards, so it is
safe to share across threads and tasks. The one thing about it that changes is
whether its resources are open, kept in one slot beside the frozen fields by
:mod:`hermes_core._tool._resources`, which calls never read. Everything that can be
computed once (compiled validators, each tool's permission gate, the name
index) is computed in the constructor, into the entries of its
:class:`~hermes_core._runtime._calls.Calls`, which makes every call: the order of a
call (lookup → permission → input → approval → handler → output) is written
there once, for ``call_sync`` and ``await call`` alike. Permission decisions
live in :mod:`hermes_core._runtime._permissions`, name suggestions in
:mod:`hermes_core._base._names`, where a handler runs (a worker thread, a time
limit, a new event loop) in ``_aio``, and spans in :mod:`hermes_core._base._tracing`.

A call raises nothing but a :class:`~hermes_core.ToolError` for any
``Exception`` of a handler: it becomes ``TOOL_FAILED``, its traceback logged
on the ``hermes_core`` logger with the tool's name and the call's id.
``BaseException`` that is not an ``Exception`` (cancellation,
``KeyboardInterrupt``, ``SystemExit``) passes through untouched.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, final

from hermes_core._base._errors import InvalidDefinitionError, ToolError
from hermes_core._base._frozen import derive, frozen
from hermes_core._runtime._calls import Calls
from hermes_core._runtime._checks import check_providers, check_schemas, check_tools, check_wiring
from hermes_core._runtime._entries import UNSET
from hermes_core._runtime._lenient import Repairing, observed
from hermes_core._runtime._permissions import PermissionProvider, Permissions, StaticGrants
from hermes_core._tool._approval import Approver
from hermes_core._tool._call_context import Listeners, LogMessage, Progress
from hermes_core._tool._definition import Tool, check_timeout
from hermes_core._tool._resources import Lifecycle, Resource, ResourceError, check_resources, label_resources
from hermes_core.schema import Schema
from hermes_core.schema._inputs import input_schemas
from hermes_core.schema._validators import follow_refs

# Resource and ResourceError are part of a runtime's signature and errors: importable from here too.
__all__ = ["UNSET", "Resource", "ResourceError", "Runtime", "calls_of"]


@final
@frozen(init=False, eq=False, repr=False)
class Runtime:
    """Calls registered tools, checking permissions, input and output on every call.

    Args:
        tools: the tools, each made by :func:`~hermes_core.define_tool`.
        grants: grant patterns: ``fs:write``, ``fs:*`` (a whole namespace) or ``*``.
        providers: permission providers, objects with
            ``check(tool, permission) -> bool | None``, asked on every call of a
            tool that declares permissions. Any False denies, whatever else
            grants; an :class:`~hermes_core.Ask` has the *approver* decide.
        approver: who answers a provider's ask: a plain or ``async`` callable
            given an :class:`~hermes_core.ApprovalRequest` (the input already
            validated) and returning an :class:`~hermes_core.Approval`. Called
            after the input is checked and before the handler runs, within the
            call's time limit. None: every ask is a denial (``reason="no_approver"``).
        lenient: repair an input that fails its check where that is
            unambiguous and lossless (``"5"`` for an integer, ``"true"`` for a
            boolean, an object sent as a string of JSON, an enum member's case),
            check it again, and report each repair (:meth:`observe`, the
            adapters, ``hermesos serve``, the span); a tool's own ``lenient``
            wins, then an adapter's. Off by default. See docs/errors.md.
        schemas: named schemas, name to schema, that tools use through ``s.ref(name)``.
        timeout: the most seconds a call may take, for the tools that set none
            themselves (None: no limit).
        resources: :class:`Resource` objects the tools hold across calls,
            opened in this order by :meth:`open` (or ``with runtime:``) and
            closed in the reverse order by :meth:`close`. A runtime that is
            never opened still calls its tools.
        resource_labels: what messages call each resource, in the same order
            (the plugin loader gives each its plugin's origin); None: by its
            place and type, ``Runtime(): resources[0] (Database)``.

    Raises:
        InvalidDefinitionError: two tools share a name, an ``s.ref`` names a
            schema *schemas* does not have, a grant, provider or schema name is
            malformed, or a resource lacks ``open()`` or ``close()``; the
            message names the tool and the field.

    """

    _tools: Mapping[str, Tool]
    _schemas: Mapping[str, Schema]
    _permissions: Permissions
    _calls: Calls  # the entries, the approver, lenient mode: what calls are made with
    _resources: tuple[Resource, ...]
    _life: Lifecycle

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        grants: Iterable[str] = (),
        providers: Iterable[PermissionProvider] = (),
        schemas: Mapping[str, Schema] | None = None,
        timeout: float | None = None,
        resources: Iterable[Resource] = (),
        resource_labels: Iterable[str] | None = None,
        approver: Approver | None = None,
        lenient: bool = False,
    ) -> None:
        default_timeout = check_timeout("Runtime()", "timeout", timeout)
        permissions = Permissions(StaticGrants(grants), check_providers("Runtime()", "providers", providers))
        named = MappingProxyType(check_schemas("Runtime()", "schemas", {} if schemas is None else schemas))
        registered = check_tools("Runtime()", "tools", tools)
        check_wiring(registered.values(), named, named)
        held = check_resources("Runtime()", "resources", resources)
        labels = label_resources(held, resource_labels)
        if not isinstance(lenient, bool):
            raise InvalidDefinitionError("Runtime()", "lenient", f"must be True or False, got {type(lenient).__name__}")
        if approver is not None and not callable(approver):
            raise InvalidDefinitionError(
                "Runtime()",
                "approver",
                "must be a plain or async callable taking an ApprovalRequest and returning an Approval, "
                f"got {type(approver).__name__}",
            )
        calls = Calls(registered, named, permissions, default_timeout, approver, lenient)
        derive(self, _tools=MappingProxyType(registered), _schemas=named, _permissions=permissions, _calls=calls)
        derive(self, _resources=held, _life=Lifecycle(held, labels))

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

    @property
    def resources(self) -> tuple[Resource, ...]:
        """The resources the runtime opens and closes, in the order it opens them."""
        return self._resources

    @property
    def is_open(self) -> bool:
        """Whether the resources are open (a runtime without resources opens and closes all the same)."""
        return self._life.is_open

    # -- opening and closing ---------------------------------------------------------------

    def open(self) -> None:
        """Open the resources, in order; nothing happens if they are open already.

        If one raises, it and those opened before it are closed again (last
        first) and the runtime stays closed. Calls do not wait for this: a
        runtime that is never opened calls its tools all the same.

        Raises:
            ResourceError: a resource's ``open()`` raised (chained), naming it.
        """
        self._life.open()

    def close(self) -> None:
        """Close the resources, last opened first; nothing happens if they are not open.

        Every resource has its ``close()`` called, even after one raises: each
        failure is logged, and one error is raised at the end. The runtime is
        closed either way.

        Raises:
            ResourceError: one or more ``close()`` raised, naming each (the first chained).
        """
        self._life.close()

    def __enter__(self) -> Runtime:
        """Open the runtime for the block (see :meth:`open`); blocks inside one another are counted.

        The outermost block opens the runtime and closes it when it ends; a
        runtime already opened by :meth:`open` is left open.
        """
        self._life.enter()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._life.leave()

    async def __aenter__(self) -> Runtime:
        """``with runtime:`` for async code: the resources open on a worker thread, never blocking the loop.

        When every resource has ``aopen()`` and ``aclose()`` (see
        :class:`Resource`), those are awaited on this loop instead.
        """
        await self._life.aenter()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self._life.aleave()

    def definitions(self) -> list[dict[str, Any]]:
        """What a model is shown of each tool: ``name``, ``description``, ``inputSchema``, ``outputSchema``.

        The schemas are JSON Schema (draft 2020-12), each standing alone (named
        schemas are included under ``$defs``). A tool that declares a title or
        hints has ``title`` and ``annotations`` (MCP's ``readOnlyHint``...) too.
        The names are the tools' own and the output schema is the declared one;
        :mod:`hermes_core.adapters` and ``hermesos serve`` give each API's and
        MCP's own shapes (wire names, an object at the output's root).
        """
        # The input is written as the object itself even when the tool names it by ref:
        # tool-calling clients expect "type": "object" at the top.
        out = []
        inputs = input_schemas(self._schemas)  # what an input's refs reach: closed as the input is
        for tool in self._tools.values():
            definition: dict[str, Any] = {"name": tool.name}
            if tool.hints.title is not None:
                definition["title"] = tool.hints.title
            definition["description"] = tool.description
            definition["inputSchema"] = follow_refs(tool.input, inputs).json_schema(defs=inputs)
            definition["outputSchema"] = tool.output.json_schema(defs=self._schemas)
            annotations = tool.hints.annotations()
            if annotations:
                definition["annotations"] = annotations
            out.append(definition)
        return out

    # -- calling ---------------------------------------------------------------------------

    def call(
        self,
        name: str,
        input: Any,  # noqa: A002
        # Meant to be passed by keyword, but not keyword-only: CPython looks up an omitted keyword-only
        # parameter's default in a dict on every call, 5-7 ns each on the call path (bench row 2).
        timeout: float | None = UNSET,
        on_progress: Callable[[Progress], object] | None = None,
        on_log: Callable[[LogMessage], object] | None = None,
    ) -> Awaitable[Any]:
        """Call the tool *name* with *input*; ``await`` it for the parsed output.

        Steps, in order; the handler runs only if every earlier step passed:
        lookup, permissions, input validation, the handler, output validation.
        An ``async`` handler is awaited; a plain one runs on a worker thread
        (so that one blocking tool cannot stall every other call), unless the
        tool is ``inline``. If the task awaiting the call is cancelled, the
        handler is cancelled too and ``CancelledError`` propagates.

        Pass the options after *input* by keyword.

        Args:
            name: the tool's name.
            input: the arguments, a JSON object as a dict.
            timeout: the most seconds the call may take, overriding the
                tool's and the runtime's; None for no limit. One deadline from
                the call's start: the checks of permissions, input and output
                spend it too, and the handler gets what they leave. When it is
                up, an ``async`` handler is cancelled; a plain one on a worker
                thread cannot be stopped, runs on, and its result is dropped.
            on_progress: called with each :class:`~hermes_core.Progress` the
                handler reports (:meth:`CallContext.progress`), on the thread it
                reports from; None: progress goes nowhere.
            on_log: called with each :class:`~hermes_core.LogMessage` the handler
                sends (:meth:`CallContext.log`); None: they go to the
                ``hermes_core.calls`` logger.

        Raises:
            ToolNotFoundError: no tool is registered under *name*.
            PermissionDeniedError: a permission the tool declares is not granted.
            InputInvalidError: *input* does not match the tool's input schema, or
                the handler refused it by raising :class:`~hermes_core.InputRejected`.
            ToolFailedError: the handler raised, or the call ran out of time, or
                it was refused because too many calls are still running past
                their time limit (``reason="timeout"``, retryable).
            OutputInvalidError: the handler's result does not match the output schema.
            InvalidDefinitionError: *timeout* is not a positive number or None.

        """
        # A plain method returning the driver's coroutine: no coroutine frame of its own.
        if on_progress is None and on_log is None:
            return self._calls.call(name, input, timeout)
        return self._calls.call(name, input, timeout, None, Listeners(on_progress, on_log))

    def call_sync(
        self,
        name: str,
        input: Any,  # noqa: A002
        # Meant to be passed by keyword, but not keyword-only: CPython looks up an omitted keyword-only
        # parameter's default in a dict on every call, 5-7 ns each on the call path (bench row 2).
        timeout: float | None = UNSET,
        on_progress: Callable[[Progress], object] | None = None,
        on_log: Callable[[LogMessage], object] | None = None,
    ) -> Any:
        """Call the tool *name* from code without an event loop; as :meth:`call` otherwise.

        A plain handler runs inline, with no event loop and no thread, unless a
        time limit applies: then it runs on a worker thread, waited for at most
        that long. An ``async`` handler is run to completion in a new event loop
        (``asyncio.run``); if this thread already runs an event loop that is
        impossible, and a ``RuntimeError`` is raised before the handler runs:
        use ``await runtime.call(...)`` there.
        """
        if on_progress is None and on_log is None:
            return self._calls.call_sync(name, input, timeout)
        return self._calls.call_sync(name, input, timeout, None, Listeners(on_progress, on_log))

    async def observe(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """Call the tool and return what an agent loop sends back to the model.

        Returns:
            ``{"ok": True, "output": ...}``, or ``{"ok": False, "error": error.to_dict()}``
            for any :class:`~hermes_core.ToolError`, which is what a call raises
            for any ``Exception``. Cancellation and other ``BaseException`` propagate.
            A call lenient mode repaired has ``"repairs"`` too: for each, its
            ``path``, what was ``sent``, what it ``became``, the ``rule`` and a ``message``.

        """
        repairs = self._calls.repairs
        try:
            return observed(await self._calls.call(name, input, UNSET, None, None, Repairing(repairs, [])))
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def observe_sync(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """:meth:`observe` for code without an event loop, with :meth:`call_sync`'s rules."""
        repairs = self._calls.repairs
        try:
            return observed(self._calls.call_sync(name, input, UNSET, None, None, Repairing(repairs, [])))
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def __repr__(self) -> str:
        return f"<Runtime tools={list(self._tools)!r}>"


def calls_of(runtime: Runtime) -> Calls:
    """What *runtime* makes its calls with: the one entry of the front door (``call`` and ``call_sync``, by keyword)."""
    return runtime._calls
