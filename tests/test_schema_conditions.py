"""The keywords of an imported document applied in place, and ``unevaluated*``: checked, said, exported, bounded.

``not``, ``if``/``then``/``else``, ``dependentRequired``, ``dependentSchemas``
(and draft-07's ``dependencies``), ``propertyNames``, ``contains`` with
``minContains``/``maxContains``, ``unevaluatedProperties`` and
``unevaluatedItems``: each refuses what its document refuses, with a message
a model can act on (where, what, why, never the value), is exported as it was
written, is named when OpenAI's strict mode cannot carry it, and costs time
bounded by the sizes of the document and the value. The official suite's
cases are in ``test_json_schema_suite.py``; these are the messages and the
edges it does not look at.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from hermes_core import InputInvalidError, InvalidDefinitionError, Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core.adapters import OpenAITools


def _issues(schema: s.Schema, value: Any) -> list[str]:
    """The messages of the issues *schema* finds in *value* (none: it parsed)."""
    try:
        schema.parse(value)
    except SchemaError as error:
        return [issue.message() for issue in error.issues]
    return []


ADDRESS = {
    "type": "object",
    "properties": {"country": {"type": "string"}, "zip": {"type": "string"}, "state": {"type": "string"}},
    "required": ["country"],
    "if": {"properties": {"country": {"const": "US"}}, "required": ["country"]},
    "then": {"required": ["zip", "state"]},
    "else": {"not": {"required": ["state"]}},
}


def test_if_then_says_which_condition_brought_each_requirement() -> None:
    address = s.from_json_schema(ADDRESS)
    assert address.unsupported == ()
    assert address.parse({"country": "US", "zip": "10001", "state": "NY"}) == {
        "country": "US",
        "zip": "10001",
        "state": "NY",
    }
    assert address.parse({"country": "FR", "zip": "75001"}) == {"country": "FR", "zip": "75001"}
    assert _issues(address, {"country": "US"}) == [
        '"zip" is required (a JSON value), because "country" is "US"',
        '"state" is required (a JSON value), because "country" is "US"',
    ]
    assert _issues(address, {"country": "FR", "state": "IDF"}) == [
        'value must not have "state", because "country" is not given or is not "US"'
    ]


def test_a_condition_is_said_as_its_document_writes_it_and_an_unknown_one_by_its_keyword() -> None:
    cases = [
        ({"properties": {"kind": {"enum": ["a", "b"]}}}, '"kind", if given, is one of "a", "b"'),
        ({"required": ["x"]}, '"x" is given'),
        ({"properties": {"n": {"minimum": 5}}, "required": ["n"]}, '"n" is at least 5'),
        ({"type": "string"}, "the value is a string"),
        ({"minLength": 3}, 'the value matches the schema of "if"'),
    ]
    for condition, said in cases:
        doc = {"if": condition, "then": {"const": 0}}
        schema = s.from_json_schema(doc)
        value = {"kind": "a", "x": 1, "n": 7} if "string" not in said and 'if"' not in said else "abcd"
        (message,) = _issues(schema, value)
        assert message == f"value must be 0, got {'string' if isinstance(value, str) else 'object'}, because {said}"


def test_not_says_what_the_value_must_not_be() -> None:
    cases = [
        ({"type": "string", "not": {"enum": ["root", "admin"]}}, "admin", 'value must not be one of "root", "admin"'),
        ({"not": {"type": "null"}}, None, "value must not be null"),
        (
            {"type": "object", "not": {"required": ["a", "b"]}},
            {"a": 1, "b": 2},
            'value must not have "a" and "b" together',
        ),
        ({"not": {}}, 1, "value must not be here (no value is allowed)"),
    ]
    for doc, refused, message in cases:
        schema = s.from_json_schema(doc)
        assert _issues(schema, refused) == [message], doc
    assert s.from_json_schema(cases[0][0]).parse("guest") == "guest"  # the positive control
    assert s.from_json_schema({"not": {"type": "null"}}).parse(0) == 0


def test_dependent_required_says_which_field_brings_which() -> None:
    card = s.from_json_schema(
        {
            "type": "object",
            "properties": {"card": {"type": "string"}, "cvv": {"type": "string"}, "expiry": {"type": "string"}},
            "dependentRequired": {"card": ["cvv", "expiry"]},
        }
    )
    assert card.parse({}) == {}
    assert card.parse({"card": "4111", "cvv": "123", "expiry": "12/30"})["cvv"] == "123"
    assert _issues(card, {"card": "4111", "cvv": "123"}) == ['"expiry" is required when "card" is present']


def test_draft_07_dependencies_are_required_names_or_a_schema() -> None:
    doc = {"dependencies": {"a": ["b"], "c": {"required": ["d"]}}}
    for dialect in ("draft-07", "2020-12"):
        schema = s.from_json_schema(doc, dialect=dialect)
        assert schema.unsupported == ()
        assert schema.parse({"a": 1, "b": 2, "c": 3, "d": 4}) == {"a": 1, "b": 2, "c": 3, "d": 4}
        assert _issues(schema, {"a": 1, "c": 3}) == [
            '"b" is required when "a" is present',
            '"d" is required (a JSON value), because "c" is present',
        ]


def test_property_names_locates_each_refused_key_with_a_did_you_mean() -> None:
    headers = s.from_json_schema(
        {"type": "object", "propertyNames": {"pattern": "^[a-z-]+$", "maxLength": 20}, "additionalProperties": True}
    )
    assert headers.parse({"accept": "*/*"}) == {"accept": "*/*"}
    assert _issues(headers, {"Accept": "*/*"}) == [
        '"Accept" is not an allowed property name: must match the pattern "^[a-z-]+$"'
    ]
    named = s.from_json_schema({"type": "object", "propertyNames": {"enum": ["width", "height"]}})
    assert named.parse({"width": 1}) == {"width": 1}
    assert _issues(named, {"widht": 1}) == ['"widht" is not an allowed property name; did you mean "width"?']
    assert _issues(s.from_json_schema({"propertyNames": False}), {"a": 1}) == [
        '"a" is not allowed: this object takes no properties'
    ]


def test_contains_counts_the_items_that_match_and_shows_why_none_did() -> None:
    tags = s.from_json_schema({"type": "array", "contains": {"type": "integer", "minimum": 5}})
    assert tags.parse(["a", 7]) == ["a", 7]
    assert _issues(tags, [1, "b"]) == [
        'value must contain at least 1 item that is an integer, got 0; none is: "0" must be at least 5'
    ]
    bounded = s.from_json_schema({"type": "array", "contains": {"const": "x"}, "minContains": 2, "maxContains": 3})
    assert bounded.parse(["x", "x", "y"]) == ["x", "x", "y"]
    assert _issues(bounded, ["x", "y"]) == ['value must contain at least 2 items that are "x", got 1']
    assert _issues(bounded, ["x"] * 4) == ['value must contain at most 3 items that are "x", got more']
    assert s.from_json_schema({"contains": {"type": "string"}, "minContains": 0}).parse([]) == []


def test_unevaluated_properties_follow_annotations_through_refs_and_branches() -> None:
    doc = {
        "$defs": {"named": {"properties": {"name": {"type": "string"}}}},
        "type": "object",
        "allOf": [{"$ref": "#/$defs/named"}],
        "anyOf": [{"properties": {"kind": {"const": "file"}, "path": {"type": "string"}}, "required": ["kind"]},
                  {"properties": {"kind": {"const": "url"}, "href": {"type": "string"}}, "required": ["kind"]}],
        "if": {"properties": {"kind": {"const": "file"}}},
        "then": {"properties": {"mode": {"enum": ["r", "w"]}}},
        "dependentSchemas": {"href": {"properties": {"proxy": {"type": "string"}}}},
        "unevaluatedProperties": False,
    }  # fmt: skip
    schema = s.from_json_schema(doc)
    assert schema.unsupported == ()
    assert schema.parse({"name": "a", "kind": "file", "path": "/x", "mode": "r"})["mode"] == "r"
    assert schema.parse({"kind": "url", "href": "h", "proxy": "p"})["proxy"] == "p"
    # "path" is evaluated only by the option that did not match, "mode" only by a then that did not apply.
    assert _issues(schema, {"kind": "url", "href": "h", "path": "/x", "mode": "r", "nmae": "a"}) == [
        '"path" is an unexpected field here: only a part of the schema that does not apply to this value takes it',
        '"mode" is an unexpected field here: only a part of the schema that does not apply to this value takes it',
        '"nmae" is an unexpected field; did you mean "name"?',
    ]


def test_unevaluated_items_follow_prefix_items_contains_and_branches() -> None:
    doc = {
        "prefixItems": [{"type": "string"}],
        "anyOf": [{"prefixItems": [True, {"type": "integer"}]}],
        "contains": {"type": "boolean"},
        "unevaluatedItems": False,
    }
    schema = s.from_json_schema(doc)
    assert schema.parse(["a", 1, True, False]) == ["a", 1, True, False]
    assert _issues(schema, ["a", 1, True, None]) == ['"3" is an unexpected item; no schema here takes it']


def test_a_closed_input_closes_past_what_its_conditions_name_and_exports_it() -> None:
    tool = define_tool(
        name="geo.address",
        description="Checks an address.",
        version="1.0.0",
        input=s.from_json_schema(
            {**ADDRESS, "dependentSchemas": {"zip": {"properties": {"plus4": {"type": "string"}}}}}
        ),
        handler=lambda args: "ok",
    )
    runtime = Runtime([tool])
    exported = runtime.definitions()[0]["inputSchema"]
    assert exported["unevaluatedProperties"] is False  # closed where the contract is enforced, as it is read
    assert exported["then"] == {"required": ["zip", "state"]}  # the rest as the document wrote it
    assert "additionalProperties" not in exported["then"]
    assert runtime.call_sync("geo.address", {"country": "US", "zip": "1", "state": "NY", "plus4": "2"}) == "ok"
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("geo.address", {"country": "US", "zip": "1", "state": "NY", "plus5": "2"})
    assert '"plus5" is an unexpected field; did you mean "plus4"?' in str(caught.value)


def test_an_import_exports_the_new_keywords_as_written() -> None:
    schema = s.from_json_schema(ADDRESS)
    assert schema.json_schema() == ADDRESS
    assert schema.json_schema() is not ADDRESS


def test_strict_mode_names_every_keyword_it_cannot_carry() -> None:
    plain = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    runtime = Runtime([define_tool(name="t.plain", description="d", version="1.0.0", input=s.from_json_schema(plain),
                                   handler=lambda args: "ok")])  # fmt: skip
    OpenAITools(runtime, strict=True)  # the positive control: a plain object is carried
    tool = define_tool(name="t.x", description="d", version="1.0.0", input=s.from_json_schema(ADDRESS),
                       handler=lambda args: "ok")  # fmt: skip
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(Runtime([tool]), strict=True)
    assert str(caught.value) == (
        'tool "t.x": input cannot be given to OpenAI\'s strict mode: field "(the input)" uses if/then/else and '
        "unevaluatedProperties, which strict mode cannot carry."
    )


# Every keyword the import added for issue 29, in one tool's input.
ORDER: dict[str, Any] = {
    "$id": "https://example.com/order",
    "$dynamicAnchor": "order",
    "type": "object",
    "properties": {
        "country": {"type": "string"},
        "zip": {"type": "string"},
        "tags": {
            "type": "array",
            "prefixItems": [{"type": "string"}],
            "contains": {"const": "gift"},
            "maxContains": 2,
            "unevaluatedItems": False,
        },
        "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}},
        "gift_for": {"$dynamicRef": "#order"},
    },
    "required": ["country"],
    "if": {"properties": {"country": {"const": "US"}}},
    "then": {"required": ["zip"]},
    "else": {"not": {"required": ["zip"]}},
    "dependentRequired": {"zip": ["country"]},
    "dependentSchemas": {"country": {"properties": {"state": {"type": "string"}}}},
    "unevaluatedProperties": False,
}
ORDERS = [
    {
        "country": "US",
        "zip": "1",
        "tags": ["a", "gift"],
        "meta": {"ab": 1},
        "gift_for": {"country": "FR"},
        "state": "NY",
    },
    {"country": "US"},
    {"country": "FR", "zip": "1"},
    {"country": "FR", "tags": ["a", "b"]},
    {"country": "FR", "tags": ["a", "gift", "gift", "gift"]},
    {"country": "FR", "meta": {"A": 1}},
    {"country": "FR", "gift_for": {"country": 1}},
    {"country": "FR", "statee": "x"},
    {"country": "FR", "state": 3},
]


def test_a_tool_using_every_new_keyword_exports_each_as_written_and_strict_mode_names_each() -> None:
    from hermes_core.serve import mcp_tools

    tool = define_tool(name="shop.order", description="Order.", version="1.0.0",
                       input=s.from_json_schema(ORDER, strict=True), handler=lambda args: "ok")  # fmt: skip
    runtime = Runtime([tool])
    exports = [
        runtime.definitions()[0]["inputSchema"],
        mcp_tools(runtime)[0]["inputSchema"],
        OpenAITools(runtime).definitions()[0]["function"]["parameters"],
    ]
    assert exports == [ORDER] * 3  # closed already (unevaluatedProperties: false): exported exactly as written
    verdicts = []
    for value in ORDERS:
        try:
            verdicts.append(runtime.call_sync("shop.order", value) == "ok")
        except InputInvalidError:
            verdicts.append(False)
    assert verdicts == [True] + [False] * (len(ORDERS) - 1)  # each keyword refuses its own value
    for exported in exports:
        again = s.from_json_schema(exported)
        assert [not _issues(again, value) for value in ORDERS] == verdicts
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(runtime, strict=True)
    assert str(caught.value) == (
        'tool "shop.order": input cannot be given to OpenAI\'s strict mode: field "(the input)" uses if/then/else and '
        'dependentRequired and dependentSchemas and unevaluatedProperties; field "tags" uses '
        'contains/minContains/maxContains and unevaluatedItems; field "meta" uses propertyNames; field "gift_for" '
        "uses $dynamicRef, which strict mode cannot carry."
    )


def test_a_dynamic_ref_is_checked_and_named_when_strict_mode_cannot_carry_it() -> None:
    # The issue's own example, listed as unsupported before: a tree whose children are its own nodes.
    doc = {"$dynamicAnchor": "node", "type": "object", "properties": {"child": {"$dynamicRef": "#node"}}}
    imported = s.from_json_schema(doc, strict=True)
    assert imported.unsupported == ()
    assert imported.parse({"child": {"child": {}}}) == {"child": {"child": {}}}
    assert _issues(imported, {"child": {"child": 3}}) == ['"child.child" must be an object, got integer']
    tool = define_tool(name="t.x", description="d", version="1.0.0", input=imported, handler=lambda args: "ok")
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(Runtime([tool]), strict=True)
    assert str(caught.value) == (
        'tool "t.x": input cannot be given to OpenAI\'s strict mode: field "child" uses $dynamicRef, which strict '
        "mode cannot carry."
    )


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        ({"dependentRequired": {"a": "b"}}, "/dependentRequired/a must be an array of property names"),
        ({"dependentRequired": []}, "/dependentRequired must be an object whose values are arrays of property names"),
        ({"dependentSchemas": {"a": 1}}, "/dependentSchemas/a must be a schema (an object or a boolean), got int"),
        ({"contains": {}, "minContains": -1}, "/minContains must be a non-negative integer, got -1"),
        ({"not": "x"}, "/not must be a schema (an object or a boolean), got str"),
    ],
)
def test_a_malformed_keyword_is_a_definition_error_naming_its_pointer(doc: Any, problem: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(doc)
    assert problem in str(caught.value)


def _deep(depth: int) -> dict[str, Any]:
    """Each level's if, then, else and not name the level below twice, through $refs: 2**depth paths, one node each."""
    defs: dict[str, Any] = {"l0": {"type": "object", "unevaluatedProperties": {"type": "integer"}}}
    for level in range(1, depth):
        below = {"$ref": f"#/$defs/l{level - 1}"}
        defs[f"l{level}"] = {
            "allOf": [below],
            "anyOf": [below, {"not": below}],
            "if": below,
            "then": below,
            "else": {"not": below},
            "unevaluatedProperties": {"not": below},
        }
    return {"$defs": defs, "$ref": f"#/$defs/l{depth - 1}"}


def test_hostile_nesting_of_if_not_and_unevaluated_is_checked_in_time_linear_in_its_nodes() -> None:
    schema = s.from_json_schema(_deep(40))
    value = {f"k{index}": {"n": index} for index in range(50)}
    started = time.process_time()
    _issues(schema, value)
    # Each (node, value) is worked out once per check: exponential would be 2**40 steps. Generous for a busy machine.
    assert time.process_time() - started < 20
    assert _issues(s.from_json_schema(_deep(3)), {"a": 1}) == []  # the positive control: a small one passes


def test_the_new_keywords_count_toward_the_import_bounds() -> None:
    # The size budget counts every byte, those of the new keywords too.
    names = {f"field{index}": [f"other{index}", f"more{index}"] for index in range(2000)}
    doc = {"type": "object", "dependentRequired": names, "if": {"required": ["a"]}, "then": {"not": {}}}
    imported = s.from_json_schema(doc, max_bytes=100_000)
    assert _issues(imported, {"field7": 1}) == ['"other7" is required when "field7" is present',
                                                '"more7" is required when "field7" is present']  # fmt: skip
    with pytest.raises(InvalidDefinitionError, match="is more than 50,000 bytes of JSON"):
        s.from_json_schema(doc, max_bytes=50_000)
    # The depth bound counts the levels of then, not and dependentSchemas as any others.
    deep: dict[str, Any] = {"type": "string"}
    for level in range(70):
        deep = [{"then": deep, "if": True}, {"not": deep}, {"dependentSchemas": {"k": deep}}][level % 3]
    with pytest.raises(InvalidDefinitionError, match="nests schemas more than 64 levels deep"):
        s.from_json_schema(deep)
