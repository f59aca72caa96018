"""Where handlers run: on a worker thread, within a time limit, or to completion in a new event loop.

The runtime decides *whether* a call needs any of this; these helpers do it.
``asyncio`` and ``concurrent.futures`` are imported only when first needed:
they add some 30 ms to importing ``hermes_core``, which code that only ever
calls cheap plain handlers should not pay.

Plain handlers run on the threads of one pool per process: at most
:data:`WORKERS` at once, more calls waiting their turn. A handler that exceeds
its time limit (or whose caller is cancelled) cannot be stopped, since Python
has no way to kill a thread: the call ends with :class:`Expired` at the limit,
the thread runs on, and whatever it returns later is dropped with its future,
never delivered to a later call. Such a thread is *stranded*: it no longer
counts against the pool, which starts another worker in its place, so that
calls of other tools keep running. Stranded threads are bounded: while
:data:`STRANDED_PER_TOOL` calls of one tool, or :data:`STRANDED_MAX` calls in
all, are still running past their limit, a new call of that tool (or of any
tool) is refused at once with :class:`Stranded`, naming the calls; it can be
made again once they end. The workers are daemon threads: a handler still
running does not keep the process from exiting.
"""

from __future__ import annotations

import _thread
import contextvars
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, final

if TYPE_CHECKING:
    import threading
    from concurrent.futures import Future

__all__ = [
    "STRANDED_MAX",
    "STRANDED_PER_TOOL",
    "WORKERS",
    "Expired",
    "Stranded",
    "await_within",
    "loop_running",
    "require_no_loop",
    "run_coroutine",
    "run_in_thread",
    "stranded",
    "to_thread",
]

#: Worker threads for plain handlers at once: enough that blocking tools do not queue behind each other.
WORKERS: Final = 32
#: Calls of one tool that may run on past their time limit at once; the next call of the tool is refused.
STRANDED_PER_TOOL: Final = 16
#: Calls of all tools together that may run on past their time limit at once; the next call of any is refused.
STRANDED_MAX: Final = 64


class Expired(Exception):  # noqa: N818 - a signal between these helpers and the runtime, never shown
    """A handler ran out of its time limit (raised by these helpers; the runtime makes it TOOL_FAILED)."""


class Stranded(Exception):  # noqa: N818 - a signal between these helpers and the runtime
    """A call was refused before it started: too many calls are still running past their time limit.

    Attributes:
        detail: what was refused and why, for the message: how many calls of
            which tools are still running, and which limit that reaches.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


@final
class _Job:
    """One handler call on the pool: what to run, its future, and whether its caller stopped waiting."""

    __slots__ = ("args", "function", "future", "name", "owner", "stranded")

    def __init__(
        self, future: Future[Any], owner: object, name: str, function: Callable[..., Any], args: tuple[Any, ...]
    ) -> None:
        self.future = future
        self.owner = owner
        self.name = name
        self.function = function
        self.args = args
        self.stranded = False

    def run(self) -> None:
        future = self.future
        if not future.set_running_or_notify_cancel():  # its caller gave up while it waited its turn
            return
        try:
            result = self.function(*self.args)
        except BaseException as error:  # delivered to the caller, who raises it
            future.set_exception(error)
        else:
            future.set_result(result)
        self.function = self.args = None  # type: ignore[assignment]  # nothing of the call is kept


@final
class _Pool:
    """Daemon worker threads; a thread stranded in a call past its limit is replaced, up to the limits."""

    def __init__(self, size: int) -> None:
        import threading  # noqa: PLC0415 - with the first worker: a listing starts none (start-up)
        from concurrent.futures import Future  # noqa: PLC0415 - see the module docstring

        self._future = Future
        self._thread: type[threading.Thread] = threading.Thread
        self._size = size
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._jobs: deque[_Job] = deque()
        self._threads = 0  # workers counted against the size: every one but those stranded
        self._idle = 0  # workers waiting for a job
        self._stranded = 0
        self._by_owner: dict[int, list[Any]] = {}  # id(owner) -> [count, name, owner]: the owner kept alive

    def submit(self, owner: object, name: str, function: Callable[..., Any], *args: Any) -> _Job:
        """Queue *function(*args)* for a worker, on behalf of the tool *name* (*owner* counts its calls).

        Raises:
            Stranded: too many calls of this tool, or of all, are still running past their limit.
        """
        job = _Job(self._future(), owner, name, function, args)
        with self._lock:
            refusal = self._refusal(owner) if self._stranded else None
            if refusal is not None:
                raise refusal
            jobs = self._jobs
            jobs.append(job)
            if self._idle >= len(jobs):
                self._wake.notify()
            elif self._threads < self._size:
                self._threads += 1
                self._thread(target=self._work, name="hermesos-tool", daemon=True).start()
        return job

    def strand(self, job: _Job) -> None:
        """Its caller stopped waiting for *job*: drop it if it has not started, else write its thread off."""
        if job.future.cancel():
            return
        with self._lock:
            if job.future.done():  # it finished meanwhile: its thread is a worker still
                return
            job.stranded = True
            self._stranded += 1
            counted = self._by_owner.setdefault(id(job.owner), [0, job.name, job.owner])
            counted[0] += 1
            self._threads -= 1
            if len(self._jobs) > self._idle:  # a call waits for the thread just lost
                self._threads += 1
                self._thread(target=self._work, name="hermesos-tool", daemon=True).start()

    def stranded(self) -> dict[str, int]:
        """How many calls of each tool are still running past their limit (for messages and tests)."""
        with self._lock:
            return _counts(self._by_owner)

    def _refusal(self, owner: object) -> Stranded | None:
        """Why a call for *owner* may not start now, if a limit is reached (under the lock, with calls stranded).

        Work that is no tool's call (opening a runtime's resources) is never refused.
        """
        if owner is None:
            return None
        counted = self._by_owner.get(id(owner))
        if counted is not None and counted[0] >= STRANDED_PER_TOOL:
            return Stranded(
                f"was not run: {counted[0]} earlier calls of it are still running after their time limit, "
                f"the most one tool may leave running ({STRANDED_PER_TOOL}); it can be called again once one ends"
            )
        if self._stranded >= STRANDED_MAX:
            counts = ", ".join(f"{tool}: {count}" for tool, count in _counts(self._by_owner).items())
            return Stranded(
                f"was not run: {self._stranded} calls of plain tools are still running after their time limit "
                f"({counts}), the most a process may leave running ({STRANDED_MAX}); "
                "it can be called again once one ends"
            )
        return None

    def _work(self) -> None:
        lock, jobs = self._lock, self._jobs
        job: _Job | None = None
        while True:
            with lock:
                # Read under the lock: strand() decides under it too, seeing the job done or not.
                if job is not None and job.stranded:  # its caller gave up on it: this thread was written off
                    self._stranded -= 1
                    counted = self._by_owner[id(job.owner)]
                    counted[0] -= 1
                    if not counted[0]:
                        del self._by_owner[id(job.owner)]
                    if self._threads >= self._size:  # a worker took this thread's place: end
                        return
                    self._threads += 1
                job = None
                while not jobs:
                    self._idle += 1
                    try:
                        self._wake.wait()
                    finally:
                        self._idle -= 1
                job = jobs.popleft()
                # Checked again as it starts: calls queued before others were stranded must not add to them.
                refusal = self._refusal(job.owner) if self._stranded else None
            if refusal is not None:
                if job.future.set_running_or_notify_cancel():
                    job.future.set_exception(refusal)
                continue
            job.run()


def _counts(by_owner: dict[int, list[Any]]) -> dict[str, int]:
    """Stranded calls per tool name, most first (two runtimes' tools of one name add up)."""
    counts: dict[str, int] = {}
    for count, name, _ in by_owner.values():
        counts[name or "(not a tool)"] = counts.get(name or "(not a tool)", 0) + count
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


_pool: _Pool | None = None
_pool_lock = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)


def _workers() -> _Pool:
    global _pool  # noqa: PLW0603 - one pool for the process, made on first use
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = _Pool(WORKERS)
    return _pool


def stranded() -> dict[str, int]:
    """How many calls of each plain tool are still running after their time limit (or their caller's cancellation).

    Returns:
        Tool name to count, most first; empty when none is.
    """
    return {} if _pool is None else _pool.stranded()


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


async def to_thread(
    handler: Callable[[Any], Any], value: Any, seconds: float | None, owner: object = None, name: str = ""
) -> Any:
    """Run the plain *handler* on a worker thread, in a copy of this context, for at most *seconds*.

    *owner* (the tool's entry) and *name* count the call among its tool's
    if it runs on past the limit.

    Raises:
        Expired: the time is up; the thread runs on, and its result will be dropped.
        Stranded: too many calls are still running past their limit; *handler* was not run.
    """
    import asyncio  # noqa: PLC0415 - see the module docstring

    pool = _workers()
    job = pool.submit(owner, name, contextvars.copy_context().run, handler, value)  # the caller's context goes too
    try:
        future = asyncio.wrap_future(job.future)
        return await (future if seconds is None else await_within(future, seconds))
    except BaseException:  # expired or cancelled: the thread, if it started, runs on without a caller
        if not job.future.done():
            pool.strand(job)
        raise


def run_in_thread(
    handler: Callable[[Any], Any], value: Any, seconds: float, owner: object = None, name: str = ""
) -> Any:
    """Run the plain *handler* on a worker thread and wait for it, from code without an event loop.

    Raises:
        Expired: the time is up; the thread runs on, and its result will be dropped.
        Stranded: too many calls are still running past their limit; *handler* was not run.
    """
    pool = _workers()
    job = pool.submit(owner, name, contextvars.copy_context().run, handler, value)
    future = job.future
    try:
        return future.result(timeout=seconds)
    except TimeoutError:  # concurrent.futures' own, since Python 3.11
        if future.done():  # it finished at the limit: its own outcome stands
            return future.result()
        pool.strand(job)
        raise Expired from None
    except BaseException:  # interrupted while waiting (KeyboardInterrupt): nobody waits for it any more
        if not future.done():
            pool.strand(job)
        raise


def run_coroutine(coroutine: Coroutine[Any, Any, Any], seconds: float | None = None) -> Any:
    """Run *coroutine* to completion in a new event loop, for at most *seconds*; return its result.

    Call :func:`require_no_loop` first: in a thread that runs an event loop,
    ``asyncio.run`` refuses.

    Raises:
        Expired: the time is up (the coroutine was cancelled).
    """
    import asyncio  # noqa: PLC0415 - see the module docstring

    return asyncio.run(await_within(coroutine, seconds))
