"""Lenient mode's repair engine (hermes_core.schema._repair): every rule, and every value that must not be repaired.

Each golden case is one field ``x`` of an object, so a repair's path is
``("x",)``: what was sent, what it became (or None: nothing is repaired and
the caller reports the original ``INPUT_INVALID``), and the rule.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core import InvalidDefinitionError, Runtime, define_tool, tool
from hermes_core import schema as s
from hermes_core._arguments import ARGUMENTS_MAX, JsonTextError, parse_arguments, read_json
from hermes_core.schema._repair import (
    REPAIR_RULES,
    REPAIR_STEPS_MAX,
    Repair,
    Repaired,
    repair_input,
    repairs_note,
)
from hermes_core.schema._validators import Validator, closed_validator, compile_schema


def _field(schema: s.Schema) -> Validator:
    return closed_validator(s.object({"x": schema}))


def _repaired(schema: s.Schema, sent: Any) -> Repaired | None:
    return repair_input(_field(schema), {"x": sent})


# -- each rule ---------------------------------------------------------------------------------------

REPAIRED: list[tuple[str, s.Schema, Any, Any, str]] = [
    # numeric_string: exactly a JSON number, lossless
    ("integer", s.integer(), "5", 5, "numeric_string"),
    ("negative integer", s.integer(), "-3", -3, "numeric_string"),
    ("zero", s.integer(), "0", 0, "numeric_string"),
    ("minus zero is zero, as JSON reads -0", s.integer(), "-0", 0, "numeric_string"),
    ("an integral decimal", s.integer(), "5.0", 5, "numeric_string"),
    ("an integral exponent", s.integer(), "1e3", 1000, "numeric_string"),
    ("an upper-case exponent", s.integer(), "2.5E1", 25, "numeric_string"),
    ("a big integer", s.integer(), "12345678901234567890", 12345678901234567890, "numeric_string"),
    ("number from an integer", s.number(), "5", 5, "numeric_string"),
    ("a decimal", s.number(), "2.5", 2.5, "numeric_string"),
    ("a decimal that reads back", s.number(), "0.1", 0.1, "numeric_string"),
    ("trailing zeros", s.number(), "2.50", 2.5, "numeric_string"),
    ("a small exponent", s.number(), "-1.5e-7", -1.5e-7, "numeric_string"),
    ("within bounds", s.integer(minimum=1, maximum=14), "3", 3, "numeric_string"),
    # boolean_string: the JSON literals, exactly
    ("true", s.boolean(), "true", True, "boolean_string"),
    ("false", s.boolean(), "false", False, "boolean_string"),
    ("as Python writes it", s.boolean(), "True", True, "boolean_string"),
    ("in any case", s.boolean(), "FALSE", False, "boolean_string"),
    # json_string: JSON text of an object or an array, where one is expected
    ("an object", s.object({"city": s.string()}), '{"city": "Oslo"}', {"city": "Oslo"}, "json_string"),
    ("an array", s.array(s.string()), '["a", "b"]', ["a", "b"], "json_string"),
    ("an empty object", s.object({}), "{}", {}, "json_string"),
    ("whitespace around JSON text", s.array(s.integer()), " [1, 2]\n", [1, 2], "json_string"),
    ("a record", s.record(s.integer()), '{"a": 1}', {"a": 1}, "json_string"),
    ("a tuple", s.tuple(s.integer(), s.string()), '[1, "a"]', [1, "a"], "json_string"),
    # enum_case: exactly one member, ignoring case
    ("an enum member", s.enum(["celsius", "fahrenheit"]), "Celsius", "celsius", "enum_case"),
    ("upper case", s.enum(["celsius", "fahrenheit"]), "CELSIUS", "celsius", "enum_case"),
    ("a mixed-case member", s.enum(["GetForecast", "GetAlerts"]), "getforecast", "GetForecast", "enum_case"),
    ("a literal", s.literal("auto"), "Auto", "auto", "enum_case"),
    ("a const", s.const("auto"), "AUTO", "auto", "enum_case"),
    ("an enum of numbers", s.enum([1, 2, 3]), "2", 2, "numeric_string"),
    ("an enum of booleans and strings", s.enum([True, "never"]), "true", True, "boolean_string"),
]


@pytest.mark.parametrize(("case", "schema", "sent", "became", "rule"), REPAIRED, ids=[c[0] for c in REPAIRED])
def test_each_rule_repairs_what_it_names(case: str, schema: s.Schema, sent: Any, became: Any, rule: str) -> None:
    repaired = _repaired(schema, sent)
    assert repaired is not None, case
    assert repaired.repairs == (Repair(("x",), sent, became, rule),)  # type: ignore[arg-type]
    assert repaired.input == {"x": became}
    assert type(repaired.input["x"]) is type(became)
    assert repaired.parsed == {"x": became}


NOT_REPAIRED: list[tuple[str, s.Schema, Any]] = [
    # numbers: not exactly a JSON number, or not losslessly one
    ("a fraction for an integer", s.integer(), "5.5"),
    ("a small fraction for an integer", s.integer(), "1e-1"),
    ("out of float range", s.number(), "1e400"),
    ("out of float range, integer", s.integer(), "1e400"),
    ("underflows to zero", s.number(), "1e-400"),
    ("more digits than a float keeps", s.number(), "0.1000000000000000000001"),
    ("an integer past a float, as a decimal", s.integer(), "12345678901234567890.0"),
    ("an integer longer than Python reads", s.integer(), "1" * 5000),
    ("a space before", s.integer(), " 5"),
    ("a space after", s.integer(), "5 "),
    ("a plus sign", s.integer(), "+5"),
    ("a leading zero", s.integer(), "05"),
    ("a trailing point", s.number(), "5."),
    ("a leading point", s.number(), ".5"),
    ("hexadecimal", s.integer(), "0x10"),
    ("underscores", s.integer(), "5_000"),
    ("a thousands separator", s.integer(), "5,000"),
    ("NaN", s.number(), "NaN"),
    ("Infinity", s.number(), "Infinity"),
    ("minus Infinity", s.number(), "-Infinity"),
    ("inf", s.number(), "inf"),
    ("the empty string", s.integer(), ""),
    ("a word", s.integer(), "five"),
    ("other digits", s.integer(), "\u0665"),  # ARABIC-INDIC DIGIT FIVE: int() reads it, JSON does not
    ("full-width digits", s.integer(), "\uff15"),
    ("a unit after the number", s.number(), "5m"),
    ("out of bounds once read", s.integer(maximum=14), "20"),
    ("a boolean for a number", s.integer(), True),
    ("a fraction, not a string", s.integer(), 5.5),
    # booleans: only the words true and false
    ("yes", s.boolean(), "yes"),
    ("on", s.boolean(), "on"),
    ("t", s.boolean(), "t"),
    ("a longer word", s.boolean(), "truely"),
    ("1 for a boolean", s.boolean(), "1"),
    ("a number for a boolean", s.boolean(), 1),
    ("a space around true", s.boolean(), " true"),
    # JSON strings: only JSON text of the expected kind
    ("Python's repr of a dict", s.object({"city": s.string()}), "{'city': 'Oslo'}"),
    ("broken JSON", s.array(s.integer()), "[1, 2"),
    ("an array where an object is expected", s.object({}), "[]"),
    ("an object where an array is expected", s.array(s.integer()), "{}"),
    ("a string encoded twice", s.object({}), json.dumps("{}")),
    ("null for an object", s.object({}), "null"),
    ("the empty string for an object", s.object({}), ""),
    ("nested deeper than JSON is read", s.array(s.any()), "[" * 100_000 + "]" * 100_000),
    ("valid JSON the schema still refuses", s.object({"city": s.string()}), '{"city": 5}'),
    # enums: exactly one member, ignoring case only
    ("two members ignoring case", s.enum(["Celsius", "celsius"]), "CELSIUS"),
    ("no member", s.enum(["celsius", "fahrenheit"]), "kelvin"),
    ("a space after", s.enum(["celsius", "fahrenheit"]), "celsius "),
    ("a prefix", s.enum(["celsius", "fahrenheit"]), "cels"),
    ("case folding is not case", s.enum(["maße", "gewicht"]), "MASSE"),
    ("a number's text for a string enum", s.enum(["1", "2"]), 1),
    ("a fraction for an integer enum", s.enum([1, 2]), "1.5"),
    # what no rule makes
    ("a number for a string", s.string(), 5),
    ("null's text for null", s.nullable(s.integer()), "null"),
    ("a list for a string", s.string(), ["a"]),
]


@pytest.mark.parametrize(("case", "schema", "sent"), NOT_REPAIRED, ids=[c[0] for c in NOT_REPAIRED])
def test_what_must_not_be_repaired_is_not(case: str, schema: s.Schema, sent: Any) -> None:
    assert _repaired(schema, sent) is None, case


def test_every_rule_has_golden_cases() -> None:
    assert set(REPAIR_RULES) == {rule for *_, rule in REPAIRED}


# -- where repairs apply -----------------------------------------------------------------------------

FORECAST = s.object(
    {
        "city": s.string(min_length=1),
        "days": s.optional(s.integer(minimum=1, maximum=14), default=3),
        "units": s.optional(s.enum(["celsius", "fahrenheit"]), default="celsius"),
        "hourly": s.optional(s.boolean(), default=False),
        "where": s.optional(s.object({"lat": s.number(), "lon": s.number()})),
        "hours": s.optional(s.array(s.integer(minimum=0, maximum=23))),
    }
)


def test_repairs_inside_objects_and_arrays_are_each_reported_in_walk_order() -> None:
    sent = {
        "city": "Oslo",
        "days": "5",
        "units": "Fahrenheit",
        "hourly": "true",
        "where": '{"lat": "59.9", "lon": 10.75}',
        "hours": ["6", 12, "18"],
    }
    before = copy.deepcopy(sent)
    repaired = repair_input(closed_validator(FORECAST), sent)
    assert repaired is not None
    assert sent == before  # the value sent is never changed
    assert [(r.path, r.sent, r.became, r.rule) for r in repaired.repairs] == [
        (("days",), "5", 5, "numeric_string"),
        (("units",), "Fahrenheit", "fahrenheit", "enum_case"),
        (("hourly",), "true", True, "boolean_string"),
        (("where",), '{"lat": "59.9", "lon": 10.75}', {"lat": "59.9", "lon": 10.75}, "json_string"),
        (("where", "lat"), "59.9", 59.9, "numeric_string"),
        (("hours", 0), "6", 6, "numeric_string"),
        (("hours", 2), "18", 18, "numeric_string"),
    ]
    assert repaired.parsed == {
        "city": "Oslo",
        "days": 5,
        "units": "fahrenheit",
        "hourly": True,
        "where": {"lat": 59.9, "lon": 10.75},
        "hours": [6, 12, 18],
    }


def test_the_whole_input_as_a_json_string_is_repaired_at_the_root() -> None:
    repaired = repair_input(closed_validator(FORECAST), '{"city": "Oslo", "days": "2"}')
    assert repaired is not None
    assert [(r.path, r.rule) for r in repaired.repairs] == [((), "json_string"), (("days",), "numeric_string")]
    assert repaired.parsed == {"city": "Oslo", "days": 2, "units": "celsius", "hourly": False}


def test_nothing_is_repaired_when_the_input_still_fails_once_repaired() -> None:
    validator = closed_validator(FORECAST)
    assert repair_input(validator, {"city": "Oslo", "days": "5", "dayz": 3}) is None  # a key no rule repairs
    assert repair_input(validator, {"city": "", "days": "5"}) is None  # a field no rule repairs
    assert repair_input(validator, {"city": "Oslo", "days": "50"}) is None  # repaired, then out of bounds
    assert repair_input(validator, {"city": "Oslo", "days": 5}) is None  # nothing to repair


@pytest.mark.parametrize(
    ("schema", "sent", "became"),
    [
        (s.union(s.integer(), s.boolean()), "true", True),
        (s.union(s.integer(), s.boolean()), "7", 7),
        (s.union(s.integer(), s.number()), "5", 5),  # both read it as the same value: one outcome
        (s.nullable(s.integer()), "5", 5),
        (s.union(s.array(s.integer()), s.integer()), '["1", 2]', [1, 2]),
        (s.union(s.object({"a": s.integer()}), s.object({"b": s.boolean()})), {"b": "true"}, {"b": True}),
    ],
)
def test_in_a_union_only_the_one_outcome_the_alternatives_agree_on(schema: s.Schema, sent: Any, became: Any) -> None:
    repaired = _repaired(schema, sent)
    assert repaired is not None
    assert repaired.input == {"x": became}


@pytest.mark.parametrize(
    ("schema", "sent"),
    [
        (s.union(s.integer(), s.string()), "7"),  # accepted as sent: nothing to repair
        (s.union(s.enum(["Red"]), s.enum(["RED"])), "red"),  # two outcomes
        (s.union(s.integer(), s.enum(["auto"])), "Manual"),  # none
    ],
)
def test_a_union_whose_alternatives_disagree_or_accept_it_as_sent_is_left(schema: s.Schema, sent: Any) -> None:
    assert _repaired(schema, sent) is None


def test_a_one_of_is_checked_again_once_repaired() -> None:
    imported = s.from_json_schema(
        {"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}}
    )
    # "5" read as 5 matches both alternatives, which oneOf refuses: nothing is repaired.
    assert repair_input(closed_validator(imported), {"x": "5"}) is None
    one = s.from_json_schema(
        {"type": "object", "properties": {"x": {"oneOf": [{"type": "integer"}, {"type": "null"}]}}}
    )
    repaired = repair_input(closed_validator(one), {"x": "5"})
    assert repaired is not None
    assert repaired.parsed == {"x": 5}


def test_repairs_follow_refs_and_imported_links() -> None:
    named = {"Point": s.object({"x": s.number(), "y": s.number()})}
    validator = compile_schema(s.object({"at": s.ref("Point"), "path": s.array(s.ref("Point"))}), named)
    repaired = repair_input(validator, {"at": {"x": "1", "y": 2}, "path": '[{"x": 3, "y": "4.5"}]'})
    assert repaired is not None
    assert repaired.parsed == {"at": {"x": 1, "y": 2}, "path": [{"x": 3, "y": 4.5}]}

    tree = s.from_json_schema(
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "size": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    },
                }
            },
            "$ref": "#/$defs/node",
        }
    )
    repaired = repair_input(closed_validator(tree), {"size": "1", "children": [{"size": "2", "children": []}]})
    assert repaired is not None
    assert [r.path for r in repaired.repairs] == [("size",), ("children", 0, "size")]


def test_other_keys_of_an_object_are_repaired_by_their_schema() -> None:
    schema = s.from_json_schema(
        {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": {"type": "integer"}}
    )
    repaired = repair_input(closed_validator(schema), {"name": "a", "b": "2"})
    assert repaired is not None
    assert repaired.parsed == {"name": "a", "b": 2}


# -- what a repair says --------------------------------------------------------------------------------


def test_a_repair_in_words_and_the_note_a_model_reads() -> None:
    repairs = [
        Repair(("radius",), "5", 5, "numeric_string"),
        Repair(("unit",), "Celsius", "celsius", "enum_case"),
        Repair(("where",), '{"lat": 1}', {"lat": 1}, "json_string"),
        Repair(("hours",), "[1]", [1], "json_string"),
        Repair((), "{}", {}, "json_string"),
        Repair(("files", 0, "a.b"), "x" * 100, "X" * 100, "enum_case"),
    ]
    assert [str(repair) for repair in repairs] == [
        '"radius": "5" read as 5',
        '"unit": "Celsius" read as "celsius"',
        '"where": an object sent as a string of JSON, read as an object',
        '"hours": an array sent as a string of JSON, read as an array',
        "the input: an object sent as a string of JSON, read as an object",
        '"files.0[\'a.b\']": "' + "x" * 36 + '... read as "' + "X" * 36 + "...",
    ]
    assert repairs_note(repairs[:2]) == (
        'Note: the arguments were repaired before the call: "radius": "5" read as 5; "unit": "Celsius" read as '
        '"celsius". Next time, send them as read.'
    )
    assert repairs_note(repairs).endswith("; and 1 more. Next time, send them as read.")
    assert repairs[0].to_dict() == {
        "path": ["radius"],
        "sent": "5",
        "became": 5,
        "rule": "numeric_string",
        "message": '"radius": "5" read as 5',
    }


# -- bounds ----------------------------------------------------------------------------------------------


def test_json_strings_are_read_with_the_bounds_of_a_calls_arguments() -> None:
    with pytest.raises(JsonTextError) as caught:
        read_json(" " * (ARGUMENTS_MAX + 1))
    assert caught.value.issue.kind == "too_big"
    assert _repaired(s.array(s.any()), "[" + " " * ARGUMENTS_MAX + "]") is None
    with pytest.raises(JsonTextError) as caught:
        read_json("[" * 100_000 + "]" * 100_000)
    assert caught.value.issue.kind == "too_deep"
    assert parse_arguments("t", None) == {}
    assert parse_arguments("t", "") == {}


def test_a_union_that_reaches_itself_through_objects_is_repaired_once() -> None:
    # Each level is a union of two objects whose field is the union again; "5" at the bottom.
    document = {
        "$defs": {
            "t": {
                "anyOf": [
                    {"type": "object", "properties": {"a": {"$ref": "#/$defs/t"}}},
                    {"type": "object", "properties": {"a": {"$ref": "#/$defs/t"}, "b": {"type": "integer"}}},
                    {"type": "integer"},
                ]
            }
        },
        "$ref": "#/$defs/t",
    }
    validator = closed_validator(s.from_json_schema(document))
    value: Any = "5"
    for _ in range(6):
        value = {"a": value}
    repaired = repair_input(validator, value)
    assert repaired is not None
    assert len(repaired.repairs) == 1


def test_work_on_alternatives_is_bounded() -> None:
    validator = closed_validator(s.object({"x": s.array(s.union(s.integer(), s.boolean()))}))
    repaired = repair_input(validator, {"x": ["true"] * 1000})
    assert repaired is not None
    assert len(repaired.repairs) == 1000
    # Each item costs a check of each alternative: past REPAIR_STEPS_MAX, nothing is repaired.
    assert REPAIR_STEPS_MAX < 2 * 60_000
    assert repair_input(validator, {"x": ["true"] * 60_000}) is None


# -- the tool's own choice -----------------------------------------------------------------------------


def test_a_tool_says_whether_it_is_lenient_and_none_leaves_it_to_the_caller() -> None:
    def made(**given: Any) -> Any:
        return define_tool(name="t.x", version="1.0.0", description="X.", input=FORECAST, handler=dict, **given)

    assert made().lenient is None
    assert made(lenient=True).lenient is True
    assert made(lenient=False).lenient is False
    with pytest.raises(InvalidDefinitionError) as caught:
        made(lenient="yes")
    assert str(caught.value) == "tool \"t.x\": lenient must be True, False or None (the caller's choice), got 'yes'."

    @tool(name="t.y", version="1.0.0", lenient=True)
    def forecast(city: str, days: int = 3) -> str:
        """A forecast."""
        return f"{days} days in {city}"

    assert forecast.lenient is True
    entry = Runtime([forecast]).tools["t.y"].validators()[0]
    repaired = repair_input(entry, {"city": "Oslo", "days": "2"})
    assert repaired is not None
    assert repaired.parsed == {"city": "Oslo", "days": 2}


def test_the_corpus_has_no_wrong_repair_and_leaves_no_repairable_call() -> None:
    """bench/bench_lenient.py, smaller: it exits 1 on a wrong repair, or a repair of a call that is not repairable."""
    bench = Path(__file__).resolve().parent.parent / "bench" / "bench_lenient.py"
    done = subprocess.run(
        [sys.executable, str(bench), "--calls-per-tool", "20", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    counts = json.loads(done.stdout)["counts"]
    assert counts["repaired"] == counts["repairable"] > 0
    assert counts.get("accepted, not as meant", 0) == 0


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "{}",
        '{"a": [1, 2.5, "x", null, true]}',
        ' {"a": 1}\n',
        '{"a": 1',
        '{"a": 1} x',
        "[" * 100_000 + "]" * 100_000,
        '{"n": ' + "1" * 5000 + "}",
        '{"n": NaN}',
        " " * (ARGUMENTS_MAX + 1),
        {"already": "parsed"},
        b'{"bytes": 1}',
    ],
    ids=lambda raw: repr(raw)[:30],
)
def test_the_arguments_are_read_as_the_front_door_reads_them(raw: Any) -> None:
    """_arguments is the reader the front door's parse_arguments is; the same answer for any text."""
    from hermes_core import _door

    def answer(parse: Any) -> Any:
        try:
            return ("value", parse("t.x", raw))
        except Exception as error:
            return ("error", type(error).__name__, error.to_dict() if hasattr(error, "to_dict") else str(error))

    assert repr(answer(parse_arguments)) == repr(answer(_door.parse_arguments))  # repr: NaN is not equal to itself
