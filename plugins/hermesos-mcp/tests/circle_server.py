"""A real MCP server whose tools list optional arguments: ``python circle_server.py``, over stdio.

``area`` takes ``radius`` and an optional ``unit`` and says nothing of
``additionalProperties``, as most function-calling definitions do; ``tag``
says ``additionalProperties: true``. ``CIRCLE_CALL_LOG`` names a file each
call's arguments are appended to, as a JSON line.
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS: list[dict[str, Any]] = [
    {
        "name": "area",
        "description": "The area of a circle.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "radius": {"type": "number", "minimum": 0},
                "unit": {"type": "string", "enum": ["m", "cm"], "default": "m"},
            },
            "required": ["radius"],
        },
    },
    {
        "name": "tag",
        "description": "Tag a circle with any labels.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": True,
        },
    },
]


def server() -> Server[Any]:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        arguments = params.arguments or {}
        log = os.environ.get("CIRCLE_CALL_LOG")
        if log:
            with open(log, "a") as file:
                file.write(json.dumps({"tool": params.name, "arguments": arguments}) + "\n")
        if params.name == "area":
            said = f"{3.14159 * arguments['radius'] ** 2:.1f} {arguments.get('unit', 'm')}2"
        else:
            said = ", ".join(sorted(arguments))
        return {"content": [{"type": "text", "text": said}], "isError": False, "resultType": "complete"}

    made: Server[Any] = Server("circle-server", version="1.0.0", on_list_tools=list_tools)
    made.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return made


async def serve() -> None:
    made = server()
    async with stdio_server() as (read, write):
        await made.run(read, write, made.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
