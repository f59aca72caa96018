"""Tests for hermesos-math: results, refusals of attacks and mistakes, and properties over random input."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_math import MAX_DEPTH, MAX_DIGITS, MAX_LENGTH, MAX_NODES, evaluate, math_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import InputInvalidError, InputRejected, Runtime, discover_plugins
from hermes_core.testing import check_plugin, issues, raises_code

RUNTIME = Runtime([math_eval])


def call(expression: str) -> Any:
    """Call math.eval through a real runtime, as a model's call would go."""
    return RUNTIME.call_sync("math.eval", {"expression": expression})


def refusal(expression: str) -> InputInvalidError:
    """The InputInvalidError math.eval raises for *expression* (failing the test if it returns)."""
    with pytest.raises(InputInvalidError) as caught:
        call(expression)
    return caught.value


# -- results ---------------------------------------------------------------------------------

RESULTS: list[tuple[str, int | float]] = [
    ("1 + 2", 3),
    ("(2 + 3) * 4", 20),
    ("2 + 3 * 4", 14),
    ("7 / 2", 3.5),
    ("8 / 2", 4.0),
    ("7 // 2", 3),
    ("-7 // 2", -4),
    ("-7 % 3", 2),
    ("7.5 % 2", 1.5),
    ("2 ** 10", 1024),
    ("2 ** -1", 0.5),
    ("2 ** 3 ** 2", 512),
    ("-2 ** 2", -4),
    ("(-2) ** 3", -8),
    ("+5 - -5", 10),
    ("1_000_000 * 3", 3_000_000),
    ("0x10 + 0b11 + 0o7", 26),
    (".5 + 1.", 1.5),
    ("1e3", 1000.0),
    ("2.5e-3 * 1000", 2.5),
    ("0.1 + 0.2", 0.1 + 0.2),
    ("abs(-3)", 3),
    ("(abs)(-3)", 3),
    ("round(2.5)", 2),
    ("round(2.675, 2)", 2.67),
    ("round(1234, -2)", 1200),
    ("min(4, 2, 8)", 2),
    ("max(4)", 4),
    ("sqrt(16)", 4.0),
    ("sqrt(2) / 2", math.sqrt(2) / 2),
    ("floor(-2.5)", -3),
    ("ceil(2.1)", 3),
    ("exp(0)", 1.0),
    ("log(e)", 1.0),
    ("log(8, 2)", 3.0),
    ("sin(0) + cos(0)", 1.0),
    ("tan(0)", 0.0),
    ("pi", math.pi),
    ("2 * pi", math.tau),
    ("  1 + 2  ", 3),
    ("(1 +\n 2)", 3),
    ("\t3\t*\t3", 9),
    ("10 ** 999", 10**999),
    ("-(10 ** 999) + 1", -(10**999) + 1),
    ("2 ** -1074", 5e-324),
    ("1e-400", 0.0),
    (" + ".join(["1"] * 40), 40),
    ("(" * MAX_DEPTH + "1" + ")" * MAX_DEPTH, 1),
]


@pytest.mark.parametrize(("expression", "expected"), RESULTS)
def test_expression_evaluates_to(expression: str, expected: int | float) -> None:
    """Each expression gives Python's own value, with Python's types (int stays exact, / gives float)."""
    result = call(expression)
    assert result == expected
    assert type(result) is type(expected)


def test_a_sum_of_as_many_terms_as_allowed_evaluates() -> None:
    """A left chain costs no depth: a sum is bounded only by the node count."""
    terms = (MAX_NODES + 1) // 2  # n numbers and n - 1 additions
    assert call("+".join(["1"] * terms)) == terms
    assert refusal("+".join(["1"] * (terms + 1))).issues[0].kind == "too_big"


# -- refusals --------------------------------------------------------------------------------

DEEP = "(" * 10_000 + "1" + ")" * 10_000

REFUSALS: list[tuple[str, str, str]] = [
    # huge powers: refused before they are computed
    (
        "9**9**9",
        "too_big",
        'raises to a power in "9**9**9" at column 1 whose result would have about 369,693,100 digits',
    ),
    ("2 ** 10000", "too_big", "would have about 3,010 digits; integers are limited to 1,000 digits"),
    ("2 ** (10 ** 400)", "too_big", "would have more than 10**15 digits"),
    ("10 ** 1000", "too_big", "makes an integer of more than 1,000 digits"),
    ("10**500 * 10**500", "too_big", "makes an integer of more than 1,000 digits"),
    ("2.0 ** 5000", "too_big", 'overflows in "2.0 ** 5000" at column 1: integers are limited to 1,000 digits and'),
    # float overflow is refused, never returned as inf
    (
        "1e308 * 10",
        "too_big",
        'overflows in "1e308 * 10" at column 1: integers are limited to 1,000 digits and decimals to about 1.8e308',
    ),
    ("1e999", "too_big", 'overflows in "1e999" at column 1'),
    ("exp(1000)", "too_big", 'overflows in "exp(1000)" at column 1'),
    ("10 ** 999 / 3", "too_big", "overflows"),
    ("sqrt(10 ** 999)", "too_big", "overflows"),
    # nesting and size
    (DEEP, "too_big", "must have at most 1000 characters, got 20001"),
    ("1" * (MAX_LENGTH + 1), "too_big", f"must have at most {MAX_LENGTH} characters"),
    (
        "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1),
        "too_deep",
        f"nests parentheses more than {MAX_DEPTH} deep (at column {MAX_DEPTH + 1})",
    ),
    ("-" * 100 + "1", "too_deep", f"nests operators more than {MAX_DEPTH} deep"),
    ("2**" * 40 + "2", "too_deep", f"nests operators more than {MAX_DEPTH} deep"),
    ("1+" * 300 + "1", "too_big", f"has more than {MAX_NODES} numbers, names and operations"),
    # Python that is not arithmetic
    (
        "__import__('os')",
        "invalid",
        'has an unsupported name "__import__" at column 1 (there are no variables); '
        "use numbers, + - * / // % ** and parentheses, the functions abs(), round()",
    ),
    ("__import__", "invalid", 'unsupported name "__import__"'),
    ("(1).real", "invalid", "has . at column 4: attribute access is not supported"),
    ("pi.real", "invalid", "attribute access is not supported"),
    ("lambda: 1", "invalid", 'has the Python keyword "lambda" at column 1, which is not supported'),
    ("[x for x in (1, 2)]", "invalid", "has [ at column 1: lists, indexing and comprehensions are not supported"),
    ("(x for x in (1, 2))", "invalid", 'unsupported name "x" at column 2'),
    ("{1: 2}", "invalid", "has { at column 1: sets and dictionaries are not supported"),
    ("x + 1", "invalid", 'has an unsupported name "x" at column 1'),
    ("1 + x", "invalid", 'has an unsupported name "x" at column 5'),
    ("1 +\n  y", "invalid", 'has an unsupported name "y" at line 2, column 3'),
    ("'abc'", "invalid", "has ' at column 1: strings are not supported"),
    ('"abc" * 3', "invalid", 'has " at column 1: strings are not supported'),
    ("open(1)", "invalid", 'has an unsupported name "open" at column 1'),
    ("eval(1)", "invalid", 'has an unsupported name "eval"'),
    ("True + 1", "invalid", 'has the Python keyword "True"'),
    ("1 if 1 else 2", "invalid", 'has the Python keyword "if" at column 3'),
    ("1if 1else 2", "invalid", 'has a malformed number "1if" at column 1'),
    ("1.2.3", "invalid", 'has a malformed number "1.2.3"'),
    ("1j * 2", "invalid", "has the imaginary number 1j at column 1; complex numbers are not supported"),
    ("1 < 2", "invalid", "has < at column 3: comparisons and bit shifts are not supported"),
    ("1 << 200000", "invalid", "comparisons and bit shifts are not supported"),
    ("2 ^ 3", "invalid", "bitwise operators are not supported (the power operator is **)"),
    ("a = 1", "invalid", 'unsupported name "a"'),
    ("1; 2", "invalid", "has ; at column 2: only one expression is evaluated per call"),
    ("1 # note", "invalid", "comments are not supported"),
    ("1 @ 2", "invalid", "matrix multiplication is not supported"),
    ("\\", "invalid", "backslashes are not supported"),
    ("3 \u00d7 4", "invalid", "has an unsupported character U+00D7 at column 3"),
    ("1\x00", "invalid", "has an unsupported character U+0000 at column 2"),
    # calls
    ("pi(2)", "invalid", "calls the constant pi at column 1, which is not a function"),
    ("sqrt", "invalid", "uses the function sqrt without calling it at column 1; call it as sqrt(x)"),
    ("sqrt(1, 2)", "invalid", "calls sqrt() with 2 arguments at column 1; call it as sqrt(x)"),
    ("max()", "invalid", "calls max() with 0 arguments at column 1; call it as max(x, y, ...)"),
    ("(1)(2)", "invalid", "calls something at column 1, which is not a function"),
    ("round(1, pi=2)", "invalid", "has = at column 12: comparisons, assignments and keyword arguments"),
    ("max(*(1, 2))", "invalid", "unpacks with * at column 5, which is not supported"),
    ("round(1, 2.5)", "invalid", "calls round() with 2.5 digits at column 1; the digits must be a whole number"),
    ("round(1, -10 ** 9)", "invalid", "calls round() with -1000000000 digits"),
    # arithmetic with no answer
    ("1 / 0", "invalid", 'divides by zero in "1 / 0" at column 1'),
    ("2 + 1 // 0", "invalid", 'divides by zero in "1 // 0" at column 5'),
    ("5 % 0.0", "invalid", "divides by zero"),
    ("0 ** -1", "invalid", "divides by zero"),
    ("log(8, 1)", "invalid", 'divides by zero in "log(8, 1)"'),
    ("sqrt(-1)", "invalid", "calls sqrt(-1) at column 1, which has no real result"),
    ("log(0)", "invalid", "calls log(0) at column 1, which has no real result"),
    ("(-8) ** (1 / 3)", "invalid", 'has no real result in "(-8) ** (1 / 3)" at column 1'),
    # syntax
    ("", "too_small", "must have at least 1 character"),
    ("   ", "invalid", "is blank; send an arithmetic expression such as (2 + 3) * 4"),
    ("1 +", "invalid", "is not a valid expression: invalid syntax"),
    ("(1", "invalid", "is not a valid expression: '(' was never closed (at column 1)"),
    ("  (1", "invalid", "'(' was never closed (at column 3)"),
    ("1)", "invalid", "is not a valid expression: unmatched ')' (at column 2)"),
    ("1,2", "invalid", "has several values separated by commas at column 1"),
]


@pytest.mark.parametrize(("expression", "kind", "message"), REFUSALS, ids=[r[0][:30] for r in REFUSALS])
def test_expression_is_refused_with_a_specific_message(expression: str, kind: str, message: str) -> None:
    """Each attack or mistake is INPUT_INVALID, at "expression", saying what was wrong and what would be right."""
    error = refusal(expression)
    assert error.code == "INPUT_INVALID"
    assert error.retryable
    [issue] = error.issues
    assert issue.path == ("expression",)
    assert issue.kind == kind
    assert message in issue.detail
    assert error.message.startswith('math.eval was called with invalid input: "expression" ')


def test_golden_message_for_an_unsupported_name() -> None:
    """The whole message a model reads, pinned once."""
    assert refusal("2 * x").message == (
        'math.eval was called with invalid input: "expression" has an unsupported name "x" at column 5 '
        "(there are no variables); use numbers, + - * / // % ** and parentheses, the functions abs(), round(), "
        "min(), max(), sqrt(), floor(), ceil(), exp(), log(), sin(), cos(), tan() and the constants pi and e.\n"
        "Fix the arguments and call math.eval again."
    )


def test_evaluate_bounds_length_without_the_runtime() -> None:
    """evaluate() keeps its own length bound when called directly, outside the schema, refusing with the core's API."""
    with pytest.raises(InputRejected) as caught:
        evaluate(DEEP)
    [issue] = caught.value.issues
    assert (issue.path, issue.kind) == (("expression",), "too_big")
    assert issue.detail == "is 20,001 characters long; at most 1,000 are allowed"


def test_a_long_quote_is_shortened_to_40_characters() -> None:
    """A quoted piece of the expression is at most 40 characters, "..." included."""
    name = "x" * 50
    detail = refusal(name).issues[0].detail
    assert detail.startswith(f'has an unsupported name "{"x" * 37}..." at column 1')


def test_observation_is_json_ready() -> None:
    """What goes back to the model is an INPUT_INVALID observation, never an exception."""
    observation = RUNTIME.observe_sync("math.eval", {"expression": "9**9**9"})
    assert observation["ok"] is False
    assert observation["error"]["code"] == "INPUT_INVALID"
    assert observation["error"]["issues"][0]["path"] == ["expression"]
    assert RUNTIME.observe_sync("math.eval", {"expression": "6 * 7"}) == {"ok": True, "output": 42}


def test_definition_shows_the_bounds_to_the_model() -> None:
    """The tool needs no permission, and its input schema carries the length bound."""
    assert math_eval.permissions == ()
    [definition] = RUNTIME.definitions()
    assert definition["name"] == "math.eval"
    assert definition["inputSchema"]["properties"]["expression"]["maxLength"] == MAX_LENGTH
    assert definition["outputSchema"]["type"] == "number"


def test_installed_plugin_contributes_math_eval() -> None:
    """The entry point is installed: discovery finds the plugin and its tool."""
    found = discover_plugins(strict=False)
    [plugin] = [p for p in found.plugins if p.origin.distribution == "hermesos-math"]
    assert plugin.ok, plugin.problems
    assert [tool.name for tool in plugin.tools] == ["math.eval"]
    assert found.runtime().call_sync("math.eval", {"expression": "2 ** 5"}) == 32


# -- properties ------------------------------------------------------------------------------


def assert_bounded(result: object) -> None:
    """A result is a finite float or an int of at most MAX_DIGITS digits; never a bool, complex, inf or NaN."""
    assert type(result) in (int, float)
    if isinstance(result, float):
        assert math.isfinite(result)
    else:
        assert isinstance(result, int)
        assert abs(result) < 10**MAX_DIGITS


PIECES = ["9", "99", "0", "1e308", ".5", "2", "**", "*", "/", "//", "%", "+", "-", "(", ")", ",", " ",
          "sqrt(", "round(", "max(", "exp(", "log(", "pi", "e", "x", "'", "[", ".", "j", "_", "\n"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(PIECES), max_size=80).map("".join)))
def test_random_input_gives_a_bounded_number_or_a_tool_error(expression: str) -> None:
    """Whatever the text, the tool returns a bounded number or raises INPUT_INVALID, nothing else.

    Sizes are bounded by construction (length, depth, node count and digits), so
    no input can make it work long; the test asserts the bounds, not the time.
    """
    try:
        result = call(expression)
    except InputInvalidError as error:  # any other ToolError, or any other exception, fails the test
        issues = error.issues
    else:
        assert_bounded(result)
        return
    assert [issue.path for issue in issues] == [("expression",)]


class _RefusalExpectedError(Exception):
    """The oracle's way of saying the tool must refuse this expression."""


def _bounded(value: Any) -> Any:
    if isinstance(value, complex) or (isinstance(value, float) and not math.isfinite(value)):
        raise _RefusalExpectedError
    if isinstance(value, int) and abs(value) >= 10**MAX_DIGITS:
        raise _RefusalExpectedError
    return value


def _apply(function: Callable[..., Any], *arguments: Any) -> Any:
    """Apply *function* as the oracle does: every Python arithmetic error means a refusal."""
    try:
        return _bounded(function(*arguments))
    except (ArithmeticError, ValueError):
        raise _RefusalExpectedError from None


def _power(base: Any, exponent: int) -> Any:
    if isinstance(base, int) and abs(base) > 1 and exponent * math.log10(abs(base)) > MAX_DIGITS + 1:
        raise _RefusalExpectedError  # would be too big to compute here too
    return _apply(operator.pow, base, exponent)


Expr = tuple[str, Callable[[], Any]]

_numbers: st.SearchStrategy[Expr] = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(lambda n: (str(n), lambda: n)),
    st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(lambda x: (repr(x), lambda: x)),
    st.sampled_from([("pi", lambda: math.pi), ("e", lambda: math.e)]),
)
_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod}  # fmt: skip
_CALLS = {"abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil, "sqrt": math.sqrt}


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    def binary(op: str, left: Expr, right: Expr) -> Expr:
        return f"({left[0]} {op} {right[0]})", lambda: _apply(_BINARY[op], left[1](), right[1]())

    def power(base: Expr, exponent: int) -> Expr:
        return f"({base[0]} ** {exponent})", lambda: _power(base[1](), exponent)

    def negate(operand: Expr) -> Expr:
        return f"(-{operand[0]})", lambda: _apply(operator.neg, operand[1]())

    def function(name: str, argument: Expr) -> Expr:
        return f"{name}({argument[0]})", lambda: _apply(_CALLS[name], argument[1]())

    def extreme(name: str, arguments: list[Expr]) -> Expr:
        text = f"{name}({', '.join(a[0] for a in arguments)})"
        return text, lambda: _apply(min if name == "min" else max, [a[1]() for a in arguments])

    return st.one_of(
        st.builds(binary, st.sampled_from(sorted(_BINARY)), children, children),
        st.builds(power, children, st.integers(min_value=0, max_value=4)),
        st.builds(negate, children),
        st.builds(function, st.sampled_from(sorted(_CALLS)), children),
        st.builds(extreme, st.sampled_from(["min", "max"]), st.lists(children, min_size=1, max_size=3)),
    )


def _paren_depth(text: str) -> int:
    depth = deepest = 0
    for character in text:
        depth += {"(": 1, ")": -1}.get(character, 0)
        deepest = max(deepest, depth)
    return deepest


@settings(max_examples=300, deadline=None)
@given(st.recursive(_numbers, _extend, max_leaves=12))
def test_generated_arithmetic_matches_python(expr: Expr) -> None:
    """Well-formed arithmetic gives exactly Python's value, or is refused exactly where Python's has no bounded one."""
    text, value = expr
    if len(text) > MAX_LENGTH or _paren_depth(text) > MAX_DEPTH:
        return  # beyond the bounds, which the refusal tests cover
    try:
        expected = value()
    except _RefusalExpectedError:
        with pytest.raises(InputInvalidError):
            call(text)
        return
    result = call(text)
    assert_bounded(result)
    assert result == expected
    assert type(result) is type(expected)


def test_math_eval_runs_inline_on_the_event_loops_thread() -> None:
    # Cheap and never blocking: no worker thread under await runtime.call(...).
    assert math_eval.inline is True


# -- the contract, as the pytest plugin of hermesos-core[testing] checks it -------------------------


def test_the_installed_plugin_keeps_its_contract(hermes_env: Path) -> None:
    (checked,) = check_plugin("hermesos-math", examples=60)
    assert checked.name == "math.eval"
    assert checked.rejected == 60
    assert checked.accepted + checked.refused == 60


def test_a_located_refusal_through_an_isolated_runtime(hermes_runtime: Callable[..., Runtime]) -> None:
    runtime = hermes_runtime("hermesos-math")
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("math.eval", {"expression": "2 +", "precision": 3})
    assert issues(caught.value) == [("precision", "unexpected")]
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("math.eval", {"expression": "2 +"})
    assert issues(caught.value) == [("expression", "invalid")]
