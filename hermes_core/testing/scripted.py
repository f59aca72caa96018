"""A scripted model on localhost: OpenAI's and Anthropic's HTTP APIs answered from a script, for tests and demos.

:class:`ScriptedModel` is a small HTTP server bound to ``127.0.0.1`` on a free
port. It speaks just enough of three APIs for the official SDK clients to use
it as they would the real service, with no network, no key and no model:

* OpenAI Chat Completions, ``POST /v1/chat/completions``;
* OpenAI Responses, ``POST /v1/responses``;
* Anthropic Messages, ``POST /v1/messages``.

It is given a script: the model's replies, in order. A reply is a final text,
one tool call (:class:`ScriptedCall`), several calls in one turn (a list of
them), or text and calls together (:class:`ScriptedTurn`). Each request is
answered with the next reply, written as that API writes it (ids, usage,
``finish_reason: "tool_calls"``, ``stop_reason: "tool_use"``...), and every
request is recorded (:attr:`ScriptedModel.requests`), so a test can assert
what the SDK sent after a tool call: the tool results::

    script = [ScriptedCall("math_eval", {"expression": "2 + 3"}), "2 + 3 is 5."]
    with ScriptedModel(script) as model:
        client = openai.OpenAI(base_url=model.base_url + "/v1", api_key="test")
        ...
    model.requests[1].body["messages"][-1]  # {"role": "tool", "tool_call_id": "call_1", "content": "5"}

As the real APIs do, it refuses (HTTP 400, in the API's own error format, which
the SDK raises as ``BadRequestError``) a request that leaves a tool call of the
conversation without its result, or answers a call that was never made. It
also refuses ``stream=True``, a request once the script has no reply left, and
a body larger than ``max_request_bytes``. It never asks the client to retry.

The server is here; the script's values (``_scripted_script``), what each API
checks and writes (``_scripted_apis``) and the little of HTTP/1.1 it reads and
writes (``_scripted_http``) are private modules behind it. They speak HTTP and
JSON with the standard library; none imports either SDK.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from types import MappingProxyType, TracebackType
from typing import IO, Any, Final, final

from hermes_core.testing._scripted_apis import (
    anthropic_inputs,
    chat_problem,
    chat_reply,
    error_body,
    messages_problem,
    messages_reply,
    responses_problem,
    responses_reply,
)
from hermes_core.testing._scripted_http import (
    LINE_MAX,
    Refused,
    parse_json,
    read_body,
    read_headers,
    read_request_line,
    send,
)
from hermes_core.testing._scripted_script import (
    Api,
    RecordedRequest,
    ScriptedCall,
    ScriptedTurn,
    ScriptEntry,
    as_turn,
)

__all__ = ["Api", "RecordedRequest", "ScriptEntry", "ScriptedCall", "ScriptedModel", "ScriptedTurn"]

_PATHS: Final[Mapping[str, Api]] = MappingProxyType(
    {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "messages"}
)
_DEFAULT_MAX_REQUEST = 8 * 1024 * 1024


# -- the server ---------------------------------------------------------------------------------------


@final
class ScriptedModel:
    """A scripted model server on ``127.0.0.1``, for the real OpenAI and Anthropic SDK clients.

    Use it as a context manager (or call :meth:`start` and :meth:`close`)::

        with ScriptedModel([ScriptedCall("fs_read", {"path": "a.txt"}), "It says hello."]) as model:
            client = anthropic.Anthropic(base_url=model.base_url, api_key="test")
            ...

    Give OpenAI's clients ``base_url=model.base_url + "/v1"`` and Anthropic's
    ``base_url=model.base_url``. Requests are answered one at a time, each with
    the next reply of the script, whichever of the three APIs asks.

    Args:
        script: the model's replies, in order, each a final text, a
            :class:`ScriptedCall`, a list of calls (one turn), or a
            :class:`ScriptedTurn`.
        max_request_bytes: the largest request body read; a larger one is
            refused (HTTP 413) without being read.

    Raises:
        TypeError: an entry of *script* is none of those.
        ValueError: *max_request_bytes* is not a positive integer.
    """

    __slots__ = (
        "_accepting",
        "_calls",
        "_closing",
        "_connections",
        "_issued",
        "_listener",
        "_lock",
        "_max_request",
        "_port",
        "_records",
        "_script",
        "_sent",
        "_workers",
    )

    def __init__(self, script: Iterable[ScriptEntry], *, max_request_bytes: int = _DEFAULT_MAX_REQUEST) -> None:
        if isinstance(max_request_bytes, bool) or not isinstance(max_request_bytes, int) or max_request_bytes < 1:
            raise ValueError(
                f"ScriptedModel(): max_request_bytes must be a positive integer, got {max_request_bytes!r}"
            )
        self._script: deque[ScriptedTurn] = deque(as_turn(entry, index) for index, entry in enumerate(script))
        self._max_request = max_request_bytes
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._sent = 0  # replies sent
        self._calls = 0  # tool calls sent, numbering the default ids
        self._issued: dict[str, tuple[str, ...]] = {}  # a Responses id -> its calls' ids (previous_response_id)
        self._listener: socket.socket | None = None
        self._port: int | None = None
        self._accepting: threading.Thread | None = None
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._workers: list[threading.Thread] = []
        self._closing = False

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Bind a free port of ``127.0.0.1`` and start answering; return the model.

        Raises:
            RuntimeError: the model was started before.
        """
        if self._listener is not None or self._closing:
            raise RuntimeError("ScriptedModel.start(): a scripted model is started once; make a new one")
        listener = socket.create_server(("127.0.0.1", 0))
        self._listener = listener
        self._port = listener.getsockname()[1]
        self._accepting = threading.Thread(target=self._accept, name="ScriptedModel accept", daemon=True)
        self._accepting.start()
        return self

    def close(self) -> None:
        """Stop answering: close the port and every open connection, and wait for the server's threads.

        Closing twice, or a model never started, does nothing.
        """
        listener, accepting = self._listener, self._accepting
        if listener is None or accepting is None or self._closing:
            return
        with self._lock:
            self._closing = True
        # accept() is not woken by closing its socket on every platform: a connection wakes it.
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self._port or 0), timeout=5):
            pass
        accepting.join(timeout=5)
        listener.close()
        with self._lock:
            open_connections = list(self._connections)
            workers = list(self._workers)
        for connection in open_connections:
            with contextlib.suppress(OSError):  # the client may have closed it already
                connection.shutdown(socket.SHUT_RDWR)
        for worker in workers:
            worker.join(timeout=5)

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "not started"
        with self._lock:
            sent, left = self._sent, len(self._script)
        return f"<ScriptedModel {where}, {sent} of {sent + left} replies sent>"

    # -- what a test reads -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's ``base_url``; OpenAI's is this and ``/v1``.

        Raises:
            RuntimeError: the model has not been started.
        """
        if self._port is None:
            raise RuntimeError("ScriptedModel.base_url: start the model first (use it in a with statement)")
        return f"http://127.0.0.1:{self._port}"

    @property
    def requests(self) -> tuple[RecordedRequest, ...]:
        """Every request received so far, in order, refused ones included."""
        with self._lock:
            return tuple(self._records)

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been sent yet."""
        with self._lock:
            return len(self._script)

    # -- connections -----------------------------------------------------------------------------

    def _accept(self) -> None:
        listener = self._listener
        assert listener is not None  # start() sets it before this thread starts
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with self._lock:
                if self._closing:
                    connection.close()
                    return
                worker = threading.Thread(
                    target=self._serve, args=(connection,), name="ScriptedModel connection", daemon=True
                )
                self._connections[connection] = worker
                self._workers.append(worker)
            worker.start()

    def _serve(self, connection: socket.socket) -> None:
        """Answer the requests of one connection until the client or the server closes it."""
        try:
            with connection, connection.makefile("rb") as stream:
                keep_open = True
                while keep_open:
                    keep_open = self._one_request(connection, stream)
        except OSError:
            pass  # the client went away, or close() shut the connection down
        finally:
            with self._lock:
                self._connections.pop(connection, None)

    def _one_request(self, connection: socket.socket, stream: IO[bytes]) -> bool:
        """Read, answer and record one request; whether the connection stays open for another."""
        method, path, body = "", "", None
        api: Api | None = None
        headers: dict[str, str] = {}
        close = True  # until the request line and headers say otherwise
        try:
            line = stream.readline(LINE_MAX + 1)
            if not line:
                return False
            method, path, version = read_request_line(line)
            api = _PATHS.get(path)
            headers = read_headers(stream)
            close = version == "HTTP/1.0" or "close" in headers.get("connection", "").lower()
            raw = read_body(stream, headers, self._max_request)
            if raw is None:
                return False
            body = parse_json(raw)
            status, payload = self._answer(method, path, api, body, len(raw))
        except Refused as refused:
            status, payload = refused.status, error_body(api, refused.status, refused.message)
            close = close or refused.close
        with self._lock:
            self._records.append(RecordedRequest(method, path, api, MappingProxyType(headers), body, status))
            number = len(self._records)
        send(connection, status, payload, f"req_scripted_{number}", close=close)
        return not close

    # -- answers ---------------------------------------------------------------------------------

    def _answer(self, method: str, path: str, api: Api | None, body: Any, size: int) -> tuple[int, dict[str, Any]]:
        """The status and JSON of the answer to one well-framed request."""
        if api is None:
            raise Refused(
                404,
                f"ScriptedModel answers POST /v1/chat/completions, /v1/responses and /v1/messages, not {method} "
                f"{path}; give OpenAI's client base_url=model.base_url + \"/v1\", Anthropic's base_url=model.base_url",
            )
        if method != "POST":
            raise Refused(405, f"{path} takes POST, not {method}")
        if not isinstance(body, dict):
            raise Refused(400, "the request body must be a JSON object")
        if body.get("stream"):
            raise Refused(400, "ScriptedModel does not stream: call without stream=True")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise Refused(400, "'model' is required: the model's name, a string")
        asked = max(1, size // 4)
        with self._lock:
            problem = (
                chat_problem(body)
                if api == "chat"
                else responses_problem(body, self._issued)
                if api == "responses"
                else messages_problem(body)
            )
            if problem is not None:
                raise Refused(400, problem)
            if not self._script:
                raise Refused(
                    400,
                    f"ScriptedModel's script has no reply left: all {self._sent} were sent; script another reply, "
                    "or end the loop when the model answers without tool calls",
                )
            turn = self._script[0]
            inputs = anthropic_inputs(turn) if api == "messages" else []
            self._script.popleft()
            self._sent += 1
            number = self._sent
            ids = []
            for call in turn.calls:
                self._calls += 1
                ids.append(call.id or f"{'toolu' if api == 'messages' else 'call'}_{self._calls}")
            if api == "responses":
                self._issued[f"resp_{number}"] = tuple(ids)
        if api == "chat":
            return 200, chat_reply(turn, ids, number, model, asked)
        if api == "responses":
            return 200, responses_reply(turn, ids, number, body, asked)
        return 200, messages_reply(turn, list(zip(ids, inputs, strict=True)), number, model, asked)
