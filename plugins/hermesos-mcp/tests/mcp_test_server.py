"""A real MCP server for the tests, on the SDK's low-level Server: ``python mcp_test_server.py stdio|http``.

Over http it listens on a free loopback port and prints its URL on stdout;
with ``MCP_TEST_TOKEN`` set, every request must carry that bearer token.
``MCP_TEST_VARIANT_FILE`` names a file: while it holds ``2``, one more tool
is listed (a server whose listing changed); ``MCP_TEST_CALL_LOG`` names a
file each call's tool name is appended to;
``MCP_TEST_PID_DIR`` receives a file named after the server's pid while it
runs; ``MCP_TEST_FAIL_START=1`` makes it exit before the handshake, after a
line on stderr.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Say the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "what to say"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"sum": {"type": "integer"}},
            "required": ["sum"],
        },
        "annotations": {"title": "Add", "readOnlyHint": True},
    },
    {
        "name": "lie",
        "description": "Return structured content its output schema rejects.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
    },
    {
        "name": "fail",
        "description": "Report a failure of its own (isError).",
        "inputSchema": {"type": "object", "properties": {"why": {"type": "string"}}, "required": ["why"]},
        "annotations": {"destructiveHint": True, "readOnlyHint": False},
    },
    {
        "name": "crash",
        "description": "Exit the server process in the middle of the call.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "sleep",
        "description": "Sleep for a while.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number", "minimum": 0}}},
    },
    {
        "name": "picture",
        "description": "Return text and an image.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "has space",
        "description": "A name no hermes tool can have.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "odd",
        "description": "An input schema with a keyword hermes does not check.",
        "inputSchema": {
            "type": "object",
            "properties": {"when": {"type": "string"}},
            "$dynamicRef": "#when",
        },
    },
]

EXTRA = {
    "name": "extra",
    "description": "Only in the second variant.",
    "inputSchema": {"type": "object", "properties": {}},
}


def listing() -> list[dict[str, Any]]:
    variant = Path(os.environ.get("MCP_TEST_VARIANT_FILE", "/nonexistent"))
    return [*TOOLS, EXTRA] if variant.is_file() and variant.read_text().strip() == "2" else TOOLS


def text(value: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    log = os.environ.get("MCP_TEST_CALL_LOG")
    if log:
        with open(log, "a") as file:
            file.write(name + "\n")
    if name == "echo":
        return text(arguments["text"])
    if name == "add":
        total = arguments["a"] + arguments["b"]
        return {**text(json.dumps({"sum": total})), "structuredContent": {"sum": total}}
    if name == "lie":
        return {**text("{}"), "structuredContent": {"sum": "seven"}}
    if name == "fail":
        return text(f"the server refused: {arguments['why']}", error=True)
    if name == "crash":
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if name == "sleep":
        await anyio.sleep(arguments.get("seconds", 0))
        return text("slept")
    if name == "picture":
        return {
            "content": [
                {"type": "text", "text": "a dot:"},
                {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
            ],
            "isError": False,
        }
    return text(f"{name} is not a tool of this server", error=True)


def server() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in listing()])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        return {**await call(params.name, params.arguments or {}), "resultType": "complete"}

    made: Server[Any] = Server("unit-test-server", version="1.2.3", on_list_tools=list_tools)
    made.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return made


async def serve_stdio() -> None:
    made = server()
    async with stdio_server() as (read, write):
        await made.run(read, write, made.create_initialization_options())


def token_guard(app: Any, token: str) -> Any:
    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers", ()))
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    return guarded


async def serve_http() -> None:
    import uvicorn

    app = server().streamable_http_app(streamable_http_path="/mcp", stateless_http=True)
    token = os.environ.get("MCP_TEST_TOKEN")
    config = uvicorn.Config(token_guard(app, token) if token else app, log_config=None, access_log=False, lifespan="on")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        print(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
        await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    pid_dir = os.environ.get("MCP_TEST_PID_DIR")
    if pid_dir:
        Path(pid_dir, str(os.getpid())).write_text(" ".join(sys.argv))
    if os.environ.get("MCP_TEST_FAIL_START") == "1":
        print("this server is configured to fail", file=sys.stderr, flush=True)
        sys.exit(2)
    anyio.run(serve_stdio if sys.argv[1] == "stdio" else serve_http)


if __name__ == "__main__":
    main()
