"""A mounted server's progress, log messages and questions reach the local call: tests against real servers.

``people_server.py`` (the SDK's MCPServer, as a real subprocess) reports
progress, sends log messages and asks its user, in both protocol eras: the
current one (2026-07-28), where a question comes back as the call's
``InputRequiredResult``, and the handshake era (2025-11-25), where it is an
``elicitation/create`` request sent during the call. The reference server
``@modelcontextprotocol/server-everything`` (TypeScript, from npm, installed
at test time) does the same on the TypeScript SDK. The last tests go through
the real ``hermesos serve`` and ``hermesos call`` commands.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from hermes_mcp import Mounted, mount_servers, parse_config
from hermes_mcp._elicit import InFlight

from hermes_core import Approval, ApprovalRequest, LogMessage, Progress, Runtime, ToolFailedError

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "people_server.py")
ERAS = ["current", "handshake"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class People:
    """The test server's entry in one era, its listing cache, its gate file and the pids of its processes.

    The entry and its cache are the same for every test of the era: the
    server is listed once, and each test starts it once, for its calls.
    """

    def __init__(self, root: Path, era: str) -> None:
        self.root = root
        self.era = era
        self.pids = root / "pids"
        self.pids.mkdir(exist_ok=True)
        self.gate = root / "gate"

    def mount(self) -> Mounted:
        env = {
            "PEOPLE_LEGACY": "1" if self.era == "handshake" else "0",
            "PEOPLE_GATE": str(self.gate),
            "PEOPLE_PID_DIR": str(self.pids),
        }
        entry = (
            f"[servers.people]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(SERVER)}]\n"
            f"env = {{ {', '.join(f'{key} = {json.dumps(value)}' for key, value in env.items())} }}\n"
        )
        mounted = mount_servers(parse_config(entry, "test"), cache_directory=self.root / "cache")
        assert mounted.problems == ()
        return mounted

    def runtime(self, approver: Any = None) -> Runtime:
        mounted = self.mount()
        return Runtime(mounted.tools, grants=["mcp:people"], resources=[mounted.pool], approver=approver)

    def none_left(self) -> None:
        """Every server process started has ended (a moment after its runtime closed, at most)."""
        deadline = time.monotonic() + 60
        while (left := [int(path.name) for path in self.pids.iterdir() if _alive(int(path.name))]) and (
            time.monotonic() < deadline
        ):
            time.sleep(0.05)
        for pid in left:  # a failure, but the next tests should not pay for it
            os.kill(pid, signal.SIGKILL)
        assert not left, f"server processes outlived the test: {left}"


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {era: tmp_path_factory.mktemp(era) for era in ERAS}


@pytest.fixture(params=ERAS)
def people(request: pytest.FixtureRequest, homes: dict[str, Path]) -> Iterator[People]:
    made = People(homes[request.param], request.param)
    yield made
    made.none_left()


@pytest.fixture
def current(homes: dict[str, Path]) -> Iterator[People]:
    made = People(homes["current"], "current")
    yield made
    made.none_left()


@pytest.fixture
def handshake(homes: dict[str, Path]) -> Iterator[People]:
    made = People(homes["handshake"], "handshake")
    yield made
    made.none_left()


def _in_order(received: list[Progress], sent: list[Progress]) -> None:
    """*received* is *sent* in order, some reports perhaps dropped (closer than 50 ms), never the first or the last."""
    assert received[0] == sent[0]
    assert received[-1] == sent[-1]
    position = 0
    for report in received:
        position = sent.index(report, position) + 1


# -- progress and log messages ---------------------------------------------------------------------


WORK_LOG = [
    LogMessage("debug", "starting"),
    LogMessage("info", "step 1 done"),
    LogMessage("info", "step 2 done"),
    LogMessage("info", "step 3 done"),
    LogMessage("info", "step 4 done"),
    LogMessage("warning", "all done"),
]
WORK_PROGRESS = [Progress(float(step), 4.0, f"step {step} of 4") for step in range(1, 5)]


def test_progress_and_log_messages_reach_the_local_call_in_order(people: People) -> None:
    progress: list[Progress] = []
    logged: list[LogMessage] = []
    threads: set[int] = set()

    def on_progress(report: Progress) -> None:
        threads.add(threading.get_ident())
        progress.append(report)

    with people.runtime() as runtime:
        result = runtime.call_sync("people.work", {"steps": 4}, on_progress=on_progress, on_log=logged.append)
    assert result == {"result": "4 steps"}
    _in_order(progress, WORK_PROGRESS)
    assert logged == WORK_LOG
    assert threading.get_ident() not in threads  # reported on the pool's thread, as a listener is told


def test_progress_and_log_messages_reach_an_awaited_call_on_its_own_loop(people: People) -> None:
    async def scenario() -> tuple[list[Progress], list[LogMessage]]:
        progress: list[Progress] = []
        logged: list[LogMessage] = []
        async with people.runtime() as runtime:
            await runtime.call("people.work", {"steps": 4}, on_progress=progress.append, on_log=logged.append)
        return progress, logged

    progress, logged = asyncio.run(scenario())
    _in_order(progress, WORK_PROGRESS)
    assert logged == WORK_LOG


def test_a_runtime_never_opened_passes_them_on_too(current: People) -> None:
    progress: list[Progress] = []
    logged: list[LogMessage] = []
    runtime = current.runtime()
    runtime.call_sync("people.work", {"steps": 4}, on_progress=progress.append, on_log=logged.append)
    _in_order(progress, WORK_PROGRESS)
    assert logged == WORK_LOG


def test_progress_no_client_could_show_is_made_showable_or_dropped(current: People) -> None:
    progress: list[Progress] = []
    with current.runtime() as runtime:
        runtime.call_sync("people.odd_progress", {}, on_progress=progress.append)
    # -1 is dropped; a total of 0 is unknown and a 10,000-character message is cut; 3 does not move forward.
    assert progress == [Progress(5.0, None, "x" * 197 + "..."), Progress(10.0, 10.0, "done")]


def test_without_a_listener_log_messages_go_to_the_calls_logger(
    current: People, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, "hermes_core.calls"), current.runtime() as runtime:
        runtime.call_sync("people.work", {"steps": 1})
    said = [record.getMessage() for record in caplog.records if record.name == "hermes_core.calls"]
    assert [line.split(": ", 1)[1] for line in said] == ["step 1 done", "all done"]
    assert all(line.startswith("people.work (call ") for line in said)


# -- questions -------------------------------------------------------------------------------------


def _approver(answer: Approval | None, asked: list[ApprovalRequest]) -> Any:
    if answer is None:
        return None

    def approver(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answer

    return approver


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (Approval.once(), "delete: accept"),
        (Approval.decline("not today"), "delete: decline"),
        (None, "delete: decline"),
    ],
    ids=["approved", "declined", "no approver"],
)
def test_a_question_is_put_to_the_approver_of_the_call(people: People, answer: Approval | None, said: str) -> None:
    asked: list[ApprovalRequest] = []
    with people.runtime(_approver(answer, asked)) as runtime:
        assert runtime.call_sync("people.delete", {"count": 3}) == {"result": said}
    if answer is None:
        return
    (request,) = asked
    assert request.message == 'Delete 3 files? (asked by the MCP server "people")'
    assert (request.tool.name, request.permissions, request.input) == ("people.delete", (), {"count": 3})


def test_an_async_approver_answers_on_the_loop_awaiting_the_call(people: People) -> None:
    async def scenario() -> tuple[Any, list[asyncio.AbstractEventLoop]]:
        loops: list[asyncio.AbstractEventLoop] = []

        async def approver(request: ApprovalRequest) -> Approval:
            loops.append(asyncio.get_running_loop())
            return Approval.once()

        async with people.runtime(approver) as runtime:
            result = await runtime.call("people.delete", {"count": 1})
        assert loops == [asyncio.get_running_loop()]
        return result, loops

    result, _ = asyncio.run(scenario())
    assert result == {"result": "delete: accept"}


def test_an_async_approver_of_a_sync_call_answers_on_that_calls_loop(people: People) -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    async def approver(request: ApprovalRequest) -> Approval:
        loops.append(asyncio.get_running_loop())
        return Approval.decline()

    with people.runtime(approver) as runtime:  # the sessions on the pool's thread, the call on a loop of its own
        assert runtime.call_sync("people.delete", {"count": 1}) == {"result": "delete: decline"}
    assert len(loops) == 1


def test_one_yes_or_no_field_is_answered_true_by_a_yes(people: People) -> None:
    asked: list[ApprovalRequest] = []
    with people.runtime(_approver(Approval.once(), asked)) as runtime:
        assert runtime.call_sync("people.subscribe", {}) == {"result": "subscribe: accept True"}
    assert [request.message for request in asked] == [
        'Subscribe to the digest? (Subscribe: Send me the weekly digest; asked by the MCP server "people")'
    ]


def test_a_question_with_a_field_to_type_is_declined_without_asking_anyone(people: People) -> None:
    asked: list[ApprovalRequest] = []
    logged: list[LogMessage] = []
    with people.runtime(_approver(Approval.once(), asked)) as runtime:
        assert runtime.call_sync("people.register", {}, on_log=logged.append) == {"result": "register: decline"}
    assert asked == []
    assert logged == [
        LogMessage(
            "warning",
            'the MCP server "people" asked for the field "name" to be filled in ("Who are you?"); declined without '
            "asking anyone: hermesos asks its approver for a yes or a no only, so it answers questions that ask "
            "for no data or for one yes-or-no field",
        )
    ]


def test_a_page_to_open_is_declined_without_asking_anyone(handshake: People) -> None:
    asked: list[ApprovalRequest] = []
    logged: list[LogMessage] = []
    # URL-mode questions are the handshake era's (the current protocol's MCPServer has no way to send one).
    with handshake.runtime(_approver(Approval.once(), asked)) as runtime:
        assert runtime.call_sync("people.visit", {}, on_log=logged.append) == {"result": "visit: decline"}
    assert asked == []
    assert logged == [
        LogMessage(
            "warning",
            'the MCP server "people" asked for a person to open https://example.com/sign-in ("Sign in to continue"); '
            "declined without asking anyone: hermesos asks its approver for a yes or a no, and opens no page",
        )
    ]


def test_with_several_calls_in_flight_only_the_current_protocol_knows_which_asked(
    people: People, caplog: pytest.LogCaptureFixture
) -> None:
    asked: list[ApprovalRequest] = []
    people.gate.unlink(missing_ok=True)

    async def scenario() -> Any:
        async with people.runtime(_approver(Approval.once(), asked)) as runtime:
            holding = asyncio.Event()
            hold = asyncio.ensure_future(runtime.call("people.hold", {}, on_progress=lambda report: holding.set()))
            await asyncio.wait_for(holding.wait(), 60)  # the hold call is in flight on the server's session
            try:
                return await runtime.call("people.delete", {"count": 2})
            finally:
                people.gate.touch()
                assert await hold == {"result": "held"}

    with caplog.at_level(logging.WARNING, "hermes_mcp"):
        result = asyncio.run(scenario())
    warnings = [record.getMessage() for record in caplog.records if record.name == "hermes_mcp"]
    if people.era == "current":  # the question came back as the delete call's own result
        assert result == {"result": "delete: accept"}
        assert len(asked) == 1
        assert warnings == []
    else:  # an elicitation/create request, which names no call
        assert result == {"result": "delete: decline"}
        assert asked == []
        assert warnings == [
            'MCP server "people" asked "Delete 2 files?" while 2 calls of its tools were running, and which one it is '
            "about cannot be known; declined without asking anyone"
        ]


@pytest.mark.parametrize("how", ["sync", "async"])
def test_a_question_is_withdrawn_when_its_call_runs_out_of_time(people: People, how: str) -> None:
    withdrawn: list[str] = []

    async def approver(request: ApprovalRequest) -> Approval:
        try:
            await asyncio.Event().wait()  # a person who never answers
        except asyncio.CancelledError:
            withdrawn.append(request.message or "")
            raise
        raise AssertionError("unreachable")

    def expect_timeout(call: Callable[[], Any]) -> None:
        with pytest.raises(ToolFailedError) as caught:
            call()
        assert caught.value.reason == "timeout"

    if how == "sync":
        with people.runtime(approver) as runtime:
            runtime.call_sync("people.work", {"steps": 0})  # started: the time limit is the question's alone
            expect_timeout(lambda: runtime.call_sync("people.delete", {"count": 9}, timeout=1))
            # The server was answered (cancel) or its request cancelled: it serves the next call.
            assert runtime.call_sync("people.work", {"steps": 1}) == {"result": "1 steps"}
    else:

        async def scenario() -> None:
            async with people.runtime(approver) as runtime:
                await runtime.call("people.work", {"steps": 0})
                with pytest.raises(ToolFailedError) as caught:
                    await runtime.call("people.delete", {"count": 9}, timeout=1)
                assert caught.value.reason == "timeout"
                deadline = time.monotonic() + 30
                while not withdrawn and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                assert await runtime.call("people.work", {"steps": 1}) == {"result": "1 steps"}

        asyncio.run(scenario())
    assert withdrawn == ['Delete 9 files? (asked by the MCP server "people")']


def test_an_approver_that_fails_fails_the_call_as_for_a_local_tool(people: People) -> None:
    def approver(request: ApprovalRequest) -> Approval:
        raise RuntimeError("the approval service is down")

    with people.runtime(approver) as runtime, pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("people.delete", {"count": 1})
    assert caught.value.detail == "the approver raised RuntimeError while the tool asked for confirmation"
    assert caught.value.tool == "people.delete"


def test_a_server_that_asks_to_be_called_again_forever_is_given_up(current: People) -> None:
    with current.runtime() as runtime, pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("people.stall", {})
    assert caught.value.detail == (
        'the MCP server "people" still asked for more input (InputRequiredResult) after 10 rounds of answers, more '
        "than a call answers; the call was given up"
    )
    assert caught.value.retryable is False


@pytest.mark.parametrize(
    ("tool", "detail"),
    [
        ("people.crowd", 'the MCP server "people" asked 9 questions at once, more than the 8 a call answers'),
        (
            "people.sample",
            'the MCP server "people" asked for sampling/createMessage, which hermesos does not give MCP servers (it '
            "answers questions, elicitation/create, only)",
        ),
    ],
)
def test_a_server_that_asks_too_much_or_for_a_model_fails_the_call(current: People, tool: str, detail: str) -> None:
    asked: list[ApprovalRequest] = []
    with current.runtime(_approver(Approval.once(), asked)) as runtime, pytest.raises(ToolFailedError) as caught:
        runtime.call_sync(tool, {})
    assert (caught.value.detail, caught.value.retryable) == (detail, False)
    assert asked == []


def test_a_question_or_a_log_message_outside_any_call_goes_to_the_plugins_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    in_flight = InFlight("far")
    question = types.ElicitRequestFormParams(message="Proceed?", requested_schema={"type": "object"})
    with caplog.at_level(logging.DEBUG, "hermes_mcp"):
        answered = asyncio.run(in_flight.on_elicit(None, question))  # type: ignore[arg-type]
        asyncio.run(in_flight.on_log(types.LoggingMessageNotificationParams(level="info", data={"rows": 3})))
        asyncio.run(in_flight.on_log(types.LoggingMessageNotificationParams(level="error", logger="db", data="down")))
        escaped = types.LoggingMessageNotificationParams(level="warning", data="\x1b[2K\rhermesos: ok\nline 2\u202e")
        asyncio.run(in_flight.on_log(escaped))
    assert answered == types.ElicitResult(action="decline")
    assert [(record.levelname, record.getMessage()) for record in caplog.records] == [
        (
            "WARNING",
            'MCP server "far" asked "Proceed?" while no call of its tools was running; declined without asking anyone',
        ),
        ("INFO", 'MCP server "far": {"rows": 3}'),
        ("ERROR", 'MCP server "far": db: down'),
        ("WARNING", 'MCP server "far":  [2K hermesos: ok\nline 2 '),  # no escape sequence reaches a terminal
    ]


def _hermesos_env(current: People, name: str) -> dict[str, str]:
    """The environment of a ``hermesos`` process mounting the people server, its config and cache named *name*."""
    config = current.root / f"{name}.toml"
    config.write_text(
        f"[servers.people]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(SERVER)}]\n"
        f"env = {{ PEOPLE_PID_DIR = {json.dumps(str(current.pids))} }}\n"
    )
    return {
        **os.environ,
        "HERMESOS_MCP_CONFIG": str(config),
        "HERMESOS_MCP_CACHE_DIR": str(current.root / f"{name}-cache"),
        "HERMESOS_MCP_REFRESH": "",
        "XDG_CONFIG_HOME": str(current.root / "config"),
        "HERMESOS_POLICY": "",
        "HERMESOS_GRANTS": "",
        "HERMESOS_DISABLE_PLUGINS": "hermesos-fs",
    }


# -- the reference server, on the TypeScript SDK ----------------------------------------------------

# `everything`, the reference server's command, is conftest's (installed from npm once per run).


def test_the_reference_servers_progress_and_questions(everything: list[str], tmp_path: Path) -> None:
    args = ", ".join(json.dumps(arg) for arg in everything[1:])
    config = parse_config(f"[servers.everything]\ncommand = {json.dumps(everything[0])}\nargs = [{args}]\n", "t")
    mounted = mount_servers(config, cache_directory=tmp_path / "cache")
    names = {tool.name for tool in mounted.tools}
    # It lists its question tool only to a client that declared elicitation.
    assert "everything.trigger-elicitation-request" in names
    asked: list[ApprovalRequest] = []
    progress: list[Progress] = []
    logged: list[LogMessage] = []
    runtime = Runtime(
        mounted.tools,
        grants=["mcp:everything"],
        resources=[mounted.pool],
        approver=_approver(Approval.once(), asked),
    )
    with runtime:
        runtime.call_sync(
            "everything.trigger-long-running-operation",
            {"duration": 0.5, "steps": 5},
            on_progress=progress.append,
        )
        result = runtime.call_sync("everything.trigger-elicitation-request", {}, on_log=logged.append)
    _in_order(progress, [Progress(float(step), 5.0) for step in range(1, 6)])
    assert asked == []  # its form asks for a name, an e-mail address, a date...: nothing a yes answers
    assert "decline" in str(result)
    (warning,) = logged
    assert warning.level == "warning"
    assert warning.message.startswith(
        'the MCP server "everything" asked for the fields "name", "check", "firstLine", "email", "homepage" and '
    )


# -- through hermesos serve ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_through_hermesos_serve_a_client_sees_the_progress_logs_and_question(current: People, mode: str) -> None:
    """A mounted server's progress, log messages and question, forwarded by ``hermesos serve`` to its client."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = _hermesos_env(current, "serve")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hermes_core", "serve", "--grant", "mcp:people"], env=env
    )
    reports: list[tuple[float, float | None, str | None]] = []
    logged: list[tuple[str, str | None, Any]] = []
    asked: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append((params.level, params.logger, params.data))

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"always": False})

    async def scenario() -> tuple[Any, Any]:
        with (current.root / "serve.log").open("a") as errlog:
            client = Client(
                stdio_client(params, errlog=errlog),
                mode=mode,
                logging_callback=on_log,
                elicitation_callback=person,
                log_level="debug",  # the 2026 protocol's per-request opt-in (no effect on the 2025 one)
            )
            async with client:
                work = await client.call_tool("people_work", {"steps": 4}, progress_callback=on_progress)
                delete = await client.call_tool("people_delete", {"count": 2})
                return work.structured_content, delete.structured_content

    work, delete = asyncio.run(scenario())
    assert work == {"result": "4 steps"}
    _in_order([Progress(*report) for report in reports], WORK_PROGRESS)
    assert logged == [(entry.level, "people_work", entry.message) for entry in WORK_LOG]  # logger: the wire name
    if mode == "legacy":  # the 2025 protocol over stdio: serve asks its client's user mid-call
        assert delete == {"result": "delete: accept"}
        assert len(asked) == 1
        assert asked[0].startswith('people_delete asks: Delete 2 files? (asked by the MCP server "people")\n')
    else:  # the 2026 protocol asks a client only before a call starts: a question mid-call is answered no
        assert delete == {"result": "delete: decline"}
        assert asked == []


def test_through_hermesos_call_the_question_is_approved_only_with_approve(current: People) -> None:
    env = _hermesos_env(current, "call")

    def call(*options: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hermes_core", "call", "--grant", "mcp:people", *options]
        return subprocess.run(
            [*command, "people.delete", '{"count": 2}'],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    refused, approved = call(), call("--approve")
    assert (refused.returncode, json.loads(refused.stdout)) == (0, {"result": "delete: decline"})
    assert (approved.returncode, json.loads(approved.stdout)) == (0, {"result": "delete: accept"})
    assert 'Delete 2 files? (asked by the MCP server "people")' in approved.stderr
