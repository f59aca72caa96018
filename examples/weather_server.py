"""A small MCP server written with the official MCP SDK, which the demo mounts with hermesos-mcp.

It knows nothing of hermes: any MCP server would do (``mcp-server-time`` from
PyPI, say). Run over stdio: ``python examples/weather_server.py``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")


@server.tool()
def forecast(city: str, days: int = 3) -> str:
    """The weather forecast for a city, for the next few days."""
    return f"{city}: sunny for {days} days"


if __name__ == "__main__":
    server.run("stdio")
