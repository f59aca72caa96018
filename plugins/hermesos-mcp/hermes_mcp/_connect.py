"""Connections to MCP servers: one background event loop holding every session, and the calls marshalled to it.

The SDK's sessions are anyio objects bound to the event loop (and the task)
that entered them, while a runtime's callers run on loops of their own
(``call_sync`` makes a new one per call). So a :class:`Pool` owns one thread
running one event loop; each server's session is entered, held and left by
one task there, and each call is sent there with
``asyncio.run_coroutine_threadsafe``. Cancelling a call (its time limit, a
client that gave up) cancels the request on that loop; the session stays.

A pool is a runtime resource: :meth:`Pool.open` starts every server at once
and waits until each is ready or has failed; :meth:`Pool.close` stops them all,
so no server process outlives the runtime. Under ``async with runtime:`` the
runtime awaits :meth:`Pool.aopen` and :meth:`Pool.aclose` instead: the
sessions then live on the caller's own event loop, and calls made there go
straight to them, with no hop to a thread and back. A call made while the pool is not
open connects for that call alone (start, call, stop). A server that failed
to start, or died, is started again by the next call of one of its tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, final

from hermes_mcp._config import ServerConfig
from hermes_mcp._failure import Listing, ServerFailure

__all__ = ["Listing", "Pool", "ServerFailure", "list_servers"]

if TYPE_CHECKING:
    from mcp_types import CallToolResult

    from hermes_mcp._session import Connection


# -- the pool --------------------------------------------------------------------------------------


@final
class Pool:
    """The sessions of a set of servers, on one background event loop: a runtime resource.

    Args:
        servers: the servers, by name.
        on_listed: called (on the pool's thread) with each server and its
            listing whenever a session starts: to refresh the cache.

    """

    def __init__(
        self, servers: Iterable[ServerConfig], on_listed: Callable[[ServerConfig, Listing], None] | None = None
    ) -> None:
        self.servers = {server.name: server for server in servers}
        self._on_listed = on_listed
        self._connections: dict[str, Connection] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` was called and :meth:`close` not yet."""
        return self._loop is not None

    def open(self) -> None:
        """Start every server at once; return when each is ready or has failed (its calls will say why)."""
        with self._lock:
            if self._loop is not None:
                return
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="hermesos-mcp", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
            from hermes_mcp._session import Connection  # noqa: PLC0415 - the SDK, imported when a server starts

            self._connections = {name: Connection(server, self._on_listed) for name, server in self.servers.items()}
            asyncio.run_coroutine_threadsafe(self._start_all(), loop).result()

    async def aopen(self) -> None:
        """As :meth:`open`, with the sessions on the running event loop (the runtime's ``async with``)."""
        with self._lock:
            if self._loop is not None:
                return
            from hermes_mcp._session import Connection  # noqa: PLC0415 - the SDK, imported when a server starts

            self._loop = asyncio.get_running_loop()
            self._connections = {name: Connection(server, self._on_listed) for name, server in self.servers.items()}
        await self._start_all()

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
            for connection in self._connections.values():
                connection.release()
            self._loop = None
            self._connections = {}

    async def _start_all(self) -> None:
        async def start(connection: Connection) -> None:
            with contextlib.suppress(ServerFailure):
                await connection.ensure()

        await asyncio.gather(*(start(connection) for connection in self._connections.values()))

    def close(self) -> None:
        """Stop every server at once, and the pool's thread; return when they are stopped."""
        with self._lock:
            loop, thread = self._loop, self._thread
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
                for connection in self._connections.values():
                    connection.release()
                self._loop = self._thread = None
                self._connections = {}

    async def _stop_all(self) -> None:
        await asyncio.gather(*(connection.stop() for connection in self._connections.values()))

    def failures(self) -> dict[str, ServerFailure]:
        """The servers that failed to start when the pool was last opened (or since), by name."""
        return {name: c.failure for name, c in self._connections.items() if c.failure is not None}

    def listings(self) -> dict[str, Listing]:
        """The live listings of the servers that started, by name."""
        return {name: c.listing for name, c in self._connections.items() if c.listing is not None}

    async def call(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call *tool* of *server* from any event loop: on the pool's loop if it is open, else for this call alone.

        Raises:
            ServerFailure: the server could not be started or reached, or the connection failed.
        """
        loop = self._loop
        if loop is None:
            return await self._call_once(server, tool, arguments)
        connection = self._connections[server]
        if asyncio.get_running_loop() is loop:  # opened by aopen() on this loop: no hop
            return await connection.call(tool, arguments)
        future = asyncio.run_coroutine_threadsafe(connection.call(tool, arguments), loop)
        return await asyncio.wrap_future(future)

    async def _call_once(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """The call on a pool of its own, opened and closed around it (on a worker thread: both wait)."""
        once = Pool([self.servers[server]])
        # Closed whatever happens, even if this task is cancelled: the thread closing it runs to the end.
        closing: asyncio.Future[None] | None = None
        try:
            await asyncio.to_thread(once.open)
            return await once.call(server, tool, arguments)
        finally:
            closing = asyncio.ensure_future(asyncio.to_thread(once.close))
            await asyncio.shield(closing)


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
        return pool.listings(), pool.failures()
    finally:
        pool.close()
