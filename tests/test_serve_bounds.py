"""What a client of ``hermesos serve`` can cost it: each attack as it was made, against a real server process.

* over stdio, one line of 1 GiB (it held 1 GB of memory);
* over HTTP, 1,100 connections that never finish their headers (with 1,024
  file descriptors, every client was locked out for 60 s);
* over HTTP, a 5.9 MB request of 300,000 unexpected keys while another
  client lists the tools (that client waited 26.5 s).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

SERVE = [sys.executable, "-m", "hermes_core", "serve"]
MIB = 1024 * 1024
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """This process's environment, with no user configuration, policy or MCP server, and the fs root in *tmp_path*."""
    (tmp_path / "config").mkdir()
    (tmp_path / "root").mkdir()
    return {
        **os.environ,
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HERMESOS_FS_ROOT": str(tmp_path / "root"),
        "HERMESOS_GRANTS": "",
        "HERMESOS_POLICY": "",
        "HERMESOS_DISABLE_PLUGINS": "",
        "HERMESOS_MCP_CONFIG": "",
    }


def _line(stdin: Any, message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


# -- stdio: one message is at most 16 MiB, as an HTTP body is -----------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
def test_a_1_gib_line_over_stdio_is_refused_with_bounded_memory_and_the_session_goes_on(
    environ: dict[str, str],
) -> None:
    process = subprocess.Popen(
        SERVE, env=environ, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin is not None
    assert process.stdout is not None
    assert process.stderr is not None
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(process.stderr.read()))  # type: ignore[union-attr]
    reader.start()
    try:
        _line(process.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO})
        assert json.loads(process.stdout.readline())["id"] == 1
        _line(process.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.monotonic()
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "')
        chunk = b"x" * MIB
        for _ in range(1024):  # 1 GiB, on one line
            process.stdin.write(chunk)
        process.stdin.write(b'"}}\n')
        _line(process.stdin, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        refused = json.loads(process.stdout.readline())
        assert refused == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": "the message is larger than 16777216 bytes, the most this server reads in one message; "
                "it was not read: send smaller arguments",
            },
        }
        listed = json.loads(process.stdout.readline())
        assert listed["id"] == 3
        assert "math_eval" in {tool["name"] for tool in listed["result"]["tools"]}
        assert time.monotonic() - started < 60
        process.stdin.close()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if process.returncode is None:
            process.kill()
            process.wait(10)
        reader.join(10)
        process.stdout.close()
        process.stderr.close()
        if not process.stdin.closed:
            process.stdin.close()
    assert process.returncode == 0, errors
    assert b"Traceback" not in errors[0]
    # Unbounded, the line was held whole (1 GB); bounded, at most one 16 MiB message is.
    assert usage.ru_maxrss * 1024 < 300 * MIB, f"peak resident memory {usage.ru_maxrss // 1024} MiB"
