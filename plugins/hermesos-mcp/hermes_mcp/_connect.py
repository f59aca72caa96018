"""Connections to MCP servers: one background event loop holding the sessions, and the calls marshalled to it.

The SDK's sessions are anyio objects bound to the event loop (and the task)
that entered them, while a runtime's callers run on loops of their own
(``call_sync`` makes a new one per call). So a :class:`Pool` owns one thread
running one event loop; each server's session is entered, held and left by
one task there, and each call is sent there with
``asyncio.run_coroutine_threadsafe``. Cancelling a call (its time limit, a
client that gave up) cancels the request on that loop; the session stays.

A pool is a runtime resource, and it starts a server when one of its tools is
first called, not before: :meth:`Pool.open` readies the thread and its loop
and starts nothing (``hermesos call math.eval`` starts no server at all, and
``hermesos call weather.forecast`` the weather server alone). A started server
is kept for the next call until :meth:`Pool.close` stops them all, so no server
process outlives the runtime; one that has exited since its last call is
started again for the next. Under ``async with runtime:`` the runtime awaits
:meth:`Pool.aopen` and :meth:`Pool.aclose` instead: the sessions then live on
the caller's own event loop, and calls made there go straight to them, with
no hop to a thread and back. A call made while the pool is not open connects
for that call alone (start, call, stop). A server that failed to start, or
died, is started again by the next call of one of its tools.

:meth:`Pool.start` starts servers at once, now: to list them
(:func:`list_servers`) and for ``hermesos check`` (:meth:`Pool.check`), which
also tries again the servers a load left out for a failure it remembered.
"""

from __future__ import annotations

import importlib
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, final

from hermes_mcp._config import ServerConfig
from hermes_mcp._failure import Listing, ServerFailure

__all__ = ["Listing", "Pool", "ServerFailure", "list_servers"]


class _OnFirstUse(ModuleType):
    """A module imported when one of its attributes is first read; then this module's global names it."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self.__name__)
        globals()[self.__name__] = module
        return getattr(module, name)


if TYPE_CHECKING:
    import asyncio

    from mcp import Client
    from mcp_types import CallToolResult

    from hermes_mcp._caller import Caller
    from hermes_mcp._session import Connection
else:
    # asyncio costs about 30 ms to import: a command that calls no mounted tool (hermesos call math.eval, with
    # servers configured) never needs it (docs/performance.md, "Servers start when they are needed").
    asyncio = _OnFirstUse("asyncio")

_SESSION = "hermes_mcp._session"


# -- the pool --------------------------------------------------------------------------------------


@final
class Pool:
    """The sessions of a set of servers, each started on the first call of one of its tools: a runtime resource.

    Args:
        servers: the servers, by name.
        on_listed: called (on the pool's thread) with each server and its
            listing whenever a session starts: to refresh the cache.
        cached: the listings the tools were mounted from that came from the
            cache, by server name: what :meth:`check` compares each server with.
        remembered: the names of the servers the load left out without
            starting them, for a failure remembered from an earlier load:
            :meth:`check` tries them again.
        on_failed: called (on the pool's thread) with each of those and its
            failure when :meth:`check` tries it again and it fails again: to
            remember it anew; it returns the problem to report, or None when
            the load's problem says it already (it failed the same way).

    """

    def __init__(
        self,
        servers: Iterable[ServerConfig],
        on_listed: Callable[[ServerConfig, Listing], None] | None = None,
        cached: Mapping[str, Listing] | None = None,
        remembered: Iterable[str] = (),
        on_failed: Callable[[ServerConfig, ServerFailure], str | None] | None = None,
    ) -> None:
        self.servers = {server.name: server for server in servers}
        self._on_listed = on_listed
        self._cached = dict(cached or {})
        self._remembered = frozenset(remembered)
        self._on_failed = on_failed
        self._connections: dict[str, Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._opened = False  # open() was called: the loop and its thread are made when a server is first needed
        self._lock = threading.Lock()  # opening and closing
        # Making a connection; never held while waiting for the loop (which may be making one).
        self._made = threading.Lock()
        self._restarting: asyncio.Lock | None = None  # on the pool's loop: one call at a time restarts a server
        self._starting: dict[str, asyncio.Future[Client]] = {}  # on the pool's loop: each server's start under way

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` (or :meth:`aopen`) was called and :meth:`close` not yet."""
        return self._opened or self._loop is not None

    def open(self) -> None:
        """Open the pool: no server starts, and no thread either, until one of its tools is called."""
        with self._lock:
            if self._loop is None:
                self._opened = True

    def _running(self) -> asyncio.AbstractEventLoop:
        """The pool's event loop, started on its thread the first time a server is needed."""
        with self._lock:
            if self._loop is None:
                if not self._opened:
                    raise RuntimeError("the pool is not open")
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="hermesos-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def aopen(self) -> None:
        """As :meth:`open`, with the sessions on the running event loop (the runtime's ``async with``)."""
        with self._lock:
            if self._loop is not None:
                return
            self._loop = asyncio.get_running_loop()

    async def aclose(self) -> None:
        """As :meth:`close`, for a pool opened by :meth:`aopen`, on the same event loop."""
        if self._thread is not None:  # opened by open(): its thread does the stopping
            await asyncio.to_thread(self.close)
            return
        if self._loop is None:
            return
        try:
            await self._stop_all()
        finally:
            self._release()
            self._loop = None

    def start(
        self,
        names: Iterable[str] | None = None,
        on_started: Callable[[str, ServerFailure | None, float], None] | None = None,
    ) -> None:
        """Start the servers *names* (default: all) at once, now; return when each is ready or has failed.

        Args:
            names: the servers to start, by name.
            on_started: called (on the pool's thread) as each is ready or has
                failed, with its name, its failure (None: it started) and the
                seconds it took.

        Raises:
            RuntimeError: the pool is not open, or was opened by :meth:`aopen`.
        """
        if self._loop is not None and self._thread is None:
            raise RuntimeError("start() needs a pool opened with open(), not aopen()")
        loop = self._running()
        importlib.import_module(_SESSION)
        chosen = list(self.servers) if names is None else list(names)
        connections = [self._connection(name) for name in chosen]

        async def one(connection: Connection) -> None:
            began = time.monotonic()
            failure: ServerFailure | None = None
            try:
                await connection.ensure()
            except ServerFailure as error:
                failure = error
            if on_started is not None:
                on_started(connection.server.name, failure, time.monotonic() - began)

        async def every() -> None:
            await asyncio.gather(*(one(connection) for connection in connections))

        started = asyncio.run_coroutine_threadsafe(every(), loop)
        try:
            started.result()
        except BaseException:  # Ctrl-C while waiting: the starts under way are cancelled, not waited for
            started.cancel()
            raise

    def close(self) -> None:
        """Stop every server that was started, and the pool's thread; return when they are stopped."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._opened = False
            if loop is not None and thread is None:  # opened by aopen(), on a loop of the caller's
                if _running_loop() is loop:
                    raise RuntimeError("this pool was opened with aopen(); close it with 'await pool.aclose()'")
                asyncio.run_coroutine_threadsafe(self.aclose(), loop).result()
                return
            if loop is None or thread is None:
                return
            try:
                asyncio.run_coroutine_threadsafe(self._stop_all(), loop).result()
            finally:
                loop.call_soon_threadsafe(loop.stop)
                thread.join()
                loop.close()
                self._release()
                self._loop = self._thread = None

    def _release(self) -> None:
        with self._made:
            connections, self._connections = self._connections, {}
        for connection in connections.values():
            connection.release()
        self._restarting = None
        self._starting = {}

    async def _stop_all(self) -> None:
        with self._made:
            connections = list(self._connections.values())
        await asyncio.gather(*(connection.stop() for connection in connections))

    def _connection(self, name: str) -> Connection:
        """The connection of server *name*, made (not started) the first time it is asked for."""
        with self._made:
            connection = self._connections.get(name)
            if connection is None:
                from hermes_mcp._session import Connection  # noqa: PLC0415 - the SDK, imported when a server starts

                connection = self._connections[name] = Connection(self.servers[name], self._on_listed)
            return connection

    def failures(self) -> dict[str, ServerFailure]:
        """The servers that failed to start when last started (and have not started since), by name."""
        with self._made:
            connections = dict(self._connections)
        return {name: c.failure for name, c in connections.items() if c.failure is not None}

    def listings(self) -> dict[str, Listing]:
        """The live listings of the servers that started, by name."""
        with self._made:
            connections = dict(self._connections)
        return {name: c.listing for name, c in connections.items() if c.listing is not None}

    def started(self) -> list[str]:
        """The names of the servers running now (started, and not stopped since)."""
        with self._made:
            connections = dict(self._connections)
        return [name for name, c in connections.items() if c.client is not None]

    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], caller: Caller | None = None
    ) -> CallToolResult:
        """Call *tool* of *server* from any event loop: on the pool's loop if it is open, else for this call alone.

        The server is started first if it is not running: its first call, or
        its process has exited since the last one. Its progress, log messages
        and questions during the call go to *caller* (:mod:`hermes_mcp._elicit`).

        Raises:
            ServerFailure: the server could not be started or reached, or the connection failed.
        """
        if not self.is_open:
            return await self._call_once(server, tool, arguments, caller)
        loop = self._loop or self._running()
        if _SESSION not in sys.modules:  # the SDK's import takes about a second: not on the caller's loop
            await asyncio.to_thread(importlib.import_module, _SESSION)
        connection = self._connection(server)
        if asyncio.get_running_loop() is loop:  # opened by aopen() on this loop: no hop
            return await self._call_held(connection, tool, arguments, caller)
        future = asyncio.run_coroutine_threadsafe(self._call_held(connection, tool, arguments, caller), loop)
        return await asyncio.wrap_future(future)

    async def _call_held(
        self, connection: Connection, tool: str, arguments: dict[str, Any], caller: Caller | None
    ) -> CallToolResult:
        """On the pool's loop: the call on *connection*, its server started first if it is not running.

        The start runs in a task of its own, which a call given up on (its
        time limit) does not cancel: the next call finds it under way, or done,
        instead of starting the server a second time.
        """
        if _ended(connection.client):
            if self._restarting is None:
                self._restarting = asyncio.Lock()
            async with self._restarting:
                if _ended(connection.client):  # another call may have restarted it meanwhile
                    await connection.stop()  # the request was never sent: the next one starts it
        if connection.client is None:
            name = connection.server.name
            starting = self._starting.get(name)
            if starting is None or starting.done():
                starting = self._starting[name] = asyncio.ensure_future(connection.ensure())
                starting.add_done_callback(_retrieved)
            await asyncio.shield(starting)
        return await connection.call(tool, arguments, caller)

    async def _call_once(
        self, server: str, tool: str, arguments: dict[str, Any], caller: Caller | None
    ) -> CallToolResult:
        """The call on a pool of its own, opened and closed around it (on a worker thread: both wait)."""
        once = Pool([self.servers[server]])
        # Closed whatever happens, even if this task is cancelled: the thread closing it runs to the end.
        closing: asyncio.Future[None] | None = None
        try:
            await asyncio.to_thread(once.open)
            return await once.call(server, tool, arguments, caller)
        finally:
            closing = asyncio.ensure_future(asyncio.to_thread(once.close))
            await asyncio.shield(closing)

    def check(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Start each server the load did not: compare a cached listing, try a remembered failure again: the problems.

        Used by ``hermesos check``: a cached listing mounts a server's tools
        without starting it, so a server that can no longer start, or whose
        tools changed, would otherwise go unseen until a call; and a server
        whose failure is remembered is left out without being started, so one
        that was fixed would go unseen until its ``retry_after`` has passed.
        The servers are started at once, on a pool of their own, and stopped;
        a live listing that differs is cached (the next load mounts it), a
        server that started is forgotten as failed, one that failed again is
        remembered anew.

        Args:
            progress: called with one line for each server, as it is checked.

        Returns:
            One problem for each server that could not start (a remembered
            one: unless it failed as the load said) or whose tools changed,
            naming it and what to do.
        """
        say = progress or (lambda line: None)
        for name in self.servers:
            if name not in self._cached and name not in self._remembered:
                say(f'MCP server "{name}": checked when the plugins loaded (its listing was not cached)')
        names = [name for name in self.servers if name in self._cached or name in self._remembered]
        if not names:
            return []
        problems: dict[str, str] = {}
        checking = Pool([self.servers[name] for name in names], self._on_listed)

        def started(name: str, failure: ServerFailure | None, seconds: float) -> None:
            if name in self._remembered:
                tried_again(name, failure, seconds)
                return
            if failure is not None:
                say(f'MCP server "{name}": could not start ({seconds:.1f} s)')
                problems[name] = (
                    f'MCP server "{name}" {failure}; its tools are mounted from the listing cached earlier, '
                    "and every call of one fails until it starts again (fix its entry in the configuration "
                    "file, or remove it)"
                )
                return
            live = checking.listings().get(name, [])
            change = _change(self._cached[name], live)
            tools = f"{len(live)} tool{'' if len(live) == 1 else 's'}"
            say(f'MCP server "{name}": started in {seconds:.1f} s, {tools}, {"changed" if change else "as cached"}')
            if change:
                problems[name] = (
                    f'MCP server "{name}" lists other tools than its cached listing ({change}); the cache now '
                    "holds the new listing, which the next load mounts"
                )

        def tried_again(name: str, failure: ServerFailure | None, seconds: float) -> None:
            if failure is None:
                live = checking.listings().get(name, [])
                tools = f"{len(live)} tool{'' if len(live) == 1 else 's'}"
                say(
                    f'MCP server "{name}": tried again (it had failed), started in {seconds:.1f} s, {tools}: its '
                    "failure is forgotten, and the next load mounts its tools"
                )
                return
            say(f'MCP server "{name}": tried again (it had failed), could not start ({seconds:.1f} s)')
            problem = (
                f'MCP server "{name}" {failure}; its tools are left out (fix its [servers.{name}] entry, or remove it)'
                if self._on_failed is None
                else self._on_failed(self.servers[name], failure)
            )
            if problem is not None:
                problems[name] = problem

        checking.open()
        try:
            checking.start(names, started)
        finally:
            checking.close()
        return [problems[name] for name in names if name in problems]


def _change(cached: Listing, live: Listing) -> str:
    """How *live* differs from *cached*, in words ("" if it does not): the tools added, removed and changed."""
    before = {str(tool.get("name")): tool for tool in cached}
    after = {str(tool.get("name")): tool for tool in live}
    parts = []
    for label, names in (
        ("new", [name for name in after if name not in before]),
        ("gone", [name for name in before if name not in after]),
        ("changed", [name for name in after if name in before and after[name] != before[name]]),
    ):
        if names:
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
            parts.append(f"{label}: {shown}")
    return "; ".join(parts)


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Take a start's failure, so that one no call awaited any more is not logged as never retrieved."""
    if not future.cancelled():
        future.exception()


def _ended(client: Client | None) -> bool:
    """Whether *client*'s connection has ended: its server exited since its last call.

    The SDK's dispatcher marks itself closed when the server's stream ends, and
    refuses every later request unsent; nothing public says so, hence the
    attributes, read defensively (without them, the call fails as it did, and
    the next one starts the server again).
    """
    if client is None:
        return False
    try:
        dispatcher = getattr(client.session, "_dispatcher", None)
    except Exception:  # not entered, or left
        return False
    return getattr(dispatcher, "_closed", False) is True


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def list_servers(servers: Sequence[ServerConfig]) -> tuple[dict[str, Listing], dict[str, ServerFailure]]:
    """Start every server at once, list its tools, stop it: the listings and the failures, by server name."""
    if not servers:
        return {}, {}
    pool = Pool(servers)
    pool.open()
    try:
        pool.start()
        return pool.listings(), pool.failures()
    finally:
        pool.close()
