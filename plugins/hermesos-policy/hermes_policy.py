"""hermesos-policy: a permission provider reading grants, asks and denies from a TOML policy file.

The file is found when plugins are loaded (see :func:`find_policy_file`), read
and checked once, then consulted on every call of a tool that declares
permissions::

    # ~/.config/hermesos/policy.toml
    grant = ["net:fetch"]            # for every tool
    deny = ["shell:*"]               # for every tool; a deny always wins
    ask = ["fs:delete"]              # for every tool: a person approves each call

    [tools."fs.write"]               # for the tool fs.write only
    grant = ["fs:write"]

    [tools."fs.*"]                   # for every tool whose name starts with "fs."
    deny = ["net:*"]

For one tool and one permission, the rules that apply are the top-level lists
and the lists of every ``[tools."<selector>"]`` table whose selector matches the
tool. If any deny pattern that applies matches the permission, the answer is
False (denied, whatever any other grant or provider says); otherwise, if any
ask pattern that applies matches it, an :class:`~hermes_core.Ask` (the runtime's
approver decides each call, whatever grants it); otherwise, if any grant
pattern that applies matches it, True; otherwise None (no opinion).

A malformed file is an :class:`~hermes_core.InvalidDefinitionError` at load,
naming the file and the line; it is never taken as an empty policy.

The audit file: when ``HERMESOS_POLICY_AUDIT`` names a file, every record of
the ``hermes_core.audit`` logger (every permission decision) is appended to
it as one JSON line, from the load on (see :func:`set_audit_file`). It is
guarded as the policy file is: the loader refuses a plugin whose tools may
write where it lies, since a tool must not rewrite its own audit trail.
"""

from __future__ import annotations

import _thread
import contextlib
import errno
import functools
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from hermes_core import (
    GRANT_PATTERN,
    NAME_PATTERN,
    Ask,
    InvalidDefinitionError,
    StaticGrants,
    Tool,
    frozen,
    hookimpl,
    setting,
    shorten,
    suggest,
)
from hermes_core import schema as s
from hermes_core.config import check_toml_depth, read_config_file, toml_tokens, user_config_path

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AUDIT_ENV",
    "AUDIT_FIELDS",
    "DEFAULT_MAX_BYTES",
    "MAX_BYTES_ENV",
    "MAX_MAX_BYTES",
    "POLICY_ENV",
    "USER_FILE",
    "PolicyProvider",
    "find_audit_file",
    "find_policy_file",
    "hermes_guarded_paths",
    "hermes_permission_providers",
    "load_policy",
    "parse_policy",
    "policy_path",
    "set_audit_file",
]

#: The environment variable naming the policy file; when set (and not empty), no other place is looked at.
POLICY_ENV: Final = "HERMESOS_POLICY"
#: The policy file's place in the user's configuration directory, read when ``HERMESOS_POLICY`` is not set.
USER_FILE: Final = "hermesos/policy.toml"
#: The environment variable bounding the size of the policy file, in bytes.
MAX_BYTES_ENV: Final = "HERMESOS_POLICY_MAX_BYTES"
#: The default of that bound: 1 MiB.
DEFAULT_MAX_BYTES: Final = 1024 * 1024
#: The environment variable naming the audit file, to which every permission decision is appended as a JSON line.
AUDIT_ENV: Final = "HERMESOS_POLICY_AUDIT"
#: The keys of each line of the audit file, in order: the fields of a ``hermes_core.audit`` record, never the input.
AUDIT_FIELDS: Final = ("call_id", "tool", "permission", "decision", "source", "time")

_POLICY_SETTING = s.string(min_length=1, description="the path of a TOML policy file")
#: The largest value of ``HERMESOS_POLICY_MAX_BYTES``: 1 GiB.
MAX_MAX_BYTES: Final = 1024 * 1024 * 1024
_MAX_BYTES_SETTING = s.integer(
    minimum=1, maximum=MAX_MAX_BYTES, description="the size of the largest policy file to read, in bytes"
)

_LISTS = ("grant", "deny", "ask")
_TOP_KEYS = (*_LISTS, "tools")
_SHAPE = 'a policy has top-level grant = [...], ask = [...] and deny = [...] lists and [tools."<tool name>"] tables'
_TOOL_SHAPE = "a tool table has only grant = [...], ask = [...] and deny = [...] lists"

_KeyPath = tuple[str | int, ...]
_Patterns = tuple[str, ...]


# Not a frozen dataclass, which compiles six methods as the module is imported (a tenth of what importing this
# plugin cost 'hermesos tools list'), nor a NamedTuple, whose string annotations are compiled one by one
# (hermesos-core's docs/performance.md, start-up).
@final
@frozen
class _Rule:
    """The checked patterns of one part of the file: the top level (selector None) or one tool table."""

    selector: str | None
    grant: _Patterns
    deny: _Patterns
    ask: _Patterns = ()


# An entry of the index: the grant, deny and ask patterns of the rules with one selector.
_Pair = tuple[StaticGrants, StaticGrants, StaticGrants]
_NOTHING: Final = StaticGrants(())


def _pair(grant: Sequence[str], deny: Sequence[str], ask: Sequence[str]) -> _Pair:
    # A table often has one list of the three: a missing one is the shared empty set, not one more per table.
    return tuple(StaticGrants(patterns) if patterns else _NOTHING for patterns in (grant, deny, ask))  # type: ignore[return-value]


@final
class PolicyProvider:
    """A permission provider answering from a checked policy. Make one with :func:`load_policy`.

    The rules are indexed when the provider is made: the top-level lists, a
    table of tool names and a table of ``.*`` selectors by their prefix, each
    holding its patterns as :class:`~hermes_core.StaticGrants` sets. A check
    looks up the tool's name and each prefix of it ending in ``.``, so its cost
    does not grow with the number of rules.

    Attributes:
        source: where the policy came from (the file's path as given), or None
            when there is no policy file, in which case every answer is None.
        files: the files the answers are decided from, empty when the policy
            was not read from a file: first the policy file's real path
            (absolute, every symbolic link resolved: :func:`os.path.realpath`),
            then where each symbolic link followed to reach it lies (the real
            path of its directory, then its own name). Whoever may write one
            of these decides the answers (replacing a link changes the file
            read as surely as writing the file does), so a runtime can refuse
            to start when a tool may.

    """

    __slots__ = ("_ask", "_everywhere", "_rules", "_text", "_tools", "_under", "files", "source")

    def __init__(self, rules: Sequence[_Rule] = (), source: str | None = None, files: Sequence[str] = ()) -> None:
        self.source = source
        self.files: tuple[str, ...] = tuple(files)
        self._rules = tuple(rules)
        self._text = ""  # the file's text, for the lines of check_tools' messages (set by load_policy, parse_policy)
        self._ask = Ask(f'the policy "{source}" asks a person to approve it')
        everywhere: tuple[list[str], list[str], list[str]] = ([], [], [])
        tools: dict[str, tuple[list[str], list[str], list[str]]] = {}
        under: dict[str, tuple[list[str], list[str], list[str]]] = {}
        for rule in rules:
            if not rule.grant and not rule.deny and not rule.ask:
                continue
            if rule.selector is None:
                lists = everywhere
            elif rule.selector.endswith(".*"):  # "fs.*" covers every name starting with "fs."
                lists = under.setdefault(rule.selector[:-1], ([], [], []))
            else:
                lists = tools.setdefault(rule.selector, ([], [], []))
            lists[0].extend(rule.grant)
            lists[1].extend(rule.deny)
            lists[2].extend(rule.ask)
        self._everywhere = _pair(*everywhere)
        self._tools = {name: _pair(*lists) for name, lists in tools.items()}
        self._under = {prefix: _pair(*lists) for prefix, lists in under.items()}

    def decide(self, tool: str, permission: str) -> bool | Ask | None:
        """The policy's answer for the tool named *tool* asking for *permission*.

        Returns:
            False if a deny pattern applying to the tool matches the permission,
            else an :class:`~hermes_core.Ask` if an ask pattern applying to it
            does, else True if a grant pattern applying to it does, else None.

        """
        granted = asked = False
        for grant, deny, ask in self._applying(tool):
            if deny.allows(permission):
                return False
            asked = asked or ask.allows(permission)
            granted = granted or grant.allows(permission)
        if asked:
            return self._ask
        return True if granted else None

    def _applying(self, tool: str) -> list[_Pair]:
        """The entries applying to *tool*: the top level's, its name's, and those of its prefixes ending in "."."""
        pairs = [self._everywhere]
        if (pair := self._tools.get(tool)) is not None:
            pairs.append(pair)
        if self._under:
            dot = tool.find(".")
            while dot != -1:
                if (pair := self._under.get(tool[: dot + 1])) is not None:
                    pairs.append(pair)
                dot = tool.find(".", dot + 1)
        return pairs

    def check(self, tool: Tool, permission: str) -> bool | Ask | None:
        """The provider protocol: :meth:`decide` for *tool*'s name."""
        return self.decide(tool.name, permission)

    def check_tools(self, tools: Sequence[Tool]) -> list[str]:
        """The policy's rules against *tools*, every tool a runtime will have: a warning for each that applies to none.

        The plugin loader calls it once every plugin is loaded; ``hermesos
        check`` lists the warnings (and exits 1), ``tools list``, ``call`` and
        ``serve`` print them on stderr. A rule for the tools of a plugin that
        is not installed is a warning, not an error: the policy works as soon
        as the plugin is.

        Returns:
            A warning, naming the file, the line and the selector or pattern,
            for each ``[tools."<selector>"]`` table that matches none of *tools*
            (with the closest names: "did you mean"), and for each pattern that
            matches no permission the tools it applies to declare and is close
            to one of those; at most 10 of them, then one saying how many more
            and on which lines.

        Raises:
            InvalidDefinitionError: a selector matches none of *tools* but
                names one of them (or a group of them) in another form: differing
                only in case or separators (``fs_write``, ``FS.WRITE`` and the wire
                name for ``fs.write``), a group without ``.*`` (``fs`` for
                ``fs.*``), a tool with ``.*`` (``fs.write.*``); or a pattern
                differs only in separators from a permission those tools declare.
                Its deny would never apply to the tool it was meant for.
        """
        if not self._rules:
            return []
        return _check_rules(self._rules, _Loaded(tools), self._text, self.source or "<policy>")

    def __repr__(self) -> str:
        return f"PolicyProvider({self.source!r})"


# -- finding the file ----------------------------------------------------------------------


def _leads_somewhere(path: str | Path) -> bool:
    """Whether *path* leads to something, following symbolic links.

    Raises:
        OSError: whether it does cannot be known (PermissionError: a directory
            on the way cannot be searched), or *path* is a symbolic link leading
            nowhere (FileNotFoundError): a link where a policy belongs was put
            there to lead to one.

    """
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(path):
            raise
        return False
    return True


def policy_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The policy file to use, or None if there is none: :func:`find_policy_file` as a ``str``.

    What the hooks ask at every start: without ``pathlib``, which (with
    ``urllib.parse`` and ``ipaddress`` behind it) cost every start 18 million
    instructions (hermesos-core's docs/performance.md, start-up).

    1. The path in ``HERMESOS_POLICY``, if that is set and not empty (it must
       exist); no other place is looked at.
    2. Else ``hermesos/policy.toml`` in the user's configuration directory:
       ``$XDG_CONFIG_HOME`` (if absolute, else ``~/.config``), or ``%APPDATA%``
       on Windows. If it does not exist, there is no policy; if whether it
       exists cannot be known (a directory on the way that cannot be
       searched, a symbolic link leading nowhere), that is an error, never
       "no policy".

    The working directory is never looked at: file tools work there by
    default, and a policy a tool can write is the tool's own.

    Raises:
        InvalidDefinitionError: ``HERMESOS_POLICY`` names a file that does not
            exist or cannot be looked up (the declaration is ``setting
            HERMESOS_POLICY``), or the file in the configuration directory
            cannot be looked up (the declaration names the file).

    """
    environ = os.environ if environ is None else environ
    named: str | None = setting(POLICY_ENV, _POLICY_SETTING, default=None, environ=environ)
    if named is not None:
        from pathlib import Path  # noqa: PLC0415 - a file named only: read as Path reads a name (start-up)

        path = str(Path(named).expanduser())
        detail = f"which does not exist; create it, fix the path, or unset {POLICY_ENV}"
        try:
            if _leads_somewhere(path):
                return path
        except FileNotFoundError:  # a link leading nowhere: what it names does not exist
            pass
        except OSError as error:
            detail = f"which could not be looked up ({_reason(error)}); fix the path or its directories' permissions"
        raise InvalidDefinitionError(f"setting {POLICY_ENV}", None, f'names "{path}", {detail}')
    user_file = user_config_path("policy.toml", environ)
    try:
        return user_file if user_file is not None and _leads_somewhere(user_file) else None
    except FileNotFoundError:
        detail = "is a symbolic link leading nowhere"
    except OSError as error:
        detail = f"could not be looked up ({_reason(error)})"
    raise InvalidDefinitionError(
        f'policy file "{user_file}"',
        None,
        f"{detail}, so whether there is a policy is unknown; fix the link or its directories' permissions, "
        f"or set {POLICY_ENV} to the policy file to read",
    )


def find_policy_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """The policy file to use, or None if there is none (see :func:`policy_path`, the same as a ``str``).

    Raises:
        InvalidDefinitionError: as :func:`policy_path`.
    """
    path = policy_path(environ)
    if path is None:
        return None
    from pathlib import Path  # noqa: PLC0415 - see policy_path

    return Path(path)


def _reason(error: OSError) -> str:
    """What the operating system said, without the path (the message names it already)."""
    return error.strerror or errno.errorcode.get(error.errno or 0, type(error).__name__)


# -- reading and checking it ---------------------------------------------------------------


def load_policy(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> PolicyProvider:
    """Read and check the policy file at *path*.

    *path* may be a symbolic link; what it leads to must be a regular file of
    at most *max_bytes* bytes. The provider's :attr:`~PolicyProvider.files`
    holds that file's real path.

    Raises:
        InvalidDefinitionError: the file cannot be read, is not a regular file,
            is larger than *max_bytes*, is not UTF-8, is not valid TOML, nests
            too deeply, or is not a valid policy; the message names the file and,
            where there is one, the line.

    """
    source = str(path)
    real = os.path.realpath(path)
    files = (real, *_links_followed(source))
    data = _read(source, max_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InvalidDefinitionError(
            f'policy file "{source}", line {line}', None, "is not UTF-8 text; save the file as UTF-8"
        ) from None
    return _with_text(PolicyProvider(_rules(text, source), source, files), text)


def _with_text(provider: PolicyProvider, text: str) -> PolicyProvider:
    provider._text = text
    return provider


def _links_followed(path: str) -> list[str]:
    """Where each symbolic link met on the way from *path* to its file lies: its directory's real path, its name."""
    from pathlib import Path  # noqa: PLC0415 - a policy read only (start-up)

    links: list[str] = []
    rest = list(reversed(Path(os.getcwd(), path).parts))  # ".." is kept: after a link it is the target's parent
    done = Path(rest.pop())  # the root, or a drive's
    while rest:
        name = rest.pop()
        if name == "..":
            done = done.parent
            continue
        here = done / name
        if not os.path.islink(here):
            done = here
            continue
        links.append(str(here))
        try:
            target = Path(os.readlink(here))
        except OSError:  # gone since: the read reports what is there
            break
        if len(links) > 40:  # a loop of links: the read reports it
            break
        if target.is_absolute():
            done = Path(target.anchor)
            rest.extend(reversed(target.parts[1:]))
        else:
            rest.extend(reversed(target.parts))
    return links


def _read(source: str, max_bytes: int) -> bytes:
    """The bytes of the regular file *source* leads to, at most *max_bytes* of them."""
    return read_config_file(
        source,
        max_bytes,
        f'policy file "{source}"',
        what="a policy file",
        expected="a policy is a regular file of TOML text",
        too_big=(
            'shorten it (a namespace pattern such as "fs:*" or a selector such as "fs.*" stands for many), '
            f"or raise the limit with {MAX_BYTES_ENV}"
        ),
    )


def parse_policy(text: str, source: str = "<policy>") -> PolicyProvider:
    """Check the policy in *text* (the contents of a policy file called *source*).

    The provider's :attr:`~PolicyProvider.files` is empty: no file was read.

    Raises:
        InvalidDefinitionError: as :func:`load_policy`, but for the file's type and size.

    """
    return _with_text(PolicyProvider(_rules(text, source), source), text)


# Where tomllib says a malformed file went wrong. This module's patterns are compiled where first used: a
# 'hermesos tools list' with no policy file does not pay for them (hermesos-core's docs/performance.md, start-up).
@functools.cache
def _at() -> re.Pattern[str]:
    return re.compile(r"\s*\(at line (\d+), column (\d+)\)\Z|\s*\(at end of document\)\Z")


# How deep keys, arrays and inline tables may nest. A policy needs three levels; tomllib recurses into
# each array and inline table, and spends time and memory growing with the square of a dotted key's
# length (a key of 10,000 parts takes hundreds of megabytes; one of 100,000, 200 KB of text, tens of gigabytes).
_MAX_DEPTH: Final = 32
_DEPTH_ADVICE = 'a policy needs three levels at most, as in tools = { "fs.write" = { grant = ["fs:write"] } }'


def _rules(text: str, source: str) -> list[_Rule]:
    """The checked rules of the policy *text*, or InvalidDefinitionError naming *source* and the line."""
    check_toml_depth(text, f'policy file "{source}"', most=_MAX_DEPTH, advice=_DEPTH_ADVICE)
    import tomllib  # noqa: PLC0415 - a policy file read only: not on every start of hermesos (docs/performance.md)

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(getattr(error, "msg", None) or error)
        at = _at().search(message)
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
    except RecursionError:
        check_toml_depth(text, f'policy file "{source}"', most=_MAX_DEPTH, advice=_DEPTH_ADVICE, always=True)
        raise InvalidDefinitionError(  # nested deep enough to exhaust this call's stack, but not past the limit
            f'policy file "{source}"', None, f"is nested too deeply to be read; {_DEPTH_ADVICE}"
        ) from None
    problems: list[tuple[_KeyPath, str]] = []
    rules = _check(document, problems)
    if problems:
        _raise(text, source, problems)
    return rules


def _check(document: dict[str, Any], problems: list[tuple[_KeyPath, str]]) -> list[_Rule]:
    """The rules of a parsed policy; every problem found is appended to *problems* as (key path, detail)."""
    rules = [_rule(None, document, (), problems)]
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
                (path, f'must be a table of grant, ask and deny lists such as [tools."fs.write"], got {_type(table)}')
            )
            continue
        if not _is_selector(selector):
            hint = (
                "use the top-level grant, ask and deny lists for every tool"
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
        rules.append(_rule(selector, table, path, problems))
    return rules


def _rule(selector: str | None, table: dict[str, Any], path: _KeyPath, problems: list[tuple[_KeyPath, str]]) -> _Rule:
    """The checked lists of one part of the file (the top level, or the table of *selector*)."""
    grant, deny, ask = (_patterns(table, key, path, problems) for key in _LISTS)
    return _Rule(selector, grant, deny, ask)


def _patterns(table: dict[str, Any], key: str, path: _KeyPath, problems: list[tuple[_KeyPath, str]]) -> _Patterns:
    """The checked patterns of ``table[key]`` (none if it is absent or wrong)."""
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

    value = table.get(key, [])
    if not isinstance(value, list):
        example = f" (write {key} = [{json.dumps(value)}])" if isinstance(value, str) else ""
        problems.append(
            ((*path, key), f'must be a list of grant patterns such as ["fs:write"], got {_type(value)}{example}')
        )
        return ()
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
    return tuple(checked)


def _is_selector(selector: str) -> bool:
    name = selector[:-2] if selector.endswith(".*") else selector
    return len(name) <= 64 and NAME_PATTERN.match(name) is not None


def _unknown(key: str, value: object, known: Sequence[str], shape: str) -> str:
    """Say that *key* is not one of *known*, suggesting the closest, then what belongs here (*shape*)."""
    what = "table" if isinstance(value, dict) else "key"
    import difflib  # noqa: PLC0415 - a mistyped key only

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
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

    return json.dumps(shorten(text), ensure_ascii=False)


def _key_path(path: _KeyPath) -> str:
    """A key path as TOML writes it: ``tools."fs.write".grant[1]``."""
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

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


# -- the rules against the tools loaded ----------------------------------------------------

#: The most warnings check_tools returns one by one; past them, one more says how many others there are, and where.
_WARNED: Final = 10
#: The largest policy text whose warnings give their lines (64 KiB, some 1,500 tables): finding them walks the file.
_LOCATED_MAX: Final = 64 * 1024


@functools.cache
def _not_alnum() -> re.Pattern[str]:
    return re.compile(r"[^a-z0-9]+")


def _loose(name: str) -> str:
    """What names differing only in case and separators share: ``FS_Write`` and ``fs-write`` give ``fs.write``.

    A separator is any run of characters but letters and digits, so a wire name (``fs_write``) is one form too.
    """
    return _not_alnum().sub(".", name.lower())


@final
class _Loaded:
    """The tools a runtime will have, indexed for the checks: by name, by group (``fs`` of ``fs.read``), loosely."""

    __slots__ = ("groups", "loose_groups", "loose_names", "names")

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.names: dict[str, tuple[str, ...]] = {tool.name: tool.permissions for tool in tools}
        self.groups: dict[str, list[str]] = {}  # "fs": the names under fs., at any depth
        for name in self.names:
            dot = name.find(".")
            while dot != -1:
                self.groups.setdefault(name[:dot], []).append(name)
                dot = name.find(".", dot + 1)
        self.loose_names = {_loose(name): name for name in self.names}
        self.loose_groups = {_loose(group): group for group in self.groups}

    def matched(self, selector: str | None) -> list[str]:
        """The names of the tools *selector* matches (None, the top level: all of them)."""
        if selector is None:
            return list(self.names)
        if selector.endswith(".*"):
            return self.groups.get(selector[:-2], [])
        return [selector] if selector in self.names else []


_Problem = tuple[_KeyPath, str]
# A pattern's warning (its detail, None), or a selector's (its name, whether it ends in ".*"): a selector's
# closest names are looked for only for the warnings given one by one.
_Warning = tuple[_KeyPath, str, bool | None]


def _check_rules(rules: Sequence[_Rule], loaded: _Loaded, text: str, source: str) -> list[str]:
    """check_tools: the warnings for *rules* against *loaded*; raise for a rule naming a tool wrongly."""
    refused: list[_Problem] = []
    warned: list[_Warning] = []
    for rule in rules:
        if not (rule.grant or rule.deny or rule.ask):
            continue
        matched = loaded.matched(rule.selector)
        if rule.selector is not None and not matched:
            _unmatched(rule, loaded, refused, warned)
            continue
        declared = {permission for name in matched for permission in loaded.names[name]}
        for key in _LISTS:
            for index, pattern in enumerate(getattr(rule, key)):
                path: _KeyPath = ("tools", rule.selector, key, index) if rule.selector else (key, index)
                _pattern(pattern, declared, path, refused, warned)
    if refused:
        _raise(text, source, refused)
    if not warned:
        return []
    # In the file's order (the top level, then the tables as they come), with their lines where finding them
    # is cheap: the walk that finds them costs about what reading the file did, and this runs at every load.
    lines = _Locator(text).run() if len(text) <= _LOCATED_MAX else {}
    located = [(_line_of(lines, path), path, detail, group_of) for path, detail, group_of in warned]
    if lines:
        located.sort(key=lambda warning: warning[0] or 0)
    warnings = [
        str(
            InvalidDefinitionError(
                f'policy file "{source}"' + (f", line {line}" if line else ""),
                _key_path(path),
                detail if group_of is None else _nothing(detail, loaded, group_of=group_of),
            )
        )
        for line, path, detail, group_of in located[:_WARNED]
    ]
    if len(located) > _WARNED:
        rest = located[_WARNED:]
        more = sorted({line for line, *_ in rest if line})
        if more:
            at = f"on lines {', '.join(map(str, more[:20]))}{', ...' if len(more) > 20 else ''}"
        else:
            at = f"at {', '.join(_key_path(path) for _, path, *_ in rest[:3])}{', ...' if len(rest) > 3 else ''}"
        warnings.append(
            f'policy file "{source}" has {len(rest)} more rules that apply to nothing, {at}; '
            "'hermesos check' lists the first ten, and 'hermesos tools list' the loaded tools"
        )
    return warnings


def _lists(rule: _Rule) -> str:
    """The rule's lists, in words: ``its deny list``, ``its deny and ask lists``."""
    named = [key for key in ("deny", "ask", "grant") if getattr(rule, key)]
    return f"its {' and '.join(named)} list{'s' if len(named) > 1 else ''}"


def _some(names: Sequence[str]) -> str:
    """A few of *names*, sorted: ``fs.delete, fs.list, fs.mkdir, ...``."""
    shown = sorted(names)
    return ", ".join(shown[:3]) + (", ..." if len(shown) > 3 else "")


def _unmatched(rule: _Rule, loaded: _Loaded, refused: list[_Problem], warned: list[_Warning]) -> None:
    """The problem of a table whose selector matches no tool: refused if it names one in another form, else warned."""
    selector = rule.selector
    assert selector is not None
    path: _KeyPath = ("tools", selector)
    nothing = "matches none of the loaded tools"
    group_of = selector.endswith(".*")
    name = selector[:-2] if group_of else selector
    loose = _loose(name)
    group = loaded.loose_groups.get(loose)
    tool = loaded.loose_names.get(loose)
    if group_of and group is not None:
        refused.append(
            (
                path,
                f'{nothing}, but differs only in case or separators from "{group}.*", which matches '
                f"{len(loaded.groups[group])} of them ({_some(loaded.groups[group])}), so {_lists(rule)} would "
                f'apply to none of them; write [tools."{group}.*"]',
            )
        )
    elif group_of and tool is not None:
        refused.append(
            (
                path,
                f'{nothing}: ".*" selects the tools under "{name}", and there are none, but "{tool}" is a loaded '
                f'tool, so {_lists(rule)} would never apply to it; write [tools."{tool}"] for the tool itself',
            )
        )
    elif group_of:
        warned.append((path, name, True))
    elif tool is not None:
        refused.append(
            (
                path,
                f'{nothing}, but differs only in case or separators from the tool "{tool}", so {_lists(rule)} would '
                f'never apply to it; write [tools."{tool}"]: a selector names a tool exactly as \'hermesos tools '
                "list' shows it",
            )
        )
    elif group is not None:
        refused.append(
            (
                path,
                f'{nothing}, but names the group of {len(loaded.groups[group])} loaded tools under "{group}" '
                f'({_some(loaded.groups[group])}): a selector without ".*" names one tool, so {_lists(rule)} would '
                f'apply to none of them; write [tools."{group}.*"] for every tool under {group}',
            )
        )
    else:
        warned.append((path, name, False))


def _nothing(name: str, loaded: _Loaded, *, group_of: bool) -> str:
    """The warning of a selector (*name*, with ``.*`` if *group_of*) that matches no tool: with the closest names."""
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

    if group_of:
        head = f'matches none of the loaded tools (no name starts with "{name}.")'
        close = [f"{group}.*" for group in suggest(name, loaded.groups)]
    else:
        head = "matches none of the loaded tools"
        close = list(suggest(name, loaded.names))
    if close:
        return f"{head}, so its rules apply to nothing; did you mean {' or '.join(map(json.dumps, close))}?"
    return (
        f"{head}, so its rules apply to nothing; if it is for a plugin that is not installed, this stays a "
        "warning until it is ('hermesos tools list' lists the loaded tools)"
    )


def _pattern(pattern: str, declared: set[str], path: _KeyPath, refused: list[_Problem], warned: list[_Warning]) -> None:
    """The problem of a pattern matching none of the *declared* permissions of the tools it applies to, if any."""
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

    if pattern == "*":
        return
    if pattern.endswith(":*"):
        namespaces = {permission.partition(":")[0] for permission in declared}
        if pattern[:-2] in namespaces:
            return
        near = {_loose(name): f"{name}:*" for name in namespaces}.get(_loose(pattern[:-2]))
        close = [f"{name}:*" for name in suggest(pattern[:-2], namespaces)]
    else:
        if pattern in declared:
            return
        near = {_loose(permission): permission for permission in declared}.get(_loose(pattern))
        close = list(suggest(pattern, declared))
    said = f"is {json.dumps(pattern)}, which no tool it applies to declares"
    if near is not None:
        written = json.dumps(near)
        refused.append(
            (path, f"{said}, but differs only in separators from {written}, so it would never apply; write {written}")
        )
    elif close:
        warned.append((path, f"{said}, so it never applies; did you mean {' or '.join(map(json.dumps, close))}?", None))


# -- finding the line of a key -------------------------------------------------------------


def _line_of(lines: Mapping[_KeyPath, int], path: _KeyPath) -> int | None:
    """The line of *path*, or of its nearest ancestor that has one."""
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


# The length of the longest key path a problem is reported at: tools."fs.write".grant[1].
_LOCATED: Final = 4


def _toml_string(token: str) -> str:
    """The value of a TOML string token (a quoted key part), as tomllib reads it."""
    import tomllib  # noqa: PLC0415 - as _rules

    value: str = tomllib.loads(f"k = {token}")["k"]
    return value


class _Locator:
    """The line on which each key, table and array item of a valid TOML text starts.

    tomllib keeps no positions, so the text is walked again, token by token.
    The text has already parsed, so the walk follows TOML's shape; if it ever
    does not, what was found so far is kept and the message falls back to an
    enclosing key's line.
    """

    def __init__(self, text: str) -> None:
        self.tokens = list(toml_tokens(text))
        self.position = 0
        self.lines: dict[_KeyPath, int] = {}

    def run(self) -> dict[_KeyPath, int]:
        import tomllib  # noqa: PLC0415 - as _rules

        with contextlib.suppress(IndexError, KeyError, ValueError, RecursionError, tomllib.TOMLDecodeError):
            self.document()
        return self.lines

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.position] if self.position < len(self.tokens) else ("end", "", 0)

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def record(self, path: _KeyPath, line: int) -> None:
        # A problem's key path is at most tools."<selector>".<list>[<index>]: deeper prefixes are never looked up,
        # and recording them all would cost the square of a path's length.
        for end in range(1, min(len(path), _LOCATED) + 1):
            self.lines.setdefault(path[:end], line)

    def skip_newlines(self) -> None:
        while self.peek()[0] == "newline":
            self.position += 1

    def key(self) -> tuple[tuple[str, ...], int]:
        parts: list[str] = []
        line = self.peek()[2]
        while True:
            kind, value, _ = self.take()
            parts.append(_toml_string(value) if kind == "string" else value)
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


# -- the audit file ------------------------------------------------------------------------

_AUDIT_SETTING = s.string(
    min_length=1, description="the path of the audit file, such as ~/.local/state/hermesos/audit.jsonl"
)
_AUDIT_LOGGER: Final = "hermes_core.audit"
_INFO: Final = 20  # logging.INFO: logging is imported only when there is an audit file (start-up, docs/performance.md)
_AUDIT_FLAGS: Final = (
    os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
)
_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_audit_lock = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)
_attached: Any = None  # the handler this plugin put on the hermes_core.audit logger, if any


def find_audit_file(environ: Mapping[str, str] | None = None) -> str | None:
    """The audit file ``HERMESOS_POLICY_AUDIT`` names (absolute, ``~`` expanded), or None when it is unset or blank."""
    named: str | None = setting(AUDIT_ENV, _AUDIT_SETTING, default=None, environ=environ)
    return None if named is None else os.path.abspath(os.path.expanduser(named))


def set_audit_file(path: str | os.PathLike[str] | None) -> None:
    """Append every record of the ``hermes_core.audit`` logger to the file at *path* from now on; None: stop.

    Each record is one line of JSON, an object of :data:`AUDIT_FIELDS`
    (``call_id``, ``tool``, ``permission``, ``decision``, ``source``, ``time``
    in seconds since the epoch), written with one ``write`` to a file opened
    for appending, so it is in the file when the call goes on. The file is
    created with permissions 0600 if it does not exist; it must be a regular
    file with a single hard link. The logger is the process's, so there is one
    audit file per process: a later call replaces it (the same file is kept
    open, not opened twice).

    The runtime writes records only when the logger's own level asks for
    ``INFO``. If it does not, it is set to ``INFO`` here, and the logger stops
    passing its records on to its ancestors' handlers (a root logger's handler
    would print each on stderr); both are put back when the file is replaced
    or stopped. A logger the application set to ``INFO`` or lower itself is
    left as it is. The plugin calls this at load with ``HERMESOS_POLICY_AUDIT``;
    an application building its runtime without plugin discovery calls it
    itself.

    Raises:
        InvalidDefinitionError: *path* is a directory, not a regular file, has
            more than one hard link, or cannot be opened for appending (its
            directory does not exist, it may not be written); the file in use
            before, if any, is kept.
    """
    _audit_to(None if path is None else os.path.abspath(os.fspath(path)), "set_audit_file()", "path")


def _audit_to(path: str | None, declaration: str, field: str | None) -> None:
    """Make *path* (absolute) the audit file, or stop writing one; errors name *declaration* and *field*."""
    global _attached  # noqa: PLW0603 - one audit file per process, as there is one audit logger
    with _audit_lock:
        current = _attached
        if path is not None and current is not None and current.path == path and _still(current.fd, path):
            return
        fd = None if path is None else _open_audit(path, declaration, field)  # refused: the file in use stays
        if current is None and fd is None:
            return
        import logging  # noqa: PLC0415 - only with an audit file (start-up, docs/performance.md)

        logger = logging.getLogger(_AUDIT_LOGGER)
        if current is not None:
            logger.removeHandler(current)
            current.close()
            if current.changed is not None and logger.level == _INFO:  # unless someone has set it since
                logger.setLevel(current.changed[0])
                logger.propagate = current.changed[1]
            _attached = None
        if fd is not None and path is not None:
            handler = _handler_class()(path, fd)
            if not logger.level or logger.level > _INFO:  # records are not asked for: ask, for this file only
                handler.changed = (logger.level, logger.propagate)
                logger.setLevel(_INFO)
                logger.propagate = False
            logger.addHandler(handler)
            _attached = handler


def _still(fd: int, path: str) -> bool:
    """Whether the open *fd* is still the file at *path* (not moved away and replaced, as a log rotation does)."""
    try:
        held, there = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _open_audit(path: str, declaration: str, field: str | None) -> int:
    """The file *path* opened for appending (made, 0600, if missing), after checking what it is."""

    def refuse(detail: str) -> NoReturn:
        raise InvalidDefinitionError(declaration, field, f'names "{path}", {detail}')

    try:
        found: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            refuse("a symbolic link leading nowhere; name the audit file itself, or fix the link")
        found = None
    except OSError as error:
        refuse(f"which could not be looked up ({_reason(error)}); fix the path or its directories' permissions")
    if found is not None:
        _check_audit(found, path, refuse)
    try:
        fd = os.open(path, _AUDIT_FLAGS, 0o600)
    except FileNotFoundError:
        refuse(f'whose directory "{os.path.dirname(path)}" does not exist; create it, or name a file in another')
    except OSError as error:
        refuse(
            f"which could not be opened for appending ({_reason(error)}); name a file this user may write, "
            f"or unset {AUDIT_ENV}"
        )
    try:
        _check_audit(os.fstat(fd), path, refuse)  # what was opened: it may have changed since the look
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_audit(found: os.stat_result, path: str, refuse: Any) -> None:
    """Refuse what *found* says is no audit file: a directory, a special file, a file with other names."""
    if stat.S_ISDIR(found.st_mode):
        refuse(f'which is a directory; name a file in it, such as "{os.path.join(path, "audit.jsonl")}"')
    for test, kind in _KINDS:
        if test(found.st_mode):
            refuse(f"which is {kind}, not a regular file; an audit file is a regular file records are appended to")
    if found.st_nlink > 1:
        refuse(
            f"which has {found.st_nlink} hard links: a tool could rewrite the audit trail through another one; "
            "keep a single link to the file"
        )


def _audit_line(record: Any) -> bytes:
    """One record as a line of JSON: the fields of :data:`AUDIT_FIELDS` (null where the record has none)."""
    import json  # noqa: PLC0415 - a policy's messages and audit only: not at import (start-up)

    fields = {name: getattr(record, name, None) for name in AUDIT_FIELDS}
    if fields["time"] is None:
        fields["time"] = record.created
    return (json.dumps(fields, default=str) + "\n").encode("utf-8")


_handler_type: Any = None


def _handler_class() -> Any:
    """The class of the audit file's handler: a ``logging.Handler``, made on first use (logging is imported then)."""
    global _handler_type  # noqa: PLW0603 - made once, when the first audit file is opened
    if _handler_type is not None:
        return _handler_type
    import logging  # noqa: PLC0415 - see _INFO

    class AuditFile(logging.Handler):
        """Appends each record to an open file as one line of JSON, with one write, under the handler's lock."""

        def __init__(self, path: str, fd: int) -> None:
            super().__init__()
            self.path, self.fd = path, fd
            self.changed: tuple[int, bool] | None = None  # the logger's level and propagate before this file set them

        def emit(self, record: logging.LogRecord) -> None:
            try:
                view = memoryview(_audit_line(record))
                while view:
                    view = view[os.write(self.fd, view) :]
            except Exception:  # a full disk: logging reports it on stderr, and the call goes on
                self.handleError(record)

        def close(self) -> None:
            self.acquire()
            try:
                fd, self.fd = self.fd, -1
                if fd >= 0:
                    os.close(fd)
            finally:
                self.release()
            super().close()

        def __repr__(self) -> str:
            return f"<AuditFile {self.path}>"

    _handler_type = AuditFile
    return AuditFile


# -- the hook ------------------------------------------------------------------------------


@hookimpl
def hermes_permission_providers() -> list[PolicyProvider]:
    """Contribute the policy file's provider; with no policy file, a provider with no opinion on anything.

    Called when plugins are loaded: the file is found and read here, once, up
    to ``HERMESOS_POLICY_MAX_BYTES`` bytes (default 1 MiB). Then the audit file
    ``HERMESOS_POLICY_AUDIT`` names is opened (:func:`set_audit_file`); with
    the setting unset, an audit file an earlier load in this process opened is
    closed.

    Raises:
        InvalidDefinitionError: as :func:`find_policy_file` and :func:`load_policy`,
            or ``HERMESOS_POLICY_MAX_BYTES`` is not a positive integer, or the
            audit file cannot be used (the declaration is ``setting
            HERMESOS_POLICY_AUDIT``; see :func:`set_audit_file`).

    """
    max_bytes: int = setting(MAX_BYTES_ENV, _MAX_BYTES_SETTING, default=DEFAULT_MAX_BYTES)
    path = policy_path()
    provider = PolicyProvider() if path is None else load_policy(path, max_bytes=max_bytes)
    _audit_to(find_audit_file(), f"setting {AUDIT_ENV}", None)
    return [provider]


@hookimpl
def hermes_guarded_paths() -> list[str]:
    """The policy file in use, where the user's would be read, and the audit file, if there is one.

    Whoever writes either policy decides the grants, and whoever writes the
    audit file rewrites the record of them. The loader refuses to start when
    a directory a tool may write holds one (besides refusing the provider,
    whose ``files`` lie there).
    """
    paths = [policy_path(), user_config_path("policy.toml"), find_audit_file()]
    return list(dict.fromkeys(str(path) for path in paths if path is not None))
