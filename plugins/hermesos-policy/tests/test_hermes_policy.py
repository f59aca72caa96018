"""Tests for hermesos-policy: answers, load-time errors, where the file is found, and the plugin in a real runtime."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import hermes_policy
import pytest
from hermes_policy import POLICY_ENV, PolicyProvider, find_policy_file, load_policy, parse_policy
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, PermissionDeniedError, Runtime, Tool, define_tool
from hermes_core import schema as s


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


def write(directory: Path, text: str, name: str = "hermesos-policy.toml") -> Path:
    """Write a policy file (dedented) into *directory* and return its path."""
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_ambient_policy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test starts with no policy: no HERMESOS_POLICY, an empty working directory and config directory."""
    monkeypatch.delenv(POLICY_ENV, raising=False)
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
        ": grants is not a known key; did you mean grant? A policy has top-level grant = [...] and deny = [...] "
        'lists and [tools."<tool name>"] tables',
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
        ': tools."fs.write".grnat is not a known key; did you mean grant? A tool table has only grant = [...] '
        "and deny = [...] lists",
    ),
    (
        "unquoted dotted tool name",
        """
        [tools.fs.write]
        grant = ["fs:write"]
        """,
        1,
        ": tools.fs.write is not a known table; a tool table has only grant = [...] and deny = [...] lists; "
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
        ': tools."fs.write" must be a table of grant and deny lists such as [tools."fs.write"], got an array',
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
        ': tools."*" is not a tool selector; use the top-level grant and deny lists for every tool',
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


def test_no_file_anywhere_means_no_opinion(tmp_path: Path) -> None:
    """With no variable and no file in either default place, the provider answers None to everything."""
    assert find_policy_file() is None
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.source is None
    assert repr(provider) == "PolicyProvider(None)"
    assert provider.decide("fs.write", "fs:write") is None
    assert provider.check(TOOLS[0], "*") is None


def test_working_directory_file_is_found(tmp_path: Path) -> None:
    """hermesos-policy.toml in the working directory is the first default."""
    path = write(tmp_path / "work", "")
    assert find_policy_file() == path


def test_user_config_file_is_found(tmp_path: Path) -> None:
    """$XDG_CONFIG_HOME/hermesos/policy.toml is the second default."""
    (tmp_path / "config" / "hermesos").mkdir(parents=True)
    path = write(tmp_path / "config" / "hermesos", "", name="policy.toml")
    assert find_policy_file() == path


def test_working_directory_wins_over_user_config(tmp_path: Path) -> None:
    """Only the first file found is read: the working directory's, before the user's."""
    (tmp_path / "config" / "hermesos").mkdir(parents=True)
    write(tmp_path / "config" / "hermesos", 'deny = ["*"]', name="policy.toml")
    path = write(tmp_path / "work", "")
    assert find_policy_file() == path


def test_relative_xdg_config_home_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative XDG_CONFIG_HOME is invalid by the XDG spec and falls back to ~/.config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "work" / "relative" / "hermesos").mkdir(parents=True)
    write(tmp_path / "work" / "relative" / "hermesos", "", name="policy.toml")
    (tmp_path / "home" / ".config" / "hermesos").mkdir(parents=True)
    path = write(tmp_path / "home" / ".config" / "hermesos", "", name="policy.toml")
    assert find_policy_file() == path


def test_environment_variable_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMESOS_POLICY names the file; the default places are not looked at."""
    write(tmp_path / "work", 'deny = ["*"]')
    path = write(tmp_path, 'grant = ["*"]', name="chosen.toml")
    monkeypatch.setenv(POLICY_ENV, str(path))
    assert find_policy_file() == path
    [provider] = hermes_policy.hermes_permission_providers()
    assert provider.decide("fs.write", "fs:write") is True


def test_empty_environment_variable_is_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HERMESOS_POLICY set to nothing is as if it were not set."""
    monkeypatch.setenv(POLICY_ENV, " ")
    path = write(tmp_path / "work", "")
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


def test_the_environment_can_be_passed_in(tmp_path: Path) -> None:
    """find_policy_file reads the mapping it is given, not os.environ; a blank value is no value."""
    path = write(tmp_path, "", name="given.toml")
    assert find_policy_file({POLICY_ENV: f"  {path}  "}, cwd=tmp_path / "nowhere") == path
    assert find_policy_file({POLICY_ENV: "", "XDG_CONFIG_HOME": str(tmp_path / "xdg")}, cwd=tmp_path / "no") is None


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


def test_working_directory_policy_applies_through_the_hook(tmp_path: Path) -> None:
    """The default file is picked up by the hook as the variable's is."""
    write(tmp_path / "work", 'grant = ["fs:*"]\ndeny = ["fs:write"]')
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


def run_load_runtime(tmp_path: Path, policy: Path) -> dict[str, object]:
    """Run load_runtime() in a fresh interpreter with HERMESOS_POLICY set, and return what it printed."""
    env = {"PATH": "", "HERMESOS_POLICY": str(policy), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


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


def test_provider_type_is_exported() -> None:
    """The provider class is public, for runtimes built by hand."""
    assert isinstance(parse_policy(""), PolicyProvider)
