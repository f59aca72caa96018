"""Schema combinators. Use as ``from hermes_core import schema as s``.

Each combinator checks its own declaration when it is called, raising
:class:`~hermes_core._base._errors.InvalidDefinitionError` for a malformed one, and
returns an immutable node with ``parse(value)`` and ``json_schema()``::

    from hermes_core import schema as s

    write_input = s.object({
        "path": s.string(min_length=1, description="Where to write, relative to the root"),
        "mode": s.optional(s.enum(["w", "a"]), default="w"),
    })
    write_input.parse({"path": "notes.txt"})  # {'path': 'notes.txt', 'mode': 'w'}

A value is checked with JSON's rules: ``bool`` is not a number, ``1.0`` is an
integer (and parses to ``1``), NaN and infinities are not numbers, object keys
are strings, strings are valid Unicode, and unknown object fields are rejected.
"""

from __future__ import annotations

import builtins
import math
import re
import sys
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import Issue, shorten
from hermes_core._base._names import NAME_PATTERN as NAME_PATTERN  # hermes_core exports it; found here until 0.6
from hermes_core._base._names import check_name
from hermes_core.schema import _compile
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
    Unsupported,
)
from hermes_core.schema._containers import (
    ArraySchema,
    ObjectSchema,
    PatternPropertiesSchema,
    PrefixArraySchema,
    RecordSchema,
    TupleSchema,
)
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
from hermes_core.schema._shared import (
    MISSING,
    Extra,
    canonical_json,
    copy_json,
    declared_value_problem,
    in_float_range,
    integer_size,
    path_key,
    unicode_ok,
)

__all__ = [
    "AllOfSchema",
    "AnySchema",
    "ArraySchema",
    "BooleanSchema",
    "ConstSchema",
    "EnumSchema",
    "ImportedSchema",
    "IntegerSchema",
    "LinkSchema",
    "NeverSchema",
    "NullSchema",
    "NullableSchema",
    "NumberSchema",
    "ObjectSchema",
    "OneOfSchema",
    "OptionalSchema",
    "PatternPropertiesSchema",
    "PrefixArraySchema",
    "RecordSchema",
    "RefSchema",
    "Schema",
    "StringSchema",
    "TupleSchema",
    "TypelessSchema",
    "UnionSchema",
    "Unsupported",
    "any",
    "array",
    "boolean",
    "const",
    "enum",
    "from_json_schema",
    "integer",
    "literal",
    "null",
    "nullable",
    "number",
    "object",
    "optional",
    "record",
    "ref",
    "string",
    "tuple",
    "union",
]

# The JSON Schema importer, and the in-place keywords it alone makes, are imported with its first use, not with
# the package (PEP 562): they were 6 million instructions of every 'hermesos tools list' (docs/performance.md,
# start-up).
if typing.TYPE_CHECKING:  # what type checkers and the reference see: the real function
    from hermes_core.schema._import import from_json_schema


def __getattr__(name: str) -> Any:
    if name == "from_json_schema":
        from hermes_core.schema._import import from_json_schema  # noqa: PLC0415 - see above

        globals()[name] = from_json_schema  # asked once: the next access is a plain attribute
        return from_json_schema
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Checks that a default is a JSON value: one node, so its validator is compiled once.
_JSON_VALUE = AnySchema()


def _describe(value: Any) -> str:
    """How a declaration's wrong value is quoted: declarations are code, so the value is shown."""
    if isinstance(value, int) and not isinstance(value, bool) and not in_float_range(value):
        return integer_size(value)  # its text may be past what Python converts, and is unreadable anyway
    try:
        return shorten(builtins.repr(value))
    except Exception:  # an object whose repr raises: its type is what can be said
        return f"a {type(value).__name__} object"


# A declared number is exported in JSON Schema, whose readers hold numbers as 64-bit floats: a bound
# beyond that range would read as infinity there while parse compared against the exact int.
_RANGE = "must be a number within a 64-bit float's range (about 1.8e308), got {}"


def _check_description(decl: str, description: Any) -> str | None:
    if description is None or isinstance(description, str):
        return description
    raise InvalidDefinitionError(decl, "description", f"must be a string or None, got {type(description).__name__}")


def _check_count(decl: str, name: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidDefinitionError(decl, name, f"must be a non-negative integer or None, got {_describe(value)}")
    if value > sys.maxsize:
        raise InvalidDefinitionError(
            decl, name, f"must be at most {sys.maxsize}, the longest a length can be, got {_describe(value)}"
        )
    return value


def _check_bound(decl: str, name: str, value: Any) -> int | float | None:
    if value is None:
        return None
    non_finite = isinstance(value, float) and not math.isfinite(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or non_finite:
        raise InvalidDefinitionError(decl, name, f"must be a finite number or None, got {_describe(value)}")
    if not in_float_range(value):  # an int too large for a float (math.isfinite would raise OverflowError)
        raise InvalidDefinitionError(decl, name, _RANGE.format(_describe(value)))
    return value


def _check_order(decl: str, low_name: str, low: float | None, high_name: str, high: float | None) -> None:
    if low is not None and high is not None and low > high:
        raise InvalidDefinitionError(
            decl, low_name, f"is {low}, greater than {high_name} {high}; it must be at most {high_name}"
        )


def _check_schema(decl: str, name: str, value: Any, *, field_position: bool = False) -> Schema:
    if not isinstance(value, Schema):
        raise InvalidDefinitionError(
            decl, name, f"must be a schema such as s.string(), got {type(value).__name__} {_describe(value)}"
        )
    if isinstance(value, OptionalSchema) and not field_position:
        raise InvalidDefinitionError(
            decl, name, "is s.optional(...), which only marks a field of s.object({...}); pass the inner schema"
        )
    return value


def _check_scalar(decl: str, name: str, value: Any) -> None:
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        if in_float_range(value):
            return
        raise InvalidDefinitionError(decl, name, _RANGE.format(_describe(value)))
    if isinstance(value, float) and math.isfinite(value):
        return
    if isinstance(value, str) and unicode_ok(value):
        return
    raise InvalidDefinitionError(
        decl, name, f"must be a JSON scalar (a string, finite number, boolean or None), got {_describe(value)}"
    )


def string(
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    format: str | None = None,  # noqa: A002 - JSON Schema's keyword
    description: str | None = None,
) -> StringSchema:
    """A string of valid Unicode.

    Args:
        min_length: the fewest characters (code points) allowed.
        max_length: the most characters allowed.
        pattern: a regular expression searched anywhere in the string, with
            ``re.search`` (JSON Schema's unanchored rule); anchor it with ``^...$``.
        format: JSON Schema's ``format``. ``date-time``, ``date``, ``time`` (RFC
            3339), ``email``, ``uri``, ``uuid``, ``ipv4`` and ``ipv6`` are checked;
            any other name is exported as an annotation and not checked.
        description: what the string means, for the model.

    Raises:
        InvalidDefinitionError: a bound is not a non-negative integer (at most
            ``sys.maxsize``), the bounds are crossed, the pattern does not
            compile, or the format is not a string.

    """
    decl = "s.string()"
    low = _check_count(decl, "min_length", min_length)
    high = _check_count(decl, "max_length", max_length)
    _check_order(decl, "min_length", low, "max_length", high)
    regex = None
    if pattern is not None:
        if not isinstance(pattern, str):
            raise InvalidDefinitionError(decl, "pattern", f"must be a string, got {type(pattern).__name__}")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise InvalidDefinitionError(
                decl, "pattern", f"is not a valid regular expression ({exc}); fix the pattern {pattern!r}"
            ) from None
    if format is not None and (not isinstance(format, str) or not format or not unicode_ok(format)):
        raise InvalidDefinitionError(
            decl, "format", f"must be a format name such as 'date-time' or None, got {_describe(format)}"
        )
    return StringSchema(
        min_length=low,
        max_length=high,
        pattern=pattern,
        format=format,
        description=_check_description(decl, description),
        _regex=regex,
    )


def _bounded(
    cls: type[IntegerSchema] | type[NumberSchema], decl: str, declared: dict[str, Any], description: Any
) -> Any:
    bounds = {name: _check_bound(decl, name, value) for name, value in declared.items()}
    step = bounds.pop("multiple_of")
    if step is not None and step <= 0:
        raise InvalidDefinitionError(decl, "multiple_of", f"must be a positive number or None, got {_describe(step)}")
    # Every lower bound against every upper one; an exclusive bound leaves no value when they are equal.
    for low_name in ("minimum", "exclusive_minimum"):
        for high_name in ("maximum", "exclusive_maximum"):
            low, high = bounds[low_name], bounds[high_name]
            if low is None or high is None:
                continue
            if low_name == "minimum" and high_name == "maximum":
                _check_order(decl, low_name, low, high_name, high)
            elif low >= high:
                raise InvalidDefinitionError(
                    decl, low_name, f"is {low}, not less than {high_name} {high}; it must be less than {high_name}"
                )
    return cls(**bounds, multiple_of=step, description=_check_description(decl, description))


def integer(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: float | None = None,
    exclusive_maximum: float | None = None,
    multiple_of: float | None = None,
    description: str | None = None,
) -> IntegerSchema:
    """An integer, never a bool; an integral float such as ``1.0`` is accepted and parses to ``1``.

    The bounds and the step are :func:`number`'s; *description* says what the integer means.

    Raises:
        InvalidDefinitionError: a bound is not a finite number within a 64-bit
            float's range, the bounds leave no value, or the step is not positive.

    """
    declared = {
        "minimum": minimum,
        "maximum": maximum,
        "exclusive_minimum": exclusive_minimum,
        "exclusive_maximum": exclusive_maximum,
        "multiple_of": multiple_of,
    }
    schema: IntegerSchema = _bounded(IntegerSchema, "s.integer()", declared, description)
    return schema


def number(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: float | None = None,
    exclusive_maximum: float | None = None,
    multiple_of: float | None = None,
    description: str | None = None,
) -> NumberSchema:
    """A finite number (``int`` or ``float``), never a bool, NaN or an infinity.

    Args:
        minimum: the smallest value allowed (inclusive).
        maximum: the largest value allowed (inclusive).
        exclusive_minimum: a value the number must be greater than.
        exclusive_maximum: a value the number must be less than.
        multiple_of: a positive step the number must be a multiple of, as JSON
            Schema's ``multipleOf`` decides: an int step exactly, a float step by
            float division (``0.0075`` is a multiple of ``0.0001``; ``0.3`` is not
            one of ``0.1``, as ``0.3 / 0.1`` is ``2.9999999999999996``).
        description: what the number means, for the model.

    A bound may be given both inclusive and exclusive; both are checked and exported.

    Raises:
        InvalidDefinitionError: a bound or the step is not a finite number within
            a 64-bit float's range (JSON Schema's readers hold numbers as floats;
            a larger int would read as infinity there), a lower bound is above an
            upper one (or equal, where either is exclusive), or the step is not positive.

    """
    declared = {
        "minimum": minimum,
        "maximum": maximum,
        "exclusive_minimum": exclusive_minimum,
        "exclusive_maximum": exclusive_maximum,
        "multiple_of": multiple_of,
    }
    made: NumberSchema = _bounded(NumberSchema, "s.number()", declared, description)
    return made


def boolean(*, description: str | None = None) -> BooleanSchema:
    """``True`` or ``False`` (never ``0`` or ``1``)."""
    return BooleanSchema(_check_description("s.boolean()", description))


def null(*, description: str | None = None) -> NullSchema:
    """``None`` (JSON ``null``)."""
    return NullSchema(_check_description("s.null()", description))


def literal(value: str | int | float | bool | None, *, description: str | None = None) -> EnumSchema:
    """Exactly *value*, a JSON scalar, compared as JSON does (``1`` equals ``1.0``, not ``True``).

    Raises:
        InvalidDefinitionError: *value* is not a JSON scalar (a number must fit a 64-bit float).

    """
    decl = "s.literal()"
    _check_scalar(decl, "value", value)
    return EnumSchema((value,), _check_description(decl, description))


def _declarable(decl: str, field: str, value: Any) -> Any:
    """*value* parsed as a JSON value declared in a schema (a const, a default); raise, naming *field*, if it is not.

    Checked by the walk, which finds what the compiled check finds: a value declared is checked once, and
    compiling the check for it cost every start a compile() (docs/performance.md, start-up).
    """
    ok, parsed, issues = _compile.closed_validator(_JSON_VALUE).walk(value)
    if not ok:
        raise InvalidDefinitionError(decl, field, _not_declarable(issues[0], field))
    return parsed


def _not_declarable(issue: Issue, field: str) -> str:
    """Why a value declared in a schema (a const, a default) is refused: what the JSON check found."""
    if issue.kind == "too_deep" and not issue.path:  # nested too deep, or containing itself: said of the value
        return issue.detail
    return f"must be a JSON value: {issue.message(field)}"


def const(value: Any, *, description: str | None = None) -> ConstSchema:
    """Exactly *value*, any JSON value (objects and arrays too), compared as JSON does.

    ``1`` equals ``1.0`` but not ``True``; objects are equal whatever their key
    order. A match parses to a copy of *value*. Exported as ``{"const": value}``.

    Raises:
        InvalidDefinitionError: *value* is not a JSON value, nests more than 100
            levels, or holds a number too large for a 64-bit float.

    """
    decl = "s.const()"
    checked = _declarable(decl, "value", value)
    problem = declared_value_problem(checked)
    if problem is not None:
        raise InvalidDefinitionError(decl, "value", problem)
    declared = copy_json(checked)  # the caller may change the value it passed
    return ConstSchema(declared, _check_description(decl, description))


def enum(values: Iterable[str | int | float | bool | None], *, description: str | None = None) -> EnumSchema:
    """One of *values*, JSON scalars, compared as JSON does. Messages list the allowed values.

    Raises:
        InvalidDefinitionError: *values* is empty, is a single string, holds a
            value that is not a JSON scalar (a number must fit a 64-bit float),
            or holds the same value twice.

    """
    decl = "s.enum()"
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise InvalidDefinitionError(
            decl, "values", f"must be a list of allowed values such as ['w', 'a'], got {_describe(values)}"
        )
    members = builtins.tuple(values)
    if not members:
        raise InvalidDefinitionError(decl, "values", "is empty; list at least one allowed value")
    seen: dict[str | None, int] = {}  # each value's index by its canonical text: not compared with each earlier one
    for index, member in enumerate(members):
        _check_scalar(decl, f"values[{index}]", member)
        earlier = seen.setdefault(canonical_json(member), index)
        if earlier != index:
            raise InvalidDefinitionError(
                decl, f"values[{index}]", f"repeats {members[earlier]!r}; list each allowed value once"
            )
    return EnumSchema(members, _check_description(decl, description))


def array(
    items: Schema,
    *,
    min_items: int | None = None,
    max_items: int | None = None,
    unique_items: bool = False,
    description: str | None = None,
) -> ArraySchema:
    """A list whose every item matches *items*. Messages give the failing item's index.

    With *unique_items*, no item may be JSON-equal to an earlier one (``1``
    repeats ``1.0``; ``true`` does not repeat ``1``); each repeat is reported at
    its index, naming the item it repeats. Exported as ``uniqueItems``.

    Raises:
        InvalidDefinitionError: *items* is not a schema, a bound is wrong, or
            *unique_items* is not a bool.

    """
    decl = "s.array()"
    item_schema = _check_schema(decl, "items", items)
    low = _check_count(decl, "min_items", min_items)
    high = _check_count(decl, "max_items", max_items)
    _check_order(decl, "min_items", low, "max_items", high)
    if not isinstance(unique_items, bool):
        raise InvalidDefinitionError(decl, "unique_items", f"must be True or False, got {_describe(unique_items)}")
    return ArraySchema(item_schema, low, high, unique_items, _check_description(decl, description))


def tuple(*items: Schema, description: str | None = None) -> TupleSchema:  # noqa: A001 - the combinator's public name
    """A list of exactly ``len(items)`` items, the one at each index matching the schema at that index.

    Exported as JSON Schema ``prefixItems`` with ``items: false``.

    Raises:
        InvalidDefinitionError: no item schema is given, or one is not a schema.

    """
    decl = "s.tuple()"
    if not items:
        raise InvalidDefinitionError(
            decl, "items", "is empty; give the schema of each item, such as s.tuple(s.number(), s.number())"
        )
    checked = builtins.tuple(_check_schema(decl, f"items[{index}]", item) for index, item in enumerate(items))
    return TupleSchema(checked, _check_description(decl, description))


def object(  # noqa: A001 - the combinator's public name
    fields: Mapping[str, Schema],
    *,
    extra: Extra = "forbid",
    min_properties: int | None = None,
    max_properties: int | None = None,
    description: str | None = None,
) -> ObjectSchema:
    """A dict with the named *fields*; a field is required unless wrapped in :func:`optional`.

    Args:
        fields: field name to schema, in the order they should be documented.
        extra: what to do with a field not in *fields*: ``"forbid"`` (the
            default) rejects it, suggesting the closest allowed name;
            ``"ignore"`` drops it from the parsed value; ``"allow"`` keeps it if
            it is a JSON value.
        min_properties: the fewest keys the object may have, counting every
            key given (JSON Schema's ``minProperties``).
        max_properties: the most keys the object may have.
        description: what the object is, for the model.

    Raises:
        InvalidDefinitionError: *fields* is not a mapping, a name is not a
            string, a value is not a schema, *extra* is not one of the three,
            or a key count is not a non-negative integer (or the two are crossed).

    """
    decl = "s.object()"
    if not isinstance(fields, Mapping):
        raise InvalidDefinitionError(
            decl, "fields", f"must be a mapping of field name to schema, got {type(fields).__name__}"
        )
    items: list[builtins.tuple[str, Schema]] = []
    for name, sub in fields.items():
        if not isinstance(name, str) or not unicode_ok(name):
            raise InvalidDefinitionError(
                decl, "fields", f"has a field named {_describe(name)}; field names must be strings"
            )
        # The plain text of a str subclass (a StrEnum member...): generated code quotes it with repr(),
        # and messages compare and write it, none of which may run the subclass's own code.
        plain = path_key(name)
        items.append((plain, _check_schema(decl, f"fields[{plain!r}]", sub, field_position=True)))
    if extra not in ("forbid", "ignore", "allow"):
        raise InvalidDefinitionError(decl, "extra", f'must be "forbid", "ignore" or "allow", got {_describe(extra)}')
    names = frozenset(name for name, _ in items)
    low, high = _check_counts(decl, min_properties, max_properties)
    return ObjectSchema(builtins.tuple(items), extra, _check_description(decl, description), names, low, high)


def _check_counts(decl: str, low: Any, high: Any) -> builtins.tuple[int | None, int | None]:
    checked_low = _check_count(decl, "min_properties", low)
    checked_high = _check_count(decl, "max_properties", high)
    _check_order(decl, "min_properties", checked_low, "max_properties", checked_high)
    return checked_low, checked_high


def record(
    values: Schema,
    *,
    min_properties: int | None = None,
    max_properties: int | None = None,
    description: str | None = None,
) -> RecordSchema:
    """A dict with any string keys, whose every value matches *values*.

    Args:
        values: the schema of every value.
        min_properties: the fewest keys allowed (JSON Schema's ``minProperties``).
        max_properties: the most keys allowed.
        description: what the object is, for the model.

    Raises:
        InvalidDefinitionError: *values* is not a schema, or a key count is not
            a non-negative integer (or the two are crossed).

    """
    decl = "s.record()"
    low, high = _check_counts(decl, min_properties, max_properties)
    return RecordSchema(_check_schema(decl, "values", values), _check_description(decl, description), low, high)


def union(*options: Schema, description: str | None = None) -> UnionSchema:
    """A value matching any of *options*; the first that matches parses it (JSON Schema ``anyOf``).

    When none matches, the message explains the option whose type fits the
    value best, or lists what each option expects.

    Raises:
        InvalidDefinitionError: no options, or an option is not a schema.

    """
    decl = "s.union()"
    if not options:
        raise InvalidDefinitionError(decl, "options", "is empty; pass at least one schema")
    checked = builtins.tuple(_check_schema(decl, f"options[{i}]", option) for i, option in enumerate(options))
    return UnionSchema(checked, _check_description(decl, description))


def nullable(schema: Schema, *, description: str | None = None) -> NullableSchema:
    """*schema*, or ``None``.

    Raises:
        InvalidDefinitionError: *schema* is not a schema.

    """
    decl = "s.nullable()"
    return NullableSchema(_check_schema(decl, "schema", schema), _check_description(decl, description))


def optional(schema: Schema, *, default: Any = MISSING, description: str | None = None) -> OptionalSchema:
    """Marks a field of :func:`object` that may be absent; *default*, if given, is filled in.

    The default must itself match *schema*, and is copied into each parsed
    value, so one call cannot change the next's. ``None`` is a default like
    any other: it must match *schema* (use :func:`nullable`).

    A default that does not match is found now but reported by what uses the
    schema first, which knows where the field is: ``define_tool`` names the
    tool and the field, ``Runtime`` the named schema, ``parse`` the field. A
    default under an ``s.ref`` is checked by the runtime that resolves it.

    A default may nest arrays and objects at most 100 levels deep, and its
    numbers must fit a 64-bit float: it is copied into every parsed value and
    exported in JSON Schema, and each would fail on a deeper or larger one.

    Raises:
        InvalidDefinitionError: *schema* is not a schema, or *default* is not a
            JSON value, nests too deeply, or holds a number too large for a float.

    """
    decl = "s.optional()"
    inner = _check_schema(decl, "schema", schema)
    issue = None
    if default is not MISSING:
        default = _declarable(decl, "default", default)
        # Checked before it is copied: the copy, like every later use, recurses as deep as it nests.
        problem = declared_value_problem(default)
        if problem is not None:
            raise InvalidDefinitionError(decl, "default", problem)
        default = copy_json(default)  # s.any() returned the caller's own value, which the caller may change
        if not inner.has_refs:
            ok, parsed, issues = _compile.closed_validator(inner).walk(default)  # checked once: see _declarable
            default, issue = (parsed, None) if ok else (default, issues[0])
    return OptionalSchema(inner, default, _check_description(decl, description), issue)


def any(*, description: str | None = None) -> AnySchema:  # noqa: A001 - the combinator's public name
    """Any JSON value (null, boolean, finite number, string, list, string-keyed dict), returned as is."""
    return AnySchema(_check_description("s.any()", description))


def ref(name: str, *, description: str | None = None) -> RefSchema:
    """The schema registered under *name* (e.g. ``"fs.path"``), resolved by the ``Runtime``.

    Named schemas come from ``Runtime(schemas={...})`` or from plugins; a
    runtime whose tools name a schema it does not have fails when it is built.

    Raises:
        InvalidDefinitionError: *name* does not follow the grammar of tool names (such as ``fs.path``).

    """
    decl = "s.ref()"
    return RefSchema(check_name(decl, "name", name, example="fs.path"), _check_description(decl, description))
