"""hermesos-loadtest: the tools the load test and the replica tests call, each call recorded where it ran.

* ``load.echo`` answers at once with its ``tag`` (followed by ``pad`` characters
  ``x``, for a large answer): a cheap tool, run on the event loop.
* ``load.nap`` sleeps ``seconds`` (a plain handler, so on one of a process's
  worker threads, as a tool blocked on a network or a disk is), then answers
  with its ``tag``.

When ``LOADTEST_RECORDS`` names a folder, each call that runs to its end
appends its ``tag`` and a newline to the file of its process there
(``<pid>.log``), with one write, just before it answers: after a run, a tag
found once ran once, whichever replica ran it. ``load.nap`` also writes
``+<tag>`` as it starts, so that a test can wait for a call to be running. Not a ``HERMESOS_`` setting:
this plugin is the load test's, not one an operator installs.

Installed by :func:`deploy.cluster.load_site`, which makes a folder holding
this module and its distribution's metadata, for ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from hermes_core import define_tool, hookimpl
from hermes_core import schema as s

__all__ = ["RECORDS", "hermes_tools"]

#: The variable naming the folder where each call's tag is recorded.
RECORDS = "LOADTEST_RECORDS"
#: The most characters of padding an answer may carry (8 MiB).
PAD_MAX = 8 << 20

_folder = os.environ.get(RECORDS)
_log = (
    os.open(os.path.join(_folder, f"{os.getpid()}.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    if _folder
    else None
)


def _record(tag: str) -> None:
    if _log is not None:
        os.write(_log, f"{tag}\n".encode())


async def _echo(args: dict[str, Any]) -> str:
    tag: str = args["tag"]
    pad: int = args["pad"]
    _record(tag)
    return tag + "x" * pad


def _nap(args: dict[str, Any]) -> str:
    tag: str = args["tag"]
    _record(f"+{tag}")
    time.sleep(args["seconds"])
    _record(tag)
    return tag


_TAG = s.string(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:-]+$", description="names the call")


@hookimpl
def hermes_tools() -> list[Any]:
    """``load.echo`` and ``load.nap``."""
    return [
        define_tool(
            name="load.echo",
            description="Answer at once with the tag, then pad characters 'x'.",
            version="1.0.0",
            input=s.object({"tag": _TAG, "pad": s.optional(s.integer(minimum=0, maximum=PAD_MAX), default=0)}),
            output=s.string(),
            handler=_echo,
        ),
        define_tool(
            name="load.nap",
            description="Sleep the given seconds (on a worker thread), then answer with the tag.",
            version="1.0.0",
            input=s.object({"tag": _TAG, "seconds": s.number(minimum=0, maximum=600)}),
            output=s.string(),
            handler=_nap,
        ),
    ]
