"""hermesos-policy: a permission provider reading grants and denies from a TOML policy file.

The file is found when plugins are loaded (see :func:`find_policy_file`), read
and checked once, then consulted on every call of a tool that declares
permissions::

    # hermesos-policy.toml
    grant = ["net:fetch"]            # for every tool
    deny = ["shell:*"]               # for every tool; a deny always wins

    [tools."fs.write"]               # for the tool fs.write only
    grant = ["fs:write"]

    [tools."fs.*"]                   # for every tool whose name starts with "fs."
    deny = ["net:*"]

For one tool and one permission, the rules that apply are the top-level lists
and the lists of every ``[tools."<selector>"]`` table whose selector matches the
tool. If any deny pattern that applies matches the permission, the answer is
False (denied, whatever any other grant or provider says); otherwise, if any
grant pattern that applies matches it, True; otherwise None (no opinion).

A malformed file is an :class:`~hermes_core.InvalidDefinitionError` at load,
naming the file and the line; it is never taken as an empty policy.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, final

from hermes_core import InvalidDefinitionError, StaticGrants, Tool, hookimpl, setting, shorten
from hermes_core import schema as s
from hermes_core.permissions import GRANT_PATTERN
from hermes_core.schema import NAME_PATTERN

__all__ = [
    "DEFAULT_FILE_NAME",
    "POLICY_ENV",
    "PolicyProvider",
    "find_policy_file",
    "hermes_permission_providers",
    "load_policy",
    "parse_policy",
]

#: The environment variable naming the policy file; when set (and not empty), no other place is looked at.
POLICY_ENV = "HERMESOS_POLICY"
#: The file looked for in the working directory when ``HERMESOS_POLICY`` is not set.
DEFAULT_FILE_NAME = "hermesos-policy.toml"

_POLICY_SETTING = s.string(min_length=1, description="the path of a TOML policy file")

_LISTS = ("grant", "deny")
_TOP_KEYS = (*_LISTS, "tools")
_SHAPE = 'a policy has top-level grant = [...] and deny = [...] lists and [tools."<tool name>"] tables'
_TOOL_SHAPE = "a tool table has only grant = [...] and deny = [...] lists"

_KeyPath = tuple[str | int, ...]


@final
@dataclass(frozen=True, slots=True)
class _Rule:
    """The grant and deny patterns of one part of the file: the top level (selector None) or one tool table."""

    selector: str | None
    grant: StaticGrants
    deny: StaticGrants

    def applies_to(self, tool: str) -> bool:
        if self.selector is None or self.selector == tool:
            return True
        return self.selector.endswith(".*") and tool.startswith(self.selector[:-1])


@final
class PolicyProvider:
    """A permission provider answering from a checked policy. Make one with :func:`load_policy`.

    Attributes:
        source: where the policy came from (the file's path), or None when
            there is no policy file, in which case every answer is None.

    """

    __slots__ = ("_rules", "source")

    def __init__(self, rules: Sequence[_Rule] = (), source: str | None = None) -> None:
        self._rules = tuple(rules)
        self.source = source

    def decide(self, tool: str, permission: str) -> bool | None:
        """The policy's answer for the tool named *tool* asking for *permission*.

        Returns:
            False if a deny pattern applying to the tool matches the permission,
            else True if a grant pattern applying to it does, else None.

        """
        granted = False
        for rule in self._rules:
            if rule.applies_to(tool):
                if rule.deny.allows(permission):
                    return False
                granted = granted or rule.grant.allows(permission)
        return True if granted else None

    def check(self, tool: Tool, permission: str) -> bool | None:
        """The provider protocol: :meth:`decide` for *tool*'s name."""
        return self.decide(tool.name, permission)

    def __repr__(self) -> str:
        return f"PolicyProvider({self.source!r})"


# -- finding the file ----------------------------------------------------------------------


def _user_config_file(environ: Mapping[str, str]) -> Path | None:
    """``policy.toml`` in the user's config directory for hermesos (XDG on POSIX, ``%APPDATA%`` on Windows)."""
    if os.name == "nt":
        base = environ.get("APPDATA")
        return Path(base, "hermesos", "policy.toml") if base else None
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative value is invalid and is ignored
        return Path(xdg, "hermesos", "policy.toml")
    try:
        return Path.home() / ".config" / "hermesos" / "policy.toml"
    except RuntimeError:  # no home directory can be determined
        return None


def find_policy_file(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """The policy file to use, or None if there is none.

    Looked for in this order, the first found being the only one read:

    1. the path in ``HERMESOS_POLICY``, if that is set and not empty (it must exist);
    2. ``hermesos-policy.toml`` in the working directory;
    3. ``hermesos/policy.toml`` in the user's config directory: ``$XDG_CONFIG_HOME``
       (default ``~/.config``), or ``%APPDATA%`` on Windows.

    Raises:
        InvalidDefinitionError: ``HERMESOS_POLICY`` names a file that does not exist
            (the declaration is ``setting HERMESOS_POLICY``).

    """
    environ = os.environ if environ is None else environ
    named: str | None = setting(POLICY_ENV, _POLICY_SETTING, default=None, environ=environ)
    if named is not None:
        path = Path(named).expanduser()
        if not path.exists():
            raise InvalidDefinitionError(
                f"setting {POLICY_ENV}",
                None,
                f'names "{path}", which does not exist; create it, fix the path, or unset {POLICY_ENV}',
            )
        return path
    for candidate in ((cwd or Path.cwd()) / DEFAULT_FILE_NAME, _user_config_file(environ)):
        if candidate is not None and candidate.exists():
            return candidate
    return None


# -- reading and checking it ---------------------------------------------------------------


def load_policy(path: str | os.PathLike[str]) -> PolicyProvider:
    """Read and check the policy file at *path*.

    Raises:
        InvalidDefinitionError: the file cannot be read, is not UTF-8, is not
            valid TOML, or is not a valid policy; the message names the file and
            the line.

    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise InvalidDefinitionError(
            f'policy file "{source}"', None, f"could not be read ({error.strerror or error}); check the path"
        ) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidDefinitionError(
            f'policy file "{source}", line {line}', None, "is not UTF-8 text; save the file as UTF-8"
        ) from None
    return parse_policy(text, source)


_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)\Z|\s*\(at end of document\)\Z")


def parse_policy(text: str, source: str = "<policy>") -> PolicyProvider:
    """Check the policy in *text* (the contents of a policy file called *source*).

    Raises:
        InvalidDefinitionError: as :func:`load_policy`.

    """
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(getattr(error, "msg", None) or error)
        at = _AT.search(message)
        line, column = text.count("\n") + 1, None
        if at is not None:
            message = message[: at.start()]
            if at.group(1):
                line, column = int(at.group(1)), int(at.group(2))
        line = getattr(error, "lineno", None) or line
        column = getattr(error, "colno", None) or column
        where = f"line {line}, column {column}" if column else f"line {line} (the end of the file)"
        raise InvalidDefinitionError(
            f'policy file "{source}", {where}', None, f"is not valid TOML: {message}; fix the syntax"
        ) from None
    problems: list[tuple[_KeyPath, str]] = []
    rules = _check(document, problems)
    if problems:
        _raise(text, source, problems)
    return PolicyProvider(rules, source)


def _check(document: dict[str, Any], problems: list[tuple[_KeyPath, str]]) -> list[_Rule]:
    """The rules of a parsed policy; every problem found is appended to *problems* as (key path, detail)."""
    rules = [_Rule(None, _patterns(document, "grant", (), problems), _patterns(document, "deny", (), problems))]
    for key, value in document.items():
        if key not in _TOP_KEYS:
            problems.append(((key,), _unknown(key, value, _TOP_KEYS, _SHAPE)))
    tools = document.get("tools", {})
    if not isinstance(tools, dict):
        problems.append(
            (("tools",), f'must be a table of tool selectors such as [tools."fs.write"], got {_type(tools)}')
        )
        return rules
    for selector, table in tools.items():
        path: _KeyPath = ("tools", selector)
        if not isinstance(table, dict):
            problems.append(
                (path, f'must be a table of grant and deny lists such as [tools."fs.write"], got {_type(table)}')
            )
            continue
        if not _is_selector(selector):
            hint = (
                "use the top-level grant and deny lists for every tool"
                if selector.strip() == "*"
                else 'use a tool name such as "fs.write", or a name ending in ".*" (such as "fs.*") for every tool '
                "under it"
            )
            problems.append((path, f"is not a tool selector; {hint}"))
        for key, value in table.items():
            if key not in _LISTS:
                shape = _TOOL_SHAPE
                if isinstance(value, dict):  # [tools.fs.write]: an unquoted dotted name makes nested tables
                    shape += f'; if "{selector}.{key}" is a tool name, quote it: [tools."{selector}.{key}"]'
                problems.append(((*path, key), _unknown(key, value, _LISTS, shape)))
        rules.append(
            _Rule(selector, _patterns(table, "grant", path, problems), _patterns(table, "deny", path, problems))
        )
    return rules


def _patterns(table: dict[str, Any], key: str, path: _KeyPath, problems: list[tuple[_KeyPath, str]]) -> StaticGrants:
    """The checked patterns of ``table[key]`` (none if it is absent or wrong)."""
    value = table.get(key, [])
    if not isinstance(value, list):
        example = f" (write {key} = [{json.dumps(value)}])" if isinstance(value, str) else ""
        problems.append(
            ((*path, key), f'must be a list of grant patterns such as ["fs:write"], got {_type(value)}{example}')
        )
        return StaticGrants(())
    checked: list[str] = []
    for index, pattern in enumerate(value):
        if isinstance(pattern, str) and GRANT_PATTERN.match(pattern):
            checked.append(pattern)
            continue
        got = _show(pattern) if isinstance(pattern, str) else _type(pattern)
        problems.append(
            (
                (*path, key, index),
                'must be a grant pattern: "namespace:action" (such as "fs:write"), "namespace:*" (such as "fs:*") '
                f'or "*", got {got}',
            )
        )
    return StaticGrants(checked)


def _is_selector(selector: str) -> bool:
    name = selector[:-2] if selector.endswith(".*") else selector
    return len(name) <= 64 and NAME_PATTERN.match(name) is not None


def _unknown(key: str, value: object, known: Sequence[str], shape: str) -> str:
    """Say that *key* is not one of *known*, suggesting the closest, then what belongs here (*shape*)."""
    what = "table" if isinstance(value, dict) else "key"
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"is not a known {what}; did you mean {close[0]}? {shape[0].upper()}{shape[1:]}"
    return f"is not a known {what}; {shape}"


def _type(value: object) -> str:
    """The TOML name of *value*'s type, with an article."""
    names = {dict: "a table", list: "an array", str: "a string", bool: "a boolean", int: "an integer"}
    return names.get(type(value), "a float" if isinstance(value, float) else "a date or time")


def _show(text: str) -> str:
    """*text* shortened to 60 characters, then quoted as TOML (and JSON) write a string."""
    return json.dumps(shorten(text), ensure_ascii=False)


def _key_path(path: _KeyPath) -> str:
    """A key path as TOML writes it: ``tools."fs.write".grant[1]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            written = part if re.fullmatch(r"[A-Za-z0-9_-]+", part) else json.dumps(part, ensure_ascii=False)
            out += f".{written}" if out else written
    return out


def _raise(text: str, source: str, problems: list[tuple[_KeyPath, str]]) -> NoReturn:
    """Raise the problem that comes first in the file, saying where the others are."""
    lines = _Locator(text).run()
    located = sorted(
        ((_line_of(lines, path), path, detail) for path, detail in problems),
        key=lambda problem: problem[0] or len(lines) + 1,
    )
    line, path, detail = located[0]
    others = sorted({other for other, _, _ in located[1:] if other})
    if len(located) > 1:
        count = f"{len(located) - 1} more problem{'s' if len(located) > 2 else ''}"
        at = f", on line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}" if others else ""
        detail += f" (the file has {count}{at})"
    where = f'policy file "{source}", line {line}' if line else f'policy file "{source}"'
    raise InvalidDefinitionError(where, _key_path(path), detail)


# -- finding the line of a key -------------------------------------------------------------


def _line_of(lines: Mapping[_KeyPath, int], path: _KeyPath) -> int | None:
    """The line of *path*, or of its nearest ancestor that has one."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


_TOKEN = re.compile(
    r"(?P<space>[ \t]+)"
    r"|(?P<comment>#[^\n]*)"
    r"|(?P<newline>\r?\n)"
    r'|(?P<string>"""(?:[^\\]|\\.)*?"{3,5}'
    r"|'''.*?'{3,5}"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'[^'\n]*')"
    r"|(?P<punct>[\[\]{}=,.])"
    r"|(?P<bare>[^\s\[\]{}=,.#\"']+)"
    r"|(?P<other>.)",
    re.DOTALL,
)


class _Locator:
    """The line on which each key, table and array item of a valid TOML text starts.

    tomllib keeps no positions, so the text is walked again, token by token.
    The text has already parsed, so the walk follows TOML's shape; if it ever
    does not, what was found so far is kept and the message falls back to an
    enclosing key's line.
    """

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str, int]] = []
        line = 1
        for match in _TOKEN.finditer(text):
            kind, value = match.lastgroup or "other", match.group()
            if kind not in ("space", "comment"):
                self.tokens.append((kind, value, line))
            line += value.count("\n")
        self.position = 0
        self.lines: dict[_KeyPath, int] = {}

    def run(self) -> dict[_KeyPath, int]:
        with contextlib.suppress(IndexError, KeyError, ValueError, tomllib.TOMLDecodeError):
            self.document()
        return self.lines

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.position] if self.position < len(self.tokens) else ("end", "", 0)

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def record(self, path: _KeyPath, line: int) -> None:
        for end in range(1, len(path) + 1):
            self.lines.setdefault(path[:end], line)

    def skip_newlines(self) -> None:
        while self.peek()[0] == "newline":
            self.position += 1

    def key(self) -> tuple[tuple[str, ...], int]:
        parts: list[str] = []
        line = self.peek()[2]
        while True:
            kind, value, _ = self.take()
            parts.append(tomllib.loads(f"k = {value}")["k"] if kind == "string" else value)
            if self.peek()[1] != ".":
                return tuple(parts), line
            self.take()

    def document(self) -> None:
        table: _KeyPath = ()
        counts: dict[_KeyPath, int] = {}
        while self.position < len(self.tokens):
            kind, value, line = self.peek()
            if kind == "newline":
                self.take()
            elif kind == "punct" and value == "[":
                self.take()
                double = self.peek()[1] == "["
                if double:
                    self.take()
                parts, _ = self.key()
                self.take()
                if double:
                    self.take()
                    counts[parts] = counts.get(parts, -1) + 1
                    table = (*parts, counts[parts])
                else:
                    table = parts
                self.record(table, line)
            else:
                parts, line = self.key()
                self.record((*table, *parts), line)
                self.take()  # =
                self.value((*table, *parts))

    def value(self, path: _KeyPath) -> None:
        kind, value, _ = self.take()
        if value == "[" and kind == "punct":
            index = 0
            while True:
                self.skip_newlines()
                if self.peek()[1] == "]":
                    self.take()
                    return
                self.record((*path, index), self.peek()[2])
                self.value((*path, index))
                self.skip_newlines()
                if self.peek()[1] == ",":
                    self.take()
                index += 1
        elif value == "{" and kind == "punct":
            while self.peek()[1] != "}":
                parts, line = self.key()
                self.record((*path, *parts), line)
                self.take()  # =
                self.value((*path, *parts))
                if self.peek()[1] == ",":
                    self.take()
            self.take()
        else:  # a scalar: a string, or bare words and dots (numbers, dates, booleans)
            while True:
                kind, value, _ = self.peek()
                if kind in ("end", "newline") or (kind == "punct" and value in (",", "]", "}")):
                    return
                self.take()


# -- the hook ------------------------------------------------------------------------------


@hookimpl
def hermes_permission_providers() -> list[PolicyProvider]:
    """Contribute the policy file's provider; with no policy file, a provider with no opinion on anything.

    Called when plugins are loaded: the file is found and read here, once.

    Raises:
        InvalidDefinitionError: as :func:`find_policy_file` and :func:`load_policy`.

    """
    path = find_policy_file()
    return [PolicyProvider() if path is None else load_policy(path)]
