"""Inputs a caller controls cost bounded CPU: many unexpected keys, and a wrong value against a huge schema.

The attacks reproduced: one object of about 300,000 unexpected keys (a 5.9 MB
request) cost a "did you mean" each, 20-50 us apiece; ``null`` against an
imported object of 100,000 required names took 15.6 s (compiling the schema's
checker, on its first call). The limits below are generous: each is many times
what the bounded code takes, and a fraction of what the attack took.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from hermes_core import Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core._issues import ISSUES_MAX
from hermes_core.adapters import OpenAITools
from hermes_core.schema._compile import compile_schema
from hermes_core.schema._containers import SUGGESTED_ISSUES

NAMES = [f"field_{index}" for index in range(100_000)]


def _took(check: Any) -> float:
    started = time.perf_counter()
    check()
    return time.perf_counter() - started


def test_null_against_an_object_of_100000_required_names_is_refused_quickly() -> None:
    imported = s.from_json_schema(
        {"type": "object", "properties": {name: {"type": "string"} for name in NAMES}, "required": NAMES}
    )

    def attack() -> None:
        with pytest.raises(SchemaError) as caught:
            imported.parse(None)
        assert str(caught.value) == "value is invalid: value must be an object, got null."

    assert _took(attack) < 5  # 15.6 s before

    def empty() -> None:
        with pytest.raises(SchemaError) as caught:
            imported.parse({})
        assert len(caught.value.issues) == ISSUES_MAX + 1  # checking stops past ISSUES_MAX issues
        assert caught.value.issues[0].message() == '"field_0" is required (a string)'
        assert caught.value.issues[-1].message() == '"field_1000" is required (a string)'
        assert str(caught.value).startswith("value is invalid (more than 1000 problems):\n")
        assert str(caught.value).endswith("- ... and more: checking stopped after 1001 problems.")

    assert _took(empty) < 5


def _wide(fields: int, inner: s.Schema) -> s.Schema:
    return s.object({f"f{index}": inner for index in range(fields)})


@pytest.mark.parametrize(
    "schema",
    [
        _wide(600, s.string()),  # past the fields one function inlines: checked by its walk
        _wide(3, _wide(400, s.optional(s.integer(minimum=0)))),  # past one function's budget: split in functions
        s.nullable(_wide(700, s.integer())),
    ],
    ids=["wide", "wide-nested", "nullable-wide"],
)
def test_a_wide_schema_finds_exactly_what_the_walk_finds(schema: s.Schema) -> None:
    validator = compile_schema(schema, {})
    values: list[Any] = [None, "x", {}, {"f0": 1, "zz": 2}, {"f1": {"f3": -1, "f5": "a"}, "f2": {}}]
    for value in values:
        assert validator.run(value) == validator.walk(value), value


def test_300000_unexpected_keys_cost_a_fraction_of_a_second_and_say_how_many_more() -> None:
    """The 5.9 MB request: a "did you mean" for the first issues only; checking stops past ISSUES_MAX."""
    write = define_tool(
        name="notes.write",
        description="Write a note.",
        version="1.0.0",
        input=s.object({"path": s.string(), "text": s.string()}),
        handler=lambda arguments: "ok",
    )
    adapter = OpenAITools(Runtime([write]))
    arguments = {"path": "a", "text": "b", **{f"pth{index:06d}": index for index in range(300_000)}}
    raw = json.dumps(arguments)
    assert len(raw) > 5_000_000
    call = {"id": "1", "function": {"name": "notes_write", "arguments": raw}}
    answer: dict[str, Any] = {}
    assert _took(lambda: answer.update(adapter.handle_sync(call))) < 10  # about 137 s of CPU through serve before
    lines = answer["content"].splitlines()
    assert lines[0] == "INPUT_INVALID: notes_write was called with invalid input (more than 1000 problems):"
    assert lines[1] == '- "pth000000" is an unexpected field; allowed fields are "path", "text".'
    assert lines[-2:] == [
        "- ... and more: checking stopped after 1001 problems.",
        "Fix the arguments and call notes_write again.",
    ]


def test_past_the_first_issues_an_unexpected_field_gets_no_suggestion() -> None:
    schema = s.object({"path": s.string()})
    with pytest.raises(SchemaError) as caught:
        schema.parse({"path": "a", **{f"pth{index}": 0 for index in range(SUGGESTED_ISSUES + 5)}})
    details = [issue.detail for issue in caught.value.issues]
    assert details[0] == 'is an unexpected field; did you mean "path"?'
    assert details[SUGGESTED_ISSUES - 1] == 'is an unexpected field; did you mean "path"?'
    assert details[SUGGESTED_ISSUES:] == ["is an unexpected field"] * 5
