"""What hermesos-mcp adds to a remote tools/call: a mounted tool through the runtime, against the SDK's client.

Run with ``python3 bench/bench_mcp_remote.py`` (``--quick`` for a smoke run).
One MCP server (the SDK's ``MCPServer`` with ``add(a: int, b: int) -> int``,
this script run with ``--serve``) is started twice over stdio:

* hermes: mounted by hermesos-mcp as ``bench.add`` in a runtime opened with
  ``async with`` on the benchmark's event loop (the pool's session lives on
  that loop, as under ``hermesos serve``), and called with
  ``await runtime.call("bench.add", ...)``: the lookup, the permission, the
  input checked against the imported (closed) input schema, the call, the
  output checked against the imported output schema;
* SDK: ``await client.session.call_tool("add", ...)``, the SDK's own
  ``ClientSession`` on the benchmark's event loop (which checks the
  structured result against the output schema too).

Same server, same transport, each with its own server process; the ratio is
the median of the same-round ratios (bench/_method.py), target <= 1.10x.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _method import Case, Comparison, Contender, arguments, machine, report, require, time_all

ARGS = {"a": 1, "b": 2}
TARGET = 1.10


def serve() -> None:
    """The server both sides call, over stdio."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    server.run("stdio")


def _config() -> str:
    script = Path(__file__).resolve()
    return f'[servers.bench]\ncommand = "{sys.executable}"\nargs = ["{script}", "--serve"]\n'


async def _hold_client(ready: asyncio.Event, stop: asyncio.Event, box: dict[str, Any]) -> None:
    """Enter the SDK client in one task, hand it over, and leave it in the same task when told to."""
    from mcp import Client, StdioServerParameters

    script = str(Path(__file__).resolve())
    params = StdioServerParameters(command=sys.executable, args=[script, "--serve"])
    async with Client(params) as client:
        await client.list_tools()  # as the pool does when it starts a server: the output schema is known
        box["client"] = client
        ready.set()
        await stop.wait()


def main(argv: list[str]) -> int:
    if "--serve" in argv:
        serve()
        return 0
    args = arguments(__doc__.split("\n\n")[0], argv, sample_ms=100.0, quick_sample_ms=20.0)
    from hermes_mcp import mount_servers, parse_config

    from hermes_core import Runtime

    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as cache:
        mounted = mount_servers(parse_config(_config(), "bench"), cache_directory=cache)
        require(not mounted.problems, f"the server mounted with problems: {mounted.problems}")
        runtime = Runtime(mounted.tools, grants=["mcp:bench"], resources=[mounted.pool])
        ready, stop, box = asyncio.Event(), asyncio.Event(), {}
        holder = loop.create_task(_hold_client(ready, stop, box))
        opened = contextlib.AsyncExitStack()
        loop.run_until_complete(opened.enter_async_context(runtime))
        try:
            loop.run_until_complete(ready.wait())
            session = box["client"].session
            hermes_result = loop.run_until_complete(runtime.call("bench.add", ARGS))
            sdk_result = loop.run_until_complete(session.call_tool("add", ARGS))
            require(hermes_result == {"result": 3}, f"hermes answered {hermes_result!r}")
            require(sdk_result.structured_content == {"result": 3}, f"the SDK answered {sdk_result!r}")
            cases = [
                Case(
                    "tools/call add(a, b) over stdio, one server process each",
                    [
                        Contender(
                            "hermes",
                            "hermesos-mcp: await runtime.call('bench.add', ...)",
                            "await call('bench.add', ARGS)",
                            {"call": runtime.call, "ARGS": ARGS},
                        ),
                        Contender(
                            "sdk",
                            "SDK: await session.call_tool('add', ...)",
                            "await call('add', ARGS)",
                            {"call": session.call_tool, "ARGS": ARGS},
                        ),
                    ],
                )
            ]
            time_all(cases, loop, args)
        finally:
            loop.run_until_complete(opened.aclose())
            stop.set()
            loop.run_until_complete(holder)
    loop.close()
    comparisons = [Comparison("hermes", "sdk", "hermesos-mcp / SDK ClientSession", TARGET)]
    missed = report(cases, comparisons, machine(["hermesos-core", "hermesos-mcp", "mcp"]), args)
    print(f"{missed} target(s) not met; total run time {time.perf_counter() - started:.0f} s")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
