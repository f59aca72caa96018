"""Schema nodes: immutable declarations, their JSON Schema, and the issue-collecting walk.

Each node is a frozen dataclass. ``_collect`` is the authoritative check: it
walks a value, appends every :class:`~hermes_core.errors.Issue` it finds, and
returns the parsed value (or ``_BAD``). The compiled fast path in
``_compile.py`` must accept exactly what ``_collect`` accepts; it only exists
because straight-line code is faster than this walk.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from hermes_core.errors import Issue, IssueKind, SchemaError

if TYPE_CHECKING:
    from hermes_core.schema._compile import Validator

Path = tuple[str | int, ...]
Extra = Literal["forbid", "ignore", "allow"]

#: How many allowed values or fields a message spells out before it says "...".
_MAX_LISTED = 20


class _Bad:
    """The marker a failed ``_collect`` returns in place of a value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<invalid>"


_BAD: Any = _Bad()


class _Missing:
    """The marker for "no default given" and "field absent"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(slots=True)
class _Context:
    """What a walk needs besides the value: named schemas, and the containers it is inside."""

    refs: Mapping[str, Schema]
    active: set[int] = field(default_factory=set)


_TYPE_NAMES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    str: "string",
    list: "array",
    dict: "object",
}


def type_name(value: object) -> str:
    """The JSON name of *value*'s type (``integer``, ``array``...), or its Python name if it has none."""
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if value in (math.inf, -math.inf):
            return "infinity"
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def unicode_ok(text: str) -> bool:
    """True when *text* encodes to UTF-8, that is, holds no lone surrogate."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def as_json(value: object) -> str:
    """*value* written as JSON, for messages (allowed values, never received ones)."""
    return json.dumps(value, ensure_ascii=False)


def json_equal(a: object, b: object) -> bool:
    """JSON equality: ``1 == 1.0``, but ``True != 1``, as JSON Schema's ``enum`` and ``const``."""
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return False


def _listing(values: list[str]) -> str:
    shown = ", ".join(values[:_MAX_LISTED])
    return shown + (", ..." if len(values) > _MAX_LISTED else "")


def _unreadable(exc: Exception) -> Issue:
    """The issue for a value that raised while it was checked: parse raises nothing but ``SchemaError``."""
    return Issue((), "type", f"must be a JSON value; checking it raised {type(exc).__name__}")


class Schema:
    """The base of every schema node. Build nodes with the combinators (``s.string()``...), not directly.

    Every node is immutable and inspectable, has an optional ``description``
    (exported to JSON Schema, because the model reads it), and offers
    :meth:`parse` and :meth:`json_schema`.
    """

    __slots__ = ()
    description: str | None

    def parse(self, value: Any) -> Any:
        """Check *value* and return the parsed value.

        Objects come back as new dicts with defaults filled in; the input is
        never mutated. Integral floats parse to ``int`` where an integer is
        expected.

        Raises:
            SchemaError: listing every problem found, each with its path.
            InvalidDefinitionError: the schema holds a ``ref`` (named schemas are
                resolved by a ``Runtime``, not by a bare schema).

        """
        validator: Validator | None = getattr(self, "_validator", None)
        if validator is None:
            from hermes_core.schema._compile import closed_validator  # noqa: PLC0415 - it imports this module

            validator = closed_validator(self)
        result, issues = validator.check(value)
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
        for child in self._children():
            yield from child.ref_names()

    # -- what subclasses provide --------------------------------------------------------

    def _children(self) -> tuple[Schema, ...]:
        return ()

    def _json(self) -> dict[str, Any]:
        raise NotImplementedError

    def _with_description(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.description is not None:
            out["description"] = self.description
        return out

    def expected(self, ctx: _Context | None = None) -> str:
        """What a matching value is, in words (``a string``, ``one of "w", "a"``), for messages."""
        raise NotImplementedError

    def _admits(self, value: Any, ctx: _Context) -> bool:
        """Whether *value* has a JSON type the schema could accept (used to explain unions)."""
        raise NotImplementedError

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        raise NotImplementedError

    def _type_issue(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        issues.append(Issue(path, "type", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        return _BAD


def _size_issue(issues: list[Issue], path: Path, size: int, *, low: int | None, high: int | None, unit: str) -> bool:
    """Append a too_small/too_big issue for a length or count; True when one was added."""
    kind: IssueKind
    if low is not None and size < low:
        kind, word, bound = "too_small", "least", low
    elif high is not None and size > high:
        kind, word, bound = "too_big", "most", high
    else:
        return False
    units = unit if bound == 1 else unit + "s"
    issues.append(Issue(path, kind, f"must have at {word} {bound} {units}, got {size}"))
    return True


@dataclass(frozen=True, slots=True)
class StringSchema(Schema):
    """A string: valid Unicode, optionally bounded in length (code points) and matched by a pattern."""

    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    description: str | None = None
    _regex: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.pattern is not None:
            out["pattern"] = self.pattern
        return self._with_description(out)

    def expected(self, ctx: _Context | None = None) -> str:
        return "a string"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, str)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if not isinstance(value, str):
            return self._type_issue(value, path, issues, ctx)
        if not unicode_ok(value):
            issues.append(Issue(path, "encoding", "must be valid Unicode text, got a string with a lone surrogate"))
            return _BAD
        bad = _size_issue(issues, path, len(value), low=self.min_length, high=self.max_length, unit="character")
        if self._regex is not None and self._regex.search(value) is None:
            issues.append(Issue(path, "pattern", f"must match the pattern {as_json(self.pattern)}"))
            bad = True
        return _BAD if bad else value


def _bound_issue(issues: list[Issue], path: Path, value: float, low: float | None, high: float | None) -> bool:
    if low is not None and value < low:
        issues.append(Issue(path, "too_small", f"must be at least {as_json(low)}"))
        return True
    if high is not None and value > high:
        issues.append(Issue(path, "too_big", f"must be at most {as_json(high)}"))
        return True
    return False


class _Numeric(Schema):
    """Shared by integer and number: inclusive bounds, exported as JSON Schema's minimum and maximum."""

    __slots__ = ()
    _json_type: ClassVar[str]
    minimum: int | float | None
    maximum: int | float | None

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self._json_type}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return self._with_description(out)

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class IntegerSchema(_Numeric):
    """An integer (never a bool). An integral float such as ``1.0`` parses to ``int``."""

    _json_type = "integer"
    minimum: int | float | None = None
    maximum: int | float | None = None
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def expected(self, ctx: _Context | None = None) -> str:
        return "an integer"

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if isinstance(value, bool):
            return self._type_issue(value, path, issues, ctx)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        elif not isinstance(value, int):
            return self._type_issue(value, path, issues, ctx)
        value = int(value)  # a subclass becomes the plain int, which is then both checked and returned
        if _bound_issue(issues, path, value, self.minimum, self.maximum):
            return _BAD
        return value


@dataclass(frozen=True, slots=True)
class NumberSchema(_Numeric):
    """A finite number, integer or float (never a bool, NaN or an infinity)."""

    _json_type = "number"
    minimum: int | float | None = None
    maximum: int | float | None = None
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def expected(self, ctx: _Context | None = None) -> str:
        return "a number"

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return self._type_issue(value, path, issues, ctx)
        if isinstance(value, float) and not math.isfinite(value):
            issues.append(Issue(path, "type", f"must be a finite number, got {type_name(value)}"))
            return _BAD
        if _bound_issue(issues, path, value, self.minimum, self.maximum):
            return _BAD
        return value


@dataclass(frozen=True, slots=True)
class BooleanSchema(Schema):
    """``true`` or ``false``."""

    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"type": "boolean"})

    def expected(self, ctx: _Context | None = None) -> str:
        return "a boolean"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, bool)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if isinstance(value, bool):
            return value
        return self._type_issue(value, path, issues, ctx)


@dataclass(frozen=True, slots=True)
class NullSchema(Schema):
    """``null`` (``None``)."""

    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"type": "null"})

    def expected(self, ctx: _Context | None = None) -> str:
        return "null"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return value is None

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
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


@dataclass(frozen=True, slots=True)
class EnumSchema(Schema):
    """One of a fixed set of JSON scalars, compared as JSON compares them. ``literal`` is an enum of one."""

    values: tuple[str | int | float | bool | None, ...]
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        if len(self.values) == 1:
            return self._with_description({"const": self.values[0]})
        return self._with_description({"enum": list(self.values)})

    def expected(self, ctx: _Context | None = None) -> str:
        if len(self.values) == 1:
            return as_json(self.values[0])
        return "one of " + _listing([as_json(v) for v in self.values])

    def _admits(self, value: Any, ctx: _Context) -> bool:
        kind = _scalar_kind(value)
        return kind is not None and any(_scalar_kind(v) == kind for v in self.values)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        for allowed in self.values:
            if json_equal(value, allowed):
                return allowed
        detail = f"must be {self.expected(ctx)}"
        if not self._admits(value, ctx):
            detail += f", got {type_name(value)}"
        issues.append(Issue(path, "enum", detail))
        return _BAD


@dataclass(frozen=True, slots=True)
class AnySchema(Schema):
    """Any JSON value: null, booleans, finite numbers, valid strings, lists and string-keyed dicts.

    The value is returned as it is, not copied. Sets, tuples, bytes, NaN and
    reference cycles are rejected.
    """

    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _json(self) -> dict[str, Any]:
        return self._with_description({})

    def expected(self, ctx: _Context | None = None) -> str:
        return "a JSON value"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return True

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        before = len(issues)
        _check_json(value, path, issues, ctx)
        return value if len(issues) == before else _BAD


def _check_json(value: Any, path: Path, issues: list[Issue], ctx: _Context) -> None:
    """Append an issue for every place in *value* that is not JSON-shaped."""
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            issues.append(Issue(path, "type", f"must be a finite number, got {type_name(value)}"))
        return
    if isinstance(value, str):
        if not unicode_ok(value):
            issues.append(Issue(path, "encoding", "must be valid Unicode text, got a string with a lone surrogate"))
        return
    if not isinstance(value, list | dict):
        issues.append(Issue(path, "type", f"must be a JSON value, got {type_name(value)}"))
        return
    if id(value) in ctx.active:
        issues.append(Issue(path, "too_deep", "must not contain itself (a reference cycle)"))
        return
    ctx.active.add(id(value))
    try:
        if isinstance(value, list):
            for index, item in enumerate(value):
                _check_json(item, (*path, index), issues, ctx)
        else:
            for key, item in value.items():
                if _key_issue(key, path, issues):
                    continue
                _check_json(item, (*path, key), issues, ctx)
    finally:
        ctx.active.discard(id(value))


def _key_issue(key: Any, path: Path, issues: list[Issue]) -> bool:
    """Append an issue if *key* cannot be a JSON object key; True when one was added."""
    if not isinstance(key, str):
        issues.append(Issue(path, "type", f"must have string keys, got a key of type {type_name(key)}"))
        return True
    if not unicode_ok(key):
        issues.append(Issue(path, "encoding", "must have valid Unicode keys, got a key with a lone surrogate"))
        return True
    return False


@dataclass(frozen=True, slots=True)
class ArraySchema(Schema):
    """A list whose every item matches ``items``, optionally bounded in length."""

    items: Schema
    min_items: int | None = None
    max_items: int | None = None
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _children(self) -> tuple[Schema, ...]:
        return (self.items,)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "items": self.items._json()}
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return self._with_description(out)

    def expected(self, ctx: _Context | None = None) -> str:
        return "an array"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, list)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if not isinstance(value, list):
            return self._type_issue(value, path, issues, ctx)
        bad = _size_issue(issues, path, len(value), low=self.min_items, high=self.max_items, unit="item")
        out = []
        for index, item in enumerate(value):
            parsed = self.items._collect(item, (*path, index), issues, ctx)
            bad = bad or parsed is _BAD
            out.append(parsed)
        return _BAD if bad else out


@dataclass(frozen=True, slots=True)
class OptionalSchema(Schema):
    """Marks an object field that may be absent; ``default``, if given, is filled in when it is.

    Only meaningful as a value in ``s.object({...})``.
    """

    schema: Schema
    default: Any = MISSING
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _children(self) -> tuple[Schema, ...]:
        return (self.schema,)

    def _json(self) -> dict[str, Any]:
        out = self.schema._json()
        if self.default is not MISSING:
            out["default"] = copy_json(self.default)  # the caller may change the exported schema
        return self._with_description(out)

    def expected(self, ctx: _Context | None = None) -> str:
        return self.schema.expected(ctx)

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        return self.schema._collect(value, path, issues, ctx)


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (defaults are copied so one call cannot change the next's)."""
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    return value


@dataclass(frozen=True, slots=True)
class ObjectSchema(Schema):
    """A dict with named fields.

    Unknown keys are rejected (``extra="forbid"``), dropped (``"ignore"``) or
    kept if they are JSON values (``"allow"``).
    """

    field_items: tuple[tuple[str, Schema], ...]
    extra: Extra = "forbid"
    description: str | None = None
    _names: frozenset[str] = field(default=frozenset(), repr=False, compare=False)
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def fields(self) -> Mapping[str, Schema]:
        """The fields, name to schema, in declaration order (read-only)."""
        return MappingProxyType(dict(self.field_items))

    @property
    def required(self) -> tuple[str, ...]:
        """The names of the fields that must be present, in declaration order."""
        return tuple(name for name, sub in self.field_items if not isinstance(sub, OptionalSchema))

    def _children(self) -> tuple[Schema, ...]:
        return tuple(sub for _, sub in self.field_items)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {name: sub._json() for name, sub in self.field_items},
        }
        if self.required:
            out["required"] = list(self.required)
        if self.extra == "forbid":
            out["additionalProperties"] = False
        return self._with_description(out)

    def expected(self, ctx: _Context | None = None) -> str:
        return "an object"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, dict)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if not isinstance(value, dict):
            return self._type_issue(value, path, issues, ctx)
        bad = False
        out: dict[str, Any] = {}
        for name, sub in self.field_items:
            if name in value:
                parsed = sub._collect(value[name], (*path, name), issues, ctx)
                bad = bad or parsed is _BAD
                out[name] = parsed
            elif isinstance(sub, OptionalSchema):
                if sub.default is not MISSING:
                    out[name] = copy_json(sub.default)
            else:
                issues.append(Issue((*path, name), "missing", f"is required ({sub.expected(ctx)})"))
                bad = True
        if self._extras(value, path, issues, ctx, out):
            bad = True
        return _BAD if bad else out

    def _extras(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: _Context, out: dict[str, Any]
    ) -> bool:
        """Check the keys that are not fields, keeping them in *out* under ``extra="allow"``; True on an issue."""
        before = len(issues)
        for key, item in value.items():
            if key in self._names or _key_issue(key, path, issues):
                continue
            if self.extra == "forbid":
                issues.append(Issue((*path, key), "unexpected", self._unexpected_detail(key)))
            elif self.extra == "allow":
                _check_json(item, (*path, key), issues, ctx)
                out[key] = item
        return len(issues) > before

    def _unexpected_detail(self, key: str) -> str:
        names = [name for name, _ in self.field_items]
        if not names:
            return "is an unexpected field; this object takes no fields"
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        if close:
            return f"is an unexpected field; did you mean {as_json(close[0])}?"
        return "is an unexpected field; allowed fields are " + _listing([as_json(n) for n in names])


@dataclass(frozen=True, slots=True)
class RecordSchema(Schema):
    """A dict with any string keys, whose every value matches ``values``."""

    values: Schema
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _children(self) -> tuple[Schema, ...]:
        return (self.values,)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"type": "object", "additionalProperties": self.values._json()})

    def expected(self, ctx: _Context | None = None) -> str:
        return "an object"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return isinstance(value, dict)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if not isinstance(value, dict):
            return self._type_issue(value, path, issues, ctx)
        bad = False
        out: dict[str, Any] = {}
        for key, item in value.items():
            if _key_issue(key, path, issues):
                bad = True
                continue
            parsed = self.values._collect(item, (*path, key), issues, ctx)
            bad = bad or parsed is _BAD
            out[key] = parsed
        return _BAD if bad else out


@dataclass(frozen=True, slots=True)
class UnionSchema(Schema):
    """A value matching at least one of ``options``; the first option that matches parses it."""

    options: tuple[Schema, ...]
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _children(self) -> tuple[Schema, ...]:
        return self.options

    def _json(self) -> dict[str, Any]:
        return self._with_description({"anyOf": [option._json() for option in self.options]})

    def expected(self, ctx: _Context | None = None) -> str:
        words: list[str] = []
        for option in self.options:
            word = option.expected(ctx)
            if word not in words:
                words.append(word)
        return " or ".join(words)

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return any(option._admits(value, ctx) for option in self.options)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        # The first option that accepts wins. When none does, explain the option
        # whose type fits the value best: its own issues say more than "no match".
        best: list[Issue] | None = None
        for option in self.options:
            found: list[Issue] = []
            parsed = option._collect(value, path, found, ctx)
            if parsed is not _BAD:
                return parsed
            if option._admits(value, ctx) and (best is None or len(found) < len(best)):
                best = found
        if best is None:
            issues.append(Issue(path, "union", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        else:
            issues.extend(best)
        return _BAD


@dataclass(frozen=True, slots=True)
class NullableSchema(Schema):
    """``schema``, or ``null``."""

    schema: Schema
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def _children(self) -> tuple[Schema, ...]:
        return (self.schema,)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"anyOf": [self.schema._json(), {"type": "null"}]})

    def expected(self, ctx: _Context | None = None) -> str:
        return f"{self.schema.expected(ctx)} or null"

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return value is None or self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        if value is None:
            return None
        if self.schema._admits(value, ctx):
            return self.schema._collect(value, path, issues, ctx)
        issues.append(Issue(path, "type", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        return _BAD


@dataclass(frozen=True, slots=True)
class RefSchema(Schema):
    """A named schema, resolved by the ``Runtime`` from the schemas it was given."""

    name: str
    description: str | None = None
    _validator: Validator | None = field(default=None, init=False, repr=False, compare=False)

    def ref_names(self) -> Iterator[str]:
        yield self.name

    def _json(self) -> dict[str, Any]:
        return self._with_description({"$ref": f"#/$defs/{self.name}"})

    def expected(self, ctx: _Context | None = None) -> str:
        if ctx is not None and self.name in ctx.refs:
            return ctx.refs[self.name].expected(ctx)
        return f'a "{self.name}"'

    def _admits(self, value: Any, ctx: _Context) -> bool:
        return ctx.refs[self.name]._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: _Context) -> Any:
        return ctx.refs[self.name]._collect(value, path, issues, ctx)
