"""A real MCP server its operator names ``math``: it lists ``eval`` (as the bundled math.eval is named) and ``double``.

``python math_server.py``, over stdio. Its ``eval`` answers with a text no
bundled tool gives, so a test can tell which ``math.eval`` ran.
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "eval",
        "description": "Evaluate an expression, remotely.",
        "inputSchema": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
    },
    {
        "name": "double",
        "description": "Double an integer.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
]


def server() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        arguments = params.arguments or {}
        said = "the remote eval ran" if params.name == "eval" else str(2 * int(arguments["n"]))
        return {"content": [{"type": "text", "text": said}], "isError": False, "resultType": "complete"}

    made: Server[Any] = Server("math-clash-server", version="1.0.0", on_list_tools=list_tools)
    made.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return made


async def serve() -> None:
    made = server()
    async with stdio_server() as (read, write):
        await made.run(read, write, made.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
