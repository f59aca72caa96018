"""The runtime's resources around ``call`` and ``serve``: opened before the first call, closed on every way out."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS

if TYPE_CHECKING:
    from hermes_core._runtime._runtime import ResourceError, Runtime


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is, so that ``call`` and ``serve`` close the runtime on the way out."""


# -- the runtime's resources: opened before the first call, closed on every way out ------


@contextlib.contextmanager
def _terminate_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`Terminated` in the main thread, as Ctrl-C raises its own.

    Python's own SIGTERM ends the process where it stands, and no ``finally``
    runs: a plugin's server subprocess would outlive it.
    """
    import signal  # noqa: PLC0415 - only call and serve need it
    import threading  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread():  # main() called from a thread: no signals
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _resource_failed(error: ResourceError, args: argparse.Namespace) -> int:
    """One line on stderr for a resource that failed to open or close, naming its plugin; with --debug, the cause."""
    print(f"{out.Style(sys.stderr).red('error')}: {out.printable(str(error))}", file=sys.stderr)
    if args.debug and error.__cause__ is not None:
        out.print_traceback(error.__cause__)
    return PROBLEMS


def while_open(runtime: Runtime, args: argparse.Namespace, work: Callable[[], int]) -> int:
    """Run *work* with *runtime* open; its status, or 1 if it succeeded and a resource then failed to close.

    The runtime is closed on every way out of *work*: its return, an
    exception, Ctrl-C, SIGTERM (raised as :class:`Terminated`).
    """
    from hermes_core._runtime._runtime import ResourceError  # noqa: PLC0415 - --version and --help import nothing heavy
    from hermes_core.cli import _interrupts  # noqa: PLC0415

    if _interrupts.came():  # Ctrl-C came, and what it landed in made it something else that was handled
        raise KeyboardInterrupt
    with _terminate_raises():
        closed = False
        try:  # opening inside: SIGTERM may land as open() returns, and the finally still closes
            try:
                with out.waiting("opening the plugins' resources"):
                    runtime.open()
            except ResourceError as error:  # the runtime stayed closed: the finally closes nothing
                return _resource_failed(error, args)
            status = work()
        finally:
            try:
                runtime.close()
                closed = True
            except ResourceError as error:  # reported, never hiding what ended the work
                _resource_failed(error, args)
    return status if closed or status != OK else PROBLEMS
