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
    """``hermesos serve --transport http --port 0`` with 1,024 file descriptors, as the attack found it.

    What it writes on stderr after its URL is read as it comes (a server writing to a full pipe would stop), into
    :attr:`lines`.
    """

    def __init__(self, environ: dict[str, str], *options: str, **settings: str) -> None:
        import resource

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

        self.process = subprocess.Popen(
            [*SERVE, "--transport", "http", "--port", "0", *options],
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
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self.lines.extend, args=(self.process.stderr,), daemon=True)
        self._reader.start()

    def stop(self) -> str:
        """Kill the server if it still runs; all it wrote on stderr after its URL."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self._reader.join(10)
        assert self.process.stderr is not None
        self.process.stderr.close()
        return "".join(self.lines)

    def rss(self) -> int:
        """The server's resident memory, in bytes (Linux)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1]) * 1024


@pytest.fixture
def http_server(environ: dict[str, str]) -> Iterator[Any]:
    started: list[_Server] = []

    def start(*options: str, **settings: str) -> _Server:
        server = _Server(environ, *options, **settings)
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
    [
        ("HERMESOS_SERVE_MAX_CONNECTIONS", "0"),
        ("HERMESOS_SERVE_HEADER_TIMEOUT", "forever"),
        ("HERMESOS_SERVE_WRITE_TIMEOUT", "0"),
        ("HERMESOS_SERVE_MAX_BUFFER", "1024"),
        ("HERMESOS_SERVE_SHUTDOWN_TIMEOUT", "3601"),
    ],
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


# -- HTTP: a client that does not read its response ----------------------------------------------------

BIG = 2_000_000  # a file of 2 MB: its fs_read result is about 4 MB (its text and its structured content)
ESTABLISHED = 1  # tcpi_state, the first byte of the kernel's TCP_INFO


def _call(name: str, arguments: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.dumps(message).encode()


def _slow_reader(port: int, body: bytes) -> socket.socket:
    """A connection that sends a request and never reads its response (a receive buffer of 4 KiB, left full)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with contextlib.suppress(OSError):  # closed at once by a server serving as many as it takes
        sock.sendall(head + body)
    return sock


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed *sock*, seen without reading anything from it (the kernel's TCP state)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] != ESTABLISHED


def _started(sock: socket.socket) -> bool:
    """Whether the server has begun to send the result on *sock*, or closed it: seen without taking anything from it."""
    try:
        waiting = sock.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except OSError:  # reset
        return True
    return not waiting or len(waiting) > 1024  # closed, or past the response's head: its result


def _all_closed(sockets: list[socket.socket], seconds: float) -> int:
    """How many of *sockets* the server has closed, waiting up to *seconds* for all of them."""
    deadline = time.monotonic() + seconds
    while (closed := sum(map(_closed, sockets))) < len(sockets) and time.monotonic() < deadline:
        time.sleep(0.1)
    return closed


def _tally(lines: list[str]) -> int:
    """The count of connections closed so far, as the server's last warning says."""
    counts = [int(found.group(1)) for line in lines if (found := re.search(r"\((\d+) connections? closed", line))]
    return max(counts, default=0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO and resident memory as Linux gives them")
def test_clients_that_never_read_their_responses_are_closed_after_the_write_timeout(
    http_server: Any, environ: dict[str, str]
) -> None:
    """Before, 300 such clients took the server from 69 MB to 5 GB and locked every other client out.

    Each connection, its response and what its request had made were held for as long as the client kept it
    open: 200 of them here held 2.5 GB. Now each is closed once its client has left the response untaken for
    the write timeout, and the memory is used again for the next ones.
    """
    Path(environ["HERMESOS_FS_ROOT"], "big.txt").write_text("x" * BIG)
    server = http_server("--grant", "fs:read", HERMESOS_SERVE_WRITE_TIMEOUT="1", HERMESOS_FS_MAX_READ_BYTES=str(BIG))
    read = _call("fs_read", {"path": "big.txt"})
    answer = _post(server.url, read, timeout=60)  # a client that reads gets the whole result
    assert answer["result"]["structuredContent"]["content"] == "x" * BIG
    before = server.rss()
    held: list[socket.socket] = []
    try:
        for _ in range(10):  # 200 connections, 20 at a time, all kept open
            held += [_slow_reader(server.port, read) for _ in range(20)]
            assert _listed(server.url, 60) < 60  # another client is served all along
        assert _all_closed(held, 60) == len(held)
        used = server.rss() - before
        assert used < 800 * MIB, f"the server holds {used // MIB} MiB more"
        assert _listed(server.url, 60) < 60  # and afterwards
    finally:
        for sock in held:
            sock.close()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(30) == 0
    err = server.stop()
    assert "Traceback" not in err
    assert "its client left" in err
    assert "untaken for 1 s (HERMESOS_SERVE_WRITE_TIMEOUT)" in err
    assert _tally(server.lines) == len(held)  # each one counted, the last ones when the server stopped


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO as Linux gives it")
def test_clients_that_never_read_cannot_take_every_connection(http_server: Any, environ: dict[str, str]) -> None:
    """With 32 connections allowed, 40 clients not reading locked every other one out for as long as they stayed.

    A connection whose client does not take its response is waiting on its client, as one that has not sent a
    request's head is: a new connection closes the one that has waited longest, well before the write timeout.
    """
    Path(environ["HERMESOS_FS_ROOT"], "big.txt").write_text("x" * BIG)
    server = http_server(
        "--grant",
        "fs:read",
        HERMESOS_SERVE_MAX_CONNECTIONS="32",
        HERMESOS_SERVE_WRITE_TIMEOUT="600",
        HERMESOS_FS_MAX_READ_BYTES=str(BIG),
    )
    held = [_slow_reader(server.port, _call("fs_read", {"path": "big.txt"})) for _ in range(40)]
    try:
        deadline = time.monotonic() + 120
        while not all(map(_started, held)):  # every request run and its result begun, or its connection closed
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert _listed(server.url, 60) < 60  # before: refused until the 60 s ran out
        assert _listed(server.url, 60) < 60
    finally:
        for sock in held:
            sock.close()
    err = server.stop()
    assert "32 connections were open (HERMESOS_SERVE_MAX_CONNECTIONS), and its client had kept it waiting" in err
    assert "Traceback" not in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO as Linux gives it")
def test_a_response_waiting_past_the_buffer_bound_closes_its_connection_at_once(
    http_server: Any, environ: dict[str, str]
) -> None:
    """A connection may hold at most HERMESOS_SERVE_MAX_BUFFER bytes waiting to be sent, however long its timeout."""
    size = 4_000_000  # an 8 MB result, most of which the kernel does not take for a client not reading
    Path(environ["HERMESOS_FS_ROOT"], "big.txt").write_text("x" * size)
    Path(environ["HERMESOS_FS_ROOT"], "small.txt").write_text("x" * 100_000)
    server = http_server(
        "--grant",
        "fs:read",
        HERMESOS_SERVE_MAX_BUFFER=str(MIB),
        HERMESOS_SERVE_WRITE_TIMEOUT="600",
        HERMESOS_FS_MAX_READ_BYTES=str(size),
    )
    small = _post(server.url, _call("fs_read", {"path": "small.txt"}), timeout=60)  # within the bound: sent
    assert small["result"]["structuredContent"]["content"] == "x" * 100_000
    held = [_slow_reader(server.port, _call("fs_read", {"path": "big.txt"})) for _ in range(10)]
    try:
        assert _all_closed(held, 60) == len(held)  # not after the 600 s of the write timeout
        assert _listed(server.url, 60) < 60
    finally:
        for sock in held:
            sock.close()
    err = server.stop()
    assert re.search(r"\d+ bytes of its responses waited to be sent, more than the 1048576 a connection may hold", err)
    assert "(HERMESOS_SERVE_MAX_BUFFER)" in err
    assert "Traceback" not in err


CHATTY = '''
import asyncio
from hermes_core import CallContext, hookimpl, tool

@tool(name="unit.chatty", version="1.0.0")
async def chatty(count: int, ctx: CallContext) -> int:
    """Log count messages of 1 KB, each its own, letting the server send them as it goes.

    Args:
        count: how many.
    """
    for n in range(count):
        ctx.log("info", f"{n:09d}" + "x" * 1000)
        if n % 100 == 0:
            await asyncio.sleep(0)
    return count

@hookimpl
def hermes_tools():
    return [chatty]
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="TCP_INFO and resident memory as Linux gives them")
def test_the_notices_of_a_call_whose_client_does_not_read_them_are_bounded(
    http_server: Any, environ: dict[str, str], tmp_path: Path
) -> None:
    """A streamed response is many writes: a call's log messages waited for its client without limit.

    300,000 of them, of 1 KB each, for a client that did not read: 400 MB more, until the client left.
    """
    site = tmp_path / "site"
    (site / "hermesos_unit_chatty-1.0.0.dist-info").mkdir(parents=True)
    (site / "hermesos_unit_chatty.py").write_text(CHATTY)
    (site / "hermesos_unit_chatty-1.0.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hermesos-unit-chatty\nVersion: 1.0.0\n"
    )
    (site / "hermesos_unit_chatty-1.0.0.dist-info" / "entry_points.txt").write_text(
        "[hermesos.plugins]\nchatty = hermesos_unit_chatty\n"
    )
    environ["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    server = http_server(HERMESOS_SERVE_WRITE_TIMEOUT="5")
    # Log messages are sent to a client of the 2025 protocol over stateless HTTP: every level.
    hello = {"Mcp-Protocol-Version": "2025-11-25", "Content-Type": "application/json"}
    call = _call("unit_chatty", {"count": 50})
    request = urllib.request.Request(
        server.url, data=call, headers={**hello, "Accept": "application/json, text/event-stream"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:  # a client that reads gets every one
        events = [line for line in response.read().decode().splitlines() if line.startswith("data:")]
    assert [json.loads(line[5:]).get("method") for line in events] == ["notifications/message"] * 50 + [None]
    before = server.rss()
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        body = _call("unit_chatty", {"count": 300_000})
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
            "Mcp-Protocol-Version: 2025-11-25\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        sock.sendall(head + body)
        deadline = time.monotonic() + 60
        while not any("notices were not sent" in line for line in server.lines) and time.monotonic() < deadline:
            time.sleep(0.1)  # until the call has ended (before, its notices waited for as long as the client stayed)
        used = server.rss() - before
    assert used < 100 * MIB, f"the server holds {used // MIB} MiB more"
    err = server.stop()
    found = re.search(r"unit_chatty: (\d+) of its progress and log notices were not sent: its client was not", err)
    assert found is not None, err
    assert 290_000 < int(found.group(1)) < 300_000  # all but the thousand that waited, and those the kernel took
