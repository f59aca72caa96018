"""Handling one Chat Completions tool call: ``OpenAITools.handle`` against the same done by hand with pydantic.

Run with ``python3 bench/bench_adapters.py`` (``--quick`` for a smoke run of a
few seconds). The call is what a model sends for ``add(a, b)``: a
``tool_calls`` item as a dict, its arguments JSON text. Each contender turns
it into the message that answers it, ``{"role": "tool", "tool_call_id": ...,
"content": "3"}``:

* hermes: ``await tools.handle(call)`` inside a running event loop, the tool's
  handler an ``inline`` plain function (it runs on the loop's thread) or an
  ``async def``; and ``tools.handle_sync(call)`` from code with no loop;
* pydantic, by hand: the handler looked up by the call's name,
  ``TypeAdapter(AddArgs).validate_json(arguments)``, the call,
  ``json.dumps(result)``, the message built; and the same with the result
  validated too (``TypeAdapter(int)``), as the runtime validates every result.

Case 2 times the parts of each path one by one, to show where the time goes.

Method, as ``bench_core.py``'s: every contender is one statement, compiled
into a ``timeit``-style loop (an ``await`` statement into an ``async def``
run by one event loop), the garbage collector off while a sample runs. Each
contender's loop count is calibrated so one sample takes about
``--sample-ms``; then, for ``--rounds`` rounds, every contender takes one
sample, in a shuffled order. A ratio is the median, over rounds, of the two
contenders' ratio within the same round.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.metadata
import itertools
import json
import platform
import random
import statistics
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, TypeAdapter
from typing_extensions import TypedDict  # pydantic needs it, not typing's, before Python 3.12

from hermes_core import Runtime, define_tool
from hermes_core import schema as s
from hermes_core.adapters import OpenAITools, result_text

ARGUMENTS = '{"a": 1, "b": 2}'
CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add", "arguments": ARGUMENTS}}
ASYNC_CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add_async", "arguments": ARGUMENTS}}
EXPECTED = {"role": "tool", "tool_call_id": "call_1", "content": "3"}


def add(args: dict[str, int]) -> int:
    """The handler, as hermes and pydantic both hand it the parsed input: one dict."""
    return args["a"] + args["b"]


async def add_async(args: dict[str, int]) -> int:
    """The same, as an ``async def``."""
    return args["a"] + args["b"]


ADD_INPUT = s.object({"a": s.integer(), "b": s.integer()})


class AddArgs(TypedDict):
    __pydantic_config__ = ConfigDict(strict=True, extra="forbid")  # type: ignore[misc]
    a: int
    b: int


def tools() -> OpenAITools:
    made = [
        define_tool(
            name=name,
            description="Add two integers.",
            version="1.0.0",
            input=ADD_INPUT,
            output=s.integer(),
            handler=handler,
            inline=name == "math.add",
        )
        for name, handler in (("math.add", add), ("math.add_async", add_async))
    ]
    return OpenAITools(Runtime(made))


# -- measuring (bench_core.py's method) ----------------------------------------------------------------

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


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise RuntimeError(f"benchmark set-up is wrong: {what}")


# -- the contenders ----------------------------------------------------------------------------------------


def cases(loop: asyncio.AbstractEventLoop) -> list[Case]:
    adapter = tools()
    in_ta = TypeAdapter(AddArgs)
    out_ta = TypeAdapter(int, config=ConfigDict(strict=True))
    handlers = {"math_add": add}
    env = {
        "tools": adapter,
        "runtime": adapter.runtime,
        "names": adapter.names,
        "call": CALL,
        "async_call": ASYNC_CALL,
        "args": {"a": 1, "b": 2},
        "arguments": ARGUMENTS,
        "in_ta": in_ta,
        "out_ta": out_ta,
        "handlers": handlers,
        "json": json,
        "result_text": result_text,
    }
    by_hand = """
        function = call["function"]
        arguments = in_ta.validate_json(function["arguments"])
        content = json.dumps(handlers[function["name"]](arguments))
        {"role": "tool", "tool_call_id": call["id"], "content": content}
    """
    by_hand_checked = """
        function = call["function"]
        arguments = in_ta.validate_json(function["arguments"])
        content = json.dumps(out_ta.validate_python(handlers[function["name"]](arguments)))
        {"role": "tool", "tool_call_id": call["id"], "content": content}
    """

    # Every contender gives the same message (the by-hand ones are checked as functions of the same steps).
    _require(loop.run_until_complete(adapter.handle(CALL)) == EXPECTED, "hermes handle (inline def)")
    _require(loop.run_until_complete(adapter.handle(ASYNC_CALL)) == EXPECTED, "hermes handle (async def)")
    _require(adapter.handle_sync(CALL) == EXPECTED, "hermes handle_sync")
    function = CALL["function"]
    assert isinstance(function, dict)
    hand = json.dumps(out_ta.validate_python(handlers[function["name"]](in_ta.validate_json(function["arguments"]))))
    _require({"role": "tool", "tool_call_id": CALL["id"], "content": hand} == EXPECTED, "pydantic by hand")
    bad = {"id": "call_1", "function": {"name": "math_add", "arguments": '{"a": "x", "b": 2}'}}
    _require(adapter.handle_sync(bad)["content"].startswith("INPUT_INVALID"), "hermes refuses a bad input")

    handle = Case(
        "1. one Chat Completions tool call for add(a, b): JSON arguments in, the tool message out",
        [
            Contender(
                "1.hermes_inline", "hermes  await tools.handle(call) (inline def)", "await tools.handle(call)", env
            ),
            Contender(
                "1.hermes_async", "hermes  await tools.handle(call) (async def)", "await tools.handle(async_call)", env
            ),
            Contender("1.hermes_sync", "hermes  tools.handle_sync(call) (inline def)", "tools.handle_sync(call)", env),
            Contender("1.pydantic", "pydantic by hand  validate_json, call, json.dumps, dict", by_hand, env),
            Contender("1.pydantic_out", "pydantic by hand, the result validated too", by_hand_checked, env),
        ],
    )
    parts = Case(
        "2. the parts of each path",
        [
            Contender("2.lookup", "hermes  names.lookup(wire name)", 'names.lookup("math_add")', env),
            Contender("2.loads", "hermes  json.loads(arguments)", "json.loads(arguments)", env),
            Contender("2.call", "hermes  await runtime.call (inline def)", 'await runtime.call("math.add", args)', env),
            Contender("2.text", "hermes  result_text(3)", "result_text(3)", env),
            Contender(
                "2.validate_json", "pydantic  in_ta.validate_json(arguments)", "in_ta.validate_json(arguments)", env
            ),
            Contender("2.dumps", "pydantic by hand  json.dumps(3)", "json.dumps(3)", env),
        ],
    )
    return [handle, parts]


def comparisons() -> list[Comparison]:
    return [
        Comparison("1.hermes_inline", "1.pydantic", "await handle (inline def) / pydantic by hand", 1.0),
        Comparison("1.hermes_async", "1.pydantic", "await handle (async def) / pydantic by hand"),
        Comparison("1.hermes_inline", "1.pydantic_out", "await handle (inline def) / pydantic by hand, result checked"),
        Comparison("1.hermes_sync", "1.pydantic", "handle_sync / pydantic by hand"),
        Comparison("2.call", "1.pydantic", "the runtime's call alone / pydantic by hand"),
    ]


# -- reporting ---------------------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    info = {
        "cpu": platform.processor() or platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "os": f"{platform.system()} {platform.release()}",
    }
    for dist in ("hermesos-core", "pydantic", "pydantic-core"):
        info[dist] = importlib.metadata.version(dist)
    return info


def _us(seconds: float) -> str:
    micro = seconds * 1e6
    return f"{micro:,.2f}" if micro < 100 else f"{micro:,.1f}"


def paired_ratio(hermes: Contender, peer: Contender) -> float:
    return statistics.median(h / p for h, p in zip(hermes.samples, peer.samples, strict=True))


def report(all_cases: list[Case], comps: list[Comparison], args: argparse.Namespace) -> int:
    by_key = {c.key: c for case in all_cases for c in case.contenders}
    print()
    print("machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()))
    print(f"method: {args.rounds} interleaved rounds, samples of ~{args.sample_ms:g} ms, per-op times in µs")
    width = max(len(c.label) for c in by_key.values()) + 2
    for case in all_cases:
        print()
        print(case.title)
        print(f"  {'contender':<{width}} {'best':>10} {'median':>10} {'ops/sample':>11}")
        for c in case.contenders:
            best, median = _us(min(c.samples)), _us(statistics.median(c.samples))
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
        print(f"  {comp.label:<{lwidth}} {ratio:>6.2f}x {best:>8.2f}x   {verdict}")
    print()
    return missed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 5 rounds of 5 ms samples")
    parser.add_argument("--rounds", type=int, default=30, help="rounds of samples (default 30)")
    parser.add_argument("--sample-ms", type=float, default=25.0, help="length of one sample (default 25 ms)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the shuffled order within a round")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 when a target is not met")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.sample_ms = 5, 5.0

    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    try:
        all_cases = cases(loop)
        gc.collect()
        gc.freeze()
        contenders = [c for case in all_cases for c in case.contenders]
        print(f"timing {len(contenders)} contenders, {args.rounds} rounds of ~{args.sample_ms:g} ms samples ...")
        for c in contenders:
            c.compile(loop)
            c.calibrate(args.sample_ms / 1e3)
        order = random.Random(args.seed)
        for _ in range(args.rounds):
            order.shuffle(contenders)
            for c in contenders:
                c.sample()
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    missed = report(all_cases, comparisons(), args)
    print(f"{missed} target(s) not met; total run time {time.perf_counter() - started:.0f} s")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
