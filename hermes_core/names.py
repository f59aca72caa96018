"""Names of tools and of named schemas: the one rule they follow, and suggestions for a mistyped one.

A name is dot-separated lowercase segments, each a letter then letters,
digits or underscores, at most :data:`NAME_MAX` characters: ``fs.write``,
``http.get``, ``fs.path``. Tools and named schemas share the rule, and every
layer that takes a name (``define_tool``, ``s.ref``, ``Runtime(schemas=...)``,
the plugin loader) checks it with :func:`check_name`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from hermes_core.errors import InvalidDefinitionError, shorten

__all__ = ["NAME_MAX", "NAME_PATTERN", "check_name", "is_name", "suggest"]

#: Dot-separated lowercase segments, each ``[a-z][a-z0-9_]*``.
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\Z")
#: The longest name allowed.
NAME_MAX = 64

_SEPARATORS = re.compile(r"[\s_\-/:]+")


def is_name(name: object) -> bool:
    """Whether *name* is a string that follows the rule."""
    return isinstance(name, str) and len(name) <= NAME_MAX and NAME_PATTERN.match(name) is not None


def check_name(declaration: str, field: str | None, name: object, *, example: str) -> str:
    """Return *name* if it follows the rule.

    Raises:
        InvalidDefinitionError: naming *declaration* and *field*, with *example*
            (such as ``'fs.write'``) as what would have been right.
    """
    if is_name(name):
        return name  # type: ignore[return-value] # is_name checked it is a str
    raise InvalidDefinitionError(
        declaration,
        field,
        "must be dot-separated lowercase segments, each a letter then letters, digits or underscores, "
        f"at most {NAME_MAX} characters (such as {example!r}), got {shorten(repr(name))}",
    )


def _fold(name: str) -> str:
    """A name as a model might mistype it, folded: ``FS_Write`` and ``fs/write`` → ``fs.write``."""
    return _SEPARATORS.sub(".", name.strip().lower())


def suggest(name: str, names: Iterable[str] | Mapping[str, object], *, limit: int = 3) -> tuple[str, ...]:
    """The registered *names* closest to *name*, best first, at most *limit*.

    A name that differs only in case or separators (``FS_Write`` for
    ``fs.write``) comes first; then close spellings.
    """
    known = list(names)
    found: list[str] = []
    folded = _fold(name)
    found.extend(candidate for candidate in known if _fold(candidate) == folded)
    for close in difflib.get_close_matches(name, known, n=limit, cutoff=0.6):
        if close not in found:
            found.append(close)
    return tuple(found[:limit])
