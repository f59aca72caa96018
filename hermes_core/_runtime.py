"""The runtime: calls tools in a fixed order, lookup → permission → input → handler → output.

A :class:`Runtime` is checked when it is built (by :mod:`hermes_core._checks`,
the same checks the plugin loader applies) and immutable afterwards, so it is
safe to share across threads and tasks. The one thing about it that changes is
whether its resources are open, kept in one slot beside the frozen fields by
:mod:`hermes_core._resources`, which the call pipeline never reads. Everything that can be computed once
(compiled validators, each tool's permission gate, the name index) is
computed in the constructor; a call is a dict lookup and straight-line code.
Permission decisions live in :mod:`hermes_core._permissions`, name suggestions
in :mod:`hermes_core._names`, where a handler runs (a worker thread, a time
limit, a new event loop) in ``_aio``, and spans in :mod:`hermes_core._tracing`.

A call raises nothing but a :class:`~hermes_core.ToolError` for any
``Exception`` of a handler: it becomes ``TOOL_FAILED``, its traceback logged
on the ``hermes_core`` logger with the tool's name and the call's id.
``BaseException`` that is not an ``Exception`` (cancellation,
``KeyboardInterrupt``, ``SystemExit``) passes through untouched.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from time import monotonic
from types import CoroutineType, MappingProxyType, TracebackType
from typing import Any, final

from hermes_core import _tracing as tracing
from hermes_core._admission import Admission
from hermes_core._aio import (
    await_within,
    require_no_loop,
    run_coroutine,
    run_in_thread,
    to_thread,
)
from hermes_core._approval import (
    Approved,
    Approver,
)
from hermes_core._checks import check_providers, check_schemas, check_tools, check_wiring
from hermes_core._context import CallContext, Listeners, LogMessage, Progress, checked, enter, leave
from hermes_core._errors import (
    InputInvalidError,
    InvalidDefinitionError,
    OutputInvalidError,
    ToolError,
    ToolNotFoundError,
)
from hermes_core._frozen import derive, frozen
from hermes_core._issues import Issue, TooManyIssues
from hermes_core._names import suggest
from hermes_core._permissions import PermissionProvider, Permissions, StaticGrants
from hermes_core._resources import Lifecycle, Resource, ResourceError, check_resources, label_resources
from hermes_core._steps import (
    _PLAIN,
    UNSET,
    Repairing,
    _call_id,
    _checked,
    _Entry,
    _fail,
    _gave_up,
    _left,
    _observed,
    _repaired,
    _repaired_input,
    _run_returned,
    _with_repairs,
)
from hermes_core._tools import Tool, check_timeout
from hermes_core.schema import Schema
from hermes_core.schema._inputs import input_schemas
from hermes_core.schema._validators import follow_refs, raised_issue

_INPUT = InputInvalidError  # what lenient mode repairs (a short name, for the except clauses that catch it)

# Resource and ResourceError are part of a runtime's signature and errors: importable from here too.
__all__ = ["UNSET", "Resource", "ResourceError", "Runtime"]


@final
@frozen(init=False, eq=False, repr=False)
class Runtime(Admission):
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
    _entries: dict[str, _Entry]
    _resources: tuple[Resource, ...]
    _life: Lifecycle
    _approver: Approver | None
    _approved: Approved
    _lenient: bool
    _repairs: frozenset[str]  # the tools whose calls lenient mode repairs, by this runtime's choice
    _repairing: Repairing | None  # lenient mode of a call given none (call()): None when it repairs no tool

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
        repairs = frozenset(name for name, tool in registered.items() if _repaired(tool, lenient))
        entries = {
            name: _Entry.make(tool, named, permissions, default_timeout, repaired=name in repairs)
            for name, tool in registered.items()
        }
        derive(self, _tools=MappingProxyType(registered), _schemas=named, _permissions=permissions, _entries=entries)
        derive(self, _resources=held, _life=Lifecycle(held, labels))
        if approver is not None and not callable(approver):
            raise InvalidDefinitionError(
                "Runtime()",
                "approver",
                "must be a plain or async callable taking an ApprovalRequest and returning an Approval, "
                f"got {type(approver).__name__}",
            )
        derive(self, _approver=approver, _approved=Approved())
        derive(self, _lenient=lenient, _repairs=repairs, _repairing=Repairing(repairs, None) if repairs else None)

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

    def _missing(self, name: Any) -> _Entry:
        """The entry of a name the plain lookup missed (a ``str`` subclass), else raise ToolNotFoundError.

        A call looks its name up with one ``self._entries[name]`` in a ``try``
        (free in Python 3.11 when nothing is raised) and comes here only when
        that raised: the name is not registered, or its own ``__hash__`` or
        ``__eq__`` raised, which makes it not found all the same.
        """
        if not isinstance(name, str):
            raise ToolNotFoundError(None)
        plain = str.__str__(name)  # a str subclass's own methods are never run
        found = self._entries.get(plain) if type(name) is not str else None
        if found is not None:
            return found
        raise ToolNotFoundError(plain, suggest(plain, self._entries)) from None

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
        listeners = None if on_progress is None and on_log is None else Listeners(on_progress, on_log)
        # A plain method returning _call's coroutine: no coroutine frame of its own.
        return self._call(name, input, timeout, None, None, listeners)

    async def _traced(  # noqa: PLR0917
        self,
        name: Any,
        value: Any,
        timeout: Any,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
    ) -> Any:
        call_id = _call_id()
        with tracing.tool_span(name if isinstance(name, str) else repr(name), call_id):
            return await self._call(name, value, timeout, call_id, shown, listeners, None, repairing)

    async def _call(  # noqa: PLR0917 - positional is cheaper, on every call
        self,
        name: Any,
        value: Any,
        timeout: Any,
        call_id: str | None,
        shown: str | None,
        listeners: Listeners | None = None,
        context: CallContext | None = None,
        repairing: Repairing | None = None,
    ) -> Any:
        """:meth:`call`, the input and output refused under the name *shown* (a wire name) when it is given.

        The front door calls it directly, so that the error a model reads is
        built once, under the name the model sent, rather than built and then
        rebuilt under that name (bench_adapters, row 1e); as :meth:`_call_sync`,
        one coroutine for a call on the straight path when tracing is off.
        """
        if call_id is None and tracing.TRACER is not None:
            return await self._traced(name, value, timeout, shown, listeners, repairing)
        try:
            entry = self._entries[name]
        except Exception:  # see _missing
            entry = self._missing(name)
        # The straight path (bench rows 2.hermes_inline, 2.hermes_async): as _call_sync's.
        if (
            entry.straight
            and timeout is UNSET
            and repairing is None
            and (entry.gate is None or (call_id is None and not entry.audit.level))
        ):
            # _checked(entry.input, ...) and _checked(entry.output, ...), inlined: two frames are a fifth of
            # the straight path (bench rows 2.hermes_inline, 2.hermes_async).
            issues: list[Issue] = []
            try:
                parsed = entry.input(value, (), issues)
            except TooManyIssues as exc:  # checking stopped (see ISSUES_MAX); the error keeps the first ones
                issues = exc.issues
            except Exception as exc:  # only the value's own code can raise here
                issues = [raised_issue(exc)]
            if issues:
                raise InputInvalidError(shown or entry.name, issues)
            try:
                if entry.is_async:
                    result = await entry.handler(parsed)
                else:
                    result = entry.handler(parsed)
                    if type(result) not in _PLAIN and inspect.isawaitable(result):
                        result = await await_within(result, None)
            except Exception as error:
                _fail(entry, error, None, call_id)
            try:
                result = entry.output(result, (), issues)
            except TooManyIssues as exc:
                issues = exc.issues
            except Exception as exc:
                issues = [raised_issue(exc)]
            if issues:
                raise OutputInvalidError(shown or entry.name, issues)
            return result
        return await self._call_steps(entry, name, value, timeout, call_id, shown, listeners, context, repairing)

    async def _call_steps(  # noqa: PLR0917
        self,
        entry: _Entry,
        name: Any,
        value: Any,
        timeout: Any,
        call_id: str | None,
        shown: str | None,
        listeners: Listeners | None,
        context: CallContext | None,
        repairing: Repairing | None,
    ) -> Any:
        """:meth:`_call` past the straight path: a time limit, a context to set, a permission to ask, lenient mode."""
        if entry.contextual and context is None:
            return await self._in_context(entry, name, value, timeout, call_id, shown, listeners, repairing)
        seconds = entry.timeout if timeout is UNSET else check_timeout("call()", "timeout", timeout)
        # One deadline from here, the checks spending the handler's time; no clock read when untimed.
        deadline = 0.0 if seconds is None else monotonic() + seconds
        # Granted when the runtime was built, and no audit record asked for: the logger's own level unset, and
        # no call id, which a traced call has (bench row 2.hermes_sync; audit_enabled() decides the rest).
        if entry.gate is None or (entry.settled and call_id is None and not entry.audit.level):
            try:
                parsed = _checked(entry.input, value, InputInvalidError, shown or entry.name)
            # Only when it raised: the caller's lenient mode, else this runtime's; () catches nothing, at no cost.
            except () if (repairing := repairing or self._repairing) is None else _INPUT as refused:  # noqa: B030
                parsed = _repaired_input(entry, value, refused, repairing)  # type: ignore[arg-type]
        else:  # permissions, input, then approval
            parsed, call_id = await self._admit(
                entry, value, shown, call_id, deadline, seconds, repairing or self._repairing
            )
        if context is not None:
            checked(context, parsed)
        left = None if seconds is None else _left(entry, deadline, seconds, "input", call_id)
        try:
            if entry.is_async:
                # No limit: the handler's coroutine awaited directly, without a frame around it.
                awaitable = entry.handler(parsed)
                result = await (awaitable if left is None else await_within(awaitable, left))
            elif entry.inline:
                result = entry.handler(parsed)
            else:
                result = await to_thread(entry.handler, parsed, left, entry, entry.name)
            if not entry.is_async and type(result) not in _PLAIN and inspect.isawaitable(result):
                result = await await_within(result, None if left is None else deadline - monotonic())
        except Exception as error:
            _fail(entry, error, seconds, call_id)
        result = _checked(entry.output, result, OutputInvalidError, shown or entry.name)
        if seconds is not None:
            _left(entry, deadline, seconds, "output", call_id)
        return result if repairing is None or not repairing.repairs else _with_repairs(result, repairing)

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
            return self._call_sync(name, input, timeout, None)
        return self._call_sync(name, input, timeout, None, None, Listeners(on_progress, on_log))

    def _traced_sync(  # noqa: PLR0917
        self,
        name: Any,
        value: Any,
        timeout: Any,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
    ) -> Any:
        call_id = _call_id()
        with tracing.tool_span(name if isinstance(name, str) else repr(name), call_id):
            return self._call_sync(name, value, timeout, shown, call_id, listeners, None, repairing)

    def _call_sync(  # noqa: PLR0917 - positional is cheaper, on every call
        self,
        name: Any,
        value: Any,
        timeout: Any,
        shown: str | None,
        call_id: str | None = None,
        listeners: Listeners | None = None,
        context: CallContext | None = None,
        repairing: Repairing | None = None,
    ) -> Any:
        """:meth:`call_sync`, refusing input and output under the name *shown* when it is given (see :meth:`_call`).

        One frame for a call on the straight path when tracing is off (one dict
        lookup, two compiled checks and the handler; no clock read, no thread,
        no context copy): a failed call's traceback passes through no wrapper
        (bench_adapters, row 1e). Every other call goes on to :meth:`_call_steps_sync`.
        """
        if call_id is None and tracing.TRACER is not None:
            return self._traced_sync(name, value, timeout, shown, listeners, repairing)
        try:
            entry = self._entries[name]
        except Exception:  # see _missing
            entry = self._missing(name)
        # The straight path (bench row 2.hermes_sync): nothing to decide at call time (see _Entry.straight_sync),
        # no audit record asked for (the logger's own level unset; a traced call has a call id and records).
        if (
            entry.straight_sync
            and timeout is UNSET
            and repairing is None
            and (entry.gate is None or (call_id is None and not entry.audit.level))
        ):
            # _checked(entry.input, ...) and _checked(entry.output, ...), inlined: two frames are a fifth of
            # the straight path (bench row 2.hermes_sync).
            issues: list[Issue] = []
            try:
                parsed = entry.input(value, (), issues)
            except TooManyIssues as exc:  # checking stopped (see ISSUES_MAX); the error keeps the first ones
                issues = exc.issues
            except Exception as exc:  # only the value's own code can raise here
                issues = [raised_issue(exc)]
            if issues:
                raise InputInvalidError(shown or entry.name, issues)
            try:
                result = entry.handler(parsed)
            except Exception as error:
                _fail(entry, error, None, call_id)
            if type(result) is CoroutineType:  # a plain handler that returned one: run it as an async handler's
                result = _run_returned(entry, result, None, call_id)
            try:
                result = entry.output(result, (), issues)
            except TooManyIssues as exc:
                issues = exc.issues
            except Exception as exc:
                issues = [raised_issue(exc)]
            if issues:
                raise OutputInvalidError(shown or entry.name, issues)
            return result
        return self._call_steps_sync(entry, name, value, timeout, call_id, shown, listeners, context, repairing)

    def _call_steps_sync(  # noqa: PLR0917
        self,
        entry: _Entry,
        name: Any,
        value: Any,
        timeout: Any,
        call_id: str | None,
        shown: str | None,
        listeners: Listeners | None,
        context: CallContext | None,
        repairing: Repairing | None,
    ) -> Any:
        """:meth:`_call_sync` past the straight path, as :meth:`_call_steps` is :meth:`_call`'s."""
        if entry.contextual and context is None:
            return self._in_context_sync(entry, name, value, timeout, call_id, shown, listeners, repairing)
        seconds = entry.timeout if timeout is UNSET else check_timeout("call()", "timeout", timeout)
        deadline = 0.0 if seconds is None else monotonic() + seconds
        # Granted when the runtime was built, and no audit record asked for: the logger's own level unset, and
        # no call id, which a traced call has (bench row 2.hermes_sync; audit_enabled() decides the rest).
        if entry.gate is None or (entry.settled and call_id is None and not entry.audit.level):
            try:
                parsed = _checked(entry.input, value, InputInvalidError, shown or entry.name)
            # Only when it raised: the caller's lenient mode, else this runtime's; () catches nothing, at no cost.
            except () if (repairing := repairing or self._repairing) is None else _INPUT as refused:  # noqa: B030
                parsed = _repaired_input(entry, value, refused, repairing)  # type: ignore[arg-type]
        else:  # permissions, input, then approval
            parsed, call_id = self._admit_sync(
                entry, value, shown, call_id, deadline, seconds, repairing or self._repairing
            )
        if context is not None:
            checked(context, parsed)
        if seconds is None and not entry.is_async:
            try:
                result = entry.handler(parsed)
            except Exception as error:
                _fail(entry, error, None, call_id)
            if type(result) is CoroutineType:  # a plain handler that returned one: run it as an async handler's
                result = _run_returned(entry, result, None, call_id)
            result = _checked(entry.output, result, OutputInvalidError, shown or entry.name)
            return result if repairing is None or not repairing.repairs else _with_repairs(result, repairing)
        left = None if seconds is None else _left(entry, deadline, seconds, "input", call_id)
        if entry.is_async:
            require_no_loop(entry.name)
        try:
            if entry.is_async:
                result = run_coroutine(entry.handler(parsed), left)
            else:
                assert left is not None  # a plain handler comes here only with a limit
                result = run_in_thread(entry.handler, parsed, left, entry, entry.name)
        except Exception as error:
            _fail(entry, error, seconds, call_id)
        if type(result) is CoroutineType:
            result = _run_returned(entry, result, None if left is None else deadline - monotonic(), call_id)
        result = _checked(entry.output, result, OutputInvalidError, shown or entry.name)
        if seconds is not None:
            _left(entry, deadline, seconds, "output", call_id)
        return result if repairing is None or not repairing.repairs else _with_repairs(result, repairing)

    # -- lenient mode: an input that failed its check, repaired -------------------------------

    def _repairable(self, lenient: bool | None) -> frozenset[str]:
        """The names of the tools whose calls lenient mode repairs, for a caller (an adapter) choosing *lenient*.

        A tool's own ``lenient`` wins; then *lenient*; None leaves it to this runtime's.
        """
        choice = self._lenient if lenient is None else lenient
        return frozenset(name for name, tool in self._tools.items() if _repaired(tool, choice))

    # -- a call of a tool that uses its context ------------------------------------------------

    def _context(self, entry: _Entry, call_id: str | None, listeners: Listeners | None) -> CallContext:
        return CallContext(entry.tool, call_id or _call_id(), listeners, self._approver, self._approved)

    def _in_context_sync(  # noqa: PLR0917
        self,
        entry: _Entry,
        name: Any,
        value: Any,
        timeout: Any,
        call_id: str | None,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
    ) -> Any:
        """:meth:`_call_sync` with the call's context set for its handler (see :mod:`hermes_core._context`)."""
        context = self._context(entry, call_id, listeners)
        token, gave_up = enter(context), None
        try:
            return self._call_sync(name, value, timeout, shown, context.call_id, listeners, context, repairing)
        except BaseException as error:
            gave_up = error if _gave_up(error) else None
            raise
        finally:
            leave(token, context, gave_up)

    async def _in_context(  # noqa: PLR0917
        self,
        entry: _Entry,
        name: Any,
        value: Any,
        timeout: Any,
        call_id: str | None,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
    ) -> Any:
        """:meth:`_call` with the call's context set for its handler, on this task and the threads it starts."""
        import asyncio  # noqa: PLC0415 - a coroutine runs: it is imported

        context = self._context(entry, call_id, listeners)
        token, gave_up = enter(context, asyncio.get_running_loop()), None
        try:
            return await self._call(name, value, timeout, context.call_id, shown, listeners, context, repairing)
        except BaseException as error:
            gave_up = error if _gave_up(error) else None
            raise
        finally:
            leave(token, context, gave_up)

    async def observe(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """Call the tool and return what an agent loop sends back to the model.

        Returns:
            ``{"ok": True, "output": ...}``, or ``{"ok": False, "error": error.to_dict()}``
            for any :class:`~hermes_core.ToolError`, which is what a call raises
            for any ``Exception``. Cancellation and other ``BaseException`` propagate.
            A call lenient mode repaired has ``"repairs"`` too: for each, its
            ``path``, what was ``sent``, what it ``became``, the ``rule`` and a ``message``.

        """
        repairing = Repairing(self._repairs, []) if self._repairs else None
        try:
            return _observed(await self._call(name, input, UNSET, None, None, None, None, repairing))
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def observe_sync(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """:meth:`observe` for code without an event loop, with :meth:`call_sync`'s rules."""
        repairing = Repairing(self._repairs, []) if self._repairs else None
        try:
            return _observed(self._call_sync(name, input, UNSET, None, None, None, None, repairing))
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def __repr__(self) -> str:
        return f"<Runtime tools={list(self._tools)!r}>"
