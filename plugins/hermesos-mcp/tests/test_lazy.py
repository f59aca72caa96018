"""When MCP servers start, through the real ``hermesos`` command: only when one of their tools is called.

Each test server (``lazy_server.py``) writes a file named after its pid when it
starts, so a test can say exactly which servers a command started.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "lazy_server.py")
HERMESOS = [sys.executable, "-m", "hermes_core"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class Workspace:
    """A configuration of test servers, their cache, and the pids of those that started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pids = root / "pids"
        self.pids.mkdir()
        self.config = root / "mcp.toml"
        self.broken = root / "broken"
        self.variant = root / "variant"
        self.vars = {
            "HERMESOS_MCP_CONFIG": str(self.config),
            "HERMESOS_MCP_CACHE_DIR": str(root / "cache"),
            "HERMESOS_MCP_REFRESH": "",
            "XDG_CONFIG_HOME": str(root / "config"),
            "HERMESOS_POLICY": "",
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "hermesos-fs",
        }

    def write(self, *names: str, delay: float = 0) -> None:
        entries = []
        for name in names:
            env = {
                "LAZY_PID_DIR": str(self.pids),
                "LAZY_BROKEN_FILE": str(self.broken) + f"-{name}",
                "LAZY_VARIANT_FILE": str(self.variant) + f"-{name}",
                "LAZY_START_DELAY": str(delay),
            }
            entries.append(
                f"[servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(SERVER)}, "
                f'"{name}"]\nenv = {{ {", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())} }}\n'
            )
        self.config.write_text("\n".join(entries))

    def started(self) -> list[str]:
        """The names of the servers started so far (one for each process), sorted."""
        return sorted(path.read_text() for path in self.pids.iterdir())

    def forget(self) -> None:
        for path in self.pids.iterdir():
            path.unlink()

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*HERMESOS, *args],
            env={**os.environ, **self.vars},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def cache(self) -> None:
        """List every server now (``tools list`` loads the plugins), so that their listings are cached."""
        done = self.run("tools", "list")
        assert done.returncode == 0, done.stderr
        self.forget()


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Workspace]:
    made = Workspace(tmp_path)
    yield made
    deadline = time.monotonic() + 60
    left = {int(path.name) for path in made.pids.iterdir()}
    while (left := {pid for pid in left if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"server processes outlived the test: {sorted(left)}"


def test_a_call_of_a_local_tool_starts_no_server(work: Workspace) -> None:
    work.write("alpha", "beta", "gamma")
    work.cache()
    done = work.run("call", "math.eval", '{"expression": "6 * 7"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == 42
    assert work.started() == []


def test_a_call_of_a_mounted_tool_starts_its_server_alone(work: Workspace) -> None:
    work.write("alpha", "beta", "gamma")
    work.cache()
    done = work.run("call", "--grant", "mcp:beta", "beta.ping", '{"text": "hello"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": "hello"}
    assert work.started() == ["beta"]


def test_a_server_without_a_cached_listing_is_listed_at_load(work: Workspace) -> None:
    work.write("alpha", "beta")
    done = work.run("call", "math.eval", '{"expression": "1 + 1"}')
    assert done.returncode == 0, done.stderr
    assert work.started() == ["alpha", "beta"]  # listed (and stopped) to mount their tools
    work.forget()
    assert work.run("call", "math.eval", '{"expression": "1 + 1"}').returncode == 0
    assert work.started() == []  # now cached


def test_a_dead_server_is_started_again_for_the_next_call_of_a_long_lived_runtime(work: Workspace) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    work.write("alpha", "beta")
    work.cache()
    params = StdioServerParameters(
        command=sys.executable,
        args=[*HERMESOS[1:], "serve", "--grant", "mcp:*"],
        env={**os.environ, **work.vars},
    )

    async def client() -> list[Any]:
        results = []
        with (work.root / "serve.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as session:
                listed = {tool.name for tool in (await session.list_tools()).tools}
                assert {"alpha_ping", "beta_ping"} <= listed
                assert work.started() == []  # listed from the cache: nothing started
                results.append(await session.call_tool("alpha_ping", {"text": "one"}))
                results.append(await session.call_tool("alpha_ping", {"text": "two"}))
                assert work.started() == ["alpha"]  # kept for the second call
                (pid,) = (int(path.name) for path in work.pids.iterdir())
                os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 60
                while _alive(pid) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.3)  # the session sees its stream end
                results.append(await session.call_tool("alpha_ping", {"text": "three"}))
        return results

    results = asyncio.run(client())
    assert [(result.is_error, json.loads(result.content[0].text)) for result in results] == [
        (False, {"result": "one"}),
        (False, {"result": "two"}),
        (False, {"result": "three"}),
    ]
    assert work.started() == ["alpha", "alpha"]  # started again, once, and beta never


def test_check_starts_each_cached_server_and_reports_one_that_cannot_start(work: Workspace) -> None:
    work.write("alpha", "beta")
    work.cache()
    assert work.run("check").returncode == 0
    work.forget()
    Path(f"{work.broken}-beta").touch()  # beta can no longer start; its listing is still cached
    done = work.run("check")
    assert done.returncode == 1, done.stdout
    assert work.started() == ["alpha"]  # beta exited before it could write its pid
    (problem,) = [line for line in done.stdout.splitlines() if line.startswith("warning")]
    assert problem.startswith("warning: plugin hermesos-mcp")
    assert (
        'MCP server "beta" closed the connection while starting (it exited, or is not an MCP server); its stderr: '
        "this server can no longer start; its tools are mounted from the listing cached earlier, and every call "
        "of one fails until it starts again (fix its entry in the configuration file, or remove it)"
    ) in problem
    progress = [line for line in done.stderr.splitlines() if line.startswith("hermesos check:")]
    # One line for each server, as each is done (beta, which fails at once, usually first).
    assert sorted(re.sub(r"\d+\.\d s", "N s", line) for line in progress) == [
        'hermesos check: hermesos-mcp: MCP server "alpha": started in N s, 1 tool, as cached',
        'hermesos check: hermesos-mcp: MCP server "beta": could not start (N s)',
    ]


def test_check_reports_a_server_whose_tools_changed_and_caches_them(work: Workspace) -> None:
    work.write("alpha")
    work.cache()
    Path(f"{work.variant}-alpha").write_text("2")
    done = work.run("check")
    assert done.returncode == 1
    assert (
        'MCP server "alpha" lists other tools than its cached listing (new: pong); the cache now holds the new '
        "listing, which the next load mounts"
    ) in done.stdout
    assert 'MCP server "alpha": started in ' in done.stderr
    assert ", 2 tools, changed" in done.stderr
    listed = work.run("tools", "list", "--json")
    assert "alpha.pong" in listed.stdout
    assert work.run("check").returncode == 0


def test_check_with_timeout_keeps_its_worker_protocol(work: Workspace) -> None:
    work.write("alpha")
    work.cache()
    Path(f"{work.broken}-alpha").touch()
    done = work.run("check", "--timeout", "60")
    assert done.returncode == 1
    assert 'MCP server "alpha" closed the connection while starting' in done.stdout
    assert 'hermesos check: hermesos-mcp: MCP server "alpha": could not start' in done.stderr
    assert "hermesos-progress" not in done.stderr


def test_a_slow_server_start_shows_progress_on_stderr(work: Workspace) -> None:
    work.write("slow", delay=1.5)
    done = work.run("tools", "list")  # no cached listing: it is started to be listed
    assert done.returncode == 0, done.stderr
    assert "hermesos: loading the plugins... (1 s)" in done.stderr.splitlines()
    work.forget()
    done = work.run("call", "--grant", "mcp:slow", "slow.ping", '{"text": "at last"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"result": "at last"}
    assert "hermesos: calling slow.ping... (1 s)" in done.stderr.splitlines()
    assert work.started() == ["slow"]
    quick = work.run("call", "math.eval", '{"expression": "2 + 2"}')
    assert quick.stderr == ""  # under a second: nothing said


def test_a_call_given_up_on_while_its_server_starts_leaves_the_start_to_the_next_call(work: Workspace) -> None:
    from hermes_mcp import load_config, mount_servers

    from hermes_core import Runtime, ToolFailedError

    work.write("slow", delay=1.5)
    work.cache()
    mounted = mount_servers(load_config(work.config), cache_directory=work.root / "cache")
    with Runtime(mounted.tools, grants=["mcp:slow"], resources=[mounted.pool]) as runtime:
        with pytest.raises(ToolFailedError) as caught:
            runtime.call_sync("slow.ping", {"text": "early"}, timeout=0.3)
        assert caught.value.reason == "timeout"
        assert runtime.call_sync("slow.ping", {"text": "later"}) == {"result": "later"}
        assert mounted.pool.started() == ["slow"]
    assert work.started() == ["slow"]  # one start, which the first call began and the second awaited
