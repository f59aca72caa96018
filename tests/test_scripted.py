"""hermes_core.testing.ScriptedModel: the script, the three APIs' replies, refusals, HTTP framing and shutdown."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any

import anthropic
import openai
import pytest

from hermes_core.testing import RecordedRequest, ScriptedCall, ScriptedModel, ScriptedTurn

USER = [{"role": "user", "content": "hi"}]


def post(model: ScriptedModel, path: str, body: Any, *, method: str = "POST") -> tuple[int, dict[str, Any]]:
    """One request over a fresh connection, with the standard library; the status and the JSON answered."""
    connection = http.client.HTTPConnection("127.0.0.1", int(model.base_url.rsplit(":", 1)[1]), timeout=5)
    try:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        connection.request(method, path, body=raw, headers={"content-type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def server_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("ScriptedModel")]


# -- the script --------------------------------------------------------------------------------------------


def test_a_call_keeps_its_arguments_as_the_json_text_sent() -> None:
    assert ScriptedCall("fs_read", {"path": "a b", "é": [1, None]}).arguments == '{"path":"a b","é":[1,null]}'
    assert ScriptedCall("fs_read").arguments == "{}"
    assert ScriptedCall("fs_read", '{"path": ').arguments == '{"path": '


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: ScriptedCall(""), "ScriptedCall(): name must be a non-empty string, got ''"),
        (
            lambda: ScriptedCall("t", [1]),
            "ScriptedCall('t'): arguments must be a dict or the arguments' text, got list",
        ),
        (lambda: ScriptedCall("t", {"a": {1, 2}}), "ScriptedCall('t'): arguments must be JSON: "),
        (lambda: ScriptedCall("t", {"a": float("nan")}), "ScriptedCall('t'): arguments must be JSON: "),
        (lambda: ScriptedCall("t", id=""), "ScriptedCall('t'): id must be a non-empty string or None, got ''"),
        (lambda: ScriptedTurn(3), "ScriptedTurn(): text must be a string, got int"),
        (lambda: ScriptedTurn("x", ["t"]), "ScriptedTurn(): calls[0] must be a ScriptedCall, got str"),
        (lambda: ScriptedModel(["ok", 3]), "ScriptedModel(): script[1] must be a text, a ScriptedCall, "),
        (lambda: ScriptedModel([[]]), "ScriptedModel(): script[0] must be a text, a ScriptedCall, "),
    ],
)
def test_a_malformed_script_is_refused_when_it_is_written(make: Any, message: str) -> None:
    with pytest.raises(TypeError) as caught:
        make()
    assert str(caught.value).startswith(message)


def test_a_turn_needs_text_or_calls() -> None:
    with pytest.raises(ValueError, match="a turn needs text, calls or both"):
        ScriptedTurn()
    with pytest.raises(ValueError, match="max_request_bytes must be a positive integer"):
        ScriptedModel([], max_request_bytes=0)


# -- the three APIs ----------------------------------------------------------------------------------------

TURN = ScriptedTurn("Let me look.", [ScriptedCall("fs_read", {"path": "a.txt"}), ScriptedCall("t", id="mine")])


def test_chat_completions_reply() -> None:
    with ScriptedModel([TURN]) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
        response = client.chat.completions.create(model="m", messages=USER)
    assert response.id == "chatcmpl-1"
    assert response.model == "m"
    assert response.object == "chat.completion"
    assert response._request_id == "req_scripted_1"
    (choice,) = response.choices
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me look."
    assert [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []] == [
        ("call_1", "fs_read", '{"path":"a.txt"}'),
        ("mine", "t", "{}"),
    ]
    assert response.usage is not None
    assert response.usage.total_tokens == response.usage.prompt_tokens + response.usage.completion_tokens > 0


def test_responses_reply() -> None:
    with ScriptedModel([TURN]) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
        response = client.responses.create(model="m", input="hi", instructions="Be brief.")
    assert (response.id, response.status, response.instructions, response.output_text) == (
        "resp_1",
        "completed",
        "Be brief.",
        "Let me look.",
    )
    message, *calls = response.output
    assert message.type == "message"
    assert [(c.type, c.id, c.call_id, c.name, c.arguments) for c in calls] == [
        ("function_call", "fc_1", "call_1", "fs_read", '{"path":"a.txt"}'),
        ("function_call", "fc_mine", "mine", "t", "{}"),
    ]
    assert response.usage is not None
    assert response.usage.total_tokens > 0


def test_anthropic_messages_reply() -> None:
    with ScriptedModel([TURN]) as model, anthropic.Anthropic(base_url=model.base_url, api_key="k") as client:
        response = client.messages.create(model="m", max_tokens=100, messages=USER)
    assert (response.id, response.model, response.stop_reason, response._request_id) == (
        "msg_1",
        "m",
        "tool_use",
        "req_scripted_1",
    )
    text, *uses = response.content
    assert text.type == "text"
    assert text.text == "Let me look."
    assert [(u.type, u.id, u.name, u.input) for u in uses] == [
        ("tool_use", "toolu_1", "fs_read", {"path": "a.txt"}),
        ("tool_use", "mine", "t", {}),
    ]
    assert response.usage.input_tokens > 0


def test_a_final_text_ends_the_turn_and_the_replies_go_in_order_across_apis() -> None:
    script = [ScriptedCall("a"), [ScriptedCall("b"), ScriptedCall("c")], "Done."]
    with ScriptedModel(script) as model:
        assert model.remaining == 3
        assert repr(model) == f"<ScriptedModel {model.base_url}, 0 of 3 replies sent>"
        with openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
            first = client.chat.completions.create(model="m", messages=USER)
        with anthropic.Anthropic(base_url=model.base_url, api_key="k") as claude:
            second = claude.messages.create(model="m", max_tokens=10, messages=USER)
        with openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
            third = client.responses.create(model="m", input="hi")
        assert model.remaining == 0
    assert [c.id for c in first.choices[0].message.tool_calls or []] == ["call_1"]
    assert [block.id for block in second.content if block.type == "tool_use"] == ["toolu_2", "toolu_3"]
    assert (third.output_text, third.output[0].type) == ("Done.", "message")
    assert [(r.method, r.path, r.api, r.status) for r in model.requests] == [
        ("POST", "/v1/chat/completions", "chat", 200),
        ("POST", "/v1/messages", "messages", 200),
        ("POST", "/v1/responses", "responses", 200),
    ]
    assert "anthropic-version" in model.requests[1].headers
    assert model.requests[1].body == {"max_tokens": 10, "messages": USER, "model": "m"}


# -- refusals, as the APIs refuse ---------------------------------------------------------------------------


def test_chat_tool_calls_need_their_results() -> None:
    asked = {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {}}]}
    answer = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
    with ScriptedModel(["ok"]) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
        with pytest.raises(openai.BadRequestError) as missing:
            client.chat.completions.create(model="m", messages=[*USER, asked, *USER])
        with pytest.raises(openai.BadRequestError) as stray:
            client.chat.completions.create(model="m", messages=[*USER, answer])
        assert model.remaining == 1
        client.chat.completions.create(model="m", messages=[*USER, asked, answer])
    assert missing.value.body == {
        "message": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    assert "messages[1]: messages with role 'tool' must be a response to a preceding message" in stray.value.message
    assert [request.status for request in model.requests] == [400, 400, 200]


def test_responses_function_calls_need_their_outputs() -> None:
    call = {"type": "function_call", "call_id": "call_9", "name": "t", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "call_9", "output": "x"}
    model = ScriptedModel([ScriptedCall("t"), "ok"])
    with model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
        with pytest.raises(openai.BadRequestError, match=r"No tool output found for function call call_9\."):
            client.responses.create(model="m", input=[call])
        with pytest.raises(openai.BadRequestError, match="No tool call found for function call output with"):
            client.responses.create(model="m", input=[output])
        with pytest.raises(openai.BadRequestError, match="Previous response with id 'resp_7' not found"):
            client.responses.create(model="m", input="hi", previous_response_id="resp_7")
        first = client.responses.create(model="m", input="hi")
        with pytest.raises(openai.BadRequestError, match=r"No tool output found for function call call_1\."):
            client.responses.create(model="m", input="hi", previous_response_id=first.id)
        answer = {"type": "function_call_output", "call_id": "call_1", "output": "x"}
        final = client.responses.create(model="m", input=[answer], previous_response_id=first.id)
    assert final.output_text == "ok"


def test_anthropic_tool_uses_need_their_results() -> None:
    asked = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "t", "input": {}}]}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
    stray = {"type": "tool_result", "tool_use_id": "toolu_2", "content": "x"}
    with ScriptedModel(["ok"]) as model, anthropic.Anthropic(base_url=model.base_url, api_key="k") as client:
        with pytest.raises(anthropic.BadRequestError) as missing:
            client.messages.create(model="m", max_tokens=9, messages=[*USER, asked, *USER])
        messages = [*USER, asked, {"role": "user", "content": [result, stray]}]
        with pytest.raises(anthropic.BadRequestError) as unexpected:
            client.messages.create(model="m", max_tokens=9, messages=messages)
        client.messages.create(model="m", max_tokens=9, messages=[*USER, asked, {"role": "user", "content": [result]}])
    assert missing.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
            "toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        },
    }
    assert "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2." in str(
        unexpected.value
    )


def test_anthropic_cannot_carry_arguments_that_are_not_an_object() -> None:
    model = ScriptedModel([ScriptedCall("t", "[1"), "ok"])
    with model, anthropic.Anthropic(base_url=model.base_url, api_key="k") as client:
        with pytest.raises(anthropic.BadRequestError, match="calls t with arguments that are not a JSON object"):
            client.messages.create(model="m", max_tokens=9, messages=USER)
        assert model.remaining == 2


def test_streaming_and_an_exhausted_script_are_refused_without_a_retry() -> None:
    with ScriptedModel([]) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="k") as client:
        with pytest.raises(openai.BadRequestError, match="ScriptedModel does not stream"):
            client.chat.completions.create(model="m", messages=USER, stream=True)
        with pytest.raises(openai.BadRequestError, match="script has no reply left: all 0 were sent"):
            client.chat.completions.create(model="m", messages=USER)
    assert len(model.requests) == 2  # each refused once: the SDK was told not to retry


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("POST", "/chat/completions", {}, 404, 'base_url=model.base_url + "/v1"'),
        ("GET", "/v1/responses", b"", 405, "/v1/responses takes POST, not GET"),
        ("POST", "/v1/responses?x=1", b"{nope", 400, "the request body is not JSON"),
        ("POST", "/v1/responses", [1], 400, "the request body must be a JSON object"),
        ("POST", "/v1/responses", {"input": "hi"}, 400, "'model' is required"),
        ("POST", "/v1/messages", {"model": "m", "messages": USER}, 400, "max_tokens: Field required"),
        ("POST", "/v1/chat/completions", {"model": "m", "messages": []}, 400, "'messages' must be a non-empty"),
    ],
)
def test_malformed_requests_are_refused_in_the_apis_format(
    method: str, path: str, body: Any, status: int, message: str
) -> None:
    with ScriptedModel(["unused"]) as model:
        answered, payload = post(model, path, body, method=method)
    assert answered == status
    error = payload["error"]
    assert message in error["message"]
    assert model.remaining == 1
    (recorded,) = model.requests
    assert (recorded.method, recorded.path, recorded.status) == (method, path.partition("?")[0], status)


def test_a_request_larger_than_the_limit_is_refused_unread() -> None:
    with ScriptedModel(["unused"], max_request_bytes=1000) as model:
        status, payload = post(model, "/v1/messages", {"padding": "x" * 2000})
    assert status == 413
    assert payload["error"] == {
        "type": "request_too_large",
        "message": "the request body is 2,015 bytes; this scripted model reads at most 1,000",
    }
    assert model.requests == (
        RecordedRequest("POST", "/v1/messages", "messages", model.requests[0].headers, None, 413),
    )


def test_http_framing_errors() -> None:
    with ScriptedModel([]) as model:
        port = int(model.base_url.rsplit(":", 1)[1])
        for request, status in [
            (b"NONSENSE\r\n\r\n", 400),
            (b"POST /v1/messages HTTP/2.0\r\n\r\n", 505),
            (b"POST /v1/messages HTTP/1.1\r\nbad header\r\n\r\n", 400),
            (b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            (b"POST /v1/messages HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
            (b"POST /v1/messages HTTP/1.1\r\n" + b"x: y\r\n" * 101 + b"\r\n", 431),
            (b"POST /" + b"x" * 20_000 + b" HTTP/1.1\r\n\r\n", 400),
        ]:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
                client.sendall(request)
                answer = client.makefile("rb").read()  # the server closes the connection after a framing error
            assert answer.startswith(f"HTTP/1.1 {status} ".encode()), (request[:40], answer[:80])
            assert b"connection: close" in answer


# -- life cycle --------------------------------------------------------------------------------------------


def test_start_once_close_always() -> None:
    model = ScriptedModel(["x"])
    with pytest.raises(RuntimeError, match="start the model first"):
        _ = model.base_url
    assert repr(model) == "<ScriptedModel not started, 0 of 1 replies sent>"
    model.close()  # never started: nothing to do
    with model, pytest.raises(RuntimeError, match="a scripted model is started once"):
        model.start()
    model.close()  # twice: nothing to do
    with pytest.raises(RuntimeError, match="a scripted model is started once"):
        model.start()


def test_close_ends_open_connections_and_every_thread() -> None:
    before = server_threads()
    model = ScriptedModel(["a", "b"]).start()
    client = openai.OpenAI(base_url=model.base_url + "/v1", api_key="k", max_retries=0)
    idle = socket.create_connection(("127.0.0.1", int(model.base_url.rsplit(":", 1)[1])))  # never sends anything
    try:
        client.chat.completions.create(model="m", messages=USER)
        assert len(server_threads()) > len(before)  # the client's kept-alive connection is still served
        closing = threading.Thread(target=model.close, daemon=True)  # a close that waited for the idle one would hang
        closing.start()
        closing.join(60)
        assert not closing.is_alive()
        assert server_threads() == before
        with pytest.raises(openai.APIConnectionError):
            client.chat.completions.create(model="m", messages=USER)
    finally:
        idle.close()
        client.close()
