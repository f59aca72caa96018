"""The main job: the installed tools, listed and called through the hermesos command, and given to models.

Runs the real ``hermesos`` command of this environment in a fresh temporary
directory, whose ``files`` folder is the root hermesos-fs confines itself to
(``HERMESOS_FS_ROOT``: the plugin has no default root), and prints each command
as a shell would show it; then, with a policy that asks a person to approve
every write, a write refused for want of anyone to ask and one approved with
``--approve``, and a long listing's progress. Then one model turn through
each SDK adapter: the real OpenAI and Anthropic clients, talking to a
``ScriptedModel`` on 127.0.0.1 (no network, no key), are given the tools'
definitions, receive two tool calls (one succeeds, one fails with an error
that says where), and send the results back. Then the MCP SDK's stdio
client lists and calls the tools through ``hermesos serve``. Then an MCP
server that knows nothing of hermes (``weather_server.py``, written with the
MCP SDK) is mounted by hermesos-mcp: its tool is listed and called like any
other, and a misspelt argument is refused with a "did you mean" before the
call leaves the process. Last, ``core_demo.py``: the core on its own, with each of the seven
error codes as a model receives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai

from hermes_core import Runtime, load_runtime
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.testing import ScriptedCall, ScriptedModel

HERMES = Path(sys.executable).with_name("hermesos")

STEPS = [
    ("The installed plugins, and what each contributes:", ["plugins", "list"]),
    ("Every tool the installed plugins contribute:", ["tools", "list"]),
    ("A call of a bundled tool; its output is JSON:", ["call", "math.eval", '{"expression": "(2 + 3) * 4"}']),
    (
        "Tools that touch files need a grant; each grant is a permission pattern:",
        ["call", "fs.write", '{"path": "notes/todo.txt", "content": "buy milk\\n"}', "--grant", "fs:write"],
    ),
    ("", ["call", "fs.read", '{"path": "notes/todo.txt"}', "--grant", "fs:read"]),
    (
        "A call that fails, as a model receives it (--json: the error's to_dict()):",
        ["call", "fs.read", '{"pth": "notes/todo.txt"}', "--grant", "fs:read", "--json"],
    ),
    (
        "Without the grant, the error says that no rewrite will help, and the operator how to grant it:",
        ["call", "fs.read", '{"path": "notes/todo.txt"}'],
    ),
    (
        "A write that would run code later (a git hook) is refused whatever the grant; the operator may allow it:",
        ["call", "fs.write", '{"path": ".git/hooks/pre-commit", "content": "id\\n"}', "--grant", "fs:write"],
    ),
    ("Every plugin checked, every problem listed:", ["check"]),
]


# -- a person in the loop: approval and progress -----------------------------------------------------

POLICY = '[tools."fs.*"]\nask = ["fs:write"]\n'
DONE = '{"path": "notes/done.txt", "content": "call Ada\\n"}'
PEOPLE_STEPS = [
    (
        "Not on a terminal there is nobody to ask: the call is refused, saying how to approve it:",
        ["call", "fs.write", DONE, "--grant", "fs:write"],
    ),
    (
        "On a terminal, hermesos asks (yes / no / always); --approve approves every ask of the call, and says so:",
        ["call", "fs.write", DONE, "--grant", "fs:write", "--approve"],
    ),
    (
        "A long call reports its progress: fs.list of a folder of 2,500 files (on a terminal, a live bar):",
        ["call", "fs.list", '{"path": "photos", "limit": 2}', "--grant", "fs:read"],
    ),
]


def people(env: dict[str, str], workspace: str) -> None:
    """A policy asking a person for every write, then approval refused and given, then a long listing's progress.

    The policy lies beside the file tools' root, never in it (a tool that may write there could rewrite it).
    Each command's stderr is shown as a pipe gets it: progress as plain lines, where a terminal has a live bar
    that is erased when the call ends.
    """
    policy = Path(workspace) / "policy.toml"
    policy.write_text(POLICY)
    photos = Path(env["HERMESOS_FS_ROOT"]) / "photos"
    photos.mkdir()
    for number in range(1, 2501):
        (photos / f"IMG_{number:04}.jpg").touch()
    print(f"\n# A person in the loop: a policy asking a person to approve each write, HERMESOS_POLICY={policy.name}\n")
    print(policy.read_text(), end="", flush=True)
    _run_steps(PEOPLE_STEPS, {**env, "HERMESOS_POLICY": str(policy)}, workspace, piped=True)


# -- a model turn through each SDK adapter ------------------------------------------------------------

QUESTION = "What is on my todo list, and what is 2 to the power of 10?"
ANSWER = "Your todo list says: buy milk. And 2 to the power of 10 is 1024."
TODO = ScriptedCall("fs_read", {"path": "notes/todo.txt"})
POWER = ScriptedCall("math_eval", {"expression": "2 ** 10"})


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """Run the block with *env* as the process environment (the plugins read their settings when loaded)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _show(label: str, lines: list[str]) -> None:
    """*lines* after a label, each line of each indented under the first."""
    rows = [row for line in lines for row in line.splitlines()] or [""]
    print(f"  {label:<15}{rows[0]}")
    for row in rows[1:]:
        print(" " * 17 + row)


def openai_turns(runtime: Runtime) -> None:
    """Chat Completions: definitions out; two calls in, the second's arguments not JSON; results back; a retry."""
    tools = OpenAITools(runtime)
    script = [[TODO, ScriptedCall("math_eval", '{"expression": "2 ** 10"')], POWER, ANSWER]  # a "}" is missing
    with ScriptedModel(script) as model, openai.OpenAI(base_url=model.base_url + "/v1", api_key="offline") as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        calls: list[Any] = []
        while True:
            response = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools.definitions())
            received = model.requests[-1].body  # what the SDK sent, as the server read it
            if calls:
                results = received["messages"][-len(calls) :]
                _show("results sent:", [f"[{result['tool_call_id']}] {result['content']}" for result in results])
            else:
                _show("tools sent:", [", ".join(tool["function"]["name"] for tool in received["tools"])])
            message = response.choices[0].message
            messages.append(message)
            calls = [call for call in message.tool_calls or [] if call.type == "function"]
            if not calls:
                _show("model answers:", [message.content or ""])
                return
            _show("model calls:", [f"{call.function.name} {call.function.arguments}  [{call.id}]" for call in calls])
            messages += [tools.handle_sync(call) for call in calls]


def anthropic_turns(runtime: Runtime) -> None:
    """Messages: definitions out; two tool_use blocks in, the second's expression wrong; results back; a retry."""
    tools = AnthropicTools(runtime)
    script = [[TODO, ScriptedCall("math_eval", {"expression": "2 ^ 10"})], POWER, ANSWER]
    with ScriptedModel(script) as model, anthropic.Anthropic(base_url=model.base_url, api_key="offline") as client:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        definitions: Any = tools.definitions()
        while True:
            response = client.messages.create(
                model="claude-sonnet-5", max_tokens=1024, messages=messages, tools=definitions
            )
            received = model.requests[-1].body
            if len(messages) > 1:
                results = received["messages"][-1]["content"]
                _show(
                    "results sent:",
                    [
                        f"[{result['tool_use_id']}]{' (is_error)' if result['is_error'] else ''} {result['content']}"
                        for result in results
                    ],
                )
            else:
                _show("tools sent:", [", ".join(tool["name"] for tool in received["tools"])])
            messages.append({"role": "assistant", "content": response.content})
            uses = [block for block in response.content if block.type == "tool_use"]
            if not uses:
                _show("model answers:", ["".join(block.text for block in response.content if block.type == "text")])
                return
            _show("model calls:", [f"{use.name} {json.dumps(use.input)}  [{use.id}]" for use in uses])
            messages.append({"role": "user", "content": [tools.handle_sync(use) for use in uses]})


# -- the MCP SDK's client through hermesos serve -----------------------------------------------------------


async def mcp_session(env: dict[str, str], workspace: str) -> None:
    """List the tools and call two of them through ``hermesos serve`` (stdio), with the MCP SDK's own client."""
    from mcp import Client, StdioServerParameters  # noqa: PLC0415 - only this step needs the MCP SDK
    from mcp.client.stdio import stdio_client  # noqa: PLC0415

    argv = ["serve", "--grant", "fs:read"]
    print(f"  (the client starts: hermesos {shlex.join(argv)})", flush=True)
    params = StdioServerParameters(command=str(HERMES), args=argv, env=env, cwd=workspace)
    async with Client(stdio_client(params, errlog=sys.stderr)) as client:
        listed = (await client.list_tools()).tools
        _show("tools/list:", [", ".join(tool.name for tool in listed)])
        for name, arguments in [("fs_read", {"path": "notes/todo.txt"}), ("fs_read", {"pth": "notes/todo.txt"})]:
            result = await client.call_tool(name, arguments)
            text = "".join(block.text for block in result.content if block.type == "text")
            _show("tools/call:", [f"{name} {json.dumps(arguments)}"])
            _show("isError:" if result.is_error else "result:", [text])


def model_turns(env: dict[str, str], workspace: str) -> None:
    """The tools given to models through the SDKs, and to an MCP client through hermesos serve."""
    with _environment(env):
        runtime = load_runtime(grants=["fs:read"])
    print("\n# The tools given to a model through the OpenAI adapter (the openai client; a scripted model)", flush=True)
    openai_turns(runtime)
    print("\n# The same through the Anthropic adapter (the anthropic client; a scripted model)", flush=True)
    anthropic_turns(runtime)
    print("\n# The MCP SDK's stdio client, listing and calling the tools through hermesos serve", flush=True)
    asyncio.run(mcp_session(env, workspace))


# -- any MCP server's tools, mounted by hermesos-mcp ---------------------------------------------------

MCP_STEPS = [
    ("The server's tool, listed with the others (its listing is cached for the next load):", ["tools", "list"]),
    ("Called like any tool; it needs the mcp:weather permission:", ["call", "weather.forecast", '{"city": "Oslo"}']),
    ("", ["call", "weather.forecast", '{"city": "Oslo", "days": 2}', "--grant", "mcp:weather"]),
    (
        "A misspelt argument never reaches the server (the MCP SDK alone would drop it without a word):",
        ["call", "weather.forecast", '{"city": "Oslo", "dayz": 2}', "--grant", "mcp:weather"],
    ),
]


def mcp_servers(env: dict[str, str], workspace: str) -> None:
    """Mount weather_server.py with hermesos-mcp: a configuration file, then the same hermesos commands.

    The file and the listing cache lie beside the file tools' root, never in it: a tool that may write
    there could choose what hermesos starts, and the loader would refuse to start.
    """
    config = Path(workspace) / "mcp.toml"
    server = Path(__file__).with_name("weather_server.py")
    entry = f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n"
    config.write_text(f"[servers.weather]\n{entry}")
    print(f"\n# Any MCP server's tools, mounted by hermesos-mcp from {config.name}:\n")
    print(config.read_text(), end="", flush=True)
    mounted = {**env, "HERMESOS_MCP_CONFIG": str(config), "HERMESOS_MCP_CACHE_DIR": str(Path(workspace) / "cache")}
    _run_steps(MCP_STEPS, mounted, workspace)


def _run_steps(steps: list[tuple[str, list[str]]], env: dict[str, str], workspace: str, *, piped: bool = False) -> None:
    """Run each command as a shell would show it; stdin is empty, so no command waits for a person.

    *piped*: stdout and stderr through one pipe, then shown: what a command says on stderr is shown as a
    pipe gets it, never as a live line a terminal would erase.
    """
    for title, argv in steps:
        if title:
            print(f"\n# {title}")
        print("$ hermesos " + shlex.join(argv), flush=True)
        done = subprocess.run(
            [str(HERMES), *argv],
            env=env,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if piped else None,
            stderr=subprocess.STDOUT if piped else None,
            text=True,
            check=False,
        )
        if piped:
            print(done.stdout, end="", flush=True)
        if done.returncode:
            print(f"(exit status {done.returncode})", flush=True)


def main() -> int:
    """Run the steps in a temporary workspace; return 0 unless the demo itself went wrong."""
    with tempfile.TemporaryDirectory(prefix="hermesos-demo-") as workspace:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
        files = Path(workspace, "files")
        files.mkdir()
        env["HERMESOS_FS_ROOT"] = str(files)
        print(f"# The file tools work in a folder of their own: HERMESOS_FS_ROOT={files.name}/", flush=True)
        _run_steps(STEPS, env, workspace)
        people(env, workspace)
        model_turns(env, workspace)
        mcp_servers(env, workspace)
    print("\n# The core on its own: examples/core_demo.py\n", flush=True)
    return subprocess.call([sys.executable, str(Path(__file__).with_name("core_demo.py"))])


if __name__ == "__main__":
    sys.exit(main())
