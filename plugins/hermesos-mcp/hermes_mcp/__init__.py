"""hermesos-mcp: the tools of any MCP server, as hermes tools named ``<server>.<tool>``.

The operator lists servers in a TOML file (``HERMESOS_MCP_CONFIG``, else
``hermesos/mcp.toml`` in the user's configuration directory)::

    [servers.time]
    command = "mcp-server-time"
    args = ["--local-timezone", "UTC"]

    [servers.search]
    url = "https://search.example.com/mcp"
    token_env = "SEARCH_TOKEN"
    permissions = ["net:search"]

When plugins load, each server's listing is read from the cache or, for a
server whose listing is not cached (or is stale), from the server itself: all
of those are started and listed at once, then stopped. Each tool is mounted
(:mod:`hermes_mcp._mount`); a server that fails leaves its tools out, with a
problem naming it and the cause (``hermesos check``), and is not started
again for its ``retry_after`` seconds (:mod:`hermes_mcp._remembered`): the
command that failed it says so on stderr, once. The plugin's resource,
a :class:`Pool`, starts a server on the first call of one of its tools (a
call of a local tool starts none), keeps it for the next call while the
runtime is open, and stops every server it started when the runtime closes;
a runtime that is never opened connects for each call. ``hermesos check``
starts each server whose listing came from the cache and compares the two,
and tries each server whose failure was remembered again (:meth:`Pool.check`).
While a call runs, the server's progress and log messages are the call's,
and its questions (elicitation) are put to the runtime's approver when a yes
or a no answers them (:mod:`hermes_mcp._elicit`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, final

from hermes_core import Tool, frozen, hookimpl
from hermes_mcp import _cache
from hermes_mcp._cache import CACHE_DIR_ENV, REFRESH_ENV, cache_dir, cache_directory
from hermes_mcp._config import (
    CONFIG_ENV,
    USER_FILE,
    Config,
    ServerConfig,
    config_path,
    find_config_file,
    load_config,
    parse_config,
)

if TYPE_CHECKING:
    from pathlib import Path

    # Imported when a server is configured: connecting needs asyncio and threads (and, to connect, the
    # MCP SDK), which a load without a configuration file has no use for.
    from hermes_mcp._connect import Pool
    from hermes_mcp._failure import Listing, ServerFailure
    from hermes_mcp._remembered import FailedServer

__all__ = [
    "CACHE_DIR_ENV",
    "CONFIG_ENV",
    "REFRESH_ENV",
    "USER_FILE",
    "Config",
    "FailedServer",
    "Mounted",
    "Pool",
    "ServerConfig",
    "ServerFailure",
    "__version__",
    "cache_dir",
    "find_config_file",
    "hermes_problems",
    "hermes_resources",
    "hermes_tools",
    "hermes_yielding_tools",
    "load_config",
    "mount_servers",
    "parse_config",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    # Pool, ServerFailure and FailedServer are imported on first use (see the imports above).
    if name == "FailedServer":
        from hermes_mcp._remembered import FailedServer  # noqa: PLC0415

        return FailedServer
    if name == "Pool":
        from hermes_mcp._connect import Pool  # noqa: PLC0415

        return Pool
    if name == "ServerFailure":
        from hermes_mcp._failure import ServerFailure  # noqa: PLC0415

        return ServerFailure
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


@final
@frozen  # not dataclass, which compiles six methods as the module is imported: start-up
class Mounted:
    """The servers of a configuration, mounted.

    Attributes:
        tools: every tool that could be hosted, named ``<server>.<tool>``.
        pool: the resource their handlers call through: open it (or the
            runtime holding it) to keep the servers running between calls.
        problems: one message for each server, entry or tool left out, and
            each schema keyword that is not checked.
        failed: the servers left out for a failure, each with what it was:
            one of this mount (``new``), or one remembered from an earlier mount.

    """

    tools: tuple[Tool, ...]
    pool: Pool
    problems: tuple[str, ...]
    failed: tuple[FailedServer, ...] = ()


def mount_servers(config: Config, *, refresh: bool = False, cache_directory: str | Path | None = None) -> Mounted:
    """Mount the servers of *config*: their listings from the cache, else from the servers, all at once.

    A server that could not be started or listed is left out, and its failure
    recorded in the cache directory: for its ``retry_after`` seconds, the
    next mounts leave it out without starting it (:mod:`hermes_mcp._remembered`).

    Args:
        config: the checked configuration (:func:`load_config`, :func:`parse_config`).
        refresh: list every server live, ignoring the cache (and rewriting it) and the failures remembered.
        cache_directory: where listings and failures are kept (default: :func:`cache_dir`).

    Returns:
        The tools, the pool to open, the problems, and the servers left out for a failure.
    """
    from pathlib import Path  # noqa: PLC0415 - with the servers: not at import (start-up)

    from hermes_mcp._connect import Pool, list_servers  # noqa: PLC0415 - see the imports above
    from hermes_mcp._mount import drop_clashes, mount  # noqa: PLC0415
    from hermes_mcp._remembered import forget, recall, remember  # noqa: PLC0415

    directory = cache_dir() if cache_directory is None else Path(cache_directory)
    listings: dict[str, Listing] = {}
    from_cache: dict[str, Listing] = {}
    failed: dict[str, FailedServer] = {}
    unlisted: list[ServerConfig] = []
    for server in config.servers:
        cached = None if refresh else _cache.read(directory, server, config.cache_ttl)
        remembered = None if refresh or cached is not None else recall(directory, server)
        if cached is not None:
            listings[server.name] = from_cache[server.name] = cached
        elif remembered is not None:  # not started: it failed a moment ago, its entry as it is now
            failed[server.name] = remembered
        else:
            unlisted.append(server)
    live, failures = list_servers(unlisted)
    for server in unlisted:
        if server.name in live:
            listings[server.name] = live[server.name]
            forget(directory, server)
            if config.cache_ttl > 0:
                _cache.write(directory, server, live[server.name])
        elif server.name in failures:
            failed[server.name] = remember(directory, server, str(failures[server.name]))
    problems = list(config.problems)
    problems.extend(failed[server.name].problem(config.source) for server in config.servers if server.name in failed)

    def on_listed(server: ServerConfig, listing: Listing) -> None:
        # A server started: its failure is forgotten, and the live listing refreshes the cache when it differs
        # (the tools change at the next load).
        forget(directory, server)
        if config.cache_ttl > 0 and listing != _cache.cached_tools(directory, server):
            _cache.write(directory, server, listing)

    def on_failed(server: ServerConfig, failure: ServerFailure) -> str | None:
        # A remembered server that check tried again failed again: remembered anew, from now; a problem of its
        # own if it failed otherwise than the load's problem says.
        again = remember(directory, server, str(failure))
        return None if again.detail == failed[server.name].detail else again.problem(config.source)

    earlier = [name for name, failure in failed.items() if not failure.new]
    pool = Pool(config.servers, on_listed, from_cache, earlier, on_failed)
    tools: list[Tool] = []
    for server in config.servers:
        if server.name in listings:
            tools.extend(mount(pool, server, listings[server.name], problems))
    ordered = tuple(failed[server.name] for server in config.servers if server.name in failed)
    return Mounted(tuple(drop_clashes(tools, problems)), pool, tuple(problems), ordered)


# -- the hooks -----------------------------------------------------------------------------
# hermes_guarded_paths is called before any plugin's hermes_tools, in the same load: the configuration it read
# and guarded is kept here, so that the servers hermes_tools starts are those whose paths were checked.
# hermes_resources and hermes_problems are called right after hermes_tools: what it mounted is kept here for them.
# None: no configuration file, so nothing mounted.
_guarded: tuple[str, Config] | None = None
_loaded: Mounted | None = None


def _load(environ: Mapping[str, str] | None = None) -> Mounted | None:
    global _guarded
    path = config_path(environ)  # not find_config_file: a str, without pathlib (start-up)
    if path is None:
        return None
    guarded, _guarded = _guarded, None
    config = guarded[1] if guarded is not None and guarded[0] == path else load_config(path)
    mounted = mount_servers(config, refresh=_cache.refresh_asked(environ))
    for failed in mounted.failed:
        if failed.new:  # said once, by the command that found it; later ones leave it to check and tools list
            _say(failed.notice(config.source))
    return mounted


def _say(line: str) -> None:
    """*line* on stderr, made plain, alone on its line: a terminal's live line (the clock of hermesos) is erased first.

    The clock draws its line again under it at its next tick.
    """
    from hermes_mcp._failure import plain  # noqa: PLC0415 - imported with the servers, as in mount_servers

    stream = sys.stderr
    if stream is None:
        return
    try:
        erase = "\r\033[K" if stream.isatty() else ""
        stream.write(f"{erase}{plain(line)}\n")
        stream.flush()
    except (OSError, ValueError):  # closed, or a broken pipe: nothing to say it on
        pass


@hookimpl
def hermes_tools() -> Iterable[Tool]:
    """The tools of every server of the configuration file (none without one).

    Raises:
        InvalidDefinitionError: ``HERMESOS_MCP_CONFIG`` names no file, or the
            file cannot be read or is malformed at its top level.
    """
    global _loaded  # noqa: PLW0603 - see above
    _loaded = _load()
    return () if _loaded is None else _loaded.tools


@hookimpl
def hermes_yielding_tools() -> Mapping[str, str]:
    """Every mounted tool gives way to another plugin's tool of the same name: the remedy names its server's entry."""
    if _loaded is None or not _loaded.tools:
        return {}
    from hermes_mcp._mount import clash_advice  # noqa: PLC0415 - imported with the servers, as in mount_servers

    where = config_path() or "mcp.toml"
    return {tool.name: clash_advice(tool.name, where) for tool in _loaded.tools}


@hookimpl
def hermes_resources() -> Iterable[Pool]:
    """The pool of the servers mounted by this load's :func:`hermes_tools` (none if it mounted nothing)."""
    return [] if _loaded is None or not _loaded.pool.servers else [_loaded.pool]


@hookimpl
def hermes_problems() -> Iterable[str]:
    """What this load's :func:`hermes_tools` left out, and why."""
    return () if _loaded is None else _loaded.problems


@hookimpl
def hermes_guarded_paths() -> Iterable[str | tuple[str, str]]:
    """What decides which programs start and what tools say: the configuration, the cache, each server's code.

    The configuration file in use, the listing cache, and for each stdio
    server of that file every path that decides the code it runs, whether it
    exists or not (``ServerConfig.decisive_paths``), each with what it is. All
    from the file alone: the loader asks before any plugin's ``hermes_tools``,
    and refuses to start, before any server is started, when a directory a
    tool may write is, holds or lies inside one of them (the configuration
    directory of hermesos is guarded by the core itself).

    Raises:
        InvalidDefinitionError: ``HERMESOS_MCP_CONFIG`` names no file, or the
            file cannot be read or is malformed at its top level.
    """
    global _guarded  # noqa: PLW0603 - see above
    path = config_path()
    _guarded = None if path is None else (path, load_config(path))
    guarded: list[str | tuple[str, str]] = [*([] if path is None else [path]), cache_directory()]
    if _guarded is not None:
        for server in _guarded[1].servers:
            guarded.extend(server.decisive_paths(source=str(path)).items())
    return guarded
