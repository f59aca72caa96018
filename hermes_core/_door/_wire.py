"""Wire names: the names tools go by where a model or a client sends them.

OpenAI and Anthropic accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``,
and several MCP clients refuse a dot. One mapping, shared by every adapter,
turns a tool's name into its wire name:

* a name that already matches is unchanged (``search``, ``fs_read``);
* otherwise each character outside ``[a-zA-Z0-9_-]`` becomes ``_``
  (``fs.read`` → ``fs_read``);
* a result longer than 64 characters keeps its first 55 and ends with ``_``
  and 8 hex digits of the name's SHA-256, stable across runs and machines.

Two tools whose wire names are the same (``fs.read`` and ``fs_read``), or
differ only in case (some clients fold case), cannot both be shown: a
:class:`WireNames` of them raises :class:`~hermes_core.InvalidDefinitionError`
naming both.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, final

from hermes_core._base._errors import (
    InputInvalidError,
    InvalidDefinitionError,
    OutputInvalidError,
    ToolError,
    ToolNotFoundError,
)
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import Issue
from hermes_core._base._names import suggest

__all__ = ["WIRE_MAX", "WIRE_PATTERN", "WireNames", "wire_name"]

#: What OpenAI and Anthropic accept as a tool's name.
WIRE_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}\Z")
#: The longest wire name.
WIRE_MAX = 64
_OTHER = re.compile(r"[^a-zA-Z0-9_-]")
_HASHED_PREFIX = WIRE_MAX - 9  # the prefix kept, then "_" and 8 hex digits
# The issue details a WireNames remembers as naming no renamed tool, and the longest it remembers: the
# same few details ("must be an integer, got string") come back on every failed call (bench_adapters, row 1e).
_PLAIN_MAX = 1024
_PLAIN_LONGEST = 200
# The errors whose fields are a tool name and issues (see WireNames.shown).
_TOOL_AND_ISSUES = frozenset({InputInvalidError, OutputInvalidError})


def wire_name(name: str) -> str:
    """The wire name of the tool *name* (see the module's rules).

    >>> wire_name("fs.read"), wire_name("fs_read"), wire_name("search")
    ('fs_read', 'fs_read', 'search')
    """
    if WIRE_PATTERN.match(name):
        return name
    mapped = _OTHER.sub("_", name) or "_"
    if len(mapped) <= WIRE_MAX:
        return mapped
    import hashlib  # noqa: PLC0415 - a name past 64 characters only: start-up (docs/performance.md)

    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{mapped[:_HASHED_PREFIX]}_{digest}"


@final
@frozen(init=False)
class WireNames:
    """The wire names of a set of tools, both ways.

    Args:
        names: the tools' names, in order.

    Raises:
        InvalidDefinitionError: two names have the same wire name, or wire
            names that differ only in case; the message names both tools.
    """

    to_wire: Mapping[str, str]
    to_name: Mapping[str, str]
    _renamed: re.Pattern[str] | None
    _mentions: re.Pattern[str] | None
    # Details known to name no renamed tool; not a field that compares, hashes or prints.
    _plain: dict[str, None] = dataclasses.field(compare=False, repr=False)
    _wire_of: dict[str, str] = dataclasses.field(compare=False, repr=False)  # to_wire's own dict

    def __init__(self, names: Iterable[str]) -> None:
        to_wire: dict[str, str] = {}
        to_name: dict[str, str] = {}
        folded: dict[str, str] = {}
        for name in names:
            wire = wire_name(name)
            other = to_name.get(wire) or folded.get(wire.casefold())
            if other is not None:
                same = "the same wire name" if wire_name(other) == wire else "wire names that differ only in case"
                raise InvalidDefinitionError(
                    f'tools "{other}" and "{name}"',
                    None,
                    f"have {same} ({wire_name(other)!r}, {wire!r}), which models and clients send instead of the "
                    "tool's name; rename one of them",
                )
            to_wire[name] = wire
            to_name[wire] = name
            folded[wire.casefold()] = name
        # The names that change, longest first, where they stand as names (a sentence's full stop may follow).
        changed = sorted((name for name, wire in to_wire.items() if wire != name), key=len, reverse=True)
        alternatives = "|".join(map(re.escape, changed))
        renamed = re.compile(rf"(?<![\w.-])({alternatives})(?![\w-])(?!\.[\w-])") if changed else None
        # Whether a text may name one at all: without the lookbehind the search skips to the names' first
        # characters, where the exact pattern tries every position (bench_adapters, row 1e: 0.47 to 0.1 µs).
        mentions = re.compile(alternatives) if changed else None
        derive(
            self,
            to_wire=MappingProxyType(to_wire),
            _wire_of=to_wire,  # a proxy's get costs twice as much (bench_adapters, row 1e)
            to_name=MappingProxyType(to_name),
            _renamed=renamed,
            _mentions=mentions,
            _plain={},
        )

    def rewrite(self, text: str) -> str:
        """*text* with every tool name that has another wire name written as its wire name.

        Descriptions and messages name tools (``list the directory with
        fs.list``); a model must only ever be told names it can send.

        >>> WireNames(["fs.list", "fs.read"]).rewrite("Call fs.list first, then fs.read.")
        'Call fs_list first, then fs_read.'
        """
        return self._rewritten(text, values=False)

    def _rewritten(self, text: str, *, values: bool) -> str:
        """*text* as :meth:`rewrite` writes it; with *values*, a name inside a double-quoted value is kept.

        An issue's detail quotes values as JSON does (``must be one of "fs.read", "fs.list"``): those
        are what the field takes, as the definitions the model was given show them, and told a wire
        name instead, a model would send it and be refused again. Its own words are still rewritten.
        """
        if self._renamed is None or self._mentions is None or self._mentions.search(text) is None:
            return text

        def renamed(match: re.Match[str]) -> str:
            if values:
                start = match.start()
                if (text.count('"', 0, start) - text.count('\\"', 0, start)) % 2:
                    return match.group(1)
            return self.to_wire[match.group(1)]

        return self._renamed.sub(renamed, text)

    def rewrite_in(self, data: Any, keys: frozenset[str]) -> Any:
        """A copy of JSON *data* with :meth:`rewrite` applied to every string under one of *keys*, at any depth.

        >>> WireNames(["fs.list"]).rewrite_in({"a": [{"description": "see fs.list"}]}, frozenset({"description"}))
        {'a': [{'description': 'see fs_list'}]}
        """
        if self._renamed is None:
            return data
        if isinstance(data, dict):
            return {
                key: self.rewrite(value) if key in keys and isinstance(value, str) else self.rewrite_in(value, keys)
                for key, value in data.items()
            }
        if isinstance(data, list):
            return [self.rewrite_in(item, keys) for item in data]
        return data

    def lookup(self, wire: object) -> str:
        """The tool name whose wire name is *wire*.

        Raises:
            ToolNotFoundError: no tool has that wire name; the suggestions are
                wire names, the only names a model can send.
        """
        name = self.to_name.get(wire) if type(wire) is str else None
        if name is None:
            if not isinstance(wire, str):
                raise ToolNotFoundError(None)
            text = str.__str__(wire)  # a str subclass's own methods are never run
            raise ToolNotFoundError(text, suggest(text, self.to_name))
        return name

    def shown(self, error: ToolError) -> ToolError:
        """*error* as a model may be shown it: every tool it names, in any field, by its wire name.

        The error is rebuilt from its fields, with *error* as its ``__cause__``:
        the ``tool`` field renamed, tool names in texts (a ``detail``, each
        issue's detail, a ``reject()`` reason) rewritten, and a
        ``TOOL_NOT_FOUND``'s suggestions given as wire names (its ``name`` is
        what was sent, kept as it is). One with nothing to rename is returned
        as it is, so the message, ``to_dict()`` and every field agree.
        """
        if self._renamed is None:  # no tool's wire name differs from its name: nothing to rename
            return error
        # On every failed call a model is told about (bench_adapters, row 1e): whether a field changes is
        # decided first, only an error with one that does is rebuilt, from every field renamed. First, with no
        # call and no getattr, the most common: a call's input or output refused under its wire name, with the
        # details of issues seen before (remembered by _mention_in as naming no tool).
        if type(error) in _TOOL_AND_ISSUES and self._wire_of.get(error.tool, error.tool) == error.tool:  # type: ignore[attr-defined]
            plain = self._plain
            for issue in error.issues:  # type: ignore[attr-defined]
                if type(issue.detail) is not str or issue.detail not in plain:
                    break
            else:
                return error
        for field in error.fields:
            value = getattr(error, field)
            if field == "tool" and type(value) is str:  # every tool error has one
                if self._wire_of.get(value, value) != value:
                    break
            elif field == "issues" and type(value) is tuple:
                if self._mention_in(value):
                    break
            else:
                renamed = self._renamed_field(field, value)
                if renamed is not value and renamed != value:
                    break
        else:
            return error
        values = {field: self._renamed_field(field, getattr(error, field)) for field in error.fields}
        rebuilt = type(error)(**values)
        rebuilt.__cause__ = error
        return rebuilt

    def _mention_in(self, issues: tuple[Issue, ...]) -> bool:
        """Whether an issue's detail names a tool whose wire name differs; the details that do not are remembered."""
        search, plain = self._mentions.search, self._plain  # type: ignore[union-attr] # set when a name is renamed
        for issue in issues:
            detail = issue.detail
            if type(detail) is not str:  # a subclass's own hash is never run
                if search(detail) is not None:
                    return True
            elif detail not in plain:
                if search(detail) is not None:
                    return True
                if len(plain) < _PLAIN_MAX and len(detail) <= _PLAIN_LONGEST:
                    plain[detail] = None
        return False

    def _renamed_field(self, field: str, value: Any) -> Any:
        if field == "tool" and isinstance(value, str):
            return self.to_wire.get(value, value)
        if field == "suggestions" and isinstance(value, tuple):
            return tuple(self.to_wire.get(name, name) for name in value)
        if field in ("detail", "reason") and isinstance(value, str):
            return self.rewrite(value)
        if field == "issues" and isinstance(value, tuple) and self._mentions is not None:
            search = self._mentions.search
            for issue in value:
                if search(issue.detail) is not None:
                    return tuple(issue._replace(detail=self._rewritten(issue.detail, values=True)) for issue in value)
            return value
        return value
