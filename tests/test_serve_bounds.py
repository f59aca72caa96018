"""What a client of ``hermesos serve`` can cost it: each attack as it was made, against a real server process.

* over stdio, one line of 1 GiB (it held 1 GB of memory);
* over HTTP, 1,100 connections that never finish their headers (with 1,024
  file descriptors, every client was locked out for 60 s);
* over HTTP, a 5.9 MB request of 300,000 unexpected keys while another
  client lists the tools (that client waited 26.5 s).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

SERVE = [sys.executable, "-m", "hermes_core", "serve"]
MIB = 1024 * 1024
# Peak memory is read from a small wrapper that starts the command: on Linux, a child started from
# a large process (this one, late in a run) reports that process's peak as its own (vfork, then exec).
PEAK = (
    "import resource, subprocess, sys\n"
    "status = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n"
)
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """This process's environment, with no user configuration, policy or MCP server, and the fs root in *tmp_path*."""
    (tmp_path / "config").mkdir()
    (tmp_path / "root").mkdir()
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HERMESOS_FS_ROOT": str(tmp_path / "root"),
        "HERMESOS_GRANTS": "",
        "HERMESOS_POLICY": "",
        "HERMESOS_DISABLE_PLUGINS": "",
        "HERMESOS_MCP_CONFIG": "",
    }


def _line(stdin: Any, message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


# -- stdio: one message is at most 16 MiB, as an HTTP body is -----------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
def test_a_1_gib_line_over_stdio_is_refused_with_bounded_memory_and_the_session_goes_on(
    environ: dict[str, str], tmp_path: Path
) -> None:
    peak = tmp_path / "peak"
    process = subprocess.Popen(
        [sys.executable, "-c", PEAK, str(peak), *SERVE],
        env=environ,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()))  # type: ignore[union-attr]
    reader.start()
    try:
        _line(process.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
        assert json.loads(process.stdout.readline())["id"] == 1
        _line(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.monotonic()
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "')
        chunk = b"x" * MIB
        for _ in range(1024):  # 1 GiB, on one line
            process.stdin.write(chunk)
        process.stdin.write(b'"}}\n')
        _line(process.stdin, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        refused = json.loads(process.stdout.readline())
        assert refused == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "the message is larger than 16777216 bytes, the most this server reads in one message; "
                "it was not read: send smaller arguments",
            },
        }
        listed = json.loads(process.stdout.readline())
        assert listed["id"] == 3
        assert "math_eval" in {tool["name"] for tool in listed["result"]["tools"]}
        assert time.monotonic() - started < 60
        process.stdin.close()
        process.wait(60)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait(10)
        reader.join(10)
        process.stdout.close()
        process.stderr.close()
        if not process.stdin.closed:
            process.stdin.close()
    assert process.returncode == 0, errors
    assert b"Traceback" not in errors[0]
    # Unbounded, the line was held whole (1 GB); bounded, at most one 16 MiB message is.
    used = int(peak.read_text()) * 1024
    assert used < 300 * MIB, f"peak resident memory {used // MIB} MiB"


# -- HTTP: unfinished requests are closed, connections are capped ------------------------------------


class _Server:
    """``hermesos serve --transport http --port 0`` with 1,024 file descriptors, as the attack found it."""

    def __init__(self, environ: dict[str, str], **settings: str) -> None:
        import resource

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

        self.process = subprocess.Popen(
            [*SERVE, "--transport", "http", "--port", "0"],
            env={**environ, **settings},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=limit,  # noqa: PLW1509 - no threads run in this test process at this point that matter
            start_new_session=True,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        found = re.search(r"http://\S+/mcp", line)
        assert found is not None, line
        self.url = found.group()
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> str:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.communicate(timeout=10)[1] or ""


@pytest.fixture
def http_server(environ: dict[str, str]) -> Iterator[Any]:
    started: list[_Server] = []

    def start(**settings: str) -> _Server:
        server = _Server(environ, **settings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _post(url: str, message: dict[str, Any] | bytes, timeout: float = 30) -> dict[str, Any]:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        text = response.read().decode()
    if text.startswith(("event:", "data:")):  # an SSE stream of one message
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    answer: dict[str, Any] = json.loads(text)
    return answer


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _listed(url: str, seconds: float) -> float:
    """How long until tools/list is answered (retrying a refused connection), at most *seconds*."""
    started = time.monotonic()
    while True:
        try:
            assert "math_eval" in {tool["name"] for tool in _post(url, LIST, timeout=seconds)["result"]["tools"]}
            return time.monotonic() - started
        except OSError:
            if time.monotonic() - started > seconds:
                raise
            time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="file descriptor limits are POSIX")
def test_slowloris_connections_are_closed_and_never_lock_a_client_out(http_server: Any) -> None:
    server = http_server(HERMESOS_SERVE_HEADER_TIMEOUT="2")
    idle: list[socket.socket] = []
    try:
        for _ in range(1100):  # more than the server's 1,024 file descriptors
            sock = socket.create_connection(("127.0.0.1", server.port))
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Never: ending")  # no end of the head
            idle.append(sock)
        # Locked out for 60 s before; now at most 256 are served, the oldest unfinished one makes room.
        assert _listed(server.url, 60) < 30
        time.sleep(3)  # past the 2 s given for a head: every idle connection is closed by the server
        for sock in idle:
            sock.settimeout(5)
            with contextlib.suppress(ConnectionResetError):  # closed at once, with a reset
                assert sock.recv(1024) == b""
    finally:
        for sock in idle:
            sock.close()
    assert "Traceback" not in server.stop()


def test_a_body_that_never_ends_is_closed(http_server: Any) -> None:
    server = http_server(HERMESOS_SERVE_BODY_TIMEOUT="1")
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        # The body never comes: closed after the 1 s set, well before this 30 s (the default is 60 s).
        sock.settimeout(30)
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        sock.sendall(head + b"{")
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(1024) == b""


@pytest.mark.parametrize(
    ("variable", "value"),
    [("HERMESOS_SERVE_MAX_CONNECTIONS", "0"), ("HERMESOS_SERVE_HEADER_TIMEOUT", "forever")],
)
def test_a_malformed_serve_setting_is_refused_naming_it(environ: dict[str, str], variable: str, value: str) -> None:
    done = subprocess.run(
        [*SERVE, "--transport", "http", "--port", "0"],
        env={**environ, variable: value},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert variable in done.stderr
    assert "Traceback" not in done.stderr


# -- HTTP: a request of many unexpected keys does not hold another client ------------------------------


def test_a_request_of_300000_unexpected_keys_does_not_hold_another_clients_tools_list(http_server: Any) -> None:
    server = http_server()
    keys = {f"expressio{index:06d}": 1 for index in range(300_000)}  # each one close to a field: a "did you mean"
    arguments = {"expression": "1 + 1", **keys}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "math_eval", "arguments": arguments}}
    ).encode()
    assert len(body) > 5_900_000
    answers: list[dict[str, Any]] = []
    attack = threading.Thread(target=lambda: answers.append(_post(server.url, body, timeout=120)))
    attack.start()
    try:
        time.sleep(0.5)  # the request is in, its arguments are being checked
        assert _listed(server.url, 60) < 15  # it waited 26.5 s before
    finally:
        attack.join(120)
    (refused,) = answers
    result = refused["result"]
    assert result["isError"]
    assert result["_meta"]["io.github.hermesos-core/error"]["code"] == "INPUT_INVALID"
