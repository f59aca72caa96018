"""hermesos serve with people in the loop: progress, log messages and approval, through the MCP SDK's own client.

Real servers (``python -m hermes_core serve`` subprocesses, over stdio and
Streamable HTTP) with the bundled plugins, a policy file that asks a person
before any ``fs:write``, and a small fixture plugin whose tools report
progress (a plain handler, on a worker thread, and an ``async`` one), log a
message at four levels, and ask a question mid-call. The client is the
Python SDK's ``Client``, under both protocols it speaks: the 2026 one (its
default, ``auto``) and the 2025 handshake (``legacy``); its progress,
logging and elicitation callbacks are what a host would give it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import shutil
import subprocess
import sys
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Approval, load_runtime
from hermes_core.serve import ERROR_META_KEY, elicit_approval

mcp = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

SERVE = [sys.executable, "-m", "hermes_core", "serve"]
MODES = ["auto", "legacy"]  # the 2026 protocol (the client's default), and the 2025 handshake

PLUGIN = """
import asyncio, time
from hermes_core import CallContext, hookimpl, tool

@tool(name="unit.count", version="1.0.0")
def count(steps: int, ctx: CallContext) -> int:
    \"\"\"Count to steps, reporting each one (a plain handler: it runs on a worker thread).

    Args:
        steps: how many.
    \"\"\"
    for step in range(1, steps + 1):
        time.sleep(0.06)  # reports closer together than 50 ms are dropped
        ctx.progress(step, steps, f"step {step} of {steps}")
    return steps

@tool(name="unit.acount", version="1.0.0")
async def acount(steps: int, ctx: CallContext) -> int:
    \"\"\"Count to steps, reporting each one (an async handler: on the event loop).

    Args:
        steps: how many.
    \"\"\"
    for step in range(1, steps + 1):
        await asyncio.sleep(0.06)
        ctx.progress(step, steps, f"step {step} of {steps}")
    return steps

@tool(name="unit.chatty", version="1.0.0")
def chatty(ctx: CallContext) -> str:
    \"\"\"Log one message at each of four levels.\"\"\"
    for level in ("debug", "info", "warning", "error"):
        ctx.log(level, f"a {level} message")
    return "said"

@tool(name="unit.tidy", version="1.0.0")
async def tidy(files: int, ctx: CallContext) -> str:
    \"\"\"Delete some files, once a person says yes.

    Args:
        files: how many.
    \"\"\"
    return "deleted" if await ctx.confirm(f"Delete {files} files?") else "kept"

@hookimpl
def hermes_tools():
    return [count, acount, chatty, tidy]
"""

#: What a client's user is asked before fs_write runs ({reason}: the policy's, naming its file).
ASKED = (
    'fs_write needs your approval to use the "fs:write" permission ({reason}).\n'
    "Target: {path}\n"
    'Input: {{"path": "{path}", "content": "{content}", "mode": "overwrite", "create_parents": true}}\n'
    "Accept to allow this call; decline to refuse it."
)
#: The form over stdio: one box, "always" (over HTTP, an empty form).
ALWAYS_FORM = {
    "type": "object",
    "properties": {
        "always": {
            "type": "boolean",
            "title": "Always",
            "description": "Also approve every later call of fs_write that asks for this, until the server stops",
            "default": False,
        }
    },
}
#: What the model reads when the person declined.
DECLINED = "PERMISSION_DENIED: A person declined this call of fs_write.\nDo not call it again unless they ask you to."


def cannot_ask(why: str) -> str:
    """What the model reads when the client could not ask its user, *why* being the reason."""
    return (
        f'PERMISSION_DENIED: fs_write needs a person\'s approval for the "fs:write" permission, and no person could '
        f"be asked ({why}), so the call was not made.\nTo allow it, call it from a client that can ask its user, "
        "or grant the permission in the policy instead of asking. Retrying with different arguments will not help."
    )


NO_ELICITATION = "the MCP client that made the call cannot ask its user: it did not declare the elicitation capability"
NO_BACK_CHANNEL = (
    "the MCP client cannot be asked over stateless HTTP with protocol version 2025-11-25, which has no way to carry "
    "a question from the server (version 2026-07-28 has)"
)


# -- the servers ---------------------------------------------------------------------------------------


pytestmark = pytest.mark.usefixtures("no_server_outlives_its_test")  # conftest's


class Env:
    """The servers' environment: the fixture plugin, a workspace, and a policy that asks before any fs:write."""

    def __init__(self, root: Path) -> None:
        self.root = root
        site, self.workspace, config = root / "site", root / "workspace", root / "config"
        for directory in (site, self.workspace, config):
            directory.mkdir()
        (site / "hermesos_unit_people.py").write_text(PLUGIN)
        info = site / "hermesos_unit_people-1.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: hermesos-unit-people\nVersion: 1.0.0\nRequires-Dist: hermesos-core>=0.1\n"
        )
        (info / "entry_points.txt").write_text("[hermesos.plugins]\nunitpeople = hermesos_unit_people\n")
        self.policy = config / "policy.toml"
        self.policy.write_text('ask = ["fs:write"]\n')
        self.vars = {
            "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "HERMESOS_FS_ROOT": str(self.workspace),
            "XDG_CONFIG_HOME": str(config),
            "HERMESOS_POLICY": str(self.policy),
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "",
        }

    def asked(self, path: str, content: str) -> str:
        """What the client's user reads before fs_write writes *content* to *path*."""
        return ASKED.format(reason=self.reason, path=path, content=content)

    @property
    def reason(self) -> str:
        """The policy plugin's reason for asking, naming its file."""
        return f'the policy "{self.policy}" asks a person to approve it'


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


class Person:
    """An elicitation callback: a person answering each question with the next of *answers*, and what they read."""

    def __init__(self, *answers: tuple[str, dict[str, Any] | None]) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.asked.append((params.message, params.requested_schema))
        action, content = self.answers.pop(0)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


@asynccontextmanager
async def stdio(env: Env, mode: str, **callbacks: Any) -> AsyncIterator[Client]:
    """A Client of ``hermesos serve`` over stdio, which it starts, with *callbacks* (``elicitation_callback``...)."""
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=env.vars)
    with (env.root / "stdio.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, **callbacks) as client:
            yield client


@pytest.fixture
def http_url(env: Env, serving_http: Any) -> Iterator[str]:
    """A real ``hermesos serve --transport http --port 0``; the URL it printed."""
    with serving_http({**os.environ, **env.vars}) as url:
        yield url


@asynccontextmanager
async def http(url: str, mode: str, **callbacks: Any) -> AsyncIterator[Client]:
    async with Client(streamable_http_client(url), mode=mode, **callbacks) as client:
        yield client


def run(function: Callable[[], Any]) -> Any:
    return anyio.run(function)


def text(result: Any) -> str:
    assert len(result.content) == 1
    return str(result.content[0].text)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error
    data: dict[str, Any] = result.meta[ERROR_META_KEY]
    assert text(result) == f"{data['code']}: {data['message']}"
    return data


class Progress:
    """A progress callback: every report it got, in order."""

    def __init__(self) -> None:
        self.got: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.got.append((progress, total, message))


STEPS = [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]


# -- progress ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_progress_reaches_the_clients_progress_callback_in_order(env: Env, mode: str) -> None:
    async def scenario() -> None:
        async with stdio(env, mode) as client:
            for name in ("unit_count", "unit_acount"):  # from a worker thread, and from the event loop
                heard = Progress()
                result = await client.call_tool(name, {"steps": 3}, progress_callback=heard)
                assert result.structured_content == {"result": 3}
                assert heard.got == STEPS, name  # every report, in order, before the result
            # A call that asked for no progress is answered as ever.
            assert text(await client.call_tool("unit_count", {"steps": 2})) == "2"

    run(scenario)


@pytest.mark.parametrize("mode", MODES)
def test_progress_over_http(env: Env, http_url: str, mode: str) -> None:
    async def scenario() -> None:
        async with http(http_url, mode) as client:
            heard = Progress()
            assert text(await client.call_tool("unit_count", {"steps": 3}, progress_callback=heard)) == "3"
            assert heard.got == STEPS

    run(scenario)


# -- log messages --------------------------------------------------------------------------------------


class Logs:
    """A logging callback: (level, logger, data) of every log message it got."""

    def __init__(self) -> None:
        self.got: list[tuple[str, str | None, Any]] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.got.append((params.level, params.logger, params.data))


def said(*levels: str) -> list[tuple[str, str, str]]:
    return [(level, "unit_chatty", f"a {level} message") for level in levels]


def test_log_messages_under_the_2025_protocol_honour_set_level(env: Env) -> None:
    async def scenario() -> None:
        logs = Logs()
        async with stdio(env, "legacy", logging_callback=logs) as client:
            assert client.server_capabilities.logging is not None  # declared: the client may set a level
            assert text(await client.call_tool("unit_chatty", {})) == "said"
            assert logs.got == said("debug", "info", "warning", "error")  # no level set: every one
            logs.got.clear()
            with warnings.catch_warnings():  # the SDK warns that the 2026 protocol deprecates logging/setLevel
                warnings.simplefilter("ignore")
                await client.set_logging_level("warning")
            await client.call_tool("unit_chatty", {})
            assert logs.got == said("warning", "error")

    run(scenario)


def test_log_messages_under_the_2026_protocol_are_sent_as_each_request_asks(env: Env) -> None:
    async def scenario() -> None:
        logs = Logs()
        async with stdio(env, "auto", logging_callback=logs, log_level="info") as client:
            await client.call_tool("unit_chatty", {})
            assert logs.got == said("info", "warning", "error")
        logs.got.clear()
        async with stdio(env, "auto", logging_callback=logs) as client:  # asks for none
            assert text(await client.call_tool("unit_chatty", {})) == "said"
            assert logs.got == []

    run(scenario)


# -- approval ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_ask_is_put_to_the_clients_user(env: Env, mode: str) -> None:
    """Accept: the tool runs; decline or cancel: a person declined it; accept with always: not asked again."""
    written = env.workspace / "todo.txt"
    person = Person(("accept", {"always": False}), ("decline", None), ("cancel", None), ("accept", {"always": True}))

    async def scenario() -> None:
        async with stdio(env, mode, elicitation_callback=person) as client:
            result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy milk"})
            assert not result.is_error, text(result)
            assert written.read_text() == "buy milk"
            assert person.asked == [(env.asked("todo.txt", "buy milk"), ALWAYS_FORM)]

            for _ in ("decline", "cancel"):
                result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "sell milk"})
                assert text(result) == DECLINED
                assert error_of(result)["reason"] == "declined"
                assert written.read_text() == "buy milk"  # not written

            await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy eggs"})
            assert written.read_text() == "buy eggs"
            assert len(person.asked) == 4
            # Approved for good: this server does not ask again.
            await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy bread"})
            assert written.read_text() == "buy bread"
            assert len(person.asked) == 4

    run(scenario)


def test_the_user_reads_the_target_whole_and_the_input_escaped_and_cut_saying_by_how_much(env: Env) -> None:
    """The attack on the prompt: the file written lies past the input shown; an invisible character hides in it."""
    hidden = "notes/" + "./" * 300 + "Make\u200bfile"
    person = Person(("decline", None))

    async def scenario() -> None:
        async with stdio(env, "auto", elicitation_callback=person) as client:
            result = await client.call_tool("fs_write", {"path": hidden, "content": "x"})
            assert text(result) == DECLINED

    run(scenario)
    [(message, _)] = person.asked
    head, target, shown, action = message.split("\n")
    assert head.startswith("fs_write needs your approval")
    assert target == "Target: notes/Make\\u200bfile (in ASCII: notes/Make\\u200bfile)"
    whole = json.dumps(
        {"path": hidden, "content": "x", "mode": "overwrite", "create_parents": True}, ensure_ascii=False
    )
    assert shown == f"Input: {whole[:500]}... ({len(whole) - 500:,} more characters not shown)"
    assert "\u200b" not in message
    assert action == "Accept to allow this call; decline to refuse it."


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_elicitation_is_refused_saying_why(env: Env, mode: str) -> None:
    async def scenario() -> None:
        async with stdio(env, mode) as client:
            result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy milk"})
            assert text(result) == cannot_ask(NO_ELICITATION)
            error = error_of(result)
            assert (error["reason"], error["detail"]) == ("unreachable", NO_ELICITATION)
            assert not (env.workspace / "todo.txt").exists()

    run(scenario)


def test_a_handlers_question_reaches_the_user_under_the_2025_protocol(env: Env) -> None:
    person = Person(("accept", {}), ("decline", None))

    async def scenario() -> None:
        async with stdio(env, "legacy", elicitation_callback=person) as client:
            assert text(await client.call_tool("unit_tidy", {"files": 3})) == "deleted"
            assert text(await client.call_tool("unit_tidy", {"files": 3})) == "kept"
        message, form = person.asked[0]
        assert (
            message
            == 'unit_tidy asks: Delete 3 files?\nInput: {"files": 3}\nAccept to answer yes; decline to answer no.'
        )
        assert form["properties"]["always"]["description"] == (
            "Answer yes whenever unit_tidy asks this again, until the server stops"
        )

    run(scenario)


def test_a_handlers_question_is_answered_no_under_the_2026_protocol(env: Env) -> None:
    """The 2026 protocol asks only before a handler starts: a question mid-call is no, the person never asked."""
    person = Person()

    async def scenario() -> None:
        async with stdio(env, "auto", elicitation_callback=person) as client:
            assert text(await client.call_tool("unit_tidy", {"files": 3})) == "kept"
        assert person.asked == []

    run(scenario)


def test_over_http_the_2026_protocol_asks_through_input_required(env: Env, http_url: str) -> None:
    """Stateless HTTP: the question comes back as the call's result, and the client calls again with the answer."""
    person = Person(("accept", {}), ("decline", None))
    written = env.workspace / "todo.txt"

    async def scenario() -> None:
        async with http(http_url, "auto", elicitation_callback=person) as client:
            result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy milk"})
            assert not result.is_error, text(result)
            assert written.read_text() == "buy milk"
            result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "sell milk"})
            assert text(result) == DECLINED
            assert written.read_text() == "buy milk"
        # Over HTTP one runtime serves many clients: no "always" is offered.
        empty = {"type": "object", "properties": {}}
        assert person.asked == [
            (env.asked("todo.txt", "buy milk"), empty),
            (env.asked("todo.txt", "sell milk"), empty),
        ]

    run(scenario)


def test_over_http_the_2025_protocol_cannot_ask(env: Env, http_url: str) -> None:
    person = Person()

    async def scenario() -> None:
        async with http(http_url, "legacy", elicitation_callback=person) as client:
            result = await client.call_tool("fs_write", {"path": "todo.txt", "content": "buy milk"})
            assert text(result) == cannot_ask(NO_BACK_CHANNEL)
        assert person.asked == []
        assert not (env.workspace / "todo.txt").exists()

    run(scenario)


def test_an_answer_counts_only_for_the_question_it_answers(env: Env, http_url: str) -> None:
    """A 2026 client that sends an answer to another question (another input) is asked its own question."""

    async def scenario() -> None:
        async with http(http_url, "auto", elicitation_callback=Person()) as client:
            first = await client.session.call_tool(
                "fs_write", {"path": "a.txt", "content": "one"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            assert first.input_requests is not None
            [key] = first.input_requests
            # The answer to a.txt's question, sent with a call that writes b.txt: asked again, not written.
            accepted: types.InputResponses = {key: types.ElicitResult(action="accept", content={})}
            again = await client.session.call_tool(
                "fs_write", {"path": "b.txt", "content": "two"}, input_responses=accepted, allow_input_required=True
            )
            assert isinstance(again, types.InputRequiredResult)
            assert again.input_requests is not None
            assert list(again.input_requests) != [key]
            assert not (env.workspace / "b.txt").exists()
            # With its own answer, it is written.
            done = await client.session.call_tool(
                "fs_write", {"path": "a.txt", "content": "one"}, input_responses=accepted, allow_input_required=True
            )
            assert not isinstance(done, types.InputRequiredResult)
            assert (env.workspace / "a.txt").read_text() == "one"

    run(scenario)


def test_load_runtime_takes_the_approver_and_elicit_approval_needs_a_request(
    env: Env, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """In process, with no MCP request being served, there is no client to ask: refused, saying so, and audited."""
    for name, value in env.vars.items():
        if name != "PYTHONPATH":
            monkeypatch.setenv(name, value)
    caplog.set_level(logging.INFO, logger="hermes_core.audit")  # its own level: the records are asked for
    runtime = load_runtime(approver=elicit_approval)
    refused = runtime.observe_sync("fs.write", {"path": "todo.txt", "content": "buy milk"})["error"]
    assert (refused["reason"], refused["detail"]) == (
        "unreachable",
        "no MCP request is being served here, so there is no client to ask",
    )
    assert not (env.workspace / "todo.txt").exists()
    audited = [record.__dict__ for record in caplog.records if record.name == "hermes_core.audit"]
    decided = [(record["permission"], record["decision"], record["source"]) for record in audited]
    assert decided[-1] == ("fs:write", "denied", "approver (the MCP client cannot be asked)")
    assert decided[-2][:2] == ("fs:write", "asked")
    approved = load_runtime(approver=lambda request: Approval.once())
    assert approved.observe_sync("fs.write", {"path": "todo.txt", "content": "buy milk"})["ok"]
    assert (env.workspace / "todo.txt").read_text() == "buy milk"


# -- the TypeScript SDK's 1.x client, on which many hosts are built ------------------------------------

# It starts the server over stdio, answers each elicitation with accept (and records it), calls unit_count
# with a progress callback and fs_write once, then each counting tool ten times with a single report (the
# last report of a call, written just before its response), and prints what it got as JSON.
TYPESCRIPT = """
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
const [command, ...args] = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "hermesos-test", version: "0" }, { capabilities: { elicitation: {} } });
const asked = [];
const errors = [];
client.onerror = (error) => errors.push(String(error));
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push(request.params);
  return { action: "accept", content: { always: false } };
});
await client.connect(transport);
const progress = [];
const counted = await client.callTool({ name: "unit_count", arguments: { steps: 3 } }, undefined, {
  onprogress: (report) => progress.push(report),
});
const wrote = await client.callTool({ name: "fs_write", arguments: { path: "todo.txt", content: "buy milk" } });
const last = [];
for (let round = 0; round < 10; round++) {
  for (const name of ["unit_count", "unit_acount"]) {
    const heard = [];
    await client.callTool({ name, arguments: { steps: 1 } }, undefined, { onprogress: (report) => heard.push(report) });
    last.push(heard.length);
  }
}
await client.close();
process.stdout.write(JSON.stringify({ progress, counted, wrote, asked, last, errors }));
"""


@pytest.fixture(scope="module")
def typescript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TypeScript SDK's 1.x client, installed from npm into a temporary folder: the script that runs it."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        pytest.skip("node and npm are needed to install and run the TypeScript MCP client")
    folder = tmp_path_factory.mktemp("typescript-client")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), "@modelcontextprotocol/sdk@1"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm could not install the TypeScript client:\n{done.stdout}\n{done.stderr}"
    script = folder / "people.mjs"
    script.write_text(TYPESCRIPT)
    return script


def test_the_typescript_1x_client_hears_progress_and_answers_an_ask(env: Env, typescript: Path) -> None:
    done = subprocess.run(
        ["node", str(typescript), json.dumps(SERVE)],
        env={**os.environ, **env.vars},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["progress"] == [{"progress": step, "total": total, "message": message} for step, total, message in STEPS]
    # A call's last report reaches the callback, though this client forgets a call's progress handler when it
    # reads the response and hands a notification on a turn later: serve pings it before responding.
    assert got["last"] == [1] * 20
    assert got["errors"] == []
    assert got["counted"]["structuredContent"] == {"result": 3}
    assert got["wrote"].get("isError") is False, got["wrote"]
    assert (env.workspace / "todo.txt").read_text() == "buy milk"
    [asked] = got["asked"]
    assert (asked["message"], asked["requestedSchema"]) == (env.asked("todo.txt", "buy milk"), ALWAYS_FORM)


@pytest.mark.parametrize("reply", ['"yes"', '{"action": "accept", "content": {"note": "\\ud800"}}'])
def test_an_answer_to_the_question_that_cannot_be_read_ends_the_call_as_unanswered(env: Env, reply: str) -> None:
    """A client's answer the SDK cannot read was dropped, and the call waited for it for ever (no time limit)."""
    process = subprocess.Popen(
        SERVE, env={**os.environ, **env.vars}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()

    def send(message: dict[str, Any] | str) -> None:
        process.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    try:
        capabilities = {"elicitation": {"form": {}}}
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "r", "version": "0"},
        }
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert "result" in json.loads(lines.get(timeout=30))
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        arguments = {"path": "todo.txt", "content": "buy milk"}
        send(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "fs_write", "arguments": arguments}}
        )
        question = json.loads(lines.get(timeout=30))
        assert question["method"] == "elicitation/create"
        send('{"jsonrpc": "2.0", "id": ' + json.dumps(question["id"]) + ', "result": ' + reply + "}")
        answer = json.loads(lines.get(timeout=30))
        assert answer["id"] == 2
        assert answer["result"]["isError"] is True
        text = answer["result"]["content"][0]["text"]
        assert text.startswith("PERMISSION_DENIED: ")
        assert "(the MCP client did not answer the question: it replied with an error)" in text
        assert not (env.workspace / "todo.txt").exists()
    finally:
        process.kill()
        process.wait(10)
        reader.join(10)  # stdout ended with the process
        process.stdout.close()
        with contextlib.suppress(OSError):
            process.stdin.close()
