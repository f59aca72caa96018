"""Strategies for the leaves of a schema: text, strings of a format or pattern, numbers within bounds.

Also what the invalid strategies draw near a leaf: numbers just out of bounds,
strings that miss a format, values close to an enum's members or a const.
"""

from __future__ import annotations

import math
import re
import string
import sys
from datetime import date
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from hermes_core import schema as s
from hermes_core.schema._validators import compile_schema
from hermes_core.testing._strategy_json import CHARS, INT_SPAN, SIZE

__all__ = [
    "FORMAT_MISSES",
    "bounded_integers",
    "finite_floats",
    "float_from",
    "inclusive",
    "integer_bounds",
    "integral_float",
    "near_const",
    "near_members",
    "out_of_bounds",
    "string_values",
    "surrogate_in",
    "texts",
    "with_twins",
]

# Hypothesis draws each character: a string this long or longer repeats one to reach its minimum.
_LONG = 20
_FLOAT_MAX = int(sys.float_info.max)


def texts(low: int, high: int | None) -> SearchStrategy[str]:
    """Valid Unicode text of *low* to *high* characters (at most five more than *low*)."""
    top = low + SIZE if high is None else min(high, low + SIZE)
    if low < _LONG:
        return st.text(CHARS, min_size=low, max_size=top)
    return st.builds(lambda fill, tail: fill * low + tail, CHARS, st.text(CHARS, max_size=top - low))


def bounded_integers(minimum: float | None, maximum: float | None) -> SearchStrategy[int]:
    """Integers within the inclusive bounds; an open side stops where floats still hold integers exactly."""
    low = None if minimum is None else math.ceil(minimum)
    high = None if maximum is None else math.floor(maximum)
    if low is None:
        low = -INT_SPAN if high is None or high >= -INT_SPAN else max(high - INT_SPAN, -_FLOAT_MAX)
    if high is None:
        high = INT_SPAN if low <= INT_SPAN else min(low + INT_SPAN, _FLOAT_MAX)
    return st.integers(low, high) if low <= high else st.nothing()


def float_from(bound: float, *, up: bool, strictly: bool) -> float | None:
    """The float nearest *bound* on its side (above if *up*), *bound* itself allowed unless *strictly*.

    None when there is no finite float there. An int bound may not be a float
    exactly, and Python compares an int with a float exactly.
    """
    near = float(bound)
    wrong_side = near < bound if up else near > bound
    if wrong_side or (strictly and near == bound):
        near = math.nextafter(near, math.inf if up else -math.inf)
    return near if math.isfinite(near) else None


def integral_float(number: int) -> int | float:
    """*number* as a float when the float is exact: JSON's ``2.0`` is the integer 2."""
    return float(number) if abs(number) <= INT_SPAN else number


def finite_floats(low: float | None, high: float | None) -> SearchStrategy[float]:
    """Finite floats within the inclusive bounds, which :func:`float_from` has put inside the declared ones."""
    if low is not None and high is not None and low > high:
        return st.nothing()
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


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
FORMAT_MISSES: dict[str, list[str]] = {
    "date": ["2024-02-30", "2023-02-29", "2024-13-01", "2024-5-1", "20240501", "2024-05-01T00:00:00Z"],
    "time": ["12:00:00", "24:00:00Z", "12:60:00Z", "12:00:60Z", "12:00:00+24:00", "1200Z"],
    "date-time": ["2024-05-01 12:00:00Z", "2024-05-01T12:00:00", "2024-02-30T12:00:00Z", "2024-05-01T23:59:61Z"],
    "email": ["name", "name@", "@example.com", ".name@example.com", "na..me@example.com", "a b@example.com"],
    "uri": ["example.com", "/page", "//example.com/page", "https://exa mple.com", "http://[::1", "https://é.com"],
    "uuid": ["123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}", "123e4567-e89b"],
    "ipv4": ["256.0.0.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "::1"],
    "ipv6": ["::1::", "12345::", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", "1.2.3.4"],
}


def string_values(node: s.StringSchema) -> SearchStrategy[str]:
    low, high = node.min_length or 0, node.max_length
    if node.format in _FORMAT_VALUES:
        # A format and other constraints together: the format's values that meet them, and text that does.
        check = compile_schema(node, {})
        formatted = _FORMAT_VALUES[node.format]
        candidates = formatted if node.pattern is None else formatted | _patterned(node.pattern, low, high)
        return candidates.filter(lambda text: check.run(text)[0])
    if node.pattern is None:
        return texts(low, high)
    return _patterned(node.pattern, low, high)


def _patterned(pattern: str, low: int, high: int | None) -> SearchStrategy[str]:
    regex = re.compile(pattern)
    # The pattern is searched (re.search): a full match is one, and so is text around a match.
    match = st.from_regex(regex, fullmatch=True, alphabet=CHARS)
    matches = match | st.from_regex(regex, alphabet=CHARS)
    if low > 0:
        # A long minimum is rarely met by chance: text before or after a match, if the pattern allows it.
        padded = st.builds(
            lambda pad, found, after: found + pad if after else pad + found, texts(low, high), match, st.booleans()
        )
        matches |= padded
    return matches.filter(
        lambda text: low <= len(text) and (high is None or len(text) <= high) and regex.search(text) is not None
    )


def inclusive(node: s.IntegerSchema | s.NumberSchema) -> tuple[float | None, float | None]:
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


def integer_bounds(node: s.IntegerSchema | s.NumberSchema) -> tuple[float | None, float | None]:
    """The inclusive bounds of the integers *node* accepts: an exclusive bound's own integer left out."""
    low, high = node.minimum, node.maximum
    if node.exclusive_minimum is not None:
        past = math.floor(node.exclusive_minimum) + 1
        low = past if low is None else max(math.ceil(low), past)
    if node.exclusive_maximum is not None:
        before = math.ceil(node.exclusive_maximum) - 1
        high = before if high is None else min(math.floor(high), before)
    return low, high


def out_of_bounds(minimum: float | None, maximum: float | None) -> list[SearchStrategy[Any]]:
    """Numbers below *minimum* and above *maximum*, integers and floats (for both an integer and a number)."""
    ways: list[SearchStrategy[Any]] = []
    if minimum is not None:
        below = math.ceil(minimum) - 1
        ways.append(st.integers(below - 1000, below))
        high = float_from(minimum, up=False, strictly=True)
        if high is not None:
            ways.append(st.floats(max_value=high, allow_nan=False, allow_infinity=False))
    if maximum is not None:
        above = math.floor(maximum) + 1
        ways.append(st.integers(above, above + 1000))
        low = float_from(maximum, up=True, strictly=True)
        if low is not None:
            ways.append(st.floats(min_value=low, allow_nan=False, allow_infinity=False))
    return ways


def with_twins(values: tuple[Any, ...]) -> list[Any]:
    """Enum members, each integral number also as its twin (``1`` and ``1.0`` are one JSON number)."""
    out = list(values)
    for value in values:
        if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
            out.append(float(value) if isinstance(value, int) else int(value))
    return out


def near_members(values: tuple[Any, ...]) -> list[Any]:
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


def near_const(value: Any) -> list[Any]:
    """Values close to a const, most of them not equal to it: a scalar's neighbours, a container one off."""
    if isinstance(value, list):
        return [value[:-1], [*value, None], [value], {}] if value else [[None], {}, None]
    if isinstance(value, dict):
        near: list[Any] = [{**value, "extra": None}, list(value.values()), []]
        near += [{key: [item] for key, item in value.items()}, dict(list(value.items())[:-1])]
        return near
    return near_members((value,))


def surrogate_in(text: str, index: int, surrogate: str) -> str:
    """*text* with its character at *index* (modulo its length) replaced by *surrogate*."""
    index %= len(text)
    return text[:index] + surrogate + text[index + 1 :]
