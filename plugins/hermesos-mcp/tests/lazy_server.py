"""A small MCP server on the SDK's MCPServer, for the tests of when servers start: ``python lazy_server.py NAME``.

Its one tool is ``NAME.ping`` (``ping``, echoing its text). ``LAZY_PID_DIR``
names a directory that receives a file named after its pid when it starts;
``LAZY_START_DELAY`` is how many seconds it sleeps first; while the file
``LAZY_BROKEN_FILE`` names exists, it exits at once (a server that can no
longer start, its entry unchanged); while the file
``LAZY_VARIANT_FILE`` names holds ``2``, it lists a second tool, ``pong``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

if os.environ.get("LAZY_BROKEN_FILE") and Path(os.environ["LAZY_BROKEN_FILE"]).exists():
    print("this server can no longer start", file=sys.stderr)
    sys.exit(3)
if os.environ.get("LAZY_PID_DIR"):
    Path(os.environ["LAZY_PID_DIR"], str(os.getpid())).write_text(sys.argv[1] if len(sys.argv) > 1 else "")
time.sleep(float(os.environ.get("LAZY_START_DELAY", "0")))

server = MCPServer(sys.argv[1] if len(sys.argv) > 1 else "lazy")


@server.tool()
def ping(text: str = "pong") -> str:
    """Say the text back."""
    return text


variant = os.environ.get("LAZY_VARIANT_FILE")
if variant and Path(variant).exists() and Path(variant).read_text().strip() == "2":

    @server.tool()
    def pong(times: int = 1) -> str:
        """Say pong, so many times."""
        return "pong " * times


if __name__ == "__main__":
    server.run("stdio")
