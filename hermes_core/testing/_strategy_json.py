"""JSON values and values no JSON holds, for the schema strategies, and the ways to place a bad value in a good one.

:data:`JSON` draws any JSON value, :data:`NON_JSON` a value no schema accepts
(NaN, bytes, a set, a dict with a non-string key...), :data:`OF_KIND` a value of
each JSON kind. :func:`with_item`, :func:`replaced` and :func:`set_key` put a
bad value inside a valid container; :func:`rejected` keeps a candidate only if a
schema refuses it; :func:`evenly` picks among groups of ways fairly.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

__all__ = [
    "BAD_KEYS",
    "CHARS",
    "INT_SPAN",
    "JSON",
    "KEYS",
    "NON_JSON",
    "NON_JSON_INSIDE",
    "OF_KIND",
    "SCALARS",
    "SIZE",
    "evenly",
    "rejected",
    "replaced",
    "set_key",
    "with_item",
    "without_key",
]

# The most items or keys a generated container holds beyond the fewest its schema allows.
SIZE = 5
# How many candidates are tried before a value certain to be rejected is drawn instead.
_TRIES = 3
# Unbounded integers stay where a JSON reader holds them exactly.
INT_SPAN = 2**53

CHARS = st.one_of(st.sampled_from(string.ascii_letters + string.digits + " _-./"), st.characters(codec="utf-8"))
KEYS = st.one_of(st.sampled_from(["id", "name", "path", "mode", "tags", "x", ""]), st.text(CHARS, max_size=8))
SCALARS: SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-INT_SPAN, INT_SPAN),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(CHARS, max_size=8),
)
JSON: SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=SIZE) | st.dictionaries(KEYS, children, max_size=SIZE),
    max_leaves=10,
)

# A value of each JSON kind; "number" is a float that is not integral (an integral one is an integer).
OF_KIND: dict[str, SearchStrategy[Any]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "integer": st.integers(-1000, 1000) | st.sampled_from([2**31, -(2**53)]),
    "number": st.sampled_from([0.5, -2.5, 3.14]) | st.floats(-1e6, 1e6).filter(lambda x: not x.is_integer()),
    "string": st.text(CHARS, max_size=8),
    "array": st.lists(SCALARS, max_size=3),
    "object": st.dictionaries(KEYS, SCALARS, max_size=3),
}


def set_key(base: Mapping[Any, Any], key: Any, value: Any) -> dict[Any, Any]:
    """A copy of *base* with *key* set to *value*."""
    out = dict(base)
    out[key] = value
    return out


def without_key(base: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A copy of *base* without *key*."""
    return {name: value for name, value in base.items() if name != key}


# Keys a JSON object cannot have: not strings, or not valid Unicode.
BAD_KEYS = st.sampled_from([1, None, 2.5, ("k",), "\udfff"])

# Rejected by every schema wherever they stand: JSON has no such values.
NON_JSON: SearchStrategy[Any] = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf, b"bytes", "a lone \ud800 surrogate", 1j, Decimal("1.5")]),
    st.builds(object),
    st.sets(st.integers(-3, 3), max_size=3),
    st.tuples(SCALARS) | st.tuples(SCALARS, SCALARS),
    st.builds(set_key, st.dictionaries(KEYS, SCALARS, max_size=2), BAD_KEYS, SCALARS),
)


@st.composite
def with_item(draw: st.DrawFn, items: SearchStrategy[list[Any]], bad: SearchStrategy[Any]) -> list[Any]:
    """A list from *items* with a value of *bad* at a random index, in place of the item there or added."""
    values = list(draw(items))
    index = draw(st.integers(0, len(values)))
    if index < len(values) and draw(st.booleans()):
        values[index] = draw(bad)
    else:
        values.insert(index, draw(bad))
    return values


@st.composite
def replaced(draw: st.DrawFn, items: SearchStrategy[list[Any]], index: int, bad: SearchStrategy[Any]) -> list[Any]:
    """A list from *items* whose item at *index* is a value of *bad*."""
    values = list(draw(items))
    values[index] = draw(bad)
    return values


@st.composite
def rejected(
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


def evenly(groups: list[SearchStrategy[Any]]) -> SearchStrategy[Any]:
    """A value of one of *groups*, each as likely as another.

    ``st.one_of`` flattens the choices nested in it, so a group of six kinds
    would come up six times as often as a group of one.
    """
    kept = tuple(group for group in groups if not group.is_empty)
    if len(kept) < 2:
        return kept[0] if kept else st.nothing()
    return _pick(kept)


# Non-JSON values, also inside JSON containers: what an s.any() rejects, with a path.
NON_JSON_INSIDE: SearchStrategy[Any] = st.recursive(
    NON_JSON,
    lambda bad: (
        with_item(st.lists(JSON, max_size=3), bad)
        | st.builds(set_key, st.dictionaries(KEYS, JSON, max_size=3), KEYS, bad)
    ),
    max_leaves=3,
)
