"""Start-up time of the hermesos command, next to a bare Python, in a regular install.

Builds a new virtual environment holding a regular (not editable) install of
hermesos-core and the four bundled plugins, from this checkout's wheels, then
times, in fresh processes of that environment:

* ``python -c pass``: the floor;
* ``python -c "import re, sys"``: what the console script pip writes imports
  before it calls hermesos, the floor of any console script;
* ``python -c "import re, sys, pluggy, dataclasses"``: the floor of loading
  any plugin (its hooks are marked with pluggy's marker; the core's values are
  dataclasses), before a line of hermesos-core runs;
* ``hermesos --version``: must discover no plugin and import nothing heavy;
* ``hermesos tools list``: discovers and loads every installed plugin (no MCP
  server configured; hermesos-fs given a workspace root, so it lists its tools).

Each round runs the commands one after the other; each command's time is
its CPU time (user + system, from ``resource.getrusage(RUSAGE_CHILDREN)``
before and after it), divided by the floor's time in the same round. The
median of those ratios over the rounds is what the targets of
docs/performance.md are read against: CPU time paired run by run varies far
less than wall time on a machine doing other work. The last line reads
``hermesos tools list`` against the plugin floor the same way, round by round.

An editable install slows bare Python too (its ``.pth`` files run at every
start), so ratios measured in a development environment read lower than these.

    python3 dev.py bench        # runs this after the other benchmarks
    python bench/bench_startup.py [--rounds N] [--root CHECKOUT] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ("hermesos-fs", "hermesos-math", "hermesos-policy", "hermesos-mcp")


def _build(root: Path, directory: Path) -> Path:
    """A new virtual environment in *directory* with the core and the bundled plugins of *root* installed."""
    wheels = directory / "wheels"
    projects = [str(root), *(str(root / "plugins" / name) for name in PLUGINS)]
    print(f"building wheels of {len(projects)} projects from {root}", file=sys.stderr, flush=True)
    try:
        import setuptools  # noqa: F401 - present: build without fetching it again
    except ImportError:
        isolation = []
    else:
        isolation = ["--no-build-isolation"]
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", str(wheels), *projects],
        check=True,
    )
    environment = directory / "venv"
    print(f"creating {environment} and installing the wheels", file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", *map(str, sorted(wheels.glob("*.whl")))], check=True)
    return python


def _cpu(command: list[str], environ: dict[str, str]) -> float:
    """The CPU seconds (user + system) *command* took, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environ)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=40, help="rounds of the commands (medians taken)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to install (default: this one)")
    parser.add_argument("--keep", type=Path, help="build in DIR and keep it (reused if it holds the venv)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hermesos-startup-") as scratch:
        directory = args.keep or Path(scratch)
        python = directory / "venv" / "bin" / "python"
        if not python.exists():
            python = _build(args.root.resolve(), directory)
        hermesos = str(python.with_name("hermesos"))
        workspace = Path(scratch) / "workspace"
        config = Path(scratch) / "config"
        workspace.mkdir()
        config.mkdir()
        # No MCP server configured (an empty configuration directory), and a workspace for hermesos-fs.
        environ = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "PYTHON"))},
            "XDG_CONFIG_HOME": str(config),
            "HERMESOS_FS_ROOT": str(workspace),
        }
        commands = {
            "python -c pass": [str(python), "-c", "pass"],
            # What the console script pip writes does before it calls hermesos (it imports re): the
            # floor of any console script, shown to read the two rows below against.
            "launcher floor": [str(python), "-c", "import re, sys"],
            # What importing any plugin costs before a line of hermesos-core runs: its hooks are marked
            # with pluggy's HookimplMarker (pluggy imports inspect and typing), and the core's value
            # classes are dataclasses. The floor of any `tools list` that imports the plugins.
            "plugin floor": [str(python), "-c", "import re, sys, pluggy, dataclasses"],
            "hermesos --version": [hermesos, "--version"],
            "hermesos tools list": [hermesos, "tools", "list"],
        }
        listing = subprocess.run(
            [hermesos, "tools", "list", "--json"], capture_output=True, text=True, env=environ, check=False
        ).stdout
        count = len(json.loads(listing)["tools"])
        for command in commands.values():  # warm the file cache and the bytecode
            _cpu(command, environ)
        seconds: dict[str, list[float]] = {name: [] for name in commands}
        ratios: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            times = {name: _cpu(command, environ) for name, command in commands.items()}
            floor = times["python -c pass"]
            for name, spent in times.items():
                seconds[name].append(spent)
                ratios[name].append(spent / floor if floor else float("nan"))
    print(
        f"Python {sys.version.split()[0]}; regular install; {args.rounds} paired rounds, CPU time (user + system); "
        f"'tools list' lists {count} tools\n"
    )
    print(f"{'command':<20} {'ms (median)':>12} {'vs python -c pass (median of ratios)':>37}")
    for name in commands:
        print(f"{name:<20} {statistics.median(seconds[name]) * 1e3:>12.1f} {statistics.median(ratios[name]):>36.2f}x")
    # The listing against the plugin floor, round by round: the target of docs/performance.md (at most 2.0x).
    pairs = zip(seconds["hermesos tools list"], seconds["plugin floor"], strict=True)
    floor = [listing / plugins for listing, plugins in pairs]
    print(f"\n{'tools list vs plugin floor (median of ratios)':<57} {statistics.median(floor):>12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
