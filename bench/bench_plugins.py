"""What plugin discovery costs: ``load_runtime()`` against a bare entry-point scan and import.

For 10, 100 and 500 synthetic installed plugins (each a module and a
``.dist-info`` directory, as an installer leaves them, contributing one tool
with a small input schema), a fresh Python process times:

* **bare**: ``importlib.metadata.entry_points(group="hermesos.plugins")`` and
  ``ep.load()`` of each: the least any entry-point plugin system does;
* **hermes**: ``hermes_core.load_runtime()``: the same scan and imports, plus
  the requirement check, hook calls, every check of every contribution, and
  building the runtime.

Each is measured in its own process (so nothing is cached from a previous
run), several times; the median is reported, per plugin, with the ratio.

    python3 dev.py bench        # runs this after the comparisons with the peers
    python bench/bench_plugins.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SIZES = (10, 100, 500)
SKIP = os.environ.get("HERMESOS_DISABLE_PLUGINS", "")

MODULE = """\
from hermes_core import define_tool, hookimpl
from hermes_core import schema as s

TOOL = define_tool(
    name="synthetic.t{n}",
    description="Synthetic tool {n}.",
    version="1.0.0",
    input=s.object({{"path": s.string(min_length=1), "size": s.optional(s.integer(minimum=0), default=0)}}),
    output=s.string(),
    handler=lambda args: args["path"],
)


@hookimpl
def hermes_tools():
    return [TOOL]
"""

BARE = """
import sys, time, json
sys.path.insert(0, {site!r})
start = time.perf_counter()
import importlib.metadata
count = 0
for ep in importlib.metadata.entry_points(group="hermesos.plugins"):
    if ep.dist is not None and ep.dist.name.startswith("synthetic-"):
        ep.load()
        count += 1
print(json.dumps({{"seconds": time.perf_counter() - start, "count": count}}))
"""

HERMES = """
import sys, time, json
sys.path.insert(0, {site!r})
start = time.perf_counter()
import hermes_core
runtime = hermes_core.load_runtime()
count = sum(1 for name in runtime.tools if name.startswith("synthetic."))
print(json.dumps({{"seconds": time.perf_counter() - start, "count": count}}))
"""


def install(site: Path, count: int) -> None:
    """Lay out *count* synthetic plugin distributions in *site*."""
    for n in range(count):
        module = f"synthetic_{n}"
        (site / f"{module}.py").write_text(MODULE.format(n=n))
        info = site / f"synthetic_{n}-1.0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: synthetic-{n}\nVersion: 1.0.0\nRequires-Dist: hermesos-core>=0.1\n"
        )
        (info / "entry_points.txt").write_text(f"[hermesos.plugins]\nsynthetic{n} = {module}\n")


def measure(code: str, site: Path, expected: int) -> float:
    # The bundled plugins, if installed, are disabled: only the synthetic ones are timed.
    env = {**os.environ, "HERMESOS_DISABLE_PLUGINS": "hermesos-fs,hermesos-policy,hermesos-math," + SKIP}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code.format(site=str(site)))],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    result = json.loads(done.stdout)
    assert result["count"] == expected, result
    return float(result["seconds"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="processes per measurement (median taken)")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; median of {args.repeat} fresh processes each\n")
    print(f"{'plugins':>8} {'bare ms':>9} {'hermes ms':>10} {'bare/plugin':>12} {'hermes/plugin':>14} {'ratio':>6}")
    medians: dict[int, tuple[float, float]] = {}
    for size in SIZES:
        with tempfile.TemporaryDirectory() as tmp:
            site = Path(tmp)
            install(site, size)
            bare, hermes = [], []
            for _ in range(args.repeat):  # interleaved, so drift on a shared machine hits both
                bare.append(measure(BARE, site, size))
                hermes.append(measure(HERMES, site, size))
            b, h = statistics.median(bare), statistics.median(hermes)
            medians[size] = (b, h)
            print(
                f"{size:>8} {b * 1e3:>9.1f} {h * 1e3:>10.1f} {b / size * 1e6:>10.0f}us"
                f" {h / size * 1e6:>12.0f}us {h / b:>6.2f}"
            )
    # The fixed start-up (Python, importing hermesos-core or importlib.metadata) cancels out here.
    low, high = SIZES[1], SIZES[-1]
    extra = high - low
    bare_each = (medians[high][0] - medians[low][0]) / extra
    hermes_each = (medians[high][1] - medians[low][1]) / extra
    print(
        f"\neach plugin beyond {low}: bare {bare_each * 1e6:.0f}us, hermes {hermes_each * 1e6:.0f}us "
        f"({hermes_each / bare_each:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
