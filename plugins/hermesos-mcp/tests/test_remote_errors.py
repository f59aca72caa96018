"""What a server's error becomes, row by row of the table in docs/mcp-servers.md, against real servers.

The servers: ``mcp-server-time`` from PyPI (Python, the test extra), the
TypeScript ``@modelcontextprotocol/server-filesystem`` from npm (installed by
the tests into a temporary folder, at the version pinned below, whose
messages these tests quote), and, for the rows no healthy server can show, the
tests' own ``mcp_test_server.py`` (a tool that crashes its server, a server
that exits before the handshake) and ``sleep``, a program that is no MCP
server at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import Mounted, load_config, mount_servers
from hermes_mcp._cache import write

from hermes_core import ErrorCode, InputInvalidError, Runtime, ToolError, ToolFailedError

HERE = Path(__file__).resolve().parent
TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))
#: The filesystem server's version whose messages are quoted here.
FILESYSTEM = "@modelcontextprotocol/server-filesystem@2026.8.31"
ANSWERED = (
    "These are the tool's own words: if they are about the arguments, change them and call again; "
    "if not, the same call may work later, or tell the user."
)
RETRY = "This is a fault in the tool, not in how it was called. The same call may work if it is made again later."


@pytest.fixture(scope="module")
def filesystem_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TypeScript filesystem server's entry script, installed from npm into a temporary folder."""
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        pytest.skip("node and npm are needed to install and run the TypeScript filesystem server")
    folder = tmp_path_factory.mktemp("server-filesystem")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), FILESYSTEM],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm could not install {FILESYSTEM}:\n{done.stdout}\n{done.stderr}"
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
    assert script.is_file()
    return script


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with a configuration file's place, a listing cache and an allowed directory holding one file."""
    (tmp_path / "allowed").mkdir()
    (tmp_path / "allowed" / "notes.txt").write_text("hello\n")
    monkeypatch.setenv("HERMESOS_MCP_REFRESH", "")
    return tmp_path


def _mount(root: Path, toml: str, stale: dict[str, list[dict[str, Any]]] | None = None) -> Mounted:
    """Mount the servers of *toml*; a server in *stale* has that listing in the cache, as an older server listed."""
    path = root / "mcp.toml"
    path.write_text(toml)
    config = load_config(path)
    for server in config.servers:
        if stale and server.name in stale:
            write(root / "cache", server, stale[server.name])
    return mount_servers(config, cache_directory=root / "cache")


def _failure(mounted: Mounted, tool: str, arguments: dict[str, Any]) -> ToolError:
    with (
        Runtime(mounted.tools, grants=["mcp:*"], resources=[mounted.pool]) as runtime,
        pytest.raises(ToolError) as caught,
    ):
        runtime.call_sync(tool, arguments)
    return caught.value


def _time(root: Path) -> Mounted:
    return _mount(root, f"[servers.time]\ncommand = {json.dumps(TIME_SERVER)}\nargs = ['--local-timezone', 'UTC']\n")


def _files(root: Path, script: Path, stale: dict[str, list[dict[str, Any]]] | None = None) -> Mounted:
    entry = (
        f"[servers.files]\ncommand = 'node'\nargs = [{json.dumps(str(script))}, {json.dumps(str(root / 'allowed'))}]\n"
    )
    return _mount(root, entry, stale)


# -- an isError result: the server's own words -------------------------------------------------------


def _answered(error: ToolError) -> tuple[Any, ...]:
    assert isinstance(error, ToolFailedError)
    return (error.code, error.reason, error.retryable)


def test_time_an_unknown_timezone_is_the_servers_words(workspace: Path) -> None:
    error = _failure(_time(workspace), "time.get_current_time", {"timezone": "Mars/Olympus"})
    assert _answered(error) == (ErrorCode.TOOL_FAILED, "answered", True)
    assert str(error) == (
        'time.get_current_time failed: the MCP server "time" answered: Error executing tool get_current_time: '
        f"Invalid timezone: 'No time zone found with key Mars/Olympus'.\n{ANSWERED}"
    )
    assert "fault in the tool" not in str(error)
    assert "will not help" not in str(error)


def test_time_an_hour_of_25_is_the_servers_words(workspace: Path) -> None:
    arguments = {"source_timezone": "UTC", "time": "25:00", "target_timezone": "Europe/Paris"}
    error = _failure(_time(workspace), "time.convert_time", arguments)
    assert _answered(error) == (ErrorCode.TOOL_FAILED, "answered", True)
    assert str(error) == (
        'time.convert_time failed: the MCP server "time" answered: Error executing tool convert_time: '
        f"Invalid time format. Expected HH:MM [24-hour format].\n{ANSWERED}"
    )


def test_filesystem_a_path_outside_the_allowed_directories_is_the_servers_words(
    workspace: Path, filesystem_server: Path
) -> None:
    error = _failure(_files(workspace, filesystem_server), "files.read_text_file", {"path": "/etc/hostname"})
    assert _answered(error) == (ErrorCode.TOOL_FAILED, "answered", True)
    allowed = os.path.realpath(workspace / "allowed")
    assert str(error) == (
        'files.read_text_file failed: the MCP server "files" answered: Access denied - path outside allowed '
        f"directories: /etc/hostname not in {allowed}.\n{ANSWERED}"
    )


def test_filesystem_a_missing_file_is_the_servers_words(workspace: Path, filesystem_server: Path) -> None:
    missing = str(workspace / "allowed" / "missing.txt")
    error = _failure(_files(workspace, filesystem_server), "files.read_text_file", {"path": missing})
    assert _answered(error) == (ErrorCode.TOOL_FAILED, "answered", True)
    assert str(error) == (
        f'files.read_text_file failed: the MCP server "files" answered: ENOENT: no such file or directory, open '
        f"'{os.path.realpath(missing)}'.\n{ANSWERED}"
    )


# -- "invalid params" (-32602): INPUT_INVALID, the server's message the issue ------------------------------

# A listing cached from an older server: its schema lets through what the running server refuses, or it names
# a tool the running server no longer has. The running server is the judge, and says so.
LOOSE_READ = [{"name": "read_text_file", "inputSchema": {"type": "object", "properties": {"path": {}}}}]
GONE = [{"name": "get_lunar_time", "inputSchema": {"type": "object", "properties": {}}}]


def test_filesystem_arguments_its_own_check_refuses_are_input_invalid(workspace: Path, filesystem_server: Path) -> None:
    mounted = _files(workspace, filesystem_server, {"files": LOOSE_READ})
    error = _failure(mounted, "files.read_text_file", {"path": 5})
    assert isinstance(error, InputInvalidError)
    assert (error.code, error.retryable, error.tool) == (ErrorCode.INPUT_INVALID, True, "files.read_text_file")
    assert [(issue.path, issue.kind) for issue in error.issues] == [((), "invalid")]
    assert str(error) == (
        'files.read_text_file was called with invalid input: input was refused by the MCP server "files": '
        "Input validation error: Invalid arguments for tool read_text_file: Invalid input: expected string, "
        "received number at path.\nFix the arguments and call files.read_text_file again."
    )


def test_time_a_json_rpc_invalid_params_error_is_input_invalid(workspace: Path) -> None:
    path = workspace / "mcp.toml"
    toml = f"[servers.time]\ncommand = {json.dumps(TIME_SERVER)}\n"
    mounted = _mount(workspace, toml, {"time": GONE})
    assert path.is_file()
    error = _failure(mounted, "time.get_lunar_time", {})
    assert isinstance(error, InputInvalidError)
    assert str(error) == (
        'time.get_lunar_time was called with invalid input: input was refused by the MCP server "time": '
        "Unknown tool: get_lunar_time.\nFix the arguments and call time.get_lunar_time again."
    )


# -- a server that cannot start, dies or does not answer in time: TOOL_FAILED, naming it and the cause -------

UNIT = [{"name": "crash", "inputSchema": {"type": "object", "properties": {}}}]


def _unit(root: Path, **env: str) -> str:
    variables = ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items())
    return (
        f"[servers.unit]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HERE / 'mcp_test_server.py'))}, 'stdio']\nenv = {{ {variables} }}\n"
    )


def test_a_server_that_dies_during_the_call_is_tool_failed_with_its_stderr(workspace: Path) -> None:
    error = _failure(_mount(workspace, _unit(workspace)), "unit.crash", {})
    assert isinstance(error, ToolFailedError)
    assert (error.code, error.reason, error.retryable) == (ErrorCode.TOOL_FAILED, "reported", True)
    assert str(error) == (
        'unit.crash failed: the MCP server "unit" closed the connection during the call (it may have crashed); '
        f"it is started again at the next call; its stderr: crashing on purpose.\n{RETRY}"
    )


def test_a_server_that_cannot_start_any_more_is_tool_failed_with_its_stderr(workspace: Path) -> None:
    mounted = _mount(workspace, _unit(workspace, MCP_TEST_FAIL_START="1"), {"unit": UNIT})
    error = _failure(mounted, "unit.crash", {})
    assert isinstance(error, ToolFailedError)
    assert (error.code, error.retryable) == (ErrorCode.TOOL_FAILED, True)
    assert str(error) == (
        'unit.crash failed: the MCP server "unit" closed the connection while starting (it exited, or is not an '
        f"MCP server); its stderr: this server is configured to fail.\n{RETRY}"
    )


def test_a_program_that_is_gone_is_tool_failed_naming_it(workspace: Path) -> None:
    mounted = _mount(workspace, "[servers.unit]\ncommand = 'no-such-mcp-server-anywhere'\n", {"unit": UNIT})
    error = _failure(mounted, "unit.crash", {})
    assert isinstance(error, ToolFailedError)
    assert str(error) == (
        'unit.crash failed: the MCP server "unit" could not be started: there is no program '
        f'"no-such-mcp-server-anywhere" (check command and PATH).\n{RETRY}'
    )


def test_a_program_that_never_answers_the_handshake_is_tool_failed_after_startup_timeout(workspace: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep is not None
    toml = f"[servers.unit]\ncommand = {json.dumps(sleep)}\nargs = ['30']\nstartup_timeout = 1\n"
    error = _failure(_mount(workspace, toml, {"unit": UNIT}), "unit.crash", {})
    assert isinstance(error, ToolFailedError)
    assert (error.code, error.retryable) == (ErrorCode.TOOL_FAILED, True)
    assert str(error) == (
        f'unit.crash failed: the MCP server "unit" did not start and list its tools within 1 seconds.\n{RETRY}'
    )


@pytest.fixture(autouse=True)
def _no_server_outlives_its_test() -> Iterator[None]:
    yield
    # Every server of these tests is a child of this process while it runs; a runtime's close stops them.
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[1]) == os.getpid():
            children.append(int(stat.parent.name))
    assert not children, f"processes outlived the test: {children}"
