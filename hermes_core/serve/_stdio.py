"""Serving over stdio: every line read before the MCP SDK reads it, bounded and answered; and :func:`serve_stdio`.

The SDK's stdio transport reads a line, parses it as a JSON-RPC message and
hands the session the message, or, if it cannot, an exception that the
session drops (logged at debug level): the client waits for an answer that
never comes. :class:`Lines` stands between stdin and the SDK's reader and
sees that every line a client writes is one of:

* a message the SDK reads, passed on;
* a line past the size limit: skipped without being held, and answered
  with ``-32600`` (``id`` null: its id was never read);
* text that is not JSON: answered with ``-32700`` (parse error), ``id`` null;
* JSON that is not a message the SDK reads (a batch, a float or boolean id,
  ``params`` that are not an object, a lone surrogate, a number or nesting
  past what the SDK's reader takes): answered with ``-32600`` (or ``-32700``
  where only the SDK's reader failed), under the request's id when it has one
  a client can match;
* a client's answer to one of the server's own requests (an elicitation, a
  ping) that the SDK cannot read: passed on as an error answer for that id,
  so the call waiting for it goes on (a question without an answer is
  declined) instead of waiting for ever.

It also bounds the requests in flight: a client may have at most
:data:`IN_FLIGHT_MAX` requests unanswered; one more is answered at once with
``-32000``, saying so. Answers go out in the order they are ready; while the
client does not read them, the server stops reading too (each answer waits
to be written), so a client that writes without reading cannot make the
server hold more than that many calls. When stdin ends, requests already
read get :data:`DRAIN_SECONDS` to be answered before the server stops.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, Final, TypeGuard

from hermes_core._door._door import ARGUMENTS_MAX
from hermes_core.serve._server import mcp_server

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import WriteStream
    from mcp.shared.message import SessionMessage

    from hermes_core._runtime._runtime import Runtime

__all__ = ["DRAIN_SECONDS", "IN_FLIGHT_MAX", "Lines", "Replies", "serve_stdio", "stdin_lines", "unreadable_answer"]

#: How many of a client's requests may be unanswered at once over stdio; one more is refused at once.
IN_FLIGHT_MAX: Final = 256

#: How long requests already read may still take to be answered once stdin has ended.
DRAIN_SECONDS: Final = 2.0

# JSON-RPC's error codes (the SDK's names for them are in mcp_types).
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_SERVER_BUSY = -32000

_REASON_MAX = 300


class Lines:
    """The lines of a binary stdin, each at most *limit* bytes, read in a worker thread one at a time.

    Iterated by the SDK's stdio reader; see the module for what it passes on
    and what it answers itself, on :attr:`replies` (set once the transport is open).
    """

    __slots__ = ("_file", "_limit", "replies")

    def __init__(self, file: BinaryIO, limit: int) -> None:
        self._file = file
        self._limit = limit
        self.replies: Replies | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _read(self, size: int) -> bytes:
        import anyio.to_thread  # noqa: PLC0415 - hermes_core.serve imports nothing of the SDK at import

        return await anyio.to_thread.run_sync(self._file.readline, size, abandon_on_cancel=True)

    async def _lines(self) -> AsyncIterator[str]:
        while line := await self._read(self._limit + 1):
            if len(line) <= self._limit or (line.endswith(b"\n") and len(line) == self._limit + 1):
                text = line.decode("utf-8", errors="replace")
                passed = await self._checked(text)
                if passed is not None:
                    yield passed
                continue
            while line and not line.endswith(b"\n"):  # the rest of it, never held
                line = await self._read(65536)
            await self._answer(
                None,
                _INVALID_REQUEST,
                f"the message is larger than {self._limit} bytes, the most this server reads in one message; it "
                "was not read: send smaller arguments",
            )
        if self.replies is not None:
            await self.replies.drained(DRAIN_SECONDS)

    async def _checked(self, text: str) -> str | None:
        """*text* if the SDK reads it as a message (a request counted in flight); else answered, and None."""
        import mcp_types as types  # noqa: PLC0415 - see _read
        import pydantic  # noqa: PLC0415

        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except pydantic.ValidationError as error:
            return await self._unread(text, error)
        replies = self.replies
        if replies is None:
            return text
        if isinstance(message, types.JSONRPCRequest):
            if not replies.admit(message.id):
                await self._answer(
                    message.id,
                    _SERVER_BUSY,
                    f"this server is already answering {IN_FLIGHT_MAX} requests of this client, the most it "
                    "takes at once; wait for some of their answers, then send it again",
                )
                return None
        elif isinstance(message, types.JSONRPCNotification):
            if '"id"' in text and _has_id(text):  # a request whose id is not one (1.5, true): read as a notification
                await self._answer(None, _INVALID_REQUEST, "a request's id must be a string or an integer")
                return None
            if message.method == "notifications/cancelled":
                params = message.params or {}
                replies.forget(params.get("requestId"))  # a cancelled request is never answered
        return text

    async def _unread(self, text: str, error: Exception) -> str | None:
        """A line the SDK cannot read as a message: answered, or passed on as an error answer (see the module)."""
        try:
            data = json.loads(text, parse_int=_integer, parse_constant=_constant)
        except (ValueError, RecursionError) as unreadable:
            if isinstance(unreadable, json.JSONDecodeError):
                why = unreadable.msg
            else:
                why = "it nests too deeply" if isinstance(unreadable, RecursionError) else str(unreadable)
            await self._answer(None, _PARSE_ERROR, f"the message is not JSON ({why}); send one JSON-RPC message a line")
            return None
        if isinstance(data, list):
            await self._answer(
                None,
                _INVALID_REQUEST,
                "a batch (an array of messages) is not read by this server; send each message on a line of its own",
            )
            return None
        if not isinstance(data, dict):
            await self._answer(None, _INVALID_REQUEST, "a JSON-RPC message is a JSON object; send one a line")
            return None
        ident = data.get("id")
        matched = _matched(ident)
        why = _reason(error)
        if _is_answer(data):
            if matched:  # the client's answer to the server's own request: its error, so the request ends
                reply = {"code": _INVALID_REQUEST, "message": f"the client's answer could not be read: {why}"}
                return json.dumps({"jsonrpc": "2.0", "id": ident, "error": reply})
            return None  # an answer to no request the server can name: as the SDK does with any stray answer
        if "id" not in data:
            return None  # a notification is never answered, even to say it could not be read
        code = _INVALID_REQUEST
        if "Invalid JSON" in why:  # read by json, not by the SDK's reader: say why in our words where we can
            code, why = _PARSE_ERROR, _unreadable_json(data) or why
        await self._answer(ident if matched else None, code, f"the message could not be read: {why}")
        return None

    async def _answer(self, ident: Any, code: int, message: str) -> None:
        if self.replies is not None:
            await self.replies.refuse(ident, code, message)


def unreadable_answer(line: str | bytes, error: Exception) -> tuple[str | int, str] | None:
    """An answer the MCP SDK's reader refused: the id of the request it answers, and why; None if it is not one.

    The SDK drops a message it cannot read (a result nested past its reader's
    200 levels, a lone surrogate, a result of the wrong type), and the request
    it answered waits for ever or for its time limit. Read with ``json``
    instead, an answer (``result`` or ``error``, no ``method``) whose id can be
    matched is one the caller can end now, with an error saying *why*. Both
    ends use it: ``hermesos serve`` for its client's answers, hermesos-mcp for
    a mounted server's.

    Args:
        line: the message as read.
        error: what the SDK's reader raised for it (its first problem is said).
    """
    try:
        data = json.loads(line, parse_int=_integer, parse_constant=_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not _is_answer(data):
        return None
    ident = data.get("id")
    return (ident, _reason(error)) if _matched(ident) else None


def _is_answer(data: dict[str, Any]) -> bool:
    return "method" not in data and ("result" in data or "error" in data)


def _matched(ident: Any) -> TypeGuard[str | int]:
    """Whether *ident* can be the id of a request a JSON-RPC peer made (a string, or an integer JSON keeps exact)."""
    return type(ident) is str or (type(ident) is int and -(2**53) < ident < 2**53)


def _has_id(text: str) -> bool:
    try:
        data = json.loads(text, parse_int=_integer, parse_constant=_constant)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and "id" in data


def _unreadable_json(data: Any) -> str | None:
    """What in JSON that Python read the SDK's reader refuses, in words, if it is a lone surrogate."""
    try:
        json.dumps(data, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return "a string holds a lone surrogate (such as \\ud800), which UTF-8 text cannot carry; send valid Unicode"
    except (ValueError, RecursionError):
        return None
    return None


def _integer(text: str) -> int:
    """An integer of a line read only to find its id: a long one is 0 (never a matched id)."""
    return int(text) if len(text) <= 64 else 0


def _constant(text: str) -> float:
    raise ValueError(f"{text} is not a JSON value (JSON numbers are finite)")


def _reason(error: Exception) -> str:
    """The first thing pydantic found wrong with a message, in a line: where, and what."""
    errors = getattr(error, "errors", None)
    try:
        first = errors(include_url=False, include_input=False)[0] if errors is not None else None
    except Exception:
        first = None
    if first is None:
        return str(error).splitlines()[0][:_REASON_MAX]
    where = ".".join(str(part) for part in first.get("loc", ()) if not str(part).startswith(("JSONRPC", "function")))
    said = f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
    return said[:_REASON_MAX]


class Replies:
    """The write stream of a stdio session, counting the client's requests until each is answered.

    The SDK's session writes every answer through :meth:`send`; the requests
    :class:`Lines` admitted are counted until then (see :data:`IN_FLIGHT_MAX`).
    """

    __slots__ = ("_changed", "_count", "_stream", "_waiting")

    def __init__(self, stream: WriteStream[SessionMessage]) -> None:
        import anyio  # noqa: PLC0415 - see Lines._read

        self._stream = stream
        # How many requests of each id are unanswered (a client may reuse an id), and of all ids.
        self._waiting: dict[Any, int] = {}
        self._count = 0
        self._changed = anyio.Event()

    def admit(self, ident: Any) -> bool:
        if self._count >= IN_FLIGHT_MAX:
            return False
        self._waiting[ident] = self._waiting.get(ident, 0) + 1
        self._count += 1
        return True

    def forget(self, ident: Any) -> None:
        try:
            left = self._waiting.pop(ident, 0) - 1
        except TypeError:  # an id that is not hashable was never admitted
            return
        if left >= 0:
            self._count -= 1
            if left:
                self._waiting[ident] = left
        self._signal()

    async def send(self, item: SessionMessage) -> None:
        import mcp_types as types  # noqa: PLC0415 - see Lines._read

        await self._stream.send(item)
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.forget(message.id)

    async def refuse(self, ident: Any, code: int, message: str) -> None:
        """Answer the request *ident* (None: a message whose id was not read) with a JSON-RPC error."""
        import mcp_types as types  # noqa: PLC0415 - see Lines._read
        from mcp.shared.message import SessionMessage  # noqa: PLC0415

        error = types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))
        await self._stream.send(SessionMessage(error))

    async def drained(self, seconds: float) -> None:
        """Return once every admitted request is answered, or after *seconds*."""
        import anyio  # noqa: PLC0415 - see Lines._read

        with anyio.move_on_after(seconds):
            while self._count:
                await self._changed.wait()

    def _signal(self) -> None:
        import anyio  # noqa: PLC0415 - see Lines._read

        self._changed.set()
        self._changed = anyio.Event()

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> Replies:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stream.__aexit__(*exc_info)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:  # the stream's other methods, as the SDK may use them
        return getattr(self._stream, name)


@contextlib.contextmanager
def stdin_lines(limit: int) -> Iterator[Lines]:
    """The lines of stdin, bounded; while they are read, fd 0 is the null device (a tool reading it gets nothing)."""
    if sys.platform == "win32" or not _is_fd(sys.stdin, 0):
        yield Lines(sys.stdin.buffer, limit)
        return
    import fcntl  # noqa: PLC0415 - POSIX only

    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        # Never closed: a worker thread may still be blocked reading it after the transport is left.
        yield Lines(os.fdopen(private, "rb", closefd=False), limit)
    finally:
        os.dup2(private, 0)


def _is_fd(stream: Any, fd: int) -> bool:
    try:
        return bool(stream.buffer.fileno() == fd)
    except (AttributeError, OSError, ValueError):
        return False


async def serve_stdio(
    runtime: Runtime, *, name: str = "hermesos", timeout: float | None = None, max_message_bytes: int = ARGUMENTS_MAX
) -> None:
    """Serve the runtime's tools over stdin and stdout until stdin ends (or the client stops reading stdout).

    While it serves, what the tools print goes to stderr, never onto the wire
    (the SDK's ``stdio_server`` sees to it), and a tool reading stdin reads
    nothing. One message (one line) is at most *max_message_bytes*, as an
    HTTP request's body is: a longer one is skipped without being held in
    memory and answered with a JSON-RPC error (``-32600``, ``id`` null), and
    the session goes on. The runtime is open while it serves (``async with
    runtime``; one opened already stays as it is). Other arguments as
    :func:`mcp_server`'s.
    """
    from mcp.server.stdio import stdio_server  # noqa: PLC0415 - see the module docstring

    server = mcp_server(runtime, name=name, timeout=timeout)
    async with runtime:
        try:
            with stdin_lines(max_message_bytes) as lines:
                async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
                    lines.replies = replies = Replies(write)
                    await server.run(read, replies, server.create_initialization_options())
        except* (BrokenPipeError, ConnectionResetError):
            pass  # the client closed its end of stdout: there is nobody left to serve
