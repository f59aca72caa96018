"""A real third-party server, ``mcp-server-time`` from PyPI, through the real ``hermesos`` command.

Every tool it lists is mounted, and it starts only when one of its tools is
called: the server is started through ``sh``, which notes each start in a
file before it becomes the server itself (``exec``), so the test counts the
server's own starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))
HERMESOS = [sys.executable, "-m", "hermes_core"]
# Notes a start in $STARTS, then runs the server in this very process.
NOTE_AND_RUN = 'echo started >> "$STARTS"; exec "$0" "$@"'

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="the server is started through sh")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HERMESOS_MCP_CONFIG": str(root / "mcp.toml"),
        "HERMESOS_MCP_CACHE_DIR": str(root / "cache"),
        "HERMESOS_MCP_REFRESH": "",
        "XDG_CONFIG_HOME": str(root / "config"),
        "HERMESOS_POLICY": "",
        "HERMESOS_GRANTS": "",
        "HERMESOS_DISABLE_PLUGINS": "hermesos-fs",
    }
    return subprocess.run([*HERMESOS, *args], env=env, capture_output=True, text=True, timeout=120, check=False)


async def _listed_by_the_server() -> set[str]:
    parameters = StdioServerParameters(command=TIME_SERVER, args=["--local-timezone", "UTC"])
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return {tool.name for tool in (await session.list_tools()).tools}


def test_every_listed_tool_is_mounted_and_the_server_starts_only_for_its_own_tools(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    args = ["-c", NOTE_AND_RUN, TIME_SERVER, "--local-timezone", "UTC"]
    (tmp_path / "mcp.toml").write_text(
        f"[servers.time]\ncommand = 'sh'\nargs = {json.dumps(args)}\nenv = {{ STARTS = {json.dumps(str(starts))} }}\n"
    )

    listed = _run(tmp_path, "tools", "list", "--json")  # lists the server (once), and caches its listing
    assert listed.returncode == 0, listed.stderr
    mounted = {tool["name"] for tool in json.loads(listed.stdout)["tools"] if tool["name"].startswith("time.")}
    assert mounted == {f"time.{name}" for name in asyncio.run(_listed_by_the_server())}
    assert mounted >= {"time.get_current_time", "time.convert_time"}
    assert starts.read_text().splitlines() == ["started"]

    local = _run(tmp_path, "call", "math.eval", '{"expression": "6 * 7"}')
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout) == 42
    assert starts.read_text().splitlines() == ["started"]  # a local tool started no server

    remote = _run(tmp_path, "call", "--grant", "mcp:time", "time.get_current_time", '{"timezone": "UTC"}')
    assert remote.returncode == 0, remote.stderr
    assert json.loads(remote.stdout)["timezone"] == "UTC"
    assert starts.read_text().splitlines() == ["started", "started"]  # its own tool started it, once
