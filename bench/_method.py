"""The measuring method every benchmark here shares: interleaved, calibrated samples and same-round ratios.

Every contender is one statement, compiled into a ``timeit``-style loop (an
``await`` statement into an ``async def`` run by one event loop), the garbage
collector off while a sample runs. Each contender's loop count is calibrated
so one sample takes about ``--sample-ms``; then, for ``--rounds`` rounds,
every contender takes one sample, in a shuffled order. A ratio is the median,
over rounds, of the two contenders' ratio within the same round, so a slow
phase of a shared machine slows both sides of it.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import itertools
import json
import os
import platform
import random
import statistics
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SYNC = """
def _bench(_n):
    _t0 = _clock()
    for _ in _repeat(None, _n):
{stmt}
    return _clock() - _t0
"""

_ASYNC = """
async def _bench(_n):
    _t0 = _clock()
    for _ in _repeat(None, _n):
{stmt}
    return _clock() - _t0
"""


@dataclass
class Contender:
    """One statement to time. ``stmt`` runs with the names in ``env``; ``await`` makes it async."""

    key: str
    label: str
    stmt: str
    env: dict[str, Any]
    number: int = 0
    samples: list[float] = field(default_factory=list)  # seconds per operation, one per round
    _run: Callable[[int], float] | None = None

    def compile(self, loop: asyncio.AbstractEventLoop) -> None:
        is_async = "await " in self.stmt
        template = _ASYNC if is_async else _SYNC
        source = template.format(stmt=textwrap.indent(textwrap.dedent(self.stmt).strip(), " " * 8))
        namespace: dict[str, Any] = {**self.env, "_clock": time.perf_counter, "_repeat": itertools.repeat}
        exec(compile(source, f"<bench {self.key}>", "exec"), namespace)
        bench = namespace["_bench"]
        self._run = (lambda n: loop.run_until_complete(bench(n))) if is_async else bench

    def time(self, number: int) -> float:
        """Seconds for *number* operations, with the garbage collector off (as ``timeit`` does)."""
        assert self._run is not None
        gc.collect()
        gc.disable()
        try:
            return self._run(number)
        finally:
            gc.enable()

    def calibrate(self, sample_s: float) -> None:
        """Find the loop count for which one sample takes at least *sample_s* (as ``timeit.autorange``)."""
        self.time(1)  # warm up
        number = 1
        while True:
            for factor in (1, 2, 5):
                n = number * factor
                if self.time(n) >= sample_s / 2:
                    # Time once more at the chosen count, scaled up to the target duration.
                    elapsed = self.time(n)
                    self.number = max(1, int(n * sample_s / max(elapsed, 1e-9)))
                    return
            number *= 10

    def sample(self) -> None:
        self.samples.append(self.time(self.number) / self.number)


@dataclass(frozen=True)
class Case:
    title: str
    contenders: list[Contender]


@dataclass(frozen=True)
class Comparison:
    """hermes/peer, and the target (the highest acceptable ratio) if there is one."""

    hermes: str
    peer: str
    label: str
    target: float | None = None


def require(condition: bool, what: str) -> None:
    if not condition:
        raise RuntimeError(f"benchmark set-up is wrong: {what}")


def arguments(
    description: str,
    argv: list[str],
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    sample_ms: float = 25.0,
    quick_sample_ms: float = 5.0,
) -> Any:
    """The options every benchmark takes (and *extra*'s), parsed from *argv*; samples of *sample_ms* by default."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=f"a smoke run: 5 rounds of {quick_sample_ms:g} ms samples")
    parser.add_argument("--rounds", type=int, default=30, help="rounds of samples (default 30)")
    parser.add_argument(
        "--sample-ms", type=float, default=sample_ms, help=f"length of one sample (default {sample_ms:g} ms)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffled order within a round")
    parser.add_argument("--json", type=Path, help="also write the raw samples and ratios to this file")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 when a target is not met")
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.sample_ms = 5, quick_sample_ms
    return args


def time_all(cases: list[Case], loop: asyncio.AbstractEventLoop, args: Any) -> None:
    """Calibrate every contender, then take ``args.rounds`` rounds of samples in a shuffled order."""
    # Set-up made long-lived objects (the peers' modules, big runtimes): freeze them, so the
    # collection before each sample only walks what the benchmarks themselves left behind.
    gc.collect()
    gc.freeze()
    contenders = [c for case in cases for c in case.contenders]
    print(
        f"timing {len(contenders)} contenders, {args.rounds} rounds of ~{args.sample_ms:g} ms samples ...", flush=True
    )
    for c in contenders:
        c.compile(loop)
        c.calibrate(args.sample_ms / 1e3)
    order = random.Random(args.seed)
    for _ in range(args.rounds):
        order.shuffle(contenders)
        for c in contenders:
            c.sample()


def machine(distributions: Iterable[str]) -> dict[str, str]:
    """The machine, Python and the versions of *distributions*, for the report."""
    cpu = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.partition(":")[2].strip()
                break
    info = {
        "cpu": cpu,
        "nproc": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "os": f"{platform.system()} {platform.release()}",
    }
    for dist in distributions:
        info[dist] = importlib.metadata.version(dist)
    return info


def us(seconds: float) -> str:
    micro = seconds * 1e6
    return f"{micro:,.2f}" if micro < 100 else f"{micro:,.1f}"


def ratio_text(value: float) -> str:
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.3f}x"


def paired_ratio(hermes: Any, peer: Any) -> float:
    """The median, over rounds, of *hermes*'s sample over *peer*'s in the same round (any two with ``samples``)."""
    return statistics.median(h / p for h, p in zip(hermes.samples, peer.samples, strict=True))


def report(cases: list[Case], comps: list[Comparison], info: dict[str, str], args: Any) -> int:
    """Print every contender's times and every comparison's ratio; return how many targets were missed."""
    by_key = {c.key: c for case in cases for c in case.contenders}
    print()
    print("machine: " + ", ".join(f"{k} {v}" for k, v in info.items()))
    print(f"method: {args.rounds} interleaved rounds, samples of ~{args.sample_ms:g} ms, per-op times in µs")
    width = max(len(c.label) for c in by_key.values()) + 2
    for case in cases:
        print()
        print(case.title)
        print(f"  {'contender':<{width}} {'best':>10} {'median':>10} {'ops/sample':>11}")
        for c in case.contenders:
            best, median = us(min(c.samples)), us(statistics.median(c.samples))
            print(f"  {c.label:<{width}} {best:>10} {median:>10} {c.number:>11,}")
    print()
    print("ratios (median over rounds of the same-round ratio; below 1 means hermes is faster)")
    lwidth = max(len(c.label) for c in comps) + 2
    print(f"  {'comparison':<{lwidth}} {'ratio':>7} {'of bests':>9}   target")
    missed = 0
    for comp in comps:
        hermes, peer = by_key[comp.hermes], by_key[comp.peer]
        ratio = paired_ratio(hermes, peer)
        best = min(hermes.samples) / min(peer.samples)
        verdict = ""
        if comp.target is not None:
            met = ratio <= comp.target
            missed += not met
            verdict = f"<= {comp.target:.2f}x  {'met' if met else 'NOT MET'}"
        print(f"  {comp.label:<{lwidth}} {ratio_text(ratio):>7} {ratio_text(best):>9}   {verdict}")
    print()
    if args.json:
        data = {
            "machine": info,
            "rounds": args.rounds,
            "sample_ms": args.sample_ms,
            "contenders": {
                c.key: {"label": c.label, "number": c.number, "samples_s": c.samples} for c in by_key.values()
            },
            "ratios": {
                comp.label: {"ratio": paired_ratio(by_key[comp.hermes], by_key[comp.peer]), "target": comp.target}
                for comp in comps
            },
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        print(f"results written to {args.json}")
    return missed
