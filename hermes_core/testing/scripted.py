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

The module speaks HTTP and JSON with the standard library; it imports neither SDK.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import IO, Any, Final, Literal, TypeAlias, final

from hermes_core._frozen import derive, frozen

__all__ = ["Api", "RecordedRequest", "ScriptEntry", "ScriptedCall", "ScriptedModel", "ScriptedTurn"]

#: The APIs a scripted model speaks, named by their paths' last part.
Api: TypeAlias = Literal["chat", "responses", "messages"]

_PATHS: Final[Mapping[str, Api]] = MappingProxyType(
    {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "messages"}
)
_DEFAULT_MAX_REQUEST = 8 * 1024 * 1024
_LINE_MAX = 16 * 1024  # the longest request or header line read
_HEADERS_MAX = 100  # the most header lines read
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    505: "HTTP Version Not Supported",
}


# -- the script --------------------------------------------------------------------------------------


@final
@frozen(init=False)
class ScriptedCall:
    """One tool call of a scripted reply.

    Args:
        name: the tool's name as the model sends it: a wire name (``fs_read``),
            or any text, to script a model that calls a tool that does not exist.
        arguments: the call's arguments, a JSON object as a dict (``{}`` when
            left out), or the exact text the model sends: text that is not JSON
            scripts that mistake (OpenAI's APIs only; Anthropic's ``input`` is
            always an object).
        id: the call's id; by default ``call_N`` (OpenAI) or ``toolu_N``
            (Anthropic), N counting the server's calls from 1.

    Attributes:
        arguments: the arguments as the JSON text sent (a dict given is written
            compactly, as OpenAI's models write it).

    Raises:
        TypeError: *name* or *id* is not a non-empty string, or *arguments* is
            neither a dict nor a string, or holds a value JSON cannot carry.
    """

    name: str
    arguments: str
    id: str | None

    def __init__(self, name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> None:  # noqa: A002 - the field is the call's id
        if not isinstance(name, str) or not name:
            raise TypeError(f"ScriptedCall(): name must be a non-empty string, got {name!r}")
        if id is not None and (not isinstance(id, str) or not id):
            raise TypeError(f"ScriptedCall({name!r}): id must be a non-empty string or None, got {id!r}")
        if arguments is None:
            text = "{}"
        elif isinstance(arguments, str):
            text = arguments
        elif isinstance(arguments, Mapping):
            try:
                text = json.dumps(dict(arguments), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError) as error:
                raise TypeError(f"ScriptedCall({name!r}): arguments must be JSON: {error}") from None
        else:
            kind = type(arguments).__name__
            raise TypeError(f"ScriptedCall({name!r}): arguments must be a dict or the arguments' text, got {kind}")
        derive(self, name=name, arguments=text, id=id)


@final
@frozen(init=False)
class ScriptedTurn:
    """One scripted reply: text, tool calls, or both (text first, as models write it).

    Args:
        text: what the model says.
        calls: the tool calls it makes in this turn, in order.

    Raises:
        TypeError: *text* is not a string, or a call is not a :class:`ScriptedCall`.
        ValueError: the turn has neither text nor calls.
    """

    text: str
    calls: tuple[ScriptedCall, ...]

    def __init__(self, text: str = "", calls: Iterable[ScriptedCall] = ()) -> None:
        if not isinstance(text, str):
            raise TypeError(f"ScriptedTurn(): text must be a string, got {type(text).__name__}")
        made = tuple(calls)
        for index, call in enumerate(made):
            if not isinstance(call, ScriptedCall):
                raise TypeError(f"ScriptedTurn(): calls[{index}] must be a ScriptedCall, got {type(call).__name__}")
        if not text and not made:
            raise ValueError("ScriptedTurn(): a turn needs text, calls or both")
        derive(self, text=text, calls=made)


#: What a script holds, per reply: a final text, a call, a turn's calls, or a :class:`ScriptedTurn`.
ScriptEntry: TypeAlias = str | ScriptedCall | Sequence[ScriptedCall] | ScriptedTurn


def _turn(entry: object, index: int) -> ScriptedTurn:
    """*entry* of a script, at *index*, as a turn."""
    if isinstance(entry, ScriptedTurn):
        return entry
    if isinstance(entry, str):
        return ScriptedTurn(entry)
    if isinstance(entry, ScriptedCall):
        return ScriptedTurn(calls=[entry])
    if isinstance(entry, Sequence) and entry and all(isinstance(call, ScriptedCall) for call in entry):
        return ScriptedTurn(calls=entry)
    raise TypeError(
        f"ScriptedModel(): script[{index}] must be a text, a ScriptedCall, a non-empty list of them or a "
        f"ScriptedTurn, got {entry!r}"
    )


@final
@frozen
class RecordedRequest:
    """One request the scripted model received, and the status it answered.

    Attributes:
        method: the HTTP method (``POST``).
        path: the path, without its query (``/v1/chat/completions``).
        api: which API the path is (``chat``, ``responses``, ``messages``), or None for another path.
        headers: the request's headers, names in lower case.
        body: the JSON body, parsed; None when there was none or it was not JSON.
        status: the HTTP status answered: 200 for a scripted reply, 4xx for a refusal.
    """

    method: str
    path: str
    api: Api | None
    headers: Mapping[str, str]
    body: Any
    status: int


# -- what each API checks in a request --------------------------------------------------------------


def _missing(ids: Iterable[str]) -> str:
    return ", ".join(ids)


def _chat_problem(body: Mapping[str, Any]) -> str | None:
    """Why Chat Completions would refuse *body*, or None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    pending: list[Any] = []  # the ids of the last assistant message's tool calls still unanswered
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages[{index}] must be an object"
        role = message.get("role")
        if role == "tool":
            answered = message.get("tool_call_id")
            if answered not in pending:
                return (
                    f"messages[{index}]: messages with role 'tool' must be a response to a preceding message "
                    f"with 'tool_calls'; {answered!r} is not the id of a call awaiting its result"
                )
            pending.remove(answered)
            continue
        if pending:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {_missing(pending)}"
            )
        if role == "assistant":
            calls = message.get("tool_calls") or []
            pending = [call.get("id") for call in calls if isinstance(call, dict)]
    if pending:
        return (
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {_missing(pending)}"
        )
    return None


def _responses_problem(body: Mapping[str, Any], issued: Mapping[str, tuple[str, ...]]) -> str | None:
    """Why Responses would refuse *body*, or None; *issued* holds the call ids of each response sent."""
    items = body.get("input")
    if items is not None and not isinstance(items, str | list):
        return "'input' must be a string or an array of input items"
    previous = body.get("previous_response_id")
    if previous is not None and previous not in issued:
        return f"Previous response with id {previous!r} not found."
    calls: list[Any] = list(issued[previous]) if previous is not None else []
    answered: set[Any] = set()
    for index, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            return f"input[{index}] must be an object"
        kind = item.get("type")
        if kind == "function_call":
            calls.append(item.get("call_id"))
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls:
                return f"No tool call found for function call output with call_id {call_id}."
            answered.add(call_id)
    missing = [call for call in calls if call not in answered]
    if missing:
        return f"No tool output found for function call {_missing(missing)}."
    return None


def _messages_problem(body: Mapping[str, Any]) -> str | None:
    """Why Messages would refuse *body*, or None."""
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required (an integer)"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: must be a non-empty array"
    pending: list[Any] = []  # the tool_use ids of the message before
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages.{index}: must be an object"
        content = message.get("content")
        blocks = [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []
        results = [(at, use.get("tool_use_id")) for at, use in enumerate(blocks) if use.get("type") == "tool_result"]
        for at, tool_use_id in results:
            if tool_use_id not in pending:
                return (
                    f"messages.{index}.content.{at}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{tool_use_id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
                    "previous message."
                )
        missing = [tool_use_id for tool_use_id in pending if tool_use_id not in {found for _, found in results}]
        if missing:
            return (
                f"messages.{index - 1}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{_missing(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the "
                "next message."
            )
        uses = [block.get("id") for block in blocks if block.get("type") == "tool_use"]
        pending = uses if message.get("role") == "assistant" else []
    if pending:
        return (
            f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks immediately "
            f"after: {_missing(pending)}. Each `tool_use` block must have a corresponding `tool_result` block in "
            "the next message."
        )
    return None


# -- the replies, as each API writes them -----------------------------------------------------------


def _tokens(text: str) -> int:
    """A plausible token count for *text*: about four characters a token."""
    return max(1, (len(text) + 3) // 4)


def _chat_reply(turn: ScriptedTurn, ids: list[str], number: int, model: str, asked: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None, "refusal": None, "annotations": []}
    if turn.calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call, call_id in zip(turn.calls, ids, strict=True)
        ]
    written = _tokens(turn.text + "".join(call.name + call.arguments for call in turn.calls))
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if turn.calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": asked,
            "completion_tokens": written,
            "total_tokens": asked + written,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _responses_reply(
    turn: ScriptedTurn, ids: list[str], number: int, body: Mapping[str, Any], asked: int
) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if turn.text:
        output.append(
            {
                "id": f"msg_{number}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}],
            }
        )
    output.extend(
        {
            "id": f"fc_{call_id.removeprefix('call_')}",
            "type": "function_call",
            "status": "completed",
            "call_id": call_id,
            "name": call.name,
            "arguments": call.arguments,
        }
        for call, call_id in zip(turn.calls, ids, strict=True)
    )
    written = _tokens(turn.text + "".join(call.name + call.arguments for call in turn.calls))
    now = int(time.time())
    return {
        "id": f"resp_{number}",
        "object": "response",
        "created_at": now,
        "completed_at": now,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools", []),
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": {
            "input_tokens": asked,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": written,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": asked + written,
        },
        "user": None,
        "metadata": {},
    }


def _messages_reply(
    turn: ScriptedTurn, uses: list[tuple[str, Any]], number: int, model: str, asked: int
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
    content.extend(
        {"type": "tool_use", "id": call_id, "name": call.name, "input": given}
        for call, (call_id, given) in zip(turn.calls, uses, strict=True)
    )
    written = _tokens(turn.text + "".join(call.name + call.arguments for call in turn.calls))
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if turn.calls else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": asked,
            "output_tokens": written,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    }


def _error(api: Api | None, status: int, message: str) -> dict[str, Any]:
    """*message* in the error format of *api* (OpenAI's for a path that is no API's)."""
    if api == "messages":
        kind = {404: "not_found_error", 413: "request_too_large"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


class _Refused(Exception):  # noqa: N818 - a refusal answered over HTTP, never seen outside this module
    """A request answered with an HTTP error, *status* and *message*; ``close`` ends the connection."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close


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
        self._script: deque[ScriptedTurn] = deque(_turn(entry, index) for index, entry in enumerate(script))
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
            line = stream.readline(_LINE_MAX + 1)
            if not line:
                return False
            method, path, version = _request_line(line)
            api = _PATHS.get(path)
            headers = _headers(stream)
            close = version == "HTTP/1.0" or "close" in headers.get("connection", "").lower()
            raw = _body(stream, headers, self._max_request)
            if raw is None:
                return False
            body = _json(raw)
            status, payload = self._answer(method, path, api, body, len(raw))
        except _Refused as refused:
            status, payload = refused.status, _error(api, refused.status, refused.message)
            close = close or refused.close
        with self._lock:
            self._records.append(RecordedRequest(method, path, api, MappingProxyType(headers), body, status))
            number = len(self._records)
        _send(connection, status, payload, f"req_scripted_{number}", close=close)
        return not close

    # -- answers ---------------------------------------------------------------------------------

    def _answer(self, method: str, path: str, api: Api | None, body: Any, size: int) -> tuple[int, dict[str, Any]]:
        """The status and JSON of the answer to one well-framed request."""
        if api is None:
            raise _Refused(
                404,
                f"ScriptedModel answers POST /v1/chat/completions, /v1/responses and /v1/messages, not {method} "
                f"{path}; give OpenAI's client base_url=model.base_url + \"/v1\", Anthropic's base_url=model.base_url",
            )
        if method != "POST":
            raise _Refused(405, f"{path} takes POST, not {method}")
        if not isinstance(body, dict):
            raise _Refused(400, "the request body must be a JSON object")
        if body.get("stream"):
            raise _Refused(400, "ScriptedModel does not stream: call without stream=True")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _Refused(400, "'model' is required: the model's name, a string")
        asked = max(1, size // 4)
        with self._lock:
            problem = (
                _chat_problem(body)
                if api == "chat"
                else _responses_problem(body, self._issued)
                if api == "responses"
                else _messages_problem(body)
            )
            if problem is not None:
                raise _Refused(400, problem)
            if not self._script:
                raise _Refused(
                    400,
                    f"ScriptedModel's script has no reply left: all {self._sent} were sent; script another reply, "
                    "or end the loop when the model answers without tool calls",
                )
            turn = self._script[0]
            inputs = _anthropic_inputs(turn) if api == "messages" else []
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
            return 200, _chat_reply(turn, ids, number, model, asked)
        if api == "responses":
            return 200, _responses_reply(turn, ids, number, body, asked)
        return 200, _messages_reply(turn, list(zip(ids, inputs, strict=True)), number, model, asked)


def _anthropic_inputs(turn: ScriptedTurn) -> list[Any]:
    """The ``input`` objects of *turn*'s calls; a refusal if one's arguments are not a JSON object."""
    inputs = []
    for call in turn.calls:
        try:
            given = json.loads(call.arguments)
        except json.JSONDecodeError:
            given = None
        if not isinstance(given, dict):
            raise _Refused(
                400,
                f"the script's next reply calls {call.name} with arguments that are not a JSON object "
                f"({call.arguments!r}), which Anthropic's tool_use input cannot carry; script them as a dict",
            )
        inputs.append(given)
    return inputs


# -- HTTP/1.1, the little of it the SDKs use ---------------------------------------------------------


def _request_line(line: bytes) -> tuple[str, str, str]:
    """``(method, path, version)`` of a request line (the path without its query)."""
    if len(line) > _LINE_MAX or not line.endswith(b"\n"):
        raise _Refused(400, f"the request line is longer than {_LINE_MAX:,} bytes", close=True)
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise _Refused(400, "malformed request line", close=True)
    method, target, version = parts
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise _Refused(505, f"{version} is not served; use HTTP/1.1", close=True)
    return method, target.partition("?")[0], version


def _headers(stream: IO[bytes]) -> dict[str, str]:
    """The headers of a request, names in lower case."""
    headers: dict[str, str] = {}
    for _ in range(_HEADERS_MAX + 1):
        line = stream.readline(_LINE_MAX + 1)
        if len(line) > _LINE_MAX:
            raise _Refused(431, f"a header line is longer than {_LINE_MAX:,} bytes", close=True)
        if line in (b"\r\n", b"\n", b""):
            return headers
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            raise _Refused(400, "malformed header line", close=True)
        headers[name.strip().lower()] = value.strip()
    raise _Refused(431, f"more than {_HEADERS_MAX} header lines", close=True)


def _body(stream: IO[bytes], headers: Mapping[str, str], most: int) -> bytes | None:
    """The body of a request (None if the client closed before sending it whole)."""
    if "transfer-encoding" in headers:
        raise _Refused(411, "send the body with a Content-Length, not a Transfer-Encoding", close=True)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _Refused(400, "Content-Length must be a number of bytes", close=True) from None
    if length < 0:
        raise _Refused(400, "Content-Length must be a number of bytes", close=True)
    if length > most:
        raise _Refused(
            413, f"the request body is {length:,} bytes; this scripted model reads at most {most:,}", close=True
        )
    raw = stream.read(length) if length else b""
    return raw if len(raw) == length else None


def _json(raw: bytes) -> Any:
    """The JSON value of a body, None for an empty one; a refusal for one that is not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _Refused(400, f"the request body is not JSON: {error}") from None
    except RecursionError:
        raise _Refused(400, "the request body nests arrays and objects too deeply") from None


def _send(connection: socket.socket, status: int, payload: Mapping[str, Any], request_id: str, *, close: bool) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        f"x-request-id: {request_id}",  # OpenAI's clients read this one,
        f"request-id: {request_id}",  # Anthropic's this one
    ]
    if status >= 400:
        head.append("x-should-retry: false")  # a scripted refusal is the same on every try
    if close:
        head.append("connection: close")
    connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
