"""hermesos serve as the strictest real clients read it: the TypeScript SDK's 1.x and 2.x clients, and the Python SDK's.

The TypeScript clients are installed from npm at test time, once per test
session, into a temporary folder: ``@modelcontextprotocol/sdk@1`` (the 1.x
line, whose client checks ``structuredContent`` against a tool's output schema
even in an error result) and ``@modelcontextprotocol/client@2`` (the 2.x line,
published under that name). One small ES-module script per client and
transport connects to a real ``hermesos serve`` subprocess (over stdio, which
the client starts, or over Streamable HTTP), lists the tools (which is when a
client compiles their output schemas), makes every call and prints what it got
as JSON. Every error code is made to occur, through a fixture plugin whose
tools fail in each way a call can.
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

import anyio
import pytest

from hermes_core import ErrorCode
from hermes_core.serve import ERROR_META_KEY

mcp = pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

SERVE = [sys.executable, "-m", "hermes_core", "serve"]

PLUGIN = """
from hermes_core import define_tool, hookimpl, schema as s

def crash(args):
    return 1 / 0

def parse(args):  # its own schema refuses a value: SchemaError passes through the call as it is
    return s.integer().parse("seven")

def build(args):  # it builds a schema with a bad argument: InvalidDefinitionError passes through too
    return s.string(min_length=-1)

def tool(name, description, handler):
    return define_tool(name=name, description=description, version="1.0.0", handler=handler,
                       input=s.object({}), output=s.integer())

@hookimpl
def hermes_tools():
    return [
        tool("unit.crash", "Raise.", crash),
        tool("unit.broken", "Return a string where an integer is promised.", lambda args: "seven"),
        tool("unit.parse", "Parse a value its schema refuses.", parse),
        tool("unit.build", "Build a schema with a bad argument.", build),
    ]
"""

#: Each call, and the code it must fail with (None: it succeeds).
CALLS: list[tuple[str, dict[str, Any], str | None]] = [
    ("math_eval", {"expression": "2 ** 10"}, None),
    ("math.eval", {"expression": "1"}, "TOOL_NOT_FOUND"),  # the tool's own name, not its wire name
    ("math_eval", {"expression": 5}, "INPUT_INVALID"),
    ("fs_read", {"path": "notes.txt"}, "PERMISSION_DENIED"),  # nothing granted
    ("unit_crash", {}, "TOOL_FAILED"),
    ("unit_broken", {}, "OUTPUT_INVALID"),
    ("unit_parse", {}, "SCHEMA_INVALID"),
    ("unit_build", {}, "INVALID_DEFINITION"),
]

# The script every TypeScript client runs: argv is the client line ("1" or "2"), the transport
# ("stdio" or "http"), where the server is (a command as JSON, or a URL) and the calls as JSON.
SCRIPT = """
const [line, transportName, where, callsJson] = process.argv.slice(2);
const calls = JSON.parse(callsJson);
let Client, StdioClientTransport, StreamableHTTPClientTransport;
if (line === "1") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js"));
  ({ StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
} else {
  ({ Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client"));
  ({ StdioClientTransport } = await import("@modelcontextprotocol/client/stdio"));
}
let transport;
if (transportName === "stdio") {
  const [command, ...args] = JSON.parse(where);
  transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(where));
}
const client = new Client({ name: "hermesos-test", version: "0" });
await client.connect(transport);
// Listing the tools is when a client compiles their output schemas, as every host does first.
const tools = (await client.listTools()).tools;
const got = { outputSchemas: tools.filter((tool) => tool.outputSchema).length, calls: [] };
for (const [name, args] of calls) {
  try {
    got.calls.push({ name, result: await client.callTool({ name, arguments: args }) });
  } catch (error) {
    const thrown = { name: error.constructor.name, code: error.code, message: String(error.message) };
    got.calls.push({ name, thrown });
  }
}
await client.close();
process.stdout.write(JSON.stringify(got));
"""


# -- the clients --------------------------------------------------------------------------------------


class TypeScriptClients:
    """The TypeScript SDK clients installed in one temporary folder, with the versions npm resolved."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.script = folder / "client.mjs"
        self.versions = {
            line: json.loads((folder / "node_modules" / package / "package.json").read_text())["version"]
            for line, package in (("1", "@modelcontextprotocol/sdk"), ("2", "@modelcontextprotocol/client"))
        }

    def run(self, line: str, transport: str, where: str, env: dict[str, str]) -> dict[str, Any]:
        """Run every call of :data:`CALLS` with the client of *line* (``"1"``, ``"2"``): what it got."""
        calls = json.dumps([[name, arguments] for name, arguments, _ in CALLS])
        done = subprocess.run(
            ["node", str(self.script), line, transport, where, calls],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"the {line}.x client failed:\n{done.stderr}"
        got: dict[str, Any] = json.loads(done.stdout)
        return got


@pytest.fixture(scope="session")
def typescript(tmp_path_factory: pytest.TempPathFactory) -> TypeScriptClients:
    """Both TypeScript SDK client lines, installed from npm into a temporary folder once per session."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to install and run the TypeScript MCP clients")
    folder = tmp_path_factory.mktemp("typescript-clients")
    done = subprocess.run(
        [
            npm,
            "install",
            "--no-audit",
            "--no-fund",
            "--prefix",
            str(folder),
            "@modelcontextprotocol/sdk@1",
            "@modelcontextprotocol/client@2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm could not install the TypeScript clients:\n{done.stdout}\n{done.stderr}"
    (folder / "client.mjs").write_text(SCRIPT)
    return TypeScriptClients(folder)


class Env:
    """The servers' environment: the fixture plugin installed, a workspace with one file, nothing granted."""

    def __init__(self, root: Path) -> None:
        site, workspace, config = root / "site", root / "workspace", root / "config"
        for directory in (site, workspace, config):
            directory.mkdir()
        (site / "hermesos_unit_clients.py").write_text(PLUGIN)
        info = site / "hermesos_unit_clients-1.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: hermesos-unit-clients\nVersion: 1.0.0\nRequires-Dist: hermesos-core>=0.1\n"
        )
        (info / "entry_points.txt").write_text("[hermesos.plugins]\nunitclients = hermesos_unit_clients\n")
        (workspace / "notes.txt").write_text("buy milk\n")
        self.vars = {
            "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
            "HERMESOS_FS_ROOT": str(workspace),
            "XDG_CONFIG_HOME": str(config),  # no user policy file, no mcp.toml
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "",
            "HERMESOS_POLICY": "",
        }
        self.all = {**os.environ, **self.vars}


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return Env(tmp_path)


@pytest.fixture
def http_url(env: Env, serving_http: Any) -> Iterator[str]:
    """A real ``hermesos serve --transport http --port 0``; the URL it printed."""
    with serving_http(env.all) as url:
        yield url


def python_client(transport: str, where: str, env: Env) -> list[dict[str, Any]]:
    """Every call of :data:`CALLS` through the Python SDK's client: each result as wire JSON."""

    async def scenario() -> list[dict[str, Any]]:
        got = []
        with open(os.devnull, "w") as errlog:
            params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], env=env.vars)
            target: Any = stdio_client(params, errlog=errlog) if transport == "stdio" else where
            async with Client(target) as client:
                await client.list_tools()
                for name, arguments, _ in CALLS:
                    result = await client.call_tool(name, arguments)
                    got.append(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
        return got

    return anyio.run(scenario)


# -- what every client reads --------------------------------------------------------------------------


def _read(result: dict[str, Any], code: str | None) -> dict[str, Any] | None:
    """Check one call's result as a client handed it over; the error it carries, if it failed."""
    if code is None:
        assert result.get("isError") is False
        assert result["structuredContent"] == {"result": 1024}  # checked against the output schema
        assert result["content"] == [{"type": "text", "text": "1024"}]
        return None
    assert result["isError"] is True
    # No structured content: a client may check it against the tool's output schema.
    assert "structuredContent" not in result
    error: dict[str, Any] = result["_meta"][ERROR_META_KEY]
    assert error["code"] == code
    assert result["content"] == [{"type": "text", "text": f"{code}: {error['message']}"}]
    return error


def _check_every_client(typescript: TypeScriptClients, transport: str, where: str, env: Env) -> None:
    """Every client gets the same result for every call, each failure an isError result it can read."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for line in ("1", "2"):
        got = typescript.run(line, transport, where, env.all)
        assert got["outputSchemas"] == 11  # every tool has one: the clients had a schema to check against
        thrown = [(call["name"], call["thrown"]) for call in got["calls"] if "thrown" in call]
        assert thrown == [], f"the TypeScript SDK {typescript.versions[line]} client threw"  # no -32602
        seen[f"typescript {typescript.versions[line]}"] = [call["result"] for call in got["calls"]]
    seen["python"] = python_client(transport, where, env)

    errors: dict[str, dict[str, Any]] = {}
    for client, results in seen.items():
        assert len(results) == len(CALLS), client
        for (name, _, code), result in zip(CALLS, results, strict=True):
            error = _read(result, code)
            if error is None:
                continue
            # The error reads the same in every client, call ids and all but the id aside.
            error = {key: value for key, value in error.items() if key != "call_id"}
            assert errors.setdefault(name + str(code), error) == error, client
    assert {error["code"] for error in errors.values()} == set(ErrorCode)  # every code occurred

    by_code = {error["code"]: error for error in errors.values()}
    assert by_code["TOOL_NOT_FOUND"]["suggestions"] == ["math_eval"]  # a name the client can send
    assert [issue["path"] for issue in by_code["INPUT_INVALID"]["issues"]] == [["expression"]]
    assert by_code["INPUT_INVALID"]["message"].startswith("math_eval was called with invalid input:")
    assert (by_code["PERMISSION_DENIED"]["tool"], by_code["PERMISSION_DENIED"]["permission"]) == ("fs_read", "fs:read")
    assert by_code["TOOL_FAILED"]["message"].startswith("unit_crash failed: its handler raised ZeroDivisionError.")
    assert by_code["OUTPUT_INVALID"]["tool"] == "unit_broken"
    assert by_code["SCHEMA_INVALID"]["issues"][0]["kind"] == "type"
    assert by_code["INVALID_DEFINITION"]["field"] == "min_length"


def test_every_client_reads_every_error_over_stdio(typescript: TypeScriptClients, env: Env) -> None:
    _check_every_client(typescript, "stdio", json.dumps(SERVE), env)


def test_every_client_reads_every_error_over_http(typescript: TypeScriptClients, env: Env, http_url: str) -> None:
    _check_every_client(typescript, "http", http_url, env)


def test_the_typescript_clients_are_the_lines_meant(typescript: TypeScriptClients) -> None:
    """The 1.x line is the one whose client checked structured content in error results; 2.x is its successor."""
    assert typescript.versions["1"].startswith("1.")
    assert typescript.versions["2"].startswith("2.")
