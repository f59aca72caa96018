"""What the schema nodes and the compiler share: markers, JSON rules and the issues every check makes.

This module imports nothing else from the schema package, so the nodes and
the compiler can both depend on it (the nodes call the compiler; the compiler
reads the nodes through their ``kind`` tags and attributes, importing none).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import ISSUES_MAX, Issue, IssueKind, TooManyIssues, json_string, json_unicode_string

__all__ = [
    "BAD",
    "FORMATS",
    "MAX_LISTED",
    "MISSING",
    "NESTING_MAX",
    "Context",
    "Extra",
    "Path",
    "as_json",
    "because",
    "canonical_json",
    "check_json",
    "copy_json",
    "declared_value_problem",
    "in_float_range",
    "integer_size",
    "json_equal",
    "json_key",
    "json_size",
    "key_issue",
    "listing",
    "multiple_ok",
    "not_finite",
    "path_key",
    "raised_issue",
    "self_ref",
    "size_issue",
    "type_name",
    "unicode_ok",
    "unique_issues",
]

Path = tuple[str | int, ...]
Extra = Literal["forbid", "ignore", "allow"]

#: How many allowed values or fields a message spells out before it says "...".
MAX_LISTED = 20


class _Bad:
    """The marker a failed ``_collect`` returns in place of a value."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<invalid>"


BAD: Any = _Bad()


class _Missing:
    """The marker for "no default given" and "field absent"."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(slots=True)
class Context:
    """What a walk needs besides the value: named schemas, and the containers it is inside."""

    refs: Mapping[str, Any]  # name to Schema; typed loosely, as this module may not import the nodes
    active: set[int] = field(default_factory=set)
    # What the alternatives of one check found, so each (node, value) is tried once: see _nodes.Branching.
    tried: dict[Any, Any] = field(default_factory=dict)


_TYPE_NAMES = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    str: "string",
    list: "array",
    dict: "object",
}


# Subclasses of the JSON types, in the order they must be tested (bool is an int).
_SUBCLASS_NAMES = ((bool, "boolean"), (int, "integer"), (str, "string"), (list, "array"), (dict, "object"))


def type_name(value: object) -> str:
    """The JSON name of *value*'s type (``integer``, ``array``...), or its Python name if it has none."""
    name = _TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else "infinity" if math.isinf(value) else "number"
    for kind, word in _SUBCLASS_NAMES:
        if isinstance(value, kind):
            return word
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
    if type(value) is str:  # an enum's values, in the message of every enum a command declares (start-up)
        return json_unicode_string(value)
    import json  # noqa: PLC0415 - not at import (start-up)

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


def multiple_ok(number: int | float, step: int | float) -> bool:
    """Whether *number* is a multiple of *step* (positive), as JSON Schema's ``multipleOf`` decides.

    An int step divides exactly. A float step divides in floats, and the
    quotient must be integral: the rule of the ``jsonschema`` reference
    validator, by which the JSON-Schema-Test-Suite is passed (``0.0075`` is a
    multiple of ``0.0001``). Where the float quotient overflows, the division
    is done exactly, in fractions.
    """
    if isinstance(step, int):
        return number % step == 0
    try:
        quotient = number / step
        return int(quotient) == quotient
    except OverflowError:  # a quotient past the float range: exact, and never more than a few hundred digits
        from fractions import Fraction  # noqa: PLC0415 - this rare case only: start-up (docs/performance.md)

        return (Fraction(number) / Fraction(step)).denominator == 1


def json_key(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (``1`` and ``1.0``; never ``true`` and ``1``), deep.

    Objects compare regardless of key order. A value that is not JSON gets a key
    of its own identity, equal to nothing else. Subclasses are read as their
    base type, so none of their own code runs but hashing.
    """
    if isinstance(value, str):
        return ("s", str.__str__(value))
    if isinstance(value, bool):
        return ("b", value is True)
    if value is None:
        return ("z",)
    if isinstance(value, int | float):
        # 1 == 1.0 and hash(1) == hash(1.0): one key for a JSON number, whichever Python type holds it.
        return ("n", int.__index__(value) if isinstance(value, int) else float.__float__(value))
    if isinstance(value, list):
        return ("a", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((json_key(key), json_key(item)) for key, item in dict.items(value)))
    return ("?", id(value))


def unique_issues(items: list[Any], path: Path, issues: list[Issue]) -> bool:
    """Append an issue at each item JSON-equal to an earlier one, naming it; True when one was added."""
    first: dict[Any, int] = {}
    found = False
    for index, item in enumerate(items):
        key = json_key(item)
        earlier = first.setdefault(key, index)
        if earlier != index:
            issues.append(
                Issue((*path, index), "invalid", f"must differ from item {earlier}; the items must be unique")
            )
            found = True
            if len(issues) > ISSUES_MAX:
                raise TooManyIssues(issues)
    return found


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (defaults are copied so one call cannot change the next's)."""
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    return value


#: How deep a value of no declared shape (``s.any()``, an object's extra fields, a default, a const) may
#: nest arrays and objects, counted from where its shape stops being declared. A JSON reader goes as deep
#: as the interpreter's recursion limit from where it is called, and whatever handles the value next (a
#: result's encoder, a copy, a client's reader: the MCP Python SDK's stops at about 200 levels) from deeper
#: down: a value nested just short of the first limit would pass the check and break the next. This one
#: bound holds well short of all of them.
NESTING_MAX = 100


def in_float_range(number: int | float) -> bool:
    """Whether *number* is finite and no larger than a 64-bit float holds, as a JSON reader holds numbers.

    An ``int`` is compared exactly (Python compares an int with a float without converting it), so
    this never raises ``OverflowError``, whatever the size of the int.
    """
    if isinstance(number, float):
        return math.isfinite(number)
    return -sys.float_info.max <= number <= sys.float_info.max


def integer_size(number: int) -> str:
    """How long an integer is, for a message that cannot show it: ``an integer of 401 digits``."""
    try:
        digits = str(len(str(abs(number))))
    except ValueError:  # past the interpreter's limit on converting an int to text
        digits = f"more than {sys.get_int_max_str_digits()}"
    return f"an integer of {digits} digits"


def declared_value_problem(value: Any) -> str | None:
    """What makes a JSON *value* unfit to declare in a schema (a default), or None.

    Its numbers must fit a 64-bit float. *value* is already known to be JSON,
    acyclic and nested at most :data:`NESTING_MAX` levels (``s.any()`` checked it).
    """
    level = [value]
    while level:
        containers = []
        for item in level:
            if isinstance(item, list | dict):
                containers.append(item)
            elif isinstance(item, int) and not isinstance(item, bool) and not in_float_range(item):
                return f"must hold numbers within a 64-bit float's range (about 1.8e308), got {integer_size(item)}"
        level = [item for box in containers for item in (box if isinstance(box, list) else box.values())]
    return None


def listing(values: Iterable[str]) -> str:
    """*values* joined by commas, at most twenty of them, then ``...``: only twenty-one are taken from *values*."""
    taken = list(itertools.islice(values, MAX_LISTED + 1))
    shown = ", ".join(taken[:MAX_LISTED])
    return shown + (", ..." if len(taken) > MAX_LISTED else "")


def _scalar_text(value: Any) -> str | None:
    """The canonical text of a JSON scalar (see :func:`canonical_json`); None for a container or what is not JSON."""
    if isinstance(value, str):
        return _quoted(str.__str__(value))
    if isinstance(value, bool):
        return "true" if value is True else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        number = int.__index__(value)
    elif isinstance(value, float):
        real = float.__float__(value)
        if not math.isfinite(real):
            return None
        if not real.is_integer():
            return float.__repr__(real)
        number = int(real)
    else:
        return None
    try:
        return int.__repr__(number)
    except ValueError:  # past the interpreter's int-string limit: no float is so large, so no other writing equals it
        return f"#{number:x}"


_quoted: Callable[[str], str] = json_string


_SMALL = 10**18  # an int this small is written as it is; a larger one by _scalar_text (past the int-string limit)


class _NotCanonical(Exception):  # noqa: N818 - internal control flow, never raised to a caller
    """Raised by :func:`_write` where the value is not JSON, or its text passes the limit."""


def _write(value: Any, out: list[str], depth: int, room: list[int]) -> None:
    """Append the canonical text of *value* to *out* (:func:`canonical_json`); *room*: what may still be written."""
    kind = type(value)
    if kind is str:
        text = _quoted(value)
    elif kind is int and -_SMALL < value < _SMALL:
        text = int.__repr__(value)
    elif kind is list or kind is dict or isinstance(value, list | dict):
        if depth >= NESTING_MAX:
            raise _NotCanonical
        if isinstance(value, list):
            out.append("[")
            for index, item in enumerate(list.__iter__(value)):
                if index:
                    out.append(",")
                _write(item, out, depth + 1, room)
            out.append("]")
        else:
            entries = []
            for key, item in dict.items(value):
                if not isinstance(key, str):
                    raise _NotCanonical
                entries.append((str.__str__(key), item))
            entries.sort(key=_first)
            out.append("{")
            for index, (key, item) in enumerate(entries):
                if index:
                    out.append(",")
                out.append(_quoted(key))
                out.append(":")
                room[0] -= len(key)
                _write(item, out, depth + 1, room)
            out.append("}")
        room[0] -= 2
        if room[0] < 0:
            raise _NotCanonical
        return
    else:
        said = _scalar_text(value)
        if said is None:
            raise _NotCanonical
        text = said
    room[0] -= len(text) + 1
    if room[0] < 0:
        raise _NotCanonical
    out.append(text)


def canonical_json(value: Any, limit: int | None = None) -> str | None:
    """*value* as one text, equal for JSON-equal values and only for them: how ``enum`` and ``const`` are looked up.

    Compact JSON with each object's keys sorted and an integral number written
    as an integer, so ``1`` and ``1.0`` give one text, ``true`` and ``1`` two,
    and objects are equal whatever their key order. Subclasses of the JSON
    types are read as their base type, so none of their own code runs.

    Args:
        value: the value.
        limit: the longest text wanted; a longer one is not written out (a
            value longer than every allowed one equals none of them).

    Returns:
        The text, or None when *value* is not JSON (a NaN, a set, a key that is
        not a string, a reference cycle, nesting past :data:`NESTING_MAX`) or its
        text would be longer than *limit* (or about: past it, a value may be
        given up a few characters early, never one whose text is within it).
    """
    if type(value) is str:  # the common case: an enum of strings, a const string
        text = _quoted(value)
        return text if limit is None or len(text) <= limit else None
    out: list[str] = []
    # Counted as written, with one more for each part: given up once the text surely passes limit.
    room = [sys.maxsize if limit is None else 2 * limit + 2]
    try:
        _write(value, out, 0, room)
    except (_NotCanonical, RecursionError):
        return None
    text = "".join(out)
    return text if limit is None or len(text) <= limit else None


def _first(entry: tuple[str, Any]) -> str:
    return entry[0]


def json_size(value: Any, limit: int) -> int:
    """How many bytes *value* takes written as compact JSON (UTF-8), counted up to just past *limit*.

    What a document weighs, for the bounds on what importing it may cost. A
    part that is not JSON counts as one byte. The count stops once past
    *limit*, returning a number above it: a reference cycle is never written
    out, and a document of shared parts may be far larger written out than it
    is in memory. Escapes in strings are not counted.
    """
    size = 0
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str:
            size += 2 + (len(item) if item.isascii() else len(item.encode("utf-8", "surrogatepass")))
        elif kind is dict:
            size += 1 + max(len(item), 1)  # the braces and the commas
            for key in item:
                size += 3 + len(key) if type(key) is str and key.isascii() else 1 + json_size(key, limit)
            pending.extend(item.values())
        elif kind is list:
            size += 1 + max(len(item), 1)  # the brackets and the commas
            pending.extend(item)
        elif kind is int:
            size += len(int.__repr__(item)) if -_SMALL < item < _SMALL else (item.bit_length() * 30103) // 100000 + 2
        else:
            size += _other_size(item, pending)
        if size > limit:
            return size
    return size


def _other_size(item: Any, pending: list[Any]) -> int:
    """What :func:`json_size` counts for *item*, not of an exact JSON type: a subclass read as its base, else 1."""
    if isinstance(item, str):
        return json_size(str.__str__(item), sys.maxsize)
    if isinstance(item, bool) or item is None:
        return 4 + (item is False)
    if isinstance(item, int):
        return json_size(int.__index__(item), sys.maxsize)
    if isinstance(item, float):
        return len(float.__repr__(item))
    if isinstance(item, list):
        pending.append(list(list.__iter__(item)))
        return 0
    if isinstance(item, dict):
        pending.append(dict(dict.items(item)))
        return 0
    return 1


_TOO_DEEP = Issue((), "too_deep", "is nested too deeply to check")


def because(issues: list[Issue], start: int, reason: str) -> None:
    """Add ``, because <reason>`` to the details of ``issues[start:]``: the issues a condition brought (``then``)."""
    for index in range(start, len(issues)):
        issue = issues[index]
        issues[index] = Issue(issue.path, issue.kind, f"{issue.detail}, because {reason}")


def raised_issue(exc: Exception) -> Issue:
    """The issue for a check that raised: too deep a value, or the value's own code failing.

    Only a value can make a check raise (a subclass whose ``items()`` raises, a
    key whose ``__eq__`` does, nesting past the recursion limit): the checks
    themselves raise nothing, so this is how ``parse`` keeps its promise to
    raise only ``SchemaError``.
    """
    if isinstance(exc, RecursionError):
        return _TOO_DEEP
    return Issue((), "type", f"must be a JSON value; checking it raised {type(exc).__name__}")


def size_issue(issues: list[Issue], path: Path, size: int, *, low: int | None, high: int | None, unit: str) -> bool:
    """Append a too_small/too_big issue for a length or count; True when one was added."""
    kind: IssueKind
    if low is not None and size < low:
        kind, word, bound = "too_small", "least", low
    elif high is not None and size > high:
        kind, word, bound = "too_big", "most", high
    else:
        return False
    units = unit if bound == 1 else ("properties" if unit == "property" else unit + "s")
    issues.append(Issue(path, kind, f"must have at {word} {bound} {units}, got {size}"))
    return True


def path_key(key: str) -> str:
    """*key* as a plain ``str``, for an issue's path.

    A ``str`` subclass is a valid key, but its own ``__eq__``, ``__hash__`` or
    methods may raise: an issue holds the plain text, so comparing, formatting
    or suggesting from it never runs the value's code.
    """
    return key if type(key) is str else str.__str__(key)


def key_issue(key: Any, path: Path, issues: list[Issue]) -> bool:
    """Append an issue if *key* cannot be a JSON object key; True when one was added."""
    if not isinstance(key, str):
        issues.append(Issue(path, "type", f"must have string keys, got a key of type {type_name(key)}"))
        return True
    if not unicode_ok(key):
        issues.append(Issue(path, "encoding", "must have valid Unicode keys, got a key with a lone surrogate"))
        return True
    return False


def not_finite(value: float) -> str:
    """Why a NaN or an infinity is refused; an infinity is what JSON text such as ``1e400`` reads as."""
    said = f"must be a finite number, got {type_name(value)}"
    return said if math.isnan(value) else f"{said} (a number past about 1.8e308, such as 1e400, is read as one)"


def check_json(value: Any, path: Path, issues: list[Issue], ctx: Context, depth: int = 0) -> None:
    """Append an issue for every place in *value* that is not JSON-shaped, or nests past :data:`NESTING_MAX`.

    *depth* is how many arrays and objects hold *value* below where the check began.
    """
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            issues.append(Issue(path, "type", not_finite(value)))
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
    if depth >= NESTING_MAX:
        # Said of the value whose check began here (its path, not the deep place's): that is what to send again.
        said = f"must nest arrays and objects at most {NESTING_MAX} levels deep, got more"
        issues.append(Issue(path[: len(path) - depth], "too_deep", said))
        return
    ctx.active.add(id(value))
    try:
        if isinstance(value, list):
            for index, item in enumerate(value):
                check_json(item, (*path, index), issues, ctx, depth + 1)
                if len(issues) > ISSUES_MAX:
                    raise TooManyIssues(issues)
        else:
            for key, item in value.items():
                if not key_issue(key, path, issues):
                    check_json(item, (*path, path_key(key)), issues, ctx, depth + 1)
                if len(issues) > ISSUES_MAX:
                    raise TooManyIssues(issues)
    finally:
        ctx.active.discard(id(value))


# -- string formats ------------------------------------------------------------------------------

# The patterns of the formats, compiled where a format is first checked: compiling all seven costs 3 ms of
# every start of hermesos, most of which checks no format (docs/performance.md, start-up).


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_DATE = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
# RFC 3339 full-time: partial-time, then an offset; "T" and "Z" in either case (RFC 3339, 5.6 note).
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))"
_UUID = r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
# RFC 5322 dot-atom and quoted-string local parts, and a host name or an address literal after the "@".
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = rf'{_ATOM}(?:\.{_ATOM})*|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
# RFC 3986 characters: unreserved, sub-delims, and percent-encoded octets.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_URI = (
    r"[A-Za-z][A-Za-z0-9+.\-]*:"  # scheme
    r"(?://(?P<userinfo>(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*@)?"
    r"(?P<host>\[[^\]/?#@]*\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
    rf"(?::[0-9]*)?(?:/{_PCHAR}*)*"  # authority, then a path that begins with "/" or is empty
    rf"|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"  # or a path without an authority
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
)
_IP_FUTURE = r"\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]"


# Days in each month of a common year (calendar.monthrange's, without importing calendar, datetime and locale).
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _date(text: str) -> bool:
    found = _compiled(_DATE).fullmatch(text)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups())
    if year == 0 or not 1 <= month <= 12:  # year 0 is no date Python (or jsonschema's check) can hold
        return False
    return 1 <= day <= (_MONTH_DAYS[month] if month != 2 or not _leap(year) else 29)


def _time(text: str) -> bool:
    found = _compiled(_TIME).fullmatch(text)
    if found is None:
        return False
    hour, minute, second = int(found[1]), int(found[2]), int(found[3])
    offset = 0
    if found[6] is not None:
        off_hour, off_minute = int(found[7]), int(found[8])
        if off_hour > 23 or off_minute > 59:
            return False
        offset = (off_hour * 60 + off_minute) * (1 if found[6] == "+" else -1)
    if hour > 23 or minute > 59 or second > 60:
        return False
    # A leap second is the last second of a UTC day: 23:59:60 once the offset is taken off.
    return second < 60 or (hour * 60 + minute - offset) % (24 * 60) == 23 * 60 + 59


def _date_time(text: str) -> bool:
    if len(text) < 11 or text[10] not in "Tt":
        return False
    return _date(text[:10]) and _time(text[11:])


def _ipv4(text: str) -> bool:
    import ipaddress  # noqa: PLC0415 - where the format is checked only: start-up (docs/performance.md)

    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _ipv6(text: str) -> bool:
    if "%" in text:  # a zone index is not part of the format
        return False
    import ipaddress  # noqa: PLC0415 - as _ipv4

    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    if not at or _compiled(_LOCAL).fullmatch(local) is None or len(local) > 64:
        return False
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        if literal[:5].lower() == "ipv6:":
            return _ipv6(literal[5:])
        return _ipv4(literal)
    labels = domain.split(".")
    return len(domain) <= 253 and all(_compiled(_LABEL).fullmatch(label) for label in labels)


def _uri(text: str) -> bool:
    found = _compiled(_URI).fullmatch(text)
    if found is None:
        return False
    host = found["host"]
    if host and host.startswith("["):
        return _compiled(_IP_FUTURE).fullmatch(host) is not None or _ipv6(host[1:-1])
    return True


def _uuid(text: str) -> bool:
    return _compiled(_UUID).fullmatch(text) is not None


#: The formats ``s.string(format=...)`` checks, with the standard library: name to (check, what a
#: matching string is, for "must be ..."). Any other format name is an annotation: exported, not
#: checked, as JSON Schema 2020-12 treats ``format`` by default.
FORMATS: dict[str, tuple[Callable[[str], bool], str]] = {
    "date-time": (_date_time, "a date-time (RFC 3339) such as 2024-05-01T12:00:00Z"),
    "date": (_date, "a date (RFC 3339) such as 2024-05-01"),
    "time": (_time, "a time with an offset (RFC 3339) such as 12:00:00Z"),
    "email": (_email, "an email address such as name@example.com"),
    "uri": (_uri, "an absolute URI such as https://example.com/page"),
    "uuid": (_uuid, "a UUID such as 123e4567-e89b-12d3-a456-426614174000"),
    "ipv4": (_ipv4, "an IPv4 address such as 192.0.2.1"),
    "ipv6": (_ipv6, "an IPv6 address such as 2001:db8::1"),
}


def self_ref(pointer: str, keyword: str = "$ref") -> InvalidDefinitionError:
    """The error for an imported ``$ref`` (or ``$dynamicRef``) that reaches only itself, through refs alone."""
    return InvalidDefinitionError(
        "from_json_schema()", f"{keyword} {pointer!r}", "only refers to itself; it must describe a value"
    )
