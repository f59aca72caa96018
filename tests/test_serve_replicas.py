"""hermesos serve as several replicas behind a real nginx: faults, approval across replicas, and serve's bounds.

Each test starts real processes with ``deploy/cluster.py``: nginx (the
program itself, with the configuration rendered from
``deploy/nginx.conf.template``) in front of ``hermesos serve --transport
http`` replicas on loopback ports, and calls them with the load test's
drivers (``deploy/load.py``): bare HTTP/1.1, and the MCP Python SDK's own
client. The replicas have the load test's plugin (``deploy/loadtools.py``),
which records each call where it ran, so that a test can tell that a call
answered ran exactly once. A replica is killed with SIGKILL, stopped with
SIGSTOP, and drained with SIGTERM while calls are in flight.

They need nginx: ``python3 dev.py test`` installs it (``apt-get install -y
nginx``) where it can; where it is missing they are skipped, saying so. The
quick run keeps the kill, approval and bounds tests; a stopped replica and a
drained one are left to the full run (``--full``, CI).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # deploy/ is the repository's, not an installed package
    sys.path.insert(0, str(ROOT))

from deploy import load  # noqa: E402
from deploy.cluster import Cluster, NginxMissingError, Replica, find_nginx, healthy, load_site, render  # noqa: E402

mcp = pytest.importorskip("mcp")

import httpx2  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

try:
    find_nginx()
    NO_NGINX = ""
except NginxMissingError as error:
    NO_NGINX = str(error)

needs_nginx = pytest.mark.skipif(bool(NO_NGINX), reason=NO_NGINX)
pytestmark = pytest.mark.nginx

#: What the 2025 protocol's client is told over HTTP, where it cannot be asked (as hermes_core.serve._calls says).
NO_BACK_CHANNEL = (
    "the MCP client cannot be asked over stateless HTTP with protocol version 2025-11-25, which has no way to carry "
    "a question from the server (version 2026-07-28 has)"
)
#: Seconds: far deadlines, which only a broken server reaches, never a bound on how fast a busy machine is.
FAR = 120.0


class Deployment:
    """The replicas' environment: the load test's plugin and its records, a workspace, a policy asking for fs:write."""

    def __init__(self, root: Path, **settings: str) -> None:
        self.root = root
        self.records = root / "records"
        self.workspace = root / "workspace"
        config = root / "config"
        for folder in (self.records, self.workspace, config):
            folder.mkdir()
        self.policy = config / "policy.toml"
        self.policy.write_text('ask = ["fs:write"]\n')
        site = load_site(root / "site")
        self.environ = {name: value for name, value in os.environ.items() if not name.startswith("HERMESOS_")}
        self.environ.update(
            PYTHONPATH=str(site),
            LOADTEST_RECORDS=str(self.records),
            XDG_CONFIG_HOME=str(config),
            HERMESOS_FS_ROOT=str(self.workspace),
            HERMESOS_POLICY=str(self.policy),
            HERMESOS_SERVE_SHUTDOWN_TIMEOUT="60",
            **settings,
        )

    def cluster(self, replicas: int = 2, **options: Any) -> Cluster:
        return Cluster(replicas, self.root / "run", environ=self.environ, **options)


@pytest.fixture
def deployment(tmp_path: Path) -> Deployment:
    return Deployment(tmp_path)


def wait_until(condition: Any, what: str, seconds: float = FAR) -> None:
    """Return once *condition()* is true; fail if it is not within *seconds* (a far deadline)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:g} s: {what}"
        time.sleep(0.05)


def evictions(cluster: Cluster, *settings: str) -> list[str]:
    """The lines of the replicas' logs saying a connection was closed for holding more than *settings* allow."""
    return [
        line
        for replica in cluster.replicas
        for line in replica.log.read_text(errors="replace").splitlines()
        if "closed the connection" in line and any(setting in line for setting in settings)
    ]


# -- the configuration ---------------------------------------------------------------------------------


def test_the_rendered_configuration_holds_clients_to_the_replicas_own_bounds(tmp_path: Path) -> None:
    """nginx's timeouts, body size and connections come from the HERMESOS_SERVE_* settings serve reads."""
    defaults = render([8001, 8002], tmp_path, listen="127.0.0.1:8080", environ={})
    assert "client_header_timeout 10s;" in defaults
    assert "client_body_timeout 60s;" in defaults
    assert "keepalive_timeout 5s;" in defaults
    assert "send_timeout 30s;" in defaults
    assert "client_max_body_size 16m;" in defaults
    assert "keepalive_timeout 4s;" in defaults  # to the replicas: below their idle timeout
    assert "server 127.0.0.1:8001 max_fails=1 fail_timeout=2s max_conns=" in defaults
    assert "server 127.0.0.1:8002 " in defaults
    assert "proxy_next_upstream error timeout;" in defaults  # never non_idempotent: a call is sent once
    assert "non_idempotent" not in defaults.replace("non_idempotent stays off", "")
    assert "@" not in "".join(line.partition("#")[0] for line in defaults.splitlines() if "@no_answer" not in line
                              and "@busy" not in line and "@too_" not in line)  # fmt: skip
    given = render(
        [8001],
        tmp_path,
        listen="127.0.0.1:8080",
        environ={
            "HERMESOS_SERVE_HEADER_TIMEOUT": "3",
            "HERMESOS_SERVE_BODY_TIMEOUT": "4",
            "HERMESOS_SERVE_IDLE_TIMEOUT": "7",
            "HERMESOS_SERVE_WRITE_TIMEOUT": "9",
            "HERMESOS_SERVE_MAX_CONNECTIONS": "40",
        },
        workers=2,
    )
    assert "client_header_timeout 3s;" in given
    assert "client_body_timeout 4s;" in given
    assert "keepalive_timeout 7s;" in given
    assert "send_timeout 9s;" in given
    assert "keepalive_timeout 6s;" in given
    # 40 connections a replica: 5 idle ones kept per worker (2 workers), 30 given at once.
    assert "keepalive 5;" in given
    assert "server 127.0.0.1:8001 max_fails=1 fail_timeout=2s max_conns=30;" in given
    with pytest.raises(ValueError, match="HERMESOS_SERVE_BODY_TIMEOUT"):
        render([8001], tmp_path, listen="127.0.0.1:8080", environ={"HERMESOS_SERVE_BODY_TIMEOUT": "soon"})


# -- faults --------------------------------------------------------------------------------------------

#: What a client is told when the replica running its call is killed: each a clear error that says to retry.
#: The SDK's client, under the 2026 protocol: nginx's 502, as a JSON-RPC error (deploy/nginx.conf.template).
NO_ANSWER = "No answer from the server (HTTP 502 from the load balancer)"
#: A bare HTTP client: the connection ends without a response (nginx had begun one it could not finish).
CONNECTION_ENDED = "the connection ended without an answer"


def _clear(outcome: load.Outcome) -> bool:
    """Whether a failed call's error is one a client can act on: it says no answer came, and whether it ran."""
    assert outcome.error is not None
    if outcome.error.startswith(("HTTP 502: " + NO_ANSWER, NO_ANSWER)):
        return outcome.code == -32000 and outcome.ran in ("no", "unknown")
    if outcome.error.startswith(CONNECTION_ENDED):
        return True
    return outcome.code == -32000 and outcome.error == "SSE stream ended without a response"  # the SDK's own


@needs_nginx
def test_a_replica_killed_mid_run_loses_and_doubles_no_call_and_is_taken_back_when_it_restarts(
    deployment: Deployment,
) -> None:
    """300 calls, 12 at a time (8 connections, 4 SDK sessions), replica 1 killed after 60 answers, then restarted.

    Every call answered ran exactly once; those that failed were in flight when it was killed, and each failed
    with an error that says no answer came; no call ran twice. The restarted replica runs calls again.
    """
    with deployment.cluster(2) as cluster:
        victim = cluster.replicas[0]
        first_pid = victim.pid
        answered = 0
        killed_at: list[float] = []

        async def scenario() -> list[load.Outcome]:
            enough = asyncio.Event()

            def counted(outcome: load.Outcome) -> None:
                nonlocal answered
                answered += outcome.answered
                if answered >= 60:
                    enough.set()

            async def killer() -> None:
                await enough.wait()
                await asyncio.to_thread(victim.kill)
                killed_at.append(time.monotonic())
                victim.start()
                await asyncio.to_thread(victim.wait)

            raw = load.raw_calls(
                cluster.url,
                itertools.islice(load.tags("raw", "load_nap", seconds=0.05), 200),
                concurrency=8,
                token=cluster.token,
                on_answer=counted,
            )
            sdk = load.sdk_calls(
                cluster.url,
                itertools.islice(load.tags("sdk", "load_nap", seconds=0.05), 100),
                sessions=4,
                token=cluster.token,
                on_answer=counted,
            )
            raw_outcomes, sdk_outcomes, _ = await asyncio.wait_for(asyncio.gather(raw, sdk, killer()), FAR)
            return raw_outcomes + sdk_outcomes

        outcomes = asyncio.run(scenario())
        assert len(outcomes) == 300
        assert load.lost_or_doubled(outcomes, load.ran(deployment.records)) == []
        failed = [outcome for outcome in outcomes if not outcome.answered]
        assert all(_clear(outcome) for outcome in failed), [outcome.error for outcome in failed]
        assert all(outcome.started < killed_at[0] for outcome in failed)  # in flight when it was killed
        assert len(failed) <= 12  # at most the calls in flight at once
        assert sum(outcome.answered for outcome in outcomes) >= 288

        # Taken back: once nginx tries it again, the restarted replica (a new process) runs calls.
        second_pid = victim.pid
        assert second_pid != first_pid
        ran_there = deployment.records / f"{second_pid}.log"
        more = load.tags("after", "load_echo")
        deadline = time.monotonic() + FAR
        while not (ran_there.exists() and ran_there.read_text()):
            assert time.monotonic() < deadline, "the restarted replica was not given a call"
            after = asyncio.run(load.raw_calls(cluster.url, itertools.islice(more, 20), concurrency=4,
                                               token=cluster.token))  # fmt: skip
            assert all(outcome.answered for outcome in after), [outcome.error for outcome in after]

        # Every replica gone: the SDK's client raises MCPError, code -32000, saying the call did not run.
        async def none_left() -> None:
            async with client(cluster.url, cluster.token) as session:
                assert text(await session.call_tool("load_echo", {"tag": "last-answered"})) == "last-answered"
                for replica in cluster.replicas:
                    await asyncio.to_thread(replica.kill)
                with pytest.raises(MCPError) as raised:
                    await session.call_tool("load_echo", {"tag": "unanswered"})
            assert raised.value.code == -32000
            assert raised.value.message.startswith(NO_ANSWER + ": the replica that took the call stopped, or none")
            assert raised.value.data == {"status": 502, "ran": "no"}

        asyncio.run(none_left())
        assert "unanswered" not in load.ran(deployment.records)


@needs_nginx
@pytest.mark.slow
def test_a_stopped_replica_does_not_stall_the_others(deployment: Deployment) -> None:
    """Replica 1 stopped (SIGSTOP): its calls wait, the other replica answers the rest; once it goes on, all ran."""
    with deployment.cluster(2) as cluster:
        stopped = cluster.replicas[0]
        stopped.signal(signal.SIGSTOP)
        try:
            answered = 0

            async def scenario() -> list[load.Outcome]:
                enough = asyncio.Event()

                def counted(outcome: load.Outcome) -> None:
                    nonlocal answered
                    answered += outcome.answered
                    if answered >= 100:
                        enough.set()

                calls = load.raw_calls(
                    cluster.url,
                    itertools.islice(load.tags("s", "load_echo"), 200),
                    concurrency=8,
                    token=cluster.token,
                    on_answer=counted,
                )
                running = asyncio.ensure_future(calls)
                await asyncio.wait_for(enough.wait(), FAR)  # answered while replica 1 cannot answer anything
                stopped.signal(signal.SIGCONT)
                return await asyncio.wait_for(running, FAR)

            outcomes = asyncio.run(scenario())
        finally:
            stopped.signal(signal.SIGCONT)
        assert [outcome.error for outcome in outcomes if not outcome.answered] == []
        assert len(outcomes) == 200
        assert load.lost_or_doubled(outcomes, load.ran(deployment.records)) == []
        counts = {replica.pid: len((deployment.records / f"{replica.pid}.log").read_text().split()) for replica in
                  cluster.replicas if (deployment.records / f"{replica.pid}.log").exists()}  # fmt: skip
        assert counts.get(cluster.replicas[1].pid, 0) >= 100


@needs_nginx
@pytest.mark.slow
def test_sigterm_drains_a_replica_behind_nginx_while_the_other_takes_the_new_calls(deployment: Deployment) -> None:
    """SIGTERM: the replica refuses new connections at once (its health check too), finishes its calls, exits 0.

    nginx passes the calls that found it closed to the other replica: none fails.
    """
    with deployment.cluster(2) as cluster:
        cluster.wait_healthy()
        draining = cluster.replicas[0]

        async def scenario() -> tuple[list[load.Outcome], list[load.Outcome]]:
            naps = asyncio.ensure_future(
                load.raw_calls(
                    cluster.url,
                    list(itertools.islice(load.tags("nap", "load_nap", seconds=8), 6)),
                    concurrency=6,
                    token=cluster.token,
                )
            )
            await asyncio.to_thread(wait_until, lambda: len(load.started(deployment.records)) == 6, "6 naps running")
            draining.process.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
            await asyncio.to_thread(
                wait_until, lambda: not healthy(f"http://127.0.0.1:{draining.port}/healthz"), "its health refused"
            )
            assert draining.running()  # still finishing its naps
            echoes = await load.raw_calls(
                cluster.url, itertools.islice(load.tags("echo", "load_echo"), 100), concurrency=4, token=cluster.token
            )
            return await asyncio.wait_for(naps, FAR), echoes

        naps, echoes = asyncio.run(scenario())
        assert draining.process is not None
        assert draining.process.wait(FAR) == 0
        assert [outcome.error for outcome in naps + echoes if not outcome.answered] == []
        assert load.lost_or_doubled(naps + echoes, load.ran(deployment.records)) == []
        assert "Traceback" not in draining.log.read_text()


# -- the module's replicas: approval across them, and serve's bounds through nginx ------------------------

#: The replicas' bounds, short enough to be reached in a test: nginx is configured from the same settings.
SHORT = {
    "HERMESOS_SERVE_HEADER_TIMEOUT": "2",
    "HERMESOS_SERVE_BODY_TIMEOUT": "2",
    "HERMESOS_SERVE_WRITE_TIMEOUT": "2",
    "HERMESOS_SERVE_MAX_CONNECTIONS": "8",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Deployment, Cluster]]:
    """Two replicas behind nginx with :data:`SHORT` bounds, for the tests that leave them as they found them."""
    if NO_NGINX:
        pytest.skip(NO_NGINX)
    deployment = Deployment(tmp_path_factory.mktemp("served"), **SHORT)
    with deployment.cluster(2) as cluster:
        yield deployment, cluster


async def _nobody(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """An elicitation callback that declares the capability; the tests that use it answer the questions themselves."""
    raise AssertionError(f"asked: {params.message}")


@asynccontextmanager
async def client(url: str, token: str, mode: str = "auto", **callbacks: Any) -> AsyncIterator[Client]:
    callbacks.setdefault("elicitation_callback", _nobody)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, **callbacks) as session,  # type: ignore[arg-type]
    ):
        yield session


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def _accept(key: str) -> types.InputResponses:
    return {key: types.ElicitResult(action="accept", content={})}


async def _write(session: Client, path: str, content: str, answers: types.InputResponses | None = None) -> Any:
    """fs_write of *content* to *path*, with *answers* to questions asked before; the result or the question."""
    return await session.session.call_tool(
        "fs_write", {"path": path, "content": content}, input_responses=answers, allow_input_required=True
    )


@needs_nginx
def test_an_approval_asked_by_one_replica_is_honoured_by_another_and_a_forged_one_by_none(
    served: tuple[Deployment, Cluster],
) -> None:
    """The 2026 protocol: an answer counts on whichever replica gets it, and only for the question it answers.

    A replica configured otherwise (another policy file) asks its own question: replicas share their configuration.
    """
    deployment, cluster = served
    one, two = cluster.replicas
    other_policy = deployment.root / "other-policy.toml"
    other_policy.write_text('ask = ["fs:write"]\n')
    odd = Replica(3, one.command, {**cluster.environ, "HERMESOS_POLICY": str(other_policy)}, one.log.parent / "odd.log")
    odd.start()
    written = deployment.workspace / "a.txt"

    async def scenario() -> None:
        async with client(one.url, cluster.token) as first, client(two.url, cluster.token) as second:
            asked = await _write(first, "a.txt", "one")
            assert isinstance(asked, types.InputRequiredResult)
            [key] = asked.input_requests or {}
            # Replayed with another input, on the other replica: asked again, nothing written.
            again = await _write(second, "b.txt", "two", _accept(key))
            assert isinstance(again, types.InputRequiredResult)
            assert list(again.input_requests or {}) != [key]
            # A made-up key answers nothing asked.
            made_up = await _write(second, "a.txt", "one", _accept("hermesos-approval-" + "0" * 32))
            assert isinstance(made_up, types.InputRequiredResult)
            assert list(made_up.input_requests or {}) == [key]
            assert not written.exists()
            assert not (deployment.workspace / "b.txt").exists()
            # The answer to the question asked, on the other replica: honoured.
            done = await _write(second, "a.txt", "one", _accept(key))
            assert isinstance(done, types.CallToolResult)
            assert not done.is_error, text(done)
            assert written.read_text() == "one"
        # A replica with another policy file asks a question of its own: its reason names its file.
        async with client(odd.url, cluster.token) as third:
            own = await _write(third, "a.txt", "one", _accept(key))
            assert isinstance(own, types.InputRequiredResult)
            assert list(own.input_requests or {}) != [key]

    try:
        odd.wait()
        asyncio.run(scenario())
    finally:
        odd.stop()


@needs_nginx
def test_through_nginx_a_host_is_asked_once_under_the_2026_protocol_and_the_2025_one_is_refused(
    served: tuple[Deployment, Cluster],
) -> None:
    deployment, cluster = served
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={})

    async def scenario() -> None:
        # As a host runs it: the SDK answers the question and calls again, on whichever replica nginx chooses.
        async with client(cluster.url, cluster.token, elicitation_callback=person) as host:
            result = await host.call_tool("fs_write", {"path": "d.txt", "content": "four"})
            assert not result.is_error, text(result)
        assert (deployment.workspace / "d.txt").read_text() == "four"
        assert len(asked) == 1
        assert asked[0].startswith("fs_write needs your approval")
        # The 2025 protocol over HTTP: the documented refusal, through nginx too.
        async with client(cluster.url, cluster.token, "legacy", elicitation_callback=person) as legacy:
            refused = await legacy.call_tool("fs_write", {"path": "e.txt", "content": "five"})
        assert refused.is_error
        assert NO_BACK_CHANNEL in text(refused)
        assert not (deployment.workspace / "e.txt").exists()
        assert len(asked) == 1

    asyncio.run(scenario())


# -- serve's bounds, through nginx ---------------------------------------------------------------------


def _post(cluster: Cluster, body: bytes, *, chunked: bool = False) -> tuple[int, bytes]:
    """POST *body* to nginx's /mcp on a connection of its own; the status and the body of the answer."""
    with socket.create_connection(("127.0.0.1", cluster.port), timeout=FAR) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {cluster.token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n"
        )
        if chunked:
            sock.sendall(f"{head}Transfer-Encoding: chunked\r\n\r\n".encode())
            try:
                for start in range(0, len(body), 1 << 20):
                    piece = body[start : start + (1 << 20)]
                    sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                sock.sendall(b"0\r\n\r\n")
            except OSError:  # nginx answered and closed before the rest was sent
                pass
        else:
            with suppress(OSError):  # nginx answered and closed before the rest was sent
                sock.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        answer = b""
        try:
            while chunk := sock.recv(1 << 16):
                answer += chunk
        except ConnectionResetError:
            pass
    head_text, _, rest = answer.partition(b"\r\n\r\n")
    return int(head_text.split(b" ", 2)[1]), rest


def _call_body(size: int) -> bytes:
    """A tools/call of load_echo padded with an unknown argument to *size* bytes."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "load_echo", "arguments": {"tag": "big", "filler": ""}}}  # fmt: skip
    bare = len(json.dumps(message).encode())
    message["params"]["arguments"]["filler"] = "x" * (size - bare)  # type: ignore[index]
    body = json.dumps(message).encode()
    assert len(body) == size
    return body


@needs_nginx
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_body_larger_than_serve_takes_is_refused_by_nginx_before_any_replica_sees_it(
    served: tuple[Deployment, Cluster], chunked: bool
) -> None:
    from hermes_core.adapters import ARGUMENTS_MAX

    _, cluster = served
    status, answer = _post(cluster, _call_body(ARGUMENTS_MAX - 1024), chunked=chunked)
    assert status == 200  # reached a replica, which read it whole and refused the unknown argument itself
    assert b"INPUT_INVALID" in answer
    assert b"filler" in answer
    status, answer = _post(cluster, _call_body(ARGUMENTS_MAX + 1), chunked=chunked)
    assert status == 413
    error = json.loads(answer)["error"]
    assert error["code"] == -32600
    assert error["data"] == {"status": 413, "ran": "no"}
    assert f"larger than the {ARGUMENTS_MAX} bytes a call may send" in error["message"]


def _closed(sock: socket.socket) -> bytes:
    """Wait for the other side to close *sock* (a far deadline); what it sent first."""
    sock.settimeout(FAR)
    got = b""
    try:
        while chunk := sock.recv(1 << 16):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def _timed_out(got: bytes) -> bool:
    """Whether what nginx sent before closing a connection it timed out is nothing, or a 408."""
    return got == b"" or got.startswith(b"HTTP/1.1 408")


#: TCP states (linux/tcp_states.h): the other side closed the connection (a FIN, or a reset).
_CLOSED_BY_PEER = {7, 8}  # TCP_CLOSE, TCP_CLOSE_WAIT


def _peer_closed(sock: socket.socket) -> bool:
    """Whether the other side has closed *sock*, seen without reading from it (Linux's TCP_INFO)."""
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] in _CLOSED_BY_PEER


def _answered(cluster: Cluster, tag: str) -> None:
    outcomes = asyncio.run(load.raw_calls(cluster.url, [load.Call("load_echo", {"tag": tag})], concurrency=1,
                                          token=cluster.token))  # fmt: skip
    assert [outcome.error for outcome in outcomes] == [None]


@needs_nginx
def test_clients_sending_slowly_are_nginxs_to_hold_and_are_closed_at_the_replicas_bounds(
    served: tuple[Deployment, Cluster],
) -> None:
    """Half a head, half a body, 300 connections saying nothing: nginx closes them; the replicas never see them.

    The control: the same half head sent to a replica directly is closed by the replica, which logs it.
    """
    deployment, cluster = served
    held = ("HERMESOS_SERVE_HEADER_TIMEOUT", "HERMESOS_SERVE_BODY_TIMEOUT", "HERMESOS_SERVE_MAX_CONNECTIONS")
    before = evictions(cluster, *held)
    address = ("127.0.0.1", cluster.port)
    half_head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # and no more
    head = socket.create_connection(address)
    head.sendall(half_head)
    body = socket.create_connection(address)
    body.sendall(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {cluster.token}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "load_echo", "arguments": '
        '{"tag": "slow-body"'.encode()
    )
    idle = [socket.create_connection(address) for _ in range(300)]  # more than 2 replicas x 8 connections
    direct = socket.create_connection(("127.0.0.1", cluster.replicas[0].port))
    direct.sendall(half_head)
    try:
        _answered(cluster, "meanwhile")  # the positive control: a call is answered while they wait
        assert _timed_out(_closed(head))  # at the header timeout
        assert _timed_out(_closed(body))  # at the body timeout
        for sock in idle:
            assert _timed_out(_closed(sock))
        _answered(cluster, "after")
        _closed(direct)
        named = f"127.0.0.1:{direct.getsockname()[1]}"
        wait_until(lambda: len(evictions(cluster, *held)) > len(before), "the replica's line for the direct one")
    finally:
        for sock in (head, body, *idle, direct):
            sock.close()
    assert "slow-body" not in load.ran(deployment.records)
    # One line more, for the connection made to the replica itself: none for those nginx held.
    (line,) = evictions(cluster, *held)[len(before) :]
    assert f"closed the connection of {named}" in line
    assert "HERMESOS_SERVE_HEADER_TIMEOUT" in line


@needs_nginx
def test_a_client_that_does_not_read_its_answer_is_dropped_at_the_write_timeout(
    served: tuple[Deployment, Cluster],
) -> None:
    """An answer of 8 MiB, not read: nginx drops the client at its send timeout (the replicas' write timeout).

    8 MiB: more than the kernel holds for a connection (at most 4 MiB by default), so that nginx itself waits.
    """
    _, cluster = served
    arguments = {"tag": "unread", "pad": 4 << 20}
    message = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "load_echo", "arguments": arguments}}).encode()  # fmt: skip
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", cluster.port))
    try:
        sock.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {cluster.token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(message)}\r\n\r\n".encode()
            + message
        )
        _answered(cluster, "meanwhile-unread")  # the positive control: the others are answered
        wait_until(lambda: _peer_closed(sock), "nginx closed the connection of the client that does not read")
        got = _closed(sock)  # what was left in the buffers, if the close was not a reset
    finally:
        sock.close()
    assert len(got) < 8 << 20  # cut off: the whole answer is twice the padding (the text, and the structured result)
    assert load.ran(served[0].records)["unread"] == 1  # it ran; its client did not take the answer


@needs_nginx
def test_more_calls_at_once_than_the_replicas_serve_are_answered_or_refused_unrun_never_doubled(
    served: tuple[Deployment, Cluster],
) -> None:
    """40 naps at once on 2 replicas serving 8 connections each: nginx never opens more, and says what did not run."""
    deployment, cluster = served
    before = evictions(cluster, "HERMESOS_SERVE_MAX_CONNECTIONS")
    outcomes = asyncio.run(
        load.raw_calls(
            cluster.url,
            list(itertools.islice(load.tags("crowd", "load_nap", seconds=2), 40)),
            concurrency=40,
            token=cluster.token,
        )
    )
    answered = [outcome for outcome in outcomes if outcome.answered]
    refused = [outcome for outcome in outcomes if not outcome.answered]
    assert len(answered) >= 2  # the positive control: the replicas took calls
    assert refused  # and nginx refused those past what they serve (12 at once: 2 x (8 - 2 kept idle))
    assert all(outcome.code == -32000 and outcome.ran == "no" for outcome in refused), [o.error for o in refused]
    counts = load.ran(deployment.records)
    assert load.lost_or_doubled(outcomes, counts) == []
    assert all(counts[outcome.tag] == 0 for outcome in refused)  # "did not run" is true
    assert evictions(cluster, "HERMESOS_SERVE_MAX_CONNECTIONS") == before  # none had more than it serves
