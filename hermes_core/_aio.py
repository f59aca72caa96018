"""Where handlers run: on a worker thread, within a time limit, or to completion in a new event loop.

The runtime decides *whether* a call needs any of this; these helpers do it.
``asyncio`` and ``concurrent.futures`` are imported only when first needed:
they add some 30 ms to importing ``hermes_core``, which code that only ever
calls cheap plain handlers should not pay.

A plain handler that exceeds its time limit on a worker thread cannot be
stopped (Python has no way to kill a thread): the call ends with
:class:`Expired` at the limit, the thread runs on, and whatever it returns
later is dropped with its future, never delivered to a later call.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["Expired", "await_within", "loop_running", "require_no_loop", "run_coroutine", "run_in_thread", "to_thread"]

#: Worker threads for plain handlers: enough that blocking tools do not queue behind each other.
_WORKERS = 32
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


class Expired(Exception):  # noqa: N818 - a signal between these helpers and the runtime, never shown
    """A handler ran out of its time limit (raised by these helpers; the runtime makes it TOOL_FAILED)."""


def _workers() -> ThreadPoolExecutor:
    global _pool  # noqa: PLW0603 - one pool for the process, made on first use
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - see the module docstring

                _pool = ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="hermesos-tool")
    return _pool


def loop_running() -> bool:
    """Whether this thread runs an event loop (none can while asyncio was never imported)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def require_no_loop(tool: str, returned: Coroutine[Any, Any, Any] | None = None) -> None:
    """Raise if this thread runs an event loop, which makes running a coroutine to completion impossible.

    Called before an async handler runs, or with the coroutine a plain handler
    *returned* (which is then closed, never run).

    Raises:
        RuntimeError: this thread runs an event loop.
    """
    if not loop_running():
        return
    if returned is None:
        raise RuntimeError(
            f"{tool} has an async handler and call_sync() was called inside a running event loop; "
            "use 'await runtime.call(...)' there"
        )
    returned.close()
    raise RuntimeError(
        f"{tool}'s handler returned a coroutine and call_sync() was called inside a running event loop; "
        "use 'await runtime.call(...)' there"
    )


async def await_within(awaitable: Awaitable[Any], seconds: float | None) -> Any:
    """Await *awaitable*, for at most *seconds* (None: no limit); cancel it when the time is up.

    Raises:
        Expired: the time is up (a ``TimeoutError`` the awaitable raises itself passes as it is).
    """
    if seconds is None:
        return await awaitable
    import asyncio  # noqa: PLC0415 - see the module docstring

    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await awaitable
    except TimeoutError:
        if scope.expired():
            raise Expired from None
        raise


async def to_thread(handler: Callable[[Any], Any], value: Any, seconds: float | None) -> Any:
    """Run the plain *handler* on a worker thread, in a copy of this context, for at most *seconds*.

    Raises:
        Expired: the time is up; the thread runs on, and its result will be dropped.
    """
    import asyncio  # noqa: PLC0415 - see the module docstring

    context = contextvars.copy_context()  # the caller's context (a tracing span, say) goes with the call
    future = asyncio.get_running_loop().run_in_executor(_workers(), context.run, handler, value)
    return await (future if seconds is None else await_within(future, seconds))


def run_in_thread(handler: Callable[[Any], Any], value: Any, seconds: float) -> Any:
    """Run the plain *handler* on a worker thread and wait for it, from code without an event loop.

    Raises:
        Expired: the time is up; the thread runs on, and its result will be dropped.
    """
    from concurrent.futures import TimeoutError as FutureTimeout  # noqa: PLC0415 - see the module docstring

    context = contextvars.copy_context()
    future = _workers().submit(context.run, handler, value)
    try:
        return future.result(timeout=seconds)
    except FutureTimeout:
        if future.done():  # it finished at the limit: its own outcome stands
            return future.result()
        future.cancel()
        raise Expired from None


def run_coroutine(coroutine: Coroutine[Any, Any, Any], seconds: float | None = None) -> Any:
    """Run *coroutine* to completion in a new event loop, for at most *seconds*; return its result.

    Call :func:`require_no_loop` first: in a thread that runs an event loop,
    ``asyncio.run`` refuses.

    Raises:
        Expired: the time is up (the coroutine was cancelled).
    """
    import asyncio  # noqa: PLC0415 - see the module docstring

    return asyncio.run(await_within(coroutine, seconds))
