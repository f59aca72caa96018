"""A policy's rules against the tools loaded: a selector for no tool is a warning, one for a tool misnamed is refused.

An attack run found ``[tools."fs_write"]``, ``[tools."FS.WRITE"]`` and
``[tools."fs"]`` accepted without a word: their ``deny`` never applied to
``fs.write``, and ``hermesos check`` said 0 problems. Each is reproduced
here through the real ``hermesos`` command (check, call, tools list), with
hermesos-fs loaded, beside the policy that names the tool rightly; then the
check itself, in this process (``PolicyProvider.check_tools``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hermes_policy import POLICY_ENV, parse_policy

from hermes_core import InvalidDefinitionError, Tool, define_tool
from hermes_core import schema as s

HERMES = Path(sys.executable).with_name("hermesos")
WRITE = ["call", "fs.write", '{"path": "a.txt", "content": "x"}', "--grant", "fs:write"]


def hermesos(tmp_path: Path, policy: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """The installed command in *tmp_path*: hermesos-fs rooted at root/, the policy *policy* in etc/, nothing else."""
    (tmp_path / "root").mkdir(exist_ok=True)
    (tmp_path / "etc").mkdir(exist_ok=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    path = tmp_path / "etc" / "policy.toml"
    path.write_text(textwrap.dedent(policy).lstrip(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / "config"),
        HERMESOS_FS_ROOT=str(tmp_path / "root"),
        **{POLICY_ENV: str(path)},
    )
    return subprocess.run(
        [str(HERMES), *argv], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120
    )


def errors(done: subprocess.CompletedProcess[str], label: str) -> list[str]:
    """The lines of *done*'s output and error that start with *label* (``problem:``, ``warning:``, ``error:``)."""
    return [line for line in (done.stdout + done.stderr).splitlines() if line.startswith(label)]


# -- through the command: the attack's selectors, refused ---------------------------------------------------

MISNAMED = {
    "fs_write": (
        "tools.fs_write matches none of the loaded tools, but differs only in case or separators from the tool "
        '"fs.write", so its deny list would never apply to it; write [tools."fs.write"]'
    ),
    "FS.WRITE": (
        'tools."FS.WRITE" matches none of the loaded tools, but differs only in case or separators from the tool '
        '"fs.write", so its deny list would never apply to it; write [tools."fs.write"]'
    ),
    "fs": (
        'tools.fs matches none of the loaded tools, but names the group of 6 loaded tools under "fs" (fs.delete, '
        'fs.list, fs.mkdir, ...): a selector without ".*" names one tool, so its deny list would apply to none of '
        'them; write [tools."fs.*"] for every tool under fs'
    ),
}


def test_the_selector_that_names_the_tool_denies_and_check_is_clean(tmp_path: Path) -> None:
    """The control: the tool named as it is, its deny applies."""
    policy = '[tools."fs.write"]\ndeny = ["fs:write"]\n'
    checked = hermesos(tmp_path, policy, "check")
    assert (checked.returncode, checked.stdout.splitlines()[-1]) == (0, "4 plugins, 4 healthy, 0 problems")
    called = hermesos(tmp_path, policy, *WRITE)
    assert called.returncode == 5, called.stderr
    assert called.stderr.startswith("PERMISSION_DENIED: ")
    assert not (tmp_path / "root" / "a.txt").exists()


@pytest.mark.parametrize("selector", list(MISNAMED))
def test_a_selector_naming_the_tool_in_another_form_is_refused_by_check_and_call(tmp_path: Path, selector: str) -> None:
    policy = f'[tools."{selector}"]\ndeny = ["fs:write"]\n'
    checked = hermesos(tmp_path, policy, "check")
    assert checked.returncode == 1
    [problem] = errors(checked, "problem: ")
    assert problem.startswith('problem: plugin hermesos-policy 0.2.0 (entry point "policy" = hermes_policy): ')
    assert f'policy file "{tmp_path / "etc" / "policy.toml"}", line 1: {MISNAMED[selector]}' in problem
    assert checked.stdout.splitlines()[-1] == "4 plugins, 3 healthy, 1 problem"
    # The deny it was meant for does not apply, so nothing runs: the policy's plugin is broken.
    called = hermesos(tmp_path, policy, *WRITE)
    assert (called.returncode, called.stdout) == (1, "")
    [error] = errors(called, "error: ")
    assert error.startswith("error: broken plugin hermesos-policy 0.2.0")
    assert MISNAMED[selector] in error
    assert not (tmp_path / "root" / "a.txt").exists()


def test_a_group_written_in_another_form_and_a_tool_with_a_star_are_refused(tmp_path: Path) -> None:
    checked = hermesos(tmp_path, '[tools."FS.*"]\ndeny = ["fs:write"]\n', "check")
    assert checked.returncode == 1
    assert 'differs only in case or separators from "fs.*", which matches 6 of them' in errors(checked, "problem:")[0]
    checked = hermesos(tmp_path, '[tools."fs.write.*"]\ndeny = ["fs:write"]\n', "check")
    assert checked.returncode == 1
    assert (
        '".*" selects the tools under "fs.write", and there are none, but "fs.write" is a loaded tool, so its deny '
        'list would never apply to it; write [tools."fs.write"] for the tool itself'
    ) in errors(checked, "problem:")[0]


# -- through the command: a selector for no tool, warned of -------------------------------------------------


def test_a_selector_for_no_loaded_tool_is_a_warning_of_check_tools_list_and_call(tmp_path: Path) -> None:
    policy = '[tools."fs.wirte"]\ndeny = ["fs:write"]\n'
    said = (
        f'warning: plugin hermesos-policy 0.2.0 (entry point "policy" = hermes_policy): policy file '
        f'"{tmp_path / "etc" / "policy.toml"}", line 1: tools."fs.wirte" matches none of the loaded tools, so its '
        'rules apply to nothing; did you mean "fs.write"'
    )
    checked = hermesos(tmp_path, policy, "check")
    assert checked.returncode == 1
    [warning] = errors(checked, "warning: ")
    assert warning.startswith(said)
    assert checked.stdout.splitlines()[-1] == "4 plugins, 4 healthy, 1 problem"
    listed = hermesos(tmp_path, policy, "tools", "list")
    assert listed.returncode == 1
    assert "fs.write" in listed.stdout
    assert errors(listed, "warning: ")[0].startswith(said)
    # The call is made (the plugin is loaded), and what the policy does not do is said first.
    called = hermesos(tmp_path, policy, *WRITE)
    assert called.returncode == 0, called.stderr
    assert called.stderr.startswith(said)
    assert (tmp_path / "root" / "a.txt").read_text() == "x"


def test_a_selector_for_a_plugin_not_installed_says_so(tmp_path: Path) -> None:
    checked = hermesos(tmp_path, '[tools."shell.run"]\ndeny = ["shell:run"]\n', "check")
    assert checked.returncode == 1
    [warning] = errors(checked, "warning: ")
    assert warning.endswith(
        'tools."shell.run" matches none of the loaded tools, so its rules apply to nothing; if it is for a plugin '
        "that is not installed, this stays a warning until it is ('hermesos tools list' lists the loaded tools)."
    )


# -- in this process: PolicyProvider.check_tools --------------------------------------------------------------


def tool(name: str, *permissions: str) -> Tool:
    return define_tool(
        name=name,
        description="A test tool.",
        version="1.0.0",
        input=s.object({}),
        permissions=permissions,
        handler=lambda args: name,
    )


TOOLS = [
    tool("fs.write", "fs:write"),
    tool("fs.read", "fs:read"),
    tool("fs.dir.list", "fs:read"),
    tool("db.export", "db:read_only"),
]


def checked(policy: str) -> list[str]:
    return parse_policy(textwrap.dedent(policy).lstrip(), "policy.toml").check_tools(TOOLS)


def refusal(policy: str) -> str:
    with pytest.raises(InvalidDefinitionError) as caught:
        checked(policy)
    return str(caught.value)


def test_rules_that_apply_to_the_tools_say_nothing() -> None:
    assert (
        checked(
            """
        grant = ["fs:read"]
        deny = ["shell:*", "net:fetch", "*"]   # for tools that are not there: kept, and not a warning
        [tools."fs.write"]
        ask = ["fs:write"]
        [tools."fs.*"]
        deny = ["fs:*"]
        [tools."fs.dir.*"]
        grant = ["fs:read"]
        """
        )
        == []
    )
    assert checked("") == []


@pytest.mark.parametrize(
    ("selector", "meant"),
    [
        ("fs_write", 'from the tool "fs.write"'),
        ("FS.Write", 'from the tool "fs.write"'),
        ("fs-write", 'from the tool "fs.write"'),
        ("db_export", 'from the tool "db.export"'),
        ("fs.dir", 'names the group of 1 loaded tools under "fs.dir" (fs.dir.list)'),
        ("FS", 'names the group of 3 loaded tools under "fs" (fs.dir.list, fs.read, fs.write)'),
        ("FS.*", 'from "fs.*", which matches 3 of them'),
        ("fs_dir.*", 'from "fs.dir.*", which matches 1 of them'),
        ("fs.read.*", '".*" selects the tools under "fs.read", and there are none, but "fs.read" is a loaded tool'),
    ],
)
def test_a_selector_naming_a_tool_or_a_group_in_another_form_is_refused(selector: str, meant: str) -> None:
    said = refusal(f'[tools."{selector}"]\ndeny = ["fs:write"]\nask = ["fs:read"]\n')
    assert said.startswith('policy file "policy.toml", line 1: tools.')
    assert meant in said
    assert "so its deny and ask lists would" in said


def test_every_refusal_is_counted_and_the_first_is_said() -> None:
    said = refusal('[tools."fs_write"]\ndeny = ["fs:write"]\n\n[tools."FS"]\ndeny = ["fs:write"]\n')
    assert said.startswith('policy file "policy.toml", line 1: tools.fs_write ')
    assert said.endswith("(the file has 1 more problem, on line 4).")


def test_a_pattern_a_tool_declares_in_another_form_is_refused_and_a_close_one_warned_of() -> None:
    said = refusal('[tools."db.export"]\ndeny = ["db:read-only"]\n')
    assert said == (
        'policy file "policy.toml", line 2: tools."db.export".deny[0] is "db:read-only", which no tool it applies '
        'to declares, but differs only in separators from "db:read_only", so it would never apply; write '
        '"db:read_only".'
    )
    assert checked('[tools."fs.write"]\ndeny = ["fs:wirte"]\n') == [
        'policy file "policy.toml", line 2: tools."fs.write".deny[0] is "fs:wirte", which no tool it applies to '
        'declares, so it never applies; did you mean "fs:write"?'
    ]
    assert checked('ask = ["fss:*"]\n') == [
        'policy file "policy.toml", line 1: ask[0] is "fss:*", which no tool it applies to declares, so it never '
        'applies; did you mean "fs:*"?'
    ]


def test_selectors_for_no_tool_are_warned_of_ten_by_ten_with_the_closest_names() -> None:
    policy = "".join(f'[tools."shell.t{i}"]\ndeny = ["shell:run"]\n' for i in range(25))
    warnings = checked('[tools."fs.wirte"]\ndeny = ["fs:write"]\n' + policy)
    assert len(warnings) == 11
    assert warnings[0] == (
        'policy file "policy.toml", line 1: tools."fs.wirte" matches none of the loaded tools, so its rules apply '
        'to nothing; did you mean "fs.write" or "fs.read" or "fs.dir.list"?'
    )
    assert warnings[1].startswith('policy file "policy.toml", line 3: tools."shell.t0" matches none')
    assert warnings[10] == (
        'policy file "policy.toml" has 16 more rules that apply to nothing, on lines 21, 23, 25, 27, 29, 31, 33, '
        "35, 37, 39, 41, 43, 45, 47, 49, 51; 'hermesos check' lists the first ten, and 'hermesos tools list' the "
        "loaded tools"
    )


def test_a_group_for_no_tool_suggests_the_groups_there_are() -> None:
    assert checked('[tools."fss.*"]\ndeny = ["fs:write"]\n') == [
        'policy file "policy.toml", line 1: tools."fss.*" matches none of the loaded tools (no name starts with '
        '"fss."), so its rules apply to nothing; did you mean "fs.*"?'
    ]


def test_in_a_large_file_warnings_name_the_table_without_walking_the_file_for_its_line() -> None:
    policy = "".join(f'[tools."shell.t{i}"]\ndeny = ["shell:run"]\n' for i in range(2000))
    assert len(policy) > 64 * 1024
    warnings = checked(policy)
    assert len(warnings) == 11
    assert warnings[0].startswith('policy file "policy.toml": tools."shell.t0" matches none of the loaded tools')
    assert warnings[10].startswith(
        'policy file "policy.toml" has 1990 more rules that apply to nothing, at tools."shell.t10", '
        'tools."shell.t11", tools."shell.t12", ...;'
    )
