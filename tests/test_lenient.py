"""Lenient mode's repair engine (hermes_core.schema._repair): every rule, and every value that must not be repaired.

Each golden case is one field ``x`` of an object, so a repair's path is
``("x",)``: what was sent, what it became (or None: nothing is repaired and
the caller reports the original ``INPUT_INVALID``), and the rule.
"""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, Runtime, define_tool, tool
from hermes_core import schema as s
from hermes_core._base._arguments import ARGUMENTS_MAX, JsonTextError, parse_arguments, read_json
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
    ("trailing zeros", s.number(), "2.50", 2.5, "numeric_string"),
    ("a small exponent", s.number(), "-1.25e-1", -0.125, "numeric_string"),
    ("an integer no float holds, for a number", s.number(), "1e25", 10**25, "numeric_string"),
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
    # numbers: not exactly a JSON number, or no value equal to the one it names (more in NUMBERS)
    ("a fraction for an integer", s.integer(), "5.5"),
    ("a small fraction for an integer", s.integer(), "1e-1"),
    ("underflows to zero", s.number(), "1e-400"),
    ("more digits than a float keeps", s.number(), "0.1000000000000000000001"),
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


# -- numbers: the value the string names, exactly ---------------------------------------------------

_SMALLEST_FLOAT = str(Decimal.from_float(5e-324))  # 2**-1074 written out: 4.940656...E-324, 751 significant digits
_LIMIT = sys.get_int_max_str_digits()

# (the string sent, what an integer field makes of it, what a number field makes of it); None: not repaired.
# Each value is compared with its type: 1000 is not 1000.0.
NUMBERS: list[tuple[str, Any, Any]] = [
    # exponents: the exact decimal, never the float on the way
    ("1e25", 10**25, 10**25),
    ("1e29", 10**29, 10**29),
    ("-1e25", -(10**25), -(10**25)),
    ("1E+2", 100, 100.0),
    ("1e+02", 100, 100.0),
    ("1e3", 1000, 1000.0),
    ("1.5e1", 15, 15.0),
    ("2.5E1", 25, 25.0),
    ("1.25e1", None, 12.5),
    ("1e22", 10**22, 1e22),  # the largest power of ten a float holds exactly
    ("1e23", 10**23, 10**23),  # float("1e23") is 99999999999999991611392
    ("123456789012345678e5", 12345678901234567800000, 12345678901234567800000),
    ("1500e-2", 15, 15.0),
    ("125e-3", None, 0.125),
    ("5e-1", None, 0.5),
    ("1e-1", None, 0.1),
    ("1e-0", 1, 1.0),
    ("0.1e-0", None, 0.1),
    ("5e+0", 5, 5.0),
    ("1.5e-7", None, 1.5e-7),
    ("1e400", 10**400, 10**400),  # an integer, exactly; the JSON number 1e400 reads as infinity
    ("1e-400", None, None),  # float() makes 0.0 of it
    ("5e-324", None, 5e-324),  # the smallest float, 4.94...e-324, whose shortest form this is
    (_SMALLEST_FLOAT, None, 5e-324),  # ... and this, exactly
    ("0e1000000000", 0, 0.0),  # zero, whatever the exponent
    ("-0e-1000000000", 0, -0.0),
    ("0.000e-5", 0, 0.0),
    # many digits
    ("12345678901234567890123", 12345678901234567890123, 12345678901234567890123),
    ("12345678901234567890123.0", 12345678901234567890123, 12345678901234567890123),
    ("12345678901234567890.000000000000000000000", 12345678901234567890, 12345678901234567890),
    ("5.0000000000000000000001", None, None),  # float() makes 5.0 of it
    ("1.0000000000000000000000000000000000000000001", None, None),
    ("0.1000000000000000000001", None, None),
    ("0.1", None, 0.1),  # the float the JSON number 0.1 reads as: its shortest form is this decimal
    ("3.14", None, 3.14),
    ("59.9", None, 59.9),
    ("0.5", None, 0.5),
    ("59.75", None, 59.75),
    ("2.50", None, 2.5),
    ("-0.125", None, -0.125),
    (str(Decimal.from_float(0.1)), None, 0.1),  # the float nearest 0.1, written out exactly: that float
    # past 2**53, where floats skip integers
    ("9007199254740993", 2**53 + 1, 2**53 + 1),
    ("9007199254740993.0", 2**53 + 1, 2**53 + 1),  # float() makes 9007199254740992.0 of it
    ("9.007199254740993e15", 2**53 + 1, 2**53 + 1),
    ("-9007199254740993e0", -(2**53) - 1, -(2**53) - 1),
    ("9007199254740992.0", 2**53, 9007199254740992.0),  # this one a float holds
    ("18446744073709551617", 2**64 + 1, 2**64 + 1),
    ("18446744073709551617.0", 2**64 + 1, 2**64 + 1),
    # zeros and signs
    ("0", 0, 0),
    ("-0", 0, 0),  # as the JSON number -0 reads
    ("-0.0", 0, -0.0),
    ("+5", None, None),
    ("+1e25", None, None),
    ("--5", None, None),
    ("-", None, None),
    # as many digits as Python converts, and no more (decided before any digit is made)
    ("1e" + str(_LIMIT - 1), 10 ** (_LIMIT - 1), 10 ** (_LIMIT - 1)),
    ("1e" + str(_LIMIT), None, None),
    ("9" * _LIMIT, int("9" * _LIMIT), int("9" * _LIMIT)),
    ("9" * (_LIMIT + 1), None, None),
    ("1" + "0" * (_LIMIT - 1) + ".0", 10 ** (_LIMIT - 1), 10 ** (_LIMIT - 1)),
    ("1e1000000000", None, None),
    ("1e-1000000000", None, None),
    ("1e99999999999999999999999", None, None),
    ("1e" + "9" * 5000, None, None),
    ("1e-" + "0" * 5000 + "1", None, 0.1),
    # not JSON numbers: what Python's int() and float() read, and JSON does not
    (" 5", None, None),
    ("5 ", None, None),
    ("\t5", None, None),
    ("5\n", None, None),
    ("\u00a05", None, None),  # NO-BREAK SPACE
    ("00012", None, None),
    ("05", None, None),
    ("5.", None, None),
    (".5", None, None),
    ("1.e5", None, None),
    ("1e", None, None),
    ("1e+", None, None),
    ("0x10", None, None),
    ("0o7", None, None),
    ("0b1", None, None),
    ("1_000", None, None),
    ("1e1_0", None, None),
    ("1,000", None, None),
    ("inf", None, None),
    ("-inf", None, None),
    ("Infinity", None, None),
    ("nan", None, None),
    ("NaN", None, None),
    ("\uff15", None, None),  # FULLWIDTH DIGIT FIVE
    ("\uff11\uff45\uff12\uff15", None, None),  # 1e25 in full-width letters and digits
    ("\u0665", None, None),  # ARABIC-INDIC DIGIT FIVE
    ("1\u0665", None, None),
    ("1e\u0665", None, None),
    ("\U0001d7d3", None, None),  # MATHEMATICAL BOLD DIGIT FIVE
    ("5j", None, None),
    ("true", None, None),  # a boolean's text is no number, and stays a string
    ("", None, None),
]


@pytest.mark.parametrize(("sent", "integer", "number"), NUMBERS, ids=[repr(c[0])[:40] for c in NUMBERS])
def test_a_numeric_string_becomes_exactly_the_number_it_names_or_nothing(sent: str, integer: Any, number: Any) -> None:
    for schema, became in ((s.integer(), integer), (s.number(), number)):
        assert _repaired(schema, "5") is not None  # the field repairs a numeric string: a refusal below is this one
        repaired = _repaired(schema, sent)
        if became is None:
            assert repaired is None, (sent, schema)
            continue
        assert repaired is not None, (sent, schema)
        assert repaired.repairs == (Repair(("x",), sent, became, "numeric_string"),)
        assert type(repaired.input["x"]) is type(became)
        assert repaired.input == repaired.parsed == {"x": became}
        assert repr(repaired.input["x"]) == repr(became)  # -0.0 stays -0.0, and 0 is 0
        assert _names(repaired.input["x"], sent)


def test_an_enum_of_numbers_is_matched_by_the_exact_value() -> None:
    assert _repaired(s.enum([0.5, 2]), "0.5") is not None  # positive control: a float the string names exactly
    repaired = _repaired(s.enum([1e25, 10**25 + 1]), "1e25")
    assert repaired is None  # 1e25 is 10000000000000000905969664 as a float: no member is 10**25
    assert _repaired(s.enum([0.1, 0.2]), "0.1") is not None  # the float the JSON number 0.1 reads as
    repaired = _repaired(s.enum([10**25, 1]), "1e25")
    assert repaired is not None
    assert repaired.input == {"x": 10**25}


def test_the_digit_limit_is_pythons_as_it_is_set_now() -> None:
    try:
        sys.set_int_max_str_digits(1000)
        assert _repaired(s.integer(), "1e999") is not None
        assert _repaired(s.integer(), "1e1000") is None
        assert _repaired(s.integer(), "1" * 1001) is None
        sys.set_int_max_str_digits(0)  # no limit: the default one still bounds what an exponent makes
        assert _repaired(s.integer(), "1e4299") is not None
        assert _repaired(s.integer(), "1e4300") is None
    finally:
        sys.set_int_max_str_digits(_LIMIT)


def test_hostile_numeric_strings_are_refused_without_building_the_number() -> None:
    hostile = [
        "1e1000000000",
        "-1e999999999999999999",
        "1e-1000000000",
        "9" * 4000 + "e" + "9" * 5000,
        "1." + "0" * 1_000_000 + "1",  # a million digits after the point
        "1" * 1_000_000 + "e-999990",  # a million significant digits
    ]
    started = time.process_time()
    for text in hostile:
        for schema in (s.integer(), s.number()):
            assert _repaired(schema, text) is None, text[:40]
    # Long, but exactly a number: 1 written with a million zeros, and 10**4299 written with a million digits.
    one = _repaired(s.integer(), "0." + "0" * 999_999 + "1e1000000")
    assert one is not None
    assert one.input == {"x": 1}
    tenth = _repaired(s.number(), "0." + "0" * 1_000_000 + "1e1000000")  # 0.1, written with a million zeros
    assert tenth is not None
    assert tenth.input == {"x": 0.1}
    assert _repaired(s.integer(), "0." + "0" * 1_000_000 + "1e1000000") is None
    big = _repaired(s.integer(), "1" + "0" * 4299 + "." + "0" * 995_000)
    assert big is not None
    assert big.input == {"x": 10**4299}
    assert time.process_time() - started < 30  # each takes milliseconds; the bound only catches a runaway


# Texts of JSON numbers: the shapes models send, and the exact decimals of floats.
_DIGIT_TEXT = st.text("0123456789", min_size=1, max_size=24)
_WHOLE = st.just("0") | st.builds(
    lambda first, rest: first + rest, st.sampled_from("123456789"), st.text("0123456789", max_size=24)
)
_FRACTION = st.none() | _DIGIT_TEXT | st.sampled_from(["5", "25", "125", "0", "00", "75", "5000"])
_EXPONENT = st.none() | st.builds(
    lambda e, sign, zeros, n: f"{e}{sign}{zeros}{n}",
    st.sampled_from("eE"),
    st.sampled_from(["", "+", "-"]),
    st.sampled_from(["", "0", "00"]),
    st.integers(0, 450),
)


def _names(became: Any, text: str) -> bool:
    """Whether the repaired value is the decimal *text* names: exactly, or as a float's shortest form ("0.1")."""
    return Decimal(became) == Decimal(text) or (type(became) is float and Decimal(repr(became)) == Decimal(text))


@st.composite
def _json_number_texts(draw: st.DrawFn) -> str:
    sign = draw(st.sampled_from(["", "-"]))
    fraction = draw(_FRACTION)
    exponent = draw(_EXPONENT)
    return sign + draw(_WHOLE) + ("" if fraction is None else "." + fraction) + (exponent or "")


_NUMBER_TEXTS = (
    _json_number_texts()
    | st.floats(allow_nan=False, allow_infinity=False).map(repr)
    | st.floats(allow_nan=False, allow_infinity=False).map(lambda f: str(Decimal(f)))
    | st.integers().map(str)
    | st.integers().map(lambda n: f"{n}.0")
    | st.integers().filter(bool).map(lambda n: f"{n}00e-2")
)
_HYPOTHESIS = settings(max_examples=400, derandomize=True, deadline=None, database=None)


@_HYPOTHESIS
@given(_NUMBER_TEXTS)
def test_no_repair_changes_the_value_the_string_names(text: str) -> None:
    named = Fraction(text)  # exact (the text is a JSON number, which Fraction reads too)
    exact = float(text)
    float_holds_it = math.isfinite(exact) and named in (Fraction(exact), Fraction(repr(exact)))
    integral = named.denominator == 1 and len(str(abs(named.numerator))) <= _LIMIT
    for schema, integer in ((s.integer(), True), (s.number(), False)):
        repaired = _repaired(schema, text)
        if repaired is None:  # refused only where no value of the field's type is the one the string names
            assert not integral, text
            assert integer or not float_holds_it, text
            continue
        became = repaired.input["x"]
        assert type(became) is int if integer else type(became) in (int, float), (text, became)
        assert _names(became, text), (text, became)
        assert repaired.parsed == {"x": became}


_NEAR_NUMBERS = st.text("0123456789+-.eE xob_,\t\n\u0665\uff15\u00a0", max_size=12)


@_HYPOTHESIS
@given(_NEAR_NUMBERS | st.text(max_size=12))
def test_only_a_json_numbers_text_is_repaired_into_a_number(text: str) -> None:
    repaired = _repaired(s.number(), text)
    if repaired is None:
        return
    read = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} repaired"))
    assert text.isascii(), text
    assert text == text.strip(" \t\n\r"), text
    assert type(read) in (int, float)
    assert _names(repaired.input["x"], text)


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
        "where": '{"lat": "59.75", "lon": 10.75}',
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
        (("where",), '{"lat": "59.75", "lon": 10.75}', {"lat": "59.75", "lon": 10.75}, "json_string"),
        (("where", "lat"), "59.75", 59.75, "numeric_string"),
        (("hours", 0), "6", 6, "numeric_string"),
        (("hours", 2), "18", 18, "numeric_string"),
    ]
    assert repaired.parsed == {
        "city": "Oslo",
        "days": 5,
        "units": "fahrenheit",
        "hourly": True,
        "where": {"lat": 59.75, "lon": 10.75},
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
    from hermes_core._door import _door

    def answer(parse: Any) -> Any:
        try:
            return ("value", parse("t.x", raw))
        except Exception as error:
            return ("error", type(error).__name__, error.to_dict() if hasattr(error, "to_dict") else str(error))

    assert repr(answer(parse_arguments)) == repr(answer(_door.parse_arguments))  # repr: NaN is not equal to itself
