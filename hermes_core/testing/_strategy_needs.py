"""What a schema needs and admits, for its strategies: ref depth, JSON kinds, the named schemas it reaches.

No Hypothesis here: these walk the schema only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError
from hermes_core.schema._validators import json_key

__all__ = ["NEVER", "Kinds", "distinct_count", "kinds_of", "named_schemas", "ref_need"]

NEVER = math.inf

Kinds = frozenset[str]
_ALL_KINDS: Kinds = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_NUMERIC: Kinds = frozenset({"integer", "number"})


def distinct_count(node: s.Schema) -> float:
    """How many values *node* accepts that differ as JSON (infinite unless it is a small finite set)."""
    if isinstance(node, s.NullSchema | s.ConstSchema):
        return 1
    if isinstance(node, s.BooleanSchema):
        return 2
    if isinstance(node, s.EnumSchema):
        return len({json_key(value) for value in node.values})
    return math.inf


def ref_need(node: s.Schema, named: Mapping[str, float]) -> float:
    """How many refs deep the shallowest value of *node* goes; infinite if it has no finite value.

    *named* gives the same for each named schema (the plan in ``_strategies`` works them out).
    """
    if isinstance(node, s.RefSchema):
        return 1 + named[node.name]
    if isinstance(node, s.OptionalSchema):
        return ref_need(node.schema, named)
    if isinstance(node, s.ArraySchema):
        return ref_need(node.items, named) if node.min_items else 0
    if isinstance(node, s.TupleSchema):
        return max(ref_need(item, named) for item in node.items)
    if isinstance(node, s.ObjectSchema):
        return max(
            (ref_need(sub, named) for _, sub in node.field_items if not isinstance(sub, s.OptionalSchema)), default=0
        )
    if isinstance(node, s.UnionSchema):
        return min(ref_need(option, named) for option in node.options)
    return 0  # a leaf, an empty record, or None


_SINGLE_KIND: dict[type[s.Schema], Kinds] = {
    s.StringSchema: frozenset({"string"}),
    s.IntegerSchema: frozenset({"integer"}),
    s.NumberSchema: _NUMERIC,
    s.BooleanSchema: frozenset({"boolean"}),
    s.NullSchema: frozenset({"null"}),
    s.ArraySchema: frozenset({"array"}),
    s.TupleSchema: frozenset({"array"}),
    s.ObjectSchema: frozenset({"object"}),
    s.RecordSchema: frozenset({"object"}),
}


def kinds_of(node: s.Schema, named: Mapping[str, Kinds]) -> Kinds:
    """The JSON kinds *node* may accept: a value of any other kind is rejected."""
    if isinstance(node, s.RefSchema):
        return named[node.name]
    if isinstance(node, s.OptionalSchema | s.NullableSchema):
        inner = kinds_of(node.schema, named)
        return inner | {"null"} if isinstance(node, s.NullableSchema) else inner
    if isinstance(node, s.UnionSchema):
        return frozenset().union(*(kinds_of(option, named) for option in node.options))
    if isinstance(node, s.EnumSchema):
        return frozenset().union(*(_member_kinds(value) for value in node.values))
    if isinstance(node, s.ConstSchema):
        return _member_kinds(node.value)
    if isinstance(node, s.AnySchema):
        return _ALL_KINDS
    return _SINGLE_KIND.get(type(node), _ALL_KINDS)


def _member_kinds(value: Any) -> Kinds:
    if isinstance(value, str):
        return frozenset({"string"})
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if value is None:
        return frozenset({"null"})
    if isinstance(value, list):
        return frozenset({"array"})
    if isinstance(value, dict):
        return frozenset({"object"})
    return _NUMERIC  # 1 and 1.0 are the same JSON number


def named_schemas(schema: s.Schema, defs: Mapping[str, s.Schema]) -> dict[str, s.Schema]:
    """Every named schema *schema* reaches through refs, by name.

    Raises:
        InvalidDefinitionError: a ref names a schema *defs* does not have, or a
            named schema refers to itself before holding a value (see :func:`_first_refs`).

    """
    reached: dict[str, s.Schema] = {}
    pending = list(schema.ref_names())
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        if name not in defs:
            raise InvalidDefinitionError(
                f"s.ref({name!r})", None, "names a schema that defs does not have; pass defs={name: schema, ...}"
            )
        reached[name] = defs[name]
        pending.extend(defs[name].ref_names())
    for name, named in reached.items():
        seen: set[str] = set()
        pending = _first_refs(named)
        while pending:
            first = pending.pop()
            if first == name:
                raise InvalidDefinitionError(
                    f"s.ref({name!r})",
                    None,
                    "refers to itself before it describes a value (directly, or as a union or nullable option); "
                    "checking a value against it would recurse without end",
                )
            if first not in seen:
                seen.add(first)
                pending.extend(_first_refs(reached[first]))
    return reached


def _first_refs(node: s.Schema) -> list[str]:
    """The names *node* refers to before any array, tuple, object or record: where checking a value begins.

    A named schema among its own first refs checks a value against itself
    without end (``s.union(s.ref("x"), ...)`` named ``x``).
    """
    if isinstance(node, s.RefSchema):
        return [node.name]
    if isinstance(node, s.UnionSchema):
        return [name for option in node.options for name in _first_refs(option)]
    if isinstance(node, s.NullableSchema | s.OptionalSchema):
        return _first_refs(node.schema)
    return []
