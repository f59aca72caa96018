"""A server that fails as it is told, for the tests of failures remembered: ``python failing_server.py MODE MARKS``.

Each time it starts, it writes a file named after its pid into the directory
MARKS (a test counts its starts), then reads the file MODE:

* ``exits``: it says why on stderr, with an escape sequence in it, and exits
  with status 3 before the handshake;
* ``hangs``: it never answers;
* ``garbage``: it answers the handshake with a line that is not JSON-RPC,
  then waits;
* ``ok``: an MCP server whose one tool is ``ping``.

The mode is a file, not an argument, so that a test can break or mend the
server without changing its entry in ``mcp.toml``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

mode_file, marks = sys.argv[1], sys.argv[2]
Path(marks, str(os.getpid())).write_text("started")
mode = Path(mode_file).read_text().strip()
if mode == "exits":
    print("\x1b[31mexiting on purpose\x1b[0m", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "hangs":
    time.sleep(600)
    sys.exit(0)
if mode == "garbage":
    sys.stdin.readline()
    print("<html>this is not JSON-RPC</html>", flush=True)
    sys.stdin.read()
    sys.exit(0)

from mcp.server.mcpserver import MCPServer  # noqa: E402 - imported when the server is to work, not to fail

server = MCPServer("mended")


@server.tool()
def ping(text: str = "pong") -> str:
    """Say the text back."""
    return text


server.run("stdio")
