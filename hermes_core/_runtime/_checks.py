"""The checks of what a runtime is built from: tools, named schemas, providers, and the refs between them.

Written once and used by both :class:`~hermes_core.Runtime` and the plugin
loader, so that a plugin's contributions are held to exactly the rules a
runtime holds them to. Each check takes the *source* that messages name
(``Runtime()``, or a plugin's origin) and the *field* the values came in
(``tools``, or the hook ``hermes_tools``), and raises
:class:`~hermes_core.InvalidDefinitionError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import shorten
from hermes_core._base._names import case_key, check_name
from hermes_core._runtime._permissions import PermissionProvider
from hermes_core._tool._definition import Tool
from hermes_core.schema import (
    ImportedSchema,
    NullableSchema,
    ObjectSchema,
    OptionalSchema,
    RefSchema,
    Schema,
    UnionSchema,
)
from hermes_core.schema._inputs import shape_of
from hermes_core.schema._validators import default_problem, follow_refs

__all__ = [
    "check_providers",
    "check_schemas",
    "check_tools",
    "check_wiring",
]


def _kind(value: object) -> str:
    return type(value).__name__


def check_tools(source: str, field: str, tools: Iterable[object]) -> dict[str, Tool]:
    """The tools by name, each a :class:`Tool`, each name once, no two names differing only in case.

    Raises:
        InvalidDefinitionError: an item is not a Tool, or two share a name or differ only in its case.
    """
    checked: dict[str, Tool] = {}
    cased: dict[str, str] = {}  # case_key -> the name first given
    for index, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise InvalidDefinitionError(
                source, f"{field}[{index}]", f"must be a Tool made by define_tool(), got {_kind(tool)}"
            )
        if tool.name in checked:
            raise InvalidDefinitionError(
                f'tool "{tool.name}"', "name", "is registered twice; each tool name must be unique in a runtime"
            )
        other = cased.setdefault(case_key(tool.name), tool.name)
        if other != tool.name:
            raise InvalidDefinitionError(
                f'tools "{other}" and "{tool.name}"',
                None,
                "have names that differ only in case, which models and clients that fold case cannot tell apart; "
                "rename one of them",
            )
        checked[tool.name] = tool
    return checked


def check_schemas(source: str, field: str, schemas: object) -> dict[str, Schema]:
    """The named schemas, each name following the name rule and each value a schema.

    Raises:
        InvalidDefinitionError: *schemas* is not a mapping, a name is malformed, or a value is not a schema.
    """
    if not isinstance(schemas, Mapping):
        raise InvalidDefinitionError(source, field, f"must be a mapping of name to schema, got {_kind(schemas)}")
    checked: dict[str, Schema] = {}
    for name, schema in schemas.items():
        check_name(source, f"{field} name", name, example="fs.path")
        if not isinstance(schema, Schema) or isinstance(schema, OptionalSchema):
            raise InvalidDefinitionError(
                source, f'{field}["{name}"]', f"must be a schema such as s.string(), got {_kind(schema)}"
            )
        checked[name] = schema
    return checked


def check_providers(source: str, field: str, providers: Iterable[object]) -> tuple[PermissionProvider, ...]:
    """The permission providers, each with a callable ``check(tool, permission)``.

    Raises:
        InvalidDefinitionError: an item has no ``check`` method.
    """
    checked: list[PermissionProvider] = []
    for index, provider in enumerate(providers):
        if not isinstance(provider, PermissionProvider) or not callable(getattr(provider, "check", None)):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must be a permission provider: an object with a method check(tool, permission) "
                f"returning True, False or None; got {_kind(provider)}",
            )
        checked.append(provider)
    return tuple(checked)


def _check_refs(decl: str, field: str | None, schema: Schema, refs: Mapping[str, Schema]) -> None:
    for ref in schema.ref_names():
        if ref not in refs:
            known = ", ".join(f'"{n}"' for n in sorted(refs)[:20]) or "none"
            raise InvalidDefinitionError(
                decl,
                field,
                f'refers to the schema "{ref}" (s.ref), which no registered schema resolves; '
                f"register it under that name (schemas known: {shorten(known, 400)})",
            )


def _check_defaults(decl: str, label: str, schema: Schema, refs: Mapping[str, Schema]) -> None:
    problem = default_problem(schema, refs)
    if problem is not None:
        where, issue = problem
        raise InvalidDefinitionError(
            decl, f'{label} "{where}"', f"has a default that does not match its schema: {issue.message('default')}"
        )


def check_wiring(tools: Iterable[Tool], schemas: Mapping[str, Schema], refs: Mapping[str, Schema]) -> None:
    """Check that *tools* and the named *schemas* resolve against *refs* (every named schema known).

    Each ``s.ref`` names a schema in *refs*; no named schema is a ref that
    leads back to itself; a tool's input resolves to an object schema; every
    default under a ref matches its schema. Nothing is compiled but the
    schemas of such defaults.

    Raises:
        InvalidDefinitionError: naming the tool or the schema, and the field.
    """
    for name, schema in schemas.items():
        decl = f'schema "{name}"'
        _check_refs(decl, None, schema, refs)
        if isinstance(follow_refs(schema, refs), RefSchema):
            raise InvalidDefinitionError(
                decl, None, "is a ref that leads back to itself; a named schema must describe a value"
            )
        if _leads_back(name, schema, refs, set()):
            raise InvalidDefinitionError(
                decl,
                None,
                "refers to itself through a union or nullable with no array or object between, so checking a "
                "value against it would never end; put the recursion inside s.array(...) or s.object(...)",
            )
        _check_defaults(decl, "field", schema, refs)
    for tool in tools:
        # A tool compiled its schemas unless they name others (has_refs): only those have anything to check here.
        decl = f'tool "{tool.name}"'
        if tool.input.has_refs:
            _check_refs(decl, "input", tool.input, refs)
            target = follow_refs(tool.input, refs)
            # The rule define_tool holds a tool's own input to: an object schema, or an import of one.
            shape = shape_of(target.root) if isinstance(target, ImportedSchema) else target
            if not isinstance(shape, ObjectSchema):
                name = tool.input.name if isinstance(tool.input, RefSchema) else "?"
                raise InvalidDefinitionError(
                    decl,
                    "input",
                    f'refers to the schema "{name}", which is {_not_an_object(target, shape)}; a tool\'s input '
                    "must be an object schema (s.object(...), or an imported JSON Schema whose root is an object)",
                )
            _check_defaults(decl, "field", tool.input, refs)
        if tool.output.has_refs:
            _check_refs(decl, "output", tool.output, refs)
            _check_defaults(decl, "output field", tool.output, refs)


def _not_an_object(target: Schema, shape: Schema) -> str:
    """What *target* (a tool's input, through refs) is instead of an object schema; *shape* is its imported root."""
    said = shape.expected()
    what = f"{said}, not an object" if said != "an object" else f"an object schema of another kind ({shape.kind})"
    return f"an imported JSON Schema whose root is {what}" if shape is not target else what


def _leads_back(name: str, schema: Schema, refs: Mapping[str, Schema], seen: set[str]) -> bool:
    """Whether *schema* reaches ``s.ref(name)`` through unions, nullables, optionals and refs alone."""
    if isinstance(schema, RefSchema):
        if schema.name == name:
            return True
        if schema.name in seen or schema.name not in refs:
            return False
        seen.add(schema.name)
        return _leads_back(name, refs[schema.name], refs, seen)
    if isinstance(schema, UnionSchema):
        return any(_leads_back(name, option, refs, seen) for option in schema.options)
    if isinstance(schema, NullableSchema | OptionalSchema):
        return _leads_back(name, schema.schema, refs, seen)
    return False
