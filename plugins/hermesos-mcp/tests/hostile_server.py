"""A hostile MCP server for the tests, in raw JSON-RPC over stdio: ``python hostile_server.py MODE [PID_DIR]``.

Modes:

* ``huge``: its tool ``big`` answers with one result line of 400 MB (written
  as it goes: the server itself holds one chunk).
* ``stderr``: its tool ``noisy`` writes 200 MB on stderr, then answers ``ok``.
* ``stubborn``: ignores SIGTERM and never answers the handshake.
* ``clash``: lists ``a_b``, ``A_B`` and ``ok``.
* ``deep``: lists a tool whose input schema nests 300 levels, past what the SDK's reader takes (about 200),
  so its answer to ``tools/list`` cannot be read; its tool ``unreadable`` answers with a lone surrogate.

With a *PID_DIR*, it writes a file named after its pid there when it starts.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

MODE = sys.argv[1]
OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = {
    "huge": [{"name": "big", "description": "Answer 400 MB.", "inputSchema": OBJECT}],
    "stderr": [{"name": "noisy", "description": "Write 200 MB on stderr.", "inputSchema": OBJECT}],
    "stubborn": [],
    "clash": [
        {"name": name, "description": f"The tool {name}.", "inputSchema": OBJECT} for name in ("a_b", "A_B", "ok")
    ],
    "deep": [{"name": "deep", "description": "Nested.", "inputSchema": OBJECT}],
}[MODE]
if MODE == "deep":
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        deep = {"type": "array", "items": deep}
    TOOLS[0]["inputSchema"] = {"type": "object", "properties": {"x": deep}}
CHUNK = "a" * (1024 * 1024)


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def call(request_id: Any, name: str) -> None:
    if MODE == "huge":
        head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": ""}]}})
        before, after = head.split('"text": ""')
        sys.stdout.write(before + '"text": "')
        for _ in range(400):
            sys.stdout.write(CHUNK)
        sys.stdout.write('"' + after + "\n")
        sys.stdout.flush()
        return
    if MODE == "stderr":
        for _ in range(200):
            sys.stderr.write(CHUNK[:-1] + "\n")
        sys.stderr.write("the last line of the flood\n")
        sys.stderr.flush()
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": f"{name}: ok"}]}})


def main() -> None:
    if len(sys.argv) > 2:
        Path(sys.argv[2], str(os.getpid())).touch()
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "hostile", "version": "1.0.0"}
            result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            call(request_id, message["params"]["name"])
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        else:
            error = {"code": -32601, "message": f"no method {method}"}
            send({"jsonrpc": "2.0", "id": request_id, "error": error})


if __name__ == "__main__":
    main()
