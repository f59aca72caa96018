"""Patterns from elsewhere: ECMA-262 regular expressions checked in linear time.

A ``pattern`` or ``patternProperties`` key in an imported document (an MCP
server's input schema, a function definition) is written by someone else. On
Python's ``re``, a backtracking engine that holds the GIL, ``^(a+)+$`` takes
seconds on 27 characters and doubles with each one more. Such a pattern is
therefore never run on ``re``: it is translated from ECMA-262 to RE2's syntax
and run by RE2 (the ``google-re2`` package), whose time is linear in the
pattern and the text. What RE2 cannot run (backreferences, lookaround,
repetition counts above 1,000, a pattern too large to compile) is reported
as not checked, never run some other way; so is every imported pattern
where RE2 is not installed.

A pattern a plugin author writes in Python (``s.string(pattern=...)``) is
trusted code and stays on ``re``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final, Protocol

from hermes_core.schema._shared import unicode_ok

__all__ = ["ENGINE", "Searcher", "foreign_pattern"]


class Searcher(Protocol):
    """What a string schema needs of a compiled pattern: ``search`` (a match object, or None)."""

    def search(self, text: str, /) -> object | None:
        """A match of the pattern anywhere in *text*, or None."""


_UNLOADED: Final[Any] = object()
_engine: Any = _UNLOADED


def _load() -> Any:
    """The ``re2`` module, or None where it is not installed; imported on first use, then kept.

    Not at import: it costs about 5 ms with what it imports, and only an imported pattern needs it
    (docs/performance.md, start-up).
    """
    global _engine  # noqa: PLW0603 - the one cached engine
    if _engine is _UNLOADED:
        try:
            _engine = importlib.import_module("re2")
        except ImportError:  # the core installs it where a wheel exists; anywhere else, patterns go unchecked
            _engine = None
    return _engine


if TYPE_CHECKING:
    #: The engine imported patterns run on: ``"re2"``, or None where it is not installed (they are then not checked).
    ENGINE: str | None


def __getattr__(name: str) -> Any:
    if name == "ENGINE":
        return None if _load() is None else "re2"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _options(engine: Any) -> Any:
    options = engine.Options()
    options.log_errors = False  # a refused pattern is reported in `unsupported`, not logged to stderr
    return options


# ECMA-262's white space and line terminators (\s), and what . does not match.
_SPACE = r"\t\n\x0b\x0c\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}"
_DOT = r"[^\n\r\x{2028}\x{2029}]"
# Escapes whose meaning ECMA-262 and RE2 share, or that RE2 refuses itself (backreferences, \k).
_SHARED_ESCAPES = frozenset("dDwWbBfnrtv0123456789xkpP")
_HEX = frozenset("0123456789abcdefABCDEF")
# ECMA-262's long names of Unicode general categories (and their aliases), as RE2 names them.
_CATEGORIES = {
    "Letter": "L", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M", "Combining_Mark": "M",
    "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N", "Decimal_Number": "Nd",
    "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P",
    "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Open_Punctuation": "Ps", "Close_Punctuation": "Pe",
    "Initial_Punctuation": "Pi", "Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S",
    "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
    "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C", "Control": "Cc",
    "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
}  # fmt: skip


class _NotEcmaError(ValueError):
    """A pattern that this translation cannot carry to RE2 with its ECMA-262 meaning."""


def _code_point(pattern: str, index: int) -> tuple[int, int]:
    r"""The code point of the ``\uXXXX`` escape at *index* (a surrogate pair joined), and where it ends."""
    digits = pattern[index + 2 : index + 6]
    if len(digits) != 4 or not set(digits) <= _HEX:
        raise _NotEcmaError("a \\u escape without four hex digits")
    point, end = int(digits, 16), index + 6
    if 0xD800 <= point <= 0xDBFF and pattern[end : end + 2] == "\\u":
        low = pattern[end + 2 : end + 6]
        if len(low) == 4 and set(low) <= _HEX and 0xDC00 <= int(low, 16) <= 0xDFFF:
            return 0x10000 + ((point - 0xD800) << 10) + (int(low, 16) - 0xDC00), end + 6
    if 0xD800 <= point <= 0xDFFF:
        raise _NotEcmaError("a lone surrogate escape, which no valid text holds")
    return point, end


def _property(letter: str, name: str, in_class: bool) -> str:
    r"""``\p{name}`` (or ``\P``) in RE2's names: a general category's long name becomes its short one."""
    key, _, value = name.partition("=")
    if value and key in ("General_Category", "gc"):
        name = value
    elif value and key in ("Script", "sc", "Script_Extensions", "scx"):
        return f"\\{letter}{{{value}}}"
    if name not in ("Cased_Letter", "LC"):
        return f"\\{letter}{{{_CATEGORIES.get(name, name)}}}"
    cased = r"\p{Lu}\p{Ll}\p{Lt}"  # RE2 has no name for Lu, Ll and Lt together
    if letter == "p":
        return cased if in_class else f"[{cased}]"
    if in_class:
        raise _NotEcmaError("\\P{Cased_Letter} inside brackets, which has no RE2 form")
    return f"[^{cased}]"


def _identity(escaped: str) -> bool:
    r"""Whether ``\`` then *escaped* is an identity escape in ECMA-262 that RE2 would read otherwise (or refuse)."""
    if not escaped.isascii() or escaped == "_":
        return True
    return escaped.isalpha() and escaped not in _SHARED_ESCAPES and escaped != "S"


def _group(pattern: str, index: int) -> tuple[str, int]:
    """The RE2 form of the group opening at *index* (ECMA-262's kinds only), and where its body starts."""
    head = pattern[index + 1 : index + 4]
    if not head.startswith("?") or head[1:2] in (":", "=", "!") or head[1:] in ("<=", "<!"):
        return "(", index + 1  # RE2 refuses lookaround itself, with its own message
    if head[1:2] == "<":  # a named group: RE2 takes (?P<name>...) everywhere
        return "(?P<", index + 3
    raise _NotEcmaError(f"the group opening {pattern[index : index + 3]!r}, which ECMA-262 does not have")


def to_re2(pattern: str) -> str:
    r"""*pattern*, read as ECMA-262 does, written in RE2's syntax.

    ``\s`` and ``.`` take ECMA-262's meaning (its white space; anything but a
    line terminator), ``\cX``, ``\uXXXX`` and ``[\b]`` become the characters
    they stand for, ``[]`` matches nothing and ``[^]`` anything, and an escaped
    letter ECMA-262 gives no meaning to stands for itself. ``\d``, ``\w``,
    ``\b`` are ASCII in both. Inside brackets, ``\S`` keeps RE2's meaning
    (not ASCII white space): a class cannot subtract another in RE2.

    Raises:
        _NotEcmaError: the pattern holds what has no RE2 form with the same meaning.
    """
    out: list[str] = []
    in_class = False
    index = 0
    size = len(pattern)
    while index < size:
        char = pattern[index]
        if char == "\\" and index + 1 < size:
            written, index = _escape(pattern, index, in_class)
            out.append(written)
            continue
        if in_class:
            in_class = char != "]"
            out.append("\\[" if char == "[" else char)  # a literal in ECMA-262; RE2 would read [: as a POSIX class
        elif char == "[":
            if pattern.startswith("[]", index):
                out.append(r"[^\x00-\x{10ffff}]")
                index += 2
                continue
            if pattern.startswith("[^]", index):
                out.append(r"[\x00-\x{10ffff}]")
                index += 3
                continue
            in_class = True
            negated = pattern.startswith("^", index + 1)
            out.append("[^" if negated else "[")
            index += negated
        elif char == ".":
            out.append(_DOT)
        elif char == "(":
            written, index = _group(pattern, index)
            out.append(written)
            continue
        else:
            out.append(char)
        index += 1
    return "".join(out)


def _escape(pattern: str, index: int, in_class: bool) -> tuple[str, int]:
    """The RE2 form of the escape at *index*, and where the pattern goes on."""
    escaped = pattern[index + 1]
    control = pattern[index + 2 : index + 3]
    if escaped == "c" and control.isascii() and control.isalpha():
        return f"\\x{{{ord(control) % 32:02x}}}", index + 3
    if escaped == "u":
        point, end = _code_point(pattern, index)
        return f"\\x{{{point:x}}}", end
    if escaped in "pP" and pattern.startswith("{", index + 2) and "}" in pattern[index + 3 :]:
        end = pattern.index("}", index + 3)
        return _property(escaped, pattern[index + 3 : end], in_class), end + 1
    if escaped == "s":
        written = _SPACE if in_class else f"[{_SPACE}]"
    elif escaped == "S" and not in_class:
        written = f"[^{_SPACE}]"
    elif escaped == "b" and in_class:
        written = "\\x08"
    elif _identity(escaped):
        written = escaped  # \a, \z, \A, \Q, \C, \_ are the plain characters in ECMA-262, not RE2's escapes
    else:
        written = pattern[index : index + 2]
    return written, index + 2


class _Re2Pattern:
    """A pattern compiled by RE2, searched as ``re.search`` would be."""

    __slots__ = ("_regexp",)

    def __init__(self, regexp: Any) -> None:
        self._regexp = regexp

    def search(self, text: str, /) -> object | None:
        if not text.isascii() and not unicode_ok(text):
            return None  # a lone surrogate has no UTF-8 form; the string check reports it
        found: object | None = self._regexp.search(text)
        return found


def foreign_pattern(pattern: str) -> tuple[Searcher | None, str]:
    """*pattern*, from an imported document, compiled to run in linear time; or None and why it cannot be.

    Returns:
        ``(searcher, "")``, or ``(None, reason)`` where the reason follows
        "is not checked: " (``it uses a backreference...``).
    """
    engine = _load()
    if engine is None:
        return None, (
            "no linear-time regular expression engine is installed (the google-re2 package), and a pattern "
            "from elsewhere is never run on Python's re, where one can take exponential time"
        )
    try:
        translated = to_re2(pattern)
    except _NotEcmaError as error:
        return None, f"it holds {error}"
    try:
        return _Re2Pattern(engine.compile(translated, _options(engine))), ""
    except engine.error as error:
        said = error.args[0] if error.args else error
        said = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
        return None, (
            f"the linear-time engine cannot run it ({said}): backreferences, lookaround and repetition "
            "counts above 1,000 are not checked"
        )
