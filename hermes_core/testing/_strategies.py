"""Hypothesis strategies for schemas: values a schema accepts, and values it rejects.

:func:`strategy` generates values that ``schema.parse`` accepts; :func:`invalid_strategy`
generates values it rejects, mixing every way a value can be wrong, from a wrong
type at the root to one bad item deep inside an otherwise valid value.

This module and the two it draws leaf and plain JSON values from
(``_strategy_scalars``, ``_strategy_json``) are the only ones of ``hermes_core``
that import Hypothesis as they are imported; the testing package imports this
one only when a strategy is asked for. What a schema needs and admits (ref
depth, JSON kinds) is worked out in ``_strategy_needs``, without Hypothesis.

Named schemas (``s.ref``) are followed through *defs*. A value goes at most
three refs deep, or as deep as the schema requires if that is more: past the
limit, each node takes the ways out that need the fewest refs (an absent
optional field, an empty array, ``None``...), so recursive schemas give finite
values.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError
from hermes_core.schema._inputs import shape_of
from hermes_core.schema._validators import compile_schema, copy_json, json_key
from hermes_core.testing._strategy_json import (
    BAD_KEYS,
    JSON,
    KEYS,
    NON_JSON,
    NON_JSON_INSIDE,
    OF_KIND,
    SCALARS,
    SIZE,
    evenly,
    rejected,
    replaced,
    set_key,
    with_item,
    without_key,
)
from hermes_core.testing._strategy_needs import NEVER, Kinds, distinct_count, kinds_of, named_schemas, ref_need
from hermes_core.testing._strategy_scalars import (
    FORMAT_MISSES,
    bounded_integers,
    finite_floats,
    float_from,
    inclusive,
    integer_bounds,
    integral_float,
    near_const,
    near_members,
    out_of_bounds,
    string_values,
    surrogate_in,
    texts,
    with_twins,
)

__all__ = ["invalid_strategy", "strategy"]

# How many refs deep a generated value goes, unless its schema requires more.
_REF_DEPTH = 3
# A length or count beyond which no value "just past the bound" is built: it would be as long.
_LONGEST = 10_000
# How many steps of a multiple_of an unbounded side of a number spans.
_SPAN_STEPS = 1000


# -- the strategies ----------------------------------------------------------------------------


class _Plan:
    """The strategies for one schema and its named schemas, built once per node and ref depth.

    A strategy for a node is asked for with a *budget*: how many refs deep its
    values may still go. It is only asked for when the node has a value within
    the budget (``need(node) <= budget``), and it keeps to the choices that do.
    """

    def __init__(self, schema: s.Schema, defs: Mapping[str, s.Schema] | None) -> None:
        self.defs: Mapping[str, s.Schema] = {} if defs is None else defs
        self.named = named_schemas(schema, self.defs)
        # Both are least fixed points over the named schemas, which may refer to each other.
        self.needs: dict[str, float] = dict.fromkeys(self.named, NEVER)
        self.kinds: dict[str, Kinds] = dict.fromkeys(self.named, frozenset())
        changed = True
        while changed:
            changed = False
            for name, target in self.named.items():
                need, kinds = ref_need(target, self.needs), kinds_of(target, self.kinds)
                if need != self.needs[name] or kinds != self.kinds[name]:
                    self.needs[name], self.kinds[name], changed = need, kinds, True
        self._valid: dict[tuple[int, int], SearchStrategy[Any]] = {}
        self._invalid: dict[tuple[int, int], SearchStrategy[Any]] = {}
        self._keep: list[s.Schema] = []  # the nodes whose ids key the caches stay alive with them

    def need(self, node: s.Schema) -> float:
        """How many refs deep the shallowest value of *node* goes (infinite: it has none)."""
        return ref_need(node, self.needs)

    def can(self, node: s.Schema, budget: int) -> bool:
        """Whether *node* has values within *budget* refs, and the strategies find some.

        A leaf may have none (``s.integer(minimum=0.5, maximum=0.7)``): then an
        array of it is empty, an optional field of it absent, and so on.
        """
        return self.need(node) <= budget and not self.valid(node, budget).is_empty

    def wrong_kinds(self, node: s.Schema) -> list[SearchStrategy[Any]]:
        """Values of the JSON kinds *node* never accepts (none for ``s.any()``)."""
        accepted = kinds_of(node, self.kinds)
        return [OF_KIND[kind] for kind in OF_KIND if kind not in accepted]

    def rejects_surely(self, node: s.Schema) -> SearchStrategy[Any]:
        """Values *node* rejects by their kind alone: the ones the other constructions fall back on."""
        return st.one_of(NON_JSON, *self.wrong_kinds(node))

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
            return st.lists(JSON, max_size=SIZE).filter(self.accepts(node))
        if isinstance(node, s.AllOfSchema | s.OneOfSchema):
            # JSON Schema's own shapes: drawn from their parts, kept when the whole accepts them.
            parts = node.parts if isinstance(node, s.AllOfSchema) else node.options
            return st.one_of([self.valid(part, budget) for part in parts]).filter(self.accepts(node))
        if isinstance(node, s.RefSchema):
            return self.valid(self.named[node.name], budget - 1)
        if isinstance(node, s.StringSchema):
            return string_values(node)
        if isinstance(node, s.IntegerSchema | s.NumberSchema):
            return self._valid_number(node)
        if isinstance(node, s.BooleanSchema):
            return st.booleans()
        if isinstance(node, s.NullSchema):
            return st.none()
        if isinstance(node, s.EnumSchema):
            return st.sampled_from(with_twins(node.values))
        if isinstance(node, s.ConstSchema):
            return st.sampled_from(with_twins((node.value,))).map(copy_json)
        if isinstance(node, s.AnySchema):
            return JSON
        if isinstance(node, s.ArraySchema):
            if not self.can(node.items, budget):
                return st.nothing() if node.min_items else st.builds(list)
            low = node.min_items or 0
            high = low + SIZE if node.max_items is None else min(node.max_items, low + SIZE)
            unique = json_key if node.unique_items else None
            if unique is not None and low > distinct_count(node.items):
                return st.nothing()  # fewer distinct items exist than the array needs
            high = high if unique is None else int(min(high, max(low, distinct_count(node.items))))
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
            high = low + SIZE if node.max_properties is None else min(node.max_properties, low + SIZE)
            return st.dictionaries(KEYS, self.valid(node.values, budget), min_size=low, max_size=high)
        if isinstance(node, s.UnionSchema):
            return st.one_of([self.valid(option, budget) for option in node.options if self.can(option, budget)])
        if isinstance(node, s.NullableSchema):
            if not self.can(node.schema, budget):
                return st.none()
            return st.none() | self.valid(node.schema, budget)
        shape = shape_of(node)
        if shape is not node:  # an imported schema object's in-place keywords (if, not...): drawn from its shape
            return self.valid(shape, budget).filter(self.accepts(node))
        raise TypeError(f"no strategy for {type(node).__name__}")  # pragma: no cover - every node is above

    def _valid_number(self, node: s.IntegerSchema | s.NumberSchema) -> SearchStrategy[Any]:
        low, high = inclusive(node)
        integers = bounded_integers(*integer_bounds(node))
        if isinstance(node, s.IntegerSchema):
            numbers = st.one_of(integers, integers, integers.map(integral_float))
        else:
            # An exclusive bound is moved to the nearest float inside it.
            low_float = float_from(node.minimum, up=True, strictly=False) if node.minimum is not None else None
            if node.exclusive_minimum is not None:
                beyond = float_from(node.exclusive_minimum, up=True, strictly=True)
                low_float = beyond if low_float is None or beyond is None else max(low_float, beyond)
            high_float = float_from(node.maximum, up=False, strictly=False) if node.maximum is not None else None
            if node.exclusive_maximum is not None:
                below = float_from(node.exclusive_maximum, up=False, strictly=True)
                high_float = below if high_float is None or below is None else min(high_float, below)
            numbers = integers | finite_floats(low_float, high_float)
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
            values = self.valid(node.extra, budget) if isinstance(node.extra, s.Schema) else JSON
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
            here = evenly([NON_JSON, st.one_of(self.wrong_kinds(node)), *self._build_invalid(node, budget)])
            inside = self._invalid_inside(node, budget)
            self._invalid[key] = here if inside is None else evenly([here, inside])
        return self._invalid[key]

    def _invalid_inside(self, node: s.Schema, budget: int) -> SearchStrategy[Any] | None:
        """A valid container, *node*, with one item, field or value wrong (None if *node* holds none)."""
        if not self.can(node, budget):
            return None
        if isinstance(node, s.ArraySchema):
            return with_item(self.valid(node, budget), self.invalid(node.items, budget))
        if isinstance(node, s.TupleSchema):
            shell = self.valid(node, budget)
            return st.one_of(
                [replaced(shell, index, self.invalid(item, budget)) for index, item in enumerate(node.items)]
            )
        if isinstance(node, s.ObjectSchema) and node.field_items:
            shell = self.valid(node, budget)
            bad = [
                st.builds(set_key, shell, st.just(name), self.invalid(sub, budget)) for name, sub in node.field_items
            ]
            return st.one_of(bad)
        if isinstance(node, s.RecordSchema):
            return st.builds(set_key, self.valid(node, budget), KEYS, self.invalid(node.values, budget))
        return None

    def _build_invalid(self, node: s.Schema, budget: int) -> list[SearchStrategy[Any]]:
        """The ways *node* in particular can be wrong, besides a non-JSON value or a wrong kind."""
        if isinstance(node, s.StringSchema):
            return self._invalid_string(node)
        if isinstance(node, s.IntegerSchema | s.NumberSchema):
            ways = out_of_bounds(*inclusive(node))
            if node.multiple_of is not None:
                # Between two multiples: a third of a step past one, or an integer that is not a multiple.
                step = node.multiple_of
                off = st.builds(
                    lambda k, part: k * step + part * step, st.integers(-50, 50), st.sampled_from([0.5, 1 / 3])
                )
                nudged = st.builds(lambda k: k * step + 1, st.integers(-50, 50)) if isinstance(step, int) else off
                ways.append(rejected(off | nudged, self.accepts(node), self.rejects_surely(node)))
            return ways
        if isinstance(node, s.EnumSchema):
            near = st.sampled_from(near_members(node.values)) | SCALARS
            return [rejected(near, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.ConstSchema):
            near = st.sampled_from(near_const(node.value)) | SCALARS | JSON
            return [rejected(near, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.AnySchema):
            return [NON_JSON_INSIDE]
        if isinstance(node, s.ArraySchema):
            return self._invalid_array(node, budget)
        if isinstance(node, s.TupleSchema):
            return self._invalid_tuple(node, budget)
        if isinstance(node, s.ObjectSchema):
            return self._invalid_object(node, budget)
        if isinstance(node, s.RecordSchema):
            shell = self.valid(node, budget)
            values = self.valid(node.values, budget) if self.can(node.values, budget) else SCALARS
            return [st.builds(set_key, shell, BAD_KEYS, values)]
        if isinstance(node, s.UnionSchema):
            # Wrong for one option may be right for another: each candidate is checked against the union.
            candidates = st.one_of([self.invalid(option, budget) for option in node.options])
            return [rejected(candidates, self.accepts(node), self.rejects_surely(node))]
        if isinstance(node, s.NullableSchema):
            # Rejected by the inner schema and not None is rejected by the nullable.
            return [rejected(self.invalid(node.schema, budget), _is_none, self.rejects_surely(node))]
        return []  # booleans, null, and a ref past the depth: only a wrong kind

    def _invalid_string(self, node: s.StringSchema) -> list[SearchStrategy[Any]]:
        low, high = node.min_length or 0, node.max_length
        ways: list[SearchStrategy[Any]] = []
        if low > 0:
            ways.append(texts(max(low - 1 - SIZE, 0), low - 1) if low <= _LONGEST else texts(0, SIZE))
        if high is not None and high < _LONGEST:
            ways.append(texts(high + 1, high + 1 + SIZE))
        # Text of a valid length with one character a lone surrogate, which no UTF-8 text holds.
        surrogate = st.sampled_from(["\ud800", "\udfff"])
        ways.append(
            st.builds(
                surrogate_in,
                texts(max(low, 1), None if high is None else max(high, 1)),
                st.integers(0, SIZE),
                surrogate,
            )
        )
        if node.pattern is not None:
            regex = re.compile(node.pattern)
            ways.append(
                rejected(texts(low, high), lambda text: regex.search(text) is not None, self.rejects_surely(node))
            )
        if node.format in FORMAT_MISSES:
            misses = st.sampled_from(FORMAT_MISSES[node.format]) | texts(low, high)
            ways.append(rejected(misses, self.accepts(node), self.rejects_surely(node)))
        return ways

    def _invalid_array(self, node: s.ArraySchema, budget: int) -> list[SearchStrategy[Any]]:
        ways: list[SearchStrategy[Any]] = []
        if self.can(node, budget):
            ways.append(self.valid(node, budget).map(tuple))
            fewest = max(node.min_items or 0, 1)
            if node.unique_items and fewest <= _LONGEST and self.can(node.items, budget):
                # A valid list of at least one item, with one of them again (as its JSON twin, sometimes).
                most = fewest + SIZE if node.max_items is None else max(min(node.max_items, fewest + SIZE), fewest)
                filled = st.lists(self.valid(node.items, budget), min_size=fewest, max_size=most, unique_by=json_key)
                ways.append(st.builds(_repeat, filled, st.integers(0, SIZE), st.integers(0, SIZE + 1)))
        if self.can(node.items, budget):
            items = self.valid(node.items, budget)
            low, high = node.min_items, node.max_items
            if low and low <= _LONGEST:
                ways.append(st.lists(items, min_size=max(low - 1 - SIZE, 0), max_size=low - 1))
            if high is not None and high < _LONGEST:
                ways.append(st.lists(items, min_size=high + 1, max_size=high + 1 + SIZE))
        return ways

    def _invalid_tuple(self, node: s.TupleSchema, budget: int) -> list[SearchStrategy[Any]]:
        if not self.can(node, budget):
            return []
        shell = self.valid(node, budget)
        return [
            shell.map(lambda items: items[:-1]),
            st.builds(lambda items, more: [*items, more], shell, SCALARS),
            shell.map(tuple),
        ]

    def _invalid_object(self, node: s.ObjectSchema, budget: int) -> list[SearchStrategy[Any]]:
        if not self.can(node, budget):
            return []
        shell = self.valid(node, budget)
        ways: list[SearchStrategy[Any]] = [st.builds(set_key, shell, BAD_KEYS, SCALARS)]
        if node.required:
            ways.append(st.builds(without_key, shell, st.sampled_from(node.required)))
        if node.extra == "forbid":
            ways.append(st.builds(set_key, shell, _keys_outside(node), JSON))
        elif node.extra == "allow":
            ways.append(st.builds(set_key, shell, _keys_outside(node), NON_JSON))
        return ways


def _repeat(items: list[Any], which: int, where: int) -> list[Any]:
    """*items* with a copy of one of them inserted again; an integral number comes back as its twin."""
    item = items[which % len(items)]
    if isinstance(item, int | float) and not isinstance(item, bool) and float(item).is_integer():
        item = with_twins((item,))[-1]
    return [*items[: where % (len(items) + 1)], copy_json(item), *items[where % (len(items) + 1) :]]


def _is_none(value: Any) -> bool:
    return value is None


def _keys_outside(node: s.ObjectSchema) -> SearchStrategy[str]:
    """Keys that are not fields of *node*, often a field's name misspelt."""
    names = {name for name, _ in node.field_items}
    typos = [
        typo
        for name in names
        for typo in (name + "s", name[:-1], name.upper(), "_" + name, name[1:] + name[:1])
        if typo not in names
    ]
    keys = (st.sampled_from(typos) | KEYS) if typos else KEYS
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
    if need == NEVER:
        endless = sorted(name for name, named in plan.needs.items() if named == NEVER)
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
    return plan.invalid(schema, _REF_DEPTH if need == NEVER else max(_REF_DEPTH, int(need)))
