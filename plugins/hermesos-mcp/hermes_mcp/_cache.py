"""The listing cache: each server's ``tools/list``, kept in the user's cache directory.

One JSON file per server entry, named by :meth:`ServerConfig.cache_key` (a
hash of the entry as written, so any edit to it is another file). A cached
listing is used when all of these hold, and the server is listed live otherwise:

* the file's ``cache_ttl`` is not 0 and ``HERMESOS_MCP_REFRESH`` is not set;
* the listing is younger than ``cache_ttl`` seconds;
* it was written by this cache format.

A live listing, at load or when a runtime opens, rewrites the file when it
differs from what it holds. Nothing is cached for a server that failed: what
is kept of it, beside the listings, is the record of its failure
(:mod:`hermes_mcp._remembered`), written as a listing is (:func:`store`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_core import InvalidDefinitionError, setting
from hermes_core import schema as s
from hermes_core.config import read_config_file
from hermes_mcp._config import ServerConfig

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "CACHE_DIR_ENV",
    "REFRESH_ENV",
    "cache_bytes_max",
    "cache_dir",
    "cache_directory",
    "cached_tools",
    "clear",
    "read",
    "refresh_asked",
    "store",
    "write",
]

#: Set (to a path) to keep the cache there instead of the user's cache directory.
CACHE_DIR_ENV: Final = "HERMESOS_MCP_CACHE_DIR"
#: Set to 1 (or true) to list every server live at load, ignoring (and rewriting) the cache and the failures remembered.
REFRESH_ENV: Final = "HERMESOS_MCP_REFRESH"
_FORMAT = 1

_DIR_SETTING = s.string(min_length=1, description="the directory to keep MCP tool listings in")


@functools.cache
def _refresh_setting() -> s.Schema:
    """What HERMESOS_MCP_REFRESH may be, declared where a configuration is read.

    Not at import: its pattern is compiled as it is declared (start-up, docs/performance.md).
    """
    return s.string(
        pattern=r"^(1|0|true|false|True|False|TRUE|FALSE|yes|no|on|off)$",
        description="1 to list every MCP server again, ignoring the cache and the failures remembered",
    )


def cache_directory(environ: Mapping[str, str] | None = None) -> str:
    """Where listings are kept, as a ``str``: :func:`cache_dir`, without ``pathlib``.

    The hooks ask it at every start, and importing pathlib (with
    ``urllib.parse`` and ``ipaddress`` behind it) cost every start 18 million
    instructions (hermesos-core's docs/performance.md, start-up).

    Raises:
        RuntimeError: no home directory can be determined (as ``Path.home()`` raises), where one is needed.
    """
    environ = os.environ if environ is None else environ
    named: str | None = setting(CACHE_DIR_ENV, _DIR_SETTING, default=None, environ=environ)
    if named is not None or os.name == "nt":
        return str(cache_dir(environ))
    xdg = environ.get("XDG_CACHE_HOME", "")
    if not xdg.startswith("/"):  # unset, or relative: not the user's cache directory
        home = os.path.expanduser("~")
        if home.startswith("~"):
            raise RuntimeError("Could not determine home directory.")
        xdg = os.path.join(home, ".cache")
    return os.path.join(xdg, "hermesos", "mcp")


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where listings are kept: ``HERMESOS_MCP_CACHE_DIR``, else ``hermesos/mcp`` in the user's cache directory.

    The user's cache directory is ``$XDG_CACHE_HOME`` (if absolute), else
    ``~/.cache``; ``%LOCALAPPDATA%`` on Windows.
    """
    from pathlib import Path  # noqa: PLC0415 - see cache_directory

    environ = os.environ if environ is None else environ
    named: str | None = setting(CACHE_DIR_ENV, _DIR_SETTING, default=None, environ=environ)
    if named is not None:
        return Path(named).expanduser()
    if os.name == "nt":
        return Path(environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local", "hermesos", "mcp")
    return Path(cache_directory(environ))


def refresh_asked(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``HERMESOS_MCP_REFRESH`` asks for every server to be listed live."""
    value: str = setting(REFRESH_ENV, _refresh_setting(), default="0", environ=environ)
    return value.lower() in {"1", "true", "yes", "on"}


def _path(directory: Path, server: ServerConfig) -> Path:
    return directory / f"{server.name}-{server.cache_key()[:32]}.json"


def _load(directory: Path, server: ServerConfig) -> tuple[float, list[dict[str, Any]]] | None:
    """When *server*'s listing was cached, and the listing; None if there is none this format wrote.

    The file is read as a configuration file is, within a bound: a regular
    file (a FIFO is refused by its type, never opened: reading it would wait
    for a writer), of at most :func:`cache_bytes_max` bytes. Anything else is no
    listing, and the server is listed live.
    """
    import json  # noqa: PLC0415 - a server configured only: not at import (start-up)

    path = _path(directory, server)
    try:
        data = json.loads(read_config_file(path, cache_bytes_max(server), f'cached listing "{path}"'))
    except (InvalidDefinitionError, ValueError, RecursionError):  # none, not a regular file, too big, not JSON
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT or data.get("key") != server.cache_key():
        return None
    listed_at, tools = data.get("listed_at"), data.get("tools")
    if isinstance(listed_at, bool) or not isinstance(listed_at, int | float) or not isinstance(tools, list):
        return None
    return float(listed_at), tools


def cache_bytes_max(server: ServerConfig) -> int:
    """The most bytes a cached listing of *server* is read from: twice its ``max_listing_bytes``, and 64 KiB.

    A listing is kept as the JSON the server sent, whose tools weigh at most
    ``max_listing_bytes`` once mounted (:func:`hermes_mcp._failure.listed_size`);
    a file larger than this bound was not written for the entry as it is, and
    is read as no listing.
    """
    return 2 * server.max_listing_bytes + 64 * 1024


def read(directory: Path, server: ServerConfig, ttl: float) -> list[dict[str, Any]] | None:
    """The cached listing of *server* if it is usable (see the module's rules), else None."""
    if ttl <= 0:
        return None
    found = _load(directory, server)
    if found is None:
        return None
    listed_at, tools = found
    return tools if 0 <= time.time() - listed_at < ttl else None


def write(directory: Path, server: ServerConfig, tools: list[dict[str, Any]]) -> None:
    """Keep *tools* as the listing of *server*, atomically; a cache that cannot be written is no error.

    A listing larger than :func:`cache_bytes_max` is not kept: it would never be read back.
    """
    data = {
        "format": _FORMAT,
        "key": server.cache_key(),
        "server": server.name,
        "listed_at": time.time(),
        "tools": tools,
    }
    store(_path(directory, server), data, max_bytes=cache_bytes_max(server))


def store(path: Path, data: Mapping[str, Any], *, max_bytes: int | None = None) -> None:
    """Write *data* as JSON at *path*, in the cache directory, atomically; a cache that cannot be written is no error.

    The JSON goes to a new file beside *path*, which then replaces it: a
    reader sees the old file or the new one, never part of one, and a
    process stopped halfway leaves the old one. JSON of more than *max_bytes*
    bytes is not written.
    """
    import json  # noqa: PLC0415 - a server configured only: not at import (start-up)
    import tempfile  # noqa: PLC0415 - a listing written only: not on every start of hermesos (docs/performance.md)

    text = json.dumps(data, ensure_ascii=False).encode()
    if max_bytes is not None and len(text) > max_bytes:
        return
    directory = path.parent
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(text)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def cached_tools(directory: Path, server: ServerConfig) -> list[dict[str, Any]] | None:
    """What the cache holds for *server*, however old (None: nothing): to tell whether a live listing differs."""
    found = _load(directory, server)
    return None if found is None else found[1]


def clear(directory: Path) -> int:
    """Remove every cached listing and every failure record in *directory*; return how many there were."""
    removed = 0
    for path in directory.glob("*.json"):
        with contextlib.suppress(OSError):
            path.unlink()
            removed += 1
    return removed
