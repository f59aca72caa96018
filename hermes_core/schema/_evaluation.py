"""``unevaluatedProperties`` and ``unevaluatedItems``: annotation collection, as JSON Schema 2020-12 defines it.

A key of an object (an index of an array) is *evaluated* by a schema object
when one of its keywords applied to it there: ``properties``,
``patternProperties``, ``additionalProperties``, ``unevaluatedProperties``
for keys; ``prefixItems``, ``items``, ``contains``, ``unevaluatedItems`` for
indexes. Evaluations flow out of the subschemas applied to the same value
that it passes: every part of ``allOf``; each option of ``anyOf`` and
``oneOf`` that passes; ``if`` and ``then`` when ``if`` passes, else
``else``; the ``dependentSchemas`` of the keys present; the target of a
``$ref``. ``unevaluated*`` then checks what none of them evaluated.

An :class:`Evaluation` is what one schema object evaluates, read from the
document at import: its own keywords, and the evaluations of the subschemas
it applies in place, with the node that says whether each passes. It is only
made where an ``unevaluated*`` keyword needs it, and only asked when a value
reaches that keyword: the common path pays nothing. What it finds for one
value is kept for the check (``Context.tried``), so each (evaluation, value)
pair is worked out once, and a ``$ref`` back to itself in place stops.

Evaluations are known by the schema object's pointer and the dynamic scope it
is reached in (see :mod:`._dynamic`; 0 in a document whose ``$dynamicRef`` s
all resolve as ``$ref`` s do): a ``$dynamicRef`` evaluates what its target in
that scope does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from hermes_core._base._frozen import frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, TooManyIssues
from hermes_core._base._names import suggest
from hermes_core.schema._alternatives import NeverSchema
from hermes_core.schema._containers import SUGGESTED_ISSUES
from hermes_core.schema._nodes import Schema
from hermes_core.schema._patterns import Searcher
from hermes_core.schema._shared import BAD, Context, Path, as_json, listing, path_key

__all__ = ["EVERY", "Evaluation", "UnevaluatedSchema"]


class _Every:
    """Every key or index: what ``additionalProperties``, ``items`` or ``unevaluated*`` evaluate."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EVERY"


#: Every key or index is evaluated.
EVERY = _Every()

# The most property names a "did you mean" is looked for among.
_NAMES_MAX = 1000


@frozen
class Evaluation:
    """What one schema object (at ``pointer``) evaluates of a value, as :mod:`this module <._evaluation>` says.

    Attributes:
        pointer: the schema object's JSON pointer in the document.
        properties: the names ``properties`` lists.
        patterns: the regexes of ``patternProperties``.
        every_key: ``additionalProperties`` is there: every key.
        unevaluated_keys: ``unevaluatedProperties`` is there: every key, once it passed.
        prefix: how many items ``prefixItems`` (draft-07's array ``items``) lists.
        every_item: ``items`` (``additionalItems`` after an array ``items``) is there: every index.
        unevaluated_items: ``unevaluatedItems`` is there: every index, once it passed.
        contains: the schema of ``contains``: the indexes of the items it accepts.
        all_of: the evaluations of the ``allOf`` parts.
        options: each option of ``anyOf`` and ``oneOf``: its node, and its evaluation.
        condition: ``if``'s node and evaluation, then ``then``'s and ``else``'s evaluations (None if absent).
        dependent: each key of ``dependentSchemas`` with its evaluation.
        refs: where ``$ref`` and ``$dynamicRef`` go, as (pointer, dynamic scope): their evaluations are in ``table``.
        table: every evaluation of the document by pointer and dynamic scope, shared, filled once at import.
    """

    pointer: str
    properties: frozenset[str] = frozenset()
    patterns: tuple[Searcher, ...] = ()
    every_key: bool = False
    unevaluated_keys: bool = False
    prefix: int = 0
    every_item: bool = False
    unevaluated_items: bool = False
    contains: Schema | None = None
    all_of: tuple[Evaluation, ...] = ()
    options: tuple[tuple[Schema, Evaluation], ...] = ()
    condition: tuple[Schema, Evaluation, Evaluation | None, Evaluation | None] | None = None
    dependent: tuple[tuple[str, Evaluation], ...] = ()
    refs: tuple[tuple[str, int], ...] = ()
    table: Mapping[tuple[str, int], Evaluation] = field(default_factory=dict, repr=False, compare=False)

    def keys(self, value: dict[Any, Any], path: Path, ctx: Context, own: bool = True) -> set[Any] | _Every:
        """The keys of *value* evaluated here (``EVERY`` for all); *own*: counting ``unevaluatedProperties`` too."""
        return self._found(value, path, ctx, own, "keys")

    def indexes(self, value: list[Any], path: Path, ctx: Context, own: bool = True) -> set[Any] | _Every:
        """The indexes of *value* evaluated here (``EVERY`` for all); *own*: counting ``unevaluatedItems`` too."""
        return self._found(value, path, ctx, own, "indexes")

    def names(self) -> list[str]:
        """The property names this schema object and those it applies in place list (at most ``_NAMES_MAX``)."""
        names: dict[str, None] = {}
        seen: set[int] = set()
        pending = [self]
        while pending and len(names) < _NAMES_MAX:
            evaluation = pending.pop()
            if id(evaluation) in seen:
                continue
            seen.add(id(evaluation))
            names.update(dict.fromkeys(sorted(evaluation.properties)))
            pending.extend(evaluation.all_of)
            pending.extend(sub for _, sub in evaluation.options)
            if evaluation.condition is not None:
                pending.extend(sub for sub in evaluation.condition[1:] if isinstance(sub, Evaluation))
            pending.extend(sub for _, sub in evaluation.dependent)
            pending.extend(self.table[key] for key in evaluation.refs if key in self.table)
        return list(names)[:_NAMES_MAX]

    def _found(self, value: Any, path: Path, ctx: Context, own: bool, what: str) -> set[Any] | _Every:
        key = ("evaluated", id(self), id(value), own, what)
        known = ctx.tried.get(key)
        if known is not None:
            return known[1]  # type: ignore[no-any-return]
        ctx.tried[key] = (value, set())  # while worked out: a $ref back here in place adds nothing
        found = self._keys(value, path, ctx, own) if what == "keys" else self._indexes(value, path, ctx, own)
        ctx.tried[key] = (value, found)
        return found

    def _keys(self, value: dict[Any, Any], path: Path, ctx: Context, own: bool) -> set[Any] | _Every:
        if self.every_key or (own and self.unevaluated_keys):
            return EVERY
        found = {key for key in value if key in self.properties} if self.properties else set()
        if self.patterns:
            found.update(key for key in value if isinstance(key, str) and any(p.search(key) for p in self.patterns))
        return self._applied(value, path, ctx, found, "keys")

    def _indexes(self, value: list[Any], path: Path, ctx: Context, own: bool) -> set[Any] | _Every:
        if self.every_item or (own and self.unevaluated_items):
            return EVERY
        found: set[Any] = set(range(min(self.prefix, len(value))))
        if self.contains is not None:
            found.update(index for index, item in enumerate(value) if _passes(self.contains, item, path, ctx))
        return self._applied(value, path, ctx, found, "indexes")

    def _applied(self, value: Any, path: Path, ctx: Context, found: set[Any], what: str) -> set[Any] | _Every:
        """*found*, with what the subschemas applied in place that *value* passes evaluate."""
        subs: list[Evaluation] = list(self.all_of)
        subs.extend(sub for node, sub in self.options if _passes(node, value, path, ctx))
        if self.condition is not None:
            node, condition, then, otherwise = self.condition
            if _passes(node, value, path, ctx):
                subs.append(condition)
                if then is not None:
                    subs.append(then)
            elif otherwise is not None:
                subs.append(otherwise)
        subs.extend(sub for key, sub in self.dependent if key in value)
        subs.extend(self.table[key] for key in self.refs if key in self.table)
        for sub in subs:
            more = sub._found(value, path, ctx, True, what)
            if more is EVERY:
                return EVERY
            assert isinstance(more, set)  # narrows for mypy
            found |= more
        return found


def _passes(node: Schema, value: Any, path: Path, ctx: Context) -> bool:
    found: list[Issue] = []
    try:
        parsed = node._collect(value, path, found, ctx)
    except TooManyIssues:
        return False
    return parsed is not BAD and not found


@frozen
class UnevaluatedSchema(Schema):
    """``base`` (the rest of a schema object), then ``unevaluatedProperties`` and ``unevaluatedItems``.

    ``properties`` checks each key of an object that ``evaluation`` (of the
    same schema object) does not evaluate, ``items`` each such index of an
    array; either may be None. ``names`` are the property names the schema
    object's evaluation knows of, for "did you mean". ``scope`` is the
    dynamic scope the schema object was reached in (see :mod:`._dynamic`).
    """

    kind = "unevaluated"

    base: Schema
    pointer: str
    table: Mapping[tuple[str, int], Evaluation] = field(repr=False, compare=False)
    properties: Schema | None = None
    items: Schema | None = None
    description: str | None = None
    scope: int = 0

    @property
    def evaluation(self) -> Evaluation:
        """What the schema object holding the keywords evaluates (``table[pointer, scope]``, filled at import)."""
        return self.table[(self.pointer, self.scope)]

    def children(self) -> tuple[Schema, ...]:
        return tuple(node for node in (self.base, self.properties, self.items) if node is not None)

    def _json(self) -> dict[str, Any]:
        out = self.base._json()
        if self.properties is not None:
            out["unevaluatedProperties"] = self.properties._json()
        if self.items is not None:
            out["unevaluatedItems"] = self.items._json()
        return self._with_description(out)

    def expected(self, ctx: Context | None = None) -> str:
        return self.base.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.base._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        before = len(issues)
        result = self.base._collect(value, path, issues, ctx)
        if self.properties is not None and isinstance(value, dict):
            result = self._keys(value, result, path, issues, ctx, before=before)
        elif self.items is not None and isinstance(value, list):
            result = self._items(value, result, path, issues, ctx)
        return BAD if result is BAD or len(issues) > before else result

    def _keys(
        self, value: dict[Any, Any], result: Any, path: Path, issues: list[Issue], ctx: Context, *, before: int
    ) -> Any:
        assert self.properties is not None  # narrows for mypy: the caller tested it
        evaluated = self.evaluation.keys(value, path, ctx, own=False)
        if evaluated is EVERY:
            return result
        assert isinstance(evaluated, set)
        # The keys the rest of the schema object refused already (a closed object it reaches through a $ref):
        # each is said once.
        refused = {issue.path for issue in issues[before:] if issue.kind == "unexpected"}
        for key, item in value.items():
            if key in evaluated or not isinstance(key, str):
                continue  # a key that is not a string is the object's own check's to refuse
            plain = path_key(key)
            if (*path, plain) in refused:
                continue
            if isinstance(self.properties, NeverSchema):
                issues.append(Issue((*path, plain), "unexpected", self._unexpected(plain, len(issues))))
                parsed: Any = BAD
            else:
                parsed = self.properties._collect(item, (*path, plain), issues, ctx)
            if parsed is not BAD and result is not value and type(result) is dict:
                result[key] = parsed
            if len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return result

    def _unexpected(self, key: str, count: int) -> str:
        names = self.evaluation.names()
        if not names:
            return "is an unexpected field; this object takes no other fields"
        if count >= SUGGESTED_ISSUES:  # as an object's own unexpected keys: past the first issues, no suggestion
            return "is an unexpected field"
        if key in names:
            return "is an unexpected field here: only a part of the schema that does not apply to this value takes it"
        close = suggest(key, names, limit=1)
        if close:
            return f"is an unexpected field; did you mean {as_json(close[0])}?"
        return "is an unexpected field; allowed fields are " + listing(as_json(name) for name in names)

    def _items(self, value: list[Any], result: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        assert self.items is not None  # narrows for mypy: the caller tested it
        evaluated = self.evaluation.indexes(value, path, ctx, own=False)
        if evaluated is EVERY:
            return result
        assert isinstance(evaluated, set)
        for index, item in enumerate(value):
            if index in evaluated:
                continue
            if isinstance(self.items, NeverSchema):
                issues.append(Issue((*path, index), "unexpected", "is an unexpected item; no schema here takes it"))
                parsed: Any = BAD
            else:
                parsed = self.items._collect(item, (*path, index), issues, ctx)
            if parsed is not BAD and result is not value and type(result) is list:
                result[index] = parsed
            if len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
        return result
