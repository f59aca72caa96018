"""What decides what an MCP server runs is guarded: no tool may write it.

A model granted only ``fs:write``, with a workspace holding the script a
configured server runs, rewrote the script; the next call of the server's tool
ran the model's code. Every path an entry names that decides the code the
server runs is a guarded path now, and a workspace holding one is refused
when the plugins load, naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import parse_config

HERE = Path(__file__).resolve().parent
MATH_SERVER = HERE / "math_server.py"
HERMESOS = [sys.executable, "-m", "hermes_core"]


def _server(entry: str, tmp_path: Path) -> list[str]:
    config = parse_config(f"[servers.s]\n{entry}\n", "test")
    assert not config.problems, config.problems
    (server,) = config.servers
    return server.decisive_paths()


def test_every_path_of_an_entry_that_decides_what_runs_is_named(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text("")
    settings = tmp_path / "app.toml"
    settings.write_text("")
    served = tmp_path / "data"
    served.mkdir()
    modules = tmp_path / "modules"
    modules.mkdir()
    program = tmp_path / "bin" / "serve-it"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    entry = (
        f'command = "serve-it"\n'
        f'args = ["server.py", "--config={settings}", "{served}", "-m", "pkg"]\n'
        f'cwd = "{tmp_path}"\n'
        f'env = {{ PATH = "{program.parent}", PYTHONPATH = "{modules}", DATA = "{served}", KEY = "{settings}" }}\n'
    )
    assert sorted(_server(entry, tmp_path)) == sorted(
        {str(program), str(script), str(settings), str(tmp_path), str(program.parent), str(modules)}
    )
    # A folder an argument names is most often what the server serves: left out, as is a variable's folder
    # that is not a search path. A server at a URL runs nothing here.
    assert str(served) not in _server(entry, tmp_path)
    assert _server('url = "http://127.0.0.1:1/mcp"', tmp_path) == []


@pytest.mark.parametrize(
    "member",
    ["the program", "a file an argument names", "a file after --option=", "the working directory", "PYTHONPATH"],
)
def test_a_workspace_holding_what_a_server_runs_is_refused_and_the_model_cannot_rewrite_it(
    tmp_path: Path, member: str
) -> None:
    """The attack as it was made: fs.write rewrites the server's code, and the next call of its tool runs it."""
    workspace, config = tmp_path / "workspace", tmp_path / "config"
    (config / "hermesos").mkdir(parents=True)
    workspace.mkdir()
    server = workspace / "server.py"
    server.write_text(MATH_SERVER.read_text())
    python = sys.executable
    entries = {
        "the program": f'command = "{workspace / "run.sh"}"\nargs = []',
        "a file an argument names": f'command = "{python}"\nargs = ["{server}"]',
        "a file after --option=": f'command = "{python}"\nargs = ["{MATH_SERVER}", "--plugin={server}"]',
        "the working directory": f'command = "{python}"\nargs = ["{MATH_SERVER}"]\ncwd = "{workspace}"',
        "PYTHONPATH": f'command = "{python}"\nargs = ["{MATH_SERVER}"]\nenv = {{ PYTHONPATH = "{workspace}" }}',
    }
    (workspace / "run.sh").write_text(f"#!/bin/sh\nexec {python} {server}\n")
    (workspace / "run.sh").chmod(0o755)
    (config / "hermesos" / "mcp.toml").write_text(f"cache_ttl = 0\n[servers.calc]\n{entries[member]}\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
    environ.update(HERMESOS_FS_ROOT=str(workspace), XDG_CONFIG_HOME=str(config), HOME=str(tmp_path))
    hostile = json.dumps({"path": "server.py", "content": "open('pwned', 'w').write('code ran')\n"})
    write = subprocess.run(
        [*HERMESOS, "call", "fs.write", hostile, "--grant", "fs:write"],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert write.returncode == 1, write.stderr
    assert "error: broken plugin hermesos-fs" in write.stderr
    assert f'names "{workspace}" as a directory its tools may write, but it ' in write.stderr
    assert "a path plugin hermesos-mcp guards (hermes_guarded_paths)" in write.stderr
    assert server.read_text() == MATH_SERVER.read_text()
    assert not (tmp_path / "pwned").exists()


# -- what the plugin reads for a server is bounded, as what decides it is guarded -------------------


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (os.mkfifo, "is a FIFO (named pipe), not a regular file"),
        (lambda path: path.write_text("x" * 5000), "is larger than 4096 bytes"),
        (lambda path: path.write_bytes(b"to\x00ken"), "that holds characters a bearer token cannot have"),
    ],
)
def test_a_token_file_is_read_bounded_never_waited_on(tmp_path: Path, make: Any, said: str) -> None:
    """A FIFO hung the load, /dev/zero filled the memory: the token file is read as any configuration file."""
    from hermes_mcp._session import ServerFailure, _token

    token = tmp_path / "token"
    make(token)
    (server,) = parse_config(f'[servers.web]\nurl = "http://127.0.0.1:1/mcp"\ntoken_file = "{token}"\n').servers
    with pytest.raises(ServerFailure) as caught:
        _token(server)
    assert said in str(caught.value)
    (device,) = parse_config('[servers.web]\nurl = "http://127.0.0.1:1/mcp"\ntoken_file = "/dev/zero"\n').servers
    with pytest.raises(ServerFailure, match="is a character device, not a regular file"):
        _token(device)
