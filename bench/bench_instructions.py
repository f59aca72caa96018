"""Instructions per call, counted by callgrind: the call paths, straight and stepped, free of a busy machine's noise.

Run with ``python3 bench/bench_instructions.py`` (valgrind must be installed;
``--only call_sync,context_sync`` for some rows). Each row runs this script
under ``valgrind --tool=callgrind`` twice, making *few* calls and then *many*
(``PYTHONHASHSEED=0``, so that both runs hash alike); the difference of the two
totals divided by the difference of the counts is what one call costs, with
the interpreter's start and the set-up taken out. Instruction counts do not
vary from run to run as times do, which is what a comparison of two trees on
a shared machine needs: run the script of one tree with ``PYTHONPATH``
pointing at the other to count that one's calls the same way.

The rows: the tool is ``add(a, b)`` (input and output checked), declared with
one permission the grants give, as ``bench_core.py`` declares it.

* straight path: ``call_sync``; ``await call`` of an ``inline`` def and of an
  ``async def``; ``OpenAITools.handle_sync``, ``await handle`` and the error
  path (``bench_adapters.py``'s rows 1 and 1e);
* stepped path: a permission a provider asks for, approved by a plain approver
  (``call_sync``) and an ``async`` one (``await call``); a time limit (a plain
  handler on a worker thread under ``call_sync``, an ``async def`` under
  ``await call``); a tool whose handler uses its context (``current_call()``);
  a plain handler on a worker thread (``await call``, no limit); an input
  lenient mode repairs (``"1"`` for an integer).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from hermes_core import Approval, Ask, Runtime, current_call, define_tool
from hermes_core import schema as s
from hermes_core.adapters import OpenAITools

ARGS = {"a": 1, "b": 2}
ARGUMENTS = '{"a": 1, "b": 2}'
CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add", "arguments": ARGUMENTS}}
BAD_CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add", "arguments": '{"a": "x", "b": 2}'}}


def add(args: dict[str, int]) -> int:
    return args["a"] + args["b"]


async def add_async(args: dict[str, int]) -> int:
    return args["a"] + args["b"]


def add_in_context(args: dict[str, int]) -> int:
    current_call()
    return args["a"] + args["b"]


async def add_in_context_async(args: dict[str, int]) -> int:
    current_call()
    return args["a"] + args["b"]


def tool(name: str, handler: Any, permission: str = "math:add", *, inline: bool = False) -> Any:
    return define_tool(
        name=name,
        description="Add two integers.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        output=s.integer(),
        permissions=[permission],
        handler=handler,
        inline=inline,
    )


class AsksForMath:
    """A permission provider that asks a person for ``math:ask``."""

    def check(self, tool: Any, permission: str) -> bool | Ask | None:
        return Ask("adding needs a yes") if permission == "math:ask" else None


def approve(request: Any) -> Approval:
    return Approval.once()


async def approve_async(request: Any) -> Approval:
    return Approval.once()


def runtime(**options: Any) -> Runtime:
    """The tools, ``math:add`` granted (settled: no provider); the provider's own runtime is :func:`asking`."""
    return Runtime(
        [
            tool("math.add", add),
            tool("math.add_inline", add, inline=True),
            tool("math.add_async", add_async),
            tool("math.context", add_in_context),
            tool("math.context_async", add_in_context_async),
        ],
        grants=["math:add"],
        **options,
    )


def asking(approver: Any) -> Runtime:
    """Tools whose permission ``math:ask`` a provider asks *approver* for, on every call."""
    return Runtime(
        [tool("math.asks", add, "math:ask"), tool("math.asks_async", add_async, "math:ask")],
        providers=[AsksForMath()],
        approver=approver,
    )


def rows() -> dict[str, tuple[Callable[[], Any], bool, int]]:
    """Each row: a call to make (a coroutine function when async), whether it is async, and its weight."""
    plain, lenient = runtime(), runtime(lenient=True)
    asks_sync, asks_async = asking(approve), asking(approve_async)
    adapter = OpenAITools(Runtime([tool("math.add", add, inline=True)], grants=["math:add"]))
    repaired = {"a": "1", "b": 2}

    async def call_inline() -> Any:
        return await plain.call("math.add_inline", ARGS)

    async def call_async() -> Any:
        return await plain.call("math.add_async", ARGS)

    async def handle() -> Any:
        return await adapter.handle(CALL)

    async def asks() -> Any:
        return await asks_async.call("math.asks_async", ARGS)

    async def timeout_async() -> Any:
        return await plain.call("math.add_async", ARGS, timeout=60.0)

    async def context() -> Any:
        return await plain.call("math.context_async", ARGS)

    async def thread() -> Any:
        return await plain.call("math.add", ARGS)

    return {
        # the straight path
        "call_sync": (lambda: plain.call_sync("math.add", ARGS), False, 1),
        "call_inline": (call_inline, True, 1),
        "call_async": (call_async, True, 1),
        "handle_sync": (lambda: adapter.handle_sync(CALL), False, 1),
        "handle": (handle, True, 1),
        "handle_error": (lambda: adapter.handle_sync(BAD_CALL), False, 1),
        # the stepped path
        "asks_sync": (lambda: asks_sync.call_sync("math.asks", ARGS), False, 1),
        "asks": (asks, True, 1),
        "timeout_sync": (lambda: plain.call_sync("math.add", ARGS, timeout=60.0), False, 10),
        "timeout": (timeout_async, True, 1),
        "context_sync": (lambda: plain.call_sync("math.context", ARGS), False, 1),
        "context": (context, True, 1),
        "thread": (thread, True, 10),
        "repaired_sync": (lambda: lenient.call_sync("math.add", repaired), False, 1),
    }


def run(row: str, calls: int) -> None:
    """Make *calls* calls of *row* (what callgrind counts)."""
    call, is_async, _ = rows()[row]
    if not is_async:
        for _ in range(calls):
            call()
        return

    async def many() -> None:
        for _ in range(calls):
            await call()

    loop = asyncio.new_event_loop()
    loop.run_until_complete(call())  # the loop's own first-use costs, out of the count
    loop.run_until_complete(many())
    loop.close()


def count(row: str, calls: int) -> int:
    """The instructions callgrind counts for a run of *row* making *calls* calls."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__]
    done = subprocess.run(
        [*command, "--run", row, "--calls", str(calls)],
        env={**os.environ, "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"{row}: callgrind said no total:\n{done.stderr}")
    return int(found.group(1))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="these rows only, by name, comma-separated")
    parser.add_argument("--few", type=int, default=1000, help="calls of the first run (default 1000)")
    parser.add_argument("--many", type=int, default=5000, help="calls of the second run (default 5000)")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        run(args.run, args.calls)
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: this benchmark counts instructions with callgrind")
    names = list(rows())
    chosen = args.only.split(",") if args.only else names
    unknown = [name for name in chosen if name not in names]
    if unknown:
        raise SystemExit(f"no row named {', '.join(unknown)}; the rows are {', '.join(names)}")
    import hermes_core

    print(f"# instructions per call; hermes_core from {os.path.dirname(hermes_core.__file__)}")
    for name in chosen:
        weight = rows()[name][2]
        few, many = max(1, args.few // weight), max(2, args.many // weight)
        per_call = (count(name, many) - count(name, few)) / (many - few)
        print(f"{name:<16} {per_call:>12,.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
