"""Schema nodes: the ``Schema`` base (parsing, JSON Schema export, walking) and the scalar nodes.

Each node is a frozen dataclass. ``_collect`` is the authoritative check: it
walks a value, appends every :class:`~hermes_core._base._issues.Issue` it finds, and
returns the parsed value (or ``BAD``). The compiled fast path in
``_compile.py`` must accept exactly what ``_collect`` accepts; it only exists
because straight-line code is faster than this walk.

The compiler sits below the nodes and imports none of them: each node class
names its type in ``kind``, which the compiler dispatches on, reading the
node's attributes. :meth:`Schema.parse` calls the compiler directly.

The nodes are in three modules, each importing only the ones before it: this
one (the base and the scalars: string, numbers, boolean, null, enum, const,
any), ``_alternatives`` (the nodes that stand for or choose among others) and
``_containers`` (arrays and objects).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any, ClassVar

from hermes_core._base._errors import SchemaError
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, IssueKind, TooManyIssues, shorten
from hermes_core.schema._compile import CLOSED_ENTRIES, closed_validator
from hermes_core.schema._patterns import Searcher
from hermes_core.schema._shared import (
    BAD,
    FORMATS,
    MAX_LISTED,
    MISSING,
    Context,
    Path,
    as_json,
    canonical_json,
    check_json,
    copy_json,
    multiple_ok,
    not_finite,
    raised_issue,
    size_issue,
    type_name,
    unicode_ok,
)

__all__ = [
    "AnySchema",
    "BooleanSchema",
    "Branching",
    "ConstSchema",
    "EnumSchema",
    "IntegerSchema",
    "NullSchema",
    "NumberSchema",
    "Schema",
    "StringSchema",
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


class Branching(Schema):
    """The base of the nodes that check one value against several schemas: union, one-of, all-of, patternProperties.

    Those schemas may each reach the same node at the same value: each option
    of a recursive anyOf of objects checks the same field against the same
    anyOf, so a walk that tried them all afresh would take time exponential in
    the value's depth. A branching node checks a value once per check (its
    ``Context``) with :meth:`_check`, and replays what it found when it meets
    the value again: each (node, value) pair is checked once, so checking is
    polynomial in the sizes of the schema and the value.
    """

    __slots__ = ()

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        """What :meth:`_collect` does the first time this node meets *value* in a check."""
        raise NotImplementedError

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        # _check appends to a list of its own, so what it finds does not depend on the issues before
        # it: a value met again (at another path too) gets the same result, its issues moved there.
        key = (id(self), id(value))
        entry = ctx.tried.get(key)
        if entry is None:
            found: list[Issue] = []
            try:
                result = self._check(value, path, found, ctx)
            except TooManyIssues:  # its first issues stay in found: replaying them stops the check
                result = BAD
            # The entry holds the value, so no other object takes its id while the check lasts.
            entry = ctx.tried[key] = (value, path, result, found)
        return _replay(entry, path, issues)

    # The compiled check of a union keeps what it finds in a check's ``tried`` too (see _compile).

    def _recall(self, value: Any, path: Path, issues: list[Issue], tried: dict[Any, Any]) -> Any:
        """What this node found for *value* earlier in a check (*tried*), replayed into *issues*, else ``MISSING``."""
        entry = tried.get((id(self), id(value)))
        return MISSING if entry is None else _replay(entry, path, issues)

    def _keep(self, value: Any, path: Path, result: Any, tried: dict[Any, Any]) -> Any:
        """Keep *result*, found for *value* without an issue, in a check's *tried*; return it."""
        tried[(id(self), id(value))] = (value, path, result, ())
        return result


def _replay(entry: tuple[Any, Path, Any, list[Issue]], path: Path, issues: list[Issue]) -> Any:
    """The result an entry of ``Context.tried`` holds; its issues appended to *issues*, moved to *path*.

    Raises:
        TooManyIssues: *issues* now holds more than ``ISSUES_MAX``.
    """
    _, at, result, found = entry
    if found:
        if at != path:  # one object met at two places (a value that holds it twice)
            cut = len(at)
            found = [Issue((*path, *issue.path[cut:]), issue.kind, issue.detail) for issue in found]
        issues.extend(found)
        if len(issues) > ISSUES_MAX:
            raise TooManyIssues(issues)
    return result


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
            issues.append(Issue(path, "type", not_finite(value)))
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


#: How many characters of one allowed value a message shows: a value of megabytes is shown by its start.
VALUE_SHOWN = 200


def _shown(value: Any) -> str:
    return shorten(as_json(value), VALUE_SHOWN)


def _said_members(values: tuple[Any, ...]) -> str:
    """What a value of the enum *values* is: ``"w"``, ``one of "w", "a"``, ``one of 50,000 values, such as ...``.

    Only the values shown are written as JSON: the words cost what twenty values
    weigh, however many there are.
    """
    if len(values) == 1:
        return _shown(values[0])
    if len(values) <= MAX_LISTED:
        return "one of " + ", ".join(_shown(value) for value in values)
    such = ", ".join(_shown(value) for value in values[:MAX_LISTED])
    return f"one of {len(values):,} values, such as {such}, ..."


@frozen
class EnumSchema(Schema):
    """One of a fixed set of JSON values, compared as JSON compares them. ``literal`` is an enum of one.

    ``s.enum`` and ``s.literal`` make one of scalars; an imported ``enum`` or
    ``const`` may hold arrays and objects too. A value is looked up by its
    canonical JSON text (:func:`~hermes_core.schema._shared.canonical_json`),
    in time linear in the value, however many values are allowed, and the
    node holds one text per value, never a node per value. A match parses to
    the declared value (a copy, for an array or an object).
    """

    kind = "enum"

    values: tuple[Any, ...]
    description: str | None = None
    # Derived: each value by its canonical text, the longest text, the JSON kinds of the values, the words.
    _members: Mapping[str, Any] = field(init=False, default_factory=dict, repr=False, compare=False)
    _longest: int = field(init=False, default=0, repr=False, compare=False)
    _kinds: frozenset[str] = field(init=False, default=frozenset(), repr=False, compare=False)
    _said: str = field(init=False, default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        members: dict[str, Any] = {}
        for value in self.values:
            text = canonical_json(value)
            if text is not None:  # a value that is not JSON equals nothing (the combinators refuse one)
                members.setdefault(text, value)
        derive(
            self,
            _members=members,
            _longest=max(map(len, members), default=0),
            _kinds=frozenset(_json_kind(value) for value in self.values),
            _said=_said_members(self.values),
        )

    def _json(self) -> dict[str, Any]:
        if len(self.values) == 1:
            return self._with_description({"const": copy_json(self.values[0])})
        return self._with_description({"enum": copy_json(list(self.values))})

    def expected(self, ctx: Context | None = None) -> str:
        return self._said

    def _admits(self, value: Any, ctx: Context) -> bool:
        return _json_kind(value) in self._kinds

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        text = canonical_json(value, self._longest)
        if text is not None:
            allowed = self._members.get(text, MISSING)
            if allowed is not MISSING:
                return copy_json(allowed)
        detail = f"must be {self._said}"
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
    # Derived: the value's canonical text (see EnumSchema), and the words.
    _key: str | None = field(init=False, default=None, repr=False, compare=False)
    _said: str = field(init=False, default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        derive(self, _key=canonical_json(self.value), _said=_shown(self.value))

    def _json(self) -> dict[str, Any]:
        return self._with_description({"const": copy_json(self.value)})

    def expected(self, ctx: Context | None = None) -> str:
        return self._said

    def _admits(self, value: Any, ctx: Context) -> bool:
        return _json_kind(value) == _json_kind(self.value)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if self._key is not None and canonical_json(value, len(self._key)) == self._key:
            return copy_json(self.value)
        detail = f"must be {self._said}"
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
