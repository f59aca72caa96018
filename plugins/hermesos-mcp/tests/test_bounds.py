"""What a hostile MCP server can cost hermesos: bounded in bytes, in processes, and in what one bad listing breaks.

Each test reproduces an attack as it was made, with a real server
(``hostile_server.py``, raw JSON-RPC over stdio; ``mcp_test_server.py`` over
HTTP) and, where it matters, a real ``hermesos`` process whose peak memory is
read from the kernel (``os.wait4``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hermes_mcp import ServerConfig, mount_servers, parse_config
from hermes_mcp._mount import drop_clashes
from hermes_mcp._session import call_tool, connect
from hermes_mcp._streams import StderrTail

from hermes_core import Runtime, Tool, ToolFailedError, define_tool
from hermes_core import schema as s

HERE = Path(__file__).resolve().parent
HOSTILE = str(HERE / "hostile_server.py")
TEST_SERVER = str(HERE / "mcp_test_server.py")
HERMESOS = [sys.executable, "-m", "hermes_core"]
MIB = 1024 * 1024


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Env:
    """A configuration file of hostile servers, a cache directory, and the pids the servers wrote."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pids = root / "pids"
        self.pids.mkdir()
        self.config = root / "mcp.toml"
        self.vars = {
            "HERMESOS_MCP_CONFIG": str(self.config),
            "HERMESOS_MCP_CACHE_DIR": str(root / "cache"),
            "HERMESOS_MCP_REFRESH": "",
            "XDG_CONFIG_HOME": str(root / "config"),
            "HERMESOS_POLICY": "",
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "",
        }

    def hostile(self, name: str, mode: str, **extra: object) -> str:
        lines = [
            f"[servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f"args = [{json.dumps(HOSTILE)}, {json.dumps(mode)}, {json.dumps(str(self.pids))}]",
            *(f"{key} = {json.dumps(value)}" for key, value in extra.items()),
        ]
        return "\n".join(lines) + "\n"

    def write(self, *entries: str) -> None:
        self.config.write_text("\n".join(entries))

    def started(self) -> set[int]:
        return {int(path.name) for path in self.pids.iterdir()}

    def hermesos(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*HERMESOS, *args],
            env={**os.environ, **self.vars},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    made = Env(tmp_path)
    for key, value in made.vars.items():
        monkeypatch.setenv(key, value)
    yield made
    deadline = time.monotonic() + 60
    while (left := {pid for pid in made.started() if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:  # a failure, but the next tests should not pay for it
        os.kill(pid, signal.SIGKILL)
    assert not left, f"server processes outlived the test: {sorted(left)}"


# Peak memory is read from a small wrapper that starts the command: on Linux, a child started from
# a large process (this one, late in a run) reports that process's peak as its own (vfork, then exec).
PEAK = (
    "import resource, subprocess, sys\n"
    "status = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n"
)


def _run_measured(env: Env, *args: str) -> tuple[int, str, str, int]:
    """Run ``hermesos *args*`` under the wrapper; its status, output, errors and peak memory in bytes."""
    peak = env.root / "peak"
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(peak), *HERMESOS, *args],
        env={**os.environ, **env.vars},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr, int(peak.read_text()) * 1024


# -- a result larger than max_result_bytes ---------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
def test_a_400_mb_result_fails_the_call_naming_the_limit_and_memory_stays_bounded(env: Env) -> None:
    env.write(env.hostile("huge", "huge"))
    status, _, stderr, peak = _run_measured(env, "call", "--grant", "mcp:huge", "huge.big", "{}")
    assert status == 10, stderr
    assert next(line for line in stderr.splitlines() if not line.startswith("hermesos: ")) == (
        'TOOL_FAILED: huge.big failed: the MCP server "huge" sent a message larger than 16777216 bytes, its '
        "max_result_bytes, which was not read; the server was stopped and is started again at the next call "
        "(raise max_result_bytes in its [servers.huge] entry if such results are expected)."
    )
    assert "Traceback" not in stderr
    # Unbounded, this call peaked at 1.7 GB; bounded, the process holds at most one 16 MiB message.
    assert peak < 300 * MIB, f"peak resident memory {peak / MIB:.0f} MiB"


def test_max_result_bytes_is_the_servers_own_setting(env: Env) -> None:
    env.write(env.hostile("huge", "huge", max_result_bytes=MIB))
    mounted = mount_servers(parse_config(env.config.read_text()), cache_directory=env.root / "cache")
    assert mounted.pool.servers["huge"].max_result_bytes == MIB
    with Runtime(mounted.tools, grants=["mcp:huge"], resources=[mounted.pool]) as runtime:
        with pytest.raises(ToolFailedError) as caught:
            runtime.call_sync("huge.big", {})
        assert "larger than 1048576 bytes, its max_result_bytes" in str(caught.value)
        assert not caught.value.retryable


def test_a_result_over_http_stops_at_max_result_bytes(env: Env, tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, TEST_SERVER, "http"],
        env={**os.environ, "MCP_TEST_PID_DIR": str(env.pids)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    try:
        url = process.stdout.readline().strip()
        env.write(f'[servers.web]\nurl = "{url}"\nmax_result_bytes = 4096\n')
        mounted = mount_servers(parse_config(env.config.read_text()), cache_directory=env.root / "cache")
        with Runtime(mounted.tools, grants=["mcp:web"], resources=[mounted.pool]) as runtime:
            assert runtime.call_sync("web.echo", {"text": "small"}) == "small"
            with pytest.raises(ToolFailedError) as caught:
                runtime.call_sync("web.echo", {"text": "x" * 5000})
            assert str(caught.value).startswith(
                'web.echo failed: the MCP server "web" sent a message larger than 4096 bytes, its max_result_bytes'
            )
            assert runtime.call_sync("web.echo", {"text": "again"}) == "again"  # the session goes on
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("max_result_bytes = 10", "max_result_bytes must be a whole number of bytes from 1024 to 1073741824"),
        ('max_stderr_bytes = "64k"', "max_stderr_bytes must be a whole number of bytes from 1024 to 1073741824"),
    ],
)
def test_the_byte_limits_are_checked(entry: str, problem: str) -> None:
    config = parse_config(f'[servers.s]\ncommand = "x"\n{entry}\n')
    assert config.servers == ()
    assert problem in config.problems[0]


# -- stderr: the last max_stderr_bytes -------------------------------------------------------------------


def test_a_stderr_flood_keeps_only_its_last_bytes(env: Env) -> None:
    server = ServerConfig(name="noisy", command=sys.executable, args=(HOSTILE, "stderr", str(env.pids)))
    tail = StderrTail(server.max_stderr_bytes)

    async def flood() -> str:
        async with connect(server, tail) as client:
            result = await call_tool(client, "noisy", {})
            return result.content[0].text  # type: ignore[union-attr]

    assert anyio.run(flood) == "noisy: ok"
    kept = tail.text()
    assert len(kept.encode()) <= 64 * 1024
    assert kept.endswith("the last line of the flood\n")
    assert tail.dropped > 199 * MIB  # 200 MB written; before, all of it went to a temporary file


# -- no server outlives hermesos -------------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_a_server_that_ignores_sigterm_dies_with_hermesos_however_it_ends(env: Env, how: signal.Signals) -> None:
    env.write(env.hostile("stubborn", "stubborn"))
    hermesos = env.hermesos("call", "--grant", "mcp:stubborn", "stubborn.anything", "{}")
    deadline = time.monotonic() + 30
    while not env.started() and time.monotonic() < deadline:  # hermesos is opening: the server never answers
        time.sleep(0.05)
    (pid,) = env.started()
    hermesos.send_signal(how)
    hermesos.communicate(timeout=30)
    deadline = time.monotonic() + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"the server (pid {pid}) outlived hermesos, ended by {how.name}"


# -- one listing, one bad entry --------------------------------------------------------------------------


def test_names_that_clash_in_one_listing_skip_those_tools_alone(env: Env) -> None:
    env.write(env.hostile("clash", "clash"))
    process = env.hermesos("call", "--grant", "mcp:clash", "clash.ok", "{}")
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert json.loads(stdout) == "ok: ok"

    process = env.hermesos("check")
    stdout, _ = process.communicate(timeout=60)
    assert (
        'tools "clash.a_b" and "clash.A_B" of MCP server "clash" are skipped: their names differ only in case'
    ) in stdout
    process = env.hermesos("call", "math.eval", '{"expression": "1 + 2"}')
    stdout, stderr = process.communicate(timeout=60)
    assert (process.returncode, stdout.strip()) == (0, "3"), stderr


def test_a_listing_the_sdk_cannot_read_fails_the_start_at_once_saying_why(env: Env) -> None:
    """Nested past the SDK reader's 200 levels, the answer was dropped: the start waited out its startup_timeout."""
    env.write(env.hostile("deep", "deep", startup_timeout=120), env.hostile("other", "clash"))
    began = time.monotonic()
    mounted = mount_servers(parse_config(env.config.read_text()), cache_directory=env.root / "cache")
    assert time.monotonic() - began < 60
    assert [tool.name for tool in mounted.tools] == ["other.ok"]
    (problem,) = [problem for problem in mounted.problems if "deep" in problem]
    assert 'MCP server "deep"' in problem
    assert 'MCP server "deep" sent an answer that could not be read (Invalid JSON: recursion limit exceeded' in problem
    assert "did not start" not in problem


def test_a_clash_in_one_listing_leaves_the_servers_other_tools_mounted(env: Env) -> None:
    env.write(env.hostile("clash", "clash"), env.hostile("other", "stderr"))
    mounted = mount_servers(parse_config(env.config.read_text()), cache_directory=env.root / "cache")
    assert [tool.name for tool in mounted.tools] == ["clash.ok", "other.noisy"]
    assert mounted.problems == (
        'tools "clash.a_b" and "clash.A_B" of MCP server "clash" are skipped: their names differ only in case, '
        "which models and clients that fold case cannot tell apart",
    )
    with Runtime(mounted.tools, grants=["mcp:clash"], resources=[mounted.pool]) as runtime:
        assert runtime.call_sync("clash.ok", {}) == "ok: ok"


def test_names_of_two_servers_with_one_wire_name_skip_both_tools() -> None:
    def tool(name: str) -> Tool:
        return define_tool(
            name=name, version="1.0.0", description="A tool.", input=s.object({}), handler=lambda _: None
        )

    problems: list[str] = []
    kept = drop_clashes([tool("a.b_c"), tool("a_b.c"), tool("a.d")], problems)
    assert [each.name for each in kept] == ["a.d"]
    assert problems == [
        'tools "a.b_c" and "a_b.c" of MCP servers "a", "a_b" are skipped: their wire names, which models and '
        "clients send instead of the names, are the same but for case"
    ]


def test_ctrl_c_while_a_server_starts_ends_the_command_at_once(tmp_path: Path) -> None:
    """One Ctrl-C was swallowed while a server started: the command waited out its startup_timeout (600 s here)."""
    silent = tmp_path / "silent.py"
    silent.write_text("import os, time\nopen(os.environ['STARTED'], 'w').close()\ntime.sleep(600)\n")
    config = tmp_path / "mcp.toml"
    started = tmp_path / "started"
    config.write_text(
        f'cache_ttl = 0\n[servers.slow]\ncommand = "{sys.executable}"\nargs = ["{silent}"]\nstartup_timeout = 600\n'
        f'env = {{ STARTED = "{started}" }}\n'
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
    environ.update(
        HERMESOS_MCP_CONFIG=str(config),
        HERMESOS_MCP_CACHE_DIR=str(tmp_path / "cache"),
        HERMESOS_DISABLE_PLUGINS="hermesos-fs",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    process = subprocess.Popen(
        [*HERMESOS, "tools", "list"], env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline, "the server never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)  # the SDK's own shutdown of a server takes up to 4 s
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert err.splitlines()[-1] == "hermesos: interrupted"


def test_a_server_that_cannot_start_is_told_apart_by_what_is_wrong(tmp_path: Path) -> None:
    """A missing cwd was reported as a missing program, a NUL in a variable as a bare "ValueError"."""
    from hermes_mcp._connect import list_servers

    entries = (
        f'[servers.nocwd]\ncommand = "{sys.executable}"\ncwd = "{tmp_path / "gone"}"\n'
        f'[servers.nul]\ncommand = "{sys.executable}"\nenv = {{ A = "x\\u0000y" }}\n'
        '[servers.noprogram]\ncommand = "no-such-program-here"\n'
    )
    config = parse_config(entries, "mcp.toml")
    assert not config.problems
    _, failures = list_servers(config.servers)
    said = {name: str(failure) for name, failure in failures.items()}
    assert said["nocwd"].endswith('" does not exist (check cwd)')
    assert 'could not be started: its working directory "/' in said["nocwd"]
    assert "could not be started: ValueError: embedded null byte" in said["nul"]
    assert 'there is no program "no-such-program-here" (check command and PATH)' in said["noprogram"]
