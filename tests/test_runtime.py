from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import (
    InputInvalidError,
    InputRejected,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    PermissionDeniedError,
    Runtime,
    StaticGrants,
    Tool,
    ToolError,
    ToolFailedError,
    ToolNotFoundError,
    define_tool,
    reject,
)
from hermes_core import schema as s

WRITE_INPUT = s.object(
    {
        "path": s.string(min_length=1),
        "contents": s.string(),
        "mode": s.optional(s.enum(["w", "a"]), default="w"),
        "tags": s.optional(s.array(s.string()), default=[]),
    }
)


class Recorder:
    """A handler that records what it was called with."""

    def __init__(self, result: Any = None) -> None:
        self.calls: list[Any] = []
        self.result = result

    def __call__(self, args: dict[str, Any]) -> Any:
        self.calls.append(args)
        return {"written": len(args["contents"])} if self.result is None else self.result


def write_tool(handler: Any = None, **overrides: Any) -> Tool:
    fields: dict[str, Any] = {
        "name": "fs.write",
        "description": "Write a file.",
        "version": "1.0.0",
        "input": WRITE_INPUT,
        "output": s.object({"written": s.integer(minimum=0)}),
        "permissions": ["fs:write"],
        "handler": handler or Recorder(),
    }
    fields.update(overrides)
    return define_tool(**fields)


def add_tool() -> Tool:
    return define_tool(
        name="math.add",
        description="Add two integers.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        output=s.integer(),
        handler=lambda args: args["a"] + args["b"],
    )


GOOD = {"path": "a.txt", "contents": "hello"}


# -- the call path ---------------------------------------------------------------------


def test_call_sync_returns_the_parsed_output_and_the_handler_gets_parsed_input() -> None:
    handler = Recorder()
    runtime = Runtime([write_tool(handler)], grants=["fs:write"])
    assert runtime.call_sync("fs.write", GOOD) == {"written": 5}
    assert handler.calls == [{"path": "a.txt", "contents": "hello", "mode": "w", "tags": []}]


def test_await_call_returns_the_parsed_output() -> None:
    runtime = Runtime([add_tool()])
    assert asyncio.run(runtime.call("math.add", {"a": 1, "b": 2.0})) == 3


def test_the_callers_input_is_never_mutated_and_defaults_are_fresh_each_call() -> None:
    def handler(args: dict[str, Any]) -> dict[str, Any]:
        args["tags"].append("seen")
        return {"written": 0}

    runtime = Runtime([write_tool(handler)], grants=["fs:write"])
    payload = {"path": "a", "contents": "", "tags": ["x"]}
    before = copy.deepcopy(payload)
    runtime.call_sync("fs.write", payload)
    runtime.call_sync("fs.write", GOOD)
    runtime.call_sync("fs.write", GOOD)
    assert payload == before
    assert WRITE_INPUT.parse(GOOD)["tags"] == []


def test_output_is_parsed_too() -> None:
    tool = write_tool(Recorder({"written": 3.0}))
    result = Runtime([tool], grants=["fs:write"]).call_sync("fs.write", GOOD)
    assert result == {"written": 3}
    assert type(result["written"]) is int


def test_unknown_tool_is_tool_not_found_with_suggestions() -> None:
    runtime = Runtime([write_tool(), add_tool()], grants=["fs:write"])
    for wrong in ("fs_write", "fs.wrte", "FS.Write", "fs/write", "fs-write"):
        with pytest.raises(ToolNotFoundError) as caught:
            runtime.call_sync(wrong, GOOD)
        assert caught.value.code == "TOOL_NOT_FOUND"
        assert caught.value.name == wrong
        assert caught.value.suggestions[0] == "fs.write"
        assert str(caught.value).startswith(f"{json.dumps(wrong)} is not a registered tool name.\n")
        assert 'Call a registered tool instead, such as "fs.write"' in str(caught.value)


def test_unknown_tool_with_nothing_close_has_no_suggestion() -> None:
    with pytest.raises(ToolNotFoundError) as caught:
        Runtime([write_tool()]).call_sync("weather.today", {})
    assert caught.value.suggestions == ()


@pytest.mark.parametrize("name", [5, None, ["fs.write"], {"a": 1}, b"fs.write"])
def test_a_name_that_is_not_a_string_is_tool_not_found(name: Any) -> None:
    with pytest.raises(ToolNotFoundError):
        Runtime([write_tool()]).call_sync(name, GOOD)


def test_permission_is_checked_before_input_because_a_rewrite_cannot_fix_it() -> None:
    handler = Recorder()
    with pytest.raises(PermissionDeniedError) as caught:
        Runtime([write_tool(handler)]).call_sync("fs.write", {"path": 7})
    assert (caught.value.tool, caught.value.permission) == ("fs.write", "fs:write")
    assert str(caught.value) == (
        'fs.write requires the "fs:write" permission, which was not granted.\n'
        "Retrying with different arguments will not help."
    )
    assert handler.calls == []


def test_invalid_input_is_input_invalid_with_every_issue_and_the_handler_never_runs() -> None:
    handler = Recorder()
    runtime = Runtime([write_tool(handler)], grants=["fs:write"])
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.write", {"path": "", "contnts": "x", "mode": "append", "tags": [1]})
    error = caught.value
    assert error.code == "INPUT_INVALID"
    assert error.tool == "fs.write"
    assert [(i.path, i.kind) for i in error.issues] == [
        (("path",), "too_small"),
        (("contents",), "missing"),
        (("mode",), "enum"),
        (("tags", 0), "type"),
        (("contnts",), "unexpected"),
    ]
    assert str(error) == (
        "fs.write was called with invalid input (5 problems):\n"
        '- "path" must have at least 1 character, got 0.\n'
        '- "contents" is required (a string).\n'
        '- "mode" must be one of "w", "a".\n'
        '- "tags.0" must be a string, got integer.\n'
        '- "contnts" is an unexpected field; did you mean "contents"?\n'
        "Fix the arguments and call fs.write again."
    )
    assert handler.calls == []


def test_input_that_is_not_an_object_names_the_input_at_the_root() -> None:
    runtime = Runtime([write_tool()], grants=["fs:write"])
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.write", ["a.txt"])
    assert caught.value.issues[0].path == ()
    assert "fs.write was called with invalid input: input must be an object, got array" in str(caught.value)


def test_bad_output_is_output_invalid_and_says_the_tool_is_at_fault() -> None:
    runtime = Runtime([write_tool(Recorder({"written": "five"}))], grants=["fs:write"])
    with pytest.raises(OutputInvalidError) as caught:
        runtime.call_sync("fs.write", GOOD)
    error = caught.value
    assert error.code == "OUTPUT_INVALID"
    assert error.retryable is False
    assert error.issues[0].path == ("written",)
    assert str(error) == (
        'fs.write returned invalid output: "written" must be an integer, got string.\n'
        "This is a fault in the tool, not in how it was called. Calling it again will not help."
    )


def test_output_that_is_not_json_is_output_invalid() -> None:
    tool = define_tool(name="t", description="d", version="1.0.0", input=s.object({}), handler=lambda a: {1, 2})
    with pytest.raises(OutputInvalidError, match="output must be a JSON value, got set"):
        Runtime([tool]).call_sync("t", {})


def test_a_handler_exception_is_tool_failed_with_the_original_as_cause() -> None:
    # tests/test_runtime_execution.py has the rest: every kind of exception, timeouts, cancellation.
    boom = ZeroDivisionError("boom")

    def handler(args: Any) -> Any:
        raise boom

    runtime = Runtime([write_tool(handler)], grants=["fs:write"])
    with pytest.raises(ToolError) as caught:
        runtime.call_sync("fs.write", GOOD)
    assert caught.value.code == "TOOL_FAILED"
    assert caught.value.__cause__ is boom
    assert asyncio.run(runtime.observe("fs.write", GOOD))["error"]["code"] == "TOOL_FAILED"


def test_a_handler_refuses_its_input_with_reject_and_the_runtime_names_the_tool() -> None:
    def handler(args: Any) -> Any:
        raise reject("path", "names no existing file; list the directory first")

    async def async_handler(args: Any) -> Any:
        raise reject(("tags", 0), "is not a known tag", kind="enum")

    runtime = Runtime([write_tool(handler), write_tool(async_handler, name="fs.tag")], grants=["fs:write"])
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.write", GOOD)
    assert caught.value.tool == "fs.write"
    assert caught.value.issues == (Issue(("path",), "invalid", "names no existing file; list the directory first"),)
    assert isinstance(caught.value.__cause__, InputRejected)
    with pytest.raises(InputInvalidError) as caught:
        asyncio.run(runtime.call("fs.tag", GOOD))
    assert caught.value.tool == "fs.tag"
    assert caught.value.issues[0].path == ("tags", 0)
    assert caught.value.issues[0].kind == "enum"
    assert asyncio.run(runtime.observe("fs.tag", GOOD))["error"]["code"] == "INPUT_INVALID"


def test_a_handler_may_refuse_several_fields_at_once() -> None:
    def handler(args: Any) -> Any:
        raise InputRejected(
            [Issue(("path",), "invalid", "is a directory"), Issue(("mode",), "invalid", "is read-only")]
        )

    with pytest.raises(InputInvalidError) as caught:
        Runtime([write_tool(handler)], grants=["fs:write"]).call_sync("fs.write", GOOD)
    assert [issue.path for issue in caught.value.issues] == [("path",), ("mode",)]


def test_input_rejected_from_a_coroutine_returned_by_a_plain_handler_is_input_invalid() -> None:
    async def later() -> Any:
        raise reject("path", "is taken")

    runtime = Runtime([write_tool(lambda args: later())], grants=["fs:write"])
    for call in (lambda: runtime.call_sync("fs.write", GOOD), lambda: asyncio.run(runtime.call("fs.write", GOOD))):
        with pytest.raises(InputInvalidError) as caught:
            call()
        assert caught.value.issues[0].detail == "is taken"


def test_a_handler_may_report_a_semantic_input_problem() -> None:
    def handler(args: Any) -> Any:
        raise InputInvalidError("fs.write", [Issue(("path",), "invalid", "names no existing file")])

    runtime = Runtime([write_tool(handler)], grants=["fs:write"])
    observation = runtime.observe_sync("fs.write", GOOD)
    assert observation["ok"] is False
    assert observation["error"]["code"] == "INPUT_INVALID"
    assert observation["error"]["issues"][0]["message"] == '"path" names no existing file'


# -- observe ---------------------------------------------------------------------------


def test_observe_wraps_output_and_every_tool_error_as_json() -> None:
    runtime = Runtime([write_tool(), add_tool()])
    ok = asyncio.run(runtime.observe("math.add", {"a": 1, "b": 2}))
    assert ok == {"ok": True, "output": 3}
    for name, payload, code in [
        ("nope", {}, "TOOL_NOT_FOUND"),
        ("fs.write", GOOD, "PERMISSION_DENIED"),
        ("math.add", {"a": "1", "b": 2}, "INPUT_INVALID"),
    ]:
        observation = asyncio.run(runtime.observe(name, payload))
        assert observation["ok"] is False
        assert observation["error"]["code"] == code
        assert json.loads(json.dumps(observation)) == observation
        assert runtime.observe_sync(name, payload) == observation


# -- async handlers ---------------------------------------------------------------------


def async_tool(seen: list[bool]) -> Tool:
    async def handler(args: dict[str, Any]) -> int:
        seen.append(True)
        await asyncio.sleep(0)
        return args["a"] + args["b"]

    return define_tool(
        name="math.add",
        description="Add.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        output=s.integer(),
        handler=handler,
    )


def test_async_handlers_are_awaited_by_call() -> None:
    runtime = Runtime([async_tool([])])
    assert asyncio.run(runtime.call("math.add", {"a": 2, "b": 3})) == 5


def test_call_sync_runs_an_async_handler_in_a_new_event_loop() -> None:
    assert Runtime([async_tool([])]).call_sync("math.add", {"a": 2, "b": 3}) == 5


def test_call_sync_refuses_an_async_handler_inside_a_running_loop_before_it_runs() -> None:
    seen: list[bool] = []
    runtime = Runtime([async_tool(seen)])

    async def inside() -> None:
        with pytest.raises(RuntimeError, match=r"await runtime\.call"):
            runtime.call_sync("math.add", {"a": 2, "b": 3})

    asyncio.run(inside())
    assert seen == []


def test_sync_handlers_run_with_no_event_loop_at_all() -> None:
    def handler(args: Any) -> bool:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return True
        return False

    tool = define_tool(name="t", description="d", version="1.0.0", input=s.object({}), handler=handler)
    assert Runtime([tool]).call_sync("t", {}) is True


def test_a_sync_handler_returning_a_coroutine_is_awaited() -> None:
    async def later() -> int:
        return 7

    tool = define_tool(name="t", description="d", version="1.0.0", input=s.object({}), handler=lambda a: later())
    runtime = Runtime([tool])
    assert runtime.call_sync("t", {}) == 7
    assert asyncio.run(runtime.call("t", {})) == 7


def test_an_async_handlers_result_is_its_output_under_call_sync_as_under_await_call() -> None:
    made: list[Any] = []

    async def later() -> int:
        return 7

    async def returning_a_coroutine(args: Any) -> Any:
        made.append(later())
        return made[-1]

    async def returning_seven(args: Any) -> int:
        return 7

    def make(name: str, handler: Any) -> Tool:
        return define_tool(
            name=name, description="d", version="1.0.0", input=s.object({}), output=s.integer(), handler=handler
        )

    runtime = Runtime([make("t.coroutine", returning_a_coroutine), make("t.seven", returning_seven)])
    assert runtime.call_sync("t.seven", {}) == asyncio.run(runtime.call("t.seven", {})) == 7
    with pytest.raises(OutputInvalidError, match=r"t\.coroutine"):
        runtime.call_sync("t.coroutine", {})
    with pytest.raises(OutputInvalidError, match=r"t\.coroutine"):
        asyncio.run(runtime.call("t.coroutine", {}))
    for coroutine in made:  # checked as the output, never run
        coroutine.close()


# -- permissions ------------------------------------------------------------------------


@pytest.mark.parametrize("grants", [["fs:write"], ["fs:*"], ["*"], ["net:get", "fs:write"]])
def test_grant_patterns_grant(grants: list[str]) -> None:
    assert Runtime([write_tool()], grants=grants).call_sync("fs.write", GOOD) == {"written": 5}


@pytest.mark.parametrize("grants", [[], ["fs:read"], ["fsx:*"], ["f:*"], ["net:*"]])
def test_anything_else_is_denied_by_default(grants: list[str]) -> None:
    with pytest.raises(PermissionDeniedError):
        Runtime([write_tool()], grants=grants).call_sync("fs.write", GOOD)


def test_the_first_missing_permission_is_reported() -> None:
    tool = write_tool(permissions=["fs:read", "fs:write"])
    with pytest.raises(PermissionDeniedError) as caught:
        Runtime([tool], grants=["fs:read"]).call_sync("fs.write", GOOD)
    assert caught.value.permission == "fs:write"


@pytest.mark.parametrize("grant", ["fs", "fs:", "*:write", "FS:write", "fs:write:x", "", 5, "**"])
def test_malformed_grants_are_invalid_definitions(grant: Any) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([write_tool()], grants=["fs:read", grant])
    assert caught.value.field == "grants[1]"


def test_a_single_string_of_grants_is_refused() -> None:
    with pytest.raises(InvalidDefinitionError, match="must be a list of grant patterns"):
        Runtime([], grants="fs:write")


class Provider:
    def __init__(self, answers: dict[str, bool | None]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str]] = []

    def check(self, tool: Tool, permission: str) -> bool | None:
        self.asked.append((tool.name, permission))
        return self.answers.get(permission)


def test_a_provider_can_grant() -> None:
    provider = Provider({"fs:write": True})
    assert Runtime([write_tool()], providers=[provider]).call_sync("fs.write", GOOD) == {"written": 5}
    assert provider.asked == [("fs.write", "fs:write")]


def test_any_deny_wins_over_any_grant() -> None:
    granting, denying = Provider({"fs:write": True}), Provider({"fs:write": False})
    for providers in ([granting, denying], [denying, granting]):
        with pytest.raises(PermissionDeniedError):
            Runtime([write_tool()], grants=["*"], providers=providers).call_sync("fs.write", GOOD)


def test_providers_with_no_opinion_leave_the_default_deny() -> None:
    with pytest.raises(PermissionDeniedError):
        Runtime([write_tool()], providers=[Provider({})]).call_sync("fs.write", GOOD)
    assert Runtime([write_tool()], grants=["fs:*"], providers=[Provider({})]).call_sync("fs.write", GOOD)


def test_providers_are_asked_on_every_call() -> None:
    provider = Provider({"fs:write": True})
    runtime = Runtime([write_tool()], providers=[provider])
    runtime.call_sync("fs.write", GOOD)
    provider.answers["fs:write"] = False
    with pytest.raises(PermissionDeniedError):
        runtime.call_sync("fs.write", GOOD)


def test_tools_without_permissions_never_ask_providers() -> None:
    provider = Provider({})
    assert Runtime([add_tool()], providers=[provider]).call_sync("math.add", {"a": 1, "b": 1}) == 2
    assert provider.asked == []


def test_provider_exceptions_are_not_swallowed(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def check(self, tool: Tool, permission: str) -> bool | None:
            raise OSError("policy store unreachable")

    with pytest.raises(ToolFailedError) as caught:
        Runtime([write_tool()], grants=["*"], providers=[Broken()]).call_sync("fs.write", GOOD)
    assert isinstance(caught.value.__cause__, OSError)  # chained, and logged with its traceback
    (record,) = [r for r in caplog.records if r.name == "hermes_core"]
    assert record.getMessage().endswith(": a permission provider raised OSError")
    assert record.exc_info is not None


def test_a_provider_answer_other_than_true_false_none_is_a_type_error() -> None:
    class Sloppy:
        def check(self, tool: Tool, permission: str) -> Any:
            return "yes"

    with pytest.raises(ToolFailedError) as caught:
        Runtime([write_tool()], providers=[Sloppy()]).call_sync("fs.write", GOOD)
    assert isinstance(caught.value.__cause__, TypeError)
    assert "must return True, False or None" in str(caught.value.__cause__)


def test_an_object_without_check_is_not_a_provider() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], providers=[object()])
    assert caught.value.field == "providers[0]"


def test_static_grants_is_itself_a_provider() -> None:
    grants = StaticGrants(["fs:*"])
    assert grants.check(write_tool(), "fs:write") is True
    assert grants.check(write_tool(), "net:get") is None
    assert Runtime([write_tool()], providers=[grants]).call_sync("fs.write", GOOD) == {"written": 5}


# -- construction -----------------------------------------------------------------------


def test_duplicate_tool_names_are_refused_naming_the_tool() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([write_tool(), add_tool(), write_tool()])
    assert caught.value.declaration == 'tool "fs.write"'
    assert caught.value.field == "name"
    assert "registered twice" in str(caught.value)


def test_tool_names_differing_only_in_case_are_refused_naming_both() -> None:
    def named(name: str) -> Tool:
        return define_tool(name=name, description="d", version="1.0.0", input=s.object({}), handler=dict)

    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([named("getTinyImage"), add_tool(), named("gettinyimage")])
    assert str(caught.value) == (
        'tools "getTinyImage" and "gettinyimage" have names that differ only in case, which models and clients '
        "that fold case cannot tell apart; rename one of them."
    )
    assert set(Runtime([named("getTinyImage"), named("getTinyImage2")]).tools) == {"getTinyImage", "getTinyImage2"}


def test_only_tools_can_be_registered() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([add_tool(), "math.add"])  # type: ignore[list-item]
    assert caught.value.field == "tools[1]"


def test_tools_is_a_read_only_mapping_in_registration_order() -> None:
    tools = [write_tool(), add_tool()]
    runtime = Runtime(tools)
    assert list(runtime.tools) == ["fs.write", "math.add"]
    assert runtime.tools["math.add"] is tools[1]
    with pytest.raises(TypeError):
        runtime.tools["x"] = tools[0]  # type: ignore[index]
    with pytest.raises(AttributeError):
        runtime.tools = {}  # type: ignore[misc]


PATH = s.string(min_length=1, description="A path relative to the root")


def ref_tool(**overrides: Any) -> Tool:
    fields: dict[str, Any] = {
        "name": "fs.read",
        "description": "Read a file.",
        "version": "1.0.0",
        "input": s.object({"path": s.ref("fs.path")}),
        "output": s.ref("fs.contents"),
        "handler": lambda args: {"path": args["path"], "text": "x"},
    }
    fields.update(overrides)
    return define_tool(**fields)


SCHEMAS = {"fs.path": PATH, "fs.contents": s.object({"path": s.ref("fs.path"), "text": s.string()})}


def test_refs_resolve_through_the_runtimes_schemas() -> None:
    runtime = Runtime([ref_tool()], schemas=SCHEMAS)
    assert runtime.call_sync("fs.read", {"path": "a"}) == {"path": "a", "text": "x"}
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.read", {"path": ""})
    assert caught.value.issues[0].path == ("path",)
    assert caught.value.issues[0].kind == "too_small"


def test_an_unresolved_ref_is_refused_naming_the_tool_and_field() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([ref_tool()], schemas={"fs.path": PATH})
    assert caught.value.declaration == 'tool "fs.read"'
    assert caught.value.field == "output"
    assert 'refers to the schema "fs.contents"' in str(caught.value)
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([ref_tool()])
    assert caught.value.field == "input"


def test_an_unresolved_ref_inside_a_named_schema_is_refused() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], schemas={"fs.contents": SCHEMAS["fs.contents"]})
    assert caught.value.declaration == 'schema "fs.contents"'


def test_a_ref_input_must_name_an_object_schema() -> None:
    tool = ref_tool(input=s.ref("fs.path"))
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([tool], schemas=SCHEMAS)
    assert caught.value.field == "input"
    assert caught.value.detail == (
        'refers to the schema "fs.path", which is a string, not an object; a tool\'s input must be an object '
        "schema (s.object(...), or an imported JSON Schema whose root is an object)"
    )


def test_a_ref_input_may_name_an_imported_object_schema() -> None:
    """The rule a tool's own input is held to: an imported JSON Schema whose root is an object is an object schema."""
    imported = s.from_json_schema({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    runtime = Runtime([ref_tool(input=s.ref("fs.args"), output=None)], schemas={"fs.args": imported})
    assert runtime.call_sync("fs.read", {"path": "a"}) == {"path": "a", "text": "x"}
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.read", {"path": 1})
    assert caught.value.issues[0].message("input") == '"path" must be a string, got integer'


@pytest.mark.parametrize(
    ("schema", "what"),
    [
        (s.from_json_schema({"type": "string"}), "an imported JSON Schema whose root is a string, not an object"),
        (s.record(s.string()), "an object schema of another kind (record)"),
        (
            s.from_json_schema({"$ref": "#/$defs/o", "$defs": {"o": {"type": "object"}}}),
            "an imported JSON Schema whose root is an object schema of another kind (link)",
        ),
    ],
    ids=["imported-string", "record", "imported-link"],
)
def test_a_ref_input_naming_no_object_schema_says_what_it_names(schema: s.Schema, what: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([ref_tool(input=s.ref("fs.args"), output=None)], schemas={"fs.args": schema})
    assert caught.value.detail.startswith(f'refers to the schema "fs.args", which is {what}; ')


@pytest.mark.parametrize(
    ("schemas", "field"),
    [
        ({"fs path": PATH}, "schemas name"),
        ({"fs." + "p" * 62: PATH}, "schemas name"),  # 65 characters: names are at most 64, like tool names
        ({"fs.path": "string"}, 'schemas["fs.path"]'),
        ({"fs.path": s.optional(PATH)}, 'schemas["fs.path"]'),
        (["fs.path"], "schemas"),
    ],
)
def test_malformed_named_schemas_are_refused(schemas: Any, field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], schemas=schemas)
    assert (caught.value.declaration, caught.value.field) == ("Runtime()", field)


def test_definitions_are_standalone_json_schema_for_the_model() -> None:
    runtime = Runtime([write_tool(), ref_tool()], schemas=SCHEMAS)
    definitions = runtime.definitions()
    assert [d["name"] for d in definitions] == ["fs.write", "fs.read"]
    read = definitions[1]
    assert read["description"] == "Read a file."
    assert read["inputSchema"]["properties"]["path"] == {"$ref": "#/$defs/fs.path"}
    assert read["inputSchema"]["$defs"]["fs.path"]["description"] == "A path relative to the root"
    for definition in definitions:
        for key in ("inputSchema", "outputSchema"):
            jsonschema.Draft202012Validator.check_schema(definition[key])
    validator = jsonschema.Draft202012Validator(read["outputSchema"])
    assert validator.is_valid({"path": "a", "text": "b"})
    assert not validator.is_valid({"path": "", "text": "b"})


# -- robustness -------------------------------------------------------------------------


def test_the_runtime_can_be_shared_across_threads() -> None:
    runtime = Runtime([add_tool()])
    barrier = threading.Barrier(4)

    def work(n: int) -> list[int]:
        barrier.wait()
        return [runtime.call_sync("math.add", {"a": n, "b": i}) for i in range(500)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    assert results == [[n + i for i in range(500)] for n in range(4)]


def test_many_tasks_can_call_at_once() -> None:
    runtime = Runtime([async_tool([])])

    async def many() -> list[int]:
        return await asyncio.gather(*(runtime.call("math.add", {"a": i, "b": 1}) for i in range(200)))

    assert asyncio.run(many()) == [i + 1 for i in range(200)]


def test_deeply_nested_input_is_an_input_error_not_a_crash() -> None:
    tool = define_tool(
        name="t", description="d", version="1.0.0", input=s.object({"x": s.any()}), handler=lambda a: None
    )
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    runtime = Runtime([tool])
    for value in (deep, cyclic):
        with pytest.raises(InputInvalidError) as caught:
            runtime.call_sync("t", {"x": value})
        assert caught.value.issues[0].kind == "too_deep"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)
model_input = st.one_of(
    json_values,
    st.dictionaries(st.sampled_from(["path", "contents", "mode", "tags", "pth"]), json_values, max_size=5),
)


@settings(max_examples=300, deadline=None)
@given(name=st.one_of(st.sampled_from(["fs.write", "math.add", "fs_write"]), st.text(max_size=10)), value=model_input)
def test_no_model_input_raises_anything_but_a_tool_error(name: str, value: Any) -> None:
    runtime = Runtime([write_tool(), add_tool()], grants=["fs:write"])
    try:
        runtime.call_sync(name, value)
    except ToolError as error:
        data = error.to_dict()
    else:
        return
    assert json.loads(json.dumps(data)) == data


def test_a_cycle_of_bare_refs_is_refused() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], schemas={"a.b": s.ref("a.c"), "a.c": s.ref("a.b")})
    assert "leads back to itself" in str(caught.value)


@pytest.mark.parametrize(
    "schemas",
    [
        {"t.node": s.union(s.ref("t.node"), s.boolean())},
        {"t.node": s.nullable(s.ref("t.other")), "t.other": s.union(s.integer(), s.ref("t.node"))},
    ],
    ids=["union", "nullable-through-another"],
)
def test_a_recursion_with_no_container_between_is_refused(schemas: dict[str, s.Schema]) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], schemas=schemas)
    assert str(caught.value) == (
        'schema "t.node" refers to itself through a union or nullable with no array or object between, so checking '
        "a value against it would never end; put the recursion inside s.array(...) or s.object(...)."
    )


def test_a_recursion_through_an_array_is_a_schema() -> None:
    runtime = Runtime([], schemas={"t.node": s.union(s.array(s.ref("t.node")), s.boolean())})
    assert list(runtime.schemas) == ["t.node"]


def test_a_missing_ref_inside_a_tuple_is_a_definition_error() -> None:
    with pytest.raises(InvalidDefinitionError, match=r"^s.ref\('a.b'\) names a schema that is not registered"):
        s.tuple(s.ref("a.b")).parse([1])


def test_a_default_under_a_ref_is_checked_when_the_ref_resolves() -> None:
    tool = ref_tool(input=s.object({"path": s.optional(s.ref("fs.path"), default=7)}))
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([tool], schemas=SCHEMAS)
    assert caught.value.declaration == 'tool "fs.read"'
    assert caught.value.field == 'field "path"'
    assert "has a default that does not match its schema: default must be a string, got integer" in str(caught.value)
    good = ref_tool(input=s.object({"path": s.optional(s.ref("fs.path"), default="a")}))
    assert Runtime([good], schemas=SCHEMAS).call_sync("fs.read", {}) == {"path": "a", "text": "x"}


def test_a_default_inside_a_named_schema_is_checked_too() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        Runtime([], schemas={"fs.path": PATH, "fs.opts": s.object({"p": s.optional(s.ref("fs.path"), default="")})})
    assert caught.value.declaration == 'schema "fs.opts"'
    assert caught.value.field == 'field "p"'


def test_definitions_write_a_ref_input_as_the_object_it_names() -> None:
    tool = ref_tool(input=s.ref("fs.args"))
    runtime = Runtime([tool], schemas={**SCHEMAS, "fs.args": s.object({"path": s.ref("fs.path")})})
    schema = runtime.definitions()[0]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["properties"]["path"] == {"$ref": "#/$defs/fs.path"}
    jsonschema.Draft202012Validator.check_schema(schema)


def test_call_sync_refuses_a_returned_coroutine_inside_a_running_loop() -> None:
    async def later() -> int:
        return 7

    tool = define_tool(name="t", description="d", version="1.0.0", input=s.object({}), handler=lambda a: later())
    runtime = Runtime([tool])

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="returned a coroutine"):
            runtime.call_sync("t", {})

    asyncio.run(inside())


def test_output_whose_own_code_raises_while_checked_is_output_invalid() -> None:
    class Hostile(dict[str, Any]):
        def items(self) -> Any:
            raise ValueError("no")

        def keys(self) -> Any:
            raise ValueError("no")

    tool = define_tool(name="t", description="d", version="1.0.0", input=s.object({}), handler=lambda a: Hostile(x=1))
    with pytest.raises(OutputInvalidError) as caught:
        Runtime([tool]).call_sync("t", {})
    assert "checking it raised ValueError" in str(caught.value)


def test_a_runtime_is_immutable_once_built() -> None:
    runtime = Runtime([add_tool()])
    for name in ("tools", "_tools", "_calls", "anything"):
        with pytest.raises(dataclasses.FrozenInstanceError, match="a Runtime is immutable once built"):
            setattr(runtime, name, {})
    with pytest.raises(dataclasses.FrozenInstanceError, match="immutable"):
        del runtime._calls
    assert runtime.call_sync("math.add", {"a": 1, "b": 2}) == 3


def test_a_permission_provider_that_raises_fails_the_call_closed_as_tool_failed() -> None:
    class Broken:
        def check(self, tool: Any, permission: str) -> bool | None:
            raise RuntimeError("the policy service is down: token=secret")

    class Answers:
        def check(self, tool: Any, permission: str) -> Any:
            return "yes"

    for provider, raised in ((Broken(), "RuntimeError"), (Answers(), "TypeError")):
        runtime = Runtime([write_tool()], grants=["fs:write"], providers=[provider])
        with pytest.raises(ToolFailedError) as caught:
            runtime.call_sync("fs.write", {"path": "a", "contents": "b"})
        assert str(caught.value).startswith(
            f"fs.write failed: a permission provider raised {raised}, so the call was not made."
        )
        assert "secret" not in str(caught.value.to_dict())
        assert caught.value.__cause__ is not None
