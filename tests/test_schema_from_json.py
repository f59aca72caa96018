"""s.from_json_schema: JSON Schema documents as schemas, with hermes' located messages.

The official JSON-Schema-Test-Suite runs in test_json_schema_suite.py and the
round trip through the combinators in test_schema_import.py; this file pins
the messages, the import's own rules (closed objects, defaults, unsupported
keywords, dialects) and how an imported schema serves as a tool's input.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core import Runtime, define_tool, shorten
from hermes_core import schema as s
from hermes_core._base._errors import InputInvalidError, InvalidDefinitionError, SchemaError
from hermes_core.adapters import OpenAITools

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1, "description": "City name"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3},
        "units": {"enum": ["metric", "imperial"], "default": "metric"},
    },
    "required": ["city"],
}


def messages(schema: s.Schema, value: Any) -> list[str]:
    with pytest.raises(SchemaError) as caught:
        schema.parse(value)
    return [issue.message("value") for issue in caught.value.issues]


def test_a_typed_object_becomes_the_combinators_own_nodes() -> None:
    imported = s.from_json_schema(WEATHER)
    assert isinstance(imported.root, s.ObjectSchema)
    assert imported.root.fields["city"] == s.string(min_length=1, description="City name")
    assert imported.unsupported == ()
    assert imported.parse({"city": "Oslo"}) == {"city": "Oslo", "days": 3, "units": "metric"}


def test_every_issue_is_located_and_worded_as_for_native_schemas() -> None:
    imported = s.from_json_schema(WEATHER, closed=True)
    assert messages(imported, {"city": "", "days": 20, "unit": "metric"}) == [
        '"city" must have at least 1 character, got 0',
        '"days" must be at most 14',
        '"unit" is an unexpected field; did you mean "units"?',
    ]


def test_open_by_default_as_json_schema_says_and_closed_on_request() -> None:
    assert s.from_json_schema(WEATHER).parse({"city": "Oslo", "extra": [1]})["extra"] == [1]
    closed = s.from_json_schema(WEATHER, closed=True)
    assert closed.json_schema()["additionalProperties"] is False
    assert s.from_json_schema(WEATHER).json_schema() == WEATHER  # the document, as given
    # A document that explicitly allows extra keys keeps them, closed or not.
    open_doc = {**WEATHER, "additionalProperties": True}
    assert s.from_json_schema(open_doc, closed=True).parse({"city": "x", "more": 1})["more"] == 1
    assert "additionalProperties" not in WEATHER  # the caller's document is never changed


def test_closed_applies_at_every_level_that_names_properties() -> None:
    doc = {
        "type": "object",
        "properties": {"filter": {"type": "object", "properties": {"tag": {"type": "string"}}}},
        "required": ["filter"],
    }
    imported = s.from_json_schema(doc, closed=True)
    assert messages(imported, {"filter": {"tags": "x"}}) == [
        '"filter.tags" is an unexpected field; did you mean "tag"?'
    ]
    assert imported.json_schema()["properties"]["filter"]["additionalProperties"] is False
    # An object that names no properties stays free-form.
    assert s.from_json_schema({"type": "object"}, closed=True).parse({"a": 1}) == {"a": 1}


def test_all_of_objects_merge_so_closing_them_refuses_only_unknown_keys() -> None:
    doc = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "string"}}},
        ]
    }
    imported = s.from_json_schema(doc, closed=True)
    assert imported.parse({"a": 1, "b": "x"}) == {"a": 1, "b": "x"}
    assert messages(imported, {"a": 1, "c": 2}) == ['"c" is an unexpected field; allowed fields are "a", "b"']
    assert imported.json_schema()["unevaluatedProperties"] is False


def test_a_default_that_does_not_match_is_reported_and_not_applied() -> None:
    doc = {"type": "object", "properties": {"n": {"type": "integer", "default": "three"}}}
    imported = s.from_json_schema(doc)
    assert imported.parse({}) == {}
    [note] = imported.unsupported
    assert (note.pointer, note.keyword) == ("/properties/n", "default")
    assert str(note) == (
        "default at /properties/n does not match its schema (default must be an integer, got string), "
        "so it is not applied"
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(doc, strict=True)
    assert str(caught.value) == (
        "from_json_schema() default at /properties/n does not match its schema "
        "(default must be an integer, got string), so it is not applied; strict=True refuses what it cannot check."
    )


def test_unsupported_keywords_are_listed_with_their_pointer_never_dropped_silently() -> None:
    doc = {
        "type": "object",
        "properties": {"when": {"type": "string", "$recursiveRef": "#"}},
        "$dynamicRef": "#node",
    }
    imported = s.from_json_schema(doc)
    assert [(u.keyword, u.pointer) for u in imported.unsupported] == [
        ("$dynamicRef", ""),
        ("$recursiveRef", "/properties/when"),
    ]
    assert [str(note) for note in imported.unsupported] == [
        "$dynamicRef at the root '#node' is not supported: it names nothing in this document, so anything is "
        "accepted there",
        "$recursiveRef at /properties/when is not supported (2019-09's recursive refs; 2020-12 writes them "
        "$dynamicRef, which is supported), so values it would refuse are accepted",
    ]
    assert imported.json_schema() == doc  # exported as given, so a reader still sees them
    with pytest.raises(InvalidDefinitionError, match=r"\$dynamicRef at the root '#node' is not supported"):
        s.from_json_schema(doc, strict=True)
    # Read as draft-07, $dynamicRef is not a keyword of the document's dialect: listed, whatever it names.
    draft7 = s.from_json_schema({"$dynamicAnchor": "a", "$dynamicRef": "#a"}, dialect="draft-07")
    assert [(note.keyword, note.pointer) for note in draft7.unsupported] == [("$dynamicRef", "")]


def test_a_remote_ref_is_unsupported_and_accepts_anything_in_the_default_mode() -> None:
    doc = {"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}}
    imported = s.from_json_schema(doc)
    assert imported.parse({"x": [1]}) == {"x": [1]}
    assert [str(u) for u in imported.unsupported] == [
        "$ref at /properties/x 'https://example.com/x.json' is not supported: it names a document elsewhere, "
        "which the import never fetches, so anything is accepted there"
    ]


def test_local_refs_including_recursion_as_pydantic_writes_them() -> None:
    doc = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}, "default": []},
                },
                "required": ["name"],
            }
        },
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "required": ["root"],
    }
    imported = s.from_json_schema(doc)
    assert imported.parse({"root": {"name": "a", "children": [{"name": "b"}]}}) == {
        "root": {"name": "a", "children": [{"name": "b", "children": []}]}
    }
    assert messages(imported, {"root": {"name": "a", "children": [{"name": 1}, {}]}}) == [
        '"root.children.0.name" must be a string, got integer',
        '"root.children.1.name" is required (a string)',
    ]


def test_draft_07_forms_real_servers_still_emit() -> None:
    doc = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"Point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]}},
        "type": "object",
        "properties": {"at": {"$ref": "#/definitions/Point"}, "label": {"type": "string", "nullable": True}},
    }
    imported = s.from_json_schema(doc)
    assert imported.parse({"at": [1, 2.5, "extra items are allowed"], "label": None})["label"] is None
    assert messages(imported, {"at": ["x"]}) == ['"at.0" must be a number, got string']


def test_type_lists_and_typeless_keywords_follow_json_schema() -> None:
    either = s.from_json_schema({"type": ["string", "integer"], "minLength": 2, "minimum": 10})
    assert either.parse("ab") == "ab"
    assert either.parse(12) == 12
    assert messages(either, 3) == ["value must be at least 10"]
    assert messages(either, None) == ["value must be a string or an integer, got null"]
    # A keyword applies only to values of its type: {"minimum": 1} accepts any string.
    assert s.from_json_schema({"minimum": 1}).parse("text") == "text"


def test_one_of_must_match_exactly_one() -> None:
    doc = {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]}
    imported = s.from_json_schema(doc)
    assert imported.parse(1) == 1
    assert imported.parse(2.5) == 2.5
    assert messages(imported, 3) == ["value must match exactly one of 2 alternatives, but matches the 1st and 2nd"]


def test_false_refuses_and_enum_is_narrowed_by_type() -> None:
    doc = {"type": "object", "properties": {"legacy": False, "mode": {"type": "string", "enum": ["a", 1, "b"]}}}
    imported = s.from_json_schema(doc)
    assert messages(imported, {"legacy": 1, "mode": 1}) == [
        '"legacy" is not allowed here',
        '"mode" must be one of "a", "b", got integer',
    ]


def test_min_and_max_properties() -> None:
    imported = s.from_json_schema({"type": "object", "minProperties": 1, "maxProperties": 2})
    assert messages(imported, {}) == ["value must have at least 1 property, got 0"]
    assert messages(imported, {"a": 1, "b": 2, "c": 3}) == ["value must have at most 2 properties, got 3"]
    assert s.object({}, extra="allow", min_properties=1).json_schema()["minProperties"] == 1
    assert s.record(s.integer(), max_properties=2).json_schema() == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "maxProperties": 2,
    }


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"type": "strnig"}, "from_json_schema(): /type names 'strnig', which is not a JSON Schema type."),
        ({"required": "a"}, "from_json_schema(): /required must be an array of property names."),
        (
            {"properties": {"a": {"minLength": -1}}},
            "from_json_schema(): /properties/a/minLength must be a non-negative integer, got -1.",
        ),
        ({"$ref": "#/$defs/missing"}, "from_json_schema(): $ref '#/$defs/missing' points to nothing in the document."),
        (
            {"properties": {"a": 5}},
            "from_json_schema(): /properties/a must be a schema (an object or a boolean), got int.",
        ),
    ],
)
def test_a_malformed_document_is_a_definition_error_naming_the_pointer(document: Any, message: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(document)
    assert str(caught.value) == message


def test_a_ref_that_only_reaches_itself_is_refused() -> None:
    with pytest.raises(InvalidDefinitionError, match=r"\$ref '#/\$defs/a' only refers to itself"):
        s.from_json_schema({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})


def test_the_dialect_is_checked() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema({}, dialect="draft-03")
    assert str(caught.value) == "from_json_schema(): dialect must be one of '2020-12', 'draft-07', got 'draft-03'."


def test_an_imported_schema_is_a_tools_input_with_the_runtimes_messages() -> None:
    tool = define_tool(
        name="weather.forecast",
        version="1.0.0",
        description="Forecast for a city.",
        input=s.from_json_schema(WEATHER, closed=True),
        handler=lambda args: f"{args['days']} days in {args['city']}",
    )
    runtime = Runtime([tool])
    assert runtime.call_sync("weather.forecast", {"city": "Oslo"}) == "3 days in Oslo"
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("weather.forecast", {"cty": "Oslo"})
    assert [(i.path, i.kind) for i in caught.value.issues] == [(("city",), "missing"), (("cty",), "unexpected")]
    [definition] = OpenAITools(runtime).definitions()
    assert definition["function"]["parameters"]["additionalProperties"] is False


def test_an_imported_input_in_openais_strict_mode() -> None:
    tool = define_tool(
        name="weather.forecast",
        version="1.0.0",
        description="Forecast for a city.",
        input=s.from_json_schema(WEATHER, closed=True),
        handler=lambda args: args,
    )
    tools = OpenAITools(Runtime([tool]), strict=True)
    [definition] = tools.definitions()
    assert definition["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "days": {"type": ["integer", "null"]},
            "units": {"enum": ["metric", "imperial", None]},
        },
        "required": ["city", "days", "units"],
        "additionalProperties": False,
    }
    call = {"id": "c1", "function": {"name": "weather_forecast", "arguments": '{"city": "Oslo", "days": null}'}}
    answer = tools.handle_sync(call)
    assert json.loads(answer["content"]) == {"city": "Oslo", "days": 3, "units": "metric"}  # null: the default


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            {"type": "object", "properties": {"n": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}},
            'field "n" uses oneOf, which strict mode cannot say',
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}, "$dynamicRef": "#x"},
            "its imported JSON Schema has what strict mode cannot be given: $dynamicRef at the root '#x' is not "
            "supported: it names nothing in this document, so anything is accepted there",
        ),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}, "not": {"required": ["n"]}},
            'field "(the input)" uses not, which strict mode cannot carry',
        ),
        ({"type": "object"}, "field \"(the input)\" allows unknown keys (extra='allow'), which strict mode forbids"),
    ],
)
def test_what_strict_mode_cannot_say_of_an_imported_input_is_refused_by_name(document: Any, problem: str) -> None:
    tool = define_tool(
        name="t.x",
        version="1.0.0",
        description="X.",
        input=s.from_json_schema(document, closed=True),
        handler=lambda args: args,
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        OpenAITools(Runtime([tool]), strict=True)
    assert str(caught.value) == f'tool "t.x": input cannot be given to OpenAI\'s strict mode: {problem}.'


def test_a_non_object_document_is_not_a_tools_input() -> None:
    with pytest.raises(InvalidDefinitionError, match="imported JSON Schema whose root is an object"):
        define_tool(
            name="t.x",
            version="1.0.0",
            description="X.",
            input=s.from_json_schema({"type": "string"}),
            handler=lambda args: args,
        )


def test_enum_and_const_of_any_json_value_compare_as_json_does() -> None:
    imported = s.from_json_schema({"enum": [6, "foo", [], True, {"foo": 12}]})
    assert imported.parse({"foo": 12.0}) == {"foo": 12}
    assert imported.parse([]) == []
    assert messages(s.from_json_schema({"const": [False]}), [0]) == ["value must be [false]"]


def test_refs_by_id_and_anchor_within_the_document() -> None:
    doc = {
        "$id": "https://example.com/root.json",
        "properties": {"a": {"$ref": "item.json"}, "b": {"$ref": "#positive"}},
        "$defs": {
            "item": {"$id": "item.json", "type": "string"},
            "positive": {"$anchor": "positive", "type": "integer", "minimum": 1},
        },
    }
    imported = s.from_json_schema(doc)
    assert imported.unsupported == ()
    assert messages(imported, {"a": 1, "b": 0}) == ['"a" must be a string, got integer', '"b" must be at least 1']


def test_a_local_ref_is_read_in_the_resource_of_the_nearest_id() -> None:
    doc = {
        "$id": "http://example.com/root.json",
        "properties": {
            "x": {
                "$id": "http://example.com/x.json",
                "$defs": {"inner": {"type": "integer"}},
                "properties": {"y": {"$ref": "#/$defs/inner"}},
            }
        },
    }
    imported = s.from_json_schema(doc)
    assert imported.unsupported == ()
    assert messages(imported, {"x": {"y": "no"}}) == ['"x.y" must be an integer, got string']


def test_a_document_nested_past_any_real_schema_is_a_definition_error() -> None:
    """A fixed bound, 64 levels, whatever the caller's stack: past the recursion limit, and well before it."""
    for levels, accepted in ((63, True), (64, False), (130, False), (5000, False)):
        deep: dict[str, Any] = {"type": "string"}
        for _ in range(levels):
            deep = {"type": "array", "items": deep}
        if accepted:
            assert s.from_json_schema(deep).json_schema()["type"] == "array"
            continue
        with pytest.raises(InvalidDefinitionError) as caught:
            s.from_json_schema(deep)
        assert caught.value.field == shorten("/items" * 64, 80)
        assert caught.value.detail == "nests schemas more than 64 levels deep; no real schema nests so deep"


def test_pattern_properties_check_the_keys_they_match_and_leave_others_to_additional_properties() -> None:
    doc = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "string"}, "^x-n": {"maxLength": 3}},
        "additionalProperties": False,
    }
    imported = s.from_json_schema(doc)
    assert imported.unsupported == ()
    assert imported.parse({"name": "a", "x-trace": "t"}) == {"name": "a", "x-trace": "t"}
    assert messages(imported, {"name": "a", "x-trace": 1, "x-note": "long", "other": 1}) == [
        '"other" is an unexpected field; allowed fields are "name"',
        '"x-trace" must be a string, got integer',
        '"x-note" must have at most 3 characters, got 4',
    ]
