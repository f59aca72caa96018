"""The front door: one way in and out for the adapters, the MCP server and the command line."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from mcp import Client

from hermes_core import InputInvalidError, OutputInvalidError, Runtime, ToolNotFoundError, define_tool
from hermes_core import schema as s
from hermes_core._door._door import Door
from hermes_core._door._wire import WireNames
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.serve import ERROR_META_KEY, mcp_server


def _add(args: dict[str, Any]) -> int:
    return int(args["a"] + args["b"])


def _echo(args: Any) -> Any:
    return args


def _runtime(*grants: str) -> Runtime:
    add = define_tool(
        name="math.add",
        description="Add two integers; math.add_all adds more.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        output=s.integer(),
        handler=_add,
        permissions=["math:use"],
    )
    echo = define_tool(
        name="echo",
        description="Echo.",
        version="1.0.0",
        input=s.object({"x": s.optional(s.any())}),
        output=s.any(),
        handler=_echo,
    )
    return Runtime([add, echo], grants=grants)


def _edges(runtime: Runtime, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """What each edge sends back for one call: the OpenAI and Anthropic messages' texts, and MCP's result."""
    text = json.dumps(arguments)
    openai = OpenAITools(runtime).handle_sync({"id": "c", "function": {"name": name, "arguments": text}})
    anthropic = AnthropicTools(runtime).handle_sync({"id": "t", "name": name, "input": arguments})

    async def mcp() -> Any:
        async with Client(mcp_server(runtime)) as client:
            return await client.call_tool(name, arguments)

    result = asyncio.run(mcp())
    return {
        "openai": openai["content"],
        "anthropic": anthropic["content"],
        "mcp": result.content[0].text,
        "mcp_data": (result.meta or {}).get(ERROR_META_KEY),  # a failure's error, as data
        "mcp_structured": result.structured_content,
        "failed": (anthropic["is_error"], result.is_error),
    }


@pytest.mark.parametrize(
    ("name", "arguments", "grants", "code"),
    [
        ("math.add", {"a": 1, "b": 2}, ["math:use"], "TOOL_NOT_FOUND"),  # the tool's own name, not its wire name
        ("math_add", {"a": "x", "b": 2}, ["math:use"], "INPUT_INVALID"),
        ("math_add", {"a": 1, "b": 2}, [], "PERMISSION_DENIED"),
    ],
)
def test_a_failure_reads_the_same_at_every_edge(
    name: str, arguments: dict[str, Any], grants: list[str], code: str
) -> None:
    seen = _edges(_runtime(*grants), name, arguments)
    assert seen["failed"] == (True, True)
    assert seen["openai"] == seen["anthropic"] == seen["mcp"]
    assert seen["openai"].startswith(f"{code}: ")
    assert seen["mcp"] == f"{code}: {seen['mcp_data']['message']}"
    assert seen["mcp_data"]["code"] == code
    assert seen["mcp_structured"] is None  # a client may check it against the output schema
    # Told only wire names, in the text and in the data.
    assert "math.add" not in seen["openai"].replace('"math.add" is not', "")
    assert "math.add" not in json.dumps(seen["mcp_data"]).replace('"math.add\\" is not', "").replace(
        '"name": "math.add"', ""
    )


def test_a_result_reads_the_same_at_every_edge() -> None:
    seen = _edges(_runtime("math:use"), "math_add", {"a": 1, "b": 2})
    assert seen["failed"] == (False, False)
    assert seen["openai"] == seen["anthropic"] == seen["mcp"] == "3"


def test_serve_does_not_import_the_adapters() -> None:
    code = "import sys, hermes_core.serve; print('hermes_core.adapters' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"


def test_the_door_routes_wire_names_and_reads_json_text() -> None:
    runtime = _runtime("math:use")
    door = Door(runtime, WireNames(runtime.tools))
    assert door.call_sync("math_add", '{"a": 2, "b": 3}') == 5
    assert asyncio.run(_awaited(door.call("math_add", {"a": 2, "b": 3}))) == 5
    assert door.call_sync("echo", None) == {}
    with pytest.raises(ToolNotFoundError) as found:
        door.call_sync("math.add", "{}")
    assert found.value.suggestions == ("math_add",)
    with pytest.raises(InputInvalidError) as invalid:
        door.call_sync("math_add", '{"a": 1,')
    assert invalid.value.tool == "math_add"
    assert "is not valid JSON" in invalid.value.issues[0].detail


async def _awaited(call: Any) -> Any:
    return await call


def test_the_door_by_own_names_takes_values_already_read_and_shows_errors_as_they_are() -> None:
    runtime = _runtime("math:use")
    door = Door(runtime, None, timeout=60)  # a limit a busy machine does not reach: the call runs on a thread
    assert door.call_sync("math.add", {"a": 2, "b": 3}) == 5
    with pytest.raises(InputInvalidError) as text:  # a JSON string, as the command line read it: not read again
        door.call_sync("echo", '{"x": 1}')
    assert text.value.issues[0].detail.endswith("got string")
    with pytest.raises(ToolNotFoundError) as found:
        door.call_sync("math_add", {})
    assert found.value.suggestions == ("math.add",)
    assert door.shown(found.value) is found.value
    assert door.error_text(found.value) == f"TOOL_NOT_FOUND: {found.value}"


def test_an_error_naming_no_renamed_tool_is_shown_as_it_is() -> None:
    runtime = _runtime("math:use")
    names = WireNames(runtime.tools)
    with pytest.raises(InputInvalidError) as invalid:
        runtime.call_sync("echo", {"y": 1})
    assert names.shown(invalid.value) is invalid.value  # echo is its own wire name; nothing mentions math.add
    undotted = WireNames(["echo", "search"])
    with pytest.raises(InputInvalidError) as other:
        runtime.call_sync("math.add", {"a": "x", "b": 1})
    assert undotted.shown(other.value) is other.value  # no tool of these is renamed


def test_a_detail_naming_a_tool_is_rewritten_only_where_it_stands_as_a_name() -> None:
    names = WireNames(["math.add", "math.add_all"])
    assert names.rewrite("see math.add.") == "see math_add."
    assert names.rewrite("see xmath.add or math.add_all") == "see xmath.add or math_add_all"
    assert names.rewrite("math.adds and math.add.x") == "math.adds and math.add.x"


def _call_through(door: Door, arguments: dict[str, Any], *, awaited: bool) -> Any:
    if awaited:
        return asyncio.run(_awaited(door.call("math_add", arguments)))
    return door.call_sync("math_add", arguments)


@pytest.mark.parametrize("awaited", [False, True])
def test_an_input_or_output_refused_at_the_door_is_built_once_under_the_wire_name(awaited: bool) -> None:
    runtime = _runtime("math:use")
    door = Door(runtime, WireNames(runtime.tools))
    three = define_tool(
        name="math.add",
        description="Add.",
        version="1.0.0",
        input=s.object({}),
        output=s.integer(),
        handler=lambda args: "three",
    )
    broken = Runtime([three])
    broken_door = Door(broken, WireNames(broken.tools))
    for gate, arguments in ((door, {"a": "x", "b": 2}), (broken_door, {})):
        with pytest.raises((InputInvalidError, OutputInvalidError)) as refused:
            _call_through(gate, arguments, awaited=awaited)
        assert refused.value.tool == "math_add"
        assert "math_add" in refused.value.message
        assert "math.add" not in refused.value.message
        assert refused.value.__cause__ is None  # built under the name the call used, never rebuilt
        assert gate.shown(refused.value) is refused.value
    # The tool's own callers still read its own name.
    with pytest.raises(InputInvalidError) as direct:
        runtime.call_sync("math.add", {"a": "x", "b": 2})
    assert direct.value.tool == "math.add"


# -- what models really send, at the edges of the bounds -------------------------------------------


def _chat(name: Any, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def _echoing(lenient: bool = False) -> OpenAITools:
    echo = define_tool(
        name="echo",
        description="Echo the value.",
        version="1.0.0",
        input=s.object({"v": s.any()}),
        output=s.any(),
        handler=_echo,
    )
    take = define_tool(
        name="num.take",
        description="Take a number.",
        version="1.0.0",
        input=s.object({"n": s.number()}),
        handler=lambda args: args["n"],
    )
    return OpenAITools(Runtime([echo, take]), lenient=lenient)


@pytest.mark.parametrize("frames", [0, 40, 200])
def test_arguments_nested_up_to_what_the_reader_takes_are_refused_at_the_field_from_any_stack(frames: int) -> None:
    """Nested just short of the JSON reader's limit, they passed the checks and broke writing the result.

    Every depth from the bound to past the reader's limit is a readable INPUT_INVALID naming the field,
    whatever depth of stack the adapter is called from; the bound's own depth is echoed back.
    """
    tools = _echoing()

    def handle(depth: int, call: dict[str, Any]) -> dict[str, Any]:
        return handle(depth - 1, call) if depth else tools.handle_sync(call)

    accepted = handle(frames, _chat("echo", '{"v": ' + "[" * 99 + "]" * 99 + "}"))["content"]
    assert json.loads(accepted) == {"v": json.loads("[" * 99 + "]" * 99)}
    for nest in (101, 500, *range(900, 1001, 7), 5000):
        content = handle(frames, _chat("echo", '{"v": ' + "[" * nest + "]" * nest + "}"))["content"]
        assert content.startswith("INPUT_INVALID: echo was called with invalid input: "), (nest, content[:200])
        assert ("must nest arrays and objects at most 100 levels deep" in content) or (
            "nests arrays and objects too deeply" in content
        ), (nest, content[:200])


def test_a_lenient_repair_meeting_an_exponent_beyond_decimal_gives_the_strict_error() -> None:
    tools = _echoing(lenient=True)
    for text in ("1e-99999999999999999999999", "1e99999999999999999999"):
        content = tools.handle_sync(_chat("num_take", json.dumps({"n": text})))["content"]
        assert content.startswith('INPUT_INVALID: num_take was called with invalid input: "n" must be a number'), text
    assert tools.handle_sync(_chat("num_take", '{"n": "2.5"}'))["content"].startswith("2.5\nNote:")
    # Zero is zero whatever its exponent: exactly the value it names.
    zero = tools.handle_sync(_chat("num_take", '{"n": "0.0e-99999999999999999999999999"}'))["content"]
    assert zero.startswith("0.0\nNote:")


def test_an_unexpected_key_of_megabytes_is_shortened_and_not_compared() -> None:
    for key in ("a" * 8_000_000, "a." * 4_000_000):
        content = _echoing().handle_sync(_chat("num_take", json.dumps({"n": 1, key: 1})))["content"]
        assert len(content) < 400
        assert 'is an unexpected field; allowed fields are "n"' in content


def test_a_call_that_names_no_tool_says_so() -> None:
    tools = _echoing()
    call = {"id": "call_1", "type": "function", "function": {"arguments": "{}"}}
    assert tools.handle_sync(call)["content"] == (
        "TOOL_NOT_FOUND: the call names no tool: its name is missing or not a string.\nCall a registered tool instead."
    )
    assert tools.handle_sync(_chat("", "{}"))["content"].startswith(
        "TOOL_NOT_FOUND: the call names no tool: its name is empty."
    )


def test_arguments_in_a_markdown_code_fence_are_refused_saying_so() -> None:
    for text in ('```json\n{"n": 1}\n```', '  ```\n{"n": 1}\n```'):
        content = _echoing().handle_sync(_chat("num_take", text))["content"]
        assert content == (
            "INPUT_INVALID: num_take was called with invalid input: input is not valid JSON: it is wrapped in a "
            "Markdown code fence (```); send the JSON object alone.\nFix the arguments and call num_take again."
        )
