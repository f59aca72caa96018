"""A broken ``[servers.x]`` entry costs local calls nothing: its failure is remembered, through the real ``hermesos``.

Before, a server that could not be started or listed was started again at
every load, and every command is a new process: with one broken entry, ``hermesos
call math.eval`` took 0.9 s instead of 0.2 s (a program that does not exist),
7.7 s (one that never answers, ``startup_timeout = 5``) or 31 s (one that
answers garbage, the default ``startup_timeout``), and said nothing of why.

The broken server (``failing_server.py``) writes a file named after its pid
each time it starts, so a test says exactly how many times a command started it.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import mount_servers, parse_config
from hermes_mcp._config import RETRY_AFTER_MAX, ServerConfig
from hermes_mcp._remembered import RECORD_MAX, FailedServer, recall, remember

from hermes_core import InvalidDefinitionError

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "failing_server.py")
MISSING = "no-such-mcp-server-anywhere"

#: What each way of failing says (the start of what follows the server's name), and its entry's extra keys.
KINDS: dict[str, tuple[str, str]] = {
    "absent": (f'could not be started: there is no program "{MISSING}" (check command and PATH)', ""),
    "exits": (
        "closed the connection while starting (it exited, or is not an MCP server); its stderr:  [31mexiting on "
        "purpose [0m",
        "",
    ),
    "hangs": ("did not start and list its tools within 2 seconds", "startup_timeout = 2\n"),
    "garbage": ("did not start and list its tools within 2 seconds", "startup_timeout = 2\n"),
}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Workspace:
    """A configuration naming the broken server, its cache directory, and the marks of each of its starts."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "mcp.toml"
        self.cache = root / "cache"
        self.record = self.cache / "broken.failed.json"
        self.marks = root / "marks"
        self.marks.mkdir()
        self.mode = root / "mode"
        self.vars = {
            "HERMESOS_MCP_CONFIG": str(self.config),
            "HERMESOS_MCP_CACHE_DIR": str(self.cache),
            "HERMESOS_MCP_REFRESH": "",
            "XDG_CONFIG_HOME": str(root / "config"),
            "HERMESOS_POLICY": "",
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "hermesos-fs",
        }

    def write(self, kind: str, extra: str = "", top: str = "") -> None:
        """The broken server's entry, failing as *kind* says (``ok``: it works), with *extra* keys and *top* lines."""
        if kind == "absent":
            entry = f"[servers.broken]\ncommand = {json.dumps(MISSING)}\n"
        else:
            self.mode.write_text(kind)
            entry = (
                f"[servers.broken]\ncommand = {json.dumps(sys.executable)}\n"
                f"args = [{json.dumps(SERVER)}, {json.dumps(str(self.mode))}, {json.dumps(str(self.marks))}]\n"
            )
        self.config.write_text(f"{top}\n{entry}{KINDS.get(kind, ('', ''))[1]}{extra}")

    def starts(self) -> int:
        """How many times the broken server was started so far."""
        return len(list(self.marks.iterdir()))

    def run(self, *args: str, python: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[str]:
        """``hermesos ARGS``, in this workspace, with *env* set; *python*: options of the interpreter."""
        return subprocess.run(
            [sys.executable, *python, "-m", "hermes_core", *args],
            env={**os.environ, **self.vars, **env},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def call(self, **env: str) -> subprocess.CompletedProcess[str]:
        """``hermesos call math.eval``: a local tool; it must answer 42 whatever the broken server does."""
        done = self.run("call", "math.eval", '{"expression": "6 * 7"}', **env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == 42
        return done

    def failed_at(self) -> float:
        record: dict[str, Any] = json.loads(self.record.read_text())
        return float(record["failed_at"])


def _said(stderr: str) -> list[str]:
    """The lines hermesos-mcp said on stderr (not the clock's lines of hermesos, which a busy machine may print)."""
    return [line for line in stderr.splitlines() if line.startswith("hermesos-mcp:")]


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Workspace]:
    made = Workspace(tmp_path)
    yield made
    deadline = time.monotonic() + 60
    left = {int(path.name) for path in made.marks.iterdir()}
    while (left := {pid for pid in left if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"server processes outlived the test: {sorted(left)}"


# -- through hermesos ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind",
    ["absent", "exits", pytest.param("hangs", marks=pytest.mark.slow), pytest.param("garbage", marks=pytest.mark.slow)],
)
def test_a_broken_server_costs_one_command_and_is_left_alone_by_the_next(work: Workspace, kind: str) -> None:
    work.write(kind)
    first = work.call()
    assert work.starts() == (0 if kind == "absent" else 1)
    (line,) = _said(first.stderr)  # said once, on one line, by the command that found it
    assert line.startswith(f'hermesos-mcp: MCP server "broken" {KINDS[kind][0]}; its tools are left out, and it is not')
    assert "\x1b" not in first.stderr  # the server's escape sequences are shown as spaces, never obeyed
    failed_at = work.failed_at()
    until = time.strftime("%H:%M:%S", time.localtime(failed_at + 60))
    assert line.endswith(
        f"not started again until {until} (retry_after = 60 s; 0 turns this off): fix its [servers.broken] entry in "
        f"\"{work.config}\", which is tried at once when changed, or try it now with 'hermesos check' (or any "
        "command with HERMESOS_MCP_REFRESH=1)"
    )

    second = work.call()
    assert work.starts() == (0 if kind == "absent" else 1)  # not started again
    assert work.failed_at() == failed_at  # nor listed: its record is as the first command wrote it
    assert _said(second.stderr) == []
    assert "broken" not in second.stderr


def test_a_call_during_the_window_imports_nothing_of_the_servers(work: Workspace) -> None:
    """What a local call pays for the broken entry, without a clock: no process, and not the MCP SDK's import."""
    work.write("exits")
    imports = []
    for _ in range(2):
        done = work.run("call", "math.eval", '{"expression": "6 * 7"}', python=("-X", "importtime"))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == 42
        imports.append([line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "import time:" in line])
    first, second = imports
    assert "mcp.client" in first  # the control: finding the failure took the MCP SDK (about a second)
    assert "hermes_mcp._remembered" in second  # the memory was read, and nothing else was needed:
    assert [name for name in second if name == "mcp" or name.startswith(("mcp.", "hermes_mcp._session"))] == []
    assert work.starts() == 1


def test_the_failure_is_forgotten_once_retry_after_has_passed(work: Workspace) -> None:
    work.write("exits", top="retry_after = 0.5")  # the file's, for every server without its own
    first = work.call()
    assert work.starts() == 1
    assert "(retry_after = 0.5 s;" in _said(first.stderr)[0]
    time.sleep(0.6)  # the failure was written before the command ended: its window of 0.5 s is over
    second = work.call()
    assert work.starts() == 2  # started again, and said again
    assert len(_said(second.stderr)) == 1


def test_a_changed_entry_is_tried_at_once(work: Workspace) -> None:
    work.write("exits")
    work.call()
    work.call()
    assert work.starts() == 1  # the control: the entry as it was is remembered
    work.write("exits", extra="timeout = 5\n")  # any key: another entry
    third = work.call()
    assert work.starts() == 2
    assert len(_said(third.stderr)) == 1


@pytest.mark.slow
def test_tools_list_and_check_say_why_and_check_tries_it_again(work: Workspace) -> None:
    work.write("exits")
    work.call()
    failed_at = time.strftime("%H:%M:%S", time.localtime(work.failed_at()))
    why = f'MCP server "broken" failed at {failed_at}: it {KINDS["exits"][0]}; its tools are left out, and it is not'

    listed = work.run("tools", "list")
    assert listed.returncode == 1, listed.stderr  # a problem
    assert "math.eval" in listed.stdout
    assert f'warning: plugin hermesos-mcp 0.1.0 (entry point "mcp" = hermes_mcp): {why}' in listed.stderr
    as_json = work.run("tools", "list", "--json")
    assert [w["message"].split(": ", 1)[1][: len(why)] for w in json.loads(as_json.stdout)["warnings"]] == [why]
    assert _said(listed.stderr) == _said(as_json.stderr) == []  # said once: by the command that found it
    assert work.starts() == 1  # neither started it

    checked = work.run("check")
    assert checked.returncode == 1
    assert why in checked.stdout
    assert 'hermesos check: hermesos-mcp: MCP server "broken": tried again (it had failed), could not start' in (
        checked.stderr
    )
    assert work.starts() == 2  # check tries it again, and it fails as the load said: one problem, not two
    assert checked.stdout.count('MCP server "broken"') == 1

    work.mode.write_text("ok")  # mended, its entry unchanged
    mended = work.run("check")
    assert 'MCP server "broken": tried again (it had failed), started in ' in mended.stderr
    assert "1 tool: its failure is forgotten, and the next load mounts its tools" in mended.stderr
    assert not work.record.exists()
    listed = work.run("tools", "list")
    assert listed.returncode == 0, listed.stderr
    assert "broken.ping" in listed.stdout
    done = work.run("call", "--grant", "mcp:broken", "broken.ping", '{"text": "back"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": "back"}


@pytest.mark.slow
def test_refresh_tries_a_remembered_server_now_and_a_server_that_starts_is_forgotten(work: Workspace) -> None:
    work.write("exits")
    work.call()
    work.mode.write_text("ok")
    work.call()
    assert work.starts() == 1  # the control: remembered
    refreshed = work.run("tools", "list", HERMESOS_MCP_REFRESH="1")
    assert refreshed.returncode == 0, refreshed.stderr
    assert "broken.ping" in refreshed.stdout
    assert work.starts() == 2
    assert not work.record.exists()


def test_retry_after_0_remembers_nothing_and_each_command_says_why(work: Workspace) -> None:
    work.write("exits", extra="retry_after = 0\n")  # the entry's own, over the file's default
    for starts in (1, 2):
        done = work.call()
        assert work.starts() == starts
        (line,) = _said(done.stderr)
        assert line.endswith(f'left out (fix its [servers.broken] entry in "{work.config}", or remove it)')
    assert not work.record.exists()


@pytest.mark.parametrize(
    "bad",
    [
        "fifo",  # the quick run's case: every shape is read in-process below, at no cost
        pytest.param("not json", marks=pytest.mark.slow),
        pytest.param("another entry's", marks=pytest.mark.slow),
        pytest.param("to come", marks=pytest.mark.slow),
        pytest.param("too large", marks=pytest.mark.slow),
    ],
)
def test_a_bad_record_is_no_record_the_server_is_tried_and_the_record_rewritten(work: Workspace, bad: str) -> None:
    work.write("exits")
    work.call()
    work.call()
    assert work.starts() == 1  # the control: the record as written holds the server back
    record = json.loads(work.record.read_text())
    if bad == "fifo":
        work.record.unlink()
        os.mkfifo(work.record)  # read, it would hang the load: refused by its type, never opened
    elif bad == "not json":
        work.record.write_text(json.dumps(record)[:40])
    elif bad == "another entry's":
        work.record.write_text(json.dumps({**record, "key": "0" * 64}))  # as a record of another entry of that name
    elif bad == "to come":  # a record that would hold the server back for a year
        work.record.write_text(json.dumps({**record, "failed_at": record["failed_at"] + 365 * 86400}))
    else:
        work.record.write_text(json.dumps({**record, "detail": "x" * RECORD_MAX}))
    done = work.call()
    assert work.starts() == 2  # no record: the server is started, as if none were there
    (line,) = _said(done.stderr)
    assert KINDS["exits"][0] in line
    rewritten = json.loads(work.record.read_text())
    assert (rewritten["key"], rewritten["detail"]) == (record["key"], KINDS["exits"][0])
    assert rewritten["failed_at"] > record["failed_at"]


# -- the record, read as input from the disk ---------------------------------------------------------------


def _server(top: str = "", **keys: Any) -> ServerConfig:
    """The entry of the broken server, with *keys* (TOML values, as written), in a file beginning with *top*."""
    entry = "".join(f"{key} = {value}\n" for key, value in keys.items())
    (server,) = parse_config(f"{top}\n[servers.broken]\ncommand = {json.dumps(MISSING)}\n{entry}").servers
    return server


def _records(directory: Path, server: ServerConfig, now: float) -> dict[str, Any]:
    """Each shape a record must not be taken for at *now*, by name: the bytes written where it goes, or a maker."""
    good = {"format": 1, "key": server.cache_key(), "server": "broken", "failed_at": now, "detail": "it broke"}

    def written(**changes: Any) -> bytes:
        return json.dumps({**good, **changes}).encode()

    return {
        "empty": b"",
        "not JSON": b"{'format': 1}",
        "not UTF-8": b'{"detail": "\xff"}',
        "a list": b"[1, 2]",
        "nested past the parser": b"[" * 15_000 + b"]" * 15_000,  # within the bound: RecursionError, not a crash
        "larger than the bound": written(detail="x" * RECORD_MAX),
        "another format": written(format=2),
        "another entry": written(key="0" * 64),
        "no key": json.dumps({k: v for k, v in good.items() if k != "key"}).encode(),
        "a time that is a boolean": written(failed_at=True),
        "a time that is text": written(failed_at=str(now)),
        "a time of 400 digits": written(failed_at=10**400),
        "a time that is not a number": b'{"format": 1, "key": "%s", "failed_at": NaN, "detail": "x"}'
        % server.cache_key().encode(),
        "a time that is infinite": b'{"format": 1, "key": "%s", "failed_at": -Infinity, "detail": "x"}'
        % server.cache_key().encode(),
        "a time to come": written(failed_at=now + 3600),
        "a time past the window": written(failed_at=now - 61),
        "a detail that is not text": written(detail=["x"]),
        "a directory": lambda path: path.mkdir(),
        "a FIFO": os.mkfifo,
        "a link to a device": lambda path: path.symlink_to("/dev/zero"),
        "a link to nothing": lambda path: path.symlink_to(directory / "nowhere"),
    }


def test_a_record_is_recalled_only_when_it_is_one_of_this_entry_within_its_window(tmp_path: Path) -> None:
    server = _server()
    failed = remember(tmp_path, server, "could not be started: \x1b[2Jit broke\r" + "!" * 5000)
    assert recall(tmp_path, server) == FailedServer("broken", failed.detail, failed.failed_at, 60.0, new=False)
    assert "\x1b" not in failed.detail  # plain: shown to a person as it is
    assert "\r" not in failed.detail
    assert len(failed.detail) == 2000  # and bounded
    assert recall(tmp_path, server, now=failed.failed_at + 59.9) is not None
    assert recall(tmp_path, server, now=failed.failed_at + 60) is None  # the window is over
    assert recall(tmp_path, _server(timeout=5)) is None  # another entry of the same name
    assert recall(tmp_path, _server(top="retry_after = 0")) is None  # no memory: no record read
    # The window is the file's as it is now (an entry's own retry_after is part of the entry: another entry).
    assert recall(tmp_path, _server(top="retry_after = 120"), now=failed.failed_at + 100) is not None
    assert recall(tmp_path, _server(top="retry_after = 10"), now=failed.failed_at + 20) is None

    now = failed.failed_at  # the time a record is read at, on the clock the code writes it with
    for name, bad in _records(tmp_path, server, now).items():
        path = tmp_path / "broken.failed.json"
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        else:
            path.unlink(missing_ok=True)
        if callable(bad):
            bad(path)
        else:
            path.write_bytes(bad)
        assert recall(tmp_path, server, now=now) is None, name
        remember(tmp_path, server, "it broke", now=now)  # written over it, if it can be (not over a directory)
        assert (recall(tmp_path, server, now=now) is None) == (name == "a directory"), name


def test_retry_after_is_read_from_the_file_and_each_entry() -> None:
    config = parse_config(
        f"""
        retry_after = 5
        [servers.a]
        command = "a"
        [servers.b]
        command = "b"
        retry_after = 0
        [servers.c]
        command = "c"
        retry_after = {RETRY_AFTER_MAX:.0f}
        """
    )
    assert [(server.name, server.retry_after) for server in config.servers] == [("a", 5.0), ("b", 0.0), ("c", 86400.0)]
    assert (config.retry_after, parse_config("").retry_after, _server().retry_after) == (5.0, 60.0, 60.0)
    for value in ("-1", "86401", '"soon"', "true", "nan", "inf"):
        with pytest.raises(InvalidDefinitionError) as caught:
            parse_config(f"retry_after = {value}", "m.toml")
        assert str(caught.value).startswith(
            'MCP configuration file "m.toml" retry_after must be a number of seconds from 0 to 86400 such as 60 (0: '
            "a server that failed is started again by the next command), got "
        )
        skipped = parse_config(f'[servers.a]\ncommand = "a"\nretry_after = {value}\n', "m.toml")
        assert skipped.servers == ()
        assert skipped.problems[0].startswith('server "a" in "m.toml" is skipped: retry_after must be a number of')


def test_mount_servers_says_which_servers_failed_and_which_were_remembered(tmp_path: Path) -> None:
    config = parse_config(f"[servers.broken]\ncommand = {json.dumps(MISSING)}\n", "m.toml")
    first = mount_servers(config, cache_directory=tmp_path)
    (failed,) = first.failed
    assert (failed.server, failed.new, failed.retry_after) == ("broken", True, 60.0)
    assert first.problems == (failed.problem("m.toml"),)
    assert first.problems[0].startswith(f'MCP server "broken" {KINDS["absent"][0]}; its tools are left out, and it')
    second = mount_servers(config, cache_directory=tmp_path)
    (remembered,) = second.failed
    assert (remembered.new, remembered.failed_at, remembered.detail) == (False, failed.failed_at, failed.detail)
    at = time.strftime("%H:%M:%S", time.localtime(failed.failed_at))
    assert second.problems[0].startswith(f'MCP server "broken" failed at {at}: it {KINDS["absent"][0]}; its tools')
    assert math.isclose(remembered.until, failed.failed_at + 60)
    third = mount_servers(config, refresh=True, cache_directory=tmp_path)  # HERMESOS_MCP_REFRESH: tried again
    assert third.failed[0].new
    assert third.failed[0].failed_at > failed.failed_at
