"""A call's arguments read from JSON text, with the bounds every edge applies.

The front door (``_door``) reads a model's or a client's arguments here, and
lenient mode (``schema._repair``) reads a JSON-encoded string a model sent
where an object or an array is expected here too, so both take exactly the
same text:

* at most :data:`ARGUMENTS_MAX` characters;
* nested no deeper than the JSON reader goes (deeper is ``too_deep``);
* integers no longer than Python converts (``sys.get_int_max_str_digits()``).

:func:`read_json` reads one JSON text or raises :class:`JsonTextError`
holding the issue (``invalid``, ``too_big`` or ``too_deep``) at the root;
:func:`parse_arguments` is what a door does with the arguments of a call:
text read so, a mapping (or anything not text) given as it is, none at all ``{}``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Final

from hermes_core._base._errors import InputInvalidError
from hermes_core._base._issues import Issue

__all__ = ["ARGUMENTS_MAX", "JsonTextError", "parse_arguments", "read_json"]

#: The longest arguments text a call may carry, in characters; a longer one is INPUT_INVALID.
ARGUMENTS_MAX: Final = 16 * 1024 * 1024

_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined] # set in __init__


class JsonTextError(ValueError):
    """Text :func:`read_json` could not read: :attr:`issue` says why, at the root (path ``()``)."""

    def __init__(self, issue: Issue) -> None:
        super().__init__(issue.detail)
        self.issue = issue


def read_json(text: str) -> Any:
    """The JSON value *text* holds, read within the bounds (see the module).

    Raises:
        JsonTextError: *text* is longer than :data:`ARGUMENTS_MAX`, or not JSON
            (where, and why), or nested too deeply, or holds an integer longer
            than Python converts.
    """
    if len(text) <= ARGUMENTS_MAX:
        try:
            # The C scanner alone, for the common case of a value filling the text: json.loads costs three times
            # as much in its Python layers (bench_adapters). Anything else takes the full path, and its messages.
            value, end = _scan(text, 0)
            if end == len(text):
                return value
        except (ValueError, StopIteration, RecursionError):
            pass
    return _read_fully(text)


def _read_fully(text: str) -> Any:
    """:func:`read_json` past its fast path: the bound, then the full reader and its messages."""
    if len(text) > ARGUMENTS_MAX:
        raise JsonTextError(
            Issue((), "too_big", f"is {len(text):,} characters of JSON; at most {ARGUMENTS_MAX:,} are read")
        )
    try:
        return json.loads(text, parse_int=_integer)
    except json.JSONDecodeError as error:
        if text.lstrip().startswith("```"):  # models wrap JSON in a Markdown code fence: say so, not "line 1"
            detail = "is not valid JSON: it is wrapped in a Markdown code fence (```); send the JSON object alone"
            raise JsonTextError(Issue((), "invalid", detail)) from None
        # The decoder's own message may end in "at" ("Unterminated string starting at"): not twice.
        where = f"{error.msg.removesuffix(' at')} at line {error.lineno}, column {error.colno}"
        raise JsonTextError(Issue((), "invalid", f"is not valid JSON: {where}; send a JSON object")) from None
    except _TooManyDigitsError as error:
        detail = (
            f"holds an integer of {error.digits:,} digits, more than the {sys.get_int_max_str_digits():,} this "
            "Python reads; send a shorter number, or a string of digits if the tool takes one"
        )
        raise JsonTextError(Issue((), "too_big", detail)) from None
    except RecursionError:
        raise JsonTextError(Issue((), "too_deep", "nests arrays and objects too deeply")) from None


def parse_arguments(tool: str, raw: Any) -> Any:
    """A call's arguments: JSON text parsed, or the value given as it is (None: ``{}``).

    Args:
        tool: the name the call was made under, for the error.
        raw: the arguments as the model or client sent them.

    Raises:
        InputInvalidError: *raw* is text longer than :data:`ARGUMENTS_MAX`, or
            not JSON (where, and why), or nested too deeply, or holding an
            integer longer than Python converts.
    """
    if type(raw) is not str:
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw
        raw = str(raw)
    if not raw:
        return {}
    if len(raw) <= ARGUMENTS_MAX:  # read_json's fast path, inlined: a frame less on every call (bench_adapters)
        try:
            value, end = _scan(raw, 0)
            if end == len(raw):
                return value
        except (ValueError, StopIteration, RecursionError):
            pass
    try:
        return _read_fully(raw)
    except JsonTextError as error:
        raise InputInvalidError(tool, [error.issue]) from None


class _TooManyDigitsError(ValueError):
    """An integer of the arguments longer than Python converts (``sys.get_int_max_str_digits()``)."""

    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _integer(text: str) -> int:
    """An integer of the arguments; one past Python's int-string limit is named, not a bare ValueError."""
    try:
        return int(text)
    except ValueError:
        raise _TooManyDigitsError(len(text.lstrip("-"))) from None
