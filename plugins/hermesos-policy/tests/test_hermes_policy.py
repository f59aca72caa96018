"""Tests for hermesos-policy: answers, load-time errors, where the file is found, and the plugin in a real runtime."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hermes_policy
import pytest
from hermes_policy import (
    AUDIT_ENV,
    DEFAULT_MAX_BYTES,
    MAX_BYTES_ENV,
    POLICY_ENV,
    PolicyProvider,
    find_policy_file,
    load_policy,
    parse_policy,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import (
    Approval,
    ApprovalRequest,
    Ask,
    InvalidDefinitionError,
    PermissionDeniedError,
    Runtime,
    Tool,
    define_tool,
)
from hermes_core import schema as s
from hermes_core.testing import check_plugin, raises_code


def tool(name: str, *permissions: str) -> Tool:
    """A tool declaring *permissions* that returns its own name."""
    return define_tool(
        name=name,
        description=f"A test tool needing {', '.join(permissions) or 'nothing'}.",
        version="1.0.0",
        input=s.object({}),
        output=s.string(),
        permissions=permissions,
        handler=lambda args: name,
    )


TOOLS = [
    tool("fs.write", "fs:write"),
    tool("fs.read", "fs:read"),
    tool("fs.dir.list", "fs:read"),
    tool("shell.run", "shell:run"),
    tool("web.get", "net:fetch"),
]


def write(directory: Path, text: str, name: str = "policy.toml") -> Path:
    """Write a policy file (dedented) into *directory*, creating it, and return the file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_ambient_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts with no policy: no HERMESOS_POLICY, an empty working directory and config directory."""
    monkeypatch.delenv(POLICY_ENV, raising=False)
    monkeypatch.delenv(MAX_BYTES_ENV, raising=False)
    monkeypatch.delenv(AUDIT_ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("APPDATA", str(tmp_path / "config"))
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")


# -- answers ---------------------------------------------------------------------------------

EXAMPLE = """
    # Every tool may fetch; no tool may run a shell.
    grant = ["net:fetch"]
    deny = ["shell:*"]

    # Only fs.write is granted fs:write by this file.
    [tools."fs.write"]
    grant = ["fs:write"]

    # Every tool under fs. may read, and may not fetch.
    [tools."fs.*"]
    grant = ["fs:read"]
    deny = ["net:fetch"]
"""

ANSWERS: list[tuple[str, str, str, bool | None]] = [
    # (policy, tool, permission, answer)
    (EXAMPLE, "fs.write", "fs:write", True),
    (EXAMPLE, "fs.read", "fs:write", None),  # a per-tool grant grants only that tool
    (EXAMPLE, "web.get", "fs:write", None),
    (EXAMPLE, "fs.read", "fs:read", True),  # glob selector
    (EXAMPLE, "fs.dir.list", "fs:read", True),  # a glob covers every level under it
    (EXAMPLE, "fs", "fs:read", None),  # "fs.*" does not match "fs" itself
    (EXAMPLE, "fsx.read", "fs:read", None),  # nor a name that merely starts with "fs"
    (EXAMPLE, "web.get", "net:fetch", True),  # top-level grant
    (EXAMPLE, "fs.write", "net:fetch", False),  # a per-tool deny beats a top-level grant
    (EXAMPLE, "shell.run", "shell:run", False),  # top-level namespace deny
    (EXAMPLE, "fs.write", "shell:exec", False),
    (EXAMPLE, "web.get", "db:read", None),  # nothing says anything: no opinion
    ("", "fs.write", "fs:write", None),  # an empty policy has no opinion on anything
    ('grant = ["*"]\ndeny = ["fs:write"]', "fs.write", "fs:write", False),  # any deny wins over any grant
    ('grant = ["*"]\ndeny = ["fs:write"]', "fs.write", "fs:read", True),
    ('deny = ["*"]\n[tools."fs.write"]\ngrant = ["fs:write"]', "fs.write", "fs:write", False),  # even per tool
    ('[tools."fs.write"]\ngrant = ["fs:write"]\ndeny = ["fs:write"]', "fs.write", "fs:write", False),
    ('[tools."fs.write"]\ngrant = ["fs:*"]', "fs.write", "fs:delete", True),
    ('[tools."fs.write"]\ngrant = ["fs:*"]', "fs.write", "net:fetch", None),
    ('[tools."fs.*"]\ndeny = ["*"]\n[tools."fs.read"]\ngrant = ["fs:read"]', "fs.read", "fs:read", False),
    ('tools = { "fs.write" = { grant = ["fs:write"] } }', "fs.write", "fs:write", True),  # inline tables
    ('tools."fs.write".grant = ["fs:write"]', "fs.write", "fs:write", True),  # dotted keys
]


@pytest.mark.parametrize(("policy", "tool_name", "permission", "answer"), ANSWERS)
def test_policy_answers(tmp_path: Path, policy: str, tool_name: str, permission: str, answer: bool | None) -> None:
    """A policy file read from disk answers True, False or None as documented."""
    provider = load_policy(write(tmp_path, policy))
    assert provider.decide(tool_name, permission) is answer


def test_check_is_decide_for_the_tools_name(tmp_path: Path) -> None:
    """check(tool, permission), the provider protocol, answers for the tool's name."""
    provider = load_policy(write(tmp_path, EXAMPLE))
    assert provider.check(TOOLS[0], "fs:write") is True
    assert provider.check(TOOLS[3], "shell:run") is False
    assert provider.check(TOOLS[4], "db:read") is None


def test_file_is_read_once_at_load(tmp_path: Path) -> None:
    """Changing or removing the file after load changes nothing: it is not read on every check."""
    path = write(tmp_path, 'deny = ["fs:write"]')
    provider = load_policy(path)
    path.write_text('grant = ["fs:write"]', encoding="utf-8")
    assert provider.decide("fs.write", "fs:write") is False
    path.unlink()
    assert provider.decide("fs.write", "fs:write") is False


# -- many rules: the index answers as every rule read in turn would ---------------------------

Rule = tuple[str | None, tuple[str, ...], tuple[str, ...]]


def reference(rules: list[Rule], tool: str, permission: str) -> bool | None:
    """The documented answer, read literally: every rule whose selector matches the tool is looked at."""

    def covers(pattern: str, permission: str) -> bool:
        return pattern in ("*", permission) or pattern == f"{permission.partition(':')[0]}:*"

    granted = False
    for selector, grant, deny in rules:
        if selector is None or selector == tool or (selector.endswith(".*") and tool.startswith(selector[:-1])):
            if any(covers(pattern, permission) for pattern in deny):
                return False
            granted = granted or any(covers(pattern, permission) for pattern in grant)
    return True if granted else None


def render(rules: list[Rule]) -> str:
    """The policy file of *rules*: the top-level lists (selector None), then one inline table per selector."""
    lines = [
        f"{key} = {json.dumps(patterns)}"
        for selector, *lists in rules
        if selector is None
        for key, patterns in zip(("grant", "deny"), lists, strict=True)
    ]
    lines.append("[tools]")
    lines.extend(
        f"{json.dumps(selector)} = {{ grant = {json.dumps(grant)}, deny = {json.dumps(deny)} }}"
        for selector, grant, deny in rules
        if selector is not None
    )
    return "\n".join(lines) + "\n"


def large_rules(count: int = 200_000) -> list[Rule]:
    """*count* tool tables, half for one tool each, half for every tool under a prefix, and a few that overlap."""
    rules: list[Rule] = [(None, ("net:fetch",), ("shell:*",))]
    for i in range(count // 2):
        rules.append((f"t{i}.run", (f"t{i}:run",), (f"t{i}:drop",)))
        rules.append((f"g{i}.*", (f"g{i}:*",), ("net:fetch",)))
    rules.append(("t7.*", ("t7:*",), ()))  # a prefix over an exact name: both apply to t7.run
    rules.append(("g7.run", (), ("g7:secret",)))  # an exact name under a prefix
    return rules


@pytest.fixture(scope="module")
def large() -> tuple[list[Rule], PolicyProvider]:
    """200,000 rules and their provider, parsed once for the module (it takes seconds)."""
    rules = large_rules()
    return rules, parse_policy(render(rules), "large.toml")


LARGE_CASES: list[tuple[str, str, bool | None]] = [
    # (tool, permission, answer)
    ("t99999.run", "t99999:run", True),  # its own table's grant
    ("t99999.run", "t99999:drop", False),  # its own table's deny
    ("t99999.run", "t99998:run", None),  # another tool's grant
    ("t0.run.more", "t0:run", None),  # a tool name does not cover the names under it
    ("t99999.run", "net:fetch", True),  # the top-level grant
    ("t5.run", "shell:run", False),  # the top-level deny
    ("g5.sub.tool", "g5:anything", True),  # a prefix selector, a namespace pattern
    ("g5.sub.tool", "net:fetch", False),  # a prefix's deny beats the top-level grant
    ("g5", "g5:x", None),  # "g5.*" does not cover "g5" itself
    ("g55.x", "g5:x", None),  # nor a name that merely starts with "g5"
    ("g55.x", "g55:x", True),
    ("t7.run", "t7:other", True),  # the prefix's grant on an exact name
    ("t7.run", "t7:drop", False),  # the exact name's deny beats the prefix's grant of t7:*
    ("g7.run", "g7:secret", False),  # the exact name's deny beats the prefix's grant of g7:*
    ("g7.run", "g7:open", True),
    ("web.get", "net:fetch", True),
    ("none.at.all", "db:read", None),
]


@pytest.mark.scale
@pytest.mark.parametrize(("tool_name", "permission", "answer"), LARGE_CASES)
def test_200000_rules_answer_as_documented(
    large: tuple[list[Rule], PolicyProvider], tool_name: str, permission: str, answer: bool | None
) -> None:
    """With 200,000 tool tables, each answer is the documented one (and the rules read one by one agree)."""
    rules, provider = large
    assert provider.decide(tool_name, permission) is answer
    assert reference(rules, tool_name, permission) is answer


SELECTORS = ["a", "a.b", "a.b.c", "b", "a.*", "a.b.*", "b.*", "ab.*"]
PATTERNS = ["*", "x:*", "x:r", "y:w", "y:*"]
NAMES = ["a", "a.b", "a.b.c", "a.bc", "ab", "ab.c", "b", "b.a", "c", "a.", "a..b", ""]
PERMISSIONS = ["x:r", "x:w", "y:w", "z:q"]
_lists = st.lists(st.sampled_from(PATTERNS), max_size=3).map(tuple)


@settings(max_examples=200, deadline=None)
@given(
    st.tuples(st.just(None), _lists, _lists),
    st.lists(st.tuples(st.sampled_from(SELECTORS), _lists, _lists), max_size=8, unique_by=lambda rule: rule[0]),
)
def test_the_index_answers_as_every_rule_read_in_turn(top: Rule, tables: list[Rule]) -> None:
    """For any small policy of overlapping selectors and patterns, every answer is the literal reading's."""
    rules = [top, *tables]
    provider = parse_policy(render(rules), "random.toml")
    for name in NAMES:
        for permission in PERMISSIONS:
            assert provider.decide(name, permission) is reference(rules, name, permission), (name, permission)


# -- load-time errors ------------------------------------------------------------------------

MALFORMED: list[tuple[str, str, int, str]] = [
    # (name, policy, line, what the message says after the line)
    (
        "toml syntax",
        """
        grant = ["fs:read"]
        deny = = ["fs:write"]
        """,
        2,
        ", column 8 is not valid TOML: ",  # then tomllib's own words
    ),
    (
        "unclosed array",
        """
        grant = [
          "fs:read",
        """,
        3,
        " (the end of the file) is not valid TOML: ",
    ),
    (
        "duplicate key",
        """
        grant = ["fs:read"]
        grant = ["fs:write"]
        """,
        2,
        " is not valid TOML: ",
    ),
    (
        "unknown key",
        """
        grant = ["fs:read"]

        grants = ["fs:write"]
        """,
        3,
        ": grants is not a known key; did you mean grant? A policy has top-level grant = [...], ask = [...] and "
        'deny = [...] lists and [tools."<tool name>"] tables',
    ),
    (
        "unknown key, no close match",
        """
        allow_everything = true
        """,
        1,
        ": allow_everything is not a known key; a policy has top-level grant",
    ),
    (
        "unknown table",
        """
        grant = []

        [tool."fs.write"]
        grant = ["fs:write"]
        """,
        3,
        ": tool is not a known table; did you mean tools?",
    ),
    (
        "unknown key in a tool table",
        """
        [tools."fs.write"]
        # allowed to write
        grnat = ["fs:write"]
        """,
        3,
        ': tools."fs.write".grnat is not a known key; did you mean grant? A tool table has only grant = [...], '
        "ask = [...] and deny = [...] lists",
    ),
    (
        "unquoted dotted tool name",
        """
        [tools.fs.write]
        grant = ["fs:write"]
        """,
        1,
        ": tools.fs.write is not a known table; a tool table has only grant = [...], ask = [...] and deny = [...] "
        "lists; "
        'if "fs.write" is a tool name, quote it: [tools."fs.write"]',
    ),
    (
        "grant is a string",
        """
        deny = []
        grant = "fs:write"
        """,
        2,
        ': grant must be a list of grant patterns such as ["fs:write"], got a string (write grant = ["fs:write"])',
    ),
    (
        "deny is a table",
        """
        [deny]
        fs = "write"
        """,
        1,
        ': deny must be a list of grant patterns such as ["fs:write"], got a table',
    ),
    (
        "bad pattern in a multi-line array",
        """
        grant = [
          "fs:read",
          "fs write",
        ]
        """,
        3,
        ': grant[1] must be a grant pattern: "namespace:action" (such as "fs:write"), "namespace:*" '
        '(such as "fs:*") or "*", got "fs write"',
    ),
    (
        "bad pattern in a tool table",
        """
        [tools."fs.write"]
        deny = ["fs:*", "FS:WRITE"]
        """,
        2,
        ': tools."fs.write".deny[1] must be a grant pattern',
    ),
    (
        "pattern that is not a string",
        """
        grant = ["fs:read", 7]
        """,
        1,
        ': grant[1] must be a grant pattern: "namespace:action" (such as "fs:write"), "namespace:*" '
        '(such as "fs:*") or "*", got an integer',
    ),
    (
        "tools is an array",
        """
        tools = ["fs.write"]
        """,
        1,
        ': tools must be a table of tool selectors such as [tools."fs.write"], got an array',
    ),
    (
        "tool entry is not a table",
        """
        [tools]
        "fs.write" = ["fs:write"]
        """,
        2,
        ': tools."fs.write" must be a table of grant, ask and deny lists such as [tools."fs.write"], got an array',
    ),
    (
        "bad tool selector",
        """
        [tools."FS Write"]
        grant = ["fs:write"]
        """,
        1,
        ': tools."FS Write" is not a tool selector; use a tool name such as "fs.write", or a name ending in ".*"',
    ),
    (
        "star selector",
        """
        [tools."*"]
        grant = ["fs:write"]
        """,
        1,
        ': tools."*" is not a tool selector; use the top-level grant, ask and deny lists for every tool',
    ),
    (
        "several problems",
        """
        grant = ["ok:fine"]
        deny = 3

        [tools."a.b"]
        gran = []
        """,
        2,
        ': deny must be a list of grant patterns such as ["fs:write"], got an integer '
        "(the file has 1 more problem, on line 5)",
    ),
]


@pytest.mark.parametrize(("name", "policy", "line", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_policy_is_an_error_at_load_naming_file_and_line(
    tmp_path: Path, name: str, policy: str, line: int, message: str
) -> None:
    """Every kind of malformed file raises INVALID_DEFINITION naming the file and the offending line."""
    path = write(tmp_path, policy)
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert caught.value.code == "INVALID_DEFINITION"
    assert str(caught.value).startswith(f'policy file "{path}", line {line}')
    assert message in str(caught.value)


def test_golden_message_for_a_bad_pattern(tmp_path: Path) -> None:
    """The whole message an operator reads, pinned once."""
    path = write(tmp_path, '[tools."fs.write"]\ngrant = ["fs:write", "fs write"]\n')
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f'policy file "{path}", line 2: tools."fs.write".grant[1] must be a grant pattern: "namespace:action" '
        '(such as "fs:write"), "namespace:*" (such as "fs:*") or "*", got "fs write".'
    )


def test_lines_are_counted_in_crlf_files(tmp_path: Path) -> None:
    """Windows line endings do not shift the line reported."""
    path = tmp_path / "crlf.toml"
    path.write_bytes(b'grant = ["fs:read"]\r\n\r\n[tools."fs.write"]\r\ndeny = ["nope"]\r\n')
    with pytest.raises(InvalidDefinitionError, match=r'crlf\.toml", line 4: tools\."fs\.write"\.deny\[0\]'):
        load_policy(path)


def test_line_is_found_after_multi_line_strings(tmp_path: Path) -> None:
    """Keys after a multi-line string are located on their own line, not the string's."""
    path = write(tmp_path, 'note = """\nline one\nline two\n"""\n\ngrant = ["bad"]\n')
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f'policy file "{path}", line 1: note is not a known key')
    assert "(the file has 1 more problem, on line 6)" in str(caught.value)


def test_file_that_is_not_utf8_is_an_error_naming_the_line(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are reported with their line."""
    path = tmp_path / "latin1.toml"
    path.write_bytes("grant = []\n# caf\u00e9\n".encode("latin-1"))
    with pytest.raises(
        InvalidDefinitionError, match=r'latin1\.toml", line 2 is not UTF-8 text; save the file as UTF-8'
    ):
        load_policy(path)


def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    """A path that cannot be read (here a directory) is an error naming it, not an empty policy."""
    with pytest.raises(InvalidDefinitionError, match=r'policy file ".*" could not be read'):
        load_policy(tmp_path)


# -- what the file may be: a regular file, of bounded size and nesting ------------------------


def in_time(function: Callable[[], object], unblock: Callable[[], None] = lambda: None) -> BaseException | None:
    """Run *function* in a thread and return what it raised (None if it returned); fail, not hang, if it blocks.

    *unblock* is called if it is still running after 10 seconds, to release the thread before the test fails.
    """
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            function()
        except BaseException as error:  # handed to the test, which asserts on it
            outcome.append(error)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        unblock()
        pytest.fail("reading the policy file blocked for 10 seconds")
    return outcome[0]


def open_writer(path: Path) -> None:
    """Open and close the FIFO *path* for writing, which releases a reader blocked in its open()."""
    with contextlib.suppress(OSError):  # no reader: nothing to release
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture
def special_file(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str, Callable[[], None]]]:
    """A path that is not a regular file, what the message calls it, and how to release a reader it blocks."""
    kind = request.param
    path = tmp_path / "p"
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no named pipes here")
        os.mkfifo(path)
        yield path, "a FIFO (named pipe)", lambda: open_writer(path)
    elif kind == "socket":
        if not hasattr(socket, "AF_UNIX"):
            pytest.skip("no Unix sockets here")
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
            yield path, "a socket", lambda: None
    elif kind == "directory":
        path.mkdir()
        yield path, "a directory", lambda: None
    else:
        device = Path("/dev/null" if kind == "device" else "/dev/zero")
        if not device.exists():
            pytest.skip(f"no {device} here")
        if kind == "device":
            yield device, "a character device", lambda: None
        else:  # a link the operator may have made, leading to a file that never ends
            path.symlink_to(device)
            yield path, f'a link to "{device}", a character device', lambda: None


@pytest.mark.parametrize(
    "special_file", ["fifo", "socket", "device", "zero through a link", "directory"], indirect=True
)
def test_a_file_that_is_not_regular_is_refused_without_reading_it(
    special_file: tuple[Path, str, Callable[[], None]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO would block the load and /dev/zero would never end: each is refused by its type, naming it."""
    path, kind, unblock = special_file
    monkeypatch.setenv(POLICY_ENV, str(path))
    error = in_time(hermes_policy.hermes_permission_providers, unblock)
    assert isinstance(error, InvalidDefinitionError)
    assert str(error) == (
        f'policy file "{path}" could not be read: it is {kind}, not a regular file; a policy is a regular file of '
        "TOML text."
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_in_the_config_directory_is_refused_not_skipped(tmp_path: Path) -> None:
    """The user's policy.toml made a FIFO stops the load: it is not waited on, nor taken for no policy."""
    (tmp_path / "config" / "hermesos").mkdir(parents=True)
    fifo = tmp_path / "config" / "hermesos" / "policy.toml"
    os.mkfifo(fifo)
    error = in_time(hermes_policy.hermes_permission_providers, lambda: open_writer(fifo))
    assert isinstance(error, InvalidDefinitionError)
    assert "could not be read: it is a FIFO (named pipe), not a regular file" in str(error)


def test_a_fifo_swapped_in_after_the_type_check_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between the stat and the open the file may change: the open does not wait, and fstat refuses it."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    regular = os.stat(write(tmp_path, ""))
    real_stat = os.stat
    monkeypatch.setattr(
        os, "stat", lambda path, *a, **k: regular if str(path) == str(fifo) else real_stat(path, *a, **k)
    )
    error = in_time(lambda: load_policy(fifo), lambda: open_writer(fifo))
    assert isinstance(error, InvalidDefinitionError)
    assert "it is a FIFO (named pipe), not a regular file" in str(error)


def test_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    """A file over 1 MiB is refused before it is read, naming it; one of exactly 1 MiB is read."""
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (DEFAULT_MAX_BYTES - 1) + b"\n")
    assert load_policy(path).decide("fs.write", "fs:write") is None
    path.write_bytes(b"#" * DEFAULT_MAX_BYTES + b"\n")
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert str(caught.value) == (
        f'policy file "{path}" is larger than 1048576 bytes, the limit for a policy file; shorten it (a namespace '
        'pattern such as "fs:*" or a selector such as "fs.*" stands for many), or raise the limit with '
        "HERMESOS_POLICY_MAX_BYTES."
    )


def test_size_limit_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMESOS_POLICY_MAX_BYTES lowers or raises the limit; a value that is not a positive integer is an error."""
    path = write(tmp_path, 'deny = ["shell:*"]\n' + "#" * DEFAULT_MAX_BYTES)
    monkeypatch.setenv(POLICY_ENV, str(path))
    with pytest.raises(InvalidDefinitionError, match="is larger than 1048576 bytes"):
        hermes_policy.hermes_permission_providers()
    monkeypatch.setenv(MAX_BYTES_ENV, str(2 * DEFAULT_MAX_BYTES))
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.decide("shell.run", "shell:run") is False
    monkeypatch.setenv(MAX_BYTES_ENV, "10")
    with pytest.raises(InvalidDefinitionError, match="is larger than 10 bytes"):
        hermes_policy.hermes_permission_providers()
    monkeypatch.setenv(MAX_BYTES_ENV, "0")
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_policy.hermes_permission_providers()
    assert caught.value.declaration == "setting HERMESOS_POLICY_MAX_BYTES"


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs a /proc file system")
def test_read_stops_past_the_limit_whatever_the_size_said() -> None:
    """A regular file whose size says 0 (a /proc file) is read up to the limit and one byte, then refused."""
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(InvalidDefinitionError, match=r'"/proc/self/status" is larger than 16 bytes'):
        load_policy("/proc/self/status", max_bytes=16)


_DEPTH = 10_000
NESTED: list[tuple[str, str, int, str]] = [
    # (name, policy, line, what the message says after the line)
    ("arrays", "grant = []\na = " + "[" * _DEPTH + "]" * _DEPTH, 2, "nests arrays or inline tables more than 32"),
    ("unclosed arrays", "\n\na = " + "[" * _DEPTH, 3, "nests arrays or inline tables more than 32 levels deep"),
    ("inline tables", "\n\na = " + "{b = " * _DEPTH + "1" + " }" * _DEPTH, 3, "nests arrays or inline tables"),
    ("arrays of tables", "a = [" + "{b = [" * _DEPTH, 1, "nests arrays or inline tables more than 32 levels"),
    ("dotted key", "grant = []\na" + ".b" * 5_000 + " = 1", 2, "has a dotted key of more than 32 parts"),
    ("table header", "\n[tools" + '."x"' * 5_000 + "]", 2, "has a dotted key of more than 32 parts"),
]


@pytest.mark.parametrize(("name", "policy", "line", "message"), NESTED, ids=[n[0] for n in NESTED])
def test_deep_nesting_is_refused_naming_file_and_line(
    tmp_path: Path, name: str, policy: str, line: int, message: str
) -> None:
    """Nesting past 32 levels is INVALID_DEFINITION naming the file and line, never a RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text(policy, encoding="utf-8")
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f'policy file "{path}", line {line} {message}')
    assert str(caught.value).endswith(
        'a policy needs three levels at most, as in tools = { "fs.write" = { grant = ["fs:write"] } }.'
    )


def test_nesting_up_to_the_limit_is_read() -> None:
    """32 levels are read (and then judged as a policy like any other data)."""
    for text in ("a = " + "[" * 32 + "]" * 32, "a" + ".b" * 31 + " = 1", "a = 1.5\nb = 2\n# " + "x." * 99):
        with pytest.raises(InvalidDefinitionError, match=r"^policy file \"nested\", line 1: a is not a known"):
            parse_policy(text, "nested")


@pytest.mark.skipif(sys.platform == "win32", reason="the memory limit is set with resource.setrlimit")
def test_a_dotted_key_of_100000_parts_is_refused_within_bounded_memory(tmp_path: Path) -> None:
    """tomllib's memory grows with the square of a key's length (tens of gigabytes here): it is never asked."""
    script = (
        "import resource, hermes_policy\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "try:\n"
        "    hermes_policy.parse_policy('a' + '.b' * 100_000 + ' = 1', 'deep')\n"
        "except hermes_policy.InvalidDefinitionError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.startswith('policy file "deep", line 1 has a dotted key of more than 32 parts'), done.stderr


def test_a_recursion_error_past_the_located_limit_still_names_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nesting that exhausts the stack before the limit (a deep caller, simulated) is reported, without a line."""

    def exhausted(text: str) -> dict[str, Any]:
        raise RecursionError

    import tomllib  # the plugin imports it where a policy is read, and reads it from there

    monkeypatch.setattr(tomllib, "loads", exhausted)
    with pytest.raises(InvalidDefinitionError) as caught:
        parse_policy("a = [[[1]]]", "shallow.toml")
    assert str(caught.value) == (
        'policy file "shallow.toml" is nested too deeply to be read; a policy needs three levels at most, as in '
        'tools = { "fs.write" = { grant = ["fs:write"] } }.'
    )


def test_parse_policy_names_its_source() -> None:
    """parse_policy takes text directly; errors name the source given."""
    with pytest.raises(InvalidDefinitionError, match=r'^policy file "inline policy", line 1: grant\[0\]'):
        parse_policy('grant = ["?"]', "inline policy")
    assert repr(parse_policy("", "inline policy")) == "PolicyProvider('inline policy')"


PIECES = [
    *("grant", "deny", "tools", " = ", "[", "]", "{", "}", ",", ".", "7", "true", "[[", "]]", "\\"),
    *('"fs:write"', '"fs write"', "'fs:*'", '"*"', '"fs.write"', '"fs.*"'),
    *("\n", "\r\n", " ", "# c", '"""', "'''"),
]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(PIECES), max_size=40).map("".join)))
def test_any_text_is_a_policy_or_an_invalid_definition(text: str) -> None:
    """Whatever the file holds, loading gives a provider or INVALID_DEFINITION naming the file, nothing else."""
    try:
        provider = parse_policy(text, "fuzz.toml")
    except InvalidDefinitionError as error:
        message = str(error)
    else:
        assert provider.decide("fs.write", "fs:write") in (True, False, None)
        return
    assert message.startswith('policy file "fuzz.toml"')


# -- finding the file ------------------------------------------------------------------------


def user_policy(tmp_path: Path, text: str) -> Path:
    """Write the policy file of the user's config directory ($XDG_CONFIG_HOME/hermesos/policy.toml)."""
    return write(tmp_path / "config" / "hermesos", text)


def test_no_file_anywhere_means_no_opinion(tmp_path: Path) -> None:
    """With no variable and no file in the config directory, the provider answers None to everything."""
    assert find_policy_file() is None
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.source is None
    assert provider.files == ()
    assert repr(provider) == "PolicyProvider(None)"
    assert provider.decide("fs.write", "fs:write") is None
    assert provider.check(TOOLS[0], "*") is None


def test_working_directory_is_never_looked_at(tmp_path: Path) -> None:
    """A policy in the working directory, where file tools write by default, is not read under any name.

    This replaces the test that found ./hermesos-policy.toml: the working directory was the first default.
    """
    for name in ("hermesos-policy.toml", "policy.toml", "hermesos/policy.toml", ".config/hermesos/policy.toml"):
        write(tmp_path / "work" / Path(name).parent, 'grant = ["*"]', name=Path(name).name)
    assert find_policy_file() is None
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.decide("fs.read", "fs:read") is None


def test_user_config_file_is_found(tmp_path: Path) -> None:
    """$XDG_CONFIG_HOME/hermesos/policy.toml is read when HERMESOS_POLICY is not set."""
    path = user_policy(tmp_path, "")
    assert find_policy_file() == path
    assert hermes_policy.policy_path() == str(path)  # what the hooks ask, as text: no pathlib at start (start-up)


def test_a_named_policy_file_is_found_as_text_where_the_public_function_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "named", "")
    monkeypatch.setenv("HERMESOS_POLICY", f"{tmp_path}//named/./{path.name}")
    assert hermes_policy.policy_path() == str(find_policy_file()) == str(path)


def test_user_config_file_is_read_whatever_the_working_directory_holds(tmp_path: Path) -> None:
    """A working-directory policy neither replaces nor joins the user's.

    This replaces the test that the working directory's file won over the user's.
    """
    path = user_policy(tmp_path, 'deny = ["fs:write"]')
    write(tmp_path / "work", 'grant = ["*"]', name="hermesos-policy.toml")
    assert find_policy_file() == path
    [provider] = hermes_policy.hermes_permission_providers()
    assert (provider.decide("fs.write", "fs:write"), provider.decide("fs.read", "fs:read")) == (False, None)


def test_relative_xdg_config_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative XDG_CONFIG_HOME is invalid by the XDG spec and falls back to ~/.config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write(tmp_path / "work" / "relative" / "hermesos", "")
    path = write(tmp_path / "home" / ".config" / "hermesos", "")
    assert find_policy_file() == path


@pytest.mark.skipif(os.name != "nt", reason="%APPDATA% is the config directory on Windows only")
def test_appdata_is_the_config_directory_on_windows(tmp_path: Path) -> None:
    """On Windows the user's file is %APPDATA%\\hermesos\\policy.toml."""
    path = user_policy(tmp_path, "")
    assert find_policy_file() == path


def test_environment_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMESOS_POLICY names the file; the config directory is not looked at."""
    user_policy(tmp_path, 'deny = ["*"]')
    path = write(tmp_path, 'grant = ["*"]', name="chosen.toml")
    monkeypatch.setenv(POLICY_ENV, str(path))
    assert find_policy_file() == path
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.decide("fs.write", "fs:write") is True


def test_empty_environment_variable_is_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMESOS_POLICY set to nothing is as if it were not set."""
    monkeypatch.setenv(POLICY_ENV, " ")
    path = user_policy(tmp_path, "")
    assert find_policy_file() == path


def test_environment_variable_naming_a_missing_file_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A policy explicitly asked for but absent is an error, never silently no policy."""
    missing = tmp_path / "missing.toml"
    monkeypatch.setenv(POLICY_ENV, str(missing))
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_policy.hermes_permission_providers()
    assert (caught.value.declaration, caught.value.field) == ("setting HERMESOS_POLICY", None)
    assert str(caught.value) == (
        f'setting HERMESOS_POLICY names "{missing}", which does not exist; create it, fix the path, '
        "or unset HERMESOS_POLICY."
    )


def test_environment_variable_naming_a_dangling_link_names_a_missing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link to nothing is a file that does not exist."""
    link = tmp_path / "link.toml"
    link.symlink_to(tmp_path / "nowhere.toml")
    monkeypatch.setenv(POLICY_ENV, str(link))
    with pytest.raises(InvalidDefinitionError, match=r'names ".*link\.toml", which does not exist'):
        find_policy_file()


def test_the_environment_can_be_passed_in(tmp_path: Path) -> None:
    """find_policy_file reads the mapping it is given, not os.environ; a blank value is no value.

    The cwd argument is gone with the working-directory default, so it is no longer passed.
    """
    path = write(tmp_path, "", name="given.toml")
    assert find_policy_file({POLICY_ENV: f"  {path}  "}) == path
    assert find_policy_file({POLICY_ENV: "", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}) is None
    xdg_file = write(tmp_path / "xdg" / "hermesos", "")
    assert find_policy_file({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}) == xdg_file


def test_files_is_the_real_path_of_the_policy_read(tmp_path: Path) -> None:
    """files: the absolute, real path of the file decided from; nothing when no file was read."""
    real = write(tmp_path / "policies", 'deny = ["shell:*"]', name="real.toml")
    assert load_policy(real).files == (os.path.realpath(real),)
    assert os.path.isabs(load_policy(real).files[0])
    assert parse_policy('deny = ["shell:*"]').files == ()
    assert PolicyProvider().files == ()


def test_files_names_every_link_followed_after_the_real_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replacing a link changes the file read: each link met is listed where it lies, after the real path."""
    real = write(tmp_path / "policies", 'deny = ["shell:*"]', name="real.toml")
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "second.toml").symlink_to("../policies/real.toml")  # relative
    (tmp_path / "links" / "first.toml").symlink_to(tmp_path / "links" / "second.toml")  # absolute
    (tmp_path / "work" / "dir").symlink_to(tmp_path / "links")  # a directory
    monkeypatch.setenv(POLICY_ENV, "dir/first.toml")  # relative to the working directory
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.source == "dir/first.toml"
    here = os.path.realpath(tmp_path)
    assert provider.files == (
        os.path.realpath(real),
        os.path.join(here, "work", "dir"),
        os.path.join(here, "links", "first.toml"),
        os.path.join(here, "links", "second.toml"),
    )


def test_files_through_the_config_directory(tmp_path: Path) -> None:
    """The user's config file is reported as the file decided from."""
    path = user_policy(tmp_path, "")
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.files == (os.path.realpath(path),)


# An unsearchable config directory: whether a policy is there cannot be known, so it is an error naming the file,
# never "no policy" (that policy might deny what the grants allow) and never a bare PermissionError.


def deny_lookup(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Make os.stat of *denied* raise PermissionError, as in a directory that cannot be searched (root can)."""
    real_stat = os.stat

    def stat_denied(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if os.fspath(path) == str(denied):
            raise PermissionError(13, "Permission denied")
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat_denied)


def test_unsearchable_config_directory_is_an_error_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Simulated, so that it runs as root too: looking up the file raises PermissionError."""
    expected = tmp_path / "config" / "hermesos" / "policy.toml"
    deny_lookup(monkeypatch, expected)
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_policy.hermes_permission_providers()
    assert str(caught.value) == (
        f'policy file "{expected}" could not be looked up (Permission denied), so whether there is a policy is '
        "unknown; fix the link or its directories' permissions, or set HERMESOS_POLICY to the policy file to read."
    )


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root searches any directory")
def test_unsearchable_config_directory_is_an_error_for_real(tmp_path: Path) -> None:
    """The same with real permissions: a config directory this user may not search."""
    user_policy(tmp_path, 'deny = ["*"]')
    directory = tmp_path / "config" / "hermesos"
    directory.chmod(0)
    try:
        with pytest.raises(InvalidDefinitionError, match=r"could not be looked up \(Permission denied\)"):
            find_policy_file()
    finally:
        directory.chmod(stat.S_IRWXU)


def test_environment_variable_in_an_unsearchable_directory_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HERMESOS_POLICY in a directory that cannot be searched: an error naming the setting (simulated)."""
    path = write(tmp_path, "", name="chosen.toml")
    monkeypatch.setenv(POLICY_ENV, str(path))
    deny_lookup(monkeypatch, path)
    with pytest.raises(InvalidDefinitionError) as caught:
        find_policy_file()
    assert str(caught.value) == (
        f'setting HERMESOS_POLICY names "{path}", which could not be looked up (Permission denied); fix the path '
        "or its directories' permissions."
    )


def test_dangling_link_in_the_config_directory_is_an_error(tmp_path: Path) -> None:
    """A link where the policy belongs was put there to lead to one: leading nowhere, it is not "no policy"."""
    (tmp_path / "config" / "hermesos").mkdir(parents=True)
    link = tmp_path / "config" / "hermesos" / "policy.toml"
    link.symlink_to(tmp_path / "moved.toml")
    with pytest.raises(InvalidDefinitionError) as caught:
        find_policy_file()
    assert str(caught.value).startswith(
        f'policy file "{link}" is a symbolic link leading nowhere, so whether there is a policy is unknown; '
    )


def test_a_long_bad_pattern_is_shortened_in_the_message() -> None:
    """A pattern is quoted with at most 60 characters, "..." included."""
    with pytest.raises(InvalidDefinitionError) as caught:
        parse_policy(f'grant = ["{"x" * 100}"]', "long.toml")
    assert caught.value.detail.endswith(f'got "{"x" * 57}..."')


# -- through a real runtime ------------------------------------------------------------------


def runtime(grants: list[str]) -> Runtime:
    """A runtime of the test tools, with *grants* and the providers the plugin's hook contributes."""
    return Runtime(TOOLS, grants=grants, providers=hermes_policy.hermes_permission_providers())


def test_deny_wins_over_a_grant_of_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deny in the file beats the runtime's grants=["*"]."""
    monkeypatch.setenv(POLICY_ENV, str(write(tmp_path, 'deny = ["shell:*"]')))
    rt = runtime(["*"])
    with pytest.raises(PermissionDeniedError) as caught:
        rt.call_sync("shell.run", {})
    assert caught.value.permission == "shell:run"
    assert rt.call_sync("fs.write", {}) == "fs.write"


def test_per_tool_grant_grants_only_that_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fs.write may use fs:write; another tool declaring fs:write is denied by default."""
    monkeypatch.setenv(POLICY_ENV, str(write(tmp_path, '[tools."fs.write"]\ngrant = ["fs:write"]')))
    also_writes = tool("notes.save", "fs:write")
    rt = Runtime([*TOOLS, also_writes], providers=hermes_policy.hermes_permission_providers())
    assert rt.call_sync("fs.write", {}) == "fs.write"
    with pytest.raises(PermissionDeniedError):
        rt.call_sync("notes.save", {})
    with pytest.raises(PermissionDeniedError):
        rt.call_sync("fs.read", {})


def test_no_file_has_no_opinion_so_default_deny_applies(tmp_path: Path) -> None:
    """Without a policy file the provider says nothing: grants decide, and ungranted is denied."""
    with pytest.raises(PermissionDeniedError):
        runtime([]).call_sync("fs.write", {})
    assert runtime(["fs:write"]).call_sync("fs.write", {}) == "fs.write"


def test_user_config_policy_applies_through_the_hook(tmp_path: Path) -> None:
    """The config directory's file is picked up by the hook as the variable's is.

    This replaces the same test for ./hermesos-policy.toml, which is no longer read.
    """
    user_policy(tmp_path, 'grant = ["fs:*"]\ndeny = ["fs:write"]')
    rt = runtime([])
    assert rt.call_sync("fs.read", {}) == "fs.read"
    with pytest.raises(PermissionDeniedError):
        rt.call_sync("fs.write", {})


_SCRIPT = """
import json
from hermes_core import InvalidDefinitionError, PermissionDeniedError, Runtime, define_tool, load_runtime
from hermes_core import schema as s

try:
    loaded = load_runtime(grants=["*"])
except InvalidDefinitionError as error:
    print(json.dumps({"error": str(error)}))
    raise SystemExit(0)
shell = define_tool(name="shell.run", description="Run.", version="1.0.0", input=s.object({}),
                    permissions=["shell:run"], handler=lambda args: "ran")
read = define_tool(name="fs.read", description="Read.", version="1.0.0", input=s.object({}),
                   permissions=["fs:read"], handler=lambda args: "read")
rt = Runtime([shell, read], grants=loaded.grants, providers=loaded.providers)
answers = {}
for name in ("shell.run", "fs.read"):
    try:
        answers[name] = rt.call_sync(name, {})
    except PermissionDeniedError as error:
        answers[name] = error.code
print(json.dumps({"providers": [type(p).__name__ for p in loaded.providers], "answers": answers}))
"""


def run_script(tmp_path: Path, script: str, policy: Path | None = None) -> dict[str, object]:
    """Run *script* in a fresh interpreter, HERMESOS_POLICY naming *policy* if given, and return what it printed.

    It runs in tmp_path/run, the root of hermesos-fs (once its default, the working directory): the policy
    must lie elsewhere, or the runtime refuses to start (a tool could rewrite it).
    """
    env = {
        "PATH": "",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HERMESOS_FS_ROOT": str(tmp_path / "run"),
    }
    if policy is not None:
        env[POLICY_ENV] = str(policy)
    (tmp_path / "run").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path / "run", capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def run_load_runtime(tmp_path: Path, policy: Path) -> dict[str, object]:
    """Run load_runtime() in a fresh interpreter with HERMESOS_POLICY set, and return what it printed."""
    return run_script(tmp_path, _SCRIPT, policy)


def test_installed_plugin_is_picked_up_by_load_runtime(tmp_path: Path) -> None:
    """The installed entry point loads: the file named by HERMESOS_POLICY denies despite grants=["*"]."""
    result = run_load_runtime(tmp_path, write(tmp_path, 'deny = ["shell:run"]'))
    assert "PolicyProvider" in str(result["providers"])
    assert result["answers"] == {"shell.run": "PERMISSION_DENIED", "fs.read": "read"}


def test_malformed_policy_stops_load_runtime_naming_plugin_file_and_line(tmp_path: Path) -> None:
    """load_runtime fails at boot, the message naming the plugin, the file and the line."""
    path = write(tmp_path, 'grant = []\ndeny = ["shell run"]\n')
    error = run_load_runtime(tmp_path, path)["error"]
    assert isinstance(error, str)
    assert error.startswith('plugin hermesos-policy 0.2.0 (entry point "policy" = hermes_policy): ')
    assert f'policy file "{path}", line 2: deny[0] must be a grant pattern' in error


_WRITE_THEN_READ = """
import json
from hermes_core import InvalidDefinitionError, PermissionDeniedError, load_runtime

def attempt(rt, name, args):
    try:
        rt.call_sync(name, args)
    except PermissionDeniedError as error:
        return error.code
    return "done"

try:
    first = load_runtime(grants=["fs:write"])  # the model may write files, and nothing else
except InvalidDefinitionError as error:
    print(json.dumps({"error": str(error)}))
    raise SystemExit(0)
written = attempt(first, "fs.write", {"path": "hermesos-policy.toml", "content": 'grant = ["*"]'})
second = load_runtime(grants=["fs:write"])  # the next load, in the same working directory
print(json.dumps({"written": written, "read": attempt(second, "fs.read", {"path": "hermesos-policy.toml"})}))
"""


def test_a_policy_written_by_a_file_tool_is_not_read_at_the_next_load(tmp_path: Path) -> None:
    """The attack: fs:write alone writes grant = ["*"] where the policy used to be found, then reads.

    hermesos-fs wrote under the working directory by default; the policy was read from there too.
    """
    pytest.importorskip("hermes_fs")
    result = run_script(tmp_path, _WRITE_THEN_READ)
    assert result == {"written": "done", "read": "PERMISSION_DENIED"}
    assert (tmp_path / "run" / "hermesos-policy.toml").read_text(encoding="utf-8") == 'grant = ["*"]'


def test_a_policy_a_file_tool_may_write_stops_the_load(tmp_path: Path) -> None:
    """The policy file is guarded (hermes_guarded_paths): a root holding it is refused before any tool is made.

    The file is named through a link outside the root; where it lies is what counts.
    """
    pytest.importorskip("hermes_fs")
    (tmp_path / "run").mkdir()
    path = write(tmp_path / "run", 'deny = ["shell:*"]')
    (tmp_path / "outside.toml").symlink_to(path)  # a link outside leading inside is inside
    error = run_script(tmp_path, _WRITE_THEN_READ, tmp_path / "outside.toml")["error"]
    assert isinstance(error, str)
    assert "a path plugin hermesos-policy guards" in error
    assert os.path.realpath(path) in error


def test_a_link_to_the_policy_under_a_file_tools_root_stops_the_load(tmp_path: Path) -> None:
    """A tool could replace the link with a file of its own, wherever the link points now."""
    pytest.importorskip("hermes_fs")
    path = write(tmp_path / "etc", 'deny = ["shell:*"]')
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "policy-link.toml").symlink_to(path)
    error = run_script(tmp_path, _WRITE_THEN_READ, tmp_path / "run" / "policy-link.toml")["error"]
    assert isinstance(error, str)
    assert "a path plugin hermesos-policy guards" in error
    assert os.path.join(os.path.realpath(tmp_path / "run"), "policy-link.toml") in error


def test_provider_type_is_exported() -> None:
    """The provider class is public, for runtimes built by hand."""
    assert isinstance(parse_policy(""), PolicyProvider)


# -- the contract, as the pytest plugin of hermesos-core[testing] checks it -------------------------


def test_the_installed_plugin_loads_with_no_problem_and_no_tools(hermes_env: Path) -> None:
    assert check_plugin("hermesos-policy") == []


def test_a_policy_in_the_isolated_user_configuration_is_the_one_used(
    hermes_env: Path, hermes_runtime: Callable[..., Runtime]
) -> None:
    policy = hermes_env / "config" / "hermesos" / "policy.toml"
    policy.parent.mkdir(parents=True)
    policy.write_text('grant = ["unit:run"]\n')
    unit = define_tool(
        name="unit.run", description="Run.", version="1.0.0", input=s.object({}), permissions=["unit:run"], handler=dict
    )
    assert hermes_runtime(unit, "hermesos-policy").call_sync("unit.run", {}) == {}
    with raises_code("PERMISSION_DENIED"):
        hermes_runtime(unit).call_sync("unit.run", {})


# -- ask: a person approves each call ---------------------------------------------------------------


ASKING = """
grant = ["fs:*"]
ask = ["fs:write"]
deny = ["shell:*"]

[tools."web.*"]
ask = ["net:fetch"]

[tools."shell.run"]
ask = ["shell:run"]
"""


def test_ask_top_level_and_per_tool_pattern(tmp_path: Path) -> None:
    """An ask pattern answers Ask with the policy's name; deny beats ask, ask beats grant."""
    for policy in (parse_policy(ASKING, "asking.toml"), load_policy(write(tmp_path, ASKING))):
        answers = {t.name: policy.check(t, t.permissions[0]) for t in TOOLS}
        assert answers["fs.read"] is True
        assert answers["shell.run"] is False  # the top-level deny wins over the tool's ask
        for name in ("fs.write", "web.get"):
            assert isinstance(answers[name], Ask)
            assert answers[name].reason == f'the policy "{policy.source}" asks a person to approve it'
    assert parse_policy('[tools."fs.write"]\nask = ["fs:write"]').decide("fs.read", "fs:write") is None


def test_ask_through_a_runtime_with_and_without_an_approver() -> None:
    """The runtime's approver answers the policy's ask; without one, the ask is a denial saying how to approve."""
    policy = parse_policy(ASKING, "asking.toml")
    asked: list[tuple[str, ...]] = []

    def approver(request: ApprovalRequest) -> Approval:
        asked.append(request.permissions)
        return Approval.once()

    runtime = Runtime(TOOLS, providers=[policy], approver=approver)
    assert runtime.call_sync("fs.write", {}) == "fs.write"
    assert runtime.call_sync("fs.read", {}) == "fs.read"
    assert asked == [("fs:write",)]
    with pytest.raises(PermissionDeniedError) as caught:
        Runtime(TOOLS, providers=[policy]).call_sync("fs.write", {})
    assert caught.value.reason == "no_approver"
    assert 'the policy "asking.toml" asks a person to approve it' in caught.value.message
    assert "Runtime(approver=...)" in caught.value.message


@pytest.mark.parametrize(
    ("policy", "line", "message"),
    [
        ('ask = "fs:write"', 1, ': ask must be a list of grant patterns such as ["fs:write"], got a string'),
        ('[tools."fs.write"]\nask = ["fs:write", "FS"]', 2, ': tools."fs.write".ask[1] must be a grant pattern'),
        ("aks = []", 1, ": aks is not a known key; did you mean ask?"),
    ],
)
def test_a_malformed_ask_is_located(tmp_path: Path, policy: str, line: int, message: str) -> None:
    """The ask lists are checked as the grant and deny lists are, naming the file and the line."""
    path = write(tmp_path, policy)
    with pytest.raises(InvalidDefinitionError) as caught:
        load_policy(path)
    assert str(caught.value).startswith(f'policy file "{path}", line {line}{message}')
