"""Resources a runtime holds across calls, and the one part of a runtime that changes: whether they are open.

A :class:`Resource` is opened and closed with its runtime (``open()``/``close()``,
``with`` and ``async with``); :class:`Lifecycle` keeps whether they are open,
and how many ``with`` blocks hold them, under a lock. The runtime's call
pipeline (:mod:`hermes_core._runtime._runtime`) never reads any of it: a runtime that
is never opened calls its tools all the same.
"""

from __future__ import annotations

import _thread
import contextlib
import inspect
from collections.abc import Iterable
from typing import Any, Literal, Protocol, final, runtime_checkable

from hermes_core._base._aio import to_thread
from hermes_core._base._errors import InvalidDefinitionError

__all__ = [
    "Lifecycle",
    "Resource",
    "ResourceError",
    "check_resources",
    "label_resources",
    "logger",
    "raised",
    "resource_label",
]


@runtime_checkable
class Resource(Protocol):
    """Something a runtime holds across calls (a connection pool, a server subprocess), opened and closed with it.

    ``open()`` is called when the runtime opens (``runtime.open()``, ``with
    runtime:``, ``async with runtime:``; ``hermesos call`` and ``hermesos serve``
    open theirs), ``close()`` when it closes. Both are plain functions on
    purpose: ``call_sync`` runs each ``async`` handler in a new event loop, so
    nothing bound to one event loop can outlive a call. A resource that needs
    an event loop runs its own, on a thread of its own, started by ``open()``
    and stopped by ``close()``.

    ``close()`` must be safe to call after an ``open()`` that raised half-way:
    the runtime calls it then too, to release whatever was acquired. Neither
    is called twice in a row by the runtime. Tools must still work when the
    runtime was never opened (a runtime built in a test, say): connect per
    call, or raise a :class:`~hermes_core.ToolFailedError` saying so.

    A resource may also define coroutine methods ``aopen()`` and ``aclose()``.
    When every resource of a runtime has them, ``async with runtime:`` awaits
    them on its own event loop instead of calling ``open()`` and ``close()``
    on a worker thread: the resource may then hold what is bound to that loop,
    and calls made on it need no hop to a thread of the resource's own.
    ``aclose()`` is awaited after an ``aopen()`` that raised, or was cancelled,
    half-way.

    ``open()`` need not start anything: a resource may start what it holds
    when a call first needs it (hermesos-mcp starts a server on the first
    call of one of its tools). Such a resource may define ``check(progress)``
    for ``hermesos check``: start what it would start, compare it with what
    its plugin mounted, say what it is doing by calling ``progress`` with one
    line at a time, stop it, and return its problems, one string each (each
    a non-fatal problem of the plugin).
    """

    def open(self) -> None:
        """Acquire what the resource holds: start the subprocess, connect the pool."""

    def close(self) -> None:
        """Release it; safe after an ``open()`` that raised, or that was never made."""


class ResourceError(Exception):
    """A runtime's resource failed to open, or some failed to close.

    Deliberately not a :class:`~hermes_core.ToolError`: no tool call went
    wrong. What the first failing resource raised is chained as ``__cause__``;
    each failure to close is also logged, with its traceback, on the
    ``hermes_core`` logger.

    Attributes:
        action: ``"open"`` or ``"close"``.
        failed: the resources that failed, as messages name them (see
            :func:`resource_label`), in the order they failed.
    """

    def __init__(self, action: Literal["open", "close"], failed: tuple[str, ...], message: str) -> None:
        self.action = action
        self.failed = failed
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.action, self.failed, self.args[0]))


def raised(error: BaseException) -> str:
    """What code raised, for a message: ``RuntimeError: boom``, ``SystemExit: 3``, or the bare type."""
    try:
        text = str(error)
    except Exception:  # the error's own __str__ failing must not hide what was raised
        text = ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def resource_label(source: str, field: str, index: int, resource: object) -> str:
    """How messages name a resource: ``Runtime(): resources[0] (Database)``, or a plugin's origin and hook."""
    return f"{source}: {field}[{index}] ({type(resource).__name__})"


def check_resources(source: str, field: str, resources: Iterable[object]) -> tuple[Resource, ...]:
    """The resources, each with callable ``open()`` and ``close()``.

    Raises:
        InvalidDefinitionError: an item lacks one of them.
    """
    checked: list[Resource] = []
    for index, resource in enumerate(resources):
        if not (callable(getattr(resource, "open", None)) and callable(getattr(resource, "close", None))):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must be a resource: an object with methods open() and close(), called when the runtime opens "
                f"and closes; got {type(resource).__name__}",
            )
        aopen, aclose = getattr(resource, "aopen", None), getattr(resource, "aclose", None)
        if (aopen is not None or aclose is not None) and not (
            inspect.iscoroutinefunction(aopen) and inspect.iscoroutinefunction(aclose)
        ):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must define both aopen() and aclose() as coroutine methods (async def), or neither; "
                f"got {type(resource).__name__}",
            )
        checked.append(resource)  # type: ignore[arg-type]  # both methods checked just above
    return tuple(checked)


def _is_async(resource: object) -> bool:
    return inspect.iscoroutinefunction(getattr(resource, "aopen", None))


@final
class Lifecycle:
    """Whether a runtime's resources are open, and how many ``with`` blocks hold them: its one mutable part."""

    __slots__ = ("_depth", "_labels", "_lock", "_open", "_owned", "_resources", "all_async")

    def __init__(self, resources: tuple[Resource, ...], labels: tuple[str, ...]) -> None:
        self._resources = resources
        self._labels = labels
        self._lock = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)
        self._open = False
        self._depth = 0  # the with blocks inside one another
        self._owned = False  # whether the outermost with block opened the resources (and so closes them)
        #: Every resource has aopen() and aclose(): ``async with`` awaits them on its loop.
        self.all_async = bool(resources) and all(_is_async(resource) for resource in resources)

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        with self._lock:
            self._open_all()

    def close(self) -> None:
        with self._lock:
            self._close_all()

    def enter(self) -> None:
        with self._lock:
            if self._depth == 0:
                owned = not self._open
                self._open_all()
                self._owned = owned
            self._depth += 1

    def leave(self) -> None:
        with self._lock:
            self._depth = max(self._depth - 1, 0)
            if self._depth == 0 and self._owned:
                self._owned = False
                self._close_all()

    async def aenter(self) -> None:
        """``async with``'s opening: awaited on the caller's loop when every resource is async, else on a thread.

        On a worker thread, so that a slow ``open()`` never blocks the loop; a
        block cancelled meanwhile has what the thread opened closed again.
        """
        if self.all_async:
            await self._aenter_all()
            return
        if not self._resources:  # nothing to open: no thread either
            self.enter()
            return
        opening = _Opening(self)
        try:
            await to_thread(opening.run, None, None)
        except BaseException:
            opening.abandon()  # cancelled while the thread opens on: nothing may outlive the block
            raise

    async def aleave(self) -> None:
        """``async with``'s closing, as :meth:`aenter` opened."""
        if self.all_async:
            await self._aleave_all()
            return
        if not self._resources:
            self.leave()
            return
        # A cancelled wait leaves the thread closing all the same: nothing is left open.
        await to_thread(_leave, self, None)

    async def _aenter_all(self) -> None:
        """Every resource's ``aopen()``, on the caller's loop, no thread."""
        with self._lock:
            first = self._depth == 0 and not self._open
            self._depth += 1
            if not first:
                return
            self._open = self._owned = True  # claimed now: another block entering meanwhile only counts
        for index, resource in enumerate(self._resources):
            try:
                await resource.aopen()  # type: ignore[attr-defined]  # all_async: checked at construction
            except BaseException as error:
                await self._arelease(index + 1)
                with self._lock:
                    self._open = self._owned = False
                    self._depth = max(self._depth - 1, 0)
                if not isinstance(error, Exception):
                    raise  # cancelled or interrupted while opening: closed again, and it goes on as it is
                raise self._open_failed(index, error) from error

    async def _aleave_all(self) -> None:
        with self._lock:
            self._depth = max(self._depth - 1, 0)
            if self._depth or not self._owned:
                return
            self._owned = self._open = False
        self._raise_failures(await self._arelease(len(self._resources)))

    async def _arelease(self, count: int) -> list[tuple[str, BaseException]]:
        """As :meth:`_release`, awaiting each ``aclose()``; a cancellation meanwhile waits for the closing."""
        failures: list[tuple[str, BaseException]] = []
        for index in reversed(range(count)):
            try:
                await self._resources[index].aclose()  # type: ignore[attr-defined]  # all_async
            except BaseException as error:
                label = self._labels[index]
                logger().error("%s failed to close: %s", label, raised(error), exc_info=error)
                failures.append((label, error))
        return failures

    def _open_all(self) -> None:
        if self._open:
            return
        reached = 0  # the resources whose open() was called: each may hold something
        try:
            for index, resource in enumerate(self._resources):
                reached = index + 1
                resource.open()
            self._open = True
        except BaseException as error:
            # The one that raised may have acquired part of what it holds: it is closed too, then those before it.
            # An interrupt (Ctrl-C, SIGTERM) may land anywhere here, between two open() calls too.
            if not self._open:
                self._release(reached)
            if not isinstance(error, Exception):
                raise  # Ctrl-C while opening: everything is closed again, and it goes on as it is
            raise self._open_failed(reached - 1, error) from error

    def _open_failed(self, index: int, error: Exception) -> ResourceError:
        label = self._labels[index]
        return ResourceError("open", (label,), f"{label} failed to open: {raised(error)}; the runtime stays closed")

    def _close_all(self) -> None:
        if not self._open:
            return
        self._open = False  # closed, whatever each close says: a resource is never closed twice
        self._raise_failures(self._release(len(self._resources)))

    def _raise_failures(self, failures: list[tuple[str, BaseException]]) -> None:
        interrupt = next((error for _, error in failures if not isinstance(error, Exception)), None)
        if interrupt is not None:
            raise interrupt  # every resource had its close() called first
        if failures:
            failed = tuple(label for label, _ in failures)
            if len(failures) == 1:
                message = f"{failed[0]} failed to close: {raised(failures[0][1])}"
            else:
                each = "; ".join(f"{label}: {raised(error)}" for label, error in failures)
                message = f"{len(failures)} resources failed to close: {each}"
            raise ResourceError("close", failed, message) from failures[0][1]

    def _release(self, count: int) -> list[tuple[str, BaseException]]:
        """Close the first *count* resources, last first; each failure is logged, and none stops the others."""
        failures: list[tuple[str, BaseException]] = []
        for index in reversed(range(count)):
            try:
                self._resources[index].close()
            except BaseException as error:  # Ctrl-C too: every resource has its close() called
                label = self._labels[index]
                logger().error("%s failed to close: %s", label, raised(error), exc_info=error)
                failures.append((label, error))
        return failures


def label_resources(resources: tuple[Resource, ...], given: Iterable[str] | None) -> tuple[str, ...]:
    """What messages call each resource: *given*, checked one for one, else its place and type."""
    if given is None:
        return tuple(resource_label("Runtime()", "resources", i, resource) for i, resource in enumerate(resources))
    labels = tuple(given)
    if len(labels) != len(resources) or not all(isinstance(label, str) for label in labels):
        raise InvalidDefinitionError(
            "Runtime()",
            "resource_labels",
            f"must be one string per resource, in order; got {len(labels)} for {len(resources)} resources",
        )
    return labels


@final
class _Opening:
    """``async with``'s opening, on a worker thread, which a block cancelled meanwhile undoes once it is done."""

    __slots__ = ("_abandoned", "_entered", "_life", "_lock")

    def __init__(self, life: Lifecycle) -> None:
        self._life = life
        self._lock = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)
        self._abandoned = False
        self._entered = False

    def run(self, _: object) -> None:
        """On the worker thread: enter; and leave again at once if the block was abandoned meanwhile."""
        self._life.enter()
        with self._lock:
            self._entered = not self._abandoned
        if not self._entered:
            _leave_logged(self._life)

    def abandon(self) -> None:
        """On the event loop, when the block will not run: leave, now or once the thread has entered."""
        with self._lock:
            self._abandoned = True
            entered, self._entered = self._entered, False
        if entered:
            import threading  # noqa: PLC0415 - a block abandoned only (start-up)

            threading.Thread(target=_leave_logged, args=(self._life,), name="hermesos-close").start()


def _leave(life: Lifecycle) -> None:
    life.leave()


def _leave_logged(life: Lifecycle) -> None:
    """Leave a block that never ran: nobody awaits this, so a failure to close is only logged."""
    with contextlib.suppress(ResourceError):  # each failure to close is logged already
        life.leave()


def logger() -> Any:
    """The ``hermes_core`` logger, made on the first failure (importing logging costs every start-up).

    As a library's logger should, it has a ``NullHandler``: its records reach
    the application's handlers, and without any, Python's last-resort handler
    does not print them on stderr.
    """
    import logging  # noqa: PLC0415 - see the docstring

    logger = logging.getLogger("hermes_core")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger
