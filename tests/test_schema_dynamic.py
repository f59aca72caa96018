"""``$dynamicRef`` and ``$dynamicAnchor`` of an imported document: resolved in their dynamic scope, said, exported.

A ``$dynamicRef`` whose URI names a ``$dynamicAnchor`` goes to the anchor of
that name in the outermost schema resource the check entered to reach it; any
other is a ``$ref``. The import resolves each where it converts it, so a
failure under one is located by its path as any other is, and a tool's export
carries the keywords as they were written. The official suite's cases are in
``test_json_schema_suite.py``; these are the messages and the edges it does not
look at. What hostile documents cost is in ``test_schema_weight.py`` and
``test_fuzz.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core import InputInvalidError, InvalidDefinitionError, Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core.adapters import OpenAITools
from hermes_core.serve import mcp_tools


def _issues(schema: s.Schema, value: Any) -> list[str]:
    """The messages of the issues *schema* finds in *value* (none: it parsed)."""
    try:
        schema.parse(value)
    except SchemaError as error:
        return [issue.message() for issue in error.issues]
    return []


# One list, two kinds: "generic" says what a list is and leaves its items to whichever resource extends it.
LISTS: dict[str, Any] = {
    "$id": "https://example.com/lists",
    "type": "object",
    "properties": {"kind": {"enum": ["numbers", "strings"]}},
    "required": ["kind"],
    "if": {"properties": {"kind": {"const": "numbers"}}},
    "then": {"$ref": "numbers"},
    "else": {"$ref": "strings"},
    "$defs": {
        "generic": {
            "$id": "generic",
            "properties": {"list": {"type": "array", "items": {"$dynamicRef": "#item"}}},
            "$defs": {"item": {"$dynamicAnchor": "item"}},
        },
        "numbers": {
            "$id": "numbers",
            "$ref": "generic",
            "$defs": {"item": {"$dynamicAnchor": "item", "type": "number"}},
        },
        "strings": {
            "$id": "strings",
            "$ref": "generic",
            "$defs": {"item": {"$dynamicAnchor": "item", "type": "string"}},
        },
    },
}

# A tree any object of which may have children, and a strict tree that extends it: its own nodes, and no other keys.
TREE: dict[str, Any] = {
    "$id": "https://example.com/tree",
    "$dynamicAnchor": "node",
    "type": "object",
    "properties": {"data": True, "children": {"type": "array", "items": {"$dynamicRef": "#node"}}},
}
STRICT_TREE: dict[str, Any] = {
    "$id": "https://example.com/strict-tree",
    "$dynamicAnchor": "node",
    "$ref": "tree",
    "unevaluatedProperties": False,
    "$defs": {"tree": TREE},
}


def test_a_dynamic_ref_goes_to_the_outermost_anchor_of_the_scope_it_is_reached_in() -> None:
    lists = s.from_json_schema(LISTS, strict=True)
    assert lists.parse({"kind": "numbers", "list": [1, 2.5]}) == {"kind": "numbers", "list": [1, 2.5]}
    assert lists.parse({"kind": "strings", "list": ["a"]}) == {"kind": "strings", "list": ["a"]}
    # "generic" is the same subschema on both paths; its items are what the resource that reached it says.
    assert _issues(lists, {"kind": "numbers", "list": [1, "x"]}) == [
        '"list.1" must be a number, got string, because "kind", if given, is "numbers"'
    ]
    assert _issues(lists, {"kind": "strings", "list": ["a", 2]}) == [
        '"list.1" must be a string, got integer, because "kind" is given and is not "numbers"'
    ]


def test_a_dynamic_ref_whose_target_is_no_dynamic_anchor_is_a_plain_ref() -> None:
    # Without the "bookend" (generic's own item a $dynamicAnchor), the extending resources are not looked at.
    plain = {**LISTS, "$defs": {**LISTS["$defs"], "generic": {**LISTS["$defs"]["generic"]}}}
    plain["$defs"]["generic"]["$defs"] = {"item": {"$anchor": "item"}}
    assert _issues(s.from_json_schema(plain), {"kind": "numbers", "list": ["x"]}) == []
    # A JSON pointer names a place, not an anchor: a $ref too, the same whoever reaches it.
    pointer = {**LISTS, "$defs": {**LISTS["$defs"], "generic": {**LISTS["$defs"]["generic"]}}}
    pointer["$defs"]["generic"]["properties"] = {"list": {"type": "array", "items": {"$dynamicRef": "#/$defs/item"}}}
    pointer["$defs"]["generic"]["$defs"] = {"item": {"$dynamicAnchor": "item", "type": "boolean"}}
    assert _issues(s.from_json_schema(pointer), {"kind": "numbers", "list": [1]}) == [
        '"list.0" must be a boolean, got integer, because "kind", if given, is "numbers"'
    ]
    # The positive control: with the bookend, the resource that reached it decides.
    assert _issues(s.from_json_schema(LISTS), {"kind": "numbers", "list": ["x"]}) != []


def test_a_failure_under_a_dynamic_ref_is_located_by_its_path() -> None:
    value = {"children": [{"data": 1, "children": [{"daat": 2}]}]}
    assert _issues(s.from_json_schema(TREE), value) == []  # the tree alone takes any key
    strict = s.from_json_schema(STRICT_TREE)
    assert _issues(strict, value) == ['"children.0.children.0.daat" is an unexpected field; did you mean "data"?']
    assert _issues(strict, {"children": [{"children": [7]}]}) == [
        '"children.0.children.0" must be an object, got integer'
    ]
    # Imported closed, the tree's own object refuses the key too: said once.
    assert _issues(s.from_json_schema(STRICT_TREE, closed=True), value) == [
        '"children.0.children.0.daat" is an unexpected field; did you mean "data"?'
    ]


# A tool's input: a typed object at its root, its children its own nodes, extended where a resource reaches it.
NOTES: dict[str, Any] = {
    "$id": "https://example.com/notes",
    "$dynamicAnchor": "note",
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "replies": {"type": "array", "items": {"$dynamicRef": "#note"}},
        "tagged": {"$ref": "tagged"},
    },
    "required": ["text"],
    "$defs": {
        "tagged": {
            "$id": "tagged",
            "$dynamicAnchor": "note",
            "type": "object",
            "properties": {"tag": {"type": "string"}, "replies": {"type": "array", "items": {"$dynamicRef": "#note"}}},
            "required": ["tag"],
        }
    },
}


def test_a_tool_with_a_dynamic_ref_is_called_exported_and_refused_by_strict_mode_by_name() -> None:
    tool = define_tool(name="notes.post", description="Post a note.", version="1.0.0", input=s.from_json_schema(NOTES),
                       handler=lambda args: "posted")  # fmt: skip
    runtime = Runtime([tool])
    good = {"text": "a", "replies": [{"text": "b"}], "tagged": {"tag": "x", "replies": [{"text": "c"}]}}
    assert runtime.call_sync("notes.post", good) == "posted"
    # Under "tagged", the outermost "note" is still the root's: a reply there is a note, not a tagged one.
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("notes.post", {"text": "a", "tagged": {"tag": "x", "replies": [{"tag": "y"}]}})
    assert '"tagged.replies.0.text" is required (a string)' in str(caught.value)
    assert '"tagged.replies.0.tag" is an unexpected field' in str(caught.value)  # the input is closed
    # Exported as written (closed where it is enforced), by the runtime and by MCP's tools/list alike.
    exported = runtime.definitions()[0]["inputSchema"]
    assert exported == mcp_tools(runtime)[0]["inputSchema"]
    assert exported["properties"]["replies"]["items"] == {"$dynamicRef": "#note"}
    assert exported["$dynamicAnchor"] == "note"
    assert exported["additionalProperties"] is False
    again = s.from_json_schema(exported)
    for value in (good, {"text": "a", "tagged": {"tag": "x", "replies": [{"tag": "y"}]}}, {"text": 1}):
        assert _issues(again, value) == _issues(tool.input, value)
    OpenAITools(runtime)  # the positive control: the plain export carries it
    with pytest.raises(InvalidDefinitionError) as strict:
        OpenAITools(runtime, strict=True)
    assert str(strict.value) == (
        'tool "notes.post": input cannot be given to OpenAI\'s strict mode: field "replies" uses $dynamicRef; field '
        '"tagged.replies" uses $dynamicRef, which strict mode cannot carry.'
    )


def test_a_dynamic_ref_to_nothing_is_listed_and_refused_in_strict_mode() -> None:
    assert s.from_json_schema(TREE, strict=True).unsupported == ()  # the positive control
    document = {
        "type": "object",
        "properties": {"a": {"$dynamicRef": "#nowhere"}, "b": {"$dynamicRef": "https://example.com/other#node"}},
    }
    imported = s.from_json_schema(document)
    assert [str(note) for note in imported.unsupported] == [
        "$dynamicRef at /properties/a '#nowhere' is not supported: it names nothing in this document, so anything "
        "is accepted there",
        "$dynamicRef at /properties/b 'https://example.com/other#node' is not supported: it names a document "
        "elsewhere, which the import never fetches, so anything is accepted there",
    ]
    assert imported.parse({"a": [1], "b": None}) == {"a": [1], "b": None}
    with pytest.raises(InvalidDefinitionError, match=r"\$dynamicRef at /properties/a '#nowhere' is not supported"):
        s.from_json_schema(document, strict=True)
    with pytest.raises(InvalidDefinitionError, match=r"/properties/a/\$dynamicRef must be a string"):
        s.from_json_schema({"properties": {"a": {"$dynamicRef": 3}}})


def test_a_dynamic_ref_that_reaches_only_itself_is_refused() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema({"$dynamicAnchor": "a", "$dynamicRef": "#a"})
    assert str(caught.value) == "from_json_schema(): $dynamicRef '#' only refers to itself; it must describe a value."
    assert s.from_json_schema({"$dynamicAnchor": "a", "type": "object", "$dynamicRef": "#/$defs/x",
                               "$defs": {"x": {"type": "object"}}}).parse({}) == {}  # fmt: skip


def test_a_dynamic_ref_leaves_a_scope_with_the_branch_that_entered_it() -> None:
    """if enters "first", which binds "thing" to numbers; then's $dynamicRef must not see it once if is done."""
    document = {
        "$id": "https://example.com/main",
        "if": {"$id": "first", "$defs": {"thing": {"$dynamicAnchor": "thing", "type": "number"}}},
        "then": {"$id": "second", "$ref": "start", "$defs": {"thing": {"$dynamicAnchor": "thing", "type": "null"}}},
        "$defs": {
            "start": {"$id": "start", "$dynamicRef": "inner#thing"},
            "thing": {"$id": "inner", "$dynamicAnchor": "thing", "type": "string"},
        },
    }
    imported = s.from_json_schema(document)
    assert imported.parse(None) is None
    assert _issues(imported, 42) == ['value must be null, got integer, because the value matches the schema of "if"']


def test_draft_07_reads_no_dynamic_anchor() -> None:
    document = {"$dynamicAnchor": "a", "type": "object", "properties": {"x": {"$dynamicRef": "#a"}}}
    assert s.from_json_schema(document).parse({"x": {}}) == {"x": {}}
    draft7 = s.from_json_schema(document, dialect="draft-07")
    assert [(note.keyword, note.pointer) for note in draft7.unsupported] == [("$dynamicRef", "/properties/x")]
    assert draft7.parse({"x": 5}) == {"x": 5}  # listed, and accepted unchecked as the listing says
