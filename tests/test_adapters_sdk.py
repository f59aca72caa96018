"""The adapters with the real OpenAI and Anthropic SDK clients, against a scripted model on localhost.

Every turn goes through an SDK as an application's would: the scripted model
(:class:`~hermes_core.testing.ScriptedModel`) answers with tool calls, the SDK
parses them into its own objects, ``handle`` or ``handle_all`` is given those
objects, the SDK sends the results back, and the test reads what the server
received. What the adapters produce is also checked against the SDKs' own
parameter types (pydantic ``TypeAdapter`` over their ``TypedDict`` s).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from anthropic.types import ToolParam, ToolResultBlockParam, ToolUseBlock
from openai.types.chat import ChatCompletionMessageFunctionToolCall, ChatCompletionToolMessageParam
from openai.types.chat import ChatCompletionToolParam as ChatToolParam
from openai.types.responses import FunctionToolParam, ResponseFunctionToolCall
from openai.types.responses.response_input_item_param import FunctionCallOutput
from openai.types.shared_params import FunctionDefinition

from hermes_core import Runtime, Tool, define_tool, load_runtime, tool
from hermes_core import schema as s
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.testing import ScriptedCall, ScriptedModel
from hermes_core.testing.scripted import ScriptEntry

MODEL = "scripted-model"
QUESTION = "What is (2 + 3) * 4?"
WIRE = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")


# -- tools ---------------------------------------------------------------------------------------------


@tool(name="demo.fail", version="1.0.0")
def fail(text: str) -> str:
    """Fail, always: the service behind it is down.

    Args:
        text: anything.
    """
    raise RuntimeError("the service is down")


# A handler that breaks its own contract: it returns the text where an integer was declared.
wrong = define_tool(
    name="demo.wrong",
    description="Count the characters of a text.",
    version="1.0.0",
    input=s.object({"text": s.string()}),
    output=s.integer(),
    handler=lambda args: args["text"],
)


@tool(name="demo.greet", version="1.0.0")
def greet(name: str, punctuation: str = "!") -> str:
    """Greet someone.

    Args:
        name: who.
        punctuation: what ends the greeting.
    """
    return f"Hello, {name}{punctuation}"


# Objects at every depth, optional fields with and without defaults, a tuple, a union, a named schema.
nested = define_tool(
    name="demo.nested",
    description="Return the input as the runtime parsed it.",
    version="1.0.0",
    input=s.object(
        {
            "items": s.array(s.object({"name": s.string(), "meta": s.optional(s.object({"k": s.integer()}))})),
            "pair": s.tuple(s.string(), s.object({"z": s.boolean()})),
            "either": s.union(s.object({"a": s.string()}), s.object({"b": s.integer()})),
            "maybe": s.nullable(s.object({"c": s.string()})),
            "options": s.optional(s.ref("demo.options")),
        }
    ),
    output=s.any(),
    handler=lambda args: args,
)
OPTIONS = s.object({"size": s.optional(s.integer(minimum=1), default=10), "label": s.optional(s.string())})


@pytest.fixture
def bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Runtime:
    """The bundled fs and math plugins, loaded as an application loads them, no grant given."""
    for name in list(os.environ):
        if name.startswith("HERMESOS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HERMESOS_FS_ROOT", str(tmp_path))
    return load_runtime(only=["hermesos-fs", "hermesos-math"])


@pytest.fixture
def runtime(bundled: Runtime) -> Runtime:
    """The bundled tools and this module's."""
    tools = [*bundled.tools.values(), fail, wrong, greet, nested]
    return Runtime(tools, schemas={**bundled.schemas, "demo.options": OPTIONS}, providers=bundled.providers)


# -- the SDKs' own types -------------------------------------------------------------------------------


def conforms(kind: Any, value: dict[str, Any]) -> None:
    """*value* is a valid *kind* (an SDK TypedDict), with no key the type does not have."""
    pydantic.TypeAdapter(kind).validate_python(value)
    known = kind.__required_keys__ | kind.__optional_keys__
    assert set(value) <= known, f"keys {sorted(set(value) - known)} are not in {kind.__name__}"


def conforms_all(kind: Any, values: list[dict[str, Any]]) -> None:
    for value in values:
        conforms(kind, value)


# -- one turn through each SDK: the model calls tools, the results go back, the model answers ------------
#
# Each returns the scripted model (its requests recorded) and what handle/handle_all returned.


def chat_turn(tools: OpenAITools, script: list[ScriptEntry]) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Chat Completions, the sync client, handle_sync on each of the SDK's tool-call objects."""
    with ScriptedModel(script) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="test") as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        response = client.chat.completions.create(model=MODEL, messages=messages, tools=tools.definitions())
        (choice,) = response.choices
        assert choice.finish_reason == "tool_calls"
        calls = choice.message.tool_calls or []
        assert all(isinstance(call, ChatCompletionMessageFunctionToolCall) for call in calls)
        results = [tools.handle_sync(call) for call in calls]
        conforms_all(ChatCompletionToolMessageParam, results)
        messages += [choice.message, *results]
        final = client.chat.completions.create(model=MODEL, messages=messages, tools=tools.definitions())
        assert final.choices[0].finish_reason == "stop"
        assert final.choices[0].message.content == "Done."
    return model, results


async def chat_turn_async(tools: OpenAITools, script: list[ScriptEntry]) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Chat Completions, the async client, handle_all on the turn's calls."""
    with ScriptedModel(script) as model:
        async with openai.AsyncOpenAI(base_url=model.base_url + "/v1", api_key="test") as client:
            messages: list[Any] = [{"role": "user", "content": QUESTION}]
            response = await client.chat.completions.create(model=MODEL, messages=messages, tools=tools.definitions())
            message = response.choices[0].message
            results = await tools.handle_all(message.tool_calls or [])
            conforms_all(ChatCompletionToolMessageParam, results)
            messages += [message, *results]
            final = await client.chat.completions.create(model=MODEL, messages=messages, tools=tools.definitions())
            assert final.choices[0].message.content == "Done."
    return model, results


def responses_turn(tools: OpenAITools, script: list[ScriptEntry]) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Responses, the sync client, handle_sync on each function_call item, the whole input sent again."""
    with ScriptedModel(script) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="test") as client:
        items: list[Any] = [{"role": "user", "content": QUESTION}]
        response = client.responses.create(model=MODEL, input=items, tools=tools.definitions())
        calls = [item for item in response.output if item.type == "function_call"]
        assert calls
        assert all(isinstance(call, ResponseFunctionToolCall) for call in calls)
        results = [tools.handle_sync(call) for call in calls]
        conforms_all(FunctionCallOutput, results)
        items += [*response.output, *results]
        final = client.responses.create(model=MODEL, input=items, tools=tools.definitions())
        assert final.output_text == "Done."
    return model, results


async def responses_turn_async(
    tools: OpenAITools, script: list[ScriptEntry]
) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Responses, the async client, handle_all, the results sent with previous_response_id."""
    with ScriptedModel(script) as model:
        async with openai.AsyncOpenAI(base_url=model.base_url + "/v1", api_key="test") as client:
            response = await client.responses.create(model=MODEL, input=QUESTION, tools=tools.definitions())
            results = await tools.handle_all(item for item in response.output if item.type == "function_call")
            conforms_all(FunctionCallOutput, results)
            final = await client.responses.create(
                model=MODEL,
                previous_response_id=response.id,
                input=results,
                tools=tools.definitions(),
            )
            assert final.output_text == "Done."
    return model, results


def anthropic_turn(tools: AnthropicTools, script: list[ScriptEntry]) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Messages, the sync client, handle_sync on each tool_use block."""
    with ScriptedModel(script) as model, anthropic.Anthropic(base_url=model.base_url, api_key="test") as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        definitions: Any = tools.definitions()
        response = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=definitions)
        assert response.stop_reason == "tool_use"
        uses = [block for block in response.content if block.type == "tool_use"]
        assert all(isinstance(use, ToolUseBlock) for use in uses)
        results = [tools.handle_sync(use) for use in uses]
        conforms_all(ToolResultBlockParam, results)
        messages += [{"role": "assistant", "content": response.content}, {"role": "user", "content": results}]
        final = client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=definitions)
        assert final.stop_reason == "end_turn"
        assert [block.text for block in final.content if block.type == "text"] == ["Done."]
    return model, results


async def anthropic_turn_async(
    tools: AnthropicTools, script: list[ScriptEntry]
) -> tuple[ScriptedModel, list[dict[str, Any]]]:
    """Messages, the async client, handle_all on the turn's tool_use blocks."""
    with ScriptedModel(script) as model:
        async with anthropic.AsyncAnthropic(base_url=model.base_url, api_key="test") as client:
            messages: list[Any] = [{"role": "user", "content": QUESTION}]
            definitions: Any = tools.definitions()
            response = await client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=definitions)
            results = await tools.handle_all(block for block in response.content if block.type == "tool_use")
            conforms_all(ToolResultBlockParam, results)
            messages += [{"role": "assistant", "content": response.content}, {"role": "user", "content": results}]
            final = await client.messages.create(model=MODEL, max_tokens=1024, messages=messages, tools=definitions)
            assert final.stop_reason == "end_turn"
    return model, results


# -- definitions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "strict"),
    [
        pytest.param("chat", False, id="chat"),
        pytest.param("chat", True, id="chat-strict"),
        pytest.param("responses", False, id="responses"),
        pytest.param("responses", True, id="responses-strict"),
    ],
)
def test_openai_definitions_are_the_sdks_tool_params(bundled: Runtime, api: str, strict: bool) -> None:
    definitions = OpenAITools(bundled, api=api, strict=strict).definitions()
    assert len(definitions) == len(bundled.tools) == 7
    for definition in definitions:
        if api == "chat":
            conforms(ChatToolParam, definition)
            conforms(FunctionDefinition, definition["function"])
            function = definition["function"]
        else:
            conforms(FunctionToolParam, definition)
            function = definition
        assert WIRE.match(function["name"])
        assert function["parameters"]["type"] == "object"
        assert ("strict" in function) is strict or api == "responses"


def test_anthropic_definitions_are_the_sdks_tool_params(bundled: Runtime) -> None:
    definitions = AnthropicTools(bundled).definitions()
    assert [definition["name"] for definition in definitions] == [
        "fs_read",
        "fs_write",
        "fs_list",
        "fs_stat",
        "fs_mkdir",
        "fs_delete",
        "math_eval",
    ]
    for definition in definitions:
        conforms(ToolParam, definition)
        assert definition["input_schema"]["type"] == "object"


def _objects(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema inside *schema*, with where it is."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _objects(item, f"{where}[{index}]")
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema:
        yield where or "(root)", schema
    for key in ("properties", "$defs"):
        for name, child in schema.get(key, {}).items():
            yield from _objects(child, f"{where}.{name}")
    for key in ("items", "anyOf", "prefixItems", "additionalProperties"):
        if key in schema:
            yield from _objects(schema[key], f"{where}.{key}")


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_strict_definitions_require_every_property_and_forbid_others_at_every_level(runtime: Runtime, api: str) -> None:
    tools = OpenAITools(runtime, api=api, strict=True)
    checked = 0
    for definition in tools.definitions():
        function = definition["function"] if api == "chat" else definition
        assert function["strict"] is True
        for where, schema in _objects(function["parameters"]):
            assert schema.get("additionalProperties") is False, f"{function['name']} {where}"
            assert schema.get("required") == list(schema.get("properties", {})), f"{function['name']} {where}"
            checked += 1
    assert checked == 11 + 7  # each tool's input, and seven objects inside demo.nested's


# -- a turn through each SDK: success, and each error a model can cause ---------------------------------

SUCCESS = (ScriptedCall("math_eval", {"expression": "(2 + 3) * 4"}), "20")
MISTAKES = {
    "TOOL_NOT_FOUND": (
        ScriptedCall("math.eval", {"expression": "(2 + 3) * 4"}),
        'TOOL_NOT_FOUND: "math.eval" is not a registered tool name.\n'
        'Call a registered tool instead, such as "math_eval".',
    ),
    "INPUT_INVALID-field": (
        ScriptedCall("math_eval", {"expresion": "(2 + 3) * 4"}),
        "INPUT_INVALID: math_eval was called with invalid input (2 problems):\n"
        '- "expression" is required (a string).\n'
        '- "expresion" is an unexpected field; did you mean "expression"?\n'
        "Fix the arguments and call math_eval again.",
    ),
    "PERMISSION_DENIED": (
        ScriptedCall("fs_write", {"path": "notes.txt", "content": "milk"}),
        'PERMISSION_DENIED: fs_write requires the "fs:write" permission, which was not granted.\n'
        "Retrying with different arguments will not help.",
    ),
    "TOOL_FAILED": (
        ScriptedCall("demo_fail", {"text": "anything"}),
        "TOOL_FAILED: demo_fail failed: its handler raised RuntimeError.\n"
        "This is a fault in the tool, not in how it was called. Calling it again will not help: use another "
        "tool, or tell the user.",
    ),
    "OUTPUT_INVALID": (
        ScriptedCall("demo_wrong", {"text": "four"}),
        "OUTPUT_INVALID: demo_wrong returned invalid output: output must be an integer, got string.\n"
        "This is a fault in the tool, not in how it was called. Calling it again will not help.",
    ),
}
# Only OpenAI's models send arguments as text, which may not be JSON: a comma is missing on line 3.
NOT_JSON = (
    ScriptedCall("math_eval", '{"expression":\n  "(2 + 3) * 4"\n  "precision": 2}'),
    "INPUT_INVALID: math_eval was called with invalid input: input is not valid JSON: Expecting ',' delimiter "
    "at line 3, column 3; send a JSON object.\nFix the arguments and call math_eval again.",
)
OPENAI_CASES = {"success": SUCCESS, **MISTAKES, "INPUT_INVALID-not-json": NOT_JSON}
ANTHROPIC_CASES = {"success": SUCCESS, **MISTAKES}


@pytest.mark.parametrize(("call", "expected"), OPENAI_CASES.values(), ids=OPENAI_CASES.keys())
def test_chat_completions_turn(runtime: Runtime, call: ScriptedCall, expected: str) -> None:
    tools = OpenAITools(runtime)
    model, results = chat_turn(tools, [call, "Done."])
    first, second = (request.body for request in model.requests)
    assert first["tools"] == tools.definitions()
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": expected}
    assert results == [second["messages"][-1]]


@pytest.mark.parametrize(("call", "expected"), OPENAI_CASES.values(), ids=OPENAI_CASES.keys())
def test_responses_turn(runtime: Runtime, call: ScriptedCall, expected: str) -> None:
    tools = OpenAITools(runtime, api="responses")
    model, results = responses_turn(tools, [call, "Done."])
    first, second = (request.body for request in model.requests)
    assert first["tools"] == tools.definitions()
    assert second["input"][-1] == {"type": "function_call_output", "call_id": "call_1", "output": expected}
    assert results == [second["input"][-1]]


@pytest.mark.parametrize(("call", "expected"), ANTHROPIC_CASES.values(), ids=ANTHROPIC_CASES.keys())
def test_anthropic_turn(runtime: Runtime, call: ScriptedCall, expected: str) -> None:
    tools = AnthropicTools(runtime)
    model, results = anthropic_turn(tools, [call, "Done."])
    first, second = (request.body for request in model.requests)
    assert first["tools"] == tools.definitions()
    assert second["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": expected, "is_error": expected != SUCCESS[1]}
        ],
    }
    assert results == second["messages"][-1]["content"]


# -- several calls in one turn: handle_all keeps the model's order and runs them at once ----------------


def rendezvous(patience: float = 2.0) -> list[Tool]:
    """Two async tools that each wait (*patience* seconds at most) for the other to have started.

    Run one after the other, the first fails: its partner has not started.
    """
    started: dict[str, asyncio.Event] = {}

    def event(name: str) -> asyncio.Event:
        return started.setdefault(name, asyncio.Event())  # made in the running loop, on first use

    @tool(name="meet.left", version="1.0.0")
    async def left() -> str:
        """Wait until right has started."""
        event("left").set()
        await asyncio.wait_for(event("right").wait(), timeout=patience)
        return "left met right"

    @tool(name="meet.right", version="1.0.0")
    async def right() -> str:
        """Wait until left has started, then finish last."""
        event("right").set()
        await asyncio.wait_for(event("left").wait(), timeout=patience)
        await asyncio.sleep(0.05)  # finishes after left, though the model called it first
        return "right met left"

    return [left, right]


# The model's order: right (which finishes last), math, left.
TURN = [ScriptedCall("meet_right"), ScriptedCall("math_eval", {"expression": "6 * 7"}), ScriptedCall("meet_left")]
ANSWERS = ["right met left", "42", "left met right"]


@pytest.fixture
def meeting(bundled: Runtime) -> Runtime:
    return Runtime([*rendezvous(), *bundled.tools.values()], schemas=bundled.schemas)


def test_handle_all_chat_completions(meeting: Runtime) -> None:
    model, results = asyncio.run(chat_turn_async(OpenAITools(meeting), [TURN, "Done."]))
    sent = model.requests[1].body["messages"][-3:]
    assert sent == results
    assert sent == [
        {"role": "tool", "tool_call_id": f"call_{number}", "content": answer}
        for number, answer in enumerate(ANSWERS, 1)
    ]


def test_handle_all_responses(meeting: Runtime) -> None:
    model, results = asyncio.run(responses_turn_async(OpenAITools(meeting, api="responses"), [TURN, "Done."]))
    second = model.requests[1].body
    assert second["previous_response_id"] == "resp_1"
    assert second["input"] == results
    assert results == [
        {"type": "function_call_output", "call_id": f"call_{number}", "output": answer}
        for number, answer in enumerate(ANSWERS, 1)
    ]


def test_handle_all_anthropic(meeting: Runtime) -> None:
    model, results = asyncio.run(anthropic_turn_async(AnthropicTools(meeting), [TURN, "Done."]))
    sent = model.requests[1].body["messages"][-1]
    assert sent == {"role": "user", "content": results}
    assert results == [
        {"type": "tool_result", "tool_use_id": f"toolu_{number}", "content": answer, "is_error": False}
        for number, answer in enumerate(ANSWERS, 1)
    ]


def test_handle_all_in_sequence_would_time_out() -> None:
    """The proof holds: one call alone waits for a partner that never starts, and fails."""
    alone = OpenAITools(Runtime(rendezvous(patience=0.05))).handle_sync(
        {"id": "call_1", "function": {"name": "meet_left", "arguments": "{}"}}
    )
    assert alone["content"].startswith("TOOL_FAILED: meet_left failed: its handler raised TimeoutError.")


# -- strict mode: a null sent for an optional field is that field left out --------------------------------

NULLS = ScriptedCall(
    "demo_nested",
    {
        "items": [{"name": "a", "meta": None}, {"name": "b", "meta": {"k": 1}}],
        "pair": ["x", {"z": True}],
        "either": {"b": 2},
        "maybe": None,
        "options": {"size": None, "label": None},
    },
)
# What the handler got: meta left out, size's default applied, label left out; maybe is nullable, so null stays.
PARSED = (
    '{"items": [{"name": "a"}, {"name": "b", "meta": {"k": 1}}], "pair": ["x", {"z": true}], '
    '"either": {"b": 2}, "maybe": null, "options": {"size": 10}}'
)


def test_strict_chat_takes_null_as_absent(runtime: Runtime) -> None:
    greeting = ScriptedCall("demo_greet", {"name": "Ada", "punctuation": None})
    model, _ = chat_turn(OpenAITools(runtime, strict=True), [[greeting, NULLS], "Done."])
    assert [message["content"] for message in model.requests[1].body["messages"][-2:]] == ["Hello, Ada!", PARSED]


def test_strict_responses_takes_null_as_absent(runtime: Runtime) -> None:
    greeting = ScriptedCall("demo_greet", {"name": "Ada", "punctuation": None})
    model, _ = responses_turn(OpenAITools(runtime, api="responses", strict=True), [[greeting, NULLS], "Done."])
    assert [item["output"] for item in model.requests[1].body["input"][-2:]] == ["Hello, Ada!", PARSED]


def test_without_strict_a_null_is_a_wrong_value(runtime: Runtime) -> None:
    greeting = ScriptedCall("demo_greet", {"name": "Ada", "punctuation": None})
    model, _ = chat_turn(OpenAITools(runtime), [greeting, "Done."])
    assert model.requests[1].body["messages"][-1]["content"] == (
        'INPUT_INVALID: demo_greet was called with invalid input: "punctuation" must be a string, got null.\n'
        "Fix the arguments and call demo_greet again."
    )
