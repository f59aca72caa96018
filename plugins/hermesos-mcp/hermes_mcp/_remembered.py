"""Failures remembered: a server that could not be started or listed at load is not started again for a while.

Every command of hermesos is a new process, and a server whose listing is
not cached is started and listed at each load: without a memory, one broken
``[servers.<name>]`` entry makes every command, a call of a local tool
included, wait for it to fail again (a program that hangs waits out its
``startup_timeout``). So a failure at load is written down beside the
listings, in the cache directory, as ``<name>.failed.json``: the entry's
hash (:meth:`ServerConfig.cache_key`), when it failed and why. For
``retry_after`` seconds after that (60 unless the entry or the file says
otherwise; 0 turns the memory off) a load neither starts nor lists the
server, leaves its tools out, and reports the failure as a problem; the
command that failed it says so on stderr, once.

A record is forgotten when:

* ``retry_after`` seconds have passed since the failure;
* the entry changes (any key: its hash is another, so the record is another's);
* the server starts: listed at load, started for a call or by ``hermesos check``;
* ``HERMESOS_MCP_REFRESH=1`` or ``hermesos-mcp refresh`` lists every server
  live, ``hermesos check`` tries each remembered server again, and
  ``hermesos-mcp clear`` removes every record.

A record is input from the disk, read within bounds: at most
:data:`RECORD_MAX` bytes of a regular file (a FIFO or a device in its place
is refused without being read), JSON of the format written, the key of the
entry as it is now, a time of failure within the window (a time to come is
no time: a record cannot hold a server back for longer than the entry's
``retry_after``), a reason made plain and bounded. Anything else is no
record: the server is started as if none were there, and its record
rewritten.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final, final

from hermes_core import InvalidDefinitionError, shorten
from hermes_core.config import read_config_file
from hermes_mcp import _cache
from hermes_mcp._config import ServerConfig
from hermes_mcp._failure import TEXT_MAX, plain

__all__ = ["RECORD_MAX", "FailedServer", "forget", "recall", "remember"]

#: The most bytes of a failure record read: a record is a few hundred bytes, its reason at most 2,000 characters.
RECORD_MAX: Final = 16 * 1024
_FORMAT: Final = 1
_SUFFIX: Final = ".failed.json"


@final
@dataclass(frozen=True, slots=True)
class FailedServer:
    """A server left out of a load for its failure: this load's, or one remembered from an earlier one.

    Attributes:
        server: the server's name.
        detail: what failed, in the words of :class:`~hermes_mcp.ServerFailure`
            (``could not be started: there is no program "x" (check command and PATH)``).
        failed_at: when it failed, in seconds since the epoch.
        retry_after: the seconds it is not started again after that (0: it is
            started by the next load; nothing was written).
        new: whether it failed in this load (else it was remembered).

    """

    server: str
    detail: str
    failed_at: float
    retry_after: float
    new: bool

    @property
    def until(self) -> float:
        """When the server is started again, in seconds since the epoch."""
        return self.failed_at + self.retry_after

    def problem(self, source: str | None) -> str:
        """The problem of the load that left the server out (*source*: the configuration file)."""
        when = "" if self.new else f"failed at {_clock(self.failed_at)}: it "
        return f'MCP server "{self.server}" {when}{self.detail}; its tools are left out{self._remedy(source)}'

    def notice(self, source: str | None) -> str:
        """The one line the command that found the failure says on stderr (*source*: the configuration file)."""
        return f"hermesos-mcp: {self.problem(source)}"

    def _remedy(self, source: str | None) -> str:
        entry = f"[servers.{self.server}] entry" + (f' in "{source}"' if source else "")
        if self.retry_after <= 0:
            return f" (fix its {entry}, or remove it)"
        return (
            f", and it is not started again until {_clock(self.until)} (retry_after = {self.retry_after:g} s; 0 "
            f"turns this off): fix its {entry}, which is tried at once when changed, or try it now with "
            "'hermesos check' (or any command with HERMESOS_MCP_REFRESH=1)"
        )


def _clock(moment: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(moment))


def _path(directory: Path, server: ServerConfig) -> Path:
    # One record for each server's name (the key inside says which entry failed): as many as names ever configured.
    return directory / f"{server.name}{_SUFFIX}"


def recall(directory: Path, server: ServerConfig, now: float | None = None) -> FailedServer | None:
    """The failure of *server* (its entry as it is now) remembered in *directory*, if it is within its window.

    None when its ``retry_after`` is 0, there is no record, or the record is
    not one (see the module's rules): a bad record is no record, never an error.
    """
    if server.retry_after <= 0:
        return None
    path = _path(directory, server)
    try:
        data = json.loads(read_config_file(path, RECORD_MAX, f'failure record "{path}"'))
    except (InvalidDefinitionError, ValueError, RecursionError):  # none, not a regular file, too big, not JSON
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != server.cache_key():
        return None
    failed_at, detail = data.get("failed_at"), data.get("detail")
    if isinstance(failed_at, bool) or not isinstance(failed_at, int | float) or not isinstance(detail, str):
        return None
    try:
        at = float(failed_at)
    except OverflowError:  # an integer of 400 digits
        return None
    now = time.time() if now is None else now
    if not 0 <= now - at < server.retry_after:  # past, to come, or not a number (NaN compares false)
        return None
    said = shorten(plain(detail.strip()), TEXT_MAX) or "could not be started"
    return FailedServer(server.name, said, at, server.retry_after, new=False)


def remember(directory: Path, server: ServerConfig, detail: str, now: float | None = None) -> FailedServer:
    """*server* failed now, saying *detail*: the failure, written to *directory* unless its ``retry_after`` is 0."""
    said = shorten(plain(detail.strip()), TEXT_MAX) or "could not be started"
    failed = FailedServer(server.name, said, time.time() if now is None else now, server.retry_after, new=True)
    if failed.retry_after > 0:
        record = {
            "format": _FORMAT,
            "key": server.cache_key(),
            "server": server.name,
            "failed_at": failed.failed_at,
            "detail": said,
        }
        _cache.store(_path(directory, server), record)
    return failed


def forget(directory: Path, server: ServerConfig) -> None:
    """Remove the failure record of *server*, if there is one: it started."""
    with contextlib.suppress(OSError):
        _path(directory, server).unlink()
