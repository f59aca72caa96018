"""Read a function's docstring for what a tool made from it says: its description, and each parameter's.

:func:`parse_docstring` knows the three common styles, and recognises each
section by its own syntax, so one docstring may even mix them:

- Google: a title alone on a line, ending with a colon (``Args:``,
  ``Returns:``), then lines indented under it.
- NumPy: a title alone on a line, underlined by a line of at least three
  dashes; the section runs until the next section.
- reST / Sphinx: a field, ``:param x: text``, continued on indented lines.

The rules, chosen to be simple and never to fail:

- The text is cleaned first, as :func:`inspect.cleandoc` does: line ends (CR
  LF, CR) become LF, tabs are expanded, the first line loses its indentation
  and the others the least indentation among them, blank lines at both ends
  go; trailing spaces on every line go too.
- A section starts only at the base indentation, which the cleaning makes
  column 0. ``Args:`` indented under something else, inside prose or an
  example, is text. The titles (compared case-insensitively, spaces folded)
  are those of :data:`_SECTIONS`; an unknown title (``Usage:``) is text. The
  fields are those of :data:`_PARAM_FIELDS` and :data:`_OTHER_FIELDS`; a role
  at the start of a line (``:class:`X` is...``) is text.
- The description is every line before the first section, trailing blank
  lines removed; None if that is empty. Text after a section that belongs to
  none is ignored.
- In a parameter section, the first entry's indentation is the entries' level
  (column 0 in NumPy). A line at that level or less starts an entry: Google
  ``name: text``, ``name (type, optional): text``; NumPy ``name : type``,
  ``name`` or ``a, b : type``; reST ``:param name:``, ``:param type name:``.
  Deeper lines continue it. A line at that level which is not an entry starts
  an unnamed one, whose text is dropped rather than given to the one before.
- A name loses its ``*`` or ``**`` and is normalised as Python normalises
  identifiers (NFKC); one that is then not an identifier is no entry.
- An entry's text is its lines, stripped and joined by single spaces, blank
  lines (paragraphs) included. An entry without text is left out; when a name
  has two entries, the first is kept.

Every step is a scan of lines or a regular expression without nested
repetition, so the work grows with the docstring's length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from hermes_core._base._frozen import derive, frozen

__all__ = ["Docstring", "parse_docstring"]

_PARAM_SECTIONS = (
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "other parameters",
)
_OTHER_SECTIONS = (
    "attributes",
    "example",
    "examples",
    "methods",
    "note",
    "notes",
    "raises",
    "receives",
    "references",
    "return",
    "returns",
    "see also",
    "todo",
    "warning",
    "warnings",
    "warns",
    "yield",
    "yields",
)
#: Section titles (lowercase, single spaces), each mapped to whether the section lists parameters.
_SECTIONS: Final[Mapping[str, bool]] = MappingProxyType(
    dict.fromkeys(_PARAM_SECTIONS, True) | dict.fromkeys(_OTHER_SECTIONS, False)
)
#: reST fields that document a parameter: ``:param x:`` and its synonyms (Sphinx's Python domain).
_PARAM_FIELDS: Final = frozenset({"param", "parameter", "arg", "argument", "key", "keyword", "kwarg", "kwparam"})
#: reST fields that end the description without documenting a parameter.
_OTHER_FIELDS: Final = frozenset(
    {
        "cvar",
        "except",
        "exception",
        "ivar",
        "kwtype",
        "meta",
        "raise",
        "raises",
        "return",
        "returns",
        "rtype",
        "type",
        "var",
        "vartype",
        "yield",
        "yields",
        "ytype",
    }
)
# name, optional (type), colon, text. The possessive \s*+ and the lazy type (ended by "):") keep a
# failed match linear: no two repetitions can share the same characters.
_GOOGLE_ENTRY = re.compile(r"\*{0,2}(\w++)\s*+(?:\(.*?\)\s*+)?:(.*)")
_MIN_UNDERLINE = 3


@frozen
class Docstring:
    """What a docstring says about its function, as :func:`parse_docstring` reads it.

    Attributes:
        description: the summary and body, paragraphs kept; None if the docstring has none.
        params: each documented parameter's name and its text on one line, in the docstring's order
            (read-only; a mapping given to the constructor is copied).
    """

    description: str | None
    params: Mapping[str, str]

    def __post_init__(self) -> None:
        derive(self, params=MappingProxyType(dict(self.params)))

    def __hash__(self) -> int:
        # The generated hash would hash the mapping proxy, which refuses.
        return hash((self.description, tuple(self.params.items())))


_EMPTY: Final = Docstring(None, {})

# A section reader: (lines, index of the section's first line, whether it lists parameters, where to
# put them) -> index of the first line after the section.
_Reader = Callable[[list[str], int, bool, dict[str, str]], int]


def parse_docstring(doc: str | None) -> Docstring:
    """The description and parameter texts of *doc*, in any of the styles the module describes.

    Args:
        doc: a docstring, such as a function's ``__doc__``; None is a missing one.

    Returns:
        A :class:`Docstring`; for None, an empty or a blank text, one with no description and no params.
        It never raises, whatever the text.
    """
    if not isinstance(doc, str):  # None, or a __doc__ set to something else
        return _EMPTY
    lines = _clean(str.__str__(doc))  # a str subclass's own methods are not called
    params: dict[str, str] = {}
    end = len(lines)
    index = 0
    while index < len(lines):
        found = _section_at(lines, index)
        if found is None:
            index += 1
            continue
        end = min(end, index)
        reader, listing = found
        index = reader(lines, index, listing, params)
    description = "\n".join(lines[:end]).rstrip("\n")
    return Docstring(description or None, params) if description or params else _EMPTY


def _clean(text: str) -> list[str]:
    """The lines of *text* as :func:`inspect.cleandoc` leaves them, each also stripped on the right."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").expandtabs().split("\n")]
    margin = min((len(line) - len(line.lstrip()) for line in lines[1:] if line), default=0)
    lines = [lines[0].lstrip(), *(line[margin:] for line in lines[1:])]
    while lines and not lines[-1]:
        lines.pop()
    start = 0
    while start < len(lines) and not lines[start]:
        start += 1
    return lines[start:]


def _at_base(line: str) -> bool:
    """Whether *line* has text at the base indentation (column 0)."""
    return bool(line) and not line[0].isspace()


def _title(line: str) -> str:
    """A possible section title as :data:`_SECTIONS` spells it: lowercase, spaces folded."""
    return " ".join(line.split()).lower()


def _section_at(lines: list[str], index: int) -> tuple[_Reader, bool] | None:
    """The reader of the section starting at line *index*, and whether it lists parameters; None if none does."""
    line = lines[index]
    if not _at_base(line):
        return None
    if line[0] == ":":
        field = _field(line)
        return None if field is None else (_read_field, field[0])
    following = lines[index + 1] if index + 1 < len(lines) else ""
    if len(following) >= _MIN_UNDERLINE and following.count("-") == len(following):
        listing = _SECTIONS.get(_title(line.removesuffix(":")))
        if listing is not None:
            return _read_numpy, listing
    if line[-1] == ":":
        listing = _SECTIONS.get(_title(line[:-1]))
        if listing is not None:
            return _read_google, listing
    return None


def _identifier(raw: str) -> str | None:
    """*raw* without leading stars, as Python would spell it as a name; None if it is not one."""
    name = raw.lstrip("*")
    if not name.isascii():  # ASCII is its own NFKC form: unicodedata is imported for the rest only (start-up)
        import unicodedata  # noqa: PLC0415

        name = unicodedata.normalize("NFKC", name)
    return name if name.isidentifier() else None


def _add(params: dict[str, str], names: list[str], parts: list[str]) -> None:
    """Give each of *names* the text of *parts*, unless it is empty or the name already has one."""
    text = " ".join(part for part in parts if part)
    if text:
        for name in names:
            params.setdefault(name, text)


def _indented_end(lines: list[str], index: int) -> int:
    """The index of the first line after *index* with text at the base indentation, or the end."""
    index += 1
    while index < len(lines) and not _at_base(lines[index]):
        index += 1
    return index


# -- reST / Sphinx fields ---------------------------------------------------------------------------


def _field(line: str) -> tuple[bool, str | None, str] | None:
    """For a field line: whether it documents a parameter, the parameter's name, the text after it."""
    close = line.find(":", 1)
    words = line[1:close].split()
    if close < 0 or not words or line[1].isspace():
        return None
    if words[0] in _PARAM_FIELDS:
        return True, _identifier(words[-1]) if len(words) > 1 else None, line[close + 1 :].strip()
    if words[0] in _OTHER_FIELDS:
        return False, None, ""
    return None


def _read_field(lines: list[str], index: int, listing: bool, params: dict[str, str]) -> int:
    """Read the field at *index* and its indented continuation lines."""
    end = _indented_end(lines, index)
    field = _field(lines[index])
    if listing and field is not None and field[1] is not None:
        _add(params, [field[1]], [field[2], *(line.strip() for line in lines[index + 1 : end])])
    return end


# -- Google sections --------------------------------------------------------------------------------


def _read_google(lines: list[str], index: int, listing: bool, params: dict[str, str]) -> int:
    """Read the section whose title is at *index*: the indented lines under it."""
    end = _indented_end(lines, index)
    if not listing:
        return end
    level: int | None = None
    names: list[str] = []
    parts: list[str] = []
    for line in lines[index + 1 : end]:
        text = line.lstrip()
        if not text:
            continue
        indent = len(line) - len(text)
        if level is None:
            level = indent
        if indent > level:
            parts.append(text)
            continue
        _add(params, names, parts)
        entry = _GOOGLE_ENTRY.match(text)
        name = None if entry is None else _identifier(entry[1])
        names = [] if name is None else [name]
        parts = [] if entry is None else [entry[2].strip()]
    _add(params, names, parts)
    return end


# -- NumPy sections ---------------------------------------------------------------------------------


def _read_numpy(lines: list[str], index: int, listing: bool, params: dict[str, str]) -> int:
    """Read the section whose title is at *index* (its underline below): every line up to the next section."""
    end = index + 2
    while end < len(lines) and _section_at(lines, end) is None:
        end += 1
    if not listing:
        return end
    names: list[str] = []
    parts: list[str] = []
    for line in lines[index + 2 : end]:
        if _at_base(line):
            _add(params, names, parts)
            raw = line.partition(":")[0].split(",")
            names = [name for name in map(_identifier, map(str.strip, raw)) if name is not None]
            if len(names) < len(raw):  # not a list of names: an entry with none
                names = []
            parts = []
        elif line:
            parts.append(line.strip())
    _add(params, names, parts)
    return end
