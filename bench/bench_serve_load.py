"""hermesos serve behind nginx, at load: calls a second and p50/p99 latency for 1, 2 and 4 replicas.

Run with ``python3 dev.py loadtest`` (or ``python3 bench/bench_serve_load.py``;
``--quick`` for a smoke run). For each replica count, ``deploy/cluster.py``
starts nginx in front of that many ``hermesos serve --transport http``
processes with the load test's plugin (``deploy/loadtools.py``), and two
drivers (``deploy/load.py``) call through nginx in closed loops, each worker
sending its next call when its last is answered:

* raw: bare HTTP/1.1 ``POST``s on keep-alive connections, for throughput;
* sdk: the MCP Python SDK's client (``Client`` over ``streamable_http_client``,
  the 2026 protocol), several sessions at once, as a host runs them;

each with two tools: ``load_echo`` (answers at once, on the event loop) and
``load_nap`` (sleeps 50 ms on a worker thread, as a tool waiting on a network
does). Every row checks that there were no errors and that each call
answered ran exactly once (the plugin records each call where it ran). The
machine's cores are printed beside every figure: nginx, the replicas and the
drivers share them, so past as many replicas as cores the figures cannot rise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _method import machine

from deploy import load
from deploy.cluster import Cluster, NginxMissingError, find_nginx, load_site

NAP = 0.05
#: (route, driver, tool, workers, arguments): what each replica count is measured with. "direct": to the one
#: replica, not through nginx, for what nginx costs (one replica only).
ROWS = [
    ("direct", "raw", "load_echo", 16, {}),
    ("nginx", "raw", "load_echo", 16, {}),
    ("nginx", "raw", "load_nap", 64, {"seconds": NAP}),
    ("nginx", "sdk", "load_echo", 8, {}),
    ("nginx", "sdk", "load_nap", 16, {"seconds": NAP}),
]


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _environment(folder: Path) -> dict[str, str]:
    """The replicas' environment: the load test's plugin, its records, and no user configuration."""
    site = load_site(folder / "site")
    for name in ("records", "workspace", "config"):
        (folder / name).mkdir(exist_ok=True)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("HERMESOS_")}
    environment.update(
        PYTHONPATH=str(site),
        LOADTEST_RECORDS=str(folder / "records"),
        XDG_CONFIG_HOME=str(folder / "config"),
        HERMESOS_FS_ROOT=str(folder / "workspace"),
    )
    return environment


def _drive(url: str, token: str, driver: str, calls: Iterator[load.Call], *, workers: int, seconds: float) -> Any:
    until = time.monotonic() + seconds
    if driver == "raw":
        return load.raw_calls(url, calls, concurrency=workers, token=token, until=until)
    return load.sdk_calls(url, calls, sessions=workers, token=token, until=until)


def measure(replicas: int, seconds: float, warmup: float, folder: Path) -> list[dict[str, Any]]:
    """Every row of :data:`ROWS` for *replicas* replicas; each a dict of its figures."""
    environment = _environment(folder)
    found: list[dict[str, Any]] = []
    with Cluster(replicas, folder / "run", environ=environment) as cluster:
        for number, (route, driver, tool, workers, arguments) in enumerate(ROWS):
            if route == "direct" and replicas != 1:
                continue
            url = cluster.url if route == "nginx" else cluster.replicas[0].url
            prefix = f"r{replicas}-{number}"
            warm = load.tags(f"{prefix}-warm", tool, **arguments)
            asyncio.run(_drive(url, cluster.token, driver, warm, workers=workers, seconds=warmup))
            started = time.monotonic()
            calls = load.tags(prefix, tool, **arguments)
            outcomes = asyncio.run(_drive(url, cluster.token, driver, calls, workers=workers, seconds=seconds))
            took = time.monotonic() - started
            summary = load.summarize(outcomes, took)
            problems = load.lost_or_doubled(outcomes, load.ran(folder / "records"))
            errors = sorted({outcome.error or "" for outcome in outcomes if not outcome.answered})
            found.append(
                {
                    "replicas": replicas,
                    "cores": _cores(),
                    "route": route,
                    "driver": driver,
                    "tool": tool,
                    "workers": workers,
                    "calls": summary.answered,
                    "per_second": summary.per_second,
                    "p50_ms": summary.p50_ms,
                    "p99_ms": summary.p99_ms,
                    "errors": summary.errors,
                    "error_kinds": errors[:5],
                    "lost_or_doubled": problems[:5],
                }
            )
            print(
                f"  {replicas} replica(s), {route}, {driver} {tool}: {summary.per_second:,.0f} calls/s, "
                f"p99 {summary.p99_ms:,.1f} ms, {summary.errors} errors, {len(problems)} lost or doubled",
                flush=True,
            )
    return found


def _nginx_version() -> str:
    done = subprocess.run([find_nginx(), "-v"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).strip().rpartition("/")[2] or "?"


def report(rows: list[dict[str, Any]], seconds: float) -> int:
    """Print the table; the number of rows with an error or a call lost or doubled."""
    info = machine(["hermesos-core", "mcp", "uvicorn"])
    info["nginx"] = _nginx_version()
    print()
    print("machine: " + ", ".join(f"{key} {value}" for key, value in info.items()))
    print(
        f"load: closed loops through nginx, {seconds:g} s a row after a warm-up; load_nap sleeps {NAP * 1e3:g} ms; "
        "workers = connections (raw) or SDK sessions (sdk)"
    )
    print()
    header = f"{'replicas':>8} {'cores':>5}  {'route':<6} {'driver':<6} {'tool':<9} {'workers':>7} {'calls':>7} "
    header += f"{'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'errors':>6}  ran once"
    print(header)
    bad = 0
    for row in rows:
        once = "yes" if not row["lost_or_doubled"] else "NO"
        bad += bool(row["errors"] or row["lost_or_doubled"])
        print(
            f"{row['replicas']:>8} {row['cores']:>5}  {row['route']:<6} {row['driver']:<6} {row['tool']:<9} "
            f"{row['workers']:>7} "
            f"{row['calls']:>7,} {row['per_second']:>8,.0f} {row['p50_ms']:>7,.1f} {row['p99_ms']:>7,.1f} "
            f"{row['errors']:>6}  {once}"
        )
        for kind in row["error_kinds"] + row["lost_or_doubled"]:
            print(f"{'':>10}{kind[:150]}")
    _scaling(rows)
    print(f"{bad} row(s) with errors or calls lost or doubled")
    return bad


def _scaling(rows: list[dict[str, Any]]) -> None:
    """Say how each kind of row went with more replicas, and what the machine's cores allow."""
    cores = rows[0]["cores"] if rows else _cores()
    through = [row for row in rows if row["route"] == "nginx"]
    counts = sorted({row["replicas"] for row in through})
    print()
    if len(counts) > 1:
        print("calls/s against the fewest replicas measured:")
        for driver, tool in dict.fromkeys((row["driver"], row["tool"]) for row in through):
            kind = {
                row["replicas"]: row["per_second"] for row in through if (row["driver"], row["tool"]) == (driver, tool)
            }
            base = kind[counts[0]] or float("nan")
            steps = ", ".join(f"{count}: {kind[count] / base:.2f}x" for count in counts if count in kind)
            print(f"  {driver} {tool}: {steps}")
    if counts and counts[-1] > cores:
        print(
            f"This machine has {cores} core(s), shared by nginx, every replica and the drivers: replicas past "
            f"{cores} add no processor. Where their rows still rise, it is waiting that is spread (each replica has "
            "its own event loop and its own 32 worker threads for plain handlers), not work; on a machine with a core "
            "a replica, work would spread too."
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", default="1,2,4", help="the replica counts, comma-separated (default 1,2,4)")
    parser.add_argument("--seconds", type=float, default=8.0, help="seconds of calls a row (default 8)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 1 and 2 replicas, 2 s a row")
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    args = parser.parse_args(argv)
    counts = [int(part) for part in args.replicas.split(",") if part.strip()]
    seconds, warmup = args.seconds, 1.0
    if args.quick:
        counts, seconds, warmup = [1, 2], 2.0, 0.5
    try:
        find_nginx()
    except NginxMissingError as error:
        print(f"bench_serve_load: {error}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    began = time.monotonic()
    for replicas in counts:
        print(f"{replicas} replica(s) behind nginx ...", flush=True)
        with tempfile.TemporaryDirectory(prefix="hermesos-load-") as folder:
            rows += measure(replicas, seconds, warmup, Path(folder))
    bad = report(rows, seconds)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rows": rows, "seconds": seconds}, indent=2) + "\n")
        print(f"rows written to {args.json}")
    print(f"total run time {time.monotonic() - began:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
