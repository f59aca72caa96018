"""Names of tools and of named schemas: the one rule they follow, and suggestions for a mistyped one.

A name is one or more segments joined by ``.``, each a letter or ``_`` then
letters of either case, digits, ``_`` or ``-``, at most :data:`NAME_MAX`
characters in all: ``fs.write``, ``getTinyImage``, ``Weather_GetForecast``,
``api.Users.get_user``, the names MCP servers and function-calling APIs give
their tools, so any such tool is hosted under its own name. Tools and named
schemas share the rule, and every layer that takes a name (``define_tool``,
``s.ref``, ``Runtime(schemas=...)``, the plugin loader) checks it with
:func:`check_name`.

Names are case-sensitive, but two tools whose names differ only in case
(``getTinyImage``, ``gettinyimage``) clash as a name given twice does: models
and clients that fold case could not tell them apart. :func:`case_key` is what
such names share, and the checks that refuse a name given twice compare it.

:func:`suggest` answers a mistyped name with the closest registered ones. Up
to :data:`MAX_COMPARED` names, it compares the name with every one of them; a
larger registry is searched through a :class:`NameIndex`, built once, so that
a miss among 100,000 names costs about what one among a few hundred does.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Final, final

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import shorten

__all__ = [
    "MAX_COMPARED",
    "NAME_MAX",
    "NAME_PATTERN",
    "NameIndex",
    "case_key",
    "check_name",
    "is_name",
    "suggest",
]

#: Segments joined by ``.``, each ``[A-Za-z_][A-Za-z0-9_-]*`` (what MCP allows within a segment).
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*\Z")
#: The longest name allowed.
NAME_MAX = 64
#: The most registered names :func:`suggest` compares a mistyped name with (difflib's ratio): all
#: of them up to this many, else the ones that share the most three-letter sequences with it.
MAX_COMPARED: Final = 300

# What _fold makes one ".": a run of white space and separators. Compiled where a name is folded that is not
# plain ASCII (_fold); a tool's name is folded at every start (docs/performance.md, start-up).
_SEPARATORS = r"[\s_\-/:]+"
# What \s is in ASCII text, and the separators: each made "\0", then each run of "\0" one ".".
_ASCII_SEPARATORS = str.maketrans(dict.fromkeys(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f_-/:", "\0"))
# How close a spelling must be to be suggested: difflib's ratio, as get_close_matches defaults it.
_CUTOFF = 0.6


def is_name(name: object) -> bool:
    """Whether *name* is a string that follows the rule."""
    return isinstance(name, str) and len(name) <= NAME_MAX and NAME_PATTERN.match(name) is not None


def case_key(name: str) -> str:
    """What names differing only in case share: ``getTinyImage`` and ``gettinyimage`` → ``gettinyimage``."""
    return name.casefold()


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
        "must be segments joined by '.', each a letter or '_' then letters, digits, '_' or '-', "
        f"at most {NAME_MAX} characters (such as {example!r}), got {shorten(repr(name))}",
    )


def _fold(name: str) -> str:
    """A name as a model might mistype it, folded: ``FS_Write`` and ``fs/write`` → ``fs.write``.

    As ``re.sub(_SEPARATORS, ".", name.strip().lower())``.
    """
    text = name.strip().lower()
    if not text.isascii() or "\0" in text:  # other white space: the expression's (compiled, and kept by re)
        return re.sub(_SEPARATORS, ".", text)
    text = text.translate(_ASCII_SEPARATORS)
    while "\0\0" in text:
        text = text.replace("\0\0", "\0")
    return text.replace("\0", ".")


def _grams(folded: str) -> list[str]:
    """The three-letter sequences of a folded name, in order, its ends marked: ``fs`` → ``^fs``, ``fs$``."""
    marked = f"\x02{folded}\x03"
    return [marked[i : i + 3] for i in range(len(marked) - 2)]


def _close_matches(name: str, candidates: Iterable[str], limit: int) -> list[str]:
    """What ``difflib.get_close_matches(name, candidates, limit, 0.6)`` returns, found with less work.

    The same scores, order and ties (score, then the name, both descending);
    but once *limit* matches are held, a candidate whose upper bounds
    (``real_quick_ratio``, ``quick_ratio``) fall below the weakest of them is
    skipped without computing its ratio, the dear part. Candidates given best
    first are skipped the most (docs/performance.md, "Name suggestions at scale").
    """
    if limit < 1:
        return []
    import difflib  # noqa: PLC0415 - a mistyped name only: start-up (docs/performance.md)
    import heapq  # noqa: PLC0415 - as difflib, which imports it

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(name)
    best: list[tuple[float, str]] = []  # a min-heap of the *limit* best (score, candidate)
    for candidate in candidates:
        matcher.set_seq1(candidate)
        floor = best[0][0] if len(best) == limit else _CUTOFF
        if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
            continue
        score = matcher.ratio()
        if score < _CUTOFF:
            continue
        if len(best) < limit:
            heapq.heappush(best, (score, candidate))
        elif (score, candidate) > best[0]:
            heapq.heapreplace(best, (score, candidate))
    return [candidate for _, candidate in sorted(best, reverse=True)]


def _beyond_reach(name: str, longest: int) -> bool:
    """Whether *name* is too long to be close to any name of at most *longest* characters.

    difflib's ratio is at most ``2 * shorter / (both lengths)``: at 0.6, a name more than 7/3 times the
    longest is close to none, and folding it (stripping, joining separators) is not worth its cost
    either. A model or client may send a name of megabytes: it is refused in time and memory that do
    not grow with it (without this, a 10 MB name cost 0.9 s and 400 MB in difflib).
    """
    return len(name) > 3 * longest + 8


def _closest(name: str, folded_matches: list[str], candidates: Iterable[str], limit: int) -> tuple[str, ...]:
    """The folded matches first, then the closest *candidates* (difflib's ratio at least 0.6), at most *limit*."""
    found = list(folded_matches)
    for close in _close_matches(name, candidates, limit):
        if close not in found:
            found.append(close)
    return tuple(found[:limit])


# Of a mistyped name's sequences, the rarest are counted first, up to this many list entries in all:
# a sequence nearly every name has (the "too" of "tool_1") costs the most and tells the least.
_POSTINGS_BUDGET = 20_000
# How many of the best-counted names are ranked again, by count then closeness of length, before
# MAX_COMPARED of them go to difflib: many names often share a count, and their order of
# registration must not decide which are compared.
_POOL = 4 * MAX_COMPARED


@final
@frozen(init=False, eq=False, repr=False)
class NameIndex:
    """Registered names, indexed once, so that :func:`suggest` answers a mistyped one in bounded time.

    Built in one pass over the names, linear in their number and length. It
    holds each name's folded form (for slips of case and separators) and, for
    more than :data:`MAX_COMPARED` names, which names hold each three-letter
    sequence: a mistyped name is then compared with the :data:`MAX_COMPARED`
    names sharing the most sequences with it, not with all of them. A runtime
    of many tools can build one with itself and pass it to :func:`suggest`.

    Args:
        names: the registered names, in registration order (a mapping's keys).
    """

    names: tuple[str, ...]
    _folded: dict[str, list[str]]
    _postings: dict[str, list[int]]
    _lengths: tuple[int, ...]
    _longest: int

    def __init__(self, names: Iterable[str] | Mapping[str, object]) -> None:
        known = tuple(names)
        folded: dict[str, list[str]] = {}
        postings: defaultdict[str, list[int]] = defaultdict(list)
        lengths: list[int] = []
        large = len(known) > MAX_COMPARED
        for position, name in enumerate(known):
            form = _fold(name)
            folded.setdefault(form, []).append(name)
            if large:
                lengths.append(len(form))
                for gram in _grams(form):  # repeats kept: "tool_999" holds "999" once, "tool_9999" twice
                    postings[gram].append(position)
        longest = max(map(len, known), default=0)
        derive(self, names=known, _folded=folded, _postings=dict(postings), _lengths=tuple(lengths), _longest=longest)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"<NameIndex of {len(self.names)} names>"

    def suggest(self, name: str, *, limit: int = 3) -> tuple[str, ...]:
        """The registered names closest to *name*, best first, at most *limit*; see :func:`suggest`."""
        if _beyond_reach(name, self._longest):
            return ()
        folded = _fold(name)
        matches = self._folded.get(folded, [])
        if len(self.names) <= MAX_COMPARED:
            return _closest(name, matches, self.names, limit)
        return _closest(name, matches, self._candidates(folded), limit)

    def _candidates(self, folded: str) -> list[str]:
        """The :data:`MAX_COMPARED` names sharing the most three-letter sequences with *folded*."""
        lists = sorted((self._postings.get(gram, []) for gram in set(_grams(folded))), key=len)
        counts: Counter[int] = Counter()
        budget = _POSTINGS_BUDGET
        for positions in lists:
            if len(positions) > budget:
                if not counts:  # even the rarest sequence is everywhere: count a slice of it
                    counts.update(positions[:budget])
                break
            counts.update(positions)
            budget -= len(positions)
        lengths, size = self._lengths, len(folded)
        pool = counts.most_common(_POOL)
        pool.sort(key=lambda item: (-item[1], abs(lengths[item[0]] - size)))
        return [self.names[position] for position, _ in pool[:MAX_COMPARED]]


# suggest() on a large plain collection (the runtime's dict of tools) indexes it on the first miss
# and keeps the index with the names it holds, so that a changed collection is indexed anew: a
# later miss compares the names with those (about 1 ms for 100,000, each comparison an identity
# test) instead of comparing the mistyped name with every one of them (docs/performance.md,
# "Name suggestions at scale", the TOOL_NOT_FOUND rows).
_INDEXES: list[NameIndex] = []
_INDEXES_MAX = 8


def _kept_index(known: tuple[str, ...]) -> NameIndex:
    """The kept index of exactly these names, in this order, or a new one, then kept."""
    for index in _INDEXES:
        if index.names == known:
            return index
    index = NameIndex(known)
    _INDEXES[:] = [*_INDEXES[1 - _INDEXES_MAX :], index]  # one assignment: safe with other threads missing too
    return index


def suggest(name: str, names: NameIndex | Iterable[str] | Mapping[str, object], *, limit: int = 3) -> tuple[str, ...]:
    """The registered *names* closest to *name*, best first, at most *limit*.

    A name that differs only in case or separators (``FS_Write`` for
    ``fs.write``) comes first; then close spellings (difflib's ratio at least
    0.6). Up to :data:`MAX_COMPARED` names, every one is compared; beyond, the
    names are indexed once (a :class:`NameIndex`, kept for the same names) and
    only the :data:`MAX_COMPARED` sharing the most three-letter sequences with
    *name* are compared.

    Args:
        name: the name that was asked for.
        names: the registered names: a :class:`NameIndex`, any iterable of
            names, or a mapping whose keys are the names.
        limit: the most names returned.

    Returns:
        The suggestions, possibly none.
    """
    if isinstance(names, NameIndex):
        return names.suggest(name, limit=limit)
    known = tuple(names)
    if len(known) <= MAX_COMPARED:
        if _beyond_reach(name, max(map(len, known), default=0)):
            return ()
        folded = _fold(name)
        return _closest(name, [candidate for candidate in known if _fold(candidate) == folded], known, limit)
    return _kept_index(known).suggest(name, limit=limit)
