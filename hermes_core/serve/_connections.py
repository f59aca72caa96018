"""What one connection to ``hermesos serve --transport http`` may hold, and for how long, whatever its client does.

uvicorn serves the connections with its h11 protocol; :func:`guarded_protocol`
is that protocol with a bound on all a client can make the server hold for it:

* **time to send a request**: *header_timeout* seconds for a request's head,
  from when the connection is made or its last response ended, then
  *body_timeout* seconds for its body;
* **time to take a response**: what the server writes and the kernel does not
  take at once waits in the connection's buffer, and uvicorn writes nothing
  more on that connection until the buffer is empty. A client that leaves
  bytes there for *write_timeout* seconds (a client that does not read, or
  reads too slowly to empty it) has its connection closed;
* **bytes waiting**: more than *max_buffer* bytes in that buffer (a response
  larger than that, which its client does not take at once) close the
  connection at once. Since uvicorn waits for the buffer to empty before it
  writes again, a buffer never holds more than one write beyond what the kernel
  holds;
* **connections**: at most *max_connections*. A new one beyond that closes the
  one whose client has kept it waiting longest (for a request's head, or to
  take a response); if every one is busy running a request, the new one is
  closed at once.

Such a connection is closed with a reset, not a goodbye: its buffer and the
kernel's are dropped at once (``SO_LINGER`` 0), and the request it ran, if any,
is cancelled. Each is an eviction: :class:`Evictions` counts them and logs each
as a warning naming the client and the reason. A connection left idle between
requests, having sent nothing of the next one, is closed quietly instead.

When the server stops, a connection still sending its request or not taking its
response is closed at once: waiting for it would hold the server for nothing.
The others finish their requests within uvicorn's graceful-shutdown time.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["Evictions", "Limits", "guarded_protocol"]

_log = logging.getLogger("hermes_core.serve")

#: The most eviction warnings written in a second: more are counted, and the next line says how many.
_LINES_PER_SECOND: Final = 20


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds of one connection (see the module docstring): seconds, bytes, and the connections served at once."""

    header_timeout: float
    body_timeout: float
    write_timeout: float
    max_buffer: int
    max_connections: int


class Evictions:
    """The connections closed because their clients held more than they may: counted, and logged as warnings.

    One line each, naming the client, the reason and the count so far, but at
    most :data:`_LINES_PER_SECOND` lines a second: a flood of connections would
    otherwise be a flood of lines, and writing them would hold the server. The
    next line written says how many were not shown, and :meth:`flush` writes one
    for the last of them when the server stops.
    """

    __slots__ = ("_lines", "_second", "_unshown", "total")

    def __init__(self) -> None:
        self.total = 0
        self._second = 0.0
        self._lines = 0
        self._unshown = 0

    def record(self, peer: str, reason: str) -> None:
        """Count the eviction of the connection of *peer* (``host:port``), and log it unless too many were."""
        self.total += 1
        now = time.monotonic()
        if now - self._second >= 1.0:
            self._second, self._lines = now, 0
        if self._lines >= _LINES_PER_SECOND:
            self._unshown += 1
            return
        self._lines += 1
        _log.warning("closed the connection of %s: %s (%s)", peer, reason, self._tally())

    def flush(self) -> None:
        """Log the evictions not shown yet, if any: the count is complete when the server stops."""
        if self._unshown:
            _log.warning("closed %d more connections, not shown one by one (%s)", self._unshown, self._tally())

    def _tally(self) -> str:
        unshown, self._unshown = self._unshown, 0
        tally = f"{self.total} connection{'s' * (self.total != 1)} closed so far"
        return f"{tally}, {unshown} of them not shown" if unshown else tally


def _peer(address: Any) -> str:
    """``host:port`` (``[host]:port`` for IPv6) of a peer's address as asyncio gives it."""
    if not isinstance(address, tuple | list) or len(address) < 2:
        return "a client of unknown address"
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in str(host) else f"{host}:{port}"


def _reset(transport: Any) -> None:
    """Close *transport* at once: its buffer dropped, and the kernel's too (a reset, not a goodbye)."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed by the peer: nothing left to drop
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def guarded_protocol(limits: Limits, evictions: Evictions) -> type[Any]:
    """Uvicorn's h11 protocol, holding each connection to *limits* and recording its evictions in *evictions*."""
    import h11  # noqa: PLC0415 - installed with uvicorn; only serving over HTTP needs it
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415

    live: set[Any] = set()
    # The connections waiting on their clients, each with when it began, the oldest first (dicts keep order):
    # for a request's head, and to take what waits in their buffer.
    heads: dict[Any, float] = {}
    stalled: dict[Any, float] = {}

    def longest_waiting() -> Any:
        first = [next(iter(waiting.items())) for waiting in (heads, stalled) if waiting]
        return min(first, key=lambda item: item[1])[0] if first else None

    class _Guarded(H11Protocol):
        _refused = False
        _evicted = False
        _deadline: Any = None  # the request's, for its head and then its body
        _write_deadline: Any = None  # its client's, to take what waits in the buffer
        _in_body = False
        _stopping = False

        def connection_made(self, transport: Any) -> None:
            if len(live) >= limits.max_connections:
                victim = longest_waiting()
                if victim is None:
                    self._refused = True
                    _reset(transport)  # its descriptor is free now
                    evictions.record(
                        _peer(transport.get_extra_info("peername")),
                        f"refused: {limits.max_connections} connections were open, each running a request "
                        "(HERMESOS_SERVE_MAX_CONNECTIONS)",
                    )
                    return
                victim._evict(
                    f"closed to make room for a new one: {limits.max_connections} connections were open "
                    "(HERMESOS_SERVE_MAX_CONNECTIONS), and its client had kept it waiting longest"
                )
            live.add(self)
            # Any byte the kernel does not take at once is a write waiting on the client: pause_writing is
            # called, the write timeout runs, and uvicorn writes nothing more until the buffer is empty.
            transport.set_write_buffer_limits(high=0)
            super().connection_made(transport)
            self._arm(limits.header_timeout, waits=True)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            live.discard(self)
            self._disarm()
            self._unstall()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            cycle = self.cycle
            if self._deadline is None or cycle is None or cycle.response_complete:
                return
            if not cycle.more_body:  # the whole request is in: it runs without a deadline of ours
                self._disarm()
            elif not self._in_body:  # the head is in: the body has its own time
                self._in_body = True
                self._arm(limits.body_timeout, waits=False)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._await_head()

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._evicted or self._write_deadline is not None:
                return
            if self._stopping:  # a response the client does not take at once will not be taken in time either
                self._evict(None)
                return
            waiting = self.transport.get_write_buffer_size()
            if waiting > limits.max_buffer:
                self._evict(
                    f"{waiting} bytes of its responses waited to be sent, more than the {limits.max_buffer} a "
                    "connection may hold (HERMESOS_SERVE_MAX_BUFFER)"
                )
                return
            self._write_deadline = self.loop.call_later(limits.write_timeout, self._untaken)
            stalled[self] = self.loop.time()

        def resume_writing(self) -> None:
            self._unstall()
            super().resume_writing()
            if self._deadline is None:
                self._await_head()

        def shutdown(self) -> None:
            # The server stops: a request still arriving has not been taken on, and a response its client is not
            # taking (now, or once its request has run) will not be taken in the graceful-shutdown time either.
            self._stopping = True
            if self in stalled or (self._deadline is not None and self._in_body):
                self._evict(None)
                return
            super().shutdown()

        def _await_head(self) -> None:
            """After a response, the next request's head has its time (uvicorn's idle timeout runs too).

            Not while the client is still taking the response: that time is the write timeout's.
            """
            cycle = self.cycle
            if self.transport.is_closing() or self in stalled:
                return
            if cycle is None or cycle.response_complete:
                self._arm(limits.header_timeout, waits=True)

        def _arm(self, seconds: float, *, waits: bool) -> None:
            self._disarm()
            self._in_body = not waits
            self._deadline = self.loop.call_later(seconds, self._expire)
            if waits:
                heads[self] = self.loop.time()

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None
            heads.pop(self, None)

        def _unstall(self) -> None:
            if self._write_deadline is not None:
                self._write_deadline.cancel()
                self._write_deadline = None
            stalled.pop(self, None)

        def _expire(self) -> None:
            """The request's deadline passed: its body, or its head, had not arrived."""
            if self._in_body:
                self._evict(
                    f"its request's body did not arrive within {limits.body_timeout:g} s of its head "
                    "(HERMESOS_SERVE_BODY_TIMEOUT)"
                )
            elif self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]:
                self._evict(None)  # idle, nothing of a request sent: closed as an idle keep-alive connection is
            else:
                self._evict(
                    f"its request's head did not arrive within {limits.header_timeout:g} s "
                    "(HERMESOS_SERVE_HEADER_TIMEOUT)"
                )

        def _untaken(self) -> None:
            self._write_deadline = None
            self._evict(
                f"its client left {self.transport.get_write_buffer_size()} bytes of a response untaken for "
                f"{limits.write_timeout:g} s (HERMESOS_SERVE_WRITE_TIMEOUT)"
            )

        def _evict(self, reason: str | None) -> None:
            """Close the connection at once (see :func:`_reset`); a *reason* is an eviction, recorded."""
            if self._evicted:
                return
            self._evicted = True
            self._disarm()
            self._unstall()
            _reset(self.transport)
            if reason is not None:
                evictions.record(_peer(self.client), reason)

    return _Guarded
