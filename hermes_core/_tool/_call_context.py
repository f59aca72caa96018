"""A call's context: what a running handler may ask of its call — progress, log messages, cancellation, a person's yes.

:func:`current_call` returns the :class:`CallContext` of the innermost running
call of a tool that uses its context. A tool uses it when its handler's own
code calls ``current_call()``, when it is defined with ``context=True`` (for
handlers that reach it through code they call), or when a ``@tool`` function
declares a parameter annotated :class:`CallContext`. Only those calls set the
context variable: a call of any other tool costs nothing more (a context
variable set and reset is some 200 ns, a third of a whole ``call_sync``;
docs/performance.md), and is invisible to ``current_call()``.

The context is a context variable, so it is found in plain and ``async``
handlers alike, and on the worker thread a plain handler runs on (the runtime
runs it in a copy of the caller's context). Who hears a call's progress and
log messages is the caller's choice, per call: ``runtime.call(...,
on_progress=..., on_log=...)``; ``hermesos serve`` turns them into MCP
notifications, ``hermesos call`` into a progress bar. Without a listener they
go to the ``hermes_core.calls`` logger (log messages) and nowhere (progress);
with tracing on, both are events of the call's span.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from contextvars import ContextVar
from time import monotonic
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final

from hermes_core._base import _tracing as tracing
from hermes_core._base._aio import require_no_loop, run_coroutine, to_thread
from hermes_core._base._frozen import frozen
from hermes_core._tool._approval import APPROVER, Approval, ApprovalRequest, Approved, Approver, audit, audit_enabled

if TYPE_CHECKING:
    import asyncio

    from hermes_core._tool._definition import Tool

__all__ = [
    "CONFIRM",
    "LEVELS",
    "CallContext",
    "Level",
    "Listeners",
    "LogMessage",
    "Progress",
    "checked",
    "current_call",
    "enter",
    "leave",
]

#: The levels of :meth:`CallContext.log`: MCP's (those of syslog, RFC 5424), least severe first.
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
Level: TypeAlias = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
# The logging module's level for each, for the hermes_core.calls logger.
_PY_LEVELS: Final = {"debug": 10, "info": 20, "notice": 20, "warning": 30, "error": 40}
#: What an audit record names as the permission of a handler's own question (:meth:`CallContext.confirm`).
CONFIRM: Final = "(confirm)"
#: Progress reports closer together than this (seconds) are dropped, except the one that completes the total.
PROGRESS_INTERVAL: Final = 0.05

_current: ContextVar[CallContext | None] = ContextVar("hermes_core.call", default=None)


@final
@frozen
class Progress:
    """One progress report of a running call, as its listener gets it.

    Attributes:
        done: how much is done, in the handler's unit (files, bytes, steps); never decreasing within a call.
        total: how much there is to do, in the same unit, if the handler knows (None: unknown).
        message: what the handler is doing, for a person (None: nothing said).

    """

    done: float
    total: float | None = None
    message: str | None = None


@final
@frozen
class LogMessage:
    """One log message of a running call, as its listener gets it.

    Attributes:
        level: one of :data:`LEVELS` (MCP's: ``debug``, ``info``, ``notice``, ``warning``, ``error``...).
        message: the text.

    """

    level: Level
    message: str


@final
@frozen
class Listeners:
    """Who hears one call's progress and log messages: plain callables, called on the thread that reports."""

    on_progress: Callable[[Progress], object] | None = None
    on_log: Callable[[LogMessage], object] | None = None


_NO_LISTENERS: Final = Listeners()


def current_call() -> CallContext:
    """The running call's context: its tool, its id, progress, log messages, cancellation, confirmation.

    Call it from a tool's handler, or from code the handler calls, in plain
    and ``async`` handlers alike.

    Raises:
        LookupError: no call of a tool that uses its context is running here;
            the message says how a tool comes to use it.
    """
    context = _current.get()
    if context is None:
        raise LookupError(
            "current_call() found no running tool call here. It works while a tool's handler runs, for a tool "
            "that uses its context: one whose handler calls current_call() in its own code, one defined with "
            "define_tool(..., context=True) (for a handler that reaches it through code it calls), or a @tool "
            "function with a parameter annotated CallContext"
        )
    return context


@final
class CallContext:
    """One running call, as its handler sees it; get it with :func:`current_call`.

    Attributes:
        tool: the tool being called.
        call_id: the call's id, the same as in its errors, audit records and span.

    """

    __slots__ = (
        "_approved",
        "_approver",
        "_cancelled",
        "_done",
        "_input",
        "_last",
        "_listeners",
        "_loop",
        "call_id",
        "tool",
    )

    tool: Tool
    call_id: str

    def __init__(
        self,
        tool: Tool,
        call_id: str,
        listeners: Listeners | None,
        approver: Approver | None,
        approved: Approved,
    ) -> None:
        self.tool = tool
        self.call_id = call_id
        self._listeners = listeners or _NO_LISTENERS
        self._approver = approver
        self._approved = approved
        self._input: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop of an awaited call, for confirm_sync on a thread
        self._cancelled = False
        self._done = -math.inf  # the last progress reported
        self._last = -math.inf  # when it was reported (monotonic seconds)

    def __repr__(self) -> str:
        return f"<CallContext {self.tool.name} call {self.call_id}>"

    # -- progress and log messages -------------------------------------------------------------

    def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Report how far the call has got: *done* of *total* (None: unknown), with an optional *message*.

        A report that does not move *done* forward, or that comes within
        :data:`PROGRESS_INTERVAL` of the last one, is dropped (MCP requires
        progress to increase; a bar needs no more than 20 a second), unless it
        completes the total. A listener that raises is logged and ignored: a
        progress report never fails a call.

        Raises:
            TypeError: *done* or *total* is not a number, or *message* not a string.
            ValueError: *done* is negative or not finite, or *total* is not a positive finite number.
        """
        _check_progress(done, total, message)
        if done <= self._done:
            return
        now = monotonic()
        if now - self._last < PROGRESS_INTERVAL and (total is None or done < total):
            return
        self._done, self._last = done, now
        report = Progress(done, total, message)
        if tracing.TRACER is not None:
            tracing.event("hermesos.progress", _progress_attributes(report))
        listener = self._listeners.on_progress
        if listener is not None:
            self._tell(listener, report)

    def log(self, level: Level, message: str) -> None:
        """Send a log message about this call: to the caller's listener, else the ``hermes_core.calls`` logger.

        Raises:
            ValueError: *level* is not one of :data:`LEVELS`.
            TypeError: *message* is not a string.
        """
        if level not in LEVELS:
            raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
        if not isinstance(message, str):
            raise TypeError(f"message must be a string, got {type(message).__name__}")
        if tracing.TRACER is not None:
            tracing.event("hermesos.log", {"hermesos.log.level": level, "hermesos.log.message": message})
        listener = self._listeners.on_log
        if listener is not None:
            self._tell(listener, LogMessage(level, message))
            return
        _logger().log(_PY_LEVELS.get(level, 50), "%s (call %s): %s", self.tool.name, self.call_id, message)

    def _tell(self, listener: Callable[[Any], object], what: Progress | LogMessage) -> None:
        try:
            listener(what)
        except Exception as error:  # the listener's own failure is the caller's, never the call's
            _logger().warning(
                "%s (call %s): a listener raised %s", self.tool.name, self.call_id, type(error).__name__, exc_info=error
            )

    # -- cancellation ------------------------------------------------------------------------

    @property
    def cancelled(self) -> bool:
        """Whether the caller has given up on this call: it was cancelled, or ran out of its time limit.

        A plain handler on a worker thread cannot be stopped; a long one
        should check this between steps and stop early, since its result will
        be dropped. An ``async`` handler is cancelled where it awaits.
        """
        return self._cancelled

    # -- a person's yes --------------------------------------------------------------------

    def confirm_sync(self, message: str) -> bool:
        """Ask the runtime's approver *message* ("delete these 30 files?") and wait: True for yes.

        The approver gets an :class:`~hermes_core.ApprovalRequest` with no
        permissions, this call's id and input, and *message*. Approval.always()
        answers every later confirm of the same tool with the same message yes,
        for the runtime's life. Without an approver the answer is no. Each
        answer is an audit record (permission ``(confirm)``).

        Raises:
            RuntimeError: the approver is ``async`` and this thread runs an event
                loop: ``await confirm(...)`` there.
            ToolFailedError: the approver raised or answered something that is not an Approval.
        """
        request = self._request(message)
        if request is None:
            return self._answer(message, None)
        approver = self._approver
        assert approver is not None  # _request returned None otherwise
        answer = self._ask(lambda: approver(request))
        if inspect.iscoroutine(answer):  # an async approver: on the loop awaiting this call, else a new one
            answer = self._ask(lambda: self._run(answer))
        return self._answer(message, answer)

    def _run(self, coroutine: Any) -> Any:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            import asyncio  # noqa: PLC0415 - imported already: a loop runs

            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:  # a worker thread of an awaited call: the approver runs on the caller's loop
                return asyncio.run_coroutine_threadsafe(coroutine, loop).result()
        require_no_loop(self.tool.name, coroutine)
        return run_coroutine(coroutine)

    async def confirm(self, message: str) -> bool:
        """:meth:`confirm_sync` for ``async`` handlers: an ``async`` approver awaited, a plain one on a thread."""
        request = self._request(message)
        if request is None:
            return self._answer(message, None)
        approver = self._approver
        assert approver is not None
        try:
            if inspect.iscoroutinefunction(approver):
                answer = await approver(request)
            else:  # it may block, waiting for a person: never on the event loop's thread
                answer = await to_thread(approver, request, None)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as error:
            raise self._failure(error) from error
        return self._answer(message, answer)

    def _request(self, message: str) -> ApprovalRequest | None:
        """The approver's request for *message*, or None when the answer is known without asking."""
        if not isinstance(message, str) or not message.strip():
            raise ValueError("confirm() needs a question for a person: a non-blank string")
        if self._approver is None or (self.tool.name, (CONFIRM, message)) in self._approved:
            return None
        return ApprovalRequest(self.tool, (), (), self.call_id, self._input, message)

    def _ask(self, ask: Callable[[], Any]) -> Any:
        try:
            return ask()
        except Exception as error:
            raise self._failure(error) from error

    def _failure(self, error: Exception) -> Exception:
        from hermes_core._base._errors import ToolError, ToolFailedError, exception_type_name  # noqa: PLC0415

        if isinstance(error, ToolError):
            return error
        _logger().error(
            "%s (call %s): the approver raised %s", self.tool.name, self.call_id, type(error).__name__, exc_info=error
        )
        detail = f"the approver raised {exception_type_name(error)} while the tool asked for confirmation"
        return ToolFailedError(detail, tool=self.tool.name, reason="reported", call_id=self.call_id)

    def _answer(self, message: str, answer: Any) -> bool:
        """Act on the approver's *answer* to *message* (None: no approver, or an earlier "always")."""
        key = (self.tool.name, (CONFIRM, message))
        if answer is None:
            yes = self._approver is not None  # asked before and approved for good
            source = f"{APPROVER} (always)" if yes else "no approver"
        elif type(answer) is not Approval:
            raise self._failure(TypeError(f"the approver returned {type(answer).__name__}; it must return an Approval"))
        else:
            yes, source = answer.decision != "decline", APPROVER
            if answer.decision == "always":
                self._approved.add(key)
        if audit_enabled():
            audit(self.call_id, self.tool.name, CONFIRM, "approved" if yes else "declined", source)
        return yes


def enter(context: CallContext, loop: asyncio.AbstractEventLoop | None = None) -> Any:
    """Make *context* the running call's (*loop*: the event loop awaiting it); return the token :func:`leave` takes."""
    context._loop = loop
    return _current.set(context)


def checked(context: CallContext | None, value: Any) -> Any:
    """Give *context* its call's checked input *value* (what confirm's requests carry); return *value*."""
    if context is not None:
        context._input = value
    return value


def leave(token: Any, context: CallContext, error: BaseException | None) -> None:
    """End the call *context* entered with *token*; *error*, a cancellation or an expiry, marks it cancelled."""
    if error is not None:
        context._cancelled = True
    _current.reset(token)


def _check_progress(done: Any, total: Any, message: Any) -> None:
    for label, number in (("done", done), ("total", total)):
        if number is None and label == "total":
            continue
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise TypeError(f"progress {label} must be a number, got {type(number).__name__}")
        if not math.isfinite(number) or number < 0 or (label == "total" and number == 0):
            wanted = "a positive finite number" if label == "total" else "a finite number of at least 0"
            raise ValueError(f"progress {label} must be {wanted}, got {number!r}")
    if message is not None and not isinstance(message, str):
        raise TypeError(f"progress message must be a string or None, got {type(message).__name__}")


def _progress_attributes(report: Progress) -> dict[str, Any]:
    attributes: dict[str, Any] = {"hermesos.progress.done": report.done}
    if report.total is not None:
        attributes["hermesos.progress.total"] = report.total
    if report.message is not None:
        attributes["hermesos.progress.message"] = report.message
    return attributes


_log: Any = None


def _logger() -> Any:
    global _log  # noqa: PLW0603 - one logger, got on first use (logging costs every start-up)
    if _log is None:
        import logging  # noqa: PLC0415

        _log = logging.getLogger("hermes_core.calls")
    return _log
