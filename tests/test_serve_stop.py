"""How ``hermesos serve --transport http`` stops: Ctrl-C as it starts, SIGTERM or Ctrl-C while it serves.

Each test runs the real command in a process of its own, with a fixture plugin
where it needs one: an import that takes its time, a resource that opens
slowly, a tool that sleeps. The attack that found these: SIGINT early in
``serve`` left it alive 4 s later; stopped as it started, it could also end
with a traceback and status 1 (an interrupt that the code it landed in made
into another error).
"""

from __future__ import annotations

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
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Site

pytest.importorskip("mcp")

pytestmark = pytest.mark.usefixtures("no_server_outlives_its_test")  # conftest's

SERVE = [sys.executable, "-m", "hermes_core", "serve", "--transport", "http", "--port", "0"]
INTERRUPTED = "hermesos: interrupted\n"

# Marks a file in HERMESOS_TEST_MARKERS when it gets somewhere; the test waits for the mark.
MARK = """
import os
from pathlib import Path

def mark(name):
    Path(os.environ["HERMESOS_TEST_MARKERS"], name).write_text(name)
"""

SLOW_IMPORT = MARK + "\nimport time\nmark('importing')\ntime.sleep(60)\n"

SLOW_OPEN = (
    MARK
    + """
import time

class Slow:
    def open(self):
        mark("opening")
        time.sleep(60)

    def close(self):
        mark("closed")

@hookimpl
def hermes_resources():
    return [Slow()]
"""
)

SLEEPER = (
    MARK
    + """
import asyncio

async def nap(args):
    mark("started")
    try:
        await asyncio.sleep(args["seconds"])
    except asyncio.CancelledError:
        mark("cancelled")
        raise
    mark("finished")
    return args["seconds"]

@hookimpl
def hermes_tools():
    return [define_tool(name="unit.nap", description="Sleep.", version="1.0.0", handler=nap,
                        input=s.object({"seconds": s.number(minimum=0)}), output=s.number())]
"""
)


class Started:
    """``hermesos serve --transport http`` in its own process group, its stderr read as it comes."""

    def __init__(self, site: Site, markers: Path, **settings: str) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
        environment.update(
            PYTHONPATH=os.pathsep.join([str(site.path), *filter(None, [os.environ.get("PYTHONPATH")])]),
            XDG_CONFIG_HOME=str(markers.parent / "config"),  # no user policy or MCP servers
            HERMESOS_FS_ROOT=str(site.path / "fs-root"),
            HERMESOS_TEST_MARKERS=str(markers),
            **settings,
        )
        self.markers = markers
        self.process = subprocess.Popen(
            SERVE,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        assert self.process.stderr is not None
        self._reader = threading.Thread(target=self.lines.extend, args=(self.process.stderr,), daemon=True)
        self._reader.start()

    def url(self) -> str:
        """The URL it printed, once it has (a wait, not a timed assertion)."""
        deadline = time.monotonic() + 60
        while not (found := re.search(r"http://\S+/mcp", "".join(self.lines[:1]))):
            assert self.process.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "no URL within 60 s"
            time.sleep(0.02)
        return found.group()

    def wait_for(self, mark: str) -> None:
        deadline = time.monotonic() + 60
        while not (self.markers / mark).exists():
            assert self.process.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, f"no {mark!r} mark within 60 s"
            time.sleep(0.02)

    def stopped(self, how: signal.Signals, seconds: float = 10) -> tuple[int, str, float]:
        """Send *how*; its status, all it wrote on stderr, and how long it took to exit (at most *seconds*)."""
        started = time.monotonic()
        self.process.send_signal(how)
        try:
            status = self.process.wait(seconds)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {seconds} s after {how.name}: {''.join(self.lines)}")
        took = time.monotonic() - started
        self._reader.join(10)
        return status, "".join(self.lines), took

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
        self._reader.join(10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture
def serve(site: Site, tmp_path: Path) -> Iterator[Any]:
    markers = tmp_path / "markers"
    markers.mkdir()
    (tmp_path / "config").mkdir()
    started: list[Started] = []

    def start(*plugins: str, **settings: str) -> Started:
        for source in plugins:
            site.install(site.plugin(source))
        server = Started(site, markers, **settings)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


def _escaped_main(err: str) -> bool:
    """Whether an interrupt's traceback went through the command's main(): hermesos let it escape."""
    return bool(re.search(r'hermes_core[/\\]cli[/\\]__init__\.py", line \d+, in _?main\n', err))


# -- Ctrl-C as it starts ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["importing a plugin", "opening a resource", "serving"])
def test_ctrl_c_as_serve_starts_ends_it_at_once_in_one_line(serve: Any, where: str) -> None:
    if where == "importing a plugin":
        server = serve(SLOW_IMPORT)
        server.wait_for("importing")
    elif where == "opening a resource":
        server = serve(SLOW_OPEN)
        server.wait_for("opening")
    else:
        server = serve()
        server.url()
    status, err, _ = server.stopped(signal.SIGINT)
    assert status == 130
    if where == "serving":
        assert err.splitlines()[1:] == ["hermesos: interrupted"]  # after the line with the URL
    else:
        assert err == INTERRUPTED
    if where == "opening a resource":
        assert (server.markers / "closed").exists()  # what began to open is closed on the way out


@pytest.mark.parametrize("delay", [0, 0.1, 0.2, 0.3, 0.5, 0.8])
def test_ctrl_c_at_any_moment_of_the_start_ends_serve_promptly_without_a_traceback(serve: Any, delay: float) -> None:
    """Stopped as it started, serve ended with a traceback and status 1 where the interrupt became another error.

    Before its main() runs, the interrupt is the interpreter's own to handle (the process ends at once, with
    Python's message, or with no word if the signal came before Python's handler was set): hermesos is not
    running yet. From main() on, whatever the interrupt became, the command ends with one line, and status 130.
    (Or by the signal itself, which a shell reports as 130 too: Python 3.11 ends so a process whose interrupt
    landed in code run by exec(), such as a dataclass's generated methods, however it was handled.)
    """
    server = serve()
    time.sleep(delay)
    status, err, _ = server.stopped(signal.SIGINT)
    assert not _escaped_main(err), err
    if INTERRUPTED in err:  # main() ran, and saw it
        assert status in (130, -signal.SIGINT), (status, err)
        assert err in (INTERRUPTED, "".join(server.lines[:1]) + INTERRUPTED), err  # after the URL, if it was printed
    else:  # before main(): the interpreter's
        assert status in (-signal.SIGINT, 1), (status, err)
        assert err == "" or "KeyboardInterrupt" in err, (status, err)


# -- stopping while it serves ------------------------------------------------------------------------------


def _slow_reader(port: int) -> socket.socket:
    """A connection that asks for the tools and never reads its answer (a receive buffer of 4 KiB, left full)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "fs_read",
                       "arguments": {"path": "big.txt"}}}).encode()  # fmt: skip
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    sock.sendall(head + body)
    return sock


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", maxsplit=1)[0])


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_clients_not_reading_do_not_hold_a_stopping_server(serve: Any, site: Site, how: signal.Signals) -> None:
    """Their connections are closed at once, not given the time to finish that the requests in flight have.

    Before, a stopping server waited for them until its graceful-shutdown time ran out: "still alive 4 s later".
    """
    (site.path / "fs-root" / "big.txt").write_text("x" * 2_000_000)  # a result of about 4 MB, left unread
    server = serve(
        HERMESOS_GRANTS="fs:read",
        HERMESOS_FS_MAX_READ_BYTES="2000000",
        HERMESOS_SERVE_WRITE_TIMEOUT="600",
        HERMESOS_SERVE_SHUTDOWN_TIMEOUT="60",
    )
    port = _port(server.url())
    held = [_slow_reader(port) for _ in range(10)]
    try:
        deadline = time.monotonic() + 60
        while not all(_answered(sock) for sock in held):  # each one's result begun, and left waiting
            assert time.monotonic() < deadline
            time.sleep(0.1)
        status, err, took = server.stopped(how, seconds=50)
    finally:
        for sock in held:
            sock.close()
    assert status == (130 if how == signal.SIGINT else 0)
    assert took < 30, f"{took:.1f} s: it waited for clients that were not reading"  # its shutdown time is 60 s
    assert "graceful shutdown exceeded" not in err  # uvicorn's word for having waited out the whole time
    assert "Traceback" not in err


def _answered(sock: socket.socket) -> bool:
    """Whether the server has begun to send the result on *sock*, seen without taking anything from it."""
    try:
        return len(sock.recv(4096, socket.MSG_PEEK | socket.MSG_DONTWAIT)) > 1024  # past the head: the result
    except BlockingIOError:
        return False


def _call(url: str, seconds: float) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "unit_nap", "arguments": {"seconds": seconds}}}  # fmt: skip
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read().decode()
    answer: dict[str, Any] = json.loads(next(line[5:] for line in text.splitlines() if line.startswith("data:")))
    return answer


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            return False
    except ConnectionRefusedError:
        return True


@pytest.mark.parametrize(("how", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_stopping_server_takes_no_new_connection_and_finishes_the_calls_in_flight(
    serve: Any, how: signal.Signals, status: int
) -> None:
    server = serve(SLEEPER, HERMESOS_SERVE_SHUTDOWN_TIMEOUT="60")
    url = server.url()
    answers: list[dict[str, Any]] = []
    caller = threading.Thread(target=lambda: answers.append(_call(url, 3)))
    caller.start()
    try:
        server.wait_for("started")
        server.process.send_signal(how)
        deadline = time.monotonic() + 10
        while not _refused(_port(url)):  # it stops taking connections at once
            assert time.monotonic() < deadline, "still taking connections"
            time.sleep(0.05)
        assert server.process.wait(60) == status
    finally:
        caller.join(60)
    (answer,) = answers  # the call in flight was finished, and answered
    assert answer["result"]["structuredContent"] == {"result": 3}
    assert (server.markers / "finished").exists()
    assert "Traceback" not in "".join(server.lines)


def test_a_call_longer_than_the_shutdown_timeout_is_cancelled(serve: Any) -> None:
    server = serve(SLEEPER, HERMESOS_SERVE_SHUTDOWN_TIMEOUT="1")
    url = server.url()
    failures: list[BaseException] = []

    def call() -> None:
        try:
            _call(url, 600)
        except Exception as error:
            failures.append(error)

    caller = threading.Thread(target=call)
    caller.start()
    try:
        server.wait_for("started")
        status, err, took = server.stopped(signal.SIGTERM, seconds=30)
    finally:
        caller.join(60)
    assert status == 0
    assert took < 20, f"{took:.1f} s, for a shutdown time of 1 s"
    assert failures  # its client got no answer
    assert (server.markers / "cancelled").exists()
    assert not (server.markers / "finished").exists()
    assert "Traceback" not in err
