"""What a schema costs imported, compiled and checked is bounded by its size in bytes, whatever its shape.

The attack reproduced: an input of ``{"enum": [{"k": 0}, {"k": 1}, ...]}`` of
50,000 members (a 0.7 MB document) took 9.3 s and 1.56 GB in
``define_tool(input=from_json_schema(doc))``; through hermesos-mcp, one such
tool of 300,000 members (a 4.4 MB listing) drove ``hermesos tools list`` to
8.7 GB, then a ``MemoryError`` broke the plugin. Each shape of
``tests/schema_weights.py`` is measured here in a fresh interpreter: its bytes
in against the peak memory (``tracemalloc``) that importing it, defining the
tool, exporting it and checking a wrong value took. The bound is generous (300
bytes of memory per byte of JSON); what each takes is printed with the
assertion and listed in docs/performance.md. No test times anything: a shape
whose cost grew faster than its size took minutes and gigabytes here.

The shapes of ``$dynamicRef`` (a subschema is converted once for each dynamic
scope it is reached in) are measured here in the test's own interpreter: scopes
that double at each level are refused by the same bound, and wide ones cost
what any document of their size costs.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core import InvalidDefinitionError, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core.schema._compile import _SOURCE_MAX, compile_schema
from hermes_core.schema._import import DEFAULT_BYTES_MAX, WEIGHT_PER_BYTE
from hermes_core.schema._nodes import VALUE_SHOWN

WEIGHTS = Path(__file__).with_name("schema_weights.py")
_spec = importlib.util.spec_from_file_location("schema_weights", WEIGHTS)
assert _spec is not None
assert _spec.loader is not None
weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(weights)
# Bytes of memory a byte of JSON may take, at most, imported, defined, exported and checked.
RATIO_MAX = 300
SIZE = 400_000


def _measured(member: str, size: int = SIZE) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(WEIGHTS), member, str(size), "tracemalloc"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    measured: dict[str, Any] = json.loads(done.stdout)
    return measured


@pytest.mark.scale
@pytest.mark.parametrize("member", sorted([*(set(weights.MEMBERS) - weights.REFUSED), "tools_many"]))
def test_each_shape_takes_at_most_300_bytes_of_memory_for_each_of_its_bytes(member: str) -> None:
    measured = _measured(member)
    assert measured["refused"] is None
    assert measured["tools"] >= 1  # imported and defined: the positive control of the bound below
    assert measured["bytes"] > SIZE // 2
    ratio = measured["peak"] / measured["bytes"]
    assert ratio <= RATIO_MAX, f"{member}: {measured['bytes']:,} bytes took {measured['peak']:,} ({ratio:.0f} per byte)"


@pytest.mark.scale
def test_a_document_whose_pointers_repeat_long_keys_is_refused_before_it_takes_more_than_its_bound() -> None:
    """60 levels under keys of 2,000 characters: every subschema below held all 60 keys in its pointer (5,900 B/B)."""
    measured = _measured("nested_long_keys")
    assert measured["refused"] is not None
    assert measured["refused"].startswith(
        f"from_json_schema(): document would take more than {WEIGHT_PER_BYTE} bytes of memory for each of its "
    )
    assert measured["peak"] / measured["bytes"] <= RATIO_MAX
    # The same nesting under short keys is a schema like any other.
    assert _measured("nested_deep")["refused"] is None


# -- enum and const: one node, values looked up by their canonical JSON ------------------------------------------


def test_an_enum_of_objects_is_one_node_comparing_as_json_does() -> None:
    imported = s.from_json_schema({"enum": [{"k": index} for index in range(50_000)]})
    assert [type(node).__name__ for node in imported.walk()] == ["ImportedSchema", "EnumSchema"]
    assert imported.parse({"k": 49_999.0}) == {"k": 49_999}  # 1.0 is 1, as JSON Schema says
    with pytest.raises(SchemaError) as caught:
        imported.parse({"k": True})  # true is not 1
    assert str(caught.value) == (
        'value is invalid: value must be one of 50,000 values, such as {"k": 0}, {"k": 1}, {"k": 2}, {"k": 3}, '
        '{"k": 4}, {"k": 5}, {"k": 6}, {"k": 7}, {"k": 8}, {"k": 9}, {"k": 10}, {"k": 11}, {"k": 12}, {"k": 13}, '
        '{"k": 14}, {"k": 15}, {"k": 16}, {"k": 17}, {"k": 18}, {"k": 19}, ...'
    )
    with pytest.raises(SchemaError, match=r"one of 50,000 values, such as .*, got string"):
        imported.parse("k")


def test_a_match_is_a_copy_of_the_declared_value_and_keys_compare_in_any_order() -> None:
    declared = {"a": [1, {"b": None}], "c": "x"}
    imported = s.from_json_schema({"enum": [declared, [1, 2]]})
    parsed = imported.parse({"c": "x", "a": [1.0, {"b": None}]})
    assert parsed == declared
    parsed["a"].append("changed")
    assert imported.parse({"c": "x", "a": [1, {"b": None}]}) == declared


def test_an_enum_member_nested_past_100_levels_is_refused_naming_the_bound() -> None:
    deep: Any = 1
    for _ in range(101):
        deep = [deep]
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema({"enum": [deep, 2]})
    assert str(caught.value) == (
        "from_json_schema(): /enum must hold JSON values nested at most 100 levels deep, with numbers within a "
        "64-bit float's range."
    )
    assert s.from_json_schema({"enum": [deep[0], 2]}).parse(2) == 2


def test_a_long_allowed_value_is_shown_by_its_start() -> None:
    imported = s.from_json_schema({"type": "object", "properties": {"x": {"const": "y" * 100_000}}, "required": ["x"]})
    with pytest.raises(SchemaError) as caught:
        imported.parse({"x": "z"})
    detail = caught.value.issues[0].detail
    assert detail == 'must be "' + "y" * (VALUE_SHOWN - 4) + "..."
    assert imported.parse({"x": "y" * 100_000}) == {"x": "y" * 100_000}


def test_a_const_filters_an_enum_in_time_linear_in_both() -> None:
    """Each enum value was compared with a fresh copy of the const: 50,000 values and a const of 50,000 keys."""
    const = {f"k{index}": index for index in range(50_000)}
    values = [{"k": index} for index in range(50_000)]
    imported = s.from_json_schema({"const": const, "enum": [*values, dict(reversed(const.items()))]})
    assert imported.parse(const) == const
    with pytest.raises(SchemaError, match="must be "):
        imported.parse({"k": 1})


def test_s_enum_finds_a_repeated_value_without_comparing_each_pair() -> None:
    assert len(s.enum(range(200_000)).values) == 200_000
    with pytest.raises(InvalidDefinitionError, match=r"values\[200000\] repeats 7.0"):
        s.enum([*(float(index) for index in range(200_000)), 7])


# -- refs, defaults, the compiled code -------------------------------------------------------------------------


def test_a_chain_of_50000_refs_is_followed_once() -> None:
    chain: dict[str, Any] = {f"a{index}": {"$ref": f"#/$defs/a{index + 1}"} for index in range(50_000)}
    chain["a50000"] = {"type": "string"}
    imported = s.from_json_schema({"$ref": "#/$defs/a0", "$defs": chain})
    assert imported.parse("fine") == "fine"
    with pytest.raises(SchemaError, match="must be a string, got integer"):
        imported.parse(1)
    chain["a50000"] = {"$ref": "#/$defs/a0"}  # a chain that comes back to its start describes nothing
    with pytest.raises(InvalidDefinitionError, match="only refers to itself"):
        s.from_json_schema({"$ref": "#/$defs/a0", "$defs": chain})


def test_a_default_array_over_4096_bytes_is_not_applied_but_exported() -> None:
    small, large = [1, 2, 3], list(range(2000))
    document = {
        "type": "object",
        "properties": {"small": {"type": "array", "default": small}, "large": {"type": "array", "default": large}},
    }
    imported = s.from_json_schema(document)
    assert imported.parse({}) == {"small": small}
    (note,) = imported.unsupported
    assert str(note) == (
        f"default at /properties/large is an array of more than {DEFAULT_BYTES_MAX:,} bytes, so it is not applied "
        "(each call leaving the field out would get a copy of it)"
    )
    assert imported.json_schema()["properties"]["large"]["default"] == large


def test_the_code_compiled_for_a_schema_is_bounded_and_finds_what_the_walk_finds() -> None:
    """Objects of 200 fields side by side, compiled as one module: 540 MB to compile 0.3 MB of schema."""
    fields = {f"p{index}": {"type": "string"} for index in range(200)}
    document = {
        "type": "object",
        "properties": {f"o{index}": {"type": "object", "properties": fields} for index in range(60)},
    }
    imported = s.from_json_schema(document, closed=True)
    validator = compile_schema(imported, {})
    assert len(validator.source) < _SOURCE_MAX  # past the bound, the nodes are checked by their walk
    valid = {f"o{index}": {"p0": "x"} for index in range(60)}
    wrong = {**valid, "o59": {"p0": 1, "p1": [], "zz": 0}, "o0": 3}
    assert validator.run(valid) == validator.walk(valid) == (True, valid, ())
    found = validator.run(wrong)
    assert found == validator.walk(wrong)
    assert [issue.message()[:40] for issue in found[2]] == [
        '"o0" must be an object, got integer',
        '"o59.p0" must be a string, got integer',
        '"o59.p1" must be a string, got array',
        '"o59.zz" is an unexpected field; allowed',
    ]


def test_a_union_of_many_options_is_checked_by_its_walk_as_it_would_be_compiled() -> None:
    options = [
        {"type": "object", "properties": {f"a{index}": {"type": "integer"}}, "required": [f"a{index}"]}
        for index in range(5000)
    ]
    imported = s.from_json_schema({"type": "object", "properties": {"x": {"anyOf": options}}})
    tool = define_tool(name="t", description="T.", version="1.0.0", input=imported, handler=dict)
    validator, _ = tool.validators()
    assert validator.run({"x": {"a4999": 1}}) == validator.walk({"x": {"a4999": 1}}) == (True, {"x": {"a4999": 1}}, ())
    assert validator.run({"x": {"a1": "1"}}) == validator.walk({"x": {"a1": "1"}})
    assert not validator.run({"x": {"a1": "1"}})[0]


def test_max_bytes_refuses_a_larger_document_before_reading_it() -> None:
    document = {"type": "object", "properties": {f"p{index}": {"type": "string"} for index in range(1000)}}
    assert s.from_json_schema(document, max_bytes=30_000).size == len(json.dumps(document, separators=(",", ":")))
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(document, max_bytes=20_000)
    assert str(caught.value) == "from_json_schema(): document is more than 20,000 bytes of JSON, the most taken here."
    with pytest.raises(InvalidDefinitionError, match="max_bytes must be a whole number from 1 to 67108864, got 0"):
        s.from_json_schema(document, max_bytes=0)


# -- $dynamicRef: a subschema is converted once for each dynamic scope it is reached in ----------------------------


def _scopes_that_double(levels: int) -> dict[str, Any]:
    """Each level goes through one of two resources that bind its anchor name to integers or to strings.

    The last level's ``$dynamicRef`` s (one per level) mean something else on
    each of the 2**levels paths: each path's scope is a scope of its own.
    """
    defs: dict[str, Any] = {}
    for level in range(levels):
        defs[f"L{level}"] = {"anyOf": [{"$ref": f"a{level}"}, {"$ref": f"b{level}"}]}
        for side, kind in (("a", "integer"), ("b", "string")):
            anchor = {"$dynamicAnchor": f"n{level}", "type": kind}
            defs[f"{side}{level}"] = {
                "$id": f"{side}{level}",
                "$ref": f"root#/$defs/L{level + 1}",
                "$defs": {"x": anchor},
            }
    defs[f"L{levels}"] = {
        "type": "array",
        "prefixItems": [{"$dynamicRef": f"a{level}#n{level}"} for level in range(levels)],
    }
    return {"$id": "https://example.com/root", "$ref": "#/$defs/L0", "$defs": defs}


def _traced(make: Any) -> tuple[Any, int]:
    """What *make()* returns (or the error it raised) and the peak memory it took, by tracemalloc."""
    import gc
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    try:
        made = make()
    except InvalidDefinitionError as error:
        made = error
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return made, peak


def test_dynamic_scopes_that_double_at_each_level_are_refused_by_the_import_bound() -> None:
    import jsonschema

    small = s.from_json_schema(_scopes_that_double(3))  # 8 scopes: imported, checked as jsonschema checks it
    reference = jsonschema.Draft202012Validator(_scopes_that_double(3))
    for value in ([1, "a", 2], ["a", "b", "c"], [1, None, 2], [1.5, 1, 1], ["a"]):
        try:
            small.parse(value)
            valid = True
        except SchemaError:
            valid = False
        assert valid == reference.is_valid(value), value
    refused, peak = _traced(lambda: s.from_json_schema(_scopes_that_double(24)))  # 16 million scopes
    assert isinstance(refused, InvalidDefinitionError)
    assert str(refused).startswith(f"from_json_schema(): document would take more than {WEIGHT_PER_BYTE} bytes")
    assert peak < 64 * 1024 * 1024  # a small document's floor is 16 MiB of weight, whatever it repeats


def _dynamic_wide(resources: int, names: int) -> dict[str, Any]:
    """*resources* resources with an anchor of the one name their refs ask for, and *names* names of the root's."""
    node = {"type": "object", "properties": {"child": {"$dynamicRef": "#node"}}}
    return {
        "$id": "https://example.com/root",
        "$dynamicAnchor": "node",
        "type": "object",
        "properties": {
            **{f"p{index}": {"$ref": f"r{index}"} for index in range(resources)},
            **{f"q{index}": {"$dynamicRef": f"#n{index}"} for index in range(names)},
        },
        "$defs": {
            **{f"r{index}": {"$id": f"r{index}", "$dynamicAnchor": "node", **node} for index in range(resources)},
            **{f"n{index}": {"$dynamicAnchor": f"n{index}", "type": "integer"} for index in range(names)},
        },
    }


@pytest.mark.scale
@pytest.mark.parametrize(("resources", "names"), [(3000, 0), (0, 4000), (1500, 2000)])
def test_wide_dynamic_anchors_and_refs_cost_what_they_weigh(resources: int, names: int) -> None:
    """One scope, however many resources and names: each subschema converted once, as any other document's."""
    document = json.loads(json.dumps(_dynamic_wide(resources, names)))
    size = len(json.dumps(document, separators=(",", ":")))
    imported, peak = _traced(lambda: s.from_json_schema(document))
    assert isinstance(imported, s.ImportedSchema)
    assert peak / size <= RATIO_MAX, f"{size:,} bytes took {peak:,} ({peak / size:.0f} per byte)"
    value = {"p0": {"child": {"p1": {"child": {}}}}, "q0": 1} if resources and names else {}
    assert imported.parse(value) == value
    if names:
        with pytest.raises(SchemaError, match='"q1" must be an integer, got string'):
            imported.parse({"q1": "x"})


def test_nested_dynamic_resources_are_bounded_by_the_depth_of_any_import() -> None:
    def nested(levels: int) -> dict[str, Any]:
        inner: dict[str, Any] = {"type": "string"}
        for level in range(levels):
            inner = {"$id": f"r{level}", "$dynamicAnchor": "node", "anyOf": [inner, {"$dynamicRef": "#node"}]}
        return inner

    assert s.from_json_schema(nested(60)).parse("x") == "x"  # 61 levels of subschemas: each level an option
    with pytest.raises(InvalidDefinitionError, match="nests schemas more than 64 levels deep"):
        s.from_json_schema(nested(70))


def test_an_import_leaves_nothing_for_the_collector_to_free() -> None:
    """What an import holds while it works (every pointer of the document) is freed when it returns, not later.

    A cycle from its dynamic scopes back to the importer kept it all alive until the collector ran: 55 MB held
    after importing nested_deep of 1 MB, where the nodes take 16.
    """
    import gc

    from hermes_core.schema import _import

    documents = [_scopes_that_double(3), _dynamic_wide(10, 10), {"type": "object", "properties": {"a": {}}}]
    gc.collect()
    gc.disable()
    try:
        kept = _import._Importer(documents[0], "2020-12", False, False, 1000)  # the positive control: found
        for document in documents:
            s.from_json_schema(document)
        left = [item for item in gc.get_objects() if type(item) is _import._Importer]  # type(): some define __class__
    finally:
        gc.enable()
    assert left == [kept]


def test_the_importer_keeps_fewer_than_30_attributes() -> None:
    """From 30, CPython 3.11 stops sharing the keys of instance dicts: every attribute read of an import slowed 5%."""
    from hermes_core.schema import _import

    importer = _import._Importer(_dynamic_wide(1, 1), "2020-12", False, False, 1000)
    importer.convert(_dynamic_wide(1, 1), "")
    importer.finish()
    assert len(vars(importer)) < 30, sorted(vars(importer))
