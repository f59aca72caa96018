"""A real MCP server (the SDK's low-level Server, over stdio) listing tools whose schemas weigh what the tests ask.

``WEIGHTY_TOOLS`` lists ``member:size`` pairs, comma-separated: each is a tool
named after the member (``enum_objects``...) whose input schema is that member
of ``tests/schema_weights.py`` at about *size* bytes (``tools_many`` is that many
bytes of small tools, ``t0``, ``t1``...). The tool ``ok`` is always listed,
first, and answers ``ok``; ``WEIGHTY_PAGES`` splits the listing into that many
pages, and ``WEIGHTY_PAGE_LOG`` names a file each page asked for is written to.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
import schema_weights

OK = {"name": "ok", "description": "Answer ok.", "inputSchema": {"type": "object", "properties": {}}}


def listing() -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = [OK]
    for pair in filter(None, os.environ.get("WEIGHTY_TOOLS", "").split(",")):
        member, size = pair.split(":")
        if member == "tools_many":
            tools.extend(schema_weights.tools_many(int(size)))
        else:
            schema = schema_weights.MEMBERS[member](int(size))
            tools.append({"name": member, "description": f"The member {member}.", "inputSchema": schema})
    return tools


def server() -> Server[Any]:
    tools = [types.Tool.model_validate(tool) for tool in listing()]
    pages = max(1, int(os.environ.get("WEIGHTY_PAGES", "1")))
    per = -(-len(tools) // pages)
    log = os.environ.get("WEIGHTY_PAGE_LOG")

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        if log:
            with open(log, "a") as file:
                file.write(f"{start}\n")
        end = start + per
        return types.ListToolsResult(tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "ok"}], "isError": False, "resultType": "complete"}

    made: Server[Any] = Server("weighty", version="1.0.0", on_list_tools=list_tools)
    made.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return made


async def serve() -> None:
    made = server()
    async with stdio_server() as (read, write):
        await made.run(read, write, made.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
