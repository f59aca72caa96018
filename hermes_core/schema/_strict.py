"""OpenAI's strict mode: a tool's input schema written as structured outputs' strict mode takes it.

The schema package's API for the adapters (documented, not re-exported by
``hermes_core``; it may change between releases):

* :func:`strict_problem` — why a schema cannot be given to strict mode at all
  (a field that accepts any value, a record, an object with open keys, a
  shape only imported JSON Schema has), or None.
* :func:`strict_schema` — an exported JSON Schema rewritten for strict mode:
  every property required, an optional one nullable, the keywords strict mode
  refuses left out, a ``$ref`` with siblings inlined; at most
  :data:`STRICT_SCHEMAS_MAX` schemas written (:class:`StrictTooLargeError`).
* :func:`absent_nulls` — the arguments a strict-mode model sent, with a null
  sent for an optional field that does not accept null taken as the field
  left out (so its default applies).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.schema._alternatives import (
    AllOfSchema,
    ImportedSchema,
    LinkSchema,
    NeverSchema,
    NullableSchema,
    OneOfSchema,
    OptionalSchema,
    RefSchema,
    TypelessSchema,
    UnionSchema,
)
from hermes_core.schema._conditions import (
    AppliedSchema,
    ConditionalSchema,
    ContainsSchema,
    DependentSchema,
    NotSchema,
    PropertyNamesSchema,
)
from hermes_core.schema._containers import (
    ArraySchema,
    ObjectSchema,
    PatternPropertiesSchema,
    PrefixArraySchema,
    RecordSchema,
)
from hermes_core.schema._evaluation import UnevaluatedSchema
from hermes_core.schema._nodes import AnySchema, Schema
from hermes_core.schema._validators import follow_refs

__all__ = ["STRICT_SCHEMAS_MAX", "StrictTooLargeError", "absent_nulls", "strict_problem", "strict_schema"]

# JSON Schema keywords OpenAI's strict mode refuses; the runtime still enforces each.
_STRICT_DROPPED = frozenset(
    {
        "default",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)

#: The most schemas one tool's parameters may hold once written for strict mode. Inlining each ``$ref``
#: that has a description beside it can multiply a document's size (a definition used twice at each
#: of 16 levels: 65,536 copies); past this, far beyond what strict mode takes, the tool is refused.
STRICT_SCHEMAS_MAX = 100_000


class StrictTooLargeError(Exception):
    """The strict form of a tool's parameters would hold more than :data:`STRICT_SCHEMAS_MAX` schemas."""


def strict_schema(
    schema: dict[str, Any], defs: Mapping[str, Any] | None = None, left: list[int] | None = None
) -> dict[str, Any]:
    """*schema* (exported JSON Schema) as OpenAI's strict mode takes it.

    Every object lists all its properties as required, with no others; a
    property that was optional accepts null instead; keywords strict mode
    refuses are left out; a ``$ref`` with other keywords beside it (a field's
    description) is replaced by what it refers to, as strict mode takes a
    ``$ref`` only alone. *defs* are the root's ``$defs``; *left* counts down
    the schemas still allowed to be written.

    Raises:
        StrictTooLargeError: more than :data:`STRICT_SCHEMAS_MAX` schemas would be written.
    """
    if defs is None:
        defs = schema.get("$defs", {})
    if left is None:
        left = [STRICT_SCHEMAS_MAX]
    left[0] -= 1
    if left[0] < 0:  # the work stops with the budget: an inlining that multiplies never runs long
        raise StrictTooLargeError
    ref = schema.get("$ref")
    if isinstance(ref, str) and len(schema) > 1 and ref.startswith("#/$defs/") and ref[8:] in defs:
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**defs[ref[8:]], **siblings}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _STRICT_DROPPED:
            continue
        if key == "properties":
            required = set(schema.get("required", ()))
            out[key] = {
                name: strict_schema(sub, defs, left) if name in required else _nullable(strict_schema(sub, defs, left))
                for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = strict_schema(value, defs, left)
        elif key in ("anyOf", "prefixItems"):
            out[key] = [strict_schema(sub, defs, left) for sub in value]
        elif key == "$defs":
            out[key] = {name: strict_schema(sub, defs, left) for name, sub in value.items()}
        else:
            out[key] = value
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    if "prefixItems" in out:  # a tuple: strict mode has no prefixItems; any of its item schemas, in order
        items = out.pop("prefixItems")
        out["items"] = items[0] if len(items) == 1 else {"anyOf": items}
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(option.get("type") == "null" for option in options):
            return schema
        return {**schema, "anyOf": [*options, {"type": "null"}]}
    if "enum" in schema:
        values = schema["enum"]
        return schema if None in values else {**schema, "enum": [*values, None]}
    return {"anyOf": [schema, {"type": "null"}]}


def strict_problem(
    schema: Schema, refs: Mapping[str, Schema], path: str = "", seen: set[int] | None = None
) -> str | None:
    """Why *schema* cannot be given to strict mode at all (where, and what), or None.

    *refs* are the named schemas refs resolve against; *path* is where
    *schema* sits (``""``: the input). *seen* holds the nodes already looked at, and grows: a node reached again
    (through a cycle, or a second ref to one definition) was found fine the
    first time, or is being looked at; so the walk is linear in the nodes.
    When the first problem is a keyword strict mode cannot carry (``not``,
    ``if``/``then``/``else``, ``$dynamicRef``...), the answer names every
    such keyword of the schema, field by field, so that none is found one
    refusal at a time.
    """
    found = _first_problem(schema, refs, path, set() if seen is None else seen)
    if found is None:
        return None
    problem, carry = found
    if not carry:
        return problem
    uses: dict[str, dict[str, None]] = {}
    _uncarried(schema, refs, path, set(), uses)
    said = [f'field "{where or "(the input)"}" uses {" and ".join(keywords)}' for where, keywords in uses.items()]
    if len(said) > _FIELDS_SAID:
        said[_FIELDS_SAID:] = [f"{len(said) - _FIELDS_SAID} fields more"]
    return "; ".join(said) + ", which strict mode cannot carry"


# The most fields a refusal names the keywords of: a schema of thousands of conditions is refused in one line.
_FIELDS_SAID = 8


def _first_problem(schema: Schema, refs: Mapping[str, Schema], path: str, seen: set[int]) -> tuple[str, bool] | None:
    """The first problem :func:`strict_problem` finds, and whether it is a keyword strict mode cannot carry."""
    if id(schema) in seen:
        return None
    seen.add(id(schema))
    if isinstance(schema, RefSchema):
        if schema.name not in refs:
            return None
        return _first_problem(refs[schema.name], refs, path, seen)
    if isinstance(schema, ImportedSchema):
        if schema.unsupported:
            return f"its imported JSON Schema has what strict mode cannot be given: {schema.unsupported[0]}", False
        return _first_problem(schema.root, refs, path, seen)
    if isinstance(schema, LinkSchema):
        if schema.dynamic:  # strict mode takes $ref to $defs alone: resolved in a dynamic scope, it is not one
            return "$dynamicRef", True
        if schema.target is None:
            return None
        return _first_problem(schema.target, refs, path, seen)
    if isinstance(schema, AppliedSchema | UnevaluatedSchema):
        return "the keywords applied in place", True
    if isinstance(schema, tuple(_IMPORTED_ONLY)):
        keyword = _IMPORTED_ONLY[type(schema)]
        return f'field "{path or "(the input)"}" uses {keyword}, which strict mode cannot say', False
    if isinstance(schema, AnySchema):
        return f'field "{path or "(the input)"}" accepts any JSON value (s.any()), which strict mode cannot say', False
    if isinstance(schema, RecordSchema):
        return (
            f'field "{path or "(the input)"}" is a record (s.record()), whose keys strict mode cannot leave open',
            False,
        )
    if isinstance(schema, ObjectSchema) and schema.extra != "forbid":
        return (
            f'field "{path or "(the input)"}" allows unknown keys (extra={schema.extra!r}), which strict mode forbids',
            False,
        )
    for name, child in _children(schema):
        problem = _first_problem(child, refs, f"{path}.{name}" if path and name else path or name, seen)
        if problem is not None:
            return problem
    return None


def _uncarried(
    schema: Schema, refs: Mapping[str, Schema], path: str, seen: set[int], uses: dict[str, dict[str, None]]
) -> None:
    """Add to *uses* each field of *schema* (by path) that uses keywords strict mode cannot carry, with them."""
    if id(schema) in seen:
        return
    seen.add(id(schema))
    if isinstance(schema, RefSchema):
        if schema.name in refs:
            _uncarried(refs[schema.name], refs, path, seen, uses)
        return
    if isinstance(schema, ImportedSchema):
        _uncarried(schema.root, refs, path, seen, uses)
        return
    if isinstance(schema, LinkSchema):
        if schema.dynamic:
            uses.setdefault(path, {})["$dynamicRef"] = None
        if schema.target is not None:
            _uncarried(schema.target, refs, path, seen, uses)
        return
    if isinstance(schema, AppliedSchema | UnevaluatedSchema):
        uses.setdefault(path, {}).update(dict.fromkeys(_keywords(schema)))
        while isinstance(schema, AppliedSchema | UnevaluatedSchema):  # the value's own shape: its fields may use more
            schema = schema.base
        _uncarried(schema, refs, path, seen, uses)
        return
    for name, child in _children(schema):
        _uncarried(child, refs, f"{path}.{name}" if path and name else path or name, seen, uses)


# The shapes only imported JSON Schema has, as the document says them.
_IMPORTED_ONLY: dict[type[Schema], str] = {
    NeverSchema: "false (no value)",
    AllOfSchema: "allOf",
    OneOfSchema: "oneOf",
    TypelessSchema: "a schema without type",
    PrefixArraySchema: "prefixItems with more items after them",
    PatternPropertiesSchema: "patternProperties",
}


def _keywords(schema: Schema) -> list[str]:
    """The keywords a schema object applies in place (``not``, ``if``/``then``/``else``...): none strict mode takes."""
    if isinstance(schema, UnevaluatedSchema):
        held = [] if schema.properties is None else ["unevaluatedProperties"]
        held += [] if schema.items is None else ["unevaluatedItems"]
        return [*_keywords(schema.base), *held]
    if not isinstance(schema, AppliedSchema):
        return []
    found: list[str] = []
    for check in schema.checks:
        if isinstance(check, DependentSchema):
            found += ["dependentRequired"] * bool(check.required) + ["dependentSchemas"] * bool(check.schemas)
        elif isinstance(check, ContainsSchema):
            found.append(
                "contains" if check.minimum == 1 and check.maximum is None else "contains/minContains/maxContains"
            )
        else:
            found.append(_APPLIED[type(check)])
    return found


# The keywords of the checks an imported schema object applies in place (see _conditions), as the document says them.
_APPLIED: dict[type[Schema], str] = {
    NotSchema: "not",
    ConditionalSchema: "if/then/else",
    PropertyNamesSchema: "propertyNames",
}


def _through(schema: Schema, refs: Mapping[str, Schema]) -> Schema:
    """*schema* with named refs, imported documents and their links followed to the node they stand for."""
    for _ in range(64):  # a chain of refs and links longer than this is a cycle: the checks explain those
        if isinstance(schema, ImportedSchema):
            schema = schema.root
        elif isinstance(schema, LinkSchema) and schema.target is not None:
            schema = schema.target
        elif isinstance(schema, RefSchema) and schema.name in refs:
            schema = follow_refs(schema, refs)
            if isinstance(schema, RefSchema):
                break
        else:
            break
    return schema


def _children(schema: Schema) -> list[tuple[str, Schema]]:
    """The schemas *schema* holds, each with the field name it sits under (``""`` for an item or an option)."""
    if isinstance(schema, ObjectSchema):
        return list(schema.field_items)
    return [("", child) for child in schema.children()]


def absent_nulls(schema: Schema, value: Any, refs: Mapping[str, Schema], depth: int = 0) -> Any:
    """*value* with a null sent for an optional field that does not accept null taken as the field left out.

    *schema* is the tool's input, *refs* the named schemas it may refer to; a
    value nested deeper than 64 levels is left as it is below that.
    """
    if depth > 64:  # a deeper value is checked as it is: the schema's own depth limit explains it
        return value
    schema = _through(schema, refs)
    if isinstance(schema, NullableSchema | OptionalSchema):
        return absent_nulls(schema.schema, value, refs, depth)
    if isinstance(schema, ObjectSchema) and type(value) is dict:
        fields = schema.fields
        out = {}
        for key, item in value.items():
            field = fields.get(key) if type(key) is str else None
            if item is None and isinstance(field, OptionalSchema) and not _accepts_null(field.schema, refs):
                continue
            out[key] = item if field is None else absent_nulls(field, item, refs, depth + 1)
        return out
    if isinstance(schema, ArraySchema) and type(value) is list:
        return [absent_nulls(schema.items, item, refs, depth + 1) for item in value]
    if isinstance(schema, UnionSchema | OneOfSchema) and type(value) in (dict, list):
        return _absent_nulls_in_option(schema.options, value, refs, depth)
    return value


def _absent_nulls_in_option(options: tuple[Schema, ...], value: Any, refs: Mapping[str, Schema], depth: int) -> Any:
    """:func:`absent_nulls` under the option of a union the value is meant for; *value* if that is not plain.

    Strict mode makes every field of every option required, an optional one
    nullable, so a model sends all the fields of the option it chose: an
    object is for the options whose fields hold every key it has, an array
    for the array options. Where those options take the value the same way,
    that is how it is taken; where they differ, the value is checked as sent.
    """
    taken: list[Any] = []
    for option in options:
        shape = _through(option, refs)
        while isinstance(shape, NullableSchema | OptionalSchema):
            shape = _through(shape.schema, refs)
        if type(value) is dict:
            fields = shape.fields if isinstance(shape, ObjectSchema) else None
            if fields is None or not all(type(key) is str and key in fields for key in value):
                continue
        elif not isinstance(shape, ArraySchema):
            continue
        candidate = absent_nulls(shape, value, refs, depth)
        try:
            if not any(candidate == other for other in taken):
                taken.append(candidate)
        except Exception:  # a value's own __eq__ (a dict given, not read from JSON): checked as sent
            return value
    return taken[0] if len(taken) == 1 else value


def _accepts_null(schema: Schema, refs: Mapping[str, Schema]) -> bool:
    schema = _through(schema, refs)
    if isinstance(schema, NullableSchema | AnySchema):
        return True
    if isinstance(schema, UnionSchema):
        return any(_accepts_null(option, refs) for option in schema.options)
    values = getattr(schema, "values", None)
    return isinstance(values, tuple) and None in values
