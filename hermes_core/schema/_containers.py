"""The container nodes: arrays (items, tuples, prefix items) and objects (fields, records, pattern properties).

Each checks its items or entries through the nodes it holds and prefixes its
index or key onto their issues. They import the base (``_nodes``) and the
alternatives (an object's optional fields, an array's closed rest), never the
reverse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from itertools import chain, repeat
from types import MappingProxyType
from typing import Any

from hermes_core._base._frozen import frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, TooManyIssues
from hermes_core._base._names import suggest
from hermes_core.schema._alternatives import NeverSchema, OptionalSchema
from hermes_core.schema._nodes import Branching, Schema
from hermes_core.schema._patterns import Searcher
from hermes_core.schema._shared import (
    BAD,
    MISSING,
    Context,
    Extra,
    Path,
    as_json,
    check_json,
    copy_json,
    key_issue,
    listing,
    path_key,
    size_issue,
    unique_issues,
)

__all__ = [
    "SUGGESTED_ISSUES",
    "ArraySchema",
    "ObjectSchema",
    "PatternPropertiesSchema",
    "PrefixArraySchema",
    "RecordSchema",
    "TupleSchema",
]

#: How many issues an input may have before an unexpected field's issue stops looking for a "did you mean".
SUGGESTED_ISSUES = 100
_UNEXPECTED = "is an unexpected field"


def _list(
    node: Schema,
    value: Any,
    path: Path,
    issues: list[Issue],
    ctx: Context,
    *,
    schemas: Iterable[Schema],
    low: int | None,
    high: int | None,
    unique: bool,
) -> Any:
    """Check *value* as a list of *low* to *high* items, the item at each index against the next of *schemas*.

    The walk of every array node (items, tuple, prefix items); items past the
    end of *schemas* are not checked (the size bound refuses them where it must).
    """
    if not isinstance(value, list):
        return node._type_issue(value, path, issues, ctx)
    bad = size_issue(issues, path, len(value), low=low, high=high, unit="item")
    before = len(issues)
    out = []
    for index, (item, schema) in enumerate(zip(value, schemas, strict=False)):
        parsed = schema._collect(item, (*path, index), issues, ctx)
        bad = bad or parsed is BAD
        if parsed is BAD and len(issues) > ISSUES_MAX:
            raise TooManyIssues(issues)
        out.append(parsed)
    if unique and len(issues) == before and unique_issues(value, path, issues):
        bad = True
    return BAD if bad else out


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
        schemas = repeat(self.items)
        low, high = self.min_items, self.max_items
        return _list(self, value, path, issues, ctx, schemas=schemas, low=low, high=high, unique=self.unique_items)


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
        size = len(self.items)
        return _list(self, value, path, issues, ctx, schemas=self.items, low=size, high=size, unique=False)


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


# -- the containers JSON Schema import adds (see _import.py): checked by their walk, not compiled inline --


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
        schemas = chain(self.prefix, repeat(self.rest))
        low, high = self.min_items, self.max_items
        return _list(self, value, path, issues, ctx, schemas=schemas, low=low, high=high, unique=self.unique_items)


@frozen
class PatternPropertiesSchema(Branching):
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

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
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
