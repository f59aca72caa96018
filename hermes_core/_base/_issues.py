r"""Issues as data, and the one place messages are formatted: paths, sentences, the message shape.

An :class:`Issue` is one problem found in one value: its path, its
:data:`IssueKind` and a detail. A check collects every issue it finds, up to
:data:`ISSUES_MAX`; the errors (``_errors``, above this module) carry them and
format their messages here.

Every message has one shape, built by one helper (:func:`format_message`): it
starts with its subject exactly as written (a tool name, a quoted name, a
declaration, ``value``); the first line states the problem; the issues, if
several, follow one per line; the last line, where there is one, says what to
do next. Every line ends in ``.``, ``?`` or ``!``, except a header ending in
``:`` above its list.

Paths are written with one quoting rule, so that a path is never ambiguous:

* an array index is a bare decimal number: ``files.0``;
* an object key matching ``[A-Za-z_][A-Za-z0-9_-]*`` is written bare: ``path``;
* any other key (empty, all digits, containing ``.``, spaces, quotes, brackets or
  non-ASCII) is written as ``['key']``, with ``\\`` and ``'`` escaped by a
  backslash: ``headers['Content.Type']``, ``['']``, ``['0']``.

Segments are joined by ``.``, except that a ``[...]`` segment follows its
parent directly. A whole path is shown in double quotes: ``"files.0.path"``.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple

__all__ = [
    "ISSUES_MAX",
    "ISSUE_KINDS",
    "MAX_LISTED_ISSUES",
    "Issue",
    "IssueKind",
    "TooManyIssues",
    "format_message",
    "format_path",
    "json_string",
    "json_unicode_string",
    "printable",
    "sentence",
    "shorten",
    "unmistakable",
]

#: How many issues a message lists before it says how many more there are.
MAX_LISTED_ISSUES = 20

#: How many issues one check of one value collects. Past this many, the check stops: the error
#: keeps the first ``ISSUES_MAX + 1`` issues, and its message says that checking stopped there.
#: Every issue costs memory and time (a 16 MiB array of wrong items is 8 million of them), and
#: nobody reads past the first twenty: a bound keeps any input's failure cheap.
ISSUES_MAX = 1000


class TooManyIssues(Exception):  # noqa: N818 - control flow inside a check, never raised to a caller
    """Raised inside a check once its list holds more than :data:`ISSUES_MAX` issues: checking stops.

    Raised only on a failure branch, where a container's loop has just added an
    issue. Whatever made the list (``Schema.parse``, a validator, the runtime,
    a union trying an option) catches it, before it turns anything else raised
    into an issue, and keeps the first ``ISSUES_MAX + 1`` issues of
    :attr:`issues`.

    Attributes:
        issues: the list that overflowed, as it stood.
    """

    def __init__(self, issues: list[Issue]) -> None:
        super().__init__(len(issues))
        self.issues = issues


#: What went wrong with one value, as a closed set:
#:
#: ``type`` — the value has the wrong JSON type (or is not a JSON value at all);
#: ``missing`` — a required object field is absent;
#: ``unexpected`` — an object has a field its schema does not allow;
#: ``too_small`` / ``too_big`` — a length, count or number is out of bounds;
#: ``pattern`` — a string does not match the schema's regular expression;
#: ``enum`` — a value is not one of the allowed values (``enum`` and ``literal``);
#: ``union`` — a value matches none of a union's options;
#: ``encoding`` — a string is not valid Unicode (it holds a lone surrogate);
#: ``too_deep`` — a value is nested too deeply, or contains a reference cycle;
#: ``invalid`` — a value breaks a rule other than its type, size, pattern or membership
#: (``multiple_of``, ``unique_items``), or a tool rejected a well-typed value (a file that does not exist).
IssueKind = Literal[
    "type",
    "missing",
    "unexpected",
    "too_small",
    "too_big",
    "pattern",
    "enum",
    "union",
    "encoding",
    "too_deep",
    "invalid",
]

#: The kinds, as a set of strings: what a kind given at run time is checked against.
ISSUE_KINDS: frozenset[str] = frozenset(typing.get_args(IssueKind))


def shorten(text: str, limit: int = 60) -> str:
    """*text* if it has at most *limit* characters, else its start and ``...``: for quoting in messages.

    Args:
        text: the text to show.
        limit: the most characters the result may have, ``...`` included.

    Returns:
        *text* itself, or its first ``limit - 3`` characters followed by ``...``.

    Examples:
        >>> shorten("fs.write")
        'fs.write'
        >>> shorten("x" * 100, 10)
        'xxxxxxx...'
    """
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


def _encoders() -> tuple[Callable[[str], str], Callable[[str], str]]:
    try:
        from _json import encode_basestring, encode_basestring_ascii  # noqa: PLC0415 - json's own C encoders
    except ImportError:  # an interpreter without json's C module
        from json.encoder import py_encode_basestring as encode_basestring  # noqa: PLC0415
        from json.encoder import py_encode_basestring_ascii as encode_basestring_ascii  # noqa: PLC0415
    return encode_basestring_ascii, encode_basestring


#: *text* as JSON writes it, quoted and escaped to ASCII: ``json.dumps(text)`` for a ``str``, by json's own
#: encoder, without importing the json package, which compiles six regular expressions as it is imported: a
#: declaration names its tool so at every start (docs/performance.md, start-up). And
#: ``json.dumps(text, ensure_ascii=False)``, the same way.
json_string, json_unicode_string = _encoders()


# -- text shown to a person -------------------------------------------------------------------


# Characters that print as nothing, or as blank, though Unicode calls them printable (letters, marks, a
# symbol): the Hangul fillers, the Braille blank, the invisible combining marks and the variation selectors.
# With the categories str.isprintable() refuses, no character can hide in, or reorder, what is shown.
# The patterns of this module are compiled where first used, not at import: compiling them cost every
# 'hermesos tools list', whose text is plain ASCII, about 2 ms (docs/performance.md, start-up).
@functools.cache
def _blank_printable() -> re.Pattern[str]:
    return re.compile(
        "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
    )


# Runs of anything but printable ASCII: the only characters that need a look of their own.
@functools.cache
def _not_plain() -> re.Pattern[str]:
    return re.compile(r"[^\x20-\x7e]+")


def _escape(char: str, *, in_json: bool) -> str:
    r"""*char* written as an escape: ``\x1b``, ``\u200b``, ``\U000e0001``; *in_json*, as JSON writes it: ``\u001b``."""
    code = ord(char)
    if in_json:
        if code < 0x10000:
            return f"\\u{code:04x}"
        code -= 0x10000  # a pair of surrogates, as JSON writes a character past U+FFFF
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, *, lines: bool = False, in_json: bool = False) -> str:
    r"""*text* from a tool, a model, a server or a file, safe to show a person: what cannot be seen, escaped.

    Escaped as ``\x1b``, ``\u200b`` or ``\U000e0001``: every character
    Unicode does not call printable (``str.isprintable``: the control and
    format characters, Cc and Cf, among them the zero-width space and joiners
    and the marks that reorder text, U+202A-U+202E and U+2066-U+2069; line and
    paragraph separators, Zl and Zp; every space but the ASCII one, Zs;
    surrogates, private-use and unassigned code points), and the printable
    ones that show as nothing (the Hangul fillers, the Braille blank, the
    invisible combining marks, the variation selectors). So a
    text cannot move the cursor, recolour the terminal, rewrite what was shown
    above, start what looks like a new line, or hide or reorder characters.
    A backslash is not escaped: ``\u200b`` written out by a tool reads the same.

    Args:
        text: the text to show.
        lines: keep its line breaks and tabs; else it is one line: a line
            break is shown escaped, a tab as a space.
        in_json: *text* is JSON (``json.dumps`` with ``ensure_ascii=False``):
            escape as JSON does, ``\u202e``, so that the text read is the same
            value (JSON writes no character but a line break raw outside its
            strings, so its line breaks are kept with *lines*).

    Returns:
        *text* itself when it has nothing to escape.
    """
    if text.isprintable() and (text.isascii() or not _blank_printable().search(text)):
        return text
    return _escaped(text, lines=lines, ascii_only=False, in_json=in_json)


def unmistakable(text: str) -> str:
    r"""*text* as :func:`printable` shows it, then, if it is not all ASCII, in ASCII: ``café (in ASCII: caf\xe9)``.

    For what decides a call's effect (the target of an approval): letters
    that look alike (a Cyrillic a, U+0430, for a Latin one, a decomposed ``é``
    for a composed one) name different files, and their escapes tell them apart.
    """
    if text.isascii():
        return printable(text)
    return f"{printable(text)} (in ASCII: {_escaped(text, lines=False, ascii_only=True, in_json=False)})"


def _escaped(text: str, *, lines: bool, ascii_only: bool, in_json: bool) -> str:
    """*text* with what :func:`printable` escapes escaped (*ascii_only*: every character past ASCII too)."""
    blank = _blank_printable()

    def run(match: re.Match[str]) -> str:
        out = []
        for char in match.group():
            if char == "\n" and lines:
                out.append(char)
            elif char == "\t" and not in_json:
                out.append(char if lines else " ")
            elif ascii_only or not char.isprintable() or blank.match(char):
                out.append(_escape(char, in_json=in_json))
            else:
                out.append(char)
        return "".join(out)

    return _not_plain().sub(run, text)


_MAX_KEY_SHOWN = 80


@functools.cache
def _bare_key() -> re.Pattern[str]:
    return re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


@functools.cache
def _unprintable() -> re.Pattern[str]:
    return re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _escape_key(key: str) -> str:
    """Escape a key for ``['...']``: backslash and quote, control characters and lone surrogates."""
    key = shorten(key, _MAX_KEY_SHOWN).replace("\\", "\\\\").replace("'", "\\'")
    return _unprintable().sub(lambda m: f"\\u{ord(m.group()):04x}", key)


# Keys repeat from call to call (field names), so their written form is remembered.
_written_keys: dict[str, str] = {}
_WRITTEN_KEYS_MAX = 4096


def _write_key(key: str) -> str:
    written = _written_keys.get(key)
    if written is None:
        # A bare key past the length shown is bracketed and shortened as any other is.
        written = key if len(key) <= _MAX_KEY_SHOWN and _bare_key().match(key) else f"['{_escape_key(key)}']"
        if len(key) <= _MAX_KEY_SHOWN and len(_written_keys) < _WRITTEN_KEYS_MAX:
            _written_keys[key] = written
    return written


def _write_segment(segment: str | int) -> str:
    """A segment of a subclass of ``str`` or ``int``, written from its plain value.

    Its own ``__eq__``, ``__hash__``, ``__str__`` or methods may raise (or lie);
    the plain value's never do, so formatting a message runs none of its code.
    """
    if isinstance(segment, int):
        return int.__repr__(segment)
    return _write_key(str.__str__(segment))


def format_path(path: Sequence[str | int]) -> str:
    """Write *path* with the module's quoting rule, without the surrounding quotes.

    Args:
        path: ``str`` keys and ``int`` indices, from the root.

    Returns:
        The written path; ``""`` for the empty path.

    Examples:
        >>> format_path(("files", 0, "path"))
        'files.0.path'
        >>> format_path(("headers", "a.b", ""))
        "headers['a.b']['']"
    """
    if len(path) == 1:  # the most common path: one field, usually a key written before
        segment = path[0]
        if type(segment) is str:
            return _written_keys.get(segment) or _write_key(segment)
        return str(segment) if type(segment) is int else _write_segment(segment)
    parts: list[str] = []
    for segment in path:
        if type(segment) is str:
            written = _write_key(segment)
        else:
            written = str(segment) if type(segment) is int else _write_segment(segment)
        if parts and written[0] != "[":
            parts.append(".")
        parts.append(written)
    return "".join(parts)


class Issue(NamedTuple):
    """One problem found in one value: immutable data, cheap to make, compared by value.

    Attributes:
        path: where the problem is, from the root: ``str`` keys and ``int`` indices.
        kind: what sort of problem it is, one of :data:`IssueKind`.
        detail: what was wrong and what would have been right, without the
            path, e.g. ``must be a string, got integer``. It never quotes the
            value itself, which may be a secret.

    """

    path: tuple[str | int, ...]
    kind: IssueKind
    detail: str

    def message(self, subject: str = "value") -> str:
        """The issue as one clause: its quoted path (or *subject* at the root), then the detail.

        Args:
            subject: what the value is called at the root (``value``, ``input``, ``output``).

        Returns:
            For example ``"files.0.path" must be a string, got integer``, with no
            final period: a message closes it where it places it.
        """
        path = self.path
        return f'"{format_path(path)}" {self.detail}' if path else f"{subject} {self.detail}"

    def to_dict(self, subject: str = "value") -> dict[str, Any]:
        """A JSON-serialisable dict: ``path`` (a list), ``kind``, ``detail`` and the formatted ``message``.

        Args:
            subject: what the value is called at the root, for ``message``.

        Returns:
            A new dict with those four keys.
        """
        return {
            "path": list(self.path),
            "kind": self.kind,
            "detail": self.detail,
            "message": self.message(subject),
        }


# -- the one message format -----------------------------------------------------------------


def sentence(text: str) -> str:
    """*text* closed as a sentence: a period is added unless it already ends in ``.``, ``?`` or ``!``.

    A closing parenthesis or quote ends a clause, not a sentence: ``(a string)``
    and ``got '1.0'`` take a period after them.
    """
    return text if text and text[-1] in ".?!" else text + "."


def format_message(head: str, advice: str = "", issues: Sequence[Issue] = (), subject: str = "value") -> str:
    """The one message format: ``head`` (subject and problem), the issues, then the advice.

    No issue: ``head.``; one issue: ``head: issue.``; several: ``head (N problems):``
    then one ``- issue.`` line each, at most :data:`MAX_LISTED_ISSUES`, then
    ``- ... and N more.``. More than :data:`ISSUES_MAX` issues mean the check
    stopped there: the header says ``(more than 1000 problems):`` and the list
    ends ``- ... and more: checking stopped after 1001 problems.``. The advice,
    a whole sentence (or several), is the last line. Every line but a list's
    header ends in ``.``, ``?`` or ``!``.
    """
    count = len(issues)
    if count == 1:
        # Raised on every failed call (bench rows 1b and 2e): the rule of sentence()
        # inlined, and the message made by one f-string.
        clause = issues[0].message(subject)
        dot = "" if clause[-1] in ".?!" else "."
        return f"{head}: {clause}{dot}\n{advice}" if advice else f"{head}: {clause}{dot}"
    if count == 0:
        text = sentence(head)
    else:
        stopped = count > ISSUES_MAX
        lines = [f"{head} (more than {ISSUES_MAX} problems):" if stopped else f"{head} ({count} problems):"]
        lines.extend(f"- {sentence(issue.message(subject))}" for issue in issues[:MAX_LISTED_ISSUES])
        if stopped:
            lines.append(f"- ... and more: checking stopped after {count} problems.")
        elif count > MAX_LISTED_ISSUES:
            lines.append(f"- ... and {count - MAX_LISTED_ISSUES} more.")
        text = "\n".join(lines)
    return f"{text}\n{advice}" if advice else text
