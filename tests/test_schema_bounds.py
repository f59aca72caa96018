"""Inputs a caller controls cost bounded CPU: many unexpected keys, a wrong value against a huge schema, alternatives.

The attacks reproduced: one object of about 300,000 unexpected keys (a 5.9 MB
request) cost a "did you mean" each, 20-50 us apiece; ``null`` against an
imported object of 100,000 required names took 15.6 s (compiling the schema's
checker, on its first call); a value nested 16 deep against a recursive
``anyOf`` of objects took 20 s (each option checked the same field against the
same ``anyOf`` again: time exponential in the depth), and so did ``oneOf``,
``allOf``, ``patternProperties``, ``s.union`` over ``s.ref``, and a document
whose ``$defs`` each refer twice to the next (37 s for 18 of them). The limits
below are generous: each is many times what the bounded code takes, and a
fraction of what the attack took.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from hermes_core import Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core._base._issues import ISSUES_MAX
from hermes_core.adapters import OpenAITools
from hermes_core.schema._compile import compile_schema
from hermes_core.schema._containers import SUGGESTED_ISSUES

NAMES = [f"field_{index}" for index in range(100_000)]


def _took(check: Any) -> float:
    """The CPU seconds *check* took: a bound on work that a busy machine does not stretch, as it does wall time."""
    started = time.process_time()
    check()
    return time.process_time() - started


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


# -- nested alternatives: each (node, value) is tried once per check --------------------------------

NODE = {"$ref": "#/$defs/node"}
DYNAMIC_NODE = {"$dynamicRef": "#node"}  # the same node, reached through its $dynamicAnchor
WIDE = {f"f{index}": {"type": "string"} for index in range(600)}  # past the fields one function inlines


def _objects(first: dict[str, Any], second: dict[str, Any], required: tuple[str, ...] = ("a",)) -> list[Any]:
    return [
        {"type": "object", "properties": first, "required": list(required)},
        {"type": "object", "properties": second},
    ]


# A tree of "a" fields, as an imported document's $defs describe it: each way a check tries several
# schemas on one value, each option (or part, or pattern) checking the field "a" against the node again.
RECURSIVE_DOCUMENTS: dict[str, Any] = {
    "anyOf": {"anyOf": _objects({"a": NODE}, {"a": NODE, "b": NODE})},
    # The first option fails only once its "a" is checked, all the way down: a valid value tried twice a level.
    "anyOf-retried": {"anyOf": _objects({"a": NODE, "x": {"type": "string"}}, {"a": NODE}, ("a", "x"))},
    "oneOf": {"oneOf": _objects({"a": NODE}, {"a": NODE, "b": NODE})},
    "allOf": {
        "allOf": [
            {"type": "object", "properties": {"a": NODE}},
            {"type": "object", "properties": {"a": NODE, "b": {"type": "string"}}},
        ]
    },
    "object-anyOf": {
        "type": "object",
        "anyOf": [{"properties": {"a": NODE}, "required": ["a"]}, {"properties": {"a": NODE, "b": NODE}}],
    },
    "nullable-anyOf": {
        "anyOf": _objects(
            {"a": {"anyOf": [NODE, {"type": "null"}]}}, {"a": {"anyOf": [NODE, {"type": "null"}]}, "b": NODE}
        )
    },
    "patternProperties": {"type": "object", "patternProperties": {"^a": NODE, "^a$": NODE}},
    "wide-anyOf": {"anyOf": _objects({"a": NODE, **WIDE}, {"a": NODE, "b": NODE, **WIDE})},
    "dynamicRef-anyOf": {
        "$dynamicAnchor": "node",
        "anyOf": _objects({"a": DYNAMIC_NODE}, {"a": DYNAMIC_NODE, "b": DYNAMIC_NODE}),
    },
    "dynamicRef-unevaluated": {
        "$dynamicAnchor": "node",
        "anyOf": _objects({"a": DYNAMIC_NODE}, {"a": DYNAMIC_NODE, "b": DYNAMIC_NODE}),
        "unevaluatedProperties": False,
    },
}


def _wide_object(fields: dict[str, s.Schema]) -> s.Schema:
    return s.object({**{f"f{index}": s.optional(s.string()) for index in range(600)}, **fields})


# The same, as combinators over s.ref("node"), which a runtime resolves.
RECURSIVE_SCHEMAS: dict[str, Any] = {
    "s.union": lambda: s.union(
        s.object({"a": s.ref("node")}),
        s.object({"a": s.optional(s.ref("node")), "b": s.optional(s.ref("node"))}),
    ),
    "s.union-retried": lambda: s.union(
        s.object({"a": s.optional(s.ref("node")), "x": s.string()}), s.object({"a": s.optional(s.ref("node"))})
    ),
    "s.union-nullable": lambda: s.union(
        s.object({"a": s.nullable(s.ref("node"))}),
        s.object({"a": s.optional(s.nullable(s.ref("node"))), "b": s.optional(s.string())}),
    ),
    "s.union-wide": lambda: s.union(
        _wide_object({"a": s.ref("node")}),
        _wide_object({"a": s.optional(s.ref("node")), "b": s.optional(s.string())}),
    ),
}
RECURSIVE = [*RECURSIVE_DOCUMENTS, *RECURSIVE_SCHEMAS]


def _tree_tool(name: str) -> OpenAITools:
    """An adapter over one tool whose input's field "a" is the tree *name* describes."""
    if name in RECURSIVE_DOCUMENTS:
        defs = {"node": RECURSIVE_DOCUMENTS[name]}
        document = {"type": "object", "properties": {"a": NODE}, "required": ["a"], "$defs": defs}
        tool = define_tool(
            name="tree.walk",
            description="Walk a tree.",
            version="1.0.0",
            input=s.from_json_schema(document),
            handler=lambda args: "ok",
        )
        return OpenAITools(Runtime([tool]))
    tool = define_tool(
        name="tree.walk",
        description="Walk a tree.",
        version="1.0.0",
        input=s.object({"a": s.ref("node")}),
        handler=lambda args: "ok",
    )
    return OpenAITools(Runtime([tool], schemas={"node": RECURSIVE_SCHEMAS[name]()}))


def _tree(depth: int, leaf: str) -> str:
    """JSON text: *leaf* nested *depth* deep in objects of one field "a"."""
    return '{"a": ' * depth + leaf + "}" * depth


def _called(adapter: OpenAITools, arguments: str) -> str:
    return str(adapter.handle_sync({"id": "1", "function": {"name": "tree_walk", "arguments": arguments}})["content"])


def _refused(*issues: str) -> str:
    """The content a model reads for an input refused with *issues*."""
    head = "INPUT_INVALID: tree_walk was called with invalid input"
    said = (
        f": {issues[0]}."
        if len(issues) == 1
        else f" ({len(issues)} problems):\n" + "\n".join(f"- {i}." for i in issues)
    )
    return f"{head}{said}\nFix the arguments and call tree_walk again."


_TOO_DEEP = "nests arrays and objects too deeply"


def _deepest(adapter: OpenAITools) -> int:
    """How deep a call's arguments may nest: the most levels of the tree *adapter* reads (the JSON reader's bound)."""
    low, high = 1, 100_000
    while low < high:
        middle = (low + high + 1) // 2
        if _TOO_DEEP in _called(adapter, _tree(middle, "1")):
            high = middle - 1
        else:
            low = middle
    return low


# What each schema said of a small tree before alternatives were tried once per check, and says now.
_NOT_OBJECT = '"a.a.a" must be an object, got integer'
_NOT_OBJECT_OR_NULL = '"a.a.a" must be an object or null, got integer'
_ELSEWHERE = "only a part of the schema that does not apply to this value takes it"
SMALL_TREES: dict[str, tuple[str, str]] = {
    "anyOf": (_refused(_NOT_OBJECT), "ok"),
    "anyOf-retried": (_refused(_NOT_OBJECT), "ok"),
    "oneOf": (
        _refused(_NOT_OBJECT),
        _refused('"a.a" must match exactly one of 2 alternatives, but matches the 1st and 2nd'),
    ),
    "allOf": (_refused(*[_NOT_OBJECT] * 4), "ok"),  # each part says it: twice a level
    "object-anyOf": (_refused(_NOT_OBJECT), "ok"),
    "nullable-anyOf": (_refused(_NOT_OBJECT_OR_NULL), "ok"),
    "patternProperties": (_refused(*[_NOT_OBJECT] * 4), "ok"),
    "wide-anyOf": (_refused(_NOT_OBJECT), "ok"),
    "dynamicRef-anyOf": (_refused(_NOT_OBJECT), "ok"),
    "dynamicRef-unevaluated": (  # no option passes where "a.a.a" is wrong: above it, "a" is evaluated by none
        _refused(_NOT_OBJECT, *(f'"{where}" is an unexpected field here: {_ELSEWHERE}' for where in ("a.a.a", "a.a"))),
        "ok",
    ),
    "s.union": (_refused(_NOT_OBJECT), "ok"),
    "s.union-retried": (_refused(_NOT_OBJECT), "ok"),
    "s.union-nullable": (_refused(_NOT_OBJECT_OR_NULL), "ok"),
    "s.union-wide": (_refused(_NOT_OBJECT), "ok"),
}


@pytest.mark.parametrize("name", RECURSIVE)
def test_a_small_tree_gets_what_it_always_got(name: str) -> None:
    adapter = _tree_tool(name)
    wrong, valid = SMALL_TREES[name]
    assert _called(adapter, _tree(3, "1")) == wrong
    assert _called(adapter, _tree(3, "{}")) == valid


def _answer(adapter: OpenAITools, arguments: str) -> str:
    """What *adapter* answers a call with *arguments*, which must come within the generous bound."""
    started = time.process_time()
    answer = _called(adapter, arguments)
    assert time.process_time() - started < 5  # each took time exponential in the depth: 20 s at 16
    return answer


@pytest.mark.parametrize("name", RECURSIVE)
def test_a_deep_tree_against_nested_alternatives_is_checked_in_bounded_time(name: str) -> None:
    """As deep as a call's arguments may nest, a wrong leaf and a valid one, each within the bound."""
    adapter = _tree_tool(name)
    for depth in (16, 40):
        wrong = _answer(adapter, _tree(depth, "1")).splitlines()
        assert f'"{".".join(["a"] * depth)}" must be an object' in wrong[1 if "problems" in wrong[0] else 0]
        valid = _answer(adapter, _tree(depth, "{}"))
        if name == "oneOf":  # the last level but one matches both options
            assert valid == SMALL_TREES[name][1].replace('"a.a"', f'"{".".join(["a"] * (depth - 1))}"')
        else:
            assert valid == "ok"
    deepest = _deepest(adapter)  # past it the arguments are refused unread
    for depth in (100, 200, 400, deepest):
        for arguments in (_tree(depth, "1"), _tree(depth - 1, "{}")):  # the leaf {} is a level
            answer = _answer(adapter, arguments)
            assert answer == "ok" or answer.startswith("INPUT_INVALID: tree_walk was called with invalid input")
            assert _TOO_DEEP not in answer


@pytest.mark.parametrize("name", list(RECURSIVE_DOCUMENTS))
def test_nested_alternatives_compiled_find_exactly_what_the_walk_finds(name: str) -> None:
    document = {"$defs": {"node": RECURSIVE_DOCUMENTS[name]}, **NODE}
    validator = compile_schema(s.from_json_schema(document), {})
    for depth in range(6):
        leaves: list[Any] = [1, {}, {"b": "x"}, {"x": "y"}, None, {"a": None, "b": {}}]
        for leaf in leaves:
            value: Any = leaf
            for _ in range(depth):
                value = {"a": value}
            assert validator.run(value) == validator.walk(value), (depth, leaf)


def _chain(levels: int, options: Any) -> dict[str, Any]:
    """A tool's input whose field "a" is the first of *levels* $defs, each with the *options* of its index."""
    defs: dict[str, Any] = {f"n{index}": {"anyOf": options(index)} for index in range(levels)}
    defs[f"n{levels}"] = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
    return {"type": "object", "properties": {"a": {"$ref": "#/$defs/n0"}}, "required": ["a"], "$defs": defs}


def test_defs_that_each_refer_twice_to_the_next_are_checked_in_bounded_time() -> None:
    """No recursion, a small value: 2 ** 40 paths through 40 $defs (18 of them took 37 s)."""
    imported = s.from_json_schema(
        _chain(40, lambda index: [{"$ref": f"#/$defs/n{index + 1}"}, {"$ref": f"#/$defs/n{index + 1}"}])
    )
    for value, said in [
        ({"a": {"x": 1}}, 'value is invalid: "a.x" must be a string, got integer.'),
        ({"a": 5}, 'value is invalid: "a" must be an object, got integer.'),  # what each $def admits, asked once
        ({}, 'value is invalid: "a" is required (an object).'),  # what each $def expects, asked once
    ]:
        started = time.process_time()
        with pytest.raises(SchemaError) as caught:
            imported.parse(value)
        assert time.process_time() - started < 5
        assert str(caught.value) == said
    assert imported.parse({"a": {"x": "y"}}) == {"a": {"x": "y"}}


def test_a_description_of_alternatives_is_at_most_1000_characters() -> None:
    """Alternatives that hold alternatives saying the same in other orders: the words double at each level."""

    def options(index: int) -> list[Any]:
        return [{"$ref": f"#/$defs/n{index + 1}"}, {"anyOf": [{"const": index}, {"$ref": f"#/$defs/n{index + 1}"}]}]

    small = s.from_json_schema(_chain(2, options))
    with pytest.raises(SchemaError) as caught:
        small.parse({"a": []})
    assert str(caught.value) == (  # as before: short, it is whole
        'value is invalid: "a" must be an object or 1 or an object or 0 or an object or 1 or an object, got array.'
    )
    big = s.from_json_schema(_chain(40, options))
    with pytest.raises(SchemaError) as caught:
        big.parse({"a": []})
    detail = caught.value.issues[0].detail
    assert detail.startswith("must be an object or 39 or an object or 38 or ")
    assert detail.endswith("..., got array")
    assert len(detail) == len("must be , got array") + 1000
