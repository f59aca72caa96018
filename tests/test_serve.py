"""hermesos serve: real servers (subprocesses, over stdio and Streamable HTTP) called by the MCP SDK's own client.

The servers run ``python -m hermes_core serve`` with the bundled plugins and a
small fixture plugin (written into a temporary site directory on PYTHONPATH):
a slow ``async`` tool that leaves marker files when it starts, is cancelled or
finishes, a tool whose handler raises, one that returns the wrong type, and one
whose permission provider raises. No server outlives its test: each is killed
with its process group, and every test checks it left no child behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest

from hermes_core import Runtime, ToolHints, define_tool
from hermes_core import schema as s
from hermes_core.cli import main
from hermes_core.serve import ERROR_META_KEY, check_exposure, is_loopback, mcp_tools

if TYPE_CHECKING:
    from conftest import Site

mcp = pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

PLUGIN = """
import asyncio, os
from pathlib import Path
from hermes_core import define_tool, hookimpl, schema as s

def mark(name):
    Path(os.environ["HERMESOS_TEST_MARKERS"], name).write_text(name)

async def slow(args):
    mark("started")
    try:
        await asyncio.sleep(args["seconds"])
    except asyncio.CancelledError:
        mark("cancelled")
        raise
    mark("finished")
    return args["seconds"]

def tool(name, description, handler, **extra):
    return define_tool(name=name, description=description, version="1.0.0", handler=handler, **extra)

class Raising:
    def check(self, tool, permission):
        if permission == "unit:guarded":
            raise RuntimeError("the policy service is down: secret-detail")
        return None

@hookimpl
def hermes_tools():
    return [
        tool("unit.slow", "Sleep for a while; unit.crash fails at once.", slow,
             input=s.object({"seconds": s.number(minimum=0)}), output=s.number()),
        tool("unit.crash", "Raise.", lambda args: 1 / 0, input=s.object({})),
        tool("unit.broken", "Return the wrong type.", lambda args: "seven", input=s.object({}), output=s.integer()),
        tool("unit.guarded", "Ask a provider that raises.", lambda args: "ok", input=s.object({}),
             permissions=["unit:guarded"]),
    ]

@hookimpl
def hermes_permission_providers():
    return [Raising()]
"""

# -- fixtures ----------------------------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("no_server_outlives_its_test")  # conftest's


class Env:
    """The environment of the servers: the fixture plugin installed, a workspace, a markers directory."""

    def __init__(self, root: Path) -> None:
        self.site = root / "site"
        self.workspace = root / "workspace"
        self.markers = root / "markers"
        for directory in (self.site, self.workspace, self.markers, root / "config"):
            directory.mkdir()
        (self.site / "hermesos_unit_mcp.py").write_text(PLUGIN)
        info = self.site / "hermesos_unit_mcp-1.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: hermesos-unit-mcp\nVersion: 1.0.0\nRequires-Dist: hermesos-core>=0.1\n"
        )
        (info / "entry_points.txt").write_text("[hermesos.plugins]\nunitmcp = hermesos_unit_mcp\n")
        (self.workspace / "notes.txt").write_text("buy milk\n")
        self.vars = {
            "PYTHONPATH": os.pathsep.join([str(self.site), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "HERMESOS_FS_ROOT": str(self.workspace),
            "HERMESOS_TEST_MARKERS": str(self.markers),
            "XDG_CONFIG_HOME": str(root / "config"),  # no user policy file
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "",
            "HERMESOS_POLICY": "",
        }

    def marks(self) -> set[str]:
        return {path.name for path in self.markers.iterdir()}

    def wait_for(self, mark: str, seconds: float = 60) -> None:
        deadline = time.monotonic() + seconds
        while mark not in self.marks():
            assert time.monotonic() < deadline, f"no {mark!r} marker within {seconds} s: {self.marks()}"
            time.sleep(0.02)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


SERVE = [sys.executable, "-m", "hermes_core", "serve"]


@asynccontextmanager
async def stdio(env: Env, *options: str, mode: str = "auto", log: Path | None = None) -> AsyncIterator[Client]:
    """A Client of ``hermesos serve`` over stdio: the SDK's stdio client starts it, and stops it at the end."""
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], *options], env=env.vars)
    with (log or env.markers.parent / "stdio.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client


class HTTPServer:
    """``hermesos serve --transport http --port 0`` in its own process group, and the URL it printed."""

    def __init__(self, env: Env, *options: str, extra_env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [*SERVE, "--transport", "http", "--port", "0", *options],
            env={**os.environ, **env.vars, **(extra_env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.err: str | None = None
        line = self.process.stderr.readline() if self.process.stderr else ""
        found = re.search(r"http://\S+/mcp", line)
        if found is None:
            self.stop()
            pytest.fail(f"the server printed no URL: {line!r}")
        # A server on every address (0.0.0.0) is reached on the loopback one.
        self.url = found.group().replace("//0.0.0.0:", "//127.0.0.1:")
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> str:
        """Kill the server's process group (once); what it wrote on stderr."""
        if self.err is None:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.err = self.process.communicate(timeout=10)[1] or ""
        return self.err


@pytest.fixture
def http_server(env: Env) -> Iterator[Callable[..., HTTPServer]]:
    started: list[HTTPServer] = []

    def start(*options: str, extra_env: dict[str, str] | None = None) -> HTTPServer:
        server = HTTPServer(env, *options, extra_env=extra_env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def run(function: Callable[[], Any]) -> Any:
    return anyio.run(function)


def text(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def error_of(result: Any) -> dict[str, Any]:
    """The error a failed call's result carries in its ``_meta``; its text is its code and message.

    It has no structured content, which a client may check against the tool's output schema.
    """
    assert result.is_error
    assert result.structured_content is None
    data: dict[str, Any] = result.meta[ERROR_META_KEY]
    assert text(result) == f"{data['code']}: {data['message']}"
    return data


# -- stdio --------------------------------------------------------------------------------------------


def test_stdio_lists_wire_names_hints_and_object_output_schemas(env: Env) -> None:
    async def scenario() -> None:
        async with stdio(env) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(listed) == {
                "fs_read",
                "fs_write",
                "fs_list",
                "fs_stat",
                "fs_mkdir",
                "fs_delete",
                "math_eval",
                "unit_slow",
                "unit_crash",
                "unit_broken",
                "unit_guarded",
            }
            read = listed["fs_read"]
            assert read.title == "Read a text file"
            assert read.annotations is not None
            assert read.annotations.model_dump(by_alias=True, exclude_none=True) == {
                "title": "Read a text file",
                "readOnlyHint": True,
                "idempotentHint": True,
                "openWorldHint": False,
            }
            delete = listed["fs_delete"].annotations
            assert delete is not None
            assert (delete.read_only_hint, delete.destructive_hint) == (False, True)
            assert read.input_schema["properties"]["path"] == {
                "$ref": "#/$defs/fs.path",
                "description": "The file to read, relative to the workspace root, such as 'src/app.py'",
            }
            assert "fs.path" in read.input_schema["$defs"]
            assert read.output_schema is not None
            assert read.output_schema["type"] == "object"  # an object already: not wrapped
            assert "result" not in read.output_schema["properties"]
            assert listed["math_eval"].output_schema == {
                "type": "object",
                "properties": {
                    "result": {
                        "type": "number",
                        "description": "The value: an integer if every step was exact integer arithmetic, "
                        "else a decimal",
                    }
                },
                "required": ["result"],
            }
            assert listed["unit_slow"].description == "Sleep for a while; unit_crash fails at once."

    run(scenario)


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026 protocol (the default), and the 2025 handshake
def test_stdio_calls_and_every_error_is_an_error_result(env: Env, mode: str) -> None:
    async def scenario() -> None:
        async with stdio(env, mode=mode) as client:
            result = await client.call_tool("math_eval", {"expression": "2 ** 10"})
            assert not result.is_error
            assert text(result) == "1024"
            assert result.structured_content == {"result": 1024}

            missing = error_of(await client.call_tool("math.eval", {"expression": "1"}))
            assert missing["code"] == "TOOL_NOT_FOUND"
            assert missing["suggestions"] == ["math_eval"]  # a name the client can send
            assert 'such as "math_eval"' in missing["message"]

            invalid = error_of(await client.call_tool("math_eval", {"expression": 5}))
            assert invalid["code"] == "INPUT_INVALID"
            assert invalid["tool"] == "math_eval"
            assert [(issue["path"], issue["kind"]) for issue in invalid["issues"]] == [(["expression"], "type")]
            assert invalid["message"].startswith("math_eval was called with invalid input:")

            denied = error_of(await client.call_tool("fs_read", {"path": "notes.txt"}))
            assert denied["code"] == "PERMISSION_DENIED"
            assert (denied["tool"], denied["permission"]) == ("fs_read", "fs:read")
            assert "fs.read" not in denied["message"]

            failed = error_of(await client.call_tool("unit_crash", {}))
            assert failed["code"] == "TOOL_FAILED"
            assert (failed["reason"], failed["exception"]) == ("raised", "ZeroDivisionError")
            assert failed["message"].startswith("unit_crash failed: its handler raised ZeroDivisionError.")

            broken = error_of(await client.call_tool("unit_broken", {}))
            assert broken["code"] == "OUTPUT_INVALID"
            assert broken["issues"][0]["kind"] == "type"

            provider = error_of(await client.call_tool("unit_guarded", {}))
            assert provider["code"] == "TOOL_FAILED"
            assert provider["message"].startswith(
                "unit_guarded failed: a permission provider raised RuntimeError, so the call was not made."
            )
            assert "secret-detail" not in json.dumps(provider)  # an exception's text is never shown

            # The server is still serving after all that.
            assert text(await client.call_tool("math_eval", {"expression": "1 + 1"})) == "2"

    run(scenario)
    log = (env.markers.parent / "stdio.log").read_text()
    # The operator's log names the tool and the call; the traceback is printed only with --debug.
    assert re.search(r"^hermesos serve: ERROR: unit\.crash \(call [0-9a-f]{16}\) failed", log, re.MULTILINE)
    assert "Traceback" not in log


def test_a_client_cancelling_a_call_cancels_its_handler(env: Env) -> None:
    async def scenario() -> None:
        async with stdio(env) as client:
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "unit_slow", {"seconds": 30})
                await anyio.to_thread.run_sync(env.wait_for, "started")
                group.cancel_scope.cancel()  # the client sends notifications/cancelled
            await anyio.to_thread.run_sync(env.wait_for, "cancelled")
            assert "finished" not in env.marks()
            # The connection goes on.
            assert text(await client.call_tool("math_eval", {"expression": "6 * 7"})) == "42"

    run(scenario)


def _line(process: subprocess.Popen[str], message: dict[str, Any] | str) -> None:
    assert process.stdin is not None
    process.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    answer: dict[str, Any] = json.loads(process.stdout.readline())
    return answer


def _answer_soon(process: subprocess.Popen[str], seconds: float = 20) -> dict[str, Any]:
    """The next answer, failing (not hanging) if none comes within *seconds*: what these tests catch used to hang."""
    assert process.stdout is not None
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(seconds)
    assert read, f"no answer within {seconds} s"
    answer: dict[str, Any] = json.loads(read[0])
    return answer


@pytest.fixture
def raw(env: Env) -> Iterator[subprocess.Popen[str]]:
    """``hermesos serve`` over stdio, with pipes the test writes JSON lines to and reads them from."""
    process = subprocess.Popen(
        SERVE,
        env={**os.environ, **env.vars},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    try:
        _line(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert _answer(process)["result"]["serverInfo"]["name"] == "hermesos"
        _line(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None and not stream.closed:
                stream.close()


def _stopped_quietly(process: subprocess.Popen[str]) -> None:
    """The server exits 0 by itself, having written no traceback."""
    assert process.wait(10) == 0
    assert process.stderr is not None
    err = process.stderr.read()
    assert "Traceback" not in err
    assert err.startswith("hermesos serve: serving 11 tools over stdio")


CALL = {"jsonrpc": "2.0", "method": "tools/call"}


def test_stdio_survives_what_a_client_sends_and_stops_when_stdin_ends_mid_call(
    env: Env, raw: subprocess.Popen[str]
) -> None:
    """Raw JSON lines: not JSON, bad parameters, an unknown method; then stdin closes during a slow call."""
    _line(raw, "this is not JSON")
    assert _answer(raw) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "the message is not JSON (Expecting value); send one JSON-RPC message a line",
        },
    }
    _line(raw, "[1, 2, 3]")
    assert _answer(raw)["error"]["code"] == -32600
    _line(raw, {**CALL, "id": 2, "params": {"name": "math_eval", "arguments": [1, 2]}})
    assert _answer(raw)["error"]["code"] == -32602  # the SDK's INVALID_PARAMS, no traceback
    _line(raw, {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"})
    assert _answer(raw)["error"]["code"] == -32601
    _line(raw, {**CALL, "id": 4, "params": {"name": "math_eval", "arguments": {"expression": "2 + 2"}}})
    assert _answer(raw)["result"]["structuredContent"] == {"result": 4}
    _line(raw, {**CALL, "id": 5, "params": {"name": "unit_slow", "arguments": {"seconds": 30}}})
    env.wait_for("started")
    assert raw.stdin is not None
    raw.stdin.close()  # the client went away mid-call
    _stopped_quietly(raw)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        (
            '{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
            (None, -32600, "a request's id must be a string or an integer"),
        ),
        (
            '{"jsonrpc": "2.0", "id": true, "method": "ping"}',
            (None, -32600, "a request's id must be a string or an integer"),
        ),
        ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "x"}', (7, -32600, "params: Input should be")),
        ('{"jsonrpc": "2.0", "id": 8, "method": 5}', (8, -32600, "the message could not be read: ")),
        ('{"jsonrpc": "1.0", "id": 9, "method": "ping"}', (9, -32600, "the message could not be read: ")),
        ('[{"jsonrpc": "2.0", "id": 10, "method": "ping"}]', (None, -32600, "a batch (an array of messages)")),
        ('"ping"', (None, -32600, "a JSON-RPC message is a JSON object")),
        ("NaN", (None, -32700, "the message is not JSON (NaN is not a JSON value")),
        (
            '{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "math_eval", '
            '"arguments": {"expression": "\\ud800"}}}',
            ("s", -32700, "a string holds a lone surrogate"),
        ),
        (
            '{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "math_eval", '
            '"arguments": {"expression": ' + "1" * 5000 + "}}}",
            (11, -32700, "the message could not be read: "),
        ),
        (
            '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "math_eval", '
            '"arguments": {"expression": ' + "[" * 300 + "]" * 300 + "}}}",
            (12, -32700, "the message could not be read: "),
        ),
    ],
)
def test_stdio_answers_every_line_the_sdk_cannot_read_under_its_id_where_one_was_read(
    raw: subprocess.Popen[str], line: str, answer: tuple[Any, int, str]
) -> None:
    """The SDK drops what it cannot read, and the client waits for ever: each is answered, and the session goes on."""
    _line(raw, line)
    got = _answer_soon(raw)
    ident, code, said = answer
    assert (got["id"], got["error"]["code"]) == (ident, code), got
    assert said in got["error"]["message"], got
    _line(raw, {"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert _answer_soon(raw) == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_stdio_answers_what_was_read_before_stdin_ended(raw: subprocess.Popen[str]) -> None:
    """Requests written, then stdin closed at once (``printf ... | hermesos serve``): every one is answered."""
    assert raw.stdin is not None
    lines = [
        json.dumps({**CALL, "id": n, "params": {"name": "math_eval", "arguments": {"expression": f"{n} * 2"}}})
        for n in range(2, 42)
    ]
    raw.stdin.write("\n".join(lines) + "\n")
    raw.stdin.close()
    assert raw.stdout is not None
    answers = {answer["id"]: answer for answer in map(json.loads, raw.stdout.read().splitlines())}
    assert sorted(answers) == list(range(2, 42))
    assert all(answers[n]["result"]["structuredContent"] == {"result": n * 2} for n in answers)
    _stopped_quietly(raw)


def test_stdio_refuses_a_request_past_the_most_in_flight_and_takes_them_again_once_answered(
    env: Env, raw: subprocess.Popen[str]
) -> None:
    from hermes_core.serve._stdio import IN_FLIGHT_MAX

    for n in range(IN_FLIGHT_MAX):
        _line(raw, {**CALL, "id": n + 2, "params": {"name": "unit_slow", "arguments": {"seconds": 3}}})
    _line(raw, {"jsonrpc": "2.0", "id": "one-more", "method": "ping"})
    refused = _answer_soon(raw)
    assert refused["id"] == "one-more"
    assert refused["error"]["code"] == -32000
    assert f"already answering {IN_FLIGHT_MAX} requests" in refused["error"]["message"]
    answered = {_answer_soon(raw)["id"] for _ in range(IN_FLIGHT_MAX)}
    assert answered == set(range(2, IN_FLIGHT_MAX + 2))
    _line(raw, {"jsonrpc": "2.0", "id": "again", "method": "ping"})
    assert _answer_soon(raw) == {"jsonrpc": "2.0", "id": "again", "result": {}}


def test_stdio_stops_reading_a_client_that_does_not_read_its_answers(raw: subprocess.Popen[str]) -> None:
    """A client writing requests without reading answers cannot make the server hold more than a bounded number.

    Before, 5 MB of pings held 4.8 GB: every request read became a task waiting to write its answer. The pings
    all have the same id, as a careless client's may: the bound counts requests, not ids.
    """
    assert raw.stdin is not None
    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n' * 1000
    written = 0

    def write() -> None:
        nonlocal written
        with contextlib.suppress(OSError, ValueError):
            for _ in range(100):  # 100,000 pings: the server stops reading long before
                raw.stdin.buffer.write(ping)  # type: ignore[union-attr]
                raw.stdin.buffer.flush()  # type: ignore[union-attr]
                written += 1000

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    # Blocked once what it has written stops growing for a while (before, the server read all 100,000).
    seen, still, deadline = -1, time.monotonic(), time.monotonic() + 30
    while writer.is_alive() and time.monotonic() - still < 1.5 and time.monotonic() < deadline:
        if written != seen:
            seen, still = written, time.monotonic()
        time.sleep(0.1)
    assert writer.is_alive()  # blocked: the server no longer reads
    assert written < 100_000
    status = Path(f"/proc/{raw.pid}/status").read_text() if sys.platform == "linux" else ""
    if status:
        rss = int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])
        assert rss < 200_000, f"the server holds {rss} kB"  # about 75,000 here; 490,000 after 10,000 pings before
    os.killpg(raw.pid, signal.SIGKILL)
    writer.join(10)
    with contextlib.suppress(OSError):
        raw.stdin.close()  # what the blocked write left in the buffer has nowhere to go


def test_stdio_stops_quietly_when_the_client_dies_mid_call(env: Env, raw: subprocess.Popen[str]) -> None:
    """The answer cannot be written (a broken pipe), and then stdin ends: no traceback, exit 0."""
    _line(raw, {**CALL, "id": 2, "params": {"name": "unit_slow", "arguments": {"seconds": 0.2}}})
    assert raw.stdout is not None
    raw.stdout.close()  # the answer has nowhere to go
    env.wait_for("finished")
    _line(raw, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert raw.stdin is not None
    raw.stdin.close()
    _stopped_quietly(raw)


# -- Streamable HTTP ----------------------------------------------------------------------------------


def test_http_lists_calls_and_applies_grants_and_the_timeout(env: Env, http_server: Callable[..., HTTPServer]) -> None:
    server = http_server("--grant", "fs:read", "--timeout", "0.5")

    async def scenario() -> None:
        for mode in ("auto", "legacy"):
            async with Client(server.url, mode=mode) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"fs_read", "math_eval", "unit_slow"} <= names
                read = await client.call_tool("fs_read", {"path": "notes.txt"})
                assert not read.is_error
                assert read.structured_content is not None
                assert read.structured_content["content"] == "buy milk\n"
                assert json.loads(text(read)) == read.structured_content
                # --grant fs:read grants that, and nothing else; a client cannot grant itself more.
                denied = error_of(
                    await client.call_tool("fs_write", {"path": "x.txt", "content": "x", "grants": ["*"]})
                )
                assert denied["code"] == "PERMISSION_DENIED"
                denied = error_of(await client.call_tool("fs_write", {"path": "x.txt", "content": "x"}))
                assert denied["code"] == "PERMISSION_DENIED"
                # Ended at its limit: a call that waited out the 30 s would leave the mark "finished" (below).
                late = error_of(await client.call_tool("unit_slow", {"seconds": 30}))
                assert (late["code"], late["reason"], late["retryable"]) == ("TOOL_FAILED", "timeout", True)
                assert late["message"].startswith("unit_slow did not finish within 0.5 seconds.")

    run(scenario)
    assert env.marks() == {"started", "cancelled"}  # the timeout cancelled the handler
    assert not (env.workspace / "x.txt").exists()


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), error.read()


LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def test_http_on_loopback_refuses_other_hosts_and_oversized_bodies(
    env: Env, http_server: Callable[..., HTTPServer]
) -> None:
    server = http_server()
    status, _, body = _post(server.url, LIST, {**JSON_HEADERS, "Host": f"localhost:{server.port}"})
    assert status == 200
    assert b'"math_eval"' in body
    # DNS rebinding: a page on another name that resolves to this machine.
    status, _, _ = _post(server.url, LIST, {**JSON_HEADERS, "Host": f"evil.example:{server.port}"})
    assert status == 421
    status, _, _ = _post(server.url, LIST, {**JSON_HEADERS, "Origin": "https://evil.example"})
    assert status == 403
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.putrequest("POST", "/mcp")
        for key, value in JSON_HEADERS.items():
            connection.putheader(key, value)
        connection.putheader("Content-Length", str(64 * 1024 * 1024))
        connection.endheaders()
        assert connection.getresponse().status == 413  # refused before the body is read
    finally:
        connection.close()


def test_http_off_loopback_needs_the_token_on_every_request(env: Env, http_server: Callable[..., HTTPServer]) -> None:
    token = "correct-horse-battery-staple"
    server = http_server("--host", "0.0.0.0", "--token-env", "MCP_TOKEN", extra_env={"MCP_TOKEN": token})
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token}, {"Authorization": "Basic x"}):
        status, answer_headers, body = _post(server.url, LIST, {**JSON_HEADERS, **headers})
        assert status == 401, headers
        assert answer_headers["www-authenticate"].startswith("Bearer")
        assert json.loads(body)["error"] == "invalid_token"
    for path in ("/", "/mcp/", "/other"):  # every request, whatever it asks for
        status, _, _ = _post(server.url.replace("/mcp", path), LIST, JSON_HEADERS)
        assert status == 401
    status, _, body = _post(server.url, LIST, {**JSON_HEADERS, "Authorization": f"Bearer {token}"})
    assert status == 200
    assert b'"math_eval"' in body

    async def scenario() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
            Client(streamable_http_client(server.url, http_client=http)) as client,
        ):
            assert text(await client.call_tool("math_eval", {"expression": "3 * 3"})) == "9"

    run(scenario)


def _get(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """The status, the headers (named in lower case) and the body of *method* *url*."""
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_http_health_check_needs_no_token_and_tells_nothing_but_that_it_serves(
    env: Env, http_server: Callable[..., HTTPServer]
) -> None:
    """GET /healthz: 200 while the server serves, for what watches replicas (a probe, a HEALTHCHECK), token or not."""
    token = "correct-horse-battery-staple"
    server = http_server("--host", "0.0.0.0", "--token-env", "MCP_TOKEN", extra_env={"MCP_TOKEN": token})
    health = server.url.replace("/mcp", "/healthz")
    status, headers, body = _get(health)
    assert (status, json.loads(body)) == (200, {"status": "serving"})
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store"
    status, _, body = _get(health, "HEAD")
    assert (status, body) == (200, b"")
    status, headers, body = _post(health, b"{}", JSON_HEADERS)
    assert status == 405
    assert {k.lower(): v for k, v in headers.items()}["allow"] == "GET, HEAD"
    # Nothing else is open without the token: not the endpoint, not a path that merely begins like the check.
    for path in ("/mcp", "/healthz/", "/healthz/x", "/healthzz", "/"):
        status, _, _ = _get(server.url.replace("/mcp", path))
        assert status == 401, path
    status, _, body = _post(server.url, LIST, {**JSON_HEADERS, "Authorization": f"Bearer {token}"})
    assert status == 200
    assert b'"math_eval"' in body


def test_http_answers_a_get_stream_at_once_so_silent_streams_cannot_take_every_connection(
    env: Env, http_server: Callable[..., HTTPServer]
) -> None:
    """Stateless, the server has nothing to send on a GET stream; held open, eight of them took all eight slots."""
    server = http_server(extra_env={"HERMESOS_SERVE_MAX_CONNECTIONS": "8"})
    held = []
    for _ in range(20):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/mcp", headers={"Accept": "text/event-stream", "Host": f"127.0.0.1:{server.port}"})
        response = connection.getresponse()
        assert response.status == 405
        assert response.getheader("Allow") == "POST"
        assert json.loads(response.read())["error"]["message"].startswith("Method Not Allowed: this server keeps no")
        held.append(connection)  # kept open: a connection that says nothing more

    async def scenario() -> None:
        async with Client(server.url) as client:
            assert text(await client.call_tool("math_eval", {"expression": "6 * 7"})) == "42"

    try:
        run(scenario)
    finally:
        for connection in held:
            connection.close()


def test_http_survives_a_client_that_leaves_mid_call(env: Env, http_server: Callable[..., HTTPServer]) -> None:
    server = http_server()

    async def leave() -> None:
        with anyio.move_on_after(30):
            async with Client(server.url) as client, anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "unit_slow", {"seconds": 30})
                await anyio.to_thread.run_sync(env.wait_for, "started")
                group.cancel_scope.cancel()
        # Leaving closed the response stream, which cancels the handler.
        await anyio.to_thread.run_sync(env.wait_for, "cancelled")

    async def again() -> None:
        async with Client(server.url) as client:
            assert text(await client.call_tool("math_eval", {"expression": "40 + 2"})) == "42"

    run(leave)
    run(again)
    assert "finished" not in env.marks()
    err = server.stop()
    assert "Traceback" not in err


# -- in process: usage errors, the listing, export --------------------------------------------------


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_public_address_without_a_token_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_main(capsys, "serve", "--transport", "http", "--host", "0.0.0.0")
    assert status == 2
    assert out == ""
    assert err == (
        "hermesos serve: error: 0.0.0.0 is not a loopback address: other machines could call the tools, "
        "so a bearer token is required (--token-file PATH or --token-env VARIABLE)\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--host", "127.0.0.1"], "hermesos serve: error: --host only applies to --transport http"),
        (
            ["--port", "0", "--token-env", "T"],
            "hermesos serve: error: --port and --token-env only apply to --transport http",
        ),
        (
            ["--transport", "http", "--token-env", "HERMESOS_TEST_NO_SUCH_VARIABLE"],
            "hermesos serve: error: --token-env names HERMESOS_TEST_NO_SUCH_VARIABLE, which is not set or empty",
        ),
    ],
)
def test_serve_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    status, _, err = run_main(capsys, "serve", *argv)
    assert (status, err) == (2, message + "\n")


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(capsys, "serve", "--transport", "http", "--port", "70000")
    assert status == 2
    assert err.endswith(
        "hermesos serve: argument --port: must be a port number from 0 (any free port) to 65535, got '70000'\n"
    )


def test_a_port_in_use_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "files").mkdir()
    monkeypatch.setenv("HERMESOS_FS_ROOT", str(tmp_path / "files"))  # hermesos-fs has no default root
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, _, err = run_main(capsys, "serve", "--transport", "http", "--port", str(port))
    assert (status, err) == (
        2,
        f"hermesos serve: error: cannot listen on 127.0.0.1 port {port}: Address already in use\n",
    )


def test_an_empty_token_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "token").write_text("\n")
    status, _, err = run_main(capsys, "serve", "--transport", "http", "--token-file", str(tmp_path / "token"))
    assert (status, err) == (2, f"hermesos serve: error: --token-file {tmp_path / 'token'} is empty\n")


def test_a_token_file_is_read_bounded_never_waited_on(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A FIFO hung the command before it served; /dev/zero made a token of NUL characters no client can send."""
    fifo, big, odd = tmp_path / "fifo", tmp_path / "big", tmp_path / "odd"
    os.mkfifo(fifo)
    big.write_text("x" * 5000)
    odd.write_bytes(b"to ken\x00")
    for path, said in (
        (fifo, "could not be read: it is a FIFO (named pipe), not a regular file; a token file is a regular file"),
        (Path("/dev/zero"), "could not be read: it is a character device, not a regular file; a token file is"),
        (big, "is larger than 4096 bytes, the limit for a token file; a bearer token is a line of text"),
        (odd, "holds characters a bearer token cannot have: a token is one word of visible ASCII"),
    ):
        status, _, err = run_main(capsys, "serve", "--transport", "http", "--token-file", str(path))
        assert status == 2
        assert err.startswith(f"hermesos serve: error: --token-file {path} {said}"), err


def test_serve_without_the_sdk_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp raises ImportError
    status, _, err = run_main(capsys, "serve")
    assert status == 2
    assert err == "hermesos serve: error: serving over MCP needs the MCP SDK: pip install 'hermesos-core[mcp]'\n"


def test_loopback_addresses() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST"]))
    assert not any(map(is_loopback, ["0.0.0.0", "::", "192.168.1.2", "example.com", ""]))
    check_exposure("127.0.0.1", None)
    check_exposure("0.0.0.0", "token")
    with pytest.raises(ValueError, match="not a loopback address"):
        check_exposure("::", "")


async def _add(args: dict[str, int]) -> int:
    return args["a"] + args["b"]


def test_mcp_tools_wraps_what_is_not_an_object_and_moves_its_defs_up() -> None:
    point = s.object({"x": s.number(), "y": s.number()})
    runtime = Runtime(
        [
            define_tool(
                name="geo.mid",
                description="The middle of a and b; geo.far is the other one.",
                version="1.0.0",
                input=s.object({"a": s.ref("point"), "b": s.ref("point")}),
                output=s.nullable(s.ref("point")),
                handler=lambda args: None,
                hints=ToolHints(title="Middle point", read_only=True),
            ),
            define_tool(
                name="geo.far",
                description="Far.",
                version="1.0.0",
                input=s.ref("pair"),
                output=s.ref("point"),
                handler=lambda args: {"x": 0, "y": 0},
            ),
        ],
        schemas={"point": point, "pair": s.object({"a": s.ref("point")})},
    )
    mid, far = mcp_tools(runtime)
    point_json = {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    assert mid == {
        "name": "geo_mid",
        "title": "Middle point",
        "description": "The middle of a and b; geo_far is the other one.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/point"}, "b": {"$ref": "#/$defs/point"}},
            "required": ["a", "b"],
            "additionalProperties": False,
            "$defs": {"point": point_json},
        },
        "outputSchema": {
            "type": "object",
            "properties": {"result": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]}},
            "required": ["result"],
            "$defs": {"point": point_json},
        },
        "annotations": {"title": "Middle point", "readOnlyHint": True},
    }
    # A ref to an object is followed: the object is at the root, not wrapped.
    assert far["inputSchema"]["properties"] == {"a": {"$ref": "#/$defs/point"}}
    assert far["outputSchema"] == point_json
    assert list(far) == ["name", "description", "inputSchema", "outputSchema"]


def test_structured_results_follow_the_listing_in_process() -> None:
    """Through the SDK's in-memory transport: the wrapped output validates against the listed schema."""
    runtime = Runtime(
        [
            define_tool(
                name="math.add",
                description="Add.",
                version="1.0.0",
                input=s.object({"a": s.integer(), "b": s.integer()}),
                output=s.integer(),
                handler=_add,
            )
        ]
    )
    from hermes_core.serve import mcp_server

    async def scenario() -> None:
        async with Client(mcp_server(runtime), mode="legacy") as client:
            result = await client.call_tool("math_add", {"a": 2, "b": 3})  # the client checks it
            assert (text(result), result.structured_content) == ("5", {"result": 5})
        async with Client(mcp_server(runtime)) as client:
            result = await client.call_tool("math_add", {"a": 2, "b": 3})
            assert (text(result), result.structured_content) == ("5", {"result": 5})

    asyncio.run(scenario())


MATH_DESCRIPTION = (
    "Evaluate an arithmetic expression and return its value as a number.\n\n"
    "Supports integers and decimals, + - * / // % ** (power) and parentheses, the functions abs, round, min, "
    "max, sqrt, floor, ceil, exp, log (natural, or log(x, base)), sin, cos, tan (radians), and the constants "
    "pi and e. Integer arithmetic is exact (up to 1,000 digits); / always gives a decimal. No variables, "
    "strings or other Python."
)
MATH_INPUT = {
    "type": "object",
    "properties": {
        "expression": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "Arithmetic as Python writes it, such as (2 + 3) * 4 or sqrt(2) / 2",
        }
    },
    "required": ["expression"],
    "additionalProperties": False,
}
MATH_STRICT_INPUT = {
    "type": "object",
    "properties": {
        "expression": {
            "type": "string",
            "description": "Arithmetic as Python writes it, such as (2 + 3) * 4 or sqrt(2) / 2",
        }
    },
    "required": ["expression"],
    "additionalProperties": False,
}
MATH_FUNCTION = {"name": "math_eval", "description": MATH_DESCRIPTION, "parameters": MATH_INPUT}
EXPORTED = {
    "openai": [{"type": "function", "function": MATH_FUNCTION}],
    "openai-responses": [{"type": "function", **MATH_FUNCTION, "strict": False}],
    "openai-strict": [
        {"type": "function", "function": {**MATH_FUNCTION, "parameters": MATH_STRICT_INPUT, "strict": True}}
    ],
    "anthropic": [{"name": "math_eval", "description": MATH_DESCRIPTION, "input_schema": MATH_INPUT}],
    "mcp": [
        {
            "name": "math_eval",
            "title": "Evaluate arithmetic",
            "description": MATH_DESCRIPTION,
            "inputSchema": MATH_INPUT,
            "outputSchema": {
                "type": "object",
                "properties": {
                    "result": {
                        "type": "number",
                        "description": "The value: an integer if every step was exact integer arithmetic, "
                        "else a decimal",
                    }
                },
                "required": ["result"],
            },
            "annotations": {
                "title": "Evaluate arithmetic",
                "readOnlyHint": True,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        }
    ],
}


@pytest.fixture
def only_math(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The bundled plugins, with hermesos-fs disabled and no policy file."""
    monkeypatch.setenv("HERMESOS_DISABLE_PLUGINS", "hermesos-fs")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    for name in ("HERMESOS_POLICY", "HERMESOS_GRANTS"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("only_math")
@pytest.mark.parametrize("format", list(EXPORTED))
def test_export_prints_each_format(capsys: pytest.CaptureFixture[str], format: str) -> None:  # noqa: A002
    status, out, err = run_main(capsys, "export", "--format", format)
    assert (status, err) == (0, "")
    assert json.loads(out) == EXPORTED[format]


def test_export_reports_what_a_format_cannot_express(
    capsys: pytest.CaptureFixture[str], site: Site, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    tags = (
        'define_tool(name="unit.tags", description="Tag.", version="1.0.0", '
        'input=s.object({"tags": s.record(s.string())}), handler=dict)'
    )
    site.install(site.plugin(f"@hookimpl\ndef hermes_tools():\n    return [{tags}]\n"))
    status, out, err = run_main(capsys, "export", "--format", "openai-strict")
    assert (status, out) == (7, "")
    assert err == (
        'INVALID_DEFINITION: tool "unit.tags": input cannot be given to OpenAI\'s strict mode: field "tags" is a '
        "record (s.record()), whose keys strict mode cannot leave open.\n"
    )
    status, out, _ = run_main(capsys, "export", "--format", "openai")
    assert status == 0
    assert json.loads(out)[-1]["function"]["name"] == "unit_tags"


def test_export_without_format_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run_main(capsys, "export")
    assert status == 2
    assert "the following arguments are required: --format" in err


def test_a_websocket_without_the_token_is_closed() -> None:
    from hermes_core.serve import mcp_http_app

    app = mcp_http_app(Runtime(), host="0.0.0.0", token="t0ken")
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(
        app({"type": "websocket", "path": "/mcp", "headers": [(b"authorization", b"Bearer nope")]}, receive, send)
    )
    assert sent == [{"type": "websocket.close", "code": 1008}]


def test_neither_import_nor_help_imports_the_sdk() -> None:
    script = (
        "import sys\n"
        "import hermes_core\n"
        "from hermes_core.cli import main\n"
        "for argv in (['--help'], ['serve', '--help'], ['export', '--help']):\n"
        "    main(argv)\n"
        "heavy = ('mcp', 'mcp_types', 'uvicorn', 'starlette', 'anyio', 'pydantic')\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & set(heavy)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
