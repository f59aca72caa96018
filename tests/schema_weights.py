"""The shapes of JSON Schema whose cost, imported, compiled and checked, once grew faster than their size.

One catalogue, used by ``tests/test_schema_weight.py`` (through
``from_json_schema``), by hermesos-mcp's ``tests/weighty_server.py`` (a real
server listing them) and by ``bench/bench_schema_weight.py`` (the figures in
docs/performance.md). Each member makes a tool's input schema of about *size*
bytes of JSON; :func:`measure` imports it, defines the tool, exports it and
checks a wrong value, and reports the bytes in, the peak memory that took
(``tracemalloc``) and the time.

Run as a script, ``python tests/schema_weights.py MEMBER SIZE [tracemalloc]``
prints :func:`measure`'s result as JSON: a fresh interpreter for each figure.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

Document = dict[str, Any]


def _object(properties: dict[str, Any], **more: Any) -> Document:
    return {"type": "object", "properties": properties, **more}


def _count(size: int, each: int) -> int:
    return max(1, size // each)


def enum_objects(size: int) -> Document:
    """The attack on 0.4: an enum of objects, each a node of its own (50,000: 0.7 MB, 1.56 GB, 9.3 s)."""
    return _object({"x": {"enum": [{"k": i} for i in range(_count(size, 14))]}})


def enum_arrays(size: int) -> Document:
    return _object({"x": {"enum": [[i, "a"] for i in range(_count(size, 12))]}})


def enum_scalars(size: int) -> Document:
    return _object({"x": {"enum": [f"v{i}" for i in range(_count(size, 10))]}})


def const_object(size: int) -> Document:
    return _object({"x": {"const": {f"k{i}": [i, {"v": i}] for i in range(_count(size, 24))}}})


def const_and_enum(size: int) -> Document:
    """A const filtering an enum: each value was compared with a fresh copy of the const (quadratic)."""
    half = size // 2
    return _object(
        {
            "x": {
                "const": {f"k{i}": i for i in range(_count(half, 12))},
                "enum": [{"k": i} for i in range(_count(half, 14))],
            }
        }
    )


def enum_long_values_required(size: int) -> Document:
    """Required fields each naming an enum of long values: each missing field's issue spelt out all of them."""
    fields = _count(size // 2, 30)
    return _object(
        {f"f{i}": {"$ref": "#/$defs/e"} for i in range(fields)},
        required=[f"f{i}" for i in range(fields)],
        **{"$defs": {"e": {"enum": ["x" * (size // 40) + str(i) for i in range(20)]}}},
    )


def defs_many(size: int) -> Document:
    count = _count(size, 80)
    return _object(
        {f"p{i}": {"$ref": f"#/$defs/d{i}"} for i in range(count)},
        **{"$defs": {f"d{i}": {"type": "integer", "minimum": i} for i in range(count)}},
    )


def defs_chain(size: int) -> Document:
    """Each $def a $ref to the next: the chain was followed from every link (quadratic)."""
    count = _count(size, 40)
    chain: dict[str, Any] = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(count)}
    chain[f"a{count}"] = {"type": "string"}
    return _object({"x": {"$ref": "#/$defs/a0"}}, **{"$defs": chain})


def properties_wide(size: int) -> Document:
    return _object({f"p{i}": {"type": "string"} for i in range(_count(size, 28))})


def properties_nested(size: int) -> Document:
    """Objects of 200 fields side by side: compiled as one module, 540 MB for 0.3 MB."""
    per = 200
    return _object(
        {f"o{j}": _object({f"p{i}": {"type": "string"} for i in range(per)}) for j in range(_count(size, 28 * per))}
    )


def required_long(size: int) -> Document:
    return _object({}, required=[f"r{i}" for i in range(_count(size, 9))])


def default_large(size: int) -> Document:
    return _object({"x": {"type": "array", "default": [{"v": i} for i in range(_count(size, 10))]}})


def examples_large(size: int) -> Document:
    return _object({"x": {"type": "array", "examples": [[{"v": i} for i in range(_count(size, 10))]]}})


def nested_deep(size: int) -> Document:
    """60 levels of objects (the import takes 64), each with fields beside the one going deeper."""
    width = _count(size, 60 * 30)
    deep: Document = _object({f"p{i}": {"type": "string"} for i in range(width)})
    for level in range(60):
        deep = _object({"next": deep, **{f"q{level}_{i}": {"type": "integer"} for i in range(width)}})
    return deep


def nested_long_keys(size: int) -> Document:
    """60 levels under keys of 2,000 characters, then a wide object: each pointer below repeats all 60 keys."""
    deep: Document = _object({f"p{i}": {"type": "string"} for i in range(_count(size - 60 * 2000, 28))})
    for _ in range(60):
        deep = _object({"k" * 2000: deep})
    return deep


def anchors_under_a_long_id(size: int) -> Document:
    """A base URI of a fifth of the document, and a $anchor in each property: each anchor's key was base and all."""
    count = _count(size * 4 // 5, 50)
    return {
        "$id": "https://example.com/" + "a" * (size // 5),
        "type": "object",
        "properties": {f"p{i}": {"$anchor": f"x{i}", "type": "string"} for i in range(count)},
        "required": ["p0"],
        "$defs": {"back": {"$ref": "#x0"}},
    }


def refs_under_a_long_id(size: int) -> Document:
    """A base URI of a fifth of the document, and a $ref in each property: resolved against the base each time."""
    count = _count(size * 4 // 5, 30)
    return {
        "$id": "https://example.com/" + "a" * (size // 5),
        "type": "object",
        "properties": {f"p{i}": {"$ref": "#/$defs/s"} for i in range(count)},
        "$defs": {"s": {"type": "string"}},
    }


def anyof_wide(size: int) -> Document:
    return _object({"x": {"anyOf": [_object({f"a{i}": {"type": "string"}}) for i in range(_count(size, 60))]}})


def oneof_wide(size: int) -> Document:
    return _object({"x": {"oneOf": [{"type": "integer", "minimum": i} for i in range(_count(size, 38))]}})


def allof_wide(size: int) -> Document:
    return _object({"x": {"allOf": [{"type": "integer", "minimum": i} for i in range(_count(size, 38))]}})


def prefix_items_long(size: int) -> Document:
    return _object({"x": {"type": "array", "prefixItems": [{"type": "integer"}] * _count(size, 20)}})


def pattern_properties_many(size: int) -> Document:
    return _object(
        {"x": {"type": "object", "patternProperties": {f"^p{i}$": {"type": "string"} for i in range(_count(size, 30))}}}
    )


def typeless_wide(size: int) -> Document:
    return _object({f"p{i}": {"minimum": 1, "minLength": 1} for i in range(_count(size, 40))})


#: Each member by name: a function of the size wanted, in bytes, to a tool's input schema of about that size.
MEMBERS: dict[str, Callable[[int], Document]] = {
    function.__name__: function
    for function in (
        enum_objects,
        enum_arrays,
        enum_scalars,
        const_object,
        const_and_enum,
        enum_long_values_required,
        defs_many,
        defs_chain,
        properties_wide,
        properties_nested,
        required_long,
        default_large,
        examples_large,
        nested_deep,
        nested_long_keys,
        anchors_under_a_long_id,
        refs_under_a_long_id,
        anyof_wide,
        oneof_wide,
        allof_wide,
        prefix_items_long,
        pattern_properties_many,
        typeless_wide,
    )
}

#: The members a document of which is refused, not imported: what importing it would hold is past the bound.
REFUSED = frozenset({"nested_long_keys"})


def tools_many(size: int) -> list[dict[str, Any]]:
    """A listing of many small tools, about *size* bytes: what holding each tool costs, whatever its schema."""
    return [
        {"name": f"t{i}", "description": "A tool.", "inputSchema": _object({"a": {"type": "string"}})}
        for i in range(_count(size, 100))
    ]


def measure(member: str, size: int, *, traced: bool) -> dict[str, Any]:
    """Import *member* of about *size* bytes, define it as a tool, export it, check a wrong value: what that took.

    With *traced*, the peak memory is ``tracemalloc``'s (what Python allocated
    beyond the parsed document), and the time is not worth reading; without,
    the time is. The document is parsed from its JSON text first, as a server's is.

    Returns:
        ``bytes`` (the JSON text's), ``peak`` (bytes, or None), ``seconds``,
        ``refused`` (the error's text, or None) and ``tools``.
    """
    import gc
    import tracemalloc

    from hermes_core import InvalidDefinitionError, Runtime, SchemaError, define_tool
    from hermes_core import schema as s

    made = tools_many(size) if member == "tools_many" else [{"name": "t", "inputSchema": MEMBERS[member](size)}]
    text = json.dumps(made)
    listing = json.loads(text)
    del made
    gc.collect()
    if traced:
        tracemalloc.start()
    began = time.perf_counter()
    refused = None
    tools = []
    try:
        for entry in listing:
            schema = s.from_json_schema(entry["inputSchema"], closed=True)
            tools.append(
                define_tool(name=entry["name"], description="A tool.", version="1.0.0", input=schema, handler=dict)
            )
        json.dumps(Runtime(tools).definitions())
        for tool in tools[:10]:
            try:
                tool.input.parse({"x": {"not": "this"}})
            except SchemaError as error:
                str(error)
    except InvalidDefinitionError as error:
        refused = str(error)
    seconds = time.perf_counter() - began
    peak = tracemalloc.get_traced_memory()[1] if traced else None
    return {"bytes": len(text), "peak": peak, "seconds": seconds, "refused": refused, "tools": len(tools)}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1], int(sys.argv[2]), traced=sys.argv[3:] == ["tracemalloc"])))
