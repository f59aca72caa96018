"""hermesos serve against the MCP SDK's own MCPServer: a tools/call round trip, through the SDK's client.

Run with ``python3 bench/bench_mcp.py`` (``--quick`` for a smoke run). Both
servers serve the same tool, ``add(a: int, b: int) -> int`` (an ``async def``,
its output schema wrapped under ``result`` by both), and the SDK's ``Client``
calls it, checking the structured result against the output schema as it
always does. Three ways of connecting, each with both servers side by side:

* in memory, 2026 protocol: ``Client(server)`` (the SDK's in-process path,
  no JSON-RPC framing);
* in memory, 2025 protocol: ``Client(server, mode="legacy")`` (the SDK's
  ``InMemoryTransport``: memory streams, JSON-RPC dispatch, the handshake);
* stdio: each server in its own process (this script, ``--serve hermes`` or
  ``--serve sdk``), started by the SDK's stdio client.

Method, as ``bench_core.py``'s: each contender's loop count is calibrated so
one sample takes about ``--sample-ms``; then, for ``--rounds`` rounds, every
contender takes one sample, in a shuffled order, the garbage collector off
while it runs. A ratio hermes/SDK is the median, over rounds, of the two
contenders' ratio within the same round.

Over stdio, a round trip's wall time is mostly the SDK's transport and the
scheduler handing the pipes between three processes, and it swings with
whatever else the machine runs. On Linux the script also reads each server
process's CPU time per call from /proc: what serving a call costs that
process, steadier than the wall time, reported beside it (not a target).
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import itertools
import json
import os
import platform
import random
import statistics
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _method import arguments, paired_ratio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from hermes_core import Runtime, define_tool
from hermes_core import schema as s
from hermes_core.serve import mcp_server, serve_stdio

ARGS = {"a": 1, "b": 2}
TARGET = 1.0  # hermes/SDK: a hermesos server costs a client no more than the SDK's own


async def add_handler(args: dict[str, int]) -> int:
    """The hermes tool's handler: the parsed input as one dict."""
    return args["a"] + args["b"]


async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def hermes_runtime() -> Runtime:
    tool = define_tool(
        name="add",
        description="Add two integers.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        output=s.integer(),
        handler=add_handler,
    )
    return Runtime([tool])


def sdk_server() -> MCPServer:
    server = MCPServer("sdk")
    server.tool()(add)
    return server


def serve(which: str) -> None:
    """Run one of the two servers over stdio, for the stdio case's subprocesses."""
    if which == "hermes":
        anyio.run(lambda: serve_stdio(hermes_runtime()))
    else:
        sdk_server().run("stdio")


# -- measuring ---------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system) process *pid* has used, from /proc (None where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid(which: str) -> int | None:
    """The pid of this process's child serving ``--serve which`` (Linux; None elsewhere)."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = stat.read_text().rsplit(")", 1)[1].split()[1]
            argv = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if parent == me and b"--serve" in argv and which.encode() in argv:
            return int(stat.parent.name)
    return None


@dataclass
class Contender:
    """One client calling ``add`` on one server; its samples are seconds per call, one per round.

    For a server in a process of its own, ``cpu`` holds that process's CPU
    seconds per call in each sample: what serving a call costs, whatever else
    the machine is doing (wall times over stdio depend on how the scheduler
    hands the pipes between three processes).
    """

    key: str
    label: str
    client: Client
    pid: int | None = None
    number: int = 0
    samples: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    _cpu_used: float = 0.0

    async def time(self, number: int) -> float:
        call = self.client.call_tool
        cpu_before = None if self.pid is None else _cpu_seconds(self.pid)
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            for _ in itertools.repeat(None, number):
                await call("add", ARGS)
            elapsed = time.perf_counter() - started
        finally:
            gc.enable()
        cpu_after = None if self.pid is None else _cpu_seconds(self.pid)
        if cpu_before is not None and cpu_after is not None:
            self._cpu_used = cpu_after - cpu_before
        return elapsed

    async def calibrate(self, sample_s: float) -> None:
        """The loop count for which one sample takes about *sample_s* (as ``timeit.autorange``)."""
        await self.time(3)  # warm up: the first call lists the tools, for the output schema
        number = 1
        while True:
            for factor in (1, 2, 5):
                n = number * factor
                if await self.time(n) >= sample_s / 2:
                    elapsed = await self.time(n)
                    self.number = max(1, int(n * sample_s / max(elapsed, 1e-9)))
                    return
            number *= 10

    async def sample(self) -> None:
        self.samples.append(await self.time(self.number) / self.number)
        if self.pid is not None:
            self.cpu.append(self._cpu_used / self.number)


async def check(contender: Contender) -> None:
    result = await contender.client.call_tool("add", ARGS)
    text = getattr(result.content[0], "text", None)
    if result.is_error or text != "3" or result.structured_content != {"result": 3}:
        raise RuntimeError(f"benchmark set-up is wrong: {contender.label} answered {result!r}")


def _stdio(which: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(Path(__file__).resolve()), "--serve", which])


#: (key, label, the Client's mode): each case runs both servers.
CASES: list[tuple[str, str, str]] = [
    ("memory", "in memory, 2026 protocol (Client(server))", "auto"),
    ("memory-legacy", "in memory, 2025 protocol (InMemoryTransport)", "legacy"),
    ("stdio", "stdio, 2026 protocol (subprocesses)", "auto"),
]


def _server(key: str, which: str) -> Any:
    if key == "stdio":
        return _stdio(which)
    return mcp_server(hermes_runtime()) if which == "hermes" else sdk_server()


async def run(args: argparse.Namespace) -> list[tuple[str, Contender, Contender]]:
    pairs: list[tuple[str, Contender, Contender]] = []
    async with AsyncExitStack() as stack:
        for key, label, mode in CASES:
            pair = []
            for which in ("hermes", "sdk"):
                client = await stack.enter_async_context(Client(_server(key, which), mode=mode))
                server = "hermesos" if which == "hermes" else "MCPServer"
                pid = _server_pid(which) if key == "stdio" else None
                pair.append(Contender(f"{key}.{which}", server, client, pid))
            pairs.append((label, pair[0], pair[1]))
        contenders = [c for _, h, p in pairs for c in (h, p)]
        for c in contenders:
            await check(c)
        print(f"timing {len(contenders)} contenders, {args.rounds} rounds of ~{args.sample_ms:g} ms samples ...")
        for c in contenders:
            await c.calibrate(args.sample_ms / 1e3)
        order = random.Random(args.seed)
        for _ in range(args.rounds):
            order.shuffle(contenders)
            for c in contenders:
                await c.sample()
    return pairs


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f}"


def report(pairs: list[tuple[str, Contender, Contender]], args: argparse.Namespace) -> int:
    info = {"python": platform.python_version(), "machine": platform.machine()}
    for dist in ("hermesos-core", "mcp", "pydantic", "anyio"):
        info[dist] = importlib.metadata.version(dist)
    print()
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    print(f"method: {args.rounds} interleaved rounds, samples of ~{args.sample_ms:g} ms, per-call times in µs")
    print()
    print("tools/call add(a, b) through the SDK's Client")
    print(f"  {'case':<48} {'server':<10} {'best':>8} {'median':>8} {'calls/sample':>13}")
    for label, hermes, peer in pairs:
        for c in (hermes, peer):
            best, median = _us(min(c.samples)), _us(statistics.median(c.samples))
            print(f"  {label:<48} {c.label:<10} {best:>8} {median:>8} {c.number:>13,}")
    print()
    print("ratios hermesos / MCPServer (median over rounds of the same-round ratio; below 1: hermesos is faster)")
    missed = 0
    results = {}
    for label, hermes, peer in pairs:
        ratio = paired_ratio(hermes, peer)
        met = ratio <= TARGET
        missed += not met
        results[label] = ratio
        print(f"  {label:<48} {ratio:>5.2f}x   <= {TARGET:.2f}x  {'met' if met else 'NOT MET'}")
    cpu_pairs = [(label, h, p) for label, h, p in pairs if h.cpu and p.cpu]
    if cpu_pairs:
        print()
        # /proc counts CPU time in clock ticks (10 ms): a sample of 100 ms or more keeps the rounding small.
        print("the server process's CPU time per call (µs, median), and the same-round ratio: not a target")
        for label, hermes, peer in cpu_pairs:
            ratio = statistics.median(h / p for h, p in zip(hermes.cpu, peer.cpu, strict=True) if p)
            cpu_h, cpu_p = _us(statistics.median(hermes.cpu)), _us(statistics.median(peer.cpu))
            print(f"  {label:<48} hermesos {cpu_h:>8}  MCPServer {cpu_p:>8}  {ratio:>5.2f}x")
            results[f"{label}, server CPU"] = ratio
    print()
    if args.json:
        data = {
            "machine": info,
            "rounds": args.rounds,
            "sample_ms": args.sample_ms,
            "contenders": {
                c.key: {"number": c.number, "samples_s": c.samples, "server_cpu_s": c.cpu}
                for _, h, p in pairs
                for c in (h, p)
            },
            "ratios": {
                label: {"ratio": ratio, "target": None if "CPU" in label else TARGET}
                for label, ratio in results.items()
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")
        print(f"results written to {args.json}")
    return missed


def main(argv: list[str]) -> int:
    def serve_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--serve", choices=("hermes", "sdk"), help=argparse.SUPPRESS)  # the stdio subprocesses

    args = arguments(__doc__.split("\n\n")[0], argv, serve_option, sample_ms=100.0, quick_sample_ms=20.0)
    if args.serve:
        serve(args.serve)
        return 0
    started = time.perf_counter()
    pairs = anyio.run(run, args)
    missed = report(pairs, args)
    print(f"{missed} target(s) not met; total run time {time.perf_counter() - started:.0f} s")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
