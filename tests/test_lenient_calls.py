"""Lenient mode in a call: the runtime, the precedence of tool, adapter and runtime, the edges, the span.

The repair rules themselves are tests/test_lenient.py's; this file holds what a
call does with them: repairs an input its schema refused, calls again, and says
what was assumed wherever a result goes.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest

from hermes_core import InputInvalidError, Runtime, define_tool, reject, tool
from hermes_core import schema as s
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.serve import mcp_server
from hermes_core.testing import ScriptedCall, ScriptedModel

AREA_INPUT = s.object(
    {
        "radius": s.number(minimum=0),
        "unit": s.optional(s.enum(["m", "cm"]), default="m"),
        "round": s.optional(s.boolean(), default=True),
    }
)
NOTE = (
    'Note: the arguments were repaired before the call: "radius": "2" read as 2; "unit": "CM" read as "cm". '
    "Next time, send them as read."
)
SENT = {"radius": "2", "unit": "CM"}


def area(args: dict[str, Any]) -> str:
    return f"{3.14159 * args['radius'] ** 2:.1f} {args['unit']}2"


def make(lenient: bool | None = None, name: str = "geo.area") -> Any:
    return define_tool(
        name=name, description="A circle's area.", version="1.0.0", input=AREA_INPUT, handler=area, lenient=lenient
    )


# -- the runtime ---------------------------------------------------------------------------------------


def test_a_lenient_runtime_repairs_and_calls_with_what_was_meant() -> None:
    runtime = Runtime([make()], lenient=True)
    assert runtime.call_sync("geo.area", SENT) == "12.6 cm2"
    assert asyncio.run(runtime.call("geo.area", SENT)) == "12.6 cm2"


def test_observe_carries_the_repairs_as_data() -> None:
    runtime = Runtime([make()], lenient=True)
    expected = {
        "ok": True,
        "output": "12.6 cm2",
        "repairs": [
            {
                "path": ["radius"],
                "sent": "2",
                "became": 2,
                "rule": "numeric_string",
                "message": '"radius": "2" read as 2',
            },
            {
                "path": ["unit"],
                "sent": "CM",
                "became": "cm",
                "rule": "enum_case",
                "message": '"unit": "CM" read as "cm"',
            },
        ],
    }
    assert runtime.observe_sync("geo.area", SENT) == expected
    assert asyncio.run(runtime.observe("geo.area", SENT)) == expected
    assert runtime.observe_sync("geo.area", {"radius": 2}) == {"ok": True, "output": "12.6 m2"}  # nothing repaired


def test_off_by_default_the_same_input_is_refused_naming_every_issue() -> None:
    with pytest.raises(InputInvalidError) as refused:
        Runtime([make()]).call_sync("geo.area", SENT)
    assert [issue.path for issue in refused.value.issues] == [("radius",), ("unit",)]


def test_what_cannot_be_repaired_is_refused_as_it_was_sent() -> None:
    runtime = Runtime([make()], lenient=True)
    with pytest.raises(InputInvalidError) as refused:
        runtime.call_sync("geo.area", {"radius": "2", "unit": "km"})  # "km" is no unit: nothing is repaired
    assert [(issue.path, issue.kind) for issue in refused.value.issues] == [
        (("radius",), "type"),
        (("unit",), "enum"),
    ]


def test_a_handlers_own_refusal_is_never_repaired_nor_the_handler_run_twice() -> None:
    runs: list[Any] = []

    def picky(args: dict[str, Any]) -> str:
        runs.append(args)
        raise reject("radius", "must be a whole number of metres")

    runtime = Runtime(
        [define_tool(name="geo.picky", description="Picky.", version="1.0.0", input=AREA_INPUT, handler=picky)],
        lenient=True,
    )
    with pytest.raises(InputInvalidError):
        runtime.call_sync("geo.picky", {"radius": 2.5})
    assert len(runs) == 1


def test_a_refusal_from_a_call_the_handler_made_is_not_repaired_as_its_own() -> None:
    inner = make(name="geo.inner")
    holder: list[Runtime] = []

    def outer(args: dict[str, Any]) -> Any:
        return holder[0].call_sync("geo.inner", {"radius": "x"})  # refused: "x" is no number, whoever is lenient

    runtime = Runtime(
        [inner, define_tool(name="geo.outer", description="Outer.", version="1.0.0", input=AREA_INPUT, handler=outer)],
        lenient=True,
    )
    holder.append(runtime)
    with pytest.raises(InputInvalidError) as refused:
        runtime.call_sync("geo.outer", {"radius": "1"})
    assert refused.value.tool == "geo.inner"


# -- who decides: the tool, then the adapter, then the runtime --------------------------------------------


@pytest.mark.parametrize(
    ("tool_choice", "adapter_choice", "runtime_choice", "repaired"),
    [
        (None, None, False, False),
        (None, None, True, True),
        (None, True, False, True),
        (None, False, True, False),
        (True, False, False, True),
        (False, True, True, False),
        (True, None, False, True),
        (False, None, True, False),
    ],
)
def test_the_tools_choice_wins_then_the_adapters_then_the_runtimes(
    tool_choice: bool | None, adapter_choice: bool | None, runtime_choice: bool, repaired: bool
) -> None:
    runtime = Runtime([make(tool_choice)], lenient=runtime_choice)
    tools = OpenAITools(runtime, lenient=adapter_choice)
    message = tools.handle_sync({"id": "c1", "function": {"name": "geo_area", "arguments": json.dumps(SENT)}})
    assert message["content"].startswith("12.6 cm2\n" if repaired else "INPUT_INVALID: ")
    direct = runtime.observe_sync("geo.area", SENT)  # the runtime alone: the tool's choice, else its own
    assert direct["ok"] is (tool_choice if tool_choice is not None else runtime_choice)


def test_a_malformed_choice_is_refused_where_it_is_made() -> None:
    from hermes_core import InvalidDefinitionError

    with pytest.raises(InvalidDefinitionError, match="lenient"):
        Runtime([make()], lenient="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidDefinitionError, match="lenient"):
        OpenAITools(Runtime([make()]), lenient=1)  # type: ignore[arg-type]


# -- the edges: what the model reads ---------------------------------------------------------------------


def test_chat_completions_a_repaired_call_tells_the_model_what_was_assumed() -> None:
    tools = OpenAITools(Runtime([make()]), lenient=True)
    script = [ScriptedCall("geo_area", SENT), "Done."]
    with ScriptedModel(script) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="test") as client:
        messages: list[Any] = [{"role": "user", "content": "How big is a circle of 2 cm?"}]
        response = client.chat.completions.create(model="scripted", messages=messages, tools=tools.definitions())
        message = response.choices[0].message
        results = [tools.handle_sync(call) for call in message.tool_calls or []]
        client.chat.completions.create(
            model="scripted", messages=[*messages, message, *results], tools=tools.definitions()
        )
    sent_back = model.requests[1].body["messages"][-1]
    assert sent_back == {"role": "tool", "tool_call_id": "call_1", "content": "12.6 cm2\n" + NOTE}


def test_anthropic_a_repaired_call_tells_the_model_what_was_assumed() -> None:
    tools = AnthropicTools(Runtime([make()], lenient=True))
    script = [ScriptedCall("geo_area", SENT), "Done."]

    async def turn() -> list[dict[str, Any]]:
        async with anthropic.AsyncAnthropic(base_url=model.base_url, api_key="test") as client:
            messages: list[Any] = [{"role": "user", "content": "How big is a circle of 2 cm?"}]
            definitions: Any = tools.definitions()
            response = await client.messages.create(
                model="scripted", max_tokens=99, messages=messages, tools=definitions
            )
            results = await tools.handle_all(block for block in response.content if block.type == "tool_use")
            messages += [{"role": "assistant", "content": response.content}, {"role": "user", "content": results}]
            await client.messages.create(model="scripted", max_tokens=99, messages=messages, tools=definitions)
            return results

    with ScriptedModel(script) as model:
        results = asyncio.run(turn())
    assert results == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12.6 cm2\n" + NOTE, "is_error": False}
    ]
    assert model.requests[1].body["messages"][-1]["content"] == results


def test_responses_a_repaired_media_result_gets_the_note_as_a_last_text_item() -> None:
    from hermes_core import Content, Text

    shown = define_tool(
        name="geo.show",
        description="Show the area.",
        version="1.0.0",
        input=AREA_INPUT,
        handler=lambda args: Content(Text(area(args))),
        media=True,
    )
    tools = OpenAITools(Runtime([shown], lenient=True), api="responses")
    message = tools.handle_sync({"call_id": "c1", "name": "geo_show", "arguments": json.dumps(SENT)})
    assert message["output"] == [{"type": "input_text", "text": "12.6 cm2"}, {"type": "input_text", "text": NOTE}]


def test_an_mcp_client_gets_the_note_as_a_text_block_of_its_own() -> None:
    from mcp import Client

    async def scenario() -> Any:
        async with Client(mcp_server(Runtime([make()], lenient=True))) as client:
            return await client.call_tool("geo_area", SENT)

    result = asyncio.run(scenario())
    assert [block.text for block in result.content] == ["12.6 cm2", NOTE]
    assert result.structured_content == {"result": "12.6 cm2"}
    assert result.is_error is False


# -- the span --------------------------------------------------------------------------------------------


def test_the_repaired_calls_span_holds_the_repairs() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hermes_core import disable_tracing, enable_tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    try:
        Runtime([make()], lenient=True).call_sync("geo.area", SENT)
    finally:
        disable_tracing()
    (repaired,) = exporter.get_finished_spans()  # one call: repaired where its input was checked
    assert [dict(event.attributes or {}) for event in repaired.events] == [
        {
            "hermesos.repair.path": "radius",
            "hermesos.repair.rule": "numeric_string",
            "hermesos.repair.message": '"radius": "2" read as 2',
        },
        {
            "hermesos.repair.path": "unit",
            "hermesos.repair.rule": "enum_case",
            "hermesos.repair.message": '"unit": "CM" read as "cm"',
        },
    ]
    assert "error.type" not in (repaired.attributes or {})


# -- @tool -----------------------------------------------------------------------------------------------


def test_a_tool_function_may_choose_lenient_itself() -> None:
    @tool(name="geo.double", version="1.0.0", lenient=True)
    def double(n: int) -> int:
        """Double a number.

        Args:
            n: the number.
        """
        return 2 * n

    assert Runtime([double]).observe_sync("geo.double", {"n": "21"})["output"] == 42


def test_a_person_asked_to_approve_sees_the_repaired_input() -> None:
    from hermes_core import Approval, ApprovalRequest, Ask

    seen: list[Any] = []

    class Asking:
        def check(self, tool: Any, permission: str) -> Ask:
            return Ask()

    def approver(request: ApprovalRequest) -> Approval:
        seen.append(request.input)
        return Approval.once()

    guarded = define_tool(
        name="geo.guarded",
        description="A circle's area, asked about.",
        version="1.0.0",
        input=AREA_INPUT,
        permissions=["geo:area"],
        handler=area,
    )
    runtime = Runtime([guarded], providers=[Asking()], approver=approver, lenient=True)
    assert runtime.call_sync("geo.guarded", SENT) == "12.6 cm2"
    assert asyncio.run(runtime.call("geo.guarded", SENT)) == "12.6 cm2"
    assert seen == [{"radius": 2, "unit": "cm", "round": True}] * 2


# -- numbers: exactly the value the string names ------------------------------------------------------------


def test_a_numeric_string_reaches_the_handler_as_the_exact_number_it_names() -> None:
    from mcp import Client

    given: list[Any] = []

    def keep(args: dict[str, Any]) -> str:
        given.append(args)
        return "kept"

    counted = define_tool(
        name="num.keep",
        description="Keep the numbers.",
        version="1.0.0",
        input=s.object({"count": s.integer(), "share": s.optional(s.number())}),
        handler=keep,
    )
    tools = OpenAITools(Runtime([counted]), lenient=True)

    def chat(arguments: dict[str, Any]) -> str:
        call = {"id": "call_1", "function": {"name": "num_keep", "arguments": json.dumps(arguments)}}
        return str(tools.handle_sync(call)["content"])

    assert chat({"count": "1e25", "share": "1e25"}) == (
        'kept\nNote: the arguments were repaired before the call: "count": "1e25" read as 10000000000000000000000000; '
        '"share": "1e25" read as 10000000000000000000000000. Next time, send them as read.'
    )
    assert given[-1] == {"count": 10**25, "share": 10**25}  # not 10000000000000000905969664, the float 1e25
    assert type(given[-1]["count"]) is int
    assert chat({"count": "9007199254740993.0", "share": "0.5"}).startswith("kept\nNote:")
    assert given[-1] == {"count": 2**53 + 1, "share": 0.5}

    # "0.1" is the float the JSON number 0.1 reads as; more digits than a float keeps name another decimal: the call
    # fails as it does without lenient mode, and the handler is not run.
    assert chat({"count": 1, "share": "0.1"}).startswith("kept\nNote:")
    assert given[-1] == {"count": 1, "share": 0.1}
    strict = OpenAITools(Runtime([counted]))
    arguments = '{"count": 1, "share": "0.1000000000000000000001"}'
    call = {"id": "call_1", "function": {"name": "num_keep", "arguments": arguments}}
    refused = tools.handle_sync(call)["content"]
    assert refused == strict.handle_sync(call)["content"]
    assert refused.startswith('INPUT_INVALID: num_keep was called with invalid input: "share" must be a number')
    assert len(given) == 3

    async def over_mcp() -> Any:
        async with Client(mcp_server(Runtime([counted], lenient=True))) as client:
            return await client.call_tool("num_keep", {"count": "1e29"})

    result = asyncio.run(over_mcp())
    assert result.is_error is False
    assert given[-1] == {"count": 10**29}
    assert result.content[-1].text.endswith(
        '"count": "1e29" read as 100000000000000000000000000000. Next time, send them as read.'
    )
