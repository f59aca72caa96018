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

Case 1e is the error path: the same call with ``{"a": "x", "b": 2}``, which
``tools.handle_sync(call)`` answers with ``INPUT_INVALID: ...`` (the error
rendered for a model, under wire names), against pydantic by hand with
``validate_json`` raising ``ValidationError`` and ``str(error)`` as the
content.

Case 2 times the parts of each path one by one, to show where the time goes.

Method, ``_method.py``'s, as for every benchmark here: every contender is one statement, compiled
into a ``timeit``-style loop (an ``await`` statement into an ``async def``
run by one event loop), the garbage collector off while a sample runs. Each
contender's loop count is calibrated so one sample takes about
``--sample-ms``; then, for ``--rounds`` rounds, every contender takes one
sample, in a shuffled order. A ratio is the median, over rounds, of the two
contenders' ratio within the same round.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from _method import Case, Comparison, Contender, arguments, machine, report, require, time_all
from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic needs it, not typing's, before Python 3.12

from hermes_core import Runtime, define_tool
from hermes_core import schema as s
from hermes_core.adapters import OpenAITools, result_text

ARGUMENTS = '{"a": 1, "b": 2}'
CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add", "arguments": ARGUMENTS}}
ASYNC_CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add_async", "arguments": ARGUMENTS}}
EXPECTED = {"role": "tool", "tool_call_id": "call_1", "content": "3"}
BAD_CALL = {"id": "call_1", "type": "function", "function": {"name": "math_add", "arguments": '{"a": "x", "b": 2}'}}


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
        "bad_call": BAD_CALL,
        "ValidationError": ValidationError,
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
    require(loop.run_until_complete(adapter.handle(CALL)) == EXPECTED, "hermes handle (inline def)")
    require(loop.run_until_complete(adapter.handle(ASYNC_CALL)) == EXPECTED, "hermes handle (async def)")
    require(adapter.handle_sync(CALL) == EXPECTED, "hermes handle_sync")
    function = CALL["function"]
    assert isinstance(function, dict)
    hand = json.dumps(out_ta.validate_python(handlers[function["name"]](in_ta.validate_json(function["arguments"]))))
    require({"role": "tool", "tool_call_id": CALL["id"], "content": hand} == EXPECTED, "pydantic by hand")
    require(adapter.handle_sync(BAD_CALL)["content"].startswith("INPUT_INVALID"), "hermes refuses a bad input")
    by_hand_error = """
        function = bad_call["function"]
        try:
            content = json.dumps(handlers[function["name"]](in_ta.validate_json(function["arguments"])))
        except ValidationError as error:
            content = str(error)
        {"role": "tool", "tool_call_id": bad_call["id"], "content": content}
    """

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
    error_path = Case(
        '1e. the same call with {"a": "x", "b": 2}: the error as the tool message',
        [
            Contender("1e.hermes_sync", "hermes  tools.handle_sync(bad_call)", "tools.handle_sync(bad_call)", env),
            Contender("1e.pydantic", "pydantic by hand  ValidationError, str(error), dict", by_hand_error, env),
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
    return [handle, error_path, parts]


def comparisons() -> list[Comparison]:
    return [
        Comparison("1.hermes_inline", "1.pydantic", "await handle (inline def) / pydantic by hand", 1.0),
        Comparison("1.hermes_async", "1.pydantic", "await handle (async def) / pydantic by hand"),
        Comparison("1.hermes_inline", "1.pydantic_out", "await handle (inline def) / pydantic by hand, result checked"),
        Comparison("1.hermes_sync", "1.pydantic", "handle_sync / pydantic by hand"),
        Comparison("1e.hermes_sync", "1e.pydantic", "error path: handle_sync / pydantic by hand", 2.0),
        Comparison("2.call", "1.pydantic", "the runtime's call alone / pydantic by hand"),
    ]


def main(argv: list[str]) -> int:
    args = arguments(__doc__.split("\n\n")[0], argv)
    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    try:
        all_cases = cases(loop)
        time_all(all_cases, loop, args)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    missed = report(all_cases, comparisons(), machine(("hermesos-core", "pydantic", "pydantic-core")), args)
    print(f"{missed} target(s) not met; total run time {time.perf_counter() - started:.0f} s")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
