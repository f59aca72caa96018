"""A tool's input: every imported object that is open only by silence, closed.

JSON Schema lets an object that lists ``properties`` take any other key unless
it says ``additionalProperties``. Right for a schema, wrong for a tool's
input: a model's misspelt optional argument (``{"radius": 3, "unitz": "m"}``)
would be taken and dropped without a word. So a tool takes, for its input,
:func:`tool_input` of the schema it is given: each imported schema in it (the
root, or one a field, an item or an option holds) that has objects open by
silence (:attr:`ImportedSchema.open_by_silence`) is imported again with
``closed=True``, the one mechanism ``from_json_schema`` already has; the
exported definition then says ``additionalProperties: false`` there, so a
model reads the contract that is enforced. A document that says
``additionalProperties`` keeps what it says; ``from_json_schema`` on its own
keeps JSON Schema's meaning.

The schema package's API for the tool layer (documented, not re-exported by
``hermes_core``; it may change between releases).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hermes_core.schema._alternatives import ImportedSchema, LinkSchema, NeverSchema, RefSchema
from hermes_core.schema._containers import ObjectSchema, PatternPropertiesSchema
from hermes_core.schema._nodes import (
    AnySchema,
    BooleanSchema,
    ConstSchema,
    EnumSchema,
    IntegerSchema,
    NullSchema,
    NumberSchema,
    Schema,
    StringSchema,
)

__all__ = ["closed_import", "input_schemas", "shape_of", "tool_input"]

# closed_import's answers by the identity of what it was given (kept alive beside it): a runtime's named
# schemas are closed for every tool that names them, and for every definition written out.
_closed: dict[int, tuple[Schema, Schema]] = {}
_CLOSED_KEPT = 1024

# The nodes that hold no schema: nothing in them to close (a ref's and a link's targets are not theirs).
_LEAVES = frozenset(
    {
        AnySchema,
        BooleanSchema,
        ConstSchema,
        EnumSchema,
        IntegerSchema,
        LinkSchema,
        NeverSchema,
        NullSchema,
        NumberSchema,
        RefSchema,
        StringSchema,
    }
)


def shape_of(schema: Schema) -> Schema:
    """The node that decides the shape of a value: *schema*, or what the in-place keywords of its schema wrap.

    An imported object with ``if``/``then`` (or ``not``, ``unevaluatedProperties``...)
    is its object node with those checks around it: a tool's input is an
    object when that node is one.
    """
    # Told by their kind: their modules are imported with the JSON Schema importer, which alone makes them (start-up).
    while schema.kind in ("applied", "unevaluated"):
        schema = schema.base  # type: ignore[attr-defined] # both kinds have a base (schema._kinds)
    return schema


def closed_import(schema: ImportedSchema) -> ImportedSchema:
    """*schema* with its objects that are open by silence closed: imported again with ``closed=True``.

    *schema* itself when it has none (a closed import, or a document that
    says ``additionalProperties`` wherever it lists ``properties``).
    """
    if not schema.open_by_silence:
        return schema
    known = _closed.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]  # type: ignore[return-value] # what was stored for it
    from hermes_core.schema._import import from_json_schema  # noqa: PLC0415 - only an open import needs the reader

    # An open import exports its document unchanged: it is the document it was read from.
    closed = from_json_schema(
        schema.document,
        dialect=schema.dialect,
        closed=True,
        metaschemas=schema.metaschemas,
        formats=schema.formats,
    )
    if schema.description is not None and closed.description is None:
        closed = dataclasses.replace(closed, description=schema.description)
    if len(_closed) >= _CLOSED_KEPT:
        _closed.clear()
    _closed[id(schema)] = (schema, closed)
    return closed


def input_schemas(named: Mapping[str, Schema]) -> Mapping[str, Schema]:
    """A runtime's named schemas as a tool's input reaches them through ``s.ref``: each :func:`tool_input`.

    A tool's input closes what it holds; one that names a schema closes what
    it names too, for that input only (the same schema in an output keeps
    what it says). *named* itself when nothing in it is closed.
    """
    closed = {name: tool_input(schema) for name, schema in named.items()}
    if all(closed[name] is schema for name, schema in named.items()):
        return named
    return closed


def tool_input(schema: Schema) -> Schema:
    """The schema a tool takes as its input: *schema*, each imported schema in it closed (:func:`closed_import`).

    *schema* itself (the same object) when it holds no imported object open
    by silence. An ``s.ref`` is not followed here: the runtime closes what it
    names for the inputs that name it (:func:`input_schemas`).
    """
    if type(schema) in _LEAVES:  # most of a tool's input: answered without asking for children
        return schema
    if isinstance(schema, ImportedSchema):
        return closed_import(schema)
    children = schema.children()
    changed: list[Schema] | None = None
    for index, child in enumerate(children):
        new = tool_input(child)
        if new is not child:
            if changed is None:
                changed = list(children)
            changed[index] = new
    return schema if changed is None else _rebuilt(schema, iter(changed))


def _rebuilt(node: Schema, changed: Any) -> Schema:
    """*node* made again with the schemas it holds taken, in :meth:`~Schema.children` order, from *changed*."""
    updates: dict[str, Any] = {}
    if isinstance(node, ObjectSchema):
        updates["field_items"] = tuple((name, next(changed)) for name, _ in node.field_items)
        if isinstance(node.extra, Schema):
            updates["extra"] = next(changed)
    elif isinstance(node, PatternPropertiesSchema):
        updates["base"] = next(changed)
        updates["patterns"] = tuple((pattern, next(changed)) for pattern, _ in node.patterns)
    else:
        for name in node._holds_schemas:
            held = getattr(node, name)
            updates[name] = tuple(next(changed) for _ in held) if isinstance(held, tuple) else next(changed)
    return dataclasses.replace(node, **updates)  # type: ignore[type-var]
