"""The order of a call, written once, and the two drivers that make it: ``call_sync`` and ``await call``.

A call goes, in this order: the lookup of its tool; its context, set for a
tool that uses it; the permission gate (grants, providers, each possibly
answering ask); the input check (repaired, in lenient mode, where it raised);
the approver, if a provider asked; the handler; what a plain handler
returned, awaited if it is awaitable; the output check; and the time limit,
charged at each step. :meth:`Calls._steps` is that order, as one generator.
Where a step must be waited for (the handler, the approver, what either
returned), it writes what it needs into the call's :class:`Effect` and yields
it; the driver runs it and writes the outcome back, or throws in what it
raised, and the order decides what the call raises. Two small drivers run the
effects: :meth:`Calls.call_sync` without an event loop (a plain handler
inline, or on a worker thread under a time limit; a coroutine in a new loop)
and :meth:`Calls.call` on one (an ``async`` handler awaited, a plain one on a
worker thread unless ``inline``), as httpx's ``Auth.auth_flow`` is driven by
its sync and its async client.

The straight path, a call with nothing left to decide at call time (see
:class:`~hermes_core._runtime._entries.Entry`), is written out in each driver, the
lookup, two checks and the handler in one frame: the generator costs some
2,500 instructions, a third of such a call (``bench/bench_instructions.py``,
rows ``call_sync``, ``call_inline``, ``call_async``). Every other call goes
through the generator. The outcome travels in the effect, not through
``send()``, and the order ends by returning nothing, not its result: a
``StopIteration`` carrying a value and a tuple per step cost 1,400
instructions more per call (rows ``context_sync``, ``asks_sync``).

:class:`Calls` is what a runtime calls with, and the one entry of the front
door (:mod:`hermes_core._door._door`): ``call(name, value, timeout=, shown=,
listeners=, repairing=)`` and ``call_sync(...)``, the same parameters for both.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Mapping
from time import monotonic
from types import CoroutineType
from typing import Any, Final, TypeAlias, final

from hermes_core._base import _tracing as tracing
from hermes_core._base._aio import await_within, require_no_loop, run_coroutine, run_in_thread, to_thread
from hermes_core._base._errors import InputInvalidError, OutputInvalidError, PermissionDeniedError, ToolNotFoundError
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import Issue, TooManyIssues
from hermes_core._base._names import suggest
from hermes_core._runtime._entries import (
    PLAIN,
    UNSET,
    Entry,
    approver_failed,
    check,
    fail,
    gave_up,
    new_call_id,
    provider_failure,
    run_gate,
    time_left,
)
from hermes_core._runtime._lenient import Repairing, repaired_input, repairs_tool, with_repairs
from hermes_core._runtime._permissions import Asked, Permissions
from hermes_core._tool._approval import (
    APPROVER,
    Approval,
    ApprovalRequest,
    Approved,
    Approver,
    audit,
    audit_enabled,
    no_approver,
)
from hermes_core._tool._call_context import CallContext, Listeners, checked, enter, leave
from hermes_core._tool._context_use import uses_context
from hermes_core._tool._definition import Tool, check_timeout
from hermes_core.schema import Schema
from hermes_core.schema._validators import raised_issue

__all__ = ["ASK", "HANDLER", "RETURNED", "Calls", "Effect"]

#: Run the entry's handler on the effect's value, the checked input.
HANDLER: Final = "handler"
#: Ask the runtime's approver the effect's value, an :class:`~hermes_core.ApprovalRequest`.
ASK: Final = "ask"
#: Wait for the effect's value, an awaitable a plain handler or the approver returned (a coroutine, under call_sync).
RETURNED: Final = "returned"


@final
class Effect:
    """What the order of one call asks its driver to do next, and what the driver answers; one per call.

    Attributes:
        what: :data:`HANDLER`, :data:`ASK` or :data:`RETURNED`.
        entry: the called tool's entry.
        value: what the step is given (the input, the request, the awaitable);
            the driver writes the outcome here, and the order the call's
            output once it is done.
        seconds: the most the step may take; None: no limit.
    """

    __slots__ = ("entry", "seconds", "value", "what")

    what: str
    entry: Entry
    value: Any
    seconds: float | None


# The order yields its effect until it is done, then returns (nothing: the output is in the effect).
_Steps: TypeAlias = Generator[Effect, None, None]


@final
@frozen(init=False, eq=False, repr=False)
class Calls:
    """One runtime's calls: its tools' entries, its approver and lenient mode, and the drivers.

    Args:
        tools: the checked tools, name to tool.
        schemas: the named schemas their refs resolve to.
        permissions: the runtime's grants and providers.
        timeout: the runtime's time limit, for the tools that set none.
        approver: who answers a provider's ask (None: every ask is a denial).
        lenient: the runtime's lenient mode, for the tools that leave it to their caller.
    """

    entries: Mapping[str, Entry]  # a plain dict, read on every call: faster than its read-only proxy
    approver: Approver | None
    approved: Approved
    lenient: bool
    repairs: frozenset[str]  # the tools whose calls lenient mode repairs, by the runtime's choice
    repairing: Repairing | None  # lenient mode of a call given none: None when it repairs no tool

    def __init__(  # noqa: PLR0917 - the runtime's fields, as it has them
        self,
        tools: Mapping[str, Tool],
        schemas: Mapping[str, Schema],
        permissions: Permissions,
        timeout: float | None,
        approver: Approver | None,
        lenient: bool,
    ) -> None:
        repairs = frozenset(name for name, tool in tools.items() if repairs_tool(tool, lenient))
        # A handler's helper may be defined below it in its module: looked for again now that it is loaded.
        entries = {
            name: Entry.make(
                tool,
                schemas,
                permissions,
                timeout,
                repaired=name in repairs,
                contextual=tool.context or uses_context(tool.handler),
            )
            for name, tool in tools.items()
        }
        derive(self, entries=entries, approver=approver, approved=Approved(), lenient=lenient)
        derive(self, repairs=repairs, repairing=Repairing(repairs, None) if repairs else None)

    def repairable(self, lenient: bool | None) -> frozenset[str]:
        """The names of the tools whose calls lenient mode repairs, for a caller (a door) choosing *lenient*.

        A tool's own ``lenient`` wins; then *lenient*; None leaves it to the runtime's.
        """
        choice = self.lenient if lenient is None else lenient
        return frozenset(name for name, entry in self.entries.items() if repairs_tool(entry.tool, choice))

    # -- the drivers ---------------------------------------------------------------------------

    def call_sync(  # noqa: PLR0917, PLR0915 - positional is cheaper, on every call; the driver written in
        self,
        name: Any,
        value: Any,
        timeout: Any = UNSET,
        shown: str | None = None,
        listeners: Listeners | None = None,
        repairing: Repairing | None = None,
    ) -> Any:
        """Call the tool *name* with *value*, without an event loop; return the checked output.

        *timeout*: the call's own limit (UNSET: the tool's, then the runtime's).
        *shown*: the name input and output are refused under (a wire name;
        None: the tool's). *listeners*: who hears progress and log messages.
        *repairing*: the caller's lenient mode (None: the runtime's).

        One frame for a call on the straight path when tracing is off (one dict
        lookup, two compiled checks and the handler; no clock read, no thread,
        no context copy): a failed call's traceback passes through no wrapper
        (bench_adapters, row 1e). Every other call is the order of
        :meth:`_steps`, its effects run by the loop at the end (the driver,
        written here rather than called: a frame is a tenth of a stepped call).
        """
        if tracing.TRACER is None:
            try:
                entry = self.entries[name]
            except Exception:  # see _missing
                entry = self._missing(name)
            # The straight path (bench row 2.hermes_sync): nothing to decide at call time (see
            # Entry.straight_sync), no audit record asked for (the logger's own level unset).
            if (
                entry.straight_sync
                and timeout is UNSET
                and repairing is None
                and (entry.gate is None or not entry.audit.level)
            ):
                # check(entry.input, ...) and check(entry.output, ...), inlined: two frames are a fifth of
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
                    fail(entry, error, None, None)
                if type(result) is CoroutineType:  # a plain handler that returned one: run it as an async one's
                    require_no_loop(entry.name, result)
                    try:
                        result = run_coroutine(result)
                    except Exception as error:
                        fail(entry, error, None, None)
                try:
                    result = entry.output(result, (), issues)
                except TooManyIssues as exc:
                    issues = exc.issues
                except Exception as exc:
                    issues = [raised_issue(exc)]
                if issues:
                    raise OutputInvalidError(shown or entry.name, issues)
                return result
            steps = self._steps(entry, value, timeout, shown, listeners, repairing, None, False)
        else:
            steps = self._traced(name, value, timeout, shown, listeners, repairing, False)
        # The driver: each effect the order yields run without an event loop, its outcome written back or
        # what it raised thrown in.
        effect = next(steps)  # every order asks for a handler, or raises
        while True:
            try:
                if effect.what is HANDLER:
                    entry = effect.entry
                    if entry.is_async:  # the order made sure that no event loop runs here
                        effect.value = run_coroutine(entry.handler(effect.value), effect.seconds)
                    elif effect.seconds is None:
                        effect.value = entry.handler(effect.value)
                    else:
                        effect.value = run_in_thread(entry.handler, effect.value, effect.seconds, entry, entry.name)
                elif effect.what is ASK:
                    approver, entry = self.approver, effect.entry
                    assert approver is not None  # the order asks only a runtime that has one
                    if inspect.iscoroutinefunction(approver):
                        require_no_loop(entry.name)
                        effect.value = run_coroutine(approver(effect.value), effect.seconds)
                    elif effect.seconds is None:
                        effect.value = approver(effect.value)
                    else:
                        effect.value = run_in_thread(approver, effect.value, effect.seconds, entry, entry.name)
                else:  # RETURNED: a coroutine, and no event loop runs here
                    effect.value = run_coroutine(effect.value, effect.seconds)
            except BaseException as error:  # the order decides what the call raises, and cleans up
                steps.throw(error)  # it raises: a failed step is never followed by another
            else:
                if next(steps, None) is None:
                    return effect.value

    async def call(  # noqa: PLR0917, PLR0915 - positional is cheaper, on every call; the driver written in
        self,
        name: Any,
        value: Any,
        timeout: Any = UNSET,
        shown: str | None = None,
        listeners: Listeners | None = None,
        repairing: Repairing | None = None,
    ) -> Any:
        """:meth:`call_sync`, awaited: an ``async`` handler awaited, a plain one on a worker thread unless inline.

        One coroutine for a call on the straight path when tracing is off, as
        :meth:`call_sync` has one frame; every other call is :meth:`_steps`,
        its effects run by the loop at the end.
        """
        if tracing.TRACER is None:
            try:
                entry = self.entries[name]
            except Exception:  # see _missing
                entry = self._missing(name)
            # The straight path (bench rows 2.hermes_inline, 2.hermes_async): as call_sync's.
            if (
                entry.straight
                and timeout is UNSET
                and repairing is None
                and (entry.gate is None or not entry.audit.level)
            ):
                # check(entry.input, ...) and check(entry.output, ...), inlined: two frames are a fifth of
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
                        if type(result) not in PLAIN and inspect.isawaitable(result):
                            result = await await_within(result, None)
                except Exception as error:
                    fail(entry, error, None, None)
                try:
                    result = entry.output(result, (), issues)
                except TooManyIssues as exc:
                    issues = exc.issues
                except Exception as exc:
                    issues = [raised_issue(exc)]
                if issues:
                    raise OutputInvalidError(shown or entry.name, issues)
                return result
            steps = self._steps(entry, value, timeout, shown, listeners, repairing, None, True)
        else:
            steps = self._traced(name, value, timeout, shown, listeners, repairing, True)
        # The driver: each effect the order yields awaited on this loop, as call_sync's.
        effect = next(steps)  # every order asks for a handler, or raises
        while True:
            try:
                if effect.what is HANDLER:
                    entry = effect.entry
                    if entry.is_async:
                        result = entry.handler(effect.value)
                        # No limit: the handler's coroutine awaited directly, without a frame around it.
                        seconds = effect.seconds
                        effect.value = await (result if seconds is None else await_within(result, seconds))
                    elif entry.inline:
                        effect.value = entry.handler(effect.value)
                    else:
                        effect.value = await to_thread(entry.handler, effect.value, effect.seconds, entry, entry.name)
                elif effect.what is ASK:
                    approver, entry = self.approver, effect.entry
                    assert approver is not None  # the order asks only a runtime that has one
                    if inspect.iscoroutinefunction(approver):
                        effect.value = await await_within(approver(effect.value), effect.seconds)
                    else:  # it may block, waiting for a person: never on the event loop's thread
                        effect.value = await to_thread(approver, effect.value, effect.seconds, entry, entry.name)
                else:  # RETURNED
                    effect.value = await await_within(effect.value, effect.seconds)
            except BaseException as error:  # the order decides what the call raises, and cleans up
                steps.throw(error)  # it raises: a failed step is never followed by another
            else:
                if next(steps, None) is None:
                    return effect.value

    # -- the order of a call --------------------------------------------------------------------

    def _traced(  # noqa: PLR0917
        self,
        name: Any,
        value: Any,
        timeout: Any,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
        awaited: bool,
    ) -> _Steps:
        """A call while tracing is on: its span around the whole order, the lookup included."""
        call_id = new_call_id()
        with tracing.tool_span(name if isinstance(name, str) else repr(name), call_id):
            try:
                entry = self.entries[name]
            except Exception:  # see _missing
                entry = self._missing(name)
            yield from self._steps(entry, value, timeout, shown, listeners, repairing, call_id, awaited)

    def _steps(  # noqa: PLR0917, PLR0915 - the order of a call, in one place
        self,
        entry: Entry,
        value: Any,
        timeout: Any,
        shown: str | None,
        listeners: Listeners | None,
        repairing: Repairing | None,
        call_id: str | None,
        awaited: bool,
    ) -> _Steps:
        """The order of a call of *entry* past its lookup: yields its :class:`Effect` until the output is in it.

        *awaited*: the driver is :meth:`call` (an event loop runs; any
        awaitable can be waited for), else :meth:`call_sync` (no event loop
        may run for an ``async`` handler; only a coroutine can be waited for).
        """
        effect = Effect()
        effect.entry = entry
        context = token = None
        if entry.contextual:  # the call's context, set for the handler (see hermes_core._tool._call_context)
            context = CallContext(entry.tool, call_id or new_call_id(), listeners, self.approver, self.approved)
            call_id = context.call_id
            token = enter(context, _running_loop() if awaited else None)
        ended: BaseException | None = None
        try:
            seconds = entry.timeout if timeout is UNSET else check_timeout("call()", "timeout", timeout)
            # One deadline from here, the checks spending the handler's time; no clock read when untimed.
            deadline = 0.0 if seconds is None else monotonic() + seconds
            # The caller's lenient mode, else this runtime's.
            lenient = repairing or self.repairing
            # Granted when the runtime was built, and no audit record asked for: the logger's own level unset, and
            # no call id, which a traced call has (bench row 2.hermes_sync; audit_enabled() decides the rest).
            if entry.gate is not None and not (entry.settled and call_id is None and not entry.audit.level):
                asked, call_id = run_gate(entry, call_id)  # permissions, then input, then approval
            else:
                asked = None
            try:
                parsed = check(entry.input, value, InputInvalidError, shown or entry.name)
            # Only when it raised: repaired in lenient mode; () catches nothing, at no cost.
            except () if lenient is None else InputInvalidError as refused:  # noqa: B030
                parsed = repaired_input(entry, value, refused, lenient)  # type: ignore[arg-type]
            if asked is not None:
                request = self._request(entry, asked, call_id, parsed)
                if request is not None:
                    call_id = request.call_id
                    left = None if seconds is None else time_left(entry, deadline, seconds, "input", call_id)
                    try:
                        effect.what, effect.value, effect.seconds = ASK, request, left
                        yield effect
                        answer = effect.value
                        # A plain approver that returned an awaitable (under call_sync, a coroutine: what it can run).
                        if type(answer) is not Approval and (
                            inspect.isawaitable(answer) if awaited else type(answer) is CoroutineType
                        ):
                            if not awaited:
                                require_no_loop(entry.name, answer)
                            effect.what = RETURNED
                            effect.seconds = None if left is None else deadline - monotonic()
                            yield effect
                            answer = effect.value
                    except Exception as error:
                        approver_failed(entry, error, seconds, call_id)
                    self._settle(entry, request, answer)
            if context is not None:
                checked(context, parsed)
            left = None if seconds is None else time_left(entry, deadline, seconds, "input", call_id)
            if entry.is_async and not awaited:
                require_no_loop(entry.name)  # raised as it is: the handler does not run
            effect.what, effect.value, effect.seconds = HANDLER, parsed, left
            try:
                yield effect
            except Exception as error:
                fail(entry, error, seconds, call_id)
            result = effect.value
            # A plain handler that returned an awaitable (under call_sync, a coroutine: what it can run).
            if not entry.is_async and (
                type(result) is CoroutineType
                if not awaited
                else type(result) not in PLAIN and inspect.isawaitable(result)
            ):
                if not awaited:
                    require_no_loop(entry.name, result)  # raised as it is: the coroutine is closed
                effect.what, effect.seconds = RETURNED, None if left is None else deadline - monotonic()
                try:
                    yield effect
                except Exception as error:
                    fail(entry, error, seconds, call_id)
                result = effect.value
            result = check(entry.output, result, OutputInvalidError, shown or entry.name)
            if seconds is not None:
                time_left(entry, deadline, seconds, "output", call_id)
            effect.value = result if repairing is None or not repairing.repairs else with_repairs(result, repairing)
        except BaseException as error:
            ended = error
            raise
        finally:
            if token is not None:
                assert context is not None
                leave(token, context, ended if ended is not None and gave_up(ended) else None)

    # -- the lookup, and the approver's part -------------------------------------------------------

    def _missing(self, name: Any) -> Entry:
        """The entry of a name the plain lookup missed (a ``str`` subclass), else raise ToolNotFoundError.

        A call looks its name up with one ``self.entries[name]`` in a ``try``
        (free in Python 3.11 when nothing is raised) and comes here only when
        that raised: the name is not registered, or its own ``__hash__`` or
        ``__eq__`` raised, which makes it not found all the same.
        """
        if not isinstance(name, str):
            raise ToolNotFoundError(None)
        plain = str.__str__(name)  # a str subclass's own methods are never run
        found = self.entries.get(plain) if type(name) is not str else None
        if found is not None:
            return found
        raise ToolNotFoundError(plain, suggest(plain, self.entries)) from None

    def _request(self, entry: Entry, asked: Asked | None, call_id: str | None, parsed: Any) -> ApprovalRequest | None:
        """The approver's request for a call whose providers *asked*, or None when nothing needs approving.

        Raises:
            PermissionDeniedError: something asked and this runtime has no approver (``reason="no_approver"``).
        """
        if asked is None:
            return None
        permissions, reasons = asked
        call_id = call_id or new_call_id()
        if (entry.name, permissions) in self.approved:
            if audit_enabled():
                for permission in permissions:
                    audit(call_id, entry.name, permission, "approved", f"{APPROVER} (always)")
            return None
        if self.approver is None:
            raise no_approver(entry.name, permissions, reasons, call_id)
        return ApprovalRequest(entry.tool, permissions, reasons, call_id, parsed)

    def _settle(self, entry: Entry, request: ApprovalRequest, answer: Any) -> None:
        """Act on the approver's *answer*: remember an "always", raise for a decline, audit either way."""
        if type(answer) is not Approval:
            error = TypeError(f"the approver returned {type(answer).__name__}; it must return an Approval")
            raise provider_failure(entry, error, "the approver", request.call_id) from None
        declined = answer.decision == "decline"
        if audit_enabled():
            for permission in request.permissions:
                audit(request.call_id, entry.name, permission, "declined" if declined else "approved", APPROVER)
        if declined:
            raise PermissionDeniedError(entry.name, request.permissions[0], reason="declined", detail=answer.message)
        if answer.decision == "always":
            self.approved.add((entry.name, request.permissions))


def _running_loop() -> Any:
    """The event loop of the task making an awaited call (asyncio is imported: it runs)."""
    import asyncio  # noqa: PLC0415 - a coroutine runs: it is imported

    return asyncio.get_running_loop()
