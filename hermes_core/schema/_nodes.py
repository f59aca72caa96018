"""Schema nodes: immutable declarations, their JSON Schema, and the issue-collecting walk.

Each node is a frozen dataclass. ``_collect`` is the authoritative check: it
walks a value, appends every :class:`~hermes_core._errors.Issue` it finds, and
returns the parsed value (or ``BAD``). The compiled fast path in
``_compile.py`` must accept exactly what ``_collect`` accepts; it only exists
because straight-line code is faster than this walk.

The compiler sits below the nodes and imports none of them: each node class
names its type in ``kind``, which the compiler dispatches on, reading the
node's attributes. :meth:`Schema.parse` calls the compiler directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any, ClassVar

from hermes_core._errors import ISSUES_MAX, Issue, IssueKind, SchemaError, TooManyIssues
from hermes_core._frozen import frozen
from hermes_core._names import suggest
from hermes_core.schema._compile import CLOSED_ENTRIES, closed_validator
from hermes_core.schema._patterns import Searcher
from hermes_core.schema._shared import (
    BAD,
    FORMATS,
    MISSING,
    Context,
    Extra,
    Path,
    as_json,
    check_json,
    copy_json,
    json_equal,
    json_key,
    key_issue,
    listing,
    multiple_ok,
    path_key,
    raised_issue,
    size_issue,
    type_name,
    unicode_ok,
    unique_issues,
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
]


class Schema:
    """The base of every schema node. Build nodes with the combinators (``s.string()``...), not directly.

    Every node is immutable and inspectable, has an optional ``description``
    (exported to JSON Schema, because the model reads it), and offers
    :meth:`parse` and :meth:`json_schema`.
    """

    __slots__ = ()
    description: str | None
    #: The node's type, one tag per node class (``"string"``, ``"object"``, ``"union"``...):
    #: what the compiler, which imports no node class, tells nodes apart by.
    kind: ClassVar[str]

    def parse(self, value: Any) -> Any:
        """Check *value* and return the parsed value.

        Objects come back as new dicts with defaults filled in; the input is
        never mutated. Integral floats parse to ``int`` where an integer is
        expected.

        Raises:
            SchemaError: listing every problem found, each with its path.
            InvalidDefinitionError: the schema holds a ``ref`` (named schemas are
                resolved by a ``Runtime``, not by a bare schema), or a default
                that does not match its field's schema.

        """
        # Runs on every parse (bench case 1a): the cache lookup and the guarded check inlined.
        try:
            check = CLOSED_ENTRIES[id(self)][1]
        except KeyError:
            check = closed_validator(self).entry
        issues: list[Issue] = []
        try:
            result = check(value, (), issues)
        except TooManyIssues as exc:  # checking stopped (see ISSUES_MAX); SchemaError keeps the first ones
            issues = exc.issues
        except Exception as exc:  # only the value's own code can raise: see raised_issue
            issues = [raised_issue(exc)]
        if issues:
            raise SchemaError(issues, subject="value")
        return result

    def json_schema(self, *, defs: Mapping[str, Schema] | None = None) -> dict[str, Any]:
        """The schema as JSON Schema (draft 2020-12).

        ``s.ref(name)`` becomes ``{"$ref": "#/$defs/<name>"}``. With *defs* (a
        mapping of name to schema), every named schema reached is written under
        ``$defs`` so the result stands alone.
        """
        out = self._json()
        if defs is not None:
            reached: dict[str, Any] = {}
            pending = list(self.ref_names())
            while pending:
                name = pending.pop(0)
                if name in reached or name not in defs:
                    continue
                reached[name] = defs[name]._json()
                pending.extend(defs[name].ref_names())
            if reached:
                out["$defs"] = dict(sorted(reached.items()))
        return out

    def ref_names(self) -> Iterator[str]:
        """Every name this schema refers to through ``s.ref``, directly or nested, in order."""
        for child in self.children():
            yield from child.ref_names()

    @property
    def has_refs(self) -> bool:
        """Whether the schema names another through ``s.ref``: only a runtime can then check values with it."""
        return next(self.ref_names(), None) is not None

    # -- what subclasses provide --------------------------------------------------------

    def walk(self) -> Iterator[Schema]:
        """This schema, then every schema it holds, depth first in declaration order.

        The one way the package visits a tree of nodes: a node's own schemas
        are its :meth:`children`. A :class:`LinkSchema` holds none (its target
        may reach back to it: :meth:`LinkSchema.follow` goes there), and a
        :class:`RefSchema` names a schema that a runtime resolves.
        """
        pending: list[Schema] = [self]
        while pending:
            node = pending.pop()
            yield node
            pending.extend(reversed(node.children()))

    # The names of the fields that hold schemas (a schema, or a tuple of them), in declaration order.
    _holds_schemas: ClassVar[tuple[str, ...]] = ()

    def children(self) -> tuple[Schema, ...]:
        """The schemas this one holds directly, in declaration order (none for a link or a ref: see :meth:`walk`)."""
        children: list[Schema] = []
        for name in self._holds_schemas:
            value = getattr(self, name)
            if isinstance(value, tuple):
                children.extend(value)
            else:
                children.append(value)
        return tuple(children)

    # How a node is written as JSON Schema: its "type" (None: no type keyword), then each
    # attribute that is set, under its keyword. Nodes with children override _json().
    _json_type: ClassVar[str | None] = None
    _keywords: ClassVar[tuple[tuple[str, str], ...]] = ()

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self._json_type is None else {"type": self._json_type}
        for attribute, keyword in self._keywords:
            value = getattr(self, attribute)
            if value is not None:
                out[keyword] = value
        return self._with_description(out)

    def _with_description(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.description is not None:
            out["description"] = self.description
        return out

    # A node of one JSON type says which, in words and as the Python types a value of it has;
    # a node that is not of one type (an enum, a union...) overrides expected() and _admits().
    _expects: ClassVar[str] = ""
    _holds: ClassVar[type | tuple[type, ...]] = ()

    def expected(self, ctx: Context | None = None) -> str:
        """What a matching value is, in words (``a string``, ``one of "w", "a"``), for messages."""
        return self._expects

    def _admits(self, value: Any, ctx: Context) -> bool:
        """Whether *value* has a JSON type the schema could accept (used to explain unions)."""
        return isinstance(value, self._holds)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        raise NotImplementedError

    def _type_issue(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        issues.append(Issue(path, "type", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        return BAD


@frozen
class StringSchema(Schema):
    """A string: valid Unicode, optionally bounded in length (code points), matched by a pattern, of a format."""

    kind = "string"

    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    description: str | None = None
    # Python's re for a pattern written in Python; RE2 for one imported from elsewhere (see _patterns).
    _regex: Searcher | None = field(default=None, repr=False, compare=False)

    _json_type = "string"
    _keywords = (
        ("min_length", "minLength"),
        ("max_length", "maxLength"),
        ("pattern", "pattern"),
        ("format", "format"),
    )
    _expects = "a string"
    _holds = str

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, str):
            return self._type_issue(value, path, issues, ctx)
        if not unicode_ok(value):
            issues.append(Issue(path, "encoding", "must be valid Unicode text, got a string with a lone surrogate"))
            return BAD
        bad = size_issue(issues, path, len(value), low=self.min_length, high=self.max_length, unit="character")
        if self._regex is not None and self._regex.search(value) is None:
            issues.append(Issue(path, "pattern", f"must match the pattern {as_json(self.pattern)}"))
            bad = True
        checked = FORMATS.get(self.format) if self.format is not None else None
        if checked is not None and not checked[0](value):
            issues.append(Issue(path, "pattern", f"must be {checked[1]}"))
            bad = True
        return BAD if bad else value


def _bound_issue(issues: list[Issue], path: Path, value: float, node: _Numeric) -> bool:
    """Append the issue for the first bound *value* misses (lower bounds first); True when one was added."""
    kind: IssueKind
    if node.minimum is not None and value < node.minimum:
        detail, kind = f"must be at least {as_json(node.minimum)}", "too_small"
    elif node.exclusive_minimum is not None and value <= node.exclusive_minimum:
        detail, kind = f"must be greater than {as_json(node.exclusive_minimum)}", "too_small"
    elif node.maximum is not None and value > node.maximum:
        detail, kind = f"must be at most {as_json(node.maximum)}", "too_big"
    elif node.exclusive_maximum is not None and value >= node.exclusive_maximum:
        detail, kind = f"must be less than {as_json(node.exclusive_maximum)}", "too_big"
    else:
        return False
    issues.append(Issue(path, kind, detail))
    return True


@frozen
class _Numeric(Schema):
    """Shared by integer and number: bounds (inclusive and exclusive) and a step, as JSON Schema has them."""

    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = None
    exclusive_maximum: int | float | None = None
    multiple_of: int | float | None = None
    description: str | None = None

    _keywords = (
        ("minimum", "minimum"),
        ("maximum", "maximum"),
        ("exclusive_minimum", "exclusiveMinimum"),
        ("exclusive_maximum", "exclusiveMaximum"),
        ("multiple_of", "multipleOf"),
    )

    def _admits(self, value: Any, ctx: Context) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    def _number(self, value: Any) -> Any:
        """*value* as the number it parses to, or ``BAD`` if it has the wrong type."""
        raise NotImplementedError

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        number = self._number(value)
        if number is BAD:
            return self._type_issue(value, path, issues, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            issues.append(Issue(path, "type", f"must be a finite number, got {type_name(value)}"))
            return BAD
        bad = _bound_issue(issues, path, number, self)
        if self.multiple_of is not None and not multiple_ok(number, self.multiple_of):
            issues.append(Issue(path, "invalid", f"must be a multiple of {as_json(self.multiple_of)}"))
            bad = True
        return BAD if bad else number


@frozen
class IntegerSchema(_Numeric):
    """An integer (never a bool). An integral float such as ``1.0`` parses to ``int``."""

    kind = "integer"

    _json_type = "integer"
    _expects = "an integer"

    def _number(self, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return BAD
        return int(value)  # a subclass becomes the plain int, which is then both checked and returned


@frozen
class NumberSchema(_Numeric):
    """A finite number, integer or float (never a bool, NaN or an infinity)."""

    kind = "number"

    _json_type = "number"
    _expects = "a number"

    def _number(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return BAD
        return value


@frozen
class BooleanSchema(Schema):
    """``true`` or ``false``."""

    kind = "boolean"

    description: str | None = None

    _json_type = "boolean"

    _expects = "a boolean"
    _holds = bool

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if isinstance(value, bool):
            return value
        return self._type_issue(value, path, issues, ctx)


@frozen
class NullSchema(Schema):
    """``null`` (``None``)."""

    kind = "null"

    description: str | None = None

    _json_type = "null"

    _expects = "null"
    _holds = type(None)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if value is None:
            return None
        return self._type_issue(value, path, issues, ctx)


def _scalar_kind(value: Any) -> str | None:
    """The JSON kind of a scalar (``string``, ``number``, ``boolean``, ``null``), else None."""
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return "number"
    return None


@frozen
class EnumSchema(Schema):
    """One of a fixed set of JSON scalars, compared as JSON compares them. ``literal`` is an enum of one."""

    kind = "enum"

    values: tuple[str | int | float | bool | None, ...]
    description: str | None = None

    def _json(self) -> dict[str, Any]:
        if len(self.values) == 1:
            return self._with_description({"const": self.values[0]})
        return self._with_description({"enum": list(self.values)})

    def expected(self, ctx: Context | None = None) -> str:
        if len(self.values) == 1:
            return as_json(self.values[0])
        return "one of " + listing([as_json(v) for v in self.values])

    def _admits(self, value: Any, ctx: Context) -> bool:
        kind = _scalar_kind(value)
        return kind is not None and any(_scalar_kind(v) == kind for v in self.values)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        for allowed in self.values:
            if json_equal(value, allowed):
                return allowed
        detail = f"must be {self.expected(ctx)}"
        if not self._admits(value, ctx):
            detail += f", got {type_name(value)}"
        issues.append(Issue(path, "enum", detail))
        return BAD


@frozen
class ConstSchema(Schema):
    """Exactly one JSON value, scalar or not, compared as JSON compares (objects regardless of key order).

    A match parses to a copy of the declared value.
    """

    kind = "const"

    value: Any
    description: str | None = None
    _key: Any = field(default=None, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"const": copy_json(self.value)})

    def expected(self, ctx: Context | None = None) -> str:
        return as_json(self.value)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return _json_kind(value) == _json_kind(self.value)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if json_key(value) == self._key:
            return copy_json(self.value)
        detail = f"must be {self.expected(ctx)}"
        if not self._admits(value, ctx):
            detail += f", got {type_name(value)}"
        issues.append(Issue(path, "enum", detail))
        return BAD


def _json_kind(value: Any) -> str | None:
    """The JSON kind of any value (a scalar's, ``array`` or ``object``), else None."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return _scalar_kind(value)


@frozen
class AnySchema(Schema):
    """Any JSON value: null, booleans, finite numbers, valid strings, lists and string-keyed dicts.

    The value is returned as it is, not copied. Sets, tuples, bytes, NaN and
    reference cycles are rejected.
    """

    kind = "any"

    description: str | None = None

    _expects = "a JSON value"
    _holds = object

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        before = len(issues)
        check_json(value, path, issues, ctx)
        return value if len(issues) == before else BAD


@frozen
class ArraySchema(Schema):
    """A list whose every item matches ``items``, optionally bounded in length, optionally of unique items.

    Uniqueness is JSON equality of the items as given (``1`` repeats ``1.0``,
    ``true`` does not repeat ``1``), as JSON Schema's ``uniqueItems``; it is
    checked once every item matches.
    """

    kind = "array"

    items: Schema
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    description: str | None = None

    _holds_schemas = ("items",)

    _json_type = "array"
    _keywords = (("min_items", "minItems"), ("max_items", "maxItems"))

    def _json(self) -> dict[str, Any]:
        out = {"type": "array", "items": self.items._json(), **Schema._json(self)}
        if self.unique_items:
            out["uniqueItems"] = True
        return out

    _expects = "an array"
    _holds = list

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, list):
            return self._type_issue(value, path, issues, ctx)
        bad = size_issue(issues, path, len(value), low=self.min_items, high=self.max_items, unit="item")
        before = len(issues)
        out = []
        for index, item in enumerate(value):
            parsed = self.items._collect(item, (*path, index), issues, ctx)
            bad = bad or parsed is BAD
            if parsed is BAD and len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
            out.append(parsed)
        if self.unique_items and len(issues) == before and unique_issues(value, path, issues):
            bad = True
        return BAD if bad else out


@frozen
class TupleSchema(Schema):
    """A list of a fixed length whose item at each index matches the schema at that index."""

    kind = "tuple"

    items: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("items",)

    def _json(self) -> dict[str, Any]:
        size = len(self.items)
        out = {
            "type": "array",
            "prefixItems": [item._json() for item in self.items],
            "items": False,
            "minItems": size,
            "maxItems": size,
        }
        return self._with_description(out)

    _expects = "an array"
    _holds = list

    def expected(self, ctx: Context | None = None) -> str:
        size = len(self.items)
        return f"an array of {size} item{'' if size == 1 else 's'}"

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, list):
            return self._type_issue(value, path, issues, ctx)
        size = len(self.items)
        bad = size_issue(issues, path, len(value), low=size, high=size, unit="item")
        out = []
        for index, (item, schema) in enumerate(zip(value, self.items, strict=False)):
            parsed = schema._collect(item, (*path, index), issues, ctx)
            bad = bad or parsed is BAD
            if parsed is BAD and len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
            out.append(parsed)
        return BAD if bad else out


@frozen
class OptionalSchema(Schema):
    """Marks an object field that may be absent; ``default``, if given, is filled in when it is.

    Only meaningful as a value in ``s.object({...})``.
    """

    kind = "optional"

    schema: Schema
    default: Any = MISSING
    description: str | None = None
    #: Why the default does not match ``schema``, found by ``s.optional()``; raised by whatever
    #: uses the schema first (``define_tool`` names the tool and field, ``parse`` the field).
    default_issue: Issue | None = field(default=None, repr=False, compare=False)

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        out = self.schema._json()
        if self.default is not MISSING:
            out["default"] = copy_json(self.default)  # the caller may change the exported schema
        return self._with_description(out)

    def expected(self, ctx: Context | None = None) -> str:
        return self.schema.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.schema._collect(value, path, issues, ctx)


@frozen
class _Dict(Schema):
    """Shared by object and record: a dict, checked entry by entry into a new dict."""

    _expects = "an object"
    _holds = dict

    def _entries(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: Context, out: dict[str, Any]
    ) -> bool:
        """Check *value*'s entries, filling *out*; True when an issue was found."""
        raise NotImplementedError

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, dict):
            return self._type_issue(value, path, issues, ctx)
        out: dict[str, Any] = {}
        return BAD if self._entries(value, path, issues, ctx, out) else out


def _count_keywords(out: dict[str, Any], low: int | None, high: int | None) -> None:
    if low is not None:
        out["minProperties"] = low
    if high is not None:
        out["maxProperties"] = high


@frozen
class ObjectSchema(_Dict):
    """A dict with named fields.

    Unknown keys are rejected (``extra="forbid"``), dropped (``"ignore"``) or
    kept if they are JSON values (``"allow"``).
    """

    kind = "object"

    field_items: tuple[tuple[str, Schema], ...]
    extra: Extra | Schema = "forbid"
    description: str | None = None
    _names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    min_properties: int | None = None
    max_properties: int | None = None

    @property
    def fields(self) -> Mapping[str, Schema]:
        """The fields, name to schema, in declaration order (read-only)."""
        return MappingProxyType(dict(self.field_items))

    @property
    def required(self) -> tuple[str, ...]:
        """The names of the fields that must be present, in declaration order."""
        return tuple(name for name, sub in self.field_items if not isinstance(sub, OptionalSchema))

    def children(self) -> tuple[Schema, ...]:
        fields = tuple(sub for _, sub in self.field_items)
        return (*fields, self.extra) if isinstance(self.extra, Schema) else fields

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {name: sub._json() for name, sub in self.field_items},
        }
        if self.required:
            out["required"] = list(self.required)
        if self.extra == "forbid":
            out["additionalProperties"] = False
        elif isinstance(self.extra, Schema):
            out["additionalProperties"] = self.extra._json()
        _count_keywords(out, self.min_properties, self.max_properties)
        return self._with_description(out)

    def _entries(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: Context, out: dict[str, Any]
    ) -> bool:
        bad = False
        for name, sub in self.field_items:
            if name in value:
                parsed = sub._collect(value[name], (*path, name), issues, ctx)
                bad = bad or parsed is BAD
                out[name] = parsed
            elif isinstance(sub, OptionalSchema):
                if sub.default is not MISSING:
                    out[name] = copy_json(sub.default)
            else:
                issues.append(Issue((*path, name), "missing", f"is required ({sub.expected(ctx)})"))
                bad = True
            if bad and len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return self._extras(value, path, issues, ctx, out) or bad

    def _count_issue(self, value: dict[Any, Any], path: Path, issues: list[Issue]) -> bool:
        """The min/max properties check, on the keys as given; True when an issue was added."""
        return size_issue(issues, path, len(value), low=self.min_properties, high=self.max_properties, unit="property")

    def _extras(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: Context, out: dict[str, Any]
    ) -> bool:
        """Check the keys that are not fields, keeping them in *out* under ``extra="allow"``; True on an issue."""
        before = len(issues)
        self._count_issue(value, path, issues)
        for key, item in value.items():
            if key in self._names:
                continue
            if key_issue(key, path, issues):
                pass
            elif self.extra == "forbid":
                plain = path_key(key)  # for the issue and the suggestion, which then run none of the key's code
                # A suggestion costs 20-50 us: past the first issues of an input (more than a message lists),
                # none is looked for, so 300,000 unexpected keys cost a fraction of a second, not minutes.
                detail = self._unexpected_detail(plain) if len(issues) < SUGGESTED_ISSUES else _UNEXPECTED
                issues.append(Issue((*path, plain), "unexpected", detail))
            elif self.extra == "allow":
                check_json(item, (*path, path_key(key)), issues, ctx)
                out[key] = item
            elif isinstance(self.extra, Schema):
                out[key] = self.extra._collect(item, (*path, path_key(key)), issues, ctx)
            if len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return len(issues) > before

    def _unexpected_detail(self, key: str) -> str:
        names = [name for name, _ in self.field_items]
        if not names:
            return "is an unexpected field; this object takes no fields"
        close = suggest(key, names, limit=1)
        if close:
            return f"is an unexpected field; did you mean {as_json(close[0])}?"
        return "is an unexpected field; allowed fields are " + listing([as_json(n) for n in names])


@frozen
class RecordSchema(_Dict):
    """A dict with any string keys, whose every value matches ``values``."""

    kind = "record"

    values: Schema
    description: str | None = None
    min_properties: int | None = None
    max_properties: int | None = None

    _holds_schemas = ("values",)

    def _json(self) -> dict[str, Any]:
        out = {"type": "object", "additionalProperties": self.values._json()}
        _count_keywords(out, self.min_properties, self.max_properties)
        return self._with_description(out)

    def _entries(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: Context, out: dict[str, Any]
    ) -> bool:
        bad = size_issue(issues, path, len(value), low=self.min_properties, high=self.max_properties, unit="property")
        for key, item in value.items():
            if key_issue(key, path, issues):
                bad = True
            else:
                parsed = self.values._collect(item, (*path, path_key(key)), issues, ctx)
                bad = bad or parsed is BAD
                out[key] = parsed
            if bad and len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return bad


@frozen
class _Alternatives(Schema):
    """Shared by union and one-of: ``options``, each tried on the value with its own issues list."""

    options: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("options",)
    _keyword: ClassVar[str] = ""  # "anyOf" or "oneOf"

    def _json(self) -> dict[str, Any]:
        return self._with_description({self._keyword: [option._json() for option in self.options]})

    def _admits(self, value: Any, ctx: Context) -> bool:
        return any(option._admits(value, ctx) for option in self.options)

    @staticmethod
    def _attempt(option: Schema, value: Any, path: Path, ctx: Context) -> tuple[Any, list[Issue]]:
        """*option*'s result for *value* and its issues; an option that stopped (too many issues) failed."""
        found: list[Issue] = []
        try:
            return option._collect(value, path, found, ctx), found
        except TooManyIssues:  # its first issues stay in found
            return BAD, found

    def _unmatched(self, best: list[Issue] | None, value: Any, path: Path, issues: list[Issue], ctx: Context) -> None:
        """Why no option accepted *value*: the closest option's own issues, else the types that were wanted."""
        if best is None:
            issues.append(Issue(path, "union", f"must be {_either(self.options, ctx)}, got {type_name(value)}"))
            return
        issues.extend(best)
        if len(issues) > ISSUES_MAX:
            raise TooManyIssues(issues)


@frozen
class UnionSchema(_Alternatives):
    """A value matching at least one of ``options``; the first option that matches parses it."""

    kind = "union"

    _keyword = "anyOf"

    def expected(self, ctx: Context | None = None) -> str:
        return _either(self.options, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        # The first option that accepts wins. When none does, explain the option
        # whose type fits the value best: its own issues say more than "no match".
        best: list[Issue] | None = None
        for option in self.options:
            parsed, found = self._attempt(option, value, path, ctx)
            if parsed is not BAD:
                return parsed
            best = _closer(best, option, found, value, ctx)
        self._unmatched(best, value, path, issues, ctx)
        return BAD


def _either(options: tuple[Schema, ...], ctx: Context | None) -> str:
    """What a value matching one of *options* is, in words: ``a string or an integer``."""
    return " or ".join(dict.fromkeys(option.expected(ctx) for option in options))


def _closer(
    best: list[Issue] | None, option: Schema, found: list[Issue], value: Any, ctx: Context
) -> list[Issue] | None:
    """The issues that explain a value no option accepted: those of the option of its type with the fewest."""
    if option._admits(value, ctx) and (best is None or len(found) < len(best)):
        return found
    return best


@frozen
class TypelessSchema(UnionSchema):
    """A schema without ``type`` imported from JSON Schema: any value, checked by the keywords of its type.

    ``options`` holds one node per JSON type; JSON Schema's keywords each apply
    to values of one type only, so ``{"minimum": 1}`` accepts any string.
    """

    def expected(self, ctx: Context | None = None) -> str:
        return "any JSON value"


@frozen
class NullableSchema(Schema):
    """``schema``, or ``null``."""

    kind = "nullable"

    schema: Schema
    description: str | None = None

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"anyOf": [self.schema._json(), {"type": "null"}]})

    def expected(self, ctx: Context | None = None) -> str:
        return f"{self.schema.expected(ctx)} or null"

    def _admits(self, value: Any, ctx: Context) -> bool:
        return value is None or self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if value is None:
            return None
        if self.schema._admits(value, ctx):
            return self.schema._collect(value, path, issues, ctx)
        issues.append(Issue(path, "type", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        return BAD


@frozen
class RefSchema(Schema):
    """A named schema, resolved by the ``Runtime`` from the schemas it was given."""

    kind = "ref"

    name: str
    description: str | None = None

    def ref_names(self) -> Iterator[str]:
        yield self.name

    def _json(self) -> dict[str, Any]:
        return self._with_description({"$ref": f"#/$defs/{self.name}"})

    def expected(self, ctx: Context | None = None) -> str:
        if ctx is not None and self.name in ctx.refs:
            target: Schema = ctx.refs[self.name]
            return target.expected(ctx)
        return f'a "{self.name}"'

    def _admits(self, value: Any, ctx: Context) -> bool:
        target: Schema = ctx.refs[self.name]
        return target._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return ctx.refs[self.name]._collect(value, path, issues, ctx)


# -- the nodes JSON Schema import adds (see _import.py): checked by their walk, not compiled inline --


@frozen
class NeverSchema(Schema):
    """No value: JSON Schema's ``false`` (a property that must be absent, an array that takes no more items)."""

    kind = "never"

    description: str | None = None

    def _json(self) -> dict[str, Any]:
        return self._with_description({"not": {}})

    _expects = "nothing"

    def _admits(self, value: Any, ctx: Context) -> bool:
        return False

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        issues.append(Issue(path, "unexpected", "is not allowed here"))
        return BAD


@frozen
class PrefixArraySchema(Schema):
    """A list whose first items match ``prefix`` one by one and the rest ``rest`` (JSON Schema's ``prefixItems``).

    Shorter lists are allowed unless ``min_items`` says otherwise; ``rest`` is a
    ``NeverSchema`` when no further items are allowed.
    """

    kind = "prefix_array"

    prefix: tuple[Schema, ...]
    rest: Schema
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    description: str | None = None

    _holds_schemas = ("prefix", "rest")

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "prefixItems": [item._json() for item in self.prefix]}
        out["items"] = False if isinstance(self.rest, NeverSchema) else self.rest._json()
        for attribute, keyword in (("min_items", "minItems"), ("max_items", "maxItems")):
            if getattr(self, attribute) is not None:
                out[keyword] = getattr(self, attribute)
        if self.unique_items:
            out["uniqueItems"] = True
        return self._with_description(out)

    _expects = "an array"
    _holds = list

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, list):
            return self._type_issue(value, path, issues, ctx)
        bad = size_issue(issues, path, len(value), low=self.min_items, high=self.max_items, unit="item")
        before = len(issues)
        out = []
        for index, item in enumerate(value):
            schema = self.prefix[index] if index < len(self.prefix) else self.rest
            parsed = schema._collect(item, (*path, index), issues, ctx)
            bad = bad or parsed is BAD
            if parsed is BAD and len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
            out.append(parsed)
        if self.unique_items and len(issues) == before and unique_issues(value, path, issues):
            bad = True
        return BAD if bad else out


@frozen
class PatternPropertiesSchema(Schema):
    """An object whose keys that match a pattern also match that pattern's schema (``patternProperties``).

    ``base`` checks the declared fields and the keys no pattern matches (its
    extra keys); each key a pattern matches, declared or not, is checked by
    every matching pattern's schema too. The key count is checked here, on
    every key given.
    """

    kind = "pattern_properties"

    base: Schema
    patterns: tuple[tuple[str, Schema], ...]
    min_properties: int | None = None
    max_properties: int | None = None
    description: str | None = None
    _regexes: tuple[Searcher, ...] = field(default=(), repr=False, compare=False)

    def children(self) -> tuple[Schema, ...]:
        return (self.base, *(schema for _, schema in self.patterns))

    def _json(self) -> dict[str, Any]:
        out = self.base._json()
        out["patternProperties"] = {pattern: schema._json() for pattern, schema in self.patterns}
        _count_keywords(out, self.min_properties, self.max_properties)
        return self._with_description(out)

    _expects = "an object"
    _holds = dict

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, dict):
            return self.base._collect(value, path, issues, ctx)
        before = len(issues)
        size_issue(issues, path, len(value), low=self.min_properties, high=self.max_properties, unit="property")
        declared = self.base._names if isinstance(self.base, ObjectSchema) else frozenset()
        matched: dict[str, list[Schema]] = {}
        for key in value:
            if isinstance(key, str):
                hits = [
                    schema for regex, (_, schema) in zip(self._regexes, self.patterns, strict=True) if regex.search(key)
                ]
                if hits:
                    matched[key] = hits
        rest = {key: item for key, item in value.items() if key not in matched or key in declared}
        out = self.base._collect(rest, path, issues, ctx)
        for key, hits in matched.items():
            parsed = [schema._collect(value[key], (*path, path_key(key)), issues, ctx) for schema in hits]
            if out is not BAD and key not in declared:
                out[key] = parsed[0]
            if len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return BAD if out is BAD or len(issues) > before else out


#: How many issues an input may have before an unexpected field's issue stops looking for a "did you mean".
SUGGESTED_ISSUES = 100
_UNEXPECTED = "is an unexpected field"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


@frozen
class AllOfSchema(Schema):
    """A value matching every one of ``parts`` (JSON Schema's ``allOf``); every part's issues are reported.

    The parsed value is the first part's, with the keys every other part
    adds to an object (its defaults) merged in.
    """

    kind = "all_of"

    parts: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("parts",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"allOf": [part._json() for part in self.parts]})

    def expected(self, ctx: Context | None = None) -> str:
        return " and ".join(dict.fromkeys(part.expected(ctx) for part in self.parts))

    def _admits(self, value: Any, ctx: Context) -> bool:
        return all(part._admits(value, ctx) for part in self.parts)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        before = len(issues)
        results = [part._collect(value, path, issues, ctx) for part in self.parts]
        if len(issues) > before or any(result is BAD for result in results):
            return BAD
        first = results[0]
        if isinstance(first, dict):
            for other in results[1:]:
                if isinstance(other, dict):
                    first = {**other, **first}
        return first


@frozen
class OneOfSchema(_Alternatives):
    """A value matching exactly one of ``options`` (JSON Schema's ``oneOf``)."""

    kind = "one_of"

    _keyword = "oneOf"

    def expected(self, ctx: Context | None = None) -> str:
        return "exactly one of: " + "; ".join(dict.fromkeys(option.expected(ctx) for option in self.options))

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        matched: list[int] = []
        parsed: Any = BAD
        best: list[Issue] | None = None
        for index, option in enumerate(self.options):
            result, found = self._attempt(option, value, path, ctx)
            if result is not BAD and not found:
                matched.append(index)
                parsed = result
            else:
                best = _closer(best, option, found, value, ctx)
        if len(matched) == 1:
            return parsed
        if matched:
            which = " and ".join(_ordinal(index + 1) for index in matched[:2])
            detail = f"must match exactly one of {len(self.options)} alternatives, but matches the {which}"
            issues.append(Issue(path, "union", detail))
        else:
            self._unmatched(best, value, path, issues, ctx)
        return BAD


# The links whose expected() or _admits() is being worked out: a schema that reaches itself only
# through unions would otherwise recurse forever (the value's own depth bounds _collect).
_LINKS_IN_PROGRESS: set[int] = set()


@frozen
class LinkSchema(Schema):
    """A local ``$ref`` of an imported document: ``target`` is the node at ``pointer``, set once when linked.

    It holds no child (``target`` may reach back to it), so :meth:`Schema.walk`
    stops here; the checks go on through :meth:`follow`.
    """

    kind = "link"

    pointer: str
    description: str | None = None
    target: Schema | None = field(default=None, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"$ref": self.pointer})

    def follow(self) -> Schema:
        """The node this link stands for (``target``), which every check and walk goes on to.

        Raises:
            RuntimeError: the link was never linked (the importer links every node it returns).
        """
        if self.target is None:  # pragma: no cover - the importer links every node it returns
            raise RuntimeError(f"the $ref {self.pointer!r} was never linked")
        return self.target

    def expected(self, ctx: Context | None = None) -> str:
        said: str = self._once(lambda target: target.expected(ctx), "a value")
        return said

    def _admits(self, value: Any, ctx: Context) -> bool:
        admits: bool = self._once(lambda target: target._admits(value, ctx), True)
        return admits

    def _once(self, ask: Callable[[Schema], Any], again: Any) -> Any:
        """*ask* of the target, or *again* when this link is already being asked (it reached itself)."""
        if id(self) in _LINKS_IN_PROGRESS:
            return again
        _LINKS_IN_PROGRESS.add(id(self))
        try:
            return ask(self.follow())
        finally:
            _LINKS_IN_PROGRESS.discard(id(self))

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.follow()._collect(value, path, issues, ctx)


@frozen
class Unsupported:
    """A part of an imported JSON Schema document that is not checked.

    Attributes:
        pointer: where, as a JSON pointer into the document (``/properties/when``).
        keyword: the keyword (``if``, ``patternProperties``, ``default``...).
        reason: what is wrong and what was done instead, in words that follow
            "<keyword> at <pointer>" (``str()`` joins them).
    """

    pointer: str
    keyword: str
    reason: str

    def __str__(self) -> str:
        where = self.pointer or "the root"
        return f"{self.keyword} at {where} {self.reason}"


@frozen
class ImportedSchema(Schema):
    """A schema made by :func:`~hermes_core.schema.from_json_schema` from a JSON Schema document.

    It checks values as ``root`` does. :meth:`json_schema` returns the
    document it came from (a copy), so whatever was not converted still
    reaches the reader; objects that import closed also say
    ``additionalProperties: false`` there.

    Attributes:
        root: the converted schema.
        document: the JSON Schema exported (the original, with the closed objects marked).
        unsupported: what is not checked: keywords not supported, refs that
            cannot be followed, defaults that do not match their schema (not applied).
    """

    kind = "imported"

    root: Schema
    document: Any = field(repr=False)
    unsupported: tuple[Unsupported, ...] = ()
    description: str | None = None

    _holds_schemas = ("root",)

    def json_schema(self, *, defs: Mapping[str, Schema] | None = None) -> dict[str, Any]:
        return self._json()

    def _json(self) -> dict[str, Any]:
        exported = copy_json(self.document)
        return exported if isinstance(exported, dict) else ({} if exported else {"not": {}})

    def expected(self, ctx: Context | None = None) -> str:
        return self.root.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.root._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.root._collect(value, path, issues, ctx)
