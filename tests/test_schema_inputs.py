"""A tool's imported input is closed: a misspelt optional key is refused with its "did you mean", everywhere.

``s.from_json_schema`` on its own keeps JSON Schema's meaning (an object that
lists properties and says nothing of ``additionalProperties`` takes any other
key); a tool's input takes it closed, through ``define_tool``, ``@tool`` and
the testing helpers (hermesos-mcp's mounted tools: plugins/hermesos-mcp/tests/
test_closed_inputs.py), and every exported definition says so.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from hermes_core import InputInvalidError, Runtime, ToolError, define_tool, tool
from hermes_core import schema as s
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.schema._inputs import closed_import, tool_input
from hermes_core.serve import mcp_tools
from hermes_core.testing import build_runtime, check_tool, issues, raises_code

CIRCLE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "radius": {"type": "number", "minimum": 0},
        "unit": {"type": "string", "enum": ["m", "cm"], "default": "m"},
    },
    "required": ["radius"],
}
MISSPELT = {"radius": 3, "unitz": "m"}
REFUSED = '"unitz" is an unexpected field; did you mean "unit"?'


def _area(args: dict[str, Any]) -> str:
    return f"{3.14159 * args['radius'] ** 2:.1f} {args['unit']}2"


def _tool(document: Any = CIRCLE, **given: Any) -> Any:
    return define_tool(
        name="geo.area",
        version="1.0.0",
        description="The area of a circle.",
        input=s.from_json_schema(document, **given),
        handler=_area,
    )


def _messages(error: ToolError) -> list[str]:
    assert isinstance(error, InputInvalidError)
    return [issue.message("input") for issue in error.issues]


def test_from_json_schema_alone_keeps_json_schemas_meaning() -> None:
    imported = s.from_json_schema(CIRCLE)
    assert imported.parse(MISSPELT) == {"radius": 3, "unit": "m", "unitz": "m"}
    assert imported.open_by_silence == ("",)
    assert imported.json_schema() == CIRCLE
    assert s.from_json_schema(CIRCLE, closed=True).open_by_silence == ()


def test_define_tool_refuses_a_misspelt_optional_key_with_did_you_mean() -> None:
    runtime = Runtime([_tool()])
    assert runtime.call_sync("geo.area", {"radius": 1, "unit": "cm"}) == "3.1 cm2"
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("geo.area", MISSPELT)
    assert (
        str(caught.value)
        == f"geo.area was called with invalid input: {REFUSED}\nFix the arguments and call geo.area again."
    )


def test_every_exported_definition_says_the_input_is_closed() -> None:
    runtime = Runtime([_tool()])
    closed = {**CIRCLE, "additionalProperties": False}
    assert runtime.definitions()[0]["inputSchema"] == closed
    assert OpenAITools(runtime).definitions()[0]["function"]["parameters"] == closed
    assert AnthropicTools(runtime).definitions()[0]["input_schema"] == closed
    assert mcp_tools(runtime)[0]["inputSchema"] == closed


def test_closed_at_every_level_and_in_a_merged_all_of() -> None:
    document = {
        "type": "object",
        "properties": {"shape": CIRCLE, "label": {"type": "string"}},
        "allOf": [{"properties": {"layer": {"type": "integer"}}}],
    }
    made = _tool(document)
    runtime = Runtime([made])
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("geo.area", {"shape": MISSPELT, "layr": 1})
    assert issues(caught.value) == [("shape.unitz", "unexpected"), ("layr", "unexpected")]
    exported = runtime.definitions()[0]["inputSchema"]
    assert exported["unevaluatedProperties"] is False  # the merged allOf: each part alone would refuse the others
    assert exported["properties"]["shape"]["additionalProperties"] is False


@pytest.mark.parametrize("said", [True, {"type": "string"}])
def test_a_document_that_says_additional_properties_keeps_what_it_says(said: Any) -> None:
    document = {**CIRCLE, "additionalProperties": said}
    made = _tool(document)
    assert made.input.open_by_silence == ()
    assert Runtime([made]).call_sync("geo.area", MISSPELT) == "28.3 m2"
    assert Runtime([made]).definitions()[0]["inputSchema"] == document


def test_an_input_that_is_closed_already_is_taken_as_it_is() -> None:
    imported = s.from_json_schema(CIRCLE, closed=True)
    made = define_tool(name="geo.area", version="1.0.0", description="Area.", input=imported, handler=_area)
    assert made.input is imported
    native = s.object({"radius": s.number()})
    assert tool_input(native) is native
    assert closed_import(imported) is imported


def test_the_closed_import_keeps_the_dialect_and_the_description() -> None:
    document = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"pair": {"items": [{"type": "integer"}, {"type": "string"}]}},
    }
    imported = s.from_json_schema(document)
    assert imported.dialect == "draft-07"
    described = s.ImportedSchema(
        imported.root, imported.document, (), "A pair.", imported.open_by_silence, imported.dialect
    )
    closed = closed_import(described)
    assert (closed.dialect, closed.description, closed.open_by_silence) == ("draft-07", "A pair.", ())
    assert closed.parse({"pair": [1, "a"]}) == {"pair": [1, "a"]}


def test_an_imported_schema_a_field_holds_is_closed_too() -> None:
    made = define_tool(
        name="geo.area",
        version="1.0.0",
        description="Area.",
        input=s.object({"shapes": s.array(s.from_json_schema(CIRCLE)), "note": s.optional(s.string())}),
        handler=lambda args: len(args["shapes"]),
    )
    runtime = Runtime([made])
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("geo.area", {"shapes": [{"radius": 1}, MISSPELT]})
    assert issues(caught.value) == [("shapes.1.unitz", "unexpected")]
    items = runtime.definitions()[0]["inputSchema"]["properties"]["shapes"]["items"]
    assert items["additionalProperties"] is False


def test_tool_decorator_closes_an_imported_parameter_schema() -> None:
    @tool(name="geo.area", version="1.0.0")
    def area(shape: Annotated[dict[str, Any], s.from_json_schema(CIRCLE)], scale: float = 1.0) -> str:
        """The area of a circle, scaled.

        Args:
            shape: the circle.
            scale: what to multiply the area by.
        """
        return _area(shape)

    runtime = Runtime([area])
    assert runtime.call_sync("geo.area", {"shape": {"radius": 1}}) == "3.1 m2"
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("geo.area", {"shape": MISSPELT})
    assert _messages(caught.value) == ['"shape.unitz" is an unexpected field; did you mean "unit"?']
    assert runtime.definitions()[0]["inputSchema"]["properties"]["shape"]["additionalProperties"] is False


def test_the_testing_helpers_see_the_closed_input() -> None:
    made = _tool()
    with raises_code("INPUT_INVALID") as caught:
        build_runtime(made).call_sync("geo.area", MISSPELT)
    assert _messages(caught.value) == [REFUSED]
    # check_tool's invalid inputs include unknown keys; each must be rejected, and is.
    found = check_tool(made, examples=30, handler=lambda args: "ok")
    assert found.rejected == 30


@pytest.mark.parametrize("where", ["the input itself", "a field of the input"])
def test_a_named_schema_an_input_refers_to_is_closed_for_that_input(where: str) -> None:
    nested = where == "a field of the input"
    made = define_tool(
        name="geo.area",
        version="1.0.0",
        description="Area.",
        input=s.object({"circle": s.ref("Circle")}) if nested else s.ref("Circle"),
        output=s.ref("Circle"),
        handler=lambda args: MISSPELT,  # the same named schema, as an output: open, as it says
    )
    named = s.from_json_schema(CIRCLE)
    runtime = Runtime([made], schemas={"Circle": named})
    with pytest.raises(InputInvalidError) as refused:
        runtime.call_sync("geo.area", {"circle": MISSPELT} if nested else MISSPELT)
    assert (REFUSED.replace('"unitz"', '"circle.unitz"') if nested else REFUSED) in str(refused.value)
    assert runtime.call_sync("geo.area", {"circle": {"radius": 1}} if nested else {"radius": 1}) == {
        **MISSPELT,
        "unit": "m",
    }
    shown = runtime.definitions()[0]["inputSchema"]
    circle = shown["$defs"]["Circle"] if nested else shown
    assert circle["additionalProperties"] is False
    parameters = OpenAITools(runtime).definitions()[0]["function"]["parameters"]
    assert (parameters["$defs"]["Circle"] if nested else parameters)["additionalProperties"] is False
    assert named.parse(MISSPELT) == {**MISSPELT, "unit": "m"}  # on its own: JSON Schema's meaning
