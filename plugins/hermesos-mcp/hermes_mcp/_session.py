"""One server's session, on the SDK: connecting, listing, calling; imported only when a server is started.

Importing the SDK costs about a second; a load whose listings all come from
the cache never pays it (:mod:`hermes_mcp._connect` imports this module when
a pool opens).

A call passes on what the server reports while it runs to the local call
that made it (:class:`~hermes_mcp._caller.Caller`): its progress
notifications, its log messages and its questions (:mod:`hermes_mcp._elicit`).
The session declares the elicitation capability, and asks for log messages
from ``debug`` up (on a connection of the current protocol a server sends none
unless asked); whoever listens to the local call chooses what to show.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final, final

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from hermes_core import InvalidDefinitionError, shorten
from hermes_core.config import read_token_file
from hermes_mcp._caller import Caller
from hermes_mcp._config import ServerConfig
from hermes_mcp._elicit import InFlight, answer
from hermes_mcp._failure import TEXT_MAX, Listing, ParamsRefused, ServerFailure, listed_size
from hermes_mcp._streams import Overflow, StderrTail, bounded_http_client, stdio_transport

__all__ = ["Connection", "call_tool", "connect", "list_tools"]

_KEPT = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
_MAX_PAGES: Final = 100
# What of a failed server's stderr a message quotes: its last lines, this many characters at most.
_STDERR_QUOTED: Final = 300
# A call answered with InputRequiredResult is sent again with the answers: this many times at most (the SDK's
# own default), each time with at most this many questions, put to the approver one after another.
_ROUNDS_MAX: Final = 10
_QUESTIONS_MAX: Final = 8
# A server that asks to be called again with nothing to answer is called again after a pause: 50 ms, doubling to 250.
_PAUSE_FIRST: Final = 0.05
_PAUSE_MAX: Final = 0.25
_RESULT: Final = TypeAdapter[types.CallToolResult | types.InputRequiredResult](
    types.CallToolResult | types.InputRequiredResult
)


def _leaf(error: BaseException) -> BaseException:
    """The first exception inside *error*'s exception groups (anyio's task groups wrap what they raise)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _token(server: ServerConfig) -> str | None:
    """The bearer token for *server*, from its variable or its file, read when it connects."""
    if server.token_env is not None:
        token = os.environ.get(server.token_env, "").strip()
        if not token:
            raise ServerFailure(server.name, f"has token_env = {server.token_env}, which is not set", retryable=False)
        return token
    if server.token_file is not None:
        path = Path(server.token_file).expanduser()
        try:  # bounded, and never a FIFO waited on or a device read for ever
            return read_token_file(path, f'its token_file "{path}"')
        except InvalidDefinitionError as error:
            raise ServerFailure(
                server.name, f'has a token_file "{path}" that {error.detail}', retryable=False
            ) from None
    return None


@contextlib.asynccontextmanager
async def connect(
    server: ServerConfig,
    stderr: StderrTail | None = None,
    refusals: list[int] | None = None,
    overflow: Overflow | None = None,
    in_flight: InFlight | None = None,
) -> AsyncIterator[Client]:
    """A connected SDK ``Client`` of *server*; stopped when left.

    Args:
        server: the server's entry.
        stderr: where a stdio server's stderr is kept (default: a new
            one of the entry's ``max_stderr_bytes``).
        refusals: where the HTTP statuses of 4xx and 5xx responses are
            appended (the SDK reports them as one JSON-RPC error, whatever they were).
        overflow: counts the messages cut off at the entry's
            ``max_result_bytes`` (default: a new one).
        in_flight: the calls in flight on the connection, which the
            server's log messages and questions go to; None: the client
            declares no elicitation and asks for no log messages.
    """
    overflow = Overflow(server.max_result_bytes) if overflow is None else overflow
    relay: dict[str, Any] = (
        {}
        if in_flight is None
        else {"logging_callback": in_flight.on_log, "elicitation_callback": in_flight.on_elicit, "log_level": "debug"}
    )
    if server.command is not None:
        env = server.environment()
        stderr = StderrTail(server.max_stderr_bytes) if stderr is None else stderr
        transport = stdio_transport(
            server.command, list(server.args), env, server.cwd, overflow=overflow, stderr=stderr
        )
        async with Client(transport, cache=None, **relay) as client:
            yield client
        return
    assert server.url is not None
    token = _token(server)
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def note(response: httpx2.Response) -> None:
        if response.status_code >= 400 and refusals is not None:
            refusals.append(response.status_code)

    hooks = {"response": [note]}
    async with (
        bounded_http_client(
            overflow, headers=headers, timeout=httpx2.Timeout(30.0, read=300.0), event_hooks=hooks
        ) as http,
        # The events of a stream are bounded by the client's responses (max_result_bytes), not the SDK's 1 MiB.
        Client(
            streamable_http_client(server.url, http_client=http, max_sse_event_size=None), cache=None, **relay
        ) as client,
    ):
        yield client


async def list_tools(client: Client, max_bytes: int | None = None) -> Listing:
    """Every tool the server lists, page after page, as JSON data (the keys a mounted tool needs).

    Each tool's data also holds ``serverVersion``, the server's own version
    (its ``serverInfo``), when it gave one: MCP tools have no version of their own.
    With *max_bytes* (the server's ``max_listing_bytes``), no page is asked for
    once the tools read take more (:func:`~hermes_mcp._failure.listed_size`):
    no tool past it would be mounted, and 100 pages of 16 MiB would be held.
    """
    tools: Listing = []
    cursor: str | None = None
    read = 0
    version = getattr(client.server_info, "version", None)
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        for tool in page.tools:
            data = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            kept = {key: data[key] for key in _KEPT if key in data}
            if isinstance(version, str) and version:
                kept["serverVersion"] = version
            tools.append(kept)
            read += listed_size(kept) if max_bytes is not None else 0
        cursor = page.next_cursor
        if cursor is None or (max_bytes is not None and read > max_bytes):
            break
    return tools


def _stderr_tail(stderr: StderrTail) -> str:
    """The last lines the server wrote on stderr, for a message ("" if none)."""
    lines = [line.strip() for line in stderr.text()[-4096:].splitlines() if line.strip()]
    return shorten(" | ".join(lines[-3:]), _STDERR_QUOTED) if lines else ""


def _too_large(server: ServerConfig) -> ServerFailure:
    """The failure of a message from *server* longer than its ``max_result_bytes``."""
    return ServerFailure(
        server.name,
        f"sent a message larger than {server.max_result_bytes} bytes, its max_result_bytes, which was not read"
        f"{'; the server was stopped and is started again at the next call' if server.command is not None else ''}"
        f" (raise max_result_bytes in its [servers.{server.name}] entry if such results are expected)",
        retryable=False,
    )


def _why(server: ServerConfig, error: BaseException, refusals: list[int]) -> str:
    """What to say about *error*, raised while *server* was started or listed (*refusals*: its HTTP error statuses)."""
    error = _leaf(error)
    if isinstance(error, ServerFailure):
        return str(error)
    if refusals:
        hint = " (check its token_env or token_file)" if refusals[-1] in {401, 403} else ""
        return f"could not be reached: HTTP {refusals[-1]} from {shorten(server.url or '', 100)}{hint}"
    if isinstance(error, FileNotFoundError) and server.cwd is not None and not os.path.isdir(server.cwd):
        return f'could not be started: its working directory "{shorten(server.cwd)}" does not exist (check cwd)'
    if isinstance(error, FileNotFoundError) and server.command is not None:
        return f'could not be started: there is no program "{shorten(server.command)}" (check command and PATH)'
    if isinstance(error, OSError):
        return f"could not be started: {error.strerror or type(error).__name__}"
    if isinstance(error, ValueError | OverflowError):  # a NUL in a variable, a port past 65535: say what
        return f"could not be started: {type(error).__name__}: {shorten(str(error), 200)}"
    if isinstance(error, httpx2.HTTPStatusError):
        return f"could not be reached: HTTP {error.response.status_code} from {shorten(server.url or '', 100)}"
    if isinstance(error, httpx2.HTTPError):
        return f"could not be reached at {shorten(server.url or '', 100)} ({type(error).__name__})"
    if isinstance(error, MCPError):
        if error.code == types.CONNECTION_CLOSED:
            return "closed the connection while starting (it exited, or is not an MCP server)"
        if error.code == types.PARSE_ERROR:  # its answer, read by _streams when the SDK could not read it
            return f"sent {shorten(error.message, 300)}"
        return f"answered the handshake with error {error.code}: {shorten(error.message, 200)}"
    return f"could not be started: {type(error).__name__}"


@final
class Connection:
    """One server's session, held by one task of the pool's loop; every method runs on that loop."""

    def __init__(self, server: ServerConfig, on_listed: Callable[[ServerConfig, Listing], None] | None) -> None:
        self.server = server
        self.on_listed = on_listed
        self.client: Client | None = None
        self.listing: Listing | None = None
        self.failure: ServerFailure | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr = StderrTail(server.max_stderr_bytes)
        self._overflow = Overflow(server.max_result_bytes)
        self._refusals: list[int] = []
        self._in_flight = InFlight(server.name)

    async def ensure(self) -> Client:
        """The connected client, starting the server first if it is not running.

        Raises:
            ServerFailure: it could not be started and listed in time.
        """
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.client is not None:
                return self.client
            await self._start()
            assert self.client is not None
            return self.client

    async def _start(self) -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._hold(ready, self._stop), name=f"hermesos-mcp {self.server.name}")
        try:
            await asyncio.shield(ready)
        except ServerFailure as failure:
            self.failure = failure
            await asyncio.shield(self._task)  # it has left the session: the process is gone
            raise

    async def _hold(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Enter the session, list the tools, then hold it until *stop* is set; leave it in the same task."""
        server = self.server
        self._stderr.clear()  # what an earlier process of the server wrote is not this one's
        self._refusals.clear()
        overflowed = self._overflow.count
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + server.startup_timeout) as scope:
                async with connect(server, self._stderr, self._refusals, self._overflow, self._in_flight) as client:
                    listing = await list_tools(client, server.max_listing_bytes)
                    scope.deadline = math.inf  # started: the session is held until it is stopped
                    self.client, self.listing, self.failure = client, listing, None
                    ready.set_result(None)
                    if self.on_listed is not None:
                        self.on_listed(server, listing)
                    await stop.wait()
            if scope.cancelled_caught and not ready.done():
                raise ServerFailure(
                    server.name, f"did not start and list its tools within {server.startup_timeout:g} seconds"
                )
        except Exception as error:
            if not ready.done():
                if self._overflow.count > overflowed:
                    ready.set_exception(_too_large(server))
                    return
                why = _why(server, error, self._refusals)
                tail = _stderr_tail(self._stderr)
                ready.set_exception(ServerFailure(server.name, f"{why}; its stderr: {tail}" if tail else why))
        finally:
            self.client = None
            if not ready.done():  # cancelled before it was ready
                ready.set_exception(ServerFailure(server.name, "was stopped while it started"))
            ready.exception()  # retrieved, so an unawaited failure is never logged as lost

    async def call(self, tool: str, arguments: dict[str, Any], caller: Caller | None = None) -> types.CallToolResult:
        """Call *tool* on the server, starting it if needed; what it reports meanwhile goes to *caller*.

        Raises:
            ParamsRefused: the server answered with a JSON-RPC "invalid
                params" error (-32602).
            ServerFailure: the server could not be started, the connection
                failed during the call (it is started again at the next call),
                or the server answered the request with another error.
        """
        client = await self.ensure()
        overflowed = self._overflow.count
        try:
            with self._in_flight.holding(caller):
                return await call_tool(client, tool, arguments, caller)
        except _Unanswered as error:
            raise ServerFailure(self.server.name, str(error), retryable=False) from None
        except MCPError as error:
            if self._overflow.count > overflowed:
                if self.server.command is not None:  # the session is closed: the next call starts the server again
                    await self.stop()
                raise _too_large(self.server) from None
            if error.code == types.INVALID_PARAMS:
                raise ParamsRefused(self.server.name, error.message) from None
            if error.code != types.CONNECTION_CLOSED:
                said = f"answered with error {error.code}: {shorten(error.message, TEXT_MAX)}"
                if error.code == types.PARSE_ERROR:  # see _why
                    said = f"sent {shorten(error.message, TEXT_MAX)}"
                raise ServerFailure(self.server.name, said, retryable=error.code == types.REQUEST_TIMEOUT) from None
            await self.stop()  # the process has ended: all it wrote on stderr is read
            tail = _stderr_tail(self._stderr)
            detail = "closed the connection during the call (it may have crashed); it is started again at the next call"
            raise ServerFailure(self.server.name, f"{detail}; its stderr: {tail}" if tail else detail) from None

    async def stop(self) -> None:
        """Leave the session (which stops a stdio server's process) and wait until it is left."""
        task, stop = self._task, self._stop
        self.client = None
        if task is None or stop is None:
            return
        stop.set()
        if self._ready is not None and not self._ready.done():
            task.cancel()  # still starting, and not watching *stop* yet: waiting would wait out the startup_timeout
        # Its outcome (a failure, or the cancellation above) is not this caller's; a cancellation of this
        # caller still ends the wait, leaving the task to finish on its own, as a shield would.
        await asyncio.wait({task})
        self._task = None

    def release(self) -> None:
        """Drop what was kept of the server's stderr (once the session is left for good)."""
        self._stderr.clear()


class _Unanswered(Exception):  # noqa: N818 - the server asked what no call may answer
    """A server asked for more input than a call answers, or for input hermesos does not give."""


async def call_tool(
    client: Client, tool: str, arguments: dict[str, Any], caller: Caller | None = None
) -> types.CallToolResult:
    """``tools/call`` on *client*'s session, its result unchecked against the output schema (the runtime checks it).

    The server's progress notifications go to *caller*, and so do its
    questions when it answers with ``InputRequiredResult`` (the current
    protocol's way to ask): they are answered (:func:`hermes_mcp._elicit.answer`)
    and the call is sent again with the answers, at most ten times.
    Without a *caller*, every question is declined.

    On a 2026 connection, a ``HEADER_MISMATCH`` (the session had not listed
    the tool, or its schema changed) is answered as the SDK's ``Client`` does:
    list again, and send once more.

    Raises:
        MCPError: the server answered with an error, or the connection failed.
        _Unanswered: the server still asked for input after ten rounds of
            answers, asked more than eight questions at once, or asked for
            something other than a question.
    """
    progress = None if caller is None else caller.progress
    responses: types.InputResponses | None = None
    state: str | None = None
    pause = _PAUSE_FIRST
    for rounds in range(_ROUNDS_MAX + 1):
        params = types.CallToolRequestParams(
            name=tool, arguments=arguments, input_responses=responses, request_state=state
        )
        request = types.CallToolRequest(params=params)
        try:
            result = await client.session.send_request(request, _RESULT, progress_callback=progress)
        except MCPError as error:
            if error.code != types.HEADER_MISMATCH:
                raise
            await list_tools(client)
            result = await client.session.send_request(request, _RESULT, progress_callback=progress)
        if isinstance(result, types.CallToolResult):
            return result
        if rounds == _ROUNDS_MAX:  # not answered: nobody is asked for an answer that would not be sent
            break
        state = result.request_state
        if result.input_requests:
            responses, pause = await _answers(result.input_requests, caller), _PAUSE_FIRST
        else:  # called again with nothing to answer: after a pause, longer each time
            await asyncio.sleep(pause)
            responses, pause = None, min(pause * 2, _PAUSE_MAX)
    raise _Unanswered(
        f"still asked for more input (InputRequiredResult) after {_ROUNDS_MAX} rounds of answers, more than a call "
        f"answers; the call was given up"
    )


async def _answers(requests: types.InputRequests, caller: Caller | None) -> types.InputResponses:
    """The answers to a server's questions, one after another (a person answers one at a time)."""
    if len(requests) > _QUESTIONS_MAX:
        raise _Unanswered(f"asked {len(requests)} questions at once, more than the {_QUESTIONS_MAX} a call answers")
    responses: types.InputResponses = {}
    for key, request in requests.items():
        if not isinstance(request, types.ElicitRequest):
            raise _Unanswered(
                f"asked for {request.method}, which hermesos does not give MCP servers (it answers questions, "
                f"elicitation/create, only)"
            )
        responses[key] = (
            types.ElicitResult(action="decline") if caller is None else await answer(caller, request.params)
        )
    return responses
