"""What the schema nodes and the compiler share: markers, JSON rules and the issues every check makes.

This module imports nothing else from the schema package, so the nodes and
the compiler can both depend on it and on nothing of each other's but what
they must (the compiler reads the nodes; the nodes never read the compiler).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from hermes_core.errors import Issue, IssueKind

__all__ = [
    "BAD",
    "CLOSED_ENTRIES",
    "MAX_DEFAULT_DEPTH",
    "MISSING",
    "Context",
    "Extra",
    "Path",
    "as_json",
    "check_json",
    "copy_json",
    "declared_value_problem",
    "in_float_range",
    "integer_size",
    "json_equal",
    "key_issue",
    "listing",
    "multiple_ok",
    "path_key",
    "raised_issue",
    "size_issue",
    "type_name",
    "unicode_ok",
]

Path = tuple[str | int, ...]
Extra = Literal["forbid", "ignore", "allow"]

#: How many allowed values or fields a message spells out before it says "...".
_MAX_LISTED = 20


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


#: The package's one cache: ``id(schema)`` to ``(schema, check, validator)`` for schemas that name
#: no other, ``check(value, path, issues)`` being the validator's straight-line check. Written only by
#: ``_compile.closed_validator``; read by ``Schema.parse`` on every call, which is why it lives
#: here, below both (an entry holds its schema, so the id cannot be reused while it exists).
CLOSED_ENTRIES: dict[int, tuple[Any, Any, Any]] = {}


@dataclass(slots=True)
class Context:
    """What a walk needs besides the value: named schemas, and the containers it is inside."""

    refs: Mapping[str, Any]  # name to Schema; typed loosely, as this module may not import the nodes
    active: set[int] = field(default_factory=set)


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
        return (Fraction(number) / Fraction(step)).denominator == 1


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (defaults are copied so one call cannot change the next's)."""
    if isinstance(value, list):
        return [copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: copy_json(item) for key, item in value.items()}
    return value


#: How deep a default may nest arrays and objects. It is copied into every parsed value, exported
#: in JSON Schema and printed by the CLI, each a recursion of its own: a bound keeps all of them safe.
MAX_DEFAULT_DEPTH = 100


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

    It may nest arrays and objects at most :data:`MAX_DEFAULT_DEPTH` levels, and
    its numbers must fit a 64-bit float. *value* is already known to be JSON
    (acyclic); the walk is level by level, so it cannot recurse too deeply itself.
    """
    level, depth = [value], 0
    while level:
        containers = []
        for item in level:
            if isinstance(item, list | dict):
                containers.append(item)
            elif isinstance(item, int) and not isinstance(item, bool) and not in_float_range(item):
                return f"must hold numbers within a 64-bit float's range (about 1.8e308), got {integer_size(item)}"
        depth += 1
        if containers and depth > MAX_DEFAULT_DEPTH:
            return f"must nest arrays and objects at most {MAX_DEFAULT_DEPTH} levels deep, got more"
        level = [item for box in containers for item in (box if isinstance(box, list) else box.values())]
    return None


def listing(values: list[str]) -> str:
    """*values* joined by commas, at most twenty of them, then ``...``."""
    shown = ", ".join(values[:_MAX_LISTED])
    return shown + (", ..." if len(values) > _MAX_LISTED else "")


_TOO_DEEP = Issue((), "too_deep", "is nested too deeply to check")


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
    units = unit if bound == 1 else unit + "s"
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


def check_json(value: Any, path: Path, issues: list[Issue], ctx: Context) -> None:
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
                check_json(item, (*path, index), issues, ctx)
        else:
            for key, item in value.items():
                if key_issue(key, path, issues):
                    continue
                check_json(item, (*path, path_key(key)), issues, ctx)
    finally:
        ctx.active.discard(id(value))
