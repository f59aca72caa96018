"""Hypothesis strategies for schemas: values a schema accepts, and values it rejects.

:func:`strategy` generates values that ``schema.parse`` accepts; :func:`invalid_strategy`
generates values it rejects, mixing every way a value can be wrong, from a wrong
type at the root to one bad item deep inside an otherwise valid value.

This is the one module of ``hermes_core`` that imports Hypothesis as it is
imported; the testing package imports it only when a strategy is asked for.

Named schemas (``s.ref``) are followed through *defs*. A value goes at most
three refs deep, or as deep as the schema requires if that is more: past the
limit, each node takes the ways out that need the fewest refs (an absent
optional field, an empty array, ``None``...), so recursive schemas give finite
values.
"""

from __future__ import annotations

import math
import re
import string
import sys
from collections.abc import Callable, Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from hermes_core import schema as s
from hermes_core._errors import InvalidDefinitionError
from hermes_core.schema._validators import compile_schema, copy_json, json_key

__all__ = ["invalid_strategy", "strategy"]

# The most items or keys a generated container holds beyond the fewest its schema allows.
_SIZE = 5
# How many refs deep a generated value goes, unless its schema requires more.
_REF_DEPTH = 3

# A length or count beyond which no value "just past the bound" is built: it would be as long.
_LONGEST = 10_000
# Hypothesis draws each character: a string this long or longer repeats one to reach its minimum.
_LONG = 20
# How many candidates are tried before a value certain to be rejected is drawn instead.
_TRIES = 3
# Unbounded integers stay where a JSON reader holds them exactly.
_INT_SPAN = 2**53
_FLOAT_MAX = int(sys.float_info.max)
_NEVER = math.inf
# How many steps of a multiple_of an unbounded side of a number spans.
_SPAN_STEPS = 1000

_Kinds = frozenset[str]
_ALL_KINDS: _Kinds = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_NUMERIC: _Kinds = frozenset({"integer", "number"})

# -- plain values ------------------------------------------------------------------------------

_CHARS = st.one_of(st.sampled_from(string.ascii_letters + string.digits + " _-./"), st.characters(codec="utf-8"))
_KEYS = st.one_of(st.sampled_from(["id", "name", "path", "mode", "tags", "x", ""]), st.text(_CHARS, max_size=8))
_SCALARS: SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-_INT_SPAN, _INT_SPAN),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(_CHARS, max_size=8),
)
_JSON: SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=_SIZE) | st.dictionaries(_KEYS, children, max_size=_SIZE),
    max_leaves=10,
)

# A value of each JSON kind; "number" is a float that is not integral (an integral one is an integer).
_OF_KIND: dict[str, SearchStrategy[Any]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "integer": st.integers(-1000, 1000) | st.sampled_from([2**31, -(2**53)]),
    "number": st.sampled_from([0.5, -2.5, 3.14]) | st.floats(-1e6, 1e6).filter(lambda x: not x.is_integer()),
    "string": st.text(_CHARS, max_size=8),
    "array": st.lists(_SCALARS, max_size=3),
    "object": st.dictionaries(_KEYS, _SCALARS, max_size=3),
}


def _set(base: Mapping[Any, Any], key: Any, value: Any) -> dict[Any, Any]:
    """A copy of *base* with *key* set to *value*."""
    out = dict(base)
    out[key] = value
    return out


def _without(base: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A copy of *base* without *key*."""
    return {name: value for name, value in base.items() if name != key}


# Keys a JSON object cannot have: not strings, or not valid Unicode.
_BAD_KEYS = st.sampled_from([1, None, 2.5, ("k",), "\udfff"])

# Rejected by every schema wherever they stand: JSON has no such values.
_NON_JSON: SearchStrategy[Any] = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, b"bytes", "a lone \ud800 surrogate", 1j, Decimal("1.5")]),
    st.builds(object),
    st.sets(st.integers(-3, 3), max_size=3),
    st.tuples(_SCALARS) | st.tuples(_SCALARS, _SCALARS),
    st.builds(_set, st.dictionaries(_KEYS, _SCALARS, max_size=2), _BAD_KEYS, _SCALARS),
)


@st.composite
def _with_item(draw: st.DrawFn, items: SearchStrategy[list[Any]], bad: SearchStrategy[Any]) -> list[Any]:
    """A list from *items* with a value of *bad* at a random index, in place of the item there or added."""
    values = list(draw(items))
    index = draw(st.integers(0, len(values)))
    if index < len(values) and draw(st.booleans()):
        values[index] = draw(bad)
    else:
        values.insert(index, draw(bad))
    return values


@st.composite
def _replaced(draw: st.DrawFn, items: SearchStrategy[list[Any]], index: int, bad: SearchStrategy[Any]) -> list[Any]:
    """A list from *items* whose item at *index* is a value of *bad*."""
    values = list(draw(items))
    values[index] = draw(bad)
    return values


@st.composite
def _rejected(
    draw: st.DrawFn, candidates: SearchStrategy[Any], accepts: Callable[[Any], bool], fallback: SearchStrategy[Any]
) -> Any:
    """A value of *candidates* that *accepts* refuses, or, after a few tries, a value of *fallback*.

    Used where a construction may be valid by accident (a value wrong for one
    option of a union may suit another); *fallback* must give only rejected
    values, so no example is thrown away.
    """
    for _ in range(_TRIES):
        value = draw(candidates)
        if not accepts(value):
            return value
    return draw(fallback)


@st.composite
def _pick(draw: st.DrawFn, groups: tuple[SearchStrategy[Any], ...]) -> Any:
    return draw(groups[draw(st.integers(0, len(groups) - 1))])


def _evenly(groups: list[SearchStrategy[Any]]) -> SearchStrategy[Any]:
    """A value of one of *groups*, each as likely as another.

    ``st.one_of`` flattens the choices nested in it, so a group of six kinds
    would come up six times as often as a group of one.
    """
    kept = tuple(group for group in groups if not group.is_empty)
    if len(kept) < 2:
        return kept[0] if kept else st.nothing()
    return _pick(kept)


# Non-JSON values, also inside JSON containers: what an s.any() rejects, with a path.
_NON_JSON_INSIDE: SearchStrategy[Any] = st.recursive(
    _NON_JSON,
    lambda bad: (
        _with_item(st.lists(_JSON, max_size=3), bad)
        | st.builds(_set, st.dictionaries(_KEYS, _JSON, max_size=3), _KEYS, bad)
    ),
    max_leaves=3,
)


def _text(low: int, high: int | None) -> SearchStrategy[str]:
    """Valid Unicode text of *low* to *high* characters (at most five more than *low*)."""
    top = low + _SIZE if high is None else min(high, low + _SIZE)
    if low < _LONG:
        return st.text(_CHARS, min_size=low, max_size=top)
    return st.builds(lambda fill, tail: fill * low + tail, _CHARS, st.text(_CHARS, max_size=top - low))


def _bounded_integers(minimum: float | None, maximum: float | None) -> SearchStrategy[int]:
    """Integers within the inclusive bounds; an open side stops where floats still hold integers exactly."""
    low = None if minimum is None else math.ceil(minimum)
    high = None if maximum is None else math.floor(maximum)
    if low is None:
        low = -_INT_SPAN if high is None or high >= -_INT_SPAN else max(high - _INT_SPAN, -_FLOAT_MAX)
    if high is None:
        high = _INT_SPAN if low <= _INT_SPAN else min(low + _INT_SPAN, _FLOAT_MAX)
    return st.integers(low, high) if low <= high else st.nothing()


def _float_from(bound: float, *, up: bool, strictly: bool) -> float | None:
    """The float nearest *bound* on its side (above if *up*), *bound* itself allowed unless *strictly*.

    None when there is no finite float there. An int bound may not be a float
    exactly, and Python compares an int with a float exactly.
    """
    near = float(bound)
    wrong_side = near < bound if up else near > bound
    if wrong_side or (strictly and near == bound):
        near = math.nextafter(near, math.inf if up else -math.inf)
    return near if math.isfinite(near) else None


def _integral_float(number: int) -> int | float:
    """*number* as a float when the float is exact: JSON's ``2.0`` is the integer 2."""
    return float(number) if abs(number) <= _INT_SPAN else number


def _floats(low: float | None, high: float | None) -> SearchStrategy[float]:
    """Finite floats within the inclusive bounds, which :func:`_float_from` has put inside the declared ones."""
    if low is not None and high is not None and low > high:
        return st.nothing()
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


# -- what a schema needs and admits -------------------------------------------------------------


def _distinct(node: s.Schema) -> float:
    """How many values *node* accepts that differ as JSON (infinite unless it is a small finite set)."""
    if isinstance(node, s.NullSchema | s.ConstSchema):
        return 1
    if isinstance(node, s.BooleanSchema):
        return 2
    if isinstance(node, s.EnumSchema):
        return len({json_key(value) for value in node.values})
    return math.inf


def _need(node: s.Schema, named: Mapping[str, float]) -> float:
    """How many refs deep the shallowest value of *node* goes; infinite if it has no finite value.

    *named* gives the same for each named schema (see :meth:`_Plan.__init__`).
    """
    if isinstance(node, s.RefSchema):
        return 1 + named[node.name]
    if isinstance(node, s.OptionalSchema):
        return _need(node.schema, named)
    if isinstance(node, s.ArraySchema):
        return _need(node.items, named) if node.min_items else 0
    if isinstance(node, s.TupleSchema):
        return max(_need(item, named) for item in node.items)
    if isinstance(node, s.ObjectSchema):
        return max(
            (_need(sub, named) for _, sub in node.field_items if not isinstance(sub, s.OptionalSchema)), default=0
        )
    if isinstance(node, s.UnionSchema):
        return min(_need(option, named) for option in node.options)
    return 0  # a leaf, an empty record, or None


_SINGLE_KIND: dict[type[s.Schema], _Kinds] = {
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


def _kinds(node: s.Schema, named: Mapping[str, _Kinds]) -> _Kinds:
    """The JSON kinds *node* may accept: a value of any other kind is rejected."""
    if isinstance(node, s.RefSchema):
        return named[node.name]
    if isinstance(node, s.OptionalSchema | s.NullableSchema):
        inner = _kinds(node.schema, named)
        return inner | {"null"} if isinstance(node, s.NullableSchema) else inner
    if isinstance(node, s.UnionSchema):
        return frozenset().union(*(_kinds(option, named) for option in node.options))
    if isinstance(node, s.EnumSchema):
        return frozenset().union(*(_member_kinds(value) for value in node.values))
    if isinstance(node, s.ConstSchema):
        return _member_kinds(node.value)
    if isinstance(node, s.AnySchema):
        return _ALL_KINDS
    return _SINGLE_KIND.get(type(node), _ALL_KINDS)


def _member_kinds(value: Any) -> _Kinds:
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


def _named_schemas(schema: s.Schema, defs: Mapping[str, s.Schema]) -> dict[str, s.Schema]:
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


# -- the strategies ----------------------------------------------------------------------------


class _Plan:
    """The strategies for one schema and its named schemas, built once per node and ref depth.

    A strategy for a node is asked for with a *budget*: how many refs deep its
    values may still go. It is only asked for when the node has a value within
    the budget (``need(node) <= budget``), and it keeps to the choices that do.
    """

    def __init__(self, schema: s.Schema, defs: Mapping[str, s.Schema] | None) -> None:
        self.defs: Mapping[str, s.Schema] = {} if defs is None else defs
        self.named = _named_schemas(schema, self.defs)
        # Both are least fixed points over the named schemas, which may refer to each other.
        self.needs: dict[str, float] = dict.fromkeys(self.named, _NEVER)
        self.kinds: dict[str, _Kinds] = dict.fromkeys(self.named, frozenset())
        changed = True
        while changed:
            changed = False
            for name, target in self.named.items():
                need, kinds = _need(target, self.needs), _kinds(target, self.kinds)
                if need != self.needs[name] or kinds != self.kinds[name]:
                    self.needs[name], self.kinds[name], changed = need, kinds, True
        self._valid: dict[tuple[int, int], SearchStrategy[Any]] = {}
        self._invalid: dict[tuple[int, int], SearchStrategy[Any]] = {}
        self._keep: list[s.Schema] = []  # the nodes whose ids key the caches stay alive with them

    def need(self, node: s.Schema) -> float:
        """How many refs deep the shallowest value of *node* goes (infinite: it has none)."""
        return _need(node, self.needs)

    def can(self, node: s.Schema, budget: int) -> bool:
        """Whether *node* has values within *budget* refs, and the strategies find some.

        A leaf may have none (``s.integer(minimum=0.5, maximum=0.7)``): then an
        array of it is empty, an optional field of it absent, and so on.
        """
        return self.need(node) <= budget and not self.valid(node, budget).is_empty

    def wrong_kinds(self, node: s.Schema) -> list[SearchStrategy[Any]]:
        """Values of the JSON kinds *node* never accepts (none for ``s.any()``)."""
        accepted = _kinds(node, self.kinds)
        return [_OF_KIND[kind] for kind in _OF_KIND if kind not in accepted]

    def rejects_surely(self, node: s.Schema) -> SearchStrategy[Any]:
        """Values *node* rejects by their kind alone: the ones the other constructions fall back on."""
        return st.one_of(_NON_JSON, *self.wrong_kinds(node))

    def accepts(self, node: s.Schema) -> Callable[[Any], bool]:
        """Whether *node* (its refs resolved through the defs) accepts a value."""
        validator = compile_schema(node, self.defs)
        return lambda value: validator.run(value)[0]

    # -- valid values --------------------------------------------------------------------------

    def valid(self, node: s.Schema, budget: int) -> SearchStrategy[Any]:
        """Values *node* accepts, going at most *budget* refs deep (``need(node) <= budget``)."""
        key = (id(node), budget)
        if key not in self._valid:
            self._keep.append(node)
            self._valid[key] = self._build_valid(node, budget)
        return self._valid[key]

    def _build_valid(self, node: s.Schema, budget: int) -> SearchStrategy[Any]:
        if isinstance(node, s.OptionalSchema):
            return self.valid(node.schema, budget)
        if isinstance(node, s.ImportedSchema):
            return self.valid(node.root, budget)
        if isinstance(node, s.LinkSchema):
            return st.nothing() if budget <= 0 or node.target is None else self.valid(node.target, budget - 1)
        if isinstance(node, s.NeverSchema):
            return st.nothing()
        if isinstance(node, s.PatternPropertiesSchema):
            return self.valid(node.base, budget).filter(self.accepts(node))
        if isinstance(node, s.PrefixArraySchema):
            return st.lists(_JSON, max_size=_SIZE).filter(self.accepts(node))
        if isinstance(node, s.AllOfSchema | s.OneOfSchema):
            # JSON Schema's own shapes: drawn from their parts, kept when the whole accepts them.
            parts = node.parts if isinstance(node, s.AllOfSchema) else node.options
            return st.one_of([self.valid(part, budget) for part in parts]).filter(self.accepts(node))
        if isinstance(node, s.RefSchema):
            return self.valid(self.named[node.name], budget - 1)
        if isinstance(node, s.StringSchema):
            return _strings(node)
        if isinstance(node, s.IntegerSchema | s.NumberSchema):
            return self._valid_number(node)
        if isinstance(node, s.BooleanSchema):
            return st.booleans()
        if isinstance(node, s.NullSchema):
            return st.none()
        if isinstance(node, s.EnumSchema):
            return st.sampled_from(_with_twins(node.values))
        if isinstance(node, s.ConstSchema):
            return st.sampled_from(_with_twins((node.value,))).map(copy_json)
        if isinstance(node, s.AnySchema):
            return _JSON
        if isinstance(node, s.ArraySchema):
            if not self.can(node.items, budget):
                return st.nothing() if node.min_items else st.builds(list)
            low = node.min_items or 0
            high = low + _SIZE if node.max_items is None else min(node.max_items, low + _SIZE)
            unique = json_key if node.unique_items else None
            if unique is not None and low > _distinct(node.items):
                return st.nothing()  # fewer distinct items exist than the array needs
            high = high if unique is None else int(min(high, max(low, _distinct(node.items))))
            listed = st.lists(self.valid(node.items, budget), min_size=low, max_size=high, unique_by=unique)
            if unique is not None:
                try:  # items that reach few values only through refs (None, at the depth limit) are found here
                    listed.validate()
                except InvalidArgument:
                    return st.nothing()
            return listed
        if isinstance(node, s.TupleSchema):
            return st.tuples(*(self.valid(item, budget) for item in node.items)).map(list)
        if isinstance(node, s.ObjectSchema):
            return self._valid_object(node, budget)
        if isinstance(node, s.RecordSchema):
            if not self.can(node.values, budget):
                return st.builds(dict)
            low = node.min_properties or 0
            high = low + _SIZE if node.max_properties is None else min(node.max_properties, low + _SIZE)
            return st.dictionaries(_KEYS, self.valid(node.values, budget), min_size=low, max_size=high)
        if isinstance(node, s.UnionSchema):
            return st.one_of([self.valid(option, budget) for option in node.options if self.can(option, budget)])
        if isinstance(node, s.NullableSchema):
            if not self.can(node.schema, budget):
                return st.none()
            return st.none() | self.valid(node.schema, budget)
        raise TypeError(f"no strategy for {type(node).__name__}")  # pragma: no cover - every node is above

    def _valid_number(self, node: s.IntegerSchema | s.NumberSchema) -> SearchStrategy[Any]:
        low, high = _inclusive(node)
        integers = _bounded_integers(*_integer_bounds(node))
        if isinstance(node, s.IntegerSchema):
            numbers = st.one_of(integers, integers, integers.map(_integral_float))
        else:
            # An exclusive bound is moved to the nearest float inside it.
            low_float = _float_from(node.minimum, up=True, strictly=False) if node.minimum is not None else None
            if node.exclusive_minimum is not None:
                beyond = _float_from(node.exclusive_minimum, up=True, strictly=True)
                low_float = beyond if low_float is None or beyond is None else max(low_float, beyond)
            high_float = _float_from(node.maximum, up=False, strictly=False) if node.maximum is not None else None
            if node.exclusive_maximum is not None:
                below = _float_from(node.exclusive_maximum, up=False, strictly=True)
                high_float = below if high_float is None or below is None else min(high_float, below)
            numbers = integers | _floats(low_float, high_float)
        if node.multiple_of is None:
            return numbers
        # Multiples of the step within the bounds; a float step's multiples are kept only if
        # the float division says so (see multiple_ok), which most are.
        step = node.multiple_of
        first = -_SPAN_STEPS if low is None else math.ceil(low / step)
        last = first + 2 * _SPAN_STEPS if high is None else min(math.floor(high / step), first + 2 * _SPAN_STEPS)
        if low is None and high is not None:
            first = last - 2 * _SPAN_STEPS
        multiples = st.integers(first, last).map(lambda k: k * step) if first <= last else st.nothing()
        if isinstance(node, s.IntegerSchema):
            multiples = multiples.filter(lambda x: float(x).is_integer()).map(int)
        return multiples.filter(self.accepts(node))

    def _valid_object(self, node: s.ObjectSchema, budget: int) -> SearchStrategy[Any]:
        required: dict[str, SearchStrategy[Any]] = {}
        optional: dict[str, SearchStrategy[Any]] = {}
        for name, sub in node.field_items:
            if not isinstance(sub, s.OptionalSchema):
                required[name] = self.valid(sub, budget)
            elif self.can(sub, budget):
                optional[name] = self.valid(sub, budget)
        fields = st.fixed_dictionaries(required, optional=optional)
        if node.extra != "forbid":
            values = self.valid(node.extra, budget) if isinstance(node.extra, s.Schema) else _JSON
            extras = st.dictionaries(_keys_outside(node), values, max_size=2 + (node.min_properties or 0))
            fields = st.builds(lambda known, unknown: {**known, **unknown}, fields, extras)
        if node.min_properties is None and node.max_properties is None:
            return fields
        return fields.filter(self.accepts(node))

    # -- invalid values ------------------------------------------------------------------------

    def invalid(self, node: s.Schema, budget: int) -> SearchStrategy[Any]:
        """Values *node* rejects; a valid value around a bad one goes at most *budget* refs deep."""
        if isinstance(node, s.OptionalSchema):
            return self.invalid(node.schema, budget)
        if isinstance(node, s.RefSchema) and budget > 0:
            return self.invalid(self.named[node.name], budget - 1)
        key = (id(node), budget)
        if key not in self._invalid:
            self._keep.append(node)
            # Half the values are wrong at the node itself, half a container with one bad item or field,
            # so that values wrong deep inside, whose issues have long paths, are not rare.
            here = _evenly([_NON_JSON, st.one_of(self.wrong_kinds(node)), *self._build_invalid(node, budget)])
            inside = self._invalid_inside(node, budget)
            self._invalid[key] = here if inside is None else _evenly([here, inside])
        return self._invalid[key]

    def _invalid_inside(self, node: s.Schema, budget: int) -> SearchStrategy[Any] | None:
        """A valid container, *node*, with one item, field or value wrong (None if *node* holds none)."""
        if not self.can(node, budget):
            return None
        if isinstance(node, s.ArraySchema):
            return _with_item(self.valid(node, budget), self.invalid(node.items, budget))
        if isinstance(node, s.TupleSchema):
            shell = self.valid(node, budget)
            return st.one_of(
                [_replaced(shell, index, self.invalid(item, budget)) for index, item in enumerate(node.items)]
            )
        if isinstance(node, s.ObjectSchema) and node.field_items:
            shell = self.valid(node, budget)
            bad = [st.builds(_set, shell, st.just(name), self.invalid(sub, budget)) for name, sub in node.field_items]
            return st.one_of(bad)
        if isinstance(node, s.RecordSchema):
            return st.builds(_set, self.valid(node, budget), _KEYS, self.invalid(node.values, budget))
        return None

    def _build_invalid(self, node: s.Schema, budget: int) -> list[SearchStrategy[Any]]:
        """The ways *node* in particular can be wrong, besides a non-JSON value or a wrong kind."""
        if isinstance(node, s.StringSchema):
            return self._invalid_string(node)
        if isinstance(node, s.IntegerSchema | s.NumberSchema):
            ways = _out_of_bounds(*_inclusive(node))
            if node.multiple_of is not None:
                # Between two multiples: a third of a step past one, or an integer that is not a multiple.
                step = node.multiple_of
                off = st.builds(
                    lambda k, part: k * step + part * step, st.integers(-50, 50), st.sampled_from([0.5, 1 / 3])
                )
                nudged = st.builds(lambda k: k * step + 1, st.integers(-50, 50)) if isinstance(step, int) else off
                ways.append(_rejected(off | nudged, self.accepts(node), self.rejects_surely(node)))
            return ways
        if isinstance(node, s.EnumSchema):
            near = st.sampled_from(_near_members(node.values)) | _SCALARS
            return [_rejected(near, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.ConstSchema):
            near = st.sampled_from(_near_const(node.value)) | _SCALARS | _JSON
            return [_rejected(near, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.AnySchema):
            return [_NON_JSON_INSIDE]
        if isinstance(node, s.ArraySchema):
            return self._invalid_array(node, budget)
        if isinstance(node, s.TupleSchema):
            return self._invalid_tuple(node, budget)
        if isinstance(node, s.ObjectSchema):
            return self._invalid_object(node, budget)
        if isinstance(node, s.RecordSchema):
            shell = self.valid(node, budget)
            values = self.valid(node.values, budget) if self.can(node.values, budget) else _SCALARS
            return [st.builds(_set, shell, _BAD_KEYS, values)]
        if isinstance(node, s.UnionSchema):
            # Wrong for one option may be right for another: each candidate is checked against the union.
            candidates = st.one_of([self.invalid(option, budget) for option in node.options])
            return [_rejected(candidates, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.NullableSchema):
            # Rejected by the inner schema and not None is rejected by the nullable.
            return [_rejected(self.invalid(node.schema, budget), _is_none, self.rejects_surely(node))]
        return []  # booleans, null, and a ref past the depth: only a wrong kind

    def _invalid_string(self, node: s.StringSchema) -> list[SearchStrategy[Any]]:
        low, high = node.min_length or 0, node.max_length
        ways: list[SearchStrategy[Any]] = []
        if low > 0:
            ways.append(_text(max(low - 1 - _SIZE, 0), low - 1) if low <= _LONGEST else _text(0, _SIZE))
        if high is not None and high < _LONGEST:
            ways.append(_text(high + 1, high + 1 + _SIZE))
        # Text of a valid length with one character a lone surrogate, which no UTF-8 text holds.
        surrogate = st.sampled_from(["\ud800", "\udfff"])
        ways.append(
            st.builds(
                _surrogate_in,
                _text(max(low, 1), None if high is None else max(high, 1)),
                st.integers(0, _SIZE),
                surrogate,
            )
        )
        if node.pattern is not None:
            regex = re.compile(node.pattern)
            ways.append(
                _rejected(_text(low, high), lambda text: regex.search(text) is not None, self.rejects_surely(node))
            )
        if node.format in _FORMAT_MISSES:
            misses = st.sampled_from(_FORMAT_MISSES[node.format]) | _text(low, high)
            ways.append(_rejected(misses, self.accepts(node), self.rejects_surely(node)))
        return ways

    def _invalid_array(self, node: s.ArraySchema, budget: int) -> list[SearchStrategy[Any]]:
        ways: list[SearchStrategy[Any]] = []
        if self.can(node, budget):
            ways.append(self.valid(node, budget).map(tuple))
            fewest = max(node.min_items or 0, 1)
            if node.unique_items and fewest <= _LONGEST and self.can(node.items, budget):
                # A valid list of at least one item, with one of them again (as its JSON twin, sometimes).
                most = fewest + _SIZE if node.max_items is None else max(min(node.max_items, fewest + _SIZE), fewest)
                filled = st.lists(self.valid(node.items, budget), min_size=fewest, max_size=most, unique_by=json_key)
                ways.append(st.builds(_repeat, filled, st.integers(0, _SIZE), st.integers(0, _SIZE + 1)))
        if self.can(node.items, budget):
            items = self.valid(node.items, budget)
            low, high = node.min_items, node.max_items
            if low and low <= _LONGEST:
                ways.append(st.lists(items, min_size=max(low - 1 - _SIZE, 0), max_size=low - 1))
            if high is not None and high < _LONGEST:
                ways.append(st.lists(items, min_size=high + 1, max_size=high + 1 + _SIZE))
        return ways

    def _invalid_tuple(self, node: s.TupleSchema, budget: int) -> list[SearchStrategy[Any]]:
        if not self.can(node, budget):
            return []
        shell = self.valid(node, budget)
        return [
            shell.map(lambda items: items[:-1]),
            st.builds(lambda items, more: [*items, more], shell, _SCALARS),
            shell.map(tuple),
        ]

    def _invalid_object(self, node: s.ObjectSchema, budget: int) -> list[SearchStrategy[Any]]:
        if not self.can(node, budget):
            return []
        shell = self.valid(node, budget)
        ways: list[SearchStrategy[Any]] = [st.builds(_set, shell, _BAD_KEYS, _SCALARS)]
        if node.required:
            ways.append(st.builds(_without, shell, st.sampled_from(node.required)))
        if node.extra == "forbid":
            ways.append(st.builds(_set, shell, _keys_outside(node), _JSON))
        elif node.extra == "allow":
            ways.append(st.builds(_set, shell, _keys_outside(node), _NON_JSON))
        return ways


def _repeat(items: list[Any], which: int, where: int) -> list[Any]:
    """*items* with a copy of one of them inserted again; an integral number comes back as its twin."""
    item = items[which % len(items)]
    if isinstance(item, int | float) and not isinstance(item, bool) and float(item).is_integer():
        item = _with_twins((item,))[-1]
    return [*items[: where % (len(items) + 1)], copy_json(item), *items[where % (len(items) + 1) :]]


def _near_const(value: Any) -> list[Any]:
    """Values close to a const, most of them not equal to it: a scalar's neighbours, a container one off."""
    if isinstance(value, list):
        return [value[:-1], [*value, None], [value], {}] if value else [[None], {}, None]
    if isinstance(value, dict):
        near: list[Any] = [{**value, "extra": None}, list(value.values()), []]
        near += [{key: [item] for key, item in value.items()}, dict(list(value.items())[:-1])]
        return near
    return _near_members((value,))


def _is_none(value: Any) -> bool:
    return value is None


def _surrogate_in(text: str, index: int, surrogate: str) -> str:
    """*text* with its character at *index* (modulo its length) replaced by *surrogate*."""
    index %= len(text)
    return text[:index] + surrogate + text[index + 1 :]


def _offset(minutes: int) -> str:
    if minutes == 0:
        return "Z"
    sign = "+" if minutes > 0 else "-"
    return f"{sign}{abs(minutes) // 60:02}:{abs(minutes) % 60:02}"


_OFFSETS = st.integers(-(23 * 60 + 59), 23 * 60 + 59).map(_offset)
_DATES = st.dates(min_value=date(1, 1, 1)).map(lambda day: day.isoformat())
_TIMES = st.builds(lambda moment, offset: moment.isoformat() + offset, st.times(), _OFFSETS)

# Values of each checked format (s.string(format=...)), and strings close to them that are not.
_FORMAT_VALUES: dict[str, SearchStrategy[str]] = {
    "date": _DATES,
    "time": _TIMES,
    "date-time": st.builds(lambda day, moment, t: f"{day}{t}{moment}", _DATES, _TIMES, st.sampled_from("Tt")),
    "email": st.sampled_from(["name@example.com", "a.b+c@mail.example.org", '"a b"@example.com', "x@[192.0.2.1]"]),
    "uri": st.sampled_from(["https://example.com/page?q=1#top", "mailto:name@example.com", "urn:isbn:0451450523"])
    | st.builds(lambda path: "https://example.com/" + path, st.text(string.ascii_letters + "-._~/", max_size=8)),
    "uuid": st.uuids().map(str) | st.uuids().map(lambda found: str(found).upper()),
    "ipv4": st.ip_addresses(v=4).map(str),
    "ipv6": st.ip_addresses(v=6).map(str),
}
_FORMAT_MISSES: dict[str, list[str]] = {
    "date": ["2024-02-30", "2023-02-29", "2024-13-01", "2024-5-1", "20240501", "2024-05-01T00:00:00Z"],
    "time": ["12:00:00", "24:00:00Z", "12:60:00Z", "12:00:60Z", "12:00:00+24:00", "1200Z"],
    "date-time": ["2024-05-01 12:00:00Z", "2024-05-01T12:00:00", "2024-02-30T12:00:00Z", "2024-05-01T23:59:61Z"],
    "email": ["name", "name@", "@example.com", ".name@example.com", "na..me@example.com", "a b@example.com"],
    "uri": ["example.com", "/page", "//example.com/page", "https://exa mple.com", "http://[::1", "https://é.com"],
    "uuid": ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b"],
    "ipv4": ["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "::1"],
    "ipv6": ["::1::", "12345::", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", "1.2.3.4"],
}


def _strings(node: s.StringSchema) -> SearchStrategy[str]:
    low, high = node.min_length or 0, node.max_length
    if node.format in _FORMAT_VALUES:
        # A format and other constraints together: the format's values that meet them, and text that does.
        check = compile_schema(node, {})
        formatted = _FORMAT_VALUES[node.format]
        candidates = formatted if node.pattern is None else formatted | _patterned(node.pattern, low, high)
        return candidates.filter(lambda text: check.run(text)[0])
    if node.pattern is None:
        return _text(low, high)
    return _patterned(node.pattern, low, high)


def _patterned(pattern: str, low: int, high: int | None) -> SearchStrategy[str]:
    regex = re.compile(pattern)
    # The pattern is searched (re.search): a full match is one, and so is text around a match.
    match = st.from_regex(regex, fullmatch=True, alphabet=_CHARS)
    matches = match | st.from_regex(regex, alphabet=_CHARS)
    if low > 0:
        # A long minimum is rarely met by chance: text before or after a match, if the pattern allows it.
        padded = st.builds(
            lambda pad, found, after: found + pad if after else pad + found, _text(low, high), match, st.booleans()
        )
        matches |= padded
    return matches.filter(
        lambda text: low <= len(text) and (high is None or len(text) <= high) and regex.search(text) is not None
    )


def _inclusive(node: s.IntegerSchema | s.NumberSchema) -> tuple[float | None, float | None]:
    """The tightest inclusive bounds of *node* that hold every value it accepts, exclusive ones counted.

    An exclusive bound stands for itself here: the values just past it are
    what the strategies then draw (valid ones are kept off it, see ``_valid_number``).
    """
    low, high = node.minimum, node.maximum
    if node.exclusive_minimum is not None:
        low = node.exclusive_minimum if low is None else max(low, node.exclusive_minimum)
    if node.exclusive_maximum is not None:
        high = node.exclusive_maximum if high is None else min(high, node.exclusive_maximum)
    return low, high


def _integer_bounds(node: s.IntegerSchema | s.NumberSchema) -> tuple[float | None, float | None]:
    """The inclusive bounds of the integers *node* accepts: an exclusive bound's own integer left out."""
    low, high = node.minimum, node.maximum
    if node.exclusive_minimum is not None:
        past = math.floor(node.exclusive_minimum) + 1
        low = past if low is None else max(math.ceil(low), past)
    if node.exclusive_maximum is not None:
        before = math.ceil(node.exclusive_maximum) - 1
        high = before if high is None else min(math.floor(high), before)
    return low, high


def _out_of_bounds(minimum: float | None, maximum: float | None) -> list[SearchStrategy[Any]]:
    """Numbers below *minimum* and above *maximum*, integers and floats (for both an integer and a number)."""
    ways: list[SearchStrategy[Any]] = []
    if minimum is not None:
        below = math.ceil(minimum) - 1
        ways.append(st.integers(below - 1000, below))
        high = _float_from(minimum, up=False, strictly=True)
        if high is not None:
            ways.append(st.floats(max_value=high, allow_nan=False, allow_infinity=False))
    if maximum is not None:
        above = math.floor(maximum) + 1
        ways.append(st.integers(above, above + 1000))
        low = _float_from(maximum, up=True, strictly=True)
        if low is not None:
            ways.append(st.floats(min_value=low, allow_nan=False, allow_infinity=False))
    return ways


def _with_twins(values: tuple[Any, ...]) -> list[Any]:
    """Enum members, each integral number also as its twin (``1`` and ``1.0`` are one JSON number)."""
    out = list(values)
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
            out.append(float(value) if isinstance(value, int) else int(value))
    return out


def _near_members(values: tuple[Any, ...]) -> list[Any]:
    """Values close to the members of an enum, most of them not members: the mistakes a caller makes."""
    near: list[Any] = []
    for value in values:
        if isinstance(value, str):
            near += [value.upper(), value + "s", value[:-1], f" {value}"]
        elif isinstance(value, bool):
            near += [not value, int(value), str(value).lower()]
        elif isinstance(value, int | float):
            near += [value + 1, value - 0.5, str(value), bool(value)]
        else:
            near += ["null", "None", 0, False]
    return near


def _keys_outside(node: s.ObjectSchema) -> SearchStrategy[str]:
    """Keys that are not fields of *node*, often a field's name misspelt."""
    names = {name for name, _ in node.field_items}
    typos = [
        typo
        for name in names
        for typo in (name + "s", name[:-1], name.upper(), "_" + name, name[1:] + name[:1])
        if typo not in names
    ]
    keys = (st.sampled_from(typos) | _KEYS) if typos else _KEYS
    return keys.filter(lambda key: key not in names)


# -- the public functions ----------------------------------------------------------------------


def strategy(schema: s.Schema, *, defs: Mapping[str, s.Schema] | None = None) -> SearchStrategy[Any]:
    """A Hypothesis strategy for values *schema* accepts.

    Values are small (containers hold at most five items or keys more
    than their minimum) and varied: optional fields are sometimes present,
    ``extra="allow"`` and ``"ignore"`` objects sometimes have unknown keys, a
    union gives values of each option, a nullable is sometimes ``None``.

    Args:
        schema: the schema the values must match.
        defs: the named schemas ``s.ref(name)`` resolves to; recursive ones give
            values at most three refs deep (or as deep as required).

    Returns:
        A strategy of values that ``schema.parse`` accepts (with *defs*: that a
        validator resolving refs through *defs* accepts). A schema no value
        matches (``s.integer(minimum=0.5, maximum=0.7)``) gives one that Hypothesis
        reports unsatisfiable.

    Raises:
        InvalidDefinitionError: a ref names a schema *defs* does not have, a
            named schema refers to itself before it describes a value (``x`` is
            ``s.union(s.ref("x"), ...)``), or every value of *schema* would nest
            named schemas without end.

    """
    plan = _Plan(schema, defs)
    need = plan.need(schema)
    if need == _NEVER:
        endless = sorted(name for name, named in plan.needs.items() if named == _NEVER)
        raise InvalidDefinitionError(
            "strategy()",
            "schema",
            f"has no finite value: each value would hold another through s.ref({endless[0]!r}) without end; "
            "make a field optional or nullable, or let an array be empty",
        )
    return plan.valid(schema, max(_REF_DEPTH, int(need)))


def invalid_strategy(schema: s.Schema, *, defs: Mapping[str, s.Schema] | None = None) -> SearchStrategy[Any]:
    """A Hypothesis strategy for values *schema* rejects, in every way a value can be wrong.

    The mix: a non-JSON value (NaN, an infinity, a set, bytes, a tuple, an
    ``object()``, a dict with a non-string key, a lone surrogate); a value of a
    JSON kind the schema never accepts; a bound missed (a string too short or
    too long, a number out of range, too few or too many items); a pattern
    missed; a value close to an enum's members but not one; a required field
    missing; an unknown key where ``extra="forbid"``, or a non-JSON one where
    ``"allow"``; and a valid array, tuple, object or record with one such value
    deep inside, so issues have paths. ``s.any()`` rejects only non-JSON values.

    Args:
        schema: the schema that must reject the values.
        defs: the named schemas ``s.ref(name)`` resolves to.

    Returns:
        A strategy of values that ``schema.parse`` (with *defs*: a validator
        resolving refs through *defs*) rejects with a ``SchemaError``.

    Raises:
        InvalidDefinitionError: a ref names a schema *defs* does not have, or a
            named schema refers to itself before it describes a value.

    """
    plan = _Plan(schema, defs)
    need = plan.need(schema)
    # A valid value around the bad one needs this depth; with none, values are wrong at the root only.
    return plan.invalid(schema, _REF_DEPTH if need == _NEVER else max(_REF_DEPTH, int(need)))
