"""The audit file: every permission decision as a JSON line, guarded like the policy file.

Through a runtime from ``load_runtime()`` and the real ``hermesos`` command,
each in a fresh interpreter with the settings of the test and nothing else;
and the checks of the file itself, in this process, through the plugin's hook
and ``set_audit_file``, each test leaving the ``hermes_core.audit`` logger as
it found it.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_policy
import pytest
from hermes_policy import AUDIT_ENV, AUDIT_FIELDS, POLICY_ENV, find_audit_file, set_audit_file

from hermes_core import InvalidDefinitionError, Runtime, define_tool
from hermes_core import schema as s

HERMES = Path(sys.executable).with_name("hermesos")
AUDIT = logging.getLogger("hermes_core.audit")
POLICY = """\
grant = ["fs:read"]
ask = ["fs:write"]

[tools."fs.delete"]
deny = ["fs:write"]
"""


@pytest.fixture(autouse=True)
def audit_logger_as_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No policy or audit setting from outside; the audit logger as it was, after each test."""
    for name in (POLICY_ENV, AUDIT_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    before = (AUDIT.level, AUDIT.propagate)
    yield
    set_audit_file(None)
    assert (AUDIT.level, AUDIT.propagate, audit_files()) == (*before, [])


def audit_files() -> list[logging.Handler]:
    """The plugin's handlers on the audit logger (pytest puts its own on a logger that does not propagate)."""
    return [handler for handler in AUDIT.handlers if type(handler).__name__ == "AuditFile"]


def lines(path: Path) -> list[dict[str, Any]]:
    """The audit file's records, each line checked to be one JSON object of the audit fields, in order."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert list(record) == list(AUDIT_FIELDS)
        assert isinstance(record["time"], float)
        records.append(record)
    return records


def decisions(path: Path) -> list[tuple[str, str, str, str]]:
    """(tool, permission, decision, source) of each record of the audit file."""
    return [(r["tool"], r["permission"], r["decision"], r["source"]) for r in lines(path)]


def environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    """The environment of a fresh interpreter: HOME beside the work, no hermesos setting but *settings*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME"))}
    (tmp_path / "home").mkdir(exist_ok=True)
    env.update({"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / "config"), **settings})
    return env


def hermesos(tmp_path: Path, *argv: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """The installed ``hermesos`` command, run in *tmp_path*."""
    env = environment(tmp_path, **settings)
    return subprocess.run(
        [str(HERMES), *argv], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=120
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """``root/`` (the file tools' root), ``etc/policy.toml`` (POLICY) and ``log/`` (for the audit file), apart."""
    for name in ("root", "etc", "log"):
        (tmp_path / name).mkdir()
    (tmp_path / "etc" / "policy.toml").write_text(POLICY, encoding="utf-8")
    return tmp_path


def settings(work: Path, audit: Path) -> dict[str, str]:
    return {
        "HERMESOS_FS_ROOT": str(work / "root"),
        POLICY_ENV: str(work / "etc" / "policy.toml"),
        AUDIT_ENV: str(audit),
    }


# -- every decision, through a runtime from load_runtime() -----------------------------------------

_CALLS = """
import json
from hermes_core import Approval, PermissionDeniedError, Runtime, load_runtime

def attempt(runtime, name, args):
    try:
        runtime.call_sync(name, args)
    except PermissionDeniedError as error:
        return error.reason
    return "done"

loaded = load_runtime()
answers = [
    attempt(loaded, "fs.list", {}),  # granted by the policy
    attempt(loaded, "fs.delete", {"path": "notes.txt"}),  # denied by it
    attempt(loaded, "fs.write", {"path": "a.txt", "content": "SECRET-1"}),  # asked, and no approver
]

def approver(request):
    return Approval.once() if request.tool.name == "fs.write" else Approval.decline("not now")

asking = Runtime(
    loaded.tools.values(), grants=loaded.grants, providers=loaded.providers, schemas=loaded.schemas,
    approver=approver,
)
answers.append(attempt(asking, "fs.write", {"path": "a.txt", "content": "SECRET-2"}))  # asked, approved
answers.append(attempt(asking, "fs.mkdir", {"path": "SECRET-3"}))  # asked, declined
print(json.dumps(answers))
"""


def test_every_decision_through_a_loaded_runtime_is_a_json_line_of_the_audit_file(work: Path) -> None:
    audit = work / "log" / "audit.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", _CALLS],
        cwd=work,
        env=environment(work, **settings(work, audit)),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == ["done", "not_granted", "no_approver", "done", "declined"]
    policy = "hermes_policy.PolicyProvider"
    assert decisions(audit) == [
        ("fs.list", "fs:read", "granted", policy),
        ("fs.delete", "fs:write", "denied", policy),
        ("fs.write", "fs:write", "asked", policy),
        ("fs.write", "fs:write", "denied", "no approver"),
        ("fs.write", "fs:write", "asked", policy),
        ("fs.write", "fs:write", "approved", "approver"),
        ("fs.mkdir", "fs:write", "asked", policy),
        ("fs.mkdir", "fs:write", "declined", "approver"),
    ]
    records = lines(audit)
    # An ask and its answer are one call; each call has its own id.
    ids = [record["call_id"] for record in records]
    assert (ids[2], ids[4], ids[6]) == (ids[3], ids[5], ids[7])
    assert len({ids[0], ids[1], ids[2], ids[4], ids[6]}) == 5
    assert "SECRET" not in audit.read_text(encoding="utf-8")  # never the input
    assert stat.S_IMODE(audit.stat().st_mode) == 0o600
    assert (work / "root" / "a.txt").read_text(encoding="utf-8") == "SECRET-2"  # the approved call ran


def test_the_real_command_appends_every_decision_to_the_audit_file_and_prints_no_record(work: Path) -> None:
    audit = work / "log" / "audit.jsonl"
    audit.write_text('{"earlier": "line"}\n', encoding="utf-8")
    audit.chmod(0o640)
    env = settings(work, audit)
    listed = hermesos(work, "call", "fs.list", "{}", **env)
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == ""  # the records go to the file, not to stderr
    denied = hermesos(work, "call", "fs.delete", json.dumps({"path": "x"}), "--grant", "fs:*", **env)
    assert denied.returncode == 5, denied.stderr
    write = json.dumps({"path": "a.txt", "content": "SECRET"})
    approved = hermesos(work, "call", "fs.write", write, "--approve", **env)
    assert approved.returncode == 0, approved.stderr
    refused = hermesos(work, "call", "fs.write", write, **env)  # not on a terminal, and no --approve
    assert refused.returncode == 5, refused.stderr
    first, *rest = audit.read_text(encoding="utf-8").splitlines()
    assert first == '{"earlier": "line"}'  # appended, never truncated
    records = [json.loads(line) for line in rest]
    assert [(r["tool"], r["decision"], r["source"]) for r in records] == [
        ("fs.list", "granted", "hermes_policy.PolicyProvider"),
        ("fs.delete", "denied", "hermes_policy.PolicyProvider"),
        ("fs.write", "asked", "hermes_policy.PolicyProvider"),
        ("fs.write", "approved", "approver"),
        ("fs.write", "asked", "hermes_policy.PolicyProvider"),
        ("fs.write", "denied", "no approver"),
    ]
    assert "SECRET" not in "\n".join(rest)
    assert stat.S_IMODE(audit.stat().st_mode) == 0o640  # an existing file keeps its permissions


# -- guarded like the policy file ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["in the root", "under it", "through a link"])
def test_an_audit_file_a_file_tool_could_write_stops_the_command_naming_both(work: Path, where: str) -> None:
    root = work / "root"
    if where == "in the root":
        audit = given = root / "audit.jsonl"
    elif where == "under it":
        (root / "logs").mkdir()
        audit = given = root / "logs" / "audit.jsonl"
    else:  # a name outside the root for a file inside it
        audit = root / "audit.jsonl"
        audit.touch()
        given = work / "log" / "audit.jsonl"
        given.symlink_to(audit)
    done = hermesos(work, "call", "fs.list", "{}", **settings(work, given))
    assert done.returncode == 1
    assert done.stdout == ""
    [line, policy] = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert line.startswith("error: plugin hermesos-fs ")
    assert ") not loaded: " in line  # refused for its root, a setting's value: not broken
    shown = f'"{given}"' if given == audit else f'"{given}" (that is, "{audit}")'
    assert (
        f'setting HERMESOS_FS_ROOT names "{root}" as a directory its tools may write, but it contains {shown}, '
    ) in line
    assert "plugin hermesos-policy" in line
    # The policy plugin is not loaded either: the record it keeps may have been changed already.
    assert policy.startswith("error: plugin hermesos-policy ")
    assert f'hermes_guarded_paths names "{given}", which "{root}" meets, a directory the tools of plugin ' in policy


def test_the_guarded_paths_name_the_audit_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert str(tmp_path / "a.jsonl") not in hermes_policy.hermes_guarded_paths()
    monkeypatch.setenv(AUDIT_ENV, str(tmp_path / "a.jsonl"))
    assert str(tmp_path / "a.jsonl") in hermes_policy.hermes_guarded_paths()


# -- the file, in this process ---------------------------------------------------------------------


def unit(permission: str = "unit:run") -> Runtime:
    run = define_tool(
        name="unit.run", description="Run.", version="1.0.0", input=s.object({}), permissions=[permission], handler=dict
    )
    return Runtime([run], grants=[permission])


def test_the_hook_opens_the_file_and_an_unset_setting_closes_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv(AUDIT_ENV, str(audit))
    hermes_policy.hermes_permission_providers()
    hermes_policy.hermes_permission_providers()  # a second load of the same file: the same handler
    [handler] = audit_files()
    assert (AUDIT.level, AUDIT.propagate) == (logging.INFO, False)
    unit().call_sync("unit.run", {})
    assert decisions(audit) == [("unit.run", "unit:run", "granted", "grants")]
    monkeypatch.delenv(AUDIT_ENV)
    hermes_policy.hermes_permission_providers()
    assert handler not in AUDIT.handlers
    assert (AUDIT.level, AUDIT.propagate) == (logging.NOTSET, True)
    unit().call_sync("unit.run", {})
    assert len(lines(audit)) == 1


def test_a_file_moved_away_is_opened_anew_at_the_next_load(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    set_audit_file(audit)
    unit().call_sync("unit.run", {})
    audit.rename(tmp_path / "audit.jsonl.1")  # as a log rotation does
    set_audit_file(audit)
    unit().call_sync("unit.run", {})
    assert len(lines(tmp_path / "audit.jsonl.1")) == len(lines(audit)) == 1


def test_a_level_the_application_set_is_left_alone(tmp_path: Path) -> None:
    AUDIT.setLevel(logging.DEBUG)
    try:
        set_audit_file(tmp_path / "audit.jsonl")
        assert (AUDIT.level, AUDIT.propagate) == (logging.DEBUG, True)
        set_audit_file(None)
        assert AUDIT.level == logging.DEBUG
    finally:
        AUDIT.setLevel(logging.NOTSET)


def test_the_path_is_absolute_and_a_tilde_is_the_home_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert find_audit_file({AUDIT_ENV: "~/a.jsonl"}) == str(tmp_path / "a.jsonl")
    assert find_audit_file({AUDIT_ENV: "logs/a.jsonl"}) == str(tmp_path / "logs" / "a.jsonl")
    assert find_audit_file({AUDIT_ENV: "  "}) is None
    assert find_audit_file({}) is None


def refusal(monkeypatch: pytest.MonkeyPatch, path: Path) -> str:
    """The load error of the hook for HERMESOS_POLICY_AUDIT naming *path*."""
    monkeypatch.setenv(AUDIT_ENV, str(path))
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_policy.hermes_permission_providers()
    return str(caught.value)


def test_a_directory_is_refused_naming_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert refusal(monkeypatch, tmp_path) == (
        f'setting HERMESOS_POLICY_AUDIT names "{tmp_path}", which is a directory; name a file in it, such as '
        f'"{tmp_path / "audit.jsonl"}".'
    )


def test_a_missing_directory_is_refused_and_nothing_is_made(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    audit = tmp_path / "logs" / "audit.jsonl"
    assert refusal(monkeypatch, audit) == (
        f'setting HERMESOS_POLICY_AUDIT names "{audit}", whose directory "{tmp_path / "logs"}" does not exist; '
        "create it, or name a file in another."
    )
    assert not (tmp_path / "logs").exists()


def test_a_fifo_is_refused_without_waiting_for_a_reader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    assert refusal(monkeypatch, tmp_path / "fifo") == (
        f'setting HERMESOS_POLICY_AUDIT names "{tmp_path / "fifo"}", which is a FIFO (named pipe), not a regular '
        "file; an audit file is a regular file records are appended to."
    )


def test_a_second_hard_link_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").touch()
    os.link(tmp_path / "audit.jsonl", tmp_path / "other.jsonl")
    assert refusal(monkeypatch, tmp_path / "audit.jsonl") == (
        f'setting HERMESOS_POLICY_AUDIT names "{tmp_path / "audit.jsonl"}", which has 2 hard links: a tool could '
        "rewrite the audit trail through another one; keep a single link to the file."
    )


def test_a_link_leading_nowhere_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").symlink_to(tmp_path / "nowhere" / "audit.jsonl")
    assert "a symbolic link leading nowhere; name the audit file itself, or fix the link." in refusal(
        monkeypatch, tmp_path / "audit.jsonl"
    )


def test_a_file_under_a_file_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "plain").touch()
    assert refusal(monkeypatch, tmp_path / "plain" / "audit.jsonl") == (
        f'setting HERMESOS_POLICY_AUDIT names "{tmp_path / "plain" / "audit.jsonl"}", which could not be looked up '
        "(Not a directory); fix the path or its directories' permissions."
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_a_file_this_user_may_not_write_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "audit.jsonl").touch(mode=0o400)
    assert refusal(monkeypatch, tmp_path / "audit.jsonl") == (
        f'setting HERMESOS_POLICY_AUDIT names "{tmp_path / "audit.jsonl"}", which could not be opened for appending '
        "(Permission denied); name a file this user may write, or unset HERMESOS_POLICY_AUDIT."
    )


def test_a_refused_file_keeps_the_one_in_use(tmp_path: Path) -> None:
    set_audit_file(tmp_path / "audit.jsonl")
    with pytest.raises(InvalidDefinitionError, match=r"^set_audit_file\(\): path names .* which is a directory"):
        set_audit_file(tmp_path)
    unit().call_sync("unit.run", {})
    assert len(lines(tmp_path / "audit.jsonl")) == 1
