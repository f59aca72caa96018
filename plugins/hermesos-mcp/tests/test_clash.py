"""One clash, one tool: a server named ``math`` that lists ``eval`` beside the bundled math.eval, through ``hermesos``.

The mounted ``math.eval`` gives way (``hermes_yielding_tools``): the bundled
tool runs, the server's other tool and the other servers keep working, and
``hermesos check`` names both plugins and the remedy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TIME_SERVER = str(Path(sys.executable).with_name("mcp-server-time"))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """An mcp.toml of two servers: ``math`` (the tests' math_server.py: eval and double) and the time server."""
    path = tmp_path / "mcp.toml"
    path.write_text(
        f"[servers.math]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(HERE / 'math_server.py'))}]\n"
        f"\n[servers.time]\ncommand = {json.dumps(TIME_SERVER)}\n"
    )
    return path


def _hermesos(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HERMESOS_MCP_CONFIG": str(config),
        "HERMESOS_MCP_CACHE_DIR": str(config.parent / "cache"),
        "HERMESOS_MCP_REFRESH": "",
        "XDG_CONFIG_HOME": str(config.parent / "config"),
        "HERMESOS_POLICY": "",
        "HERMESOS_GRANTS": "",
        "HERMESOS_DISABLE_PLUGINS": "",
        "HERMESOS_FS_ROOT": "",
    }
    return subprocess.run(
        [sys.executable, "-m", "hermes_core", *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_mounted_tool_named_as_a_bundled_one_gives_way_alone(config: Path) -> None:
    done = _hermesos(config, "call", "math.eval", '{"expression": "6 * 7"}')
    assert (done.returncode, done.stdout.strip()) == (0, "42"), done.stderr  # the bundled tool, not the server's

    done = _hermesos(config, "call", "--grant", "mcp:math", "math.double", '{"n": 4}')
    assert (done.returncode, json.loads(done.stdout)) == (0, "8"), done.stderr
    done = _hermesos(config, "call", "--grant", "mcp:time", "time.get_current_time", '{"timezone": "UTC"}')
    assert (done.returncode, json.loads(done.stdout)["timezone"]) == (0, "UTC"), done.stderr

    done = _hermesos(config, "tools", "list", "--json")
    listed = json.loads(done.stdout)
    owners = {tool["name"]: tool["distribution"] for tool in listed["tools"]}
    assert [tool["name"] for tool in listed["tools"]].count("math.eval") == 1
    assert (owners["math.eval"], owners["math.double"], owners["time.get_current_time"]) == (
        "hermesos-math",
        "hermesos-mcp",
        "hermesos-mcp",
    )
    assert listed["broken_plugins"] == []

    done = _hermesos(config, "check")
    assert done.returncode == 1
    mcp, math = (f"{name} {version(name)}" for name in ("hermesos-mcp", "hermesos-math"))
    assert (
        f'warning: plugin {mcp} (entry point "mcp" = hermes_mcp): tool "math.eval" is left out: it is also '
        f'contributed by plugin {math} (entry point "math" = hermes_math), which keeps it; the other tools of '
        f'hermesos-mcp are used. To have both: rename the server "math" in {config} ([servers.math] as '
        '[servers.<another name>]; its tools are then named <another name>.<tool>), or leave "eval" out of the '
        "tools it mounts (its tools = [...] list)."
    ) in done.stdout.splitlines()
    assert "broken plugin" not in done.stdout + done.stderr


def test_selecting_the_servers_tools_without_eval_leaves_no_problem(config: Path) -> None:
    config.write_text(config.read_text().replace("[servers.time]", 'tools = ["double"]\n\n[servers.time]'))
    done = _hermesos(config, "check")
    assert "math.eval" not in done.stdout
    done = _hermesos(config, "call", "--grant", "mcp:math", "math.double", '{"n": 5}')
    assert (done.returncode, json.loads(done.stdout)) == (0, "10"), done.stderr
