"""``hermesos call math.eval`` with five MCP servers configured, against the same call with hermesos-mcp disabled.

Five real stdio MCP servers (small servers on the MCP SDK's ``MCPServer``, as
``examples/weather_server.py`` is) are configured in an ``mcp.toml``, and
their listings cached (one ``hermesos tools list`` first). Then each round
times, as wall time in fresh processes, the whole command:

* **mcp**: ``hermesos call math.eval '{"expression": "6 * 7"}'`` with the five
  servers configured: a local tool, which needs none of them;
* **bare**: the same with ``HERMESOS_DISABLE_PLUGINS=hermesos-mcp``.

The two run one after the other in each round (their order alternating), and
the median of the rounds' ratios mcp / bare is the figure of docs/performance.md
("Servers start when they are needed"): the target is 1.2 times at most. Each
round also checks that the call started no server (each writes a pid file
when it starts).

    python3 dev.py bench        # runs this with the other benchmarks
    python bench/bench_mcp_lazy.py [--rounds N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVERS = ("weather", "notes", "units", "clock", "dice")
TARGET = 1.2

SERVER = '''\
import os, sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

Path(os.environ["BENCH_PID_DIR"], str(os.getpid())).write_text(sys.argv[1])
server = MCPServer(sys.argv[1])


@server.tool()
def lookup(query: str, limit: int = 3) -> str:
    """Look something up."""
    return f"{query}: {limit} results"


@server.tool()
def describe() -> str:
    """Say what this server does."""
    return f"the {sys.argv[1]} server"


if __name__ == "__main__":
    server.run("stdio")
'''


def _hermesos(environ: dict[str, str], *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", *args], env=environ, capture_output=True, text=True, check=False
    )
    return time.perf_counter() - start, done


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 if a call failed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="paired rounds (default 15)")
    parser.add_argument("--json", metavar="FILE", help="also write every time and ratio to FILE")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hermesos-bench-lazy-") as temporary:
        root = Path(temporary)
        (root / "server.py").write_text(SERVER)
        pids = root / "pids"
        pids.mkdir()
        (root / "workspace").mkdir()
        entries = [
            f"[servers.{name}]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(root / 'server.py'))}, {json.dumps(name)}]\n"
            f"env = {{ BENCH_PID_DIR = {json.dumps(str(pids))} }}\n"
            for name in SERVERS
        ]
        (root / "mcp.toml").write_text("\n".join(entries))
        environ = {
            **os.environ,
            "HERMESOS_MCP_CONFIG": str(root / "mcp.toml"),
            "HERMESOS_MCP_CACHE_DIR": str(root / "cache"),
            "HERMESOS_MCP_REFRESH": "",
            "HERMESOS_DISABLE_PLUGINS": "",
            "XDG_CONFIG_HOME": str(root / "config"),
            "HERMESOS_FS_ROOT": str(root / "workspace"),  # every bundled plugin loads, as for a user who set it
        }
        bare = {**environ, "HERMESOS_DISABLE_PLUGINS": "hermesos-mcp"}
        _, listed = _hermesos(environ, "tools", "list")  # lists the five servers, and caches their listings
        if listed.returncode != 0 or sum(f"{name}.lookup" in listed.stdout for name in SERVERS) != len(SERVERS):
            print(f"the five servers were not listed:\n{listed.stdout}{listed.stderr}", file=sys.stderr)
            return 1
        call = ("call", "math.eval", '{"expression": "6 * 7"}')
        times: dict[str, list[float]] = {"mcp": [], "bare": []}
        ratios: list[float] = []
        started = 0
        for round_ in range(options.rounds + 1):  # the first round warms the file cache, and is not counted
            for path in pids.iterdir():
                path.unlink()
            order = [("mcp", environ), ("bare", bare)]
            if round_ % 2:
                order.reverse()
            took = {}
            for key, env in order:
                seconds, done = _hermesos(env, *call)
                if done.returncode != 0 or done.stdout.strip() != "42":
                    print(f"{key}: the call failed: {done.stdout}{done.stderr}", file=sys.stderr)
                    return 1
                took[key] = seconds
            started += len(list(pids.iterdir()))
            if round_ == 0:
                continue
            for key, kept in times.items():
                kept.append(took[key])
            ratios.append(took["mcp"] / took["bare"])
    ratio = statistics.median(ratios)
    print(f"hermesos call math.eval, {len(SERVERS)} MCP servers configured and cached, {options.rounds} paired rounds:")
    for key, label in (("mcp", "with the servers configured"), ("bare", "hermesos-mcp disabled")):
        print(f"  {label:<28} median {statistics.median(times[key]) * 1000:7.0f} ms")
    verdict = "met" if ratio <= TARGET else "NOT MET"
    print(f"  ratio (median of the rounds)  {ratio:.2f}x  (target <= {TARGET}x: {verdict})")
    print(f"  servers started by the calls: {started}")
    if options.json:
        Path(options.json).parent.mkdir(parents=True, exist_ok=True)
        Path(options.json).write_text(json.dumps({"times": times, "ratios": ratios, "started": started}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
