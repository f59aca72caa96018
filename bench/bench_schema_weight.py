"""What an imported schema costs for its size: bytes in, peak memory and time, for each shape that once grew faster.

Run with ``python3 bench/bench_schema_weight.py`` (``--size`` in bytes, 1 MB
by default; ``--only enum_objects,defs_chain`` for some of them). Each shape
of ``tests/schema_weights.py`` is made as a tool's input schema of about that
many bytes, written as JSON and read back, then imported
(``from_json_schema(closed=True)``), defined as a tool, exported
(``Runtime.definitions()``) and checked against a wrong value, in a fresh
interpreter each time: once for the time, once under ``tracemalloc`` for the
peak memory that work allocated (the parsed document itself not counted).
The table is the one in docs/performance.md ("What a schema weighs").

Each interpreter runs under a memory limit (``--memory-mb``, 4 GiB) and a
time limit (``--timeout``, 300 s): run against an older checkout
(``PYTHONPATH=<its root>``), a shape that took gigabytes there says so
instead of taking the machine with it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "tests" / "schema_weights.py"


def _members() -> list[str]:
    sys.path.insert(0, str(WEIGHTS.parent))
    import schema_weights

    return [*schema_weights.MEMBERS, "tools_many"]


def _run(member: str, size: int, traced: bool, args: argparse.Namespace) -> dict[str, Any] | str:
    """One measure in a fresh interpreter; what stopped it, in words, if it did not end."""
    limit = args.memory_mb * 1024 * 1024

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    command = [sys.executable, str(WEIGHTS), member, str(size), *(["tracemalloc"] if traced else [])]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.timeout, preexec_fn=limited, check=False
        )
    except subprocess.TimeoutExpired:
        return f"> {args.timeout} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"> {args.memory_mb:,} MB" if "MemoryError" in last else f"failed: {last[:80]}"
    measured: dict[str, Any] = json.loads(done.stdout)
    return measured


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=1_000_000, help="bytes of JSON each schema takes, about")
    parser.add_argument("--only", help="these shapes only, comma-separated")
    parser.add_argument("--memory-mb", type=int, default=4096, help="the memory limit of each interpreter")
    parser.add_argument("--timeout", type=float, default=300.0, help="the time limit of each interpreter, in seconds")
    parser.add_argument("--json", type=Path, help="also write the measures to this file")
    args = parser.parse_args(argv)
    members = args.only.split(",") if args.only else _members()
    rows: dict[str, Any] = {}
    print("| shape | bytes in | peak memory | bytes per byte | time |")
    print("|---|---:|---:|---:|---:|")
    for member in members:
        timed = _run(member, args.size, False, args)
        traced = _run(member, args.size, True, args) if isinstance(timed, dict) else timed
        rows[member] = {"timed": timed, "traced": traced}
        if isinstance(timed, dict) and isinstance(traced, dict):
            note = " (refused)" if timed["refused"] else ""
            print(
                f"| {member}{note} | {timed['bytes'] / 1e6:.2f} MB | {traced['peak'] / 1e6:.1f} MB | "
                f"{traced['peak'] / traced['bytes']:.0f} | {timed['seconds']:.2f} s |",
                flush=True,
            )
        else:
            stopped = timed if isinstance(timed, str) else traced
            print(f"| {member} | about {args.size / 1e6:.2f} MB | {stopped} | | |", flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
