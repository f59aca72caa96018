"""Start-up time of the hermesos command, next to a bare Python.

Times, in fresh processes, ``python -c pass`` (the floor), ``hermesos
--version`` (must discover no plugin and import nothing heavy) and ``hermesos
tools list`` (discovers and loads every installed plugin). Each command runs
several times, interleaved; the median is reported.

    python3 dev.py bench        # runs this after the other benchmarks
    python bench/bench_startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERMES = str(Path(sys.executable).with_name("hermesos"))
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "hermesos --version": [HERMES, "--version"],
    "hermesos tools list": [HERMES, "tools", "list"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20, help="runs of each command (median taken)")
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, command in COMMANDS.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - start)
    floor = statistics.median(times["python -c pass"])
    listing = subprocess.run([HERMES, "tools", "list", "--json"], check=True, capture_output=True, text=True).stdout
    count = len(json.loads(listing)["tools"])
    print(f"Python {sys.version.split()[0]}; median of {args.repeat} runs; 'tools list' lists {count} tools\n")
    print(f"{'command':<20} {'ms':>7} {'vs python -c pass':>18}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:<20} {median * 1e3:>7.1f} {median / floor:>17.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
