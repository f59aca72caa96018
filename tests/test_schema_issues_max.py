"""A check collects at most ISSUES_MAX issues, then stops: a failing input's cost is bounded.

The attack reproduced: ``{"xs": [0] * 8388608}`` (16 MiB of JSON) against
``s.object({"xs": s.array(s.string())})`` collected one issue per item: 40 s of
CPU and 5.3 GB of memory through ``Runtime.observe_sync``. The limits below are
generous: many times what the bounded check takes, and a fraction of the attack.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import InputInvalidError, Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core._base._issues import ISSUES_MAX
from hermes_core.adapters import OpenAITools
from hermes_core.schema._compile import compile_schema

ITEMS = 8 * 1024 * 1024  # "0," is two characters: 16 MiB of JSON
JSON_ITEMS = ITEMS - 8  # as many as the arguments' 16 MiB limit takes with the object around them
MIB = 1024 * 1024
STOPPED = f"- ... and more: checking stopped after {ISSUES_MAX + 1} problems."
SCHEMA = s.object({"xs": s.array(s.string())})


def _tool(schema: s.Schema = SCHEMA) -> Any:
    return define_tool(
        name="notes.tag",
        description="Tag notes.",
        version="1.0.0",
        input=schema,
        handler=lambda arguments: "ok",
    )


def _cpu(work: Any) -> float:
    started = time.process_time()
    work()
    return time.process_time() - started


def _refused(schema: s.Schema, value: Any) -> SchemaError:
    """The error *schema* raises for *value*, after checking the check took less than 5 s of CPU."""
    caught: list[SchemaError] = []

    def parse() -> None:
        try:
            schema.parse(value)
        except SchemaError as error:
            caught.append(error)

    assert _cpu(parse) < 5
    assert caught, "the value was accepted"
    return caught[0]


def _stopped(message: str, head: str) -> None:
    lines = message.splitlines()
    assert lines[0] == f"{head} (more than {ISSUES_MAX} problems):"
    assert STOPPED in lines


# -- the attack, as it was made -------------------------------------------------------------------


def test_a_16_mib_array_of_wrong_items_through_observe_sync_stops_after_the_first_issues() -> None:
    runtime = Runtime([_tool()])
    answer: dict[str, Any] = {}
    value = {"xs": [0] * ITEMS}
    assert _cpu(lambda: answer.update(runtime.observe_sync("notes.tag", value))) < 5  # 40 s before
    error = answer["error"]
    assert error["code"] == "INPUT_INVALID"
    assert len(error["issues"]) == ISSUES_MAX + 1
    assert [issue["path"] for issue in error["issues"][:2]] == [["xs", 0], ["xs", 1]]
    assert error["issues"][-1]["message"] == '"xs.1000" must be a string, got integer'
    _stopped(error["message"], "notes.tag was called with invalid input")
    assert error["message"].splitlines()[1] == '- "xs.0" must be a string, got integer.'
    assert error["message"].endswith(f"{STOPPED}\nFix the arguments and call notes.tag again.")


def test_a_16_mib_array_of_wrong_items_through_openai_handle_sync_stops_after_the_first_issues() -> None:
    adapter = OpenAITools(Runtime([_tool()]))
    raw = '{"xs": [' + ",".join(["0"] * JSON_ITEMS) + "]}"
    assert 16 * MIB - 64 < len(raw) <= 16 * MIB
    call = {"id": "1", "function": {"name": "notes_tag", "arguments": raw}}
    answer: dict[str, Any] = {}
    assert _cpu(lambda: answer.update(adapter.handle_sync(call))) < 5
    lines = answer["content"].splitlines()
    assert lines[0] == f"INPUT_INVALID: notes_tag was called with invalid input (more than {ISSUES_MAX} problems):"
    assert lines[1] == '- "xs.0" must be a string, got integer.'
    assert lines[-2:] == [STOPPED, "Fix the arguments and call notes_tag again."]


# Peak memory is read from a small wrapper that starts the work: on Linux, a child started from a
# large process (this one, late in a run) reports that process's peak as its own (vfork, then exec).
PEAK = (
    "import resource, subprocess, sys\n"
    "status = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n"
)

ATTACK = textwrap.dedent(
    """
    import json, sys
    items = int(sys.argv[2])
    from hermes_core import Runtime, define_tool
    from hermes_core import schema as s
    from hermes_core.adapters import OpenAITools

    tool = define_tool(
        name="notes.tag", description="Tag notes.", version="1.0.0",
        input=s.object({"xs": s.array(s.string())}), handler=lambda arguments: "ok",
    )
    runtime = Runtime([tool])
    if sys.argv[1] == "runtime":
        answer = runtime.observe_sync("notes.tag", {"xs": [0] * items})
        print(json.dumps({"issues": len(answer["error"]["issues"])}))
    else:
        raw = '{"xs": [' + ",".join(["0"] * items) + "]}"
        answer = OpenAITools(runtime).handle_sync({"id": "1", "function": {"name": "notes_tag", "arguments": raw}})
        print(json.dumps({"lines": answer["content"].count("\\n") + 1}))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
@pytest.mark.parametrize("edge", ["runtime", "openai"])
def test_the_16_mib_attack_runs_in_bounded_memory(edge: str, tmp_path: Path) -> None:
    peak = tmp_path / "peak"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PEAK,
            str(peak),
            sys.executable,
            "-c",
            ATTACK,
            edge,
            str(ITEMS if edge == "runtime" else JSON_ITEMS),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said == ({"issues": ISSUES_MAX + 1} if edge == "runtime" else {"lines": 23})
    used = int(peak.read_text()) * 1024
    # The input itself is 64 MiB of list (and 16 MiB of text, parsed); one issue per item was 5.3 GB.
    assert used < 400 * MIB, f"peak resident memory {used // MIB} MiB"


# -- every container stops: unions, missing fields, nested arrays, records, ... --------------------


def test_a_union_of_arrays_tries_each_option_and_stops_each() -> None:
    schema = s.union(s.array(s.string()), s.array(s.boolean()))
    value = [0] * ITEMS
    caught = _refused(schema, value)
    assert caught.issues[0].message() == '"0" must be a string, got integer'
    assert len(caught.issues) == ISSUES_MAX + 1
    _stopped(str(caught), "value is invalid")


def test_a_union_whose_first_option_stops_still_accepts_by_a_later_option() -> None:
    schema = s.union(s.array(s.string()), s.array(s.integer()))
    value = [0] * (ISSUES_MAX * 3)
    assert schema.parse(value) == value
    assert compile_schema(schema, {}).walk(value) == (True, value, ())


def test_an_array_of_unions_stops_after_the_first_issues() -> None:
    schema = s.object({"xs": s.array(s.union(s.string(), s.boolean()))})
    with pytest.raises(SchemaError) as caught:
        schema.parse({"xs": [None] * ITEMS})
    assert len(caught.value.issues) == ISSUES_MAX + 1
    assert caught.value.issues[0].message() == '"xs.0" must be a string or a boolean, got null'


def test_an_object_of_100000_missing_required_fields_stops_after_the_first_issues() -> None:
    names = [f"field_{index}" for index in range(100_000)]
    schema = s.object(dict.fromkeys(names, s.string()))
    caught = _refused(schema, {})
    issues = caught.issues
    assert len(issues) == ISSUES_MAX + 1
    assert [issue.message() for issue in (issues[0], issues[-1])] == [
        '"field_0" is required (a string)',
        '"field_1000" is required (a string)',
    ]
    _stopped(str(caught), "value is invalid")


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (s.array(s.array(s.string())), [[0] * 600] * 4000),
        (s.array(s.array(s.array(s.integer(minimum=1)))), [[[0] * 30] * 100] * 1000),
        (s.array(s.object({"a": s.string()})), [{}] * 200_000),
        (s.record(s.integer()), {f"k{index}": "x" for index in range(200_000)}),
        (s.object({"m": s.record(s.array(s.string()))}), {"m": {f"k{i}": [1] * 50 for i in range(1000)}}),
        (s.array(s.any()), ["\ud800"] * 200_000),
        (s.object({}, extra="allow"), {f"k{index}": "\ud800" for index in range(200_000)}),
        (s.array(s.string(), unique_items=True), ["a"] * 200_000),
        (s.tuple(s.array(s.string()), s.integer()), [[0] * 200_000, 1]),
        (s.array(s.nullable(s.string())), [0] * 200_000),
    ],
    ids=[
        "nested-arrays",
        "three-deep",
        "objects",
        "record",
        "record-of-arrays",
        "any-surrogates",
        "allowed-extras",
        "unique",
        "tuple",
        "nullable-items",
    ],
)
def test_every_container_stops_after_the_first_issues_and_matches_the_walk(schema: s.Schema, value: Any) -> None:
    validator = compile_schema(schema, {})
    ok, parsed, issues = validator.run(value)
    assert (ok, parsed, len(issues)) == (False, None, ISSUES_MAX + 1)
    assert validator.walk(value) == (ok, parsed, issues)
    with pytest.raises(SchemaError) as caught:
        schema.parse(value)
    assert caught.value.issues == issues
    _stopped(str(caught.value), "value is invalid")


def test_imported_one_of_pattern_properties_and_prefix_items_stop() -> None:
    imported = s.from_json_schema(
        {
            "type": "object",
            "patternProperties": {"^k": {"type": "string"}},
            "properties": {
                "one": {"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
                "pre": {"type": "array", "prefixItems": [{"type": "integer"}], "items": {"type": "string"}},
            },
        }
    )
    for value in (
        {f"k{index}": index for index in range(5000)},
        {"one": [0] * 5000},
        {"pre": [0] * 5000},
    ):
        with pytest.raises(SchemaError) as caught:
            imported.parse(value)
        assert len(caught.value.issues) == ISSUES_MAX + 1, value.keys()


def test_a_default_that_stops_the_check_is_dropped_as_not_matching() -> None:
    imported = s.from_json_schema(
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "string"}, "default": [0] * 5000}}}
    )
    assert [item.keyword for item in imported.unsupported] == ["default"]
    assert imported.parse({}) == {}


# -- up to ISSUES_MAX issues: reported exactly as before ------------------------------------------


@pytest.mark.parametrize("count", [2, 21, ISSUES_MAX - 1, ISSUES_MAX])
def test_up_to_issues_max_every_issue_is_reported_and_counted(count: int) -> None:
    runtime = Runtime([_tool()])
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("notes.tag", {"xs": [0] * count})
    issues = caught.value.issues
    assert [issue.path for issue in issues] == [("xs", index) for index in range(count)]
    lines = str(caught.value).splitlines()
    assert lines[0] == f"notes.tag was called with invalid input ({count} problems):"
    more = [f"- ... and {count - 20} more."] if count > 20 else []
    assert lines[1 + min(count, 20) :] == [*more, "Fix the arguments and call notes.tag again."]
    assert "stopped" not in str(caught.value)


def test_one_past_issues_max_says_checking_stopped() -> None:
    with pytest.raises(SchemaError) as caught:
        SCHEMA.parse({"xs": [0] * (ISSUES_MAX + 1)})
    assert len(caught.value.issues) == ISSUES_MAX + 1
    _stopped(str(caught.value), "value is invalid")
    assert caught.value.to_dict()["issues"][-1]["path"] == ["xs", ISSUES_MAX]
