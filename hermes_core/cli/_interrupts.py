"""Whether Ctrl-C came, whatever it became on its way up.

Python raises ``KeyboardInterrupt`` in whatever the main thread runs when
SIGINT comes, and the code it lands in may turn it into another error:
Python 3.11 wraps one raised in a class's ``__set_name__`` in a
``RuntimeError``, pydantic builds one into a ``SchemaError`` (``KeyboardInterrupt:``
deep in its message), pydantic-core's Rust code panics. ``hermesos serve``
stopped as it started ended with such tracebacks and status 1; a plugin's
import that failed so would be reported as a broken plugin, and the command
would go on. So the signal is recorded apart from any exception, by the
interpreter's wakeup file descriptor (it writes a byte, the signal's number,
for each signal it handles), and :func:`came` tells whether SIGINT came, for
the command to end as interrupted whatever reached it.

Nothing is recorded where the descriptor cannot be set (outside the main
thread, on Windows) or is someone else's (an event loop's already set).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import signal
else:
    # The C module signal wraps: the same functions and numbers, without the enums signal builds as it is
    # imported, which cost every command about 0.6 ms (docs/performance.md, start-up).
    import _signal as signal

__all__ = ["came", "stop", "watch"]

_pipe: tuple[int, int] | None = None
_seen = False


def watch() -> None:
    """Record the signals the process gets from now on, until :func:`stop`; nothing if it cannot (see above)."""
    global _pipe, _seen
    if _pipe is not None or os.name != "posix":
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        previous = None
    if previous != -1:  # not set, or set by someone else already: theirs stays
        if previous is not None:
            signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)
        return
    _pipe, _seen = (read, write), False


def came() -> bool:
    """Whether SIGINT came since :func:`watch`."""
    global _seen  # noqa: PLW0603
    if _pipe is not None and not _seen:
        try:
            while chunk := os.read(_pipe[0], 512):
                _seen = _seen or signal.SIGINT in chunk
        except BlockingIOError:  # read all there was
            pass
    return _seen


def stop() -> None:
    """Stop recording: the wakeup descriptor unset, the pipe closed."""
    global _pipe  # noqa: PLW0603
    if _pipe is None:
        return
    current = signal.set_wakeup_fd(-1)
    if current != _pipe[1]:  # someone else's since: theirs stays
        signal.set_wakeup_fd(current)
    for descriptor in _pipe:
        os.close(descriptor)
    _pipe = None
