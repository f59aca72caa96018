"""The installed distributions' entry points and metadata, read as ``importlib.metadata`` reads them.

Discovery needs little of an installed distribution: its entry points of one
group, its name, version and ``Requires-Dist``, and one file (an editable
install's ``direct_url.json``). ``importlib.metadata`` gives all of that, but
importing it costs about three times a bare Python start (it brings
``email``, ``zipfile``, ``csv`` and ``pathlib`` with it), more than all the
rest of ``hermesos tools list`` but loading the plugins themselves
(docs/performance.md, start-up).

So this module reads the same files the same way, for the common case it can
read exactly: every ``sys.path`` entry a directory (or missing), and no finder
on ``sys.meta_path`` but the standard path finder offering distributions. In
that case:

* the ``*.dist-info`` and ``*.egg-info`` directories of each ``sys.path``
  entry (the empty entry is the current directory) are the distributions, in
  ``sys.path`` order and each directory's listing order, and the first of a
  name wins, as ``importlib.metadata.entry_points()`` has it;
* ``entry_points.txt`` is read as its INI-like format, ``METADATA`` (or
  ``PKG-INFO``) as RFC 822 headers up to the first blank line.

Anything else (a zip file or an egg on ``sys.path``, a finder of its own) is handed to
``importlib.metadata`` itself, whose objects offer the same attributes.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from importlib.machinery import PathFinder
from typing import Any

__all__ = ["Distribution", "EntryPoint", "distribution", "entry_points"]

# importlib.metadata.EntryPoint.pattern: a module, then optionally ":" and attributes, then optionally extras.
# Asked only of a value that is not plainly "module" or "module:attribute" (_parts): compiling it cost every
# start of hermesos almost a million instructions (docs/performance.md, start-up).
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"
_PLAIN_VALUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:")
_SUFFIXES = (".dist-info", ".egg-info")


def _header_name(name: str) -> bool:
    """Whether email takes *name* as a header's name: printable ASCII but the space and the colon."""
    return name.isascii() and name.isprintable() and " " not in name and ":" not in name


def _parts(value: str) -> tuple[str, str | None] | None:
    """The module and the attributes (or None) an entry point's *value* names, as ``_VALUE`` reads them; else None."""
    if value.isascii() and _PLAIN_VALUE.issuperset(value):
        module, colon, attribute = value.partition(":")
        if module and (not colon or (attribute and ":" not in attribute)):
            return module, attribute if colon else None
    match = re.match(_VALUE, value)  # compiled here, and kept by re
    return None if match is None else (match.group("module"), match.group("attr"))


class Distribution:
    """One installed distribution: its metadata folder, read on demand (as ``importlib.metadata.Distribution``)."""

    __slots__ = ("_folder", "_headers")

    def __init__(self, folder: str) -> None:
        self._folder = folder
        self._headers: dict[str, list[str]] | None = None

    def read_text(self, filename: str) -> str | None:
        """The text of *filename* in the metadata folder; None if there is no such file."""
        try:
            with open(os.path.join(self._folder, filename), encoding="utf-8") as file:
                return file.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None

    @property
    def metadata(self) -> _Headers:
        """The ``METADATA`` (or ``PKG-INFO``) headers: ``metadata["Name"]``, ``metadata.get_all("Requires-Dist")``."""
        if self._headers is None:
            self._headers = _headers(self.read_text("METADATA") or self.read_text("PKG-INFO") or "")
        return _Headers(self._headers)


class _Headers:
    """RFC 822 headers, case-insensitive, as ``email.message.Message`` answers the two questions asked of them."""

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, list[str]]) -> None:
        self._values = values

    def __getitem__(self, name: str) -> str | None:
        found = self._values.get(name.lower())
        return found[0] if found else None

    def get_all(self, name: str) -> list[str] | None:
        return self._values.get(name.lower())


def _headers(text: str) -> dict[str, list[str]]:
    """The header fields of *text*, by lowercased name, as ``importlib.metadata`` reads them through ``email``.

    The headers end at the first empty line, or at a line that is neither a
    field (``Name: value``) nor a continuation (indented). A value is the text
    after the colon without its leading blanks, its continuation lines
    joined to it by line breaks, then dedented as ``importlib.metadata``
    dedents a folded value.
    """
    fields: list[tuple[str, list[str]]] = []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # Only the lines before the first empty one are split: what follows (the description, often a whole
    # README) would cost more to split than the rest of reading a plugin's metadata (docs/performance.md).
    end = text.find("\n\n")
    for line in (text if end < 0 else text[:end]).split("\n"):
        if not line:
            break
        if line[0] in " \t":
            if fields:
                fields[-1][1].append(line)
            continue
        name, colon, value = line.partition(":")
        if not colon or not _header_name(name):
            break
        fields.append((name.lower(), [value.lstrip(" \t")]))
    values: dict[str, list[str]] = {}
    for name, lines in fields:
        value = "\n".join(lines)
        if "\n" in value:
            import textwrap  # noqa: PLC0415 - a folded value only

            value = textwrap.dedent(" " * 8 + value)
        values.setdefault(name, []).append(value)
    return values


class EntryPoint:
    """One entry point: ``name = value`` in a group of a distribution's ``entry_points.txt``."""

    __slots__ = ("dist", "group", "name", "value")

    def __init__(self, name: str, value: str, group: str, dist: Distribution) -> None:
        self.name, self.value, self.group, self.dist = name, value, group, dist

    @property
    def module(self) -> str:
        parts = _parts(self.value)
        return parts[0] if parts else self.value

    def load(self) -> Any:
        """Import the module the value names and return it, or the attribute it names in it."""
        parts = _parts(self.value)
        if parts is None:
            raise ValueError(f"{self.value!r} is not an entry point's value (module or module:attribute)")
        loaded: Any = importlib.import_module(parts[0])
        for attribute in (parts[1] or "").split("."):
            if attribute:
                loaded = getattr(loaded, attribute)
        return loaded


def _readable() -> bool:
    """Whether this module reads the distributions exactly as importlib.metadata would (see the module)."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and finder is not PathFinder:
            return False
    # A zip file, or an egg (whose metadata is its EGG-INFO folder).
    return not any(entry.lower().endswith(".egg") or os.path.isfile(entry) for entry in sys.path if entry)


def _folders() -> list[tuple[str, str]]:
    """Every distribution's metadata folder, with its normalized name; the first of a name only."""
    seen: set[str] = set()
    found: list[tuple[str, str]] = []
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:  # missing, not a directory, unreadable: importlib.metadata finds nothing there either
            continue
        for child in children:
            low = child.lower()
            if not low.endswith(_SUFFIXES):
                continue
            # A file too (a distutils .egg-info): it has no entry points, but its name is taken all the same.
            folder = os.path.join(root, child)
            name = _normalized(low.rpartition(".")[0].partition("-")[0])
            if name not in seen:
                seen.add(name)
                found.append((name, folder))
    return found


def _normalized(name: str) -> str:
    """importlib.metadata's Prepared.normalize: PEP 503, with underscores (``re.sub(r"[-_.]+", "-", name)``...)."""
    text = name.replace("-", "_").replace(".", "_")
    while "__" in text:  # each run of separators one underscore, without compiling an expression (start-up)
        text = text.replace("__", "_")
    return text.lower()


def entry_points(group: str) -> list[Any]:
    """The entry points of *group* of every installed distribution, as ``importlib.metadata.entry_points(group=)``."""
    if not _readable():
        from importlib.metadata import entry_points as standard  # noqa: PLC0415 - the uncommon case only

        return list(standard(group=group))
    found: list[Any] = []
    for _, folder in _folders():
        dist = Distribution(folder)
        text = dist.read_text("entry_points.txt")
        if text:
            found.extend(EntryPoint(name, value, group, dist) for name, value in _section(text, group))
    return found


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` pairs of section *group* of an ``entry_points.txt``."""
    pairs: list[tuple[str, str]] = []
    if group not in text:  # most distributions' entry points are in other groups: their lines are not read
        return pairs
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")  # as importlib.metadata names it: "[ x ]" is " x ", "[[x]]" is "x"
            continue
        if section == group:
            name, equals, value = line.partition("=")
            if equals:
                pairs.append((name.strip(), value.strip()))
    return pairs


def distribution(name: str) -> Any:
    """The installed distribution *name*, as ``importlib.metadata.distribution``; None if none is installed."""
    if not _readable():
        import importlib.metadata  # noqa: PLC0415 - the uncommon case only

        try:
            return importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    wanted = _normalized(name)
    for found, folder in _folders():
        if found == wanted:
            return Distribution(folder)
    return None
