"""The Hypothesis strategies of ``hermes_core.testing``: what they generate parses, or is rejected, as promised.

* every value of ``strategy(schema)`` parses, and is JSON;
* every value of ``invalid_strategy(schema)`` is rejected with a ``SchemaError``;
* both hold for a table of hand-written schemas and for random ones;
* the values are varied: optional fields come and go, unions give each option,
  recursive refs nest, and the invalid values make every kind of issue.
"""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import hermes_core
from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError, SchemaError
from hermes_core._base._issues import IssueKind
from hermes_core.schema._validators import compile_schema
from hermes_core.testing._strategies import invalid_strategy, strategy
from tests.test_schema_properties import LEAVES, SCHEMAS, _extend

CHECKS = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
# Some random schemas have no valid value (s.string(min_length=1, pattern="^$")): Hypothesis skips them.
RANDOM = settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def check(schema: s.Schema, value: Any, defs: Mapping[str, s.Schema] | None = None) -> Any:
    """``schema.parse(value)``; with *defs*, the same check with refs resolved through them."""
    if defs is None:
        return schema.parse(value)
    ok, parsed, issues = compile_schema(schema, defs).run(value)
    if not ok:
        raise SchemaError(list(issues), subject="value")
    return parsed


def is_json(value: Any) -> bool:
    """Whether *value* is written as a JSON document without loss: no NaN, tuple, set, lone surrogate..."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        text.encode()
    except (TypeError, ValueError, UnicodeEncodeError):
        return False
    return bool(json.loads(text) == value) and _only_json_types(value)


def _only_json_types(value: Any) -> bool:
    if isinstance(value, list):
        return all(_only_json_types(item) for item in value)
    if isinstance(value, dict):
        return all(type(key) is str and _only_json_types(item) for key, item in value.items())
    return value is None or isinstance(value, bool | int | float | str)


def collect(strategy_: st.SearchStrategy[Any], count: int) -> list[Any]:
    """*count* values of *strategy_*, the same ones on every run."""
    values: list[Any] = []

    @settings(max_examples=count, deadline=None, derandomize=True, database=None)
    @given(strategy_)
    def draw(value: Any) -> None:
        values.append(value)

    draw()
    return values


def issues_of(schema: s.Schema, value: Any, defs: Mapping[str, s.Schema] | None = None) -> list[Any]:
    with pytest.raises(SchemaError) as caught:
        check(schema, value, defs)
    return list(caught.value.issues)


# -- hand-written schemas, one or more for every node and option ---------------------------------

TREE = s.object(
    {
        "name": s.string(min_length=1),
        "size": s.optional(s.integer(minimum=0)),
        "children": s.optional(s.array(s.ref("test.tree")), default=[]),
    }
)
LINKED = s.nullable(s.object({"head": s.integer(), "tail": s.ref("test.list")}))
# Five names, each required by the one before: deeper than the strategies go unless required.
CHAIN = {f"test.n{i}": s.object({"next": s.ref(f"test.n{i + 1}")}) for i in range(5)} | {"test.n5": s.string()}
DEFS: dict[str, s.Schema] = {
    "test.tree": TREE,
    "test.list": LINKED,
    # Mutually recursive: an array of at least one item, each an array again or an integer.
    "test.a": s.array(s.ref("test.b"), min_items=1, max_items=3),
    "test.b": s.union(s.ref("test.a"), s.integer()),
    **CHAIN,
}
MODE = s.optional(s.enum(["w", "a"]), default="w")

CASES: dict[str, s.Schema] = {
    "string": s.string(),
    "string bounded": s.string(min_length=2, max_length=4),
    "string long": s.string(min_length=40, max_length=42),
    "string pattern": s.string(pattern=r"^[a-z]+\d?$", max_length=8),
    "string unanchored pattern": s.string(pattern="ab|cd", min_length=3),
    "string long pattern": s.string(pattern="^[a-z]", min_length=30, max_length=36),
    **{f"string {name}": s.string(format=name) for name in ["date-time", "date", "time", "email", "uri", "uuid"]},
    "string ipv4": s.string(format="ipv4", min_length=9),
    "string ipv6 pattern": s.string(format="ipv6", pattern="^2"),
    "string annotated": s.string(format="hostname", max_length=3),
    "integer": s.integer(),
    "integer bounded": s.integer(minimum=-2.5, maximum=7),
    "integer exclusive": s.integer(exclusive_minimum=-2, exclusive_maximum=3),
    "integer step": s.integer(minimum=1, multiple_of=7),
    "integer float step": s.integer(exclusive_maximum=100, multiple_of=2.5),
    "number": s.number(),
    "number exclusive": s.number(minimum=0, exclusive_minimum=0, exclusive_maximum=0.5),
    "number step": s.number(exclusive_minimum=-1, maximum=1, multiple_of=0.01),
    "number bounded": s.number(minimum=0.5, maximum=1e20),
    "number bounds between floats": s.number(minimum=-(2**64) - 1, maximum=2**64 + 1),
    "boolean": s.boolean(),
    "null": s.null(),
    "enum": s.enum(["r", "w", 1, 2.5, True, None]),
    "literal": s.literal(0),
    "any": s.any(),
    "const object": s.const({"kind": "point", "at": [1, 2.5]}),
    "const scalar": s.const(2),
    "array unique": s.array(s.integer(minimum=0, maximum=20), min_items=2, max_items=4, unique_items=True),
    "array unique objects": s.array(s.object({"a": s.optional(s.integer(), default=0)}), unique_items=True),
    "array": s.array(s.integer(), min_items=1, max_items=3),
    "array exact": s.array(s.string(max_length=2), min_items=2, max_items=2),
    "tuple": s.tuple(s.string(), s.number(minimum=0), s.nullable(s.boolean())),
    "object forbid": s.object({"path": s.string(min_length=1), "mode": MODE, "size": s.optional(s.integer())}),
    "object ignore": s.object({"path": s.string(), "mode": MODE}, extra="ignore"),
    "object allow": s.object({"path": s.string(), "mode": MODE}, extra="allow"),
    "object empty": s.object({}),
    "record": s.record(s.array(s.number(), max_items=2)),
    "union": s.union(s.string(max_length=2), s.integer(minimum=0), s.object({"kind": s.literal("a")})),
    "union overlapping any": s.union(s.string(), s.any()),
    "nullable union": s.nullable(
        s.union(s.nullable(s.integer()), s.array(s.union(s.string(), s.boolean())), s.tuple(s.null()))
    ),
    "nullable any": s.nullable(s.any()),
    "deep": s.object({"items": s.array(s.object({"tags": s.record(s.tuple(s.integer(), s.string(min_length=1)))}))}),
    "ref tree": s.ref("test.tree"),
    "ref linked list": s.object({"list": s.ref("test.list")}),
    "ref mutual": s.tuple(s.ref("test.a"), s.ref("test.b")),
    "ref chain": s.ref("test.n0"),
}


def _defs(schema: s.Schema) -> dict[str, s.Schema] | None:
    return DEFS if schema.has_refs else None


@pytest.mark.parametrize("name", CASES)
@CHECKS
@given(data=st.data())
def test_generated_values_parse(name: str, data: st.DataObject) -> None:
    schema = CASES[name]
    value = data.draw(strategy(schema, defs=_defs(schema)))
    assert is_json(value), value
    check(schema, value, _defs(schema))


@pytest.mark.parametrize("name", CASES)
@CHECKS
@given(data=st.data())
def test_invalid_values_are_rejected(name: str, data: st.DataObject) -> None:
    schema = CASES[name]
    value = data.draw(invalid_strategy(schema, defs=_defs(schema)))
    assert issues_of(schema, value, _defs(schema))


# -- random schemas ------------------------------------------------------------------------------


@RANDOM
@given(SCHEMAS, st.data())
def test_values_of_random_schemas_parse(schema: s.Schema, data: st.DataObject) -> None:
    value = data.draw(strategy(schema))
    assert is_json(value), value
    schema.parse(value)


@RANDOM
@given(SCHEMAS, st.data())
def test_invalid_values_of_random_schemas_are_rejected(schema: s.Schema, data: st.DataObject) -> None:
    value = data.draw(invalid_strategy(schema))
    assert issues_of(schema, value)


# A random named schema that may refer to itself, anywhere in it.
NAMED = st.recursive(LEAVES | st.just(s.ref("test.node")), _extend, max_leaves=6)
NODE = s.ref("test.node")


@RANDOM
@given(NAMED, st.data())
def test_random_recursive_schemas(named: s.Schema, data: st.DataObject) -> None:
    defs = {"test.node": named}
    try:
        valid, invalid = strategy(NODE, defs=defs), invalid_strategy(NODE, defs=defs)
    except InvalidDefinitionError:
        reject()  # the named schema refers to itself before a value, or has no finite value: tested below
    value = data.draw(valid, label="valid")
    assert is_json(value), value
    check(NODE, value, defs)
    assert issues_of(NODE, data.draw(invalid, label="invalid"), defs)


# -- the mix -------------------------------------------------------------------------------------


def test_optional_fields_are_sometimes_present_and_sometimes_absent() -> None:
    keys = [frozenset(value) for value in collect(strategy(CASES["object forbid"]), 60)]
    assert {"mode", "size"} <= set().union(*keys)
    assert frozenset({"path"}) in keys


@pytest.mark.parametrize("extra", ["ignore", "allow"])
def test_unknown_keys_appear_where_the_object_takes_them(extra: str) -> None:
    schema = CASES[f"object {extra}"]
    assert any(set(value) - {"path", "mode"} for value in collect(strategy(schema), 60))


def test_every_option_of_a_union_and_none_appear() -> None:
    values = collect(strategy(CASES["nullable union"]), 100)
    assert None in values
    assert any(type(value) is int for value in values)
    assert any(value and isinstance(value[0], str | bool) for value in values if isinstance(value, list))
    assert [None] in values  # the tuple of one null


def _depth(tree: Any) -> int:
    return 1 + max((_depth(child) for child in tree.get("children", [])), default=0)


def test_recursive_refs_nest_within_the_depth() -> None:
    depths = {_depth(tree) for tree in collect(strategy(CASES["ref tree"], defs=DEFS), 100)}
    assert depths == {1, 2, 3}  # the root is one ref deep, its deepest children three


def test_a_chain_of_required_refs_is_followed_past_the_depth() -> None:
    for value in collect(strategy(CASES["ref chain"], defs=DEFS), 10):
        end = value
        for _ in range(5):
            end = end["next"]
        assert isinstance(end, str)


def test_a_leaf_without_values_leaves_its_containers_empty() -> None:
    leaf = s.integer(minimum=0.5, maximum=0.7)
    schema = s.object({"items": s.array(leaf), "maybe": s.optional(leaf), "either": s.nullable(leaf)})
    values = collect(strategy(schema), 20)
    assert values
    assert all(value == {"items": [], "either": None} for value in values)
    for value in collect(invalid_strategy(schema), 50):
        assert issues_of(schema, value)


RICH = s.object(
    {
        "path": s.string(min_length=1, max_length=8, pattern="^[a-z/]+$"),
        "mode": s.optional(s.enum(["w", "a"])),
        "count": s.optional(s.integer(minimum=0, maximum=10)),
        "tags": s.optional(s.array(s.object({"key": s.string(), "value": s.any()}), max_items=2)),
    }
)


def test_invalid_values_make_every_kind_of_issue() -> None:
    issues = [issue for value in collect(invalid_strategy(RICH), 300) for issue in issues_of(RICH, value)]
    kinds: set[IssueKind] = {issue.kind for issue in issues}
    assert kinds >= {"type", "missing", "unexpected", "too_small", "too_big", "pattern", "enum", "encoding"}
    assert any(len(issue.path) >= 3 for issue in issues)  # e.g. tags.0.key


def test_invalid_values_of_any_are_the_python_values_json_lacks() -> None:
    # 400 draws: Hypothesis biases its draws by the constants of the modules loaded so far, so what a
    # smaller sample holds depends on the tests that ran before this one.
    values = collect(invalid_strategy(s.any()), 400)
    assert not any(is_json(value) for value in values)
    found = {type(value) for value in values}
    assert {float, set, bytes, object, tuple, dict, list, str} <= found
    assert any(isinstance(value, float) and math.isnan(value) for value in values)
    assert any(isinstance(value, dict) and any(type(key) is not str for key in value) for value in values)


@pytest.mark.parametrize(
    ("schema", "just_past"),
    [
        (s.integer(minimum=0, maximum=10), [-1, 11]),
        (s.number(minimum=0.5, maximum=1.5), [0.0, 2]),
        (s.string(min_length=2, max_length=3), ["", "0000"]),
        (s.array(s.null(), min_items=1, max_items=1), [[], [None, None]]),
    ],
)
def test_bounds_are_missed_just_past_them(schema: s.Schema, just_past: list[Any]) -> None:
    # Hypothesis tries the simplest value of each construction: the one nearest the bound.
    values = collect(invalid_strategy(schema), 100)
    for value in just_past:
        assert any(type(found) is type(value) and found == value for found in values), value


# -- what the strategies refuse ------------------------------------------------------------------


@pytest.mark.parametrize("make", [strategy, invalid_strategy])
@pytest.mark.parametrize("defs", [None, {"test.other": s.string()}])
def test_an_unresolvable_ref_is_named(make: Callable[..., Any], defs: dict[str, s.Schema] | None) -> None:
    schema = s.object({"pair": s.tuple(s.integer(), s.ref("test.missing"))})
    with pytest.raises(InvalidDefinitionError, match=r"s\.ref\('test\.missing'\) names a schema that defs"):
        make(schema, defs=defs)


@pytest.mark.parametrize("make", [strategy, invalid_strategy])
@pytest.mark.parametrize(
    "named",
    [s.ref("test.y"), s.union(s.boolean(), s.ref("test.y")), s.nullable(s.ref("test.x"))],
    ids=["ref", "union", "nullable"],
)
def test_a_named_schema_that_refers_to_itself_before_a_value_is_refused(
    make: Callable[..., Any], named: s.Schema
) -> None:
    # Checking a value against it would recurse without end: the schema package reports "nested too deeply".
    defs = {"test.x": named, "test.y": s.ref("test.x")}
    with pytest.raises(InvalidDefinitionError, match=r"s\.ref\('test\.[xy]'\) refers to itself before"):
        make(s.array(s.ref("test.x")), defs=defs)


def test_a_schema_without_a_finite_value_has_no_strategy_but_has_invalid_values() -> None:
    defs = {"test.loop": s.object({"next": s.ref("test.loop")})}
    with pytest.raises(InvalidDefinitionError, match=r"no finite value.*s\.ref\('test\.loop'\)"):
        strategy(s.ref("test.loop"), defs=defs)
    for value in collect(invalid_strategy(s.ref("test.loop"), defs=defs), 30):
        assert issues_of(s.ref("test.loop"), value, defs)


# -- hypothesis stays out of the way -------------------------------------------------------------


def test_importing_the_testing_package_does_not_import_hypothesis() -> None:
    code = "import sys, hermes_core, hermes_core.testing; print('hypothesis' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_only_the_strategies_modules_import_hypothesis_on_import() -> None:
    # At the top of a module, that is: the testing package imports it inside the functions that need it.
    package = Path(hermes_core.__file__).parent
    importers = set()
    for path in package.rglob("*.py"):
        for node in ast.parse(path.read_text()).body:
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "hypothesis" for name in names):
                importers.add(path.relative_to(package).as_posix())
    assert importers == {"testing/_strategies.py", "testing/_strategy_json.py", "testing/_strategy_scalars.py"}


def test_a_unique_array_needing_more_items_than_exist_draws_nothing() -> None:
    assert strategy(s.array(s.literal(None), min_items=2, unique_items=True)).is_empty


@settings(max_examples=30)
@given(strategy(s.array(s.boolean(), min_items=1, unique_items=True)))
def test_a_unique_array_of_few_values_is_at_most_as_long_as_there_are_values(value: list[bool]) -> None:
    assert 1 <= len(value) <= 2
    assert len(set(value)) == len(value)


def test_a_unique_array_whose_items_reach_one_value_through_refs_draws_nothing_there() -> None:
    # At the depth limit the ref's only value is null: two unique items cannot be drawn from it.
    defs = {"test.node": s.nullable(s.array(s.ref("test.node"), min_items=2, unique_items=True))}
    for value in collect(strategy(NODE, defs=defs), 50):
        check(NODE, value, defs)
