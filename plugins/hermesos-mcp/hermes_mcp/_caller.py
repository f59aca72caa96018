"""One local call of a mounted tool, as its server's session sees it: where its progress, log messages and questions go.

A mounted tool uses its call's context (``define_tool(..., context=True)``):
its handler makes a :class:`Caller` of it and hands it to the pool with the
call. The session runs on the pool's event loop, often on another thread than
the call's, and calls the caller from there:

* :meth:`Caller.progress` and :meth:`Caller.log` pass what the server reports
  on to the call's context, on the pool's thread (a listener is called on the
  thread that reports, as the core says); what no client could show as it is
  (progress below zero, a total of zero, a long message, an escape sequence)
  is made showable or dropped, never an error of the call.
* :meth:`Caller.confirm` asks the runtime's approver, through the context's
  ``confirm``, on the event loop awaiting the call: an ``async`` approver
  waits where its caller expects it (a web UI's loop), not on the pool's.
  When the call ends (it returned, failed, was cancelled or ran out of time)
  every question still waiting is withdrawn: nothing waits for an answer
  after its call is gone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
from typing import TYPE_CHECKING, Final, final

from hermes_core import ToolError, ToolFailedError, shorten
from hermes_mcp._failure import plain

if TYPE_CHECKING:
    from mcp_types import LoggingLevel

    from hermes_core import CallContext

__all__ = ["MESSAGE_MAX", "PROGRESS_MESSAGE_MAX", "Caller"]

#: The most characters of a server's log message passed on; the rest is cut off with "...".
MESSAGE_MAX: Final = 2000
#: The most characters of a progress report's message passed on: a line under a bar.
PROGRESS_MESSAGE_MAX: Final = 200


@final
class Caller:
    """A running call of a mounted tool: its context, and the event loop awaiting it.

    Make it in the tool's handler (on the loop awaiting the call); every other
    method runs on the pool's loop.

    Attributes:
        context: the call's context (:func:`hermes_core.current_call`).
        server: the name of the server called.
        loop: the event loop awaiting the call, where questions are asked.
        failure: the approver's failure while it was asked (it raised, or
            answered something that is not an Approval), raised by the handler
            once the server has answered; None if it did not fail.

    """

    __slots__ = ("_closed", "_waiting", "context", "failure", "loop", "server")

    def __init__(self, context: CallContext, server: str) -> None:
        self.context = context
        self.server = server
        self.loop = asyncio.get_running_loop()
        self.failure: ToolError | None = None
        self._closed = False
        # Each question waiting for the approver: its future on the pool's loop, and on the call's loop if another.
        self._waiting: set[tuple[asyncio.Future[bool], concurrent.futures.Future[bool] | None]] = set()

    def __repr__(self) -> str:
        return f"<Caller {self.context.tool.name} call {self.context.call_id}>"

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """A progress notification of the server (the SDK's progress callback): the call's progress.

        A report below zero or not finite is dropped; a total that is not a
        positive finite number is taken as unknown; the message is shortened
        to :data:`PROGRESS_MESSAGE_MAX` characters. The context drops what does
        not move forward, and reports closer together than 50 ms.
        """
        if not math.isfinite(progress) or progress < 0:
            return
        if total is not None and (not math.isfinite(total) or total <= 0):
            total = None
        if message is not None:
            message = shorten(plain(message), PROGRESS_MESSAGE_MAX)
        self.context.progress(progress, total, message)

    def log(self, level: LoggingLevel, text: str) -> None:
        """A log message of the server during this call (made plain and bounded already): the call's, at its level."""
        self.context.log(level, text)

    async def confirm(self, question: str) -> bool | None:
        """Ask the runtime's approver *question* for this call: True for yes, False for no.

        Returns:
            None when no answer came: the call ended first (the question is
            withdrawn), or the approver failed (:attr:`failure` says how).
        """
        if self._closed:
            return None
        asking = self.context.confirm(question)
        crossing: concurrent.futures.Future[bool] | None = None
        if asyncio.get_running_loop() is self.loop:  # the pool's sessions live on the call's own loop
            answer: asyncio.Future[bool] = asyncio.ensure_future(asking)
        else:
            try:
                crossing = asyncio.run_coroutine_threadsafe(asking, self.loop)
            except RuntimeError:  # the call's loop is closed: its call is over
                asking.close()
                return None
            answer = asyncio.wrap_future(crossing)
        waiting = (answer, crossing)
        self._waiting.add(waiting)
        try:
            await asyncio.wait({answer})  # a withdrawn question ends the wait; only this task's cancellation raises
        finally:
            self._waiting.discard(waiting)
            _withdraw(waiting, self.loop)
        if answer.cancelled():
            return None
        error = answer.exception()
        if error is None:
            return answer.result()
        self.failure = (
            error
            if isinstance(error, ToolError)
            else ToolFailedError(f'the approver failed while the MCP server "{self.server}" asked a question')
        )
        return None

    def close(self) -> None:
        """The call has ended: withdraw every question still waiting for the approver; ask no more."""
        self._closed = True
        for waiting in list(self._waiting):
            _withdraw(waiting, self.loop)


def _withdraw(
    waiting: tuple[asyncio.Future[bool], concurrent.futures.Future[bool] | None], loop: asyncio.AbstractEventLoop
) -> None:
    answer, crossing = waiting
    if crossing is not None and not loop.is_closed():
        # Cancelled now, while the call's loop still runs: that cancels the approver's task there. (A closed loop
        # has cancelled its tasks already, and cancelling would only log that it is closed.)
        crossing.cancel()
    answer.cancel()
