"""The OpenAI and Anthropic adapters, as data: definitions, strict mode, and what each call gets back."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace
from typing import Annotated, Any

import pytest

from hermes_core import InvalidDefinitionError, Runtime, ToolFailedError, ToolHints, define_tool, reject, tool
from hermes_core import schema as s
from hermes_core.adapters import ARGUMENTS_MAX, AnthropicTools, OpenAITools, result_text


@tool(
    name="notes.search",
    version="1.0.0",
    permissions=["notes:read"],
    hints=ToolHints(title="Search notes", read_only=True),
)
def search(
    text: Annotated[str, s.string(min_length=1, max_length=80)], limit: int = 10, tag: str | None = None
) -> list[str]:
    """Search the notes, newest first; see notes.add to add one.

    Args:
        text: words to look for.
        limit: the most notes to return.
        tag: only notes with this tag.
    """
    return [f"{text}:{limit}:{tag}"]


@tool(name="notes.add", version="1.0.0", permissions=["notes:write"])
def add(text: str) -> int:
    """Add a note."""
    if text == "boom":
        raise RuntimeError("the disk is on fire")
    if text == "full":
        raise ToolFailedError("the notebook is full", retryable=False)
    if text == "dup":
        raise reject("text", "is already a note; search with notes.search")
    return 1


@tool(name="notes.count", version="1.0.0")
def count() -> Annotated[int, s.integer(minimum=0)]:
    """Count the notes (badly)."""
    return -1


def runtime(*grants: str) -> Runtime:
    return Runtime([search, add, count], grants=grants)


def chat_call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- definitions ---------------------------------------------------------------------------------------


SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1, "maxLength": 80, "description": "words to look for."},
        "limit": {"type": "integer", "default": 10, "description": "the most notes to return."},
        "tag": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "default": None,
            "description": "only notes with this tag.",
        },
    },
    "required": ["text"],
    "additionalProperties": False,
}
SEARCH_DESCRIPTION = "Search the notes, newest first; see notes_add to add one."


def test_chat_completions_definitions() -> None:
    (first, *_) = OpenAITools(runtime()).definitions()
    assert first == {
        "type": "function",
        "function": {"name": "notes_search", "description": SEARCH_DESCRIPTION, "parameters": SEARCH_PARAMETERS},
    }


def test_responses_definitions() -> None:
    (first, *_) = OpenAITools(runtime(), api="responses").definitions()
    assert first == {
        "type": "function",
        "name": "notes_search",
        "description": SEARCH_DESCRIPTION,
        "parameters": SEARCH_PARAMETERS,
        "strict": False,  # required by the Responses API, which takes a function without it as strict
    }


def test_anthropic_definitions() -> None:
    (first, *_) = AnthropicTools(runtime()).definitions()
    assert first == {"name": "notes_search", "description": SEARCH_DESCRIPTION, "input_schema": SEARCH_PARAMETERS}


def test_strict_definitions_require_every_property_and_make_the_optional_nullable() -> None:
    (first, *_) = OpenAITools(runtime(), strict=True).definitions()
    assert first["function"] == {
        "name": "notes_search",
        "description": SEARCH_DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "words to look for."},
                "limit": {"type": ["integer", "null"], "description": "the most notes to return."},
                "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "only notes with this tag."},
            },
            "required": ["text", "limit", "tag"],
            "additionalProperties": False,
        },
        "strict": True,
    }


def test_strict_mode_reaches_nested_objects_refs_enums_and_tuples() -> None:
    node = s.object({"name": s.string(pattern="^[a-z]+$"), "kind": s.optional(s.enum(["a", "b"]))})
    nested = define_tool(
        name="demo.nested",
        description="Nested.",
        version="1.0.0",
        input=s.object(
            {
                "node": s.ref("demo.node"),
                "pairs": s.optional(s.array(s.tuple(s.integer(minimum=0), s.string()), max_items=3)),
                "inner": s.object({"deep": s.optional(s.object({"x": s.optional(s.number(maximum=1))}))}),
            }
        ),
        handler=lambda args: args,
    )
    parameters = OpenAITools(Runtime([nested], schemas={"demo.node": node}), strict=True).definitions()[0]["function"][
        "parameters"
    ]
    assert parameters == {
        "type": "object",
        "properties": {
            "node": {"$ref": "#/$defs/demo.node"},
            "pairs": {
                "type": ["array", "null"],
                "items": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
            },
            "inner": {
                "type": "object",
                "properties": {
                    "deep": {
                        "type": ["object", "null"],
                        "properties": {"x": {"type": ["number", "null"]}},
                        "additionalProperties": False,
                        "required": ["x"],
                    }
                },
                "additionalProperties": False,
                "required": ["deep"],
            },
        },
        "required": ["node", "pairs", "inner"],
        "additionalProperties": False,
        "$defs": {
            "demo.node": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "kind": {"enum": ["a", "b", None]}},
                "required": ["name", "kind"],
                "additionalProperties": False,
            }
        },
    }


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (s.object({"meta": s.any()}), 'field "meta" accepts any JSON value (s.any()), which strict mode cannot say'),
        (
            s.object({"tags": s.record(s.string())}),
            'field "tags" is a record (s.record()), whose keys strict mode cannot leave open',
        ),
        (
            s.object({"a": s.object({}, extra="allow")}),
            "field \"a\" allows unknown keys (extra='allow'), which strict mode forbids",
        ),
    ],
)
def test_what_strict_mode_cannot_say_is_refused_when_the_adapter_is_built(schema: s.Schema, problem: str) -> None:
    loose = define_tool(name="demo.loose", description="Loose.", version="1.0.0", input=schema, handler=dict)
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(Runtime([loose]), strict=True)
    assert str(caught.value) == f'tool "demo.loose": input cannot be given to OpenAI\'s strict mode: {problem}.'
    assert OpenAITools(Runtime([loose])).definitions()  # fine without strict


def test_the_adapters_refuse_two_tools_with_one_wire_name_and_bad_options() -> None:
    twin = define_tool(name="notes_search", description="Twin.", version="1.0.0", input=s.object({}), handler=dict)
    for build in (OpenAITools, AnthropicTools):
        with pytest.raises(InvalidDefinitionError, match=r'^tools "notes.search" and "notes_search" have the same'):
            build(Runtime([search, twin]))
    with pytest.raises(InvalidDefinitionError, match=r"^OpenAITools\(\): api must be 'chat' or 'responses'"):
        OpenAITools(runtime(), api="completions")  # type: ignore[arg-type]
    with pytest.raises(InvalidDefinitionError, match=r"^OpenAITools\(\): strict must be True or False"):
        OpenAITools(runtime(), strict="yes")  # type: ignore[arg-type]


# -- handling calls ------------------------------------------------------------------------------------


def test_a_successful_chat_call() -> None:
    tools = OpenAITools(runtime("notes:read"))
    message = tools.handle_sync(chat_call("notes_search", '{"text": "milk"}'))
    assert message == {"role": "tool", "tool_call_id": "call_1", "content": '["milk:10:None"]'}


def test_a_call_given_as_an_sdk_object() -> None:
    call = SimpleNamespace(id="call_9", function=SimpleNamespace(name="notes_search", arguments='{"text": "tea"}'))
    assert OpenAITools(runtime("notes:read")).handle_sync(call)["content"] == '["tea:10:None"]'
    block = SimpleNamespace(type="tool_use", id="toolu_1", name="notes_search", input={"text": "tea", "limit": 2})
    assert AnthropicTools(runtime("notes:read")).handle_sync(block) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": '["tea:2:None"]',
        "is_error": False,
    }


def test_a_responses_call() -> None:
    tools = OpenAITools(runtime("notes:read"), api="responses")
    item = {"type": "function_call", "call_id": "fc_1", "name": "notes_search", "arguments": '{"text": "x"}'}
    assert tools.handle_sync(item) == {"type": "function_call_output", "call_id": "fc_1", "output": '["x:10:None"]'}


ERRORS = [
    (
        "notes.search",
        '{"text": "milk"}',
        'TOOL_NOT_FOUND: "notes.search" is not a registered tool name.\n'
        'Call a registered tool instead, such as "notes_search".',
    ),
    (
        "notes_search",
        '{"text": "milk", ',
        "INPUT_INVALID: notes_search was called with invalid input: input is not valid JSON: Expecting property "
        "name enclosed in double quotes at line 1, column 18; send a JSON object.\n"
        "Fix the arguments and call notes_search again.",
    ),
    (
        "notes_search",
        '{"txt": "milk", "limit": 0.5}',
        "INPUT_INVALID: notes_search was called with invalid input (3 problems):\n"
        '- "text" is required (a string).\n'
        '- "limit" must be an integer, got number.\n'
        '- "txt" is an unexpected field; did you mean "text"?\n'
        "Fix the arguments and call notes_search again.",
    ),
    (
        "notes_add",
        '{"text": "milk"}',
        'PERMISSION_DENIED: notes_add requires the "notes:write" permission, which was not granted.\n'
        "Retrying with different arguments will not help.",
    ),
]


@pytest.mark.parametrize(("name", "arguments", "content"), ERRORS, ids=["not-found", "not-json", "invalid", "denied"])
def test_what_a_model_gets_for_each_mistake(name: str, arguments: str, content: str) -> None:
    assert OpenAITools(runtime("notes:read")).handle_sync(chat_call(name, arguments))["content"] == content
    anthropic_input = json.loads(arguments) if arguments.endswith("}") else arguments
    result = AnthropicTools(runtime("notes:read")).handle_sync(
        {"type": "tool_use", "id": "toolu_1", "name": name, "input": anthropic_input}
    )
    assert result["is_error"] is True
    assert result["content"] == content


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (
            "boom",
            "TOOL_FAILED: notes_add failed: its handler raised RuntimeError.\n"
            "This is a fault in the tool, not in how it was called. Calling it again will not help: use another "
            "tool, or tell the user.",
        ),
        (
            "full",
            "TOOL_FAILED: notes_add failed: the notebook is full.\n"
            "This is a fault in the tool, not in how it was called. Calling it again will not help: use another "
            "tool, or tell the user.",
        ),
        (
            "dup",
            'INPUT_INVALID: notes_add was called with invalid input: "text" is already a note; search with '
            "notes_search.\nFix the arguments and call notes_add again.",
        ),
    ],
)
def test_a_handler_that_fails_or_refuses_reaches_the_model_under_wire_names(text: str, content: str) -> None:
    message = OpenAITools(runtime("notes:*")).handle_sync(chat_call("notes_add", json.dumps({"text": text})))
    assert message["content"] == content


def test_a_result_that_breaks_its_schema_is_output_invalid() -> None:
    result = AnthropicTools(runtime()).handle_sync({"id": "t", "name": "notes_count", "input": {}})
    assert result == {
        "type": "tool_result",
        "tool_use_id": "t",
        "content": "OUTPUT_INVALID: notes_count returned invalid output: output must be at least 0.\n"
        "This is a fault in the tool, not in how it was called. Calling it again will not help.",
        "is_error": True,
    }


@pytest.mark.parametrize(
    "call",
    [
        {},
        {"id": 3, "function": None},
        {"id": "c", "function": {"name": 7, "arguments": 5}},
        {"id": "c", "function": {"name": "notes_search", "arguments": "[1, 2]"}},
        {"id": "c", "function": {"name": "notes_search", "arguments": "[" * 100_000}},
        {"id": "c", "function": {"name": "notes_search", "arguments": "NaN"}},
        {"id": "c", "function": {"name": "notes_search", "arguments": "\ud800"}},
        "not a call",
        None,
    ],
    ids=["empty", "no-function", "odd-types", "array", "deep", "nan", "surrogate", "string", "none"],
)
def test_nothing_a_model_sends_makes_handle_raise(call: Any) -> None:
    message = OpenAITools(runtime("notes:read")).handle_sync(call)
    assert message["role"] == "tool"
    assert message["content"].split(":")[0] in {"TOOL_NOT_FOUND", "INPUT_INVALID"}


def test_arguments_too_long_to_read_are_refused_before_parsing() -> None:
    huge = '{"text": "' + "a" * ARGUMENTS_MAX + '"}'
    content = OpenAITools(runtime("notes:read")).handle_sync(chat_call("notes_search", huge))["content"]
    assert content.startswith(
        f"INPUT_INVALID: notes_search was called with invalid input: input is {len(huge):,} characters of JSON; "
        f"at most {ARGUMENTS_MAX:,} are read."
    )


def test_strict_mode_takes_a_null_for_an_optional_field_as_left_out() -> None:
    tools = OpenAITools(runtime("notes:read"), strict=True)
    content = tools.handle_sync(chat_call("notes_search", '{"text": "milk", "limit": null, "tag": null}'))["content"]
    assert content == '["milk:10:None"]'  # the default limit; tag accepts null, so null it is
    nested = define_tool(
        name="demo.nested",
        description="Echo.",
        version="1.0.0",
        input=s.object({"items": s.array(s.object({"n": s.optional(s.integer(), default=1)}))}),
        handler=lambda args: args,
    )
    echo = OpenAITools(Runtime([nested]), strict=True)
    content = echo.handle_sync(chat_call("demo_nested", '{"items": [{"n": null}, {"n": 5}]}'))["content"]
    assert json.loads(content) == {"items": [{"n": 1}, {"n": 5}]}
    # Without strict mode a null is a null, and the model is told it is wrong.
    plain = OpenAITools(runtime("notes:read")).handle_sync(chat_call("notes_search", '{"text": "a", "limit": null}'))
    assert plain["content"].startswith('INPUT_INVALID: notes_search was called with invalid input: "limit" must be')


def test_strict_mode_takes_a_null_as_left_out_inside_the_union_option_the_object_is_for() -> None:
    """Strict definitions make an option's optional field required and nullable: its null is the field left out."""
    first = s.object({"kind": s.literal("a"), "limit": s.optional(s.integer(), default=3)})
    second = s.object({"kind": s.literal("b"), "size": s.optional(s.integer(), default=7), "tag": s.string()})
    both = s.object({"kind": s.enum(["a", "b"]), "limit": s.optional(s.integer(), default=9)})
    pick = define_tool(
        name="demo.pick",
        description="Pick.",
        version="1.0.0",
        input=s.object({"choice": s.union(first, second), "many": s.array(s.union(first, second, s.integer()))}),
        handler=lambda args: args,
    )
    tools = OpenAITools(Runtime([pick]), strict=True)
    schema = tools.definitions()[0]["function"]["parameters"]["properties"]["choice"]["anyOf"][0]
    assert schema["required"] == ["kind", "limit"]
    sent = {
        "choice": {"kind": "b", "size": None, "tag": "t"},
        "many": [{"kind": "a", "limit": None}, 4, {"kind": "b", "size": 2, "tag": "u"}],
    }
    content = tools.handle_sync(chat_call("demo_pick", json.dumps(sent)))["content"]
    assert json.loads(content) == {
        "choice": {"kind": "b", "size": 7, "tag": "t"},
        "many": [{"kind": "a", "limit": 3}, 4, {"kind": "b", "size": 2, "tag": "u"}],
    }
    # Two options an object could be for, which would take its null differently: checked as sent.
    ambiguous = define_tool(
        name="demo.either",
        description="Either.",
        version="1.0.0",
        input=s.object(
            {"choice": s.union(both, s.object({"kind": s.enum(["a", "b"]), "limit": s.nullable(s.integer())}))}
        ),
        handler=lambda args: args,
    )
    either = OpenAITools(Runtime([ambiguous]), strict=True)
    content = either.handle_sync(chat_call("demo_either", '{"choice": {"kind": "a", "limit": null}}'))["content"]
    assert json.loads(content) == {"choice": {"kind": "a", "limit": None}}


def test_handle_all_answers_in_the_models_order_running_the_calls_together() -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def wait(args: dict[str, Any]) -> str:
        started.append(args["name"])
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), timeout=60)  # each waits for the other: sequential calls would time out
        return args["name"]

    waiter = define_tool(
        name="demo.wait", description="Wait.", version="1.0.0", input=s.object({"name": s.string()}), handler=wait
    )
    tools = OpenAITools(Runtime([waiter]))
    calls = [chat_call("demo_wait", '{"name": "first"}', "c1"), chat_call("demo_wait", '{"name": "second"}', "c2")]
    messages = asyncio.run(tools.handle_all(calls))
    assert [(m["tool_call_id"], m["content"]) for m in messages] == [("c1", "first"), ("c2", "second")]


def test_result_text() -> None:
    assert result_text("plain") == "plain"
    assert result_text({"a": [1, "é"]}) == '{"a": [1, "é"]}'
    assert result_text(None) == "null"


def test_strict_mode_inlines_a_ref_that_has_a_description_beside_it() -> None:
    path = s.string(min_length=1, description="A path.")
    reader = define_tool(
        name="demo.read",
        description="Read.",
        version="1.0.0",
        input=s.object({"path": s.ref("demo.path", description="The file to read."), "also": s.ref("demo.path")}),
        handler=dict,
    )
    parameters = OpenAITools(Runtime([reader], schemas={"demo.path": path}), strict=True).definitions()[0]["function"][
        "parameters"
    ]
    assert parameters["properties"] == {
        "path": {"type": "string", "description": "The file to read."},
        "also": {"$ref": "#/$defs/demo.path"},  # alone, a ref stays a ref
    }
    assert parameters["$defs"] == {"demo.path": {"type": "string", "description": "A path."}}


def test_field_descriptions_name_tools_by_their_wire_names() -> None:
    lister = define_tool(
        name="notes.open",
        description="Open a note.",
        version="1.0.0",
        input=s.object({"id": s.string(description="An id, as notes.search gives it.")}),
        handler=dict,
    )
    tools = AnthropicTools(Runtime([lister, search]))
    schema = tools.definitions()[0]["input_schema"]
    assert schema["properties"]["id"]["description"] == "An id, as notes_search gives it."


def test_handle_sync_runs_a_plain_handler_without_an_event_loop() -> None:
    seen: list[bool] = []

    def probe(args: dict[str, Any]) -> str:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            seen.append(False)
        else:
            seen.append(True)
        return "ok"

    probing = define_tool(name="demo.probe", description="Probe.", version="1.0.0", input=s.object({}), handler=probe)
    assert OpenAITools(Runtime([probing])).handle_sync(chat_call("demo_probe", "{}"))["content"] == "ok"
    assert seen == [False]


@pytest.mark.parametrize(
    ("arguments", "content"),
    [
        (' \n{"text": "milk"}\n ', '["milk:10:None"]'),
        ("", "INPUT_INVALID"),  # {} is missing text
        (
            '{"text": "milk"} {"text": "tea"}',
            "INPUT_INVALID: notes_search was called with invalid input: input is not valid JSON: Extra data at line 1, "
            "column 18; send a JSON object.",
        ),
    ],
)
def test_argument_text_around_the_value(arguments: str, content: str) -> None:
    message = OpenAITools(runtime("notes:read")).handle_sync(chat_call("notes_search", arguments))
    assert message["content"].startswith(content)


HUGE = "9" * 5000  # past Python's int-string limit (4,300 digits): int() raises ValueError
HUGE_ARGUMENTS = [
    '{"text": "milk", "limit": ' + HUGE + "}",
    '{"text": "milk", "limit": -' + HUGE + "}",
    '{"text": "milk", "tag": [{"deep": [1, ' + HUGE + "]}]}",  # nested, where no field takes it
    " " + HUGE,
]
HUGE_CONTENT = (
    "INPUT_INVALID: notes_search was called with invalid input: input holds an integer of 5,000 digits, more than "
    "the 4,300 this Python reads; send a shorter number, or a string of digits if the tool takes one.\n"
    "Fix the arguments and call notes_search again."
)


@pytest.mark.parametrize("arguments", HUGE_ARGUMENTS, ids=["field", "negative", "nested", "alone"])
def test_an_integer_past_pythons_digit_limit_is_input_invalid_in_every_adapter(arguments: str) -> None:
    """A model's 5,000-digit integer made handle/handle_sync raise ValueError; now it is the model's INPUT_INVALID."""
    openai, anthropic = OpenAITools(runtime("notes:read")), AnthropicTools(runtime("notes:read"))
    strict = OpenAITools(runtime("notes:read"), strict=True)
    chat = chat_call("notes_search", arguments)
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": "notes_search", "input": arguments}
    for adapter in (openai, strict):
        assert adapter.handle_sync(chat)["content"] == HUGE_CONTENT
        assert asyncio.run(adapter.handle(chat))["content"] == HUGE_CONTENT
    for answer in (anthropic.handle_sync(tool_use), asyncio.run(anthropic.handle(tool_use))):
        assert (answer["content"], answer["is_error"]) == (HUGE_CONTENT, True)


def _nested_defs(levels: int, described: bool) -> dict[str, Any]:
    """The attack's document: each level's definition uses the one below twice (about 4 KB for 16 levels)."""
    leaf = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "a leaf field"} for i in range(20)},
        "required": [f"p{i}" for i in range(20)],
        "additionalProperties": False,
    }
    defs: dict[str, Any] = {"d0": leaf}
    for level in range(1, levels):
        below = {"$ref": f"#/$defs/d{level - 1}"}
        sides = {side: {**below, "description": side} if described else below for side in ("left", "right")}
        defs[f"d{level}"] = {
            "type": "object",
            "properties": sides,
            "required": ["left", "right"],
            "additionalProperties": False,
        }
    top = f"#/$defs/d{levels - 1}"
    return {
        "type": "object",
        "properties": {"tree": {"$ref": top, "description": "the tree"} if described else {"$ref": top}},
        "required": ["tree"],
        "additionalProperties": False,
        "$defs": defs,
    }


def _tree_tool(document: dict[str, Any]) -> Runtime:
    tree = define_tool(
        name="tree.walk",
        description="Walk a tree.",
        version="1.0.0",
        input=s.from_json_schema(document),
        handler=lambda arguments: 0,
    )
    return Runtime([tree])


def test_strict_mode_refuses_a_document_that_inlining_would_multiply_naming_the_tool() -> None:
    """16 levels of a 4 KB document took 48 s to write for strict mode; now it is refused in a bounded time."""
    document = _nested_defs(16, described=True)
    assert len(json.dumps(document)) < 5 * 1024
    runtime = _tree_tool(document)
    started = time.process_time()
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(runtime, strict=True)
    assert time.process_time() - started < 10  # CPU seconds, generous: the budget stops the work, whatever the depth
    assert str(caught.value) == (
        'tool "tree.walk": input cannot be given to OpenAI\'s strict mode: its input schema, written out for strict '
        "mode, would hold more than 100,000 schemas (strict mode takes a $ref only alone, so each $ref with a "
        "description beside it is written out in full); give the $refs no siblings, or use strict=False."
    )
    assert OpenAITools(runtime).definitions()[0]["function"]["parameters"] == document  # not strict: as it is


def test_strict_mode_writes_shared_definitions_in_linear_time() -> None:
    """24 levels with bare $refs (16.7 million paths): the strict check and the definitions visit each node once."""
    runtime = _tree_tool(_nested_defs(24, described=False))
    started = time.process_time()
    [definition] = OpenAITools(runtime, strict=True).definitions()
    assert time.process_time() - started < 10
    parameters = definition["function"]["parameters"]
    assert parameters["properties"]["tree"] == {"$ref": "#/$defs/d23"}
    assert parameters["$defs"]["d1"]["properties"]["left"] == {"$ref": "#/$defs/d0"}
    assert definition["function"]["strict"] is True
