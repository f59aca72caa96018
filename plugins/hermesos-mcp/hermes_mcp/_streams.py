"""Bounded transports: what a server sends is read within its entry's byte limits, and no stdio server outlives us.

The SDK's own stdio transport buffers a line of any length from the server
and sends its stderr wherever it is told (here it was a temporary file of any
size); its HTTP transport reads a JSON response whole. A server is input from
elsewhere, so:

* :func:`stdio_transport` starts the server, reads its stdout one
  newline-delimited message at a time and stops reading (closing the
  session) at the first message longer than ``max_result_bytes``; it keeps
  only the last ``max_stderr_bytes`` of its stderr (:class:`StderrTail`). On
  Linux the server is started by a small launcher that asks the kernel to
  kill it when the thread that started it ends (``PR_SET_PDEATHSIG``), so not
  even a SIGKILL of hermesos leaves it running; on every POSIX system it runs
  in a process group of its own, which is stopped (SIGTERM, then SIGKILL)
  when the session is left.
* :func:`bounded_http_client` is an ``httpx2.AsyncClient`` whose responses
  stop at ``max_result_bytes``: a JSON response in all, one server-sent event
  of a stream.

Either way the :class:`Overflow` of the connection counts what was cut off,
so the caller can say which limit a failed call ran into.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final, final

import anyio
import anyio.abc
import httpx2
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

__all__ = ["Overflow", "StderrTail", "bounded_http_client", "launch_command", "stdio_transport"]

# Seconds a server has to exit once its stdin is closed, then after SIGTERM (the SDK's own figures).
_EXIT_GRACE: Final = 2.0
_KILL_GRACE: Final = 2.0
_READ_CHUNK: Final = 65536
# How a pipe ends: the other side closed it, or we did.
_ENDED: Final = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)

# The launcher: sets PR_SET_PDEATHSIG (1) to SIGKILL, checks its parent is still the process that
# started it (else it died before the setting took), then becomes the server (execvp keeps the setting).
_LAUNCHER: Final = (
    "import ctypes,os,sys\n"
    "if ctypes.CDLL(None,use_errno=True).prctl(1,9,0,0,0)!=0 or os.getppid()!=int(sys.argv[1]):os._exit(70)\n"
    "os.execv(sys.argv[2],sys.argv[3:])\n"
)


@final
class Overflow:
    """How many messages of one connection were cut off at its limit (read by the session to name the cause)."""

    __slots__ = ("count", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0


@final
class StderrTail:
    """The last *limit* bytes a server wrote on stderr; older bytes are dropped as new ones arrive."""

    __slots__ = ("_data", "dropped", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data = bytearray()
        self.dropped = 0

    def write(self, chunk: bytes) -> None:
        """Keep *chunk*, dropping the oldest bytes past the limit."""
        self._data += chunk
        excess = len(self._data) - self.limit
        if excess > 0:
            del self._data[:excess]
            self.dropped += excess

    def clear(self) -> None:
        """Forget everything (a new process of the server is starting)."""
        self._data.clear()
        self.dropped = 0

    def text(self) -> str:
        """What is kept, as text."""
        return self._data.decode("utf-8", errors="replace")


def launch_command(command: str, args: list[str], env: Mapping[str, str], cwd: str | None) -> list[str]:
    """The argv that starts *command*: through the PR_SET_PDEATHSIG launcher on Linux, as it is elsewhere.

    Raises:
        FileNotFoundError: *command* is not found (on ``PATH`` of *env*, or at its path).
    """
    if os.sep in command or (os.altsep is not None and os.altsep in command):
        path = command if cwd is None or os.path.isabs(command) else os.path.join(cwd, command)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", command)
    else:
        found = shutil.which(command, path=env.get("PATH", os.defpath))
        if found is None:
            raise FileNotFoundError(2, "No such file or directory", command)
        path = found
    if not sys.platform.startswith("linux"):
        return [path, *args]
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), path, command, *args]


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    env: dict[str, str],
    cwd: str | None,
    *,
    overflow: Overflow,
    stderr: StderrTail,
) -> AsyncIterator[TransportStreams]:
    """Start the server and exchange newline-delimited JSON-RPC with it, each message at most ``overflow.limit`` bytes.

    A longer message ends the session (the server is stopped; ``overflow.count``
    says why); its stderr goes to *stderr*, bounded.

    Raises:
        FileNotFoundError: the program is not found.
        OSError: it cannot be started.
    """
    argv = launch_command(command, args, env, cwd)
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,  # its own process group: stopped as a whole
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    cut_off = False  # the server was cut off mid-message: it is stopped at once, it has nothing more to say
    stderr_read = anyio.Event()

    async def read_stdout() -> None:
        nonlocal cut_off
        assert process.stdout is not None
        async with read_writer:
            cut_off = await _read_messages(process.stdout, read_writer, overflow)

    async def read_stderr() -> None:
        assert process.stderr is not None
        try:
            with contextlib.suppress(*_ENDED):
                while True:
                    stderr.write(await process.stderr.receive(_READ_CHUNK))
        finally:
            stderr_read.set()

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end, not a request hanging

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(read_stderr)
        group.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, stderr_read, grace=0.0 if cut_off else _EXIT_GRACE)
                for stream in (read_stream, write_stream):
                    await stream.aclose()
            group.cancel_scope.cancel()


async def _read_messages(
    stdout: anyio.abc.ByteReceiveStream,
    messages: anyio.abc.ObjectSendStream[SessionMessage | Exception],
    overflow: Overflow,
) -> bool:
    """Send each line of *stdout* to *messages*, parsed, until it ends; whether it stopped at a line over the limit."""
    buffer = bytearray()
    with contextlib.suppress(*_ENDED):
        while True:
            chunk = await stdout.receive(_READ_CHUNK)
            start = 0
            while (end := chunk.find(b"\n", start)) != -1:
                buffer += chunk[start:end]
                start = end + 1
                if len(buffer) > overflow.limit:
                    break
                line = bytes(buffer)
                buffer.clear()
                if line.strip():
                    await messages.send(_parse(line))
            else:
                buffer += chunk[start:]
            if len(buffer) > overflow.limit:  # not one byte more is kept: the message is not read
                overflow.count += 1
                return True
    return False


# A line longer than this is read by Python's json first (see _parse).
_READ_BY_JSON: Final = 256 * 1024
# What the SDK's reader refuses, found again in what Python's json read: nesting past its 200 levels.
_SDK_DEPTH_MAX: Final = 200


def _parse(line: bytes) -> SessionMessage | Exception:
    """The message *line* holds, as the SDK reads it; what it cannot read, as the error the SDK raises.

    The SDK reads JSON through pydantic, which builds a tree of its own first:
    a listing of 4 MB took 270 MB (a server may send 16 MiB). A long line is
    read by Python's ``json`` (about a quarter of that), checked for what the
    SDK's reader refuses (nesting past 200 levels, a lone surrogate, NaN), and
    then validated as Python data; when anything is amiss, the SDK's reader
    reads it after all, so what it refuses, and its words, stay its own.
    """
    try:
        if len(line) > _READ_BY_JSON:
            data = _read_as_the_sdk_would(line)
            if data is not None:
                return SessionMessage(types.jsonrpc_message_adapter.validate_python(data, by_name=False))
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return _unread_answer(line, error) or error


def _read_as_the_sdk_would(line: bytes) -> Any:
    """*line* read by Python's ``json``, or None when the SDK's reader might read it otherwise (or refuse it)."""
    import json  # noqa: PLC0415 - a long message only

    try:
        data = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # what json refuses: the SDK's reader says why, in its words
        return None
    level: list[Any] = [data]
    for _ in range(_SDK_DEPTH_MAX + 1):
        deeper: list[Any] = []
        for item in level:
            if type(item) is dict:
                deeper.extend(item.values())
                if not all(key.isascii() or _encodes(key) for key in item):
                    return None
            elif type(item) is list:
                deeper.extend(item)
            elif type(item) is str and not item.isascii() and not _encodes(item):
                return None
        if not deeper:
            return data
        level = deeper
    return None  # nested past the SDK reader's limit


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _encodes(text: str) -> bool:
    """Whether *text* is valid Unicode (no lone surrogate), as the SDK's reader requires."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _unread_answer(line: bytes, error: ValueError) -> SessionMessage | None:
    """The server's answer the SDK cannot read, as an error answer to the same request; None if it is not one.

    The SDK drops a message it cannot read, and the request it answered waited
    for its time limit (a listing nested past the reader's 200 levels: the
    whole startup_timeout, then "did not start"): the request ends now, saying why.
    """
    from hermes_core.serve import unreadable_answer  # noqa: PLC0415 - a message the SDK could not read only

    found = unreadable_answer(line, error)
    if found is None:
        return None
    ident, why = found
    said = f"an answer that could not be read ({why})"
    return SessionMessage(
        types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=types.PARSE_ERROR, message=said))
    )


async def _stop(process: anyio.abc.Process, stderr_read: anyio.Event, *, grace: float) -> None:
    """Close its stdin, give it a moment to exit, then stop its whole process group (SIGTERM, then SIGKILL).

    What it wrote on stderr before it ended is read first (a moment at most), for the messages that quote it.
    """
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(grace):
        while process.returncode is None:
            await anyio.sleep(0.01)
    if sys.platform != "win32":
        # The group's leader is the server; what it started is stopped with it, even after it exited.
        await terminate_posix_process_tree(process, _KILL_GRACE)
    elif process.returncode is None:  # pragma: no cover - not reached on POSIX
        process.kill()
    with anyio.move_on_after(_KILL_GRACE), contextlib.suppress(Exception):
        await process.wait()
    with anyio.move_on_after(0.5):
        await stderr_read.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
    # asyncio's transport of the process is closed now, not when it is collected (after its loop is closed, which
    # would print a traceback); nothing public reaches it, hence the attributes (as the SDK's own transport does).
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        with contextlib.suppress(PermissionError):
            close()


# -- HTTP ------------------------------------------------------------------------------------------


class _TooLarge(httpx2.StreamError):
    """A response went past the connection's limit."""


@final
class _BoundedStream(httpx2.AsyncByteStream):
    """A response body that stops at *limit* bytes: all of it (JSON), or one server-sent event (a stream)."""

    def __init__(self, stream: httpx2.AsyncByteStream, overflow: Overflow, *, events: bool) -> None:
        self._stream = stream
        self._overflow = overflow
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        tail = b""
        async for chunk in self._stream:
            if self._events:
                seen = tail + chunk
                boundary = max(seen.rfind(b"\n\n"), seen.rfind(b"\n\r\n"))
                size = len(seen) - boundary - 1 if boundary != -1 else size + len(chunk)
                tail = seen[-2:]
            else:
                size += len(chunk)
            if size > self._overflow.limit:
                self._overflow.count += 1
                raise _TooLarge(f"the response passed the limit of {self._overflow.limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


@final
class _BoundedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, overflow: Overflow) -> None:
        self._inner = httpx2.AsyncHTTPTransport()
        self._overflow = overflow

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        events = response.headers.get("content-type", "").lower().startswith("text/event-stream")
        response.stream = _BoundedStream(response.stream, self._overflow, events=events)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def bounded_http_client(overflow: Overflow, **options: Any) -> httpx2.AsyncClient:
    """An ``httpx2.AsyncClient`` (*options* as its own) whose response bodies stop at ``overflow.limit`` bytes."""
    return httpx2.AsyncClient(transport=_BoundedTransport(overflow), **options)
