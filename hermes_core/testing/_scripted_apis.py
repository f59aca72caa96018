"""What each API the scripted model speaks checks in a request, and how it writes a reply and an error.

Chat Completions, Responses and Messages each refuse a conversation that leaves
a tool call without its result, or answers a call never made, in their own
words (:func:`chat_problem`, :func:`responses_problem`, :func:`messages_problem`);
each writes a turn its own way (:func:`chat_reply`, :func:`responses_reply`,
:func:`messages_reply`) and an error in its own format (:func:`error_body`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_core.testing._scripted_http import Refused
from hermes_core.testing._scripted_script import Api, ScriptedTurn

__all__ = [
    "anthropic_inputs",
    "chat_problem",
    "chat_reply",
    "error_body",
    "messages_problem",
    "messages_reply",
    "responses_problem",
    "responses_reply",
]


# -- what each API checks in a request --------------------------------------------------------------


def _missing(ids: Iterable[str]) -> str:
    return ", ".join(ids)


def chat_problem(body: Mapping[str, Any]) -> str | None:
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


def responses_problem(body: Mapping[str, Any], issued: Mapping[str, tuple[str, ...]]) -> str | None:
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


def messages_problem(body: Mapping[str, Any]) -> str | None:
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


def chat_reply(turn: ScriptedTurn, ids: list[str], number: int, model: str, asked: int) -> dict[str, Any]:
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


def responses_reply(
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


def messages_reply(
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


def error_body(api: Api | None, status: int, message: str) -> dict[str, Any]:
    """*message* in the error format of *api* (OpenAI's for a path that is no API's)."""
    if api == "messages":
        kind = {404: "not_found_error", 413: "request_too_large"}.get(status, "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def anthropic_inputs(turn: ScriptedTurn) -> list[Any]:
    """The ``input`` objects of *turn*'s calls; a refusal if one's arguments are not a JSON object."""
    inputs = []
    for call in turn.calls:
        try:
            given = json.loads(call.arguments)
        except json.JSONDecodeError:
            given = None
        if not isinstance(given, dict):
            raise Refused(
                400,
                f"the script's next reply calls {call.name} with arguments that are not a JSON object "
                f"({call.arguments!r}), which Anthropic's tool_use input cannot carry; script them as a dict",
            )
        inputs.append(given)
    return inputs
