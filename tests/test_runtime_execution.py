"""Where and for how long handlers run, and what a call raises when one fails.

A handler's ``Exception`` is ``TOOL_FAILED``; a time limit ends a call with
``TOOL_FAILED`` (``reason`` ``timeout``); a cancelled call cancels its
handler; plain handlers run on worker threads under ``await call()``.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import logging
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import InvalidDefinitionError, Runtime, Tool, ToolError, define_tool
from hermes_core import schema as s
from hermes_core._base import _aio
from hermes_core._base._errors import ToolFailedError
from hermes_core._runtime import _calls
from hermes_core.schema._validators import compile_schema


def tool(handler: Any, name: str = "t.run", **fields: Any) -> Tool:
    return define_tool(
        name=name,
        description="Run.",
        version="1.0.0",
        input=s.object({"n": s.optional(s.number(), default=0)}),
        handler=handler,
        **fields,
    )


class Secret(Exception):  # noqa: N818 - stands for any exception whose text must not reach a model
    def __str__(self) -> str:
        return "password=hunter2 in /srv/secrets.txt"


def raiser(error: BaseException) -> Any:
    def handler(args: Any) -> Any:
        raise error

    return handler


# -- a handler's exception is TOOL_FAILED -------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [ValueError("bad"), OSError(errno.ENOSPC, "No space left on device"), Secret(), ZeroDivisionError(), KeyError("k")],
    ids=lambda e: type(e).__name__,
)
def test_any_exception_of_a_handler_is_tool_failed_with_the_original_as_cause(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = Runtime([tool(raiser(error))])
    for call in (lambda: runtime.call_sync("t.run", {}), lambda: asyncio.run(runtime.call("t.run", {}))):
        caplog.clear()
        with pytest.raises(ToolFailedError) as caught:
            call()
        failed = caught.value
        assert (failed.code, failed.tool, failed.reason, failed.retryable) == ("TOOL_FAILED", "t.run", "raised", False)
        assert failed.__cause__ is error
        assert failed.exception is not None
        assert failed.exception.endswith(type(error).__name__)
        assert "hunter2" not in str(failed)
        assert "hunter2" not in str(failed.to_dict())
        assert "t.run" in str(failed)
        # The operator gets the whole exception, traceback and all, with the tool and the call id.
        (record,) = [r for r in caplog.records if r.name == "hermes_core"]
        assert record.levelno == logging.ERROR
        assert record.exc_info is not None
        assert record.exc_info[1] is error
        assert failed.call_id is not None
        assert "t.run" in record.getMessage()
        assert failed.call_id in record.getMessage()


def test_observe_answers_for_every_exception_and_nothing_but_a_tool_error_escapes_a_call() -> None:
    errors: list[Exception] = [ValueError(), RuntimeError(), OSError(errno.EIO, "I/O error"), Secret(), TypeError()]
    runtime = Runtime([tool(raiser(error), name=f"t.e{i}") for i, error in enumerate(errors)])
    for i in range(len(errors)):
        observation = runtime.observe_sync(f"t.e{i}", {})
        assert observation["ok"] is False
        assert observation["error"]["code"] == "TOOL_FAILED"
        assert asyncio.run(runtime.observe(f"t.e{i}", {}))["error"]["code"] == "TOOL_FAILED"
        with pytest.raises(ToolError):
            runtime.call_sync(f"t.e{i}", {})


def test_a_handler_reports_its_own_failure_with_a_message_and_retryable() -> None:
    async def down(args: Any) -> Any:
        raise ToolFailedError("the weather service is down", retryable=True)

    runtime = Runtime([tool(down, name="weather.today"), tool(raiser(ToolFailedError("no such city")), name="t.sync")])
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("weather.today", {})
    assert (caught.value.tool, caught.value.reason, caught.value.retryable) == ("weather.today", "reported", True)
    assert caught.value.detail == "the weather service is down"
    assert "the weather service is down" in str(caught.value)
    assert caught.value.call_id
    with pytest.raises(ToolFailedError) as sync_caught:
        asyncio.run(runtime.call("t.sync", {}))
    assert (sync_caught.value.tool, sync_caught.value.retryable) == ("t.sync", False)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3)], ids=lambda e: type(e).__name__)
def test_base_exceptions_that_are_not_exceptions_pass_through(error: BaseException) -> None:
    runtime = Runtime([tool(raiser(error)), tool(raiser(error), name="t.inline", inline=True)])
    with pytest.raises(type(error)):
        runtime.call_sync("t.run", {})
    with pytest.raises(type(error)):
        asyncio.run(runtime.call("t.run", {}))  # from the worker thread
    with pytest.raises(type(error)):
        runtime.observe_sync("t.inline", {})


# -- timeouts -----------------------------------------------------------------------------------


def sleeper(seconds: float, done: list[str] | None = None) -> Any:
    async def handler(args: Any) -> Any:
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            if done is not None:
                done.append("cancelled")
            raise
        return "slept"

    return handler


def test_an_async_handler_past_its_time_is_cancelled_and_the_call_is_tool_failed() -> None:
    done: list[str] = []
    runtime = Runtime([tool(sleeper(5, done))], timeout=0.05)
    with pytest.raises(ToolFailedError) as caught:
        asyncio.run(runtime.call("t.run", {}))
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)
    assert "0.05 seconds" in str(caught.value)
    assert done == ["cancelled"]  # ended by the limit: a call that waited out the 5 s would find nothing cancelled
    with pytest.raises(ToolFailedError):
        runtime.call_sync("t.run", {})


def test_the_most_specific_timeout_wins() -> None:
    # A 0.2 s handler never fits in 0.01 s, and fits in 60 s however busy the machine.
    runtime = Runtime([tool(sleeper(0.2)), tool(sleeper(0.2), name="t.own", timeout=60)], timeout=0.01)
    with pytest.raises(ToolFailedError):
        runtime.call_sync("t.run", {})  # the runtime's 0.01 s
    assert runtime.call_sync("t.own", {}) == "slept"  # the tool's 60 s beats the runtime's
    assert runtime.call_sync("t.run", {}, timeout=60) == "slept"  # the call's beats both
    assert runtime.call_sync("t.run", {}, timeout=None) == "slept"  # None: no limit for this call
    with pytest.raises(ToolFailedError):
        runtime.call_sync("t.own", {}, timeout=0.01)


def test_a_plain_handler_past_its_time_runs_on_but_its_late_result_is_never_delivered() -> None:
    release, finished = threading.Event(), threading.Semaphore(0)

    def slow_for_one(args: Any) -> Any:
        if args["n"] == 1:
            release.wait(60)  # until the test has seen both calls end: no clock decides which comes first
            finished.release()
            return "late"
        return "on time"

    runtime = Runtime([tool(slow_for_one)])
    with pytest.raises(ToolFailedError) as caught:
        asyncio.run(runtime.call("t.run", {"n": 1}, timeout=0.05))
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)
    with pytest.raises(ToolFailedError):
        runtime.call_sync("t.run", {"n": 1}, timeout=0.05)
    assert not finished.acquire(blocking=False)  # both calls ended while their handlers ran
    release.set()
    assert finished.acquire(timeout=60)  # both threads ran on, and ended
    assert finished.acquire(timeout=60)
    assert runtime.call_sync("t.run", {"n": 2}, timeout=60) == "on time"
    assert asyncio.run(runtime.call("t.run", {"n": 2})) == "on time"


@pytest.mark.parametrize("seconds", [0, -1, float("inf"), float("nan"), "1", True, 1e10, 1.8e308, 10**400])
def test_a_timeout_must_be_a_positive_number(seconds: Any) -> None:
    for make in (
        lambda: Runtime(timeout=seconds),
        lambda: tool(sleeper(0), timeout=seconds),
        lambda: Runtime([tool(sleeper(0))]).call_sync("t.run", {}, timeout=seconds),
    ):
        with pytest.raises(InvalidDefinitionError) as caught:
            make()
        assert caught.value.field == "timeout"


def test_the_longest_timeout_is_taken_and_one_past_it_is_refused_not_a_tool_failure() -> None:
    """Past what a wait can wait, a limit was taken, then failed the call as the tool's fault (OverflowError)."""
    from hermes_core import TIMEOUT_MAX

    runtime = Runtime([tool(sleeper(0))], timeout=TIMEOUT_MAX)
    assert runtime.call_sync("t.run", {}, timeout=TIMEOUT_MAX) == "slept"
    assert asyncio.run(runtime.call("t.run", {}, timeout=TIMEOUT_MAX)) == "slept"
    with pytest.raises(InvalidDefinitionError) as caught:
        runtime.call_sync("t.run", {}, timeout=TIMEOUT_MAX * 10)
    assert caught.value.detail == "must be at most 1,000,000,000 seconds (None for no limit), got 1e+10"


# -- cancellation -------------------------------------------------------------------------------


def test_cancelling_the_awaiting_task_cancels_the_handler_and_is_no_tool_failure() -> None:
    done: list[str] = []
    runtime = Runtime([tool(sleeper(5, done))])

    async def main() -> None:
        task = asyncio.create_task(runtime.call("t.run", {}))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert done == ["cancelled"]


# -- sync handlers off the event loop -----------------------------------------------------------


def test_blocking_plain_handlers_run_on_worker_threads_and_stall_nothing() -> None:
    # No clock decides: the ten handlers go on only all together (one after the other, the barrier would break),
    # and then only once the async tool has answered (which it could not while they held the loop's thread).
    together, answered = threading.Event(), threading.Event()
    barrier = threading.Barrier(10, action=together.set, timeout=60)

    def blocking(args: Any) -> Any:
        barrier.wait()
        answered.wait(60)
        return threading.current_thread().name

    async def quick(args: Any) -> Any:
        return "quick"

    runtime = Runtime([tool(blocking), tool(quick, name="t.quick")])

    async def main() -> tuple[bool, list[Any]]:
        calls = [asyncio.create_task(runtime.call("t.run", {})) for _ in range(10)]
        while not together.is_set():  # the ten plain handlers are running at once
            assert not barrier.broken
            await asyncio.sleep(0.01)
        assert await runtime.call("t.quick", {}) == "quick"
        blocked = not any(call.done() for call in calls)  # the async tool answered while the ten were blocked
        answered.set()
        return blocked, await asyncio.gather(*calls)

    blocked, names = asyncio.run(main())
    assert blocked
    assert all(name != threading.main_thread().name for name in names)


def test_an_inline_tool_runs_on_the_loops_thread_and_call_sync_runs_plain_handlers_inline() -> None:
    def where(args: Any) -> Any:
        return threading.current_thread().name

    runtime = Runtime([tool(where), tool(where, name="t.inline", inline=True)])
    main = threading.current_thread().name
    assert asyncio.run(runtime.call("t.inline", {})) == main
    assert asyncio.run(runtime.call("t.run", {})) != main
    assert runtime.call_sync("t.run", {}) == main  # no time limit: no thread at all
    assert runtime.call_sync("t.run", {}, timeout=60) != main  # a time limit needs a thread to wait on


def test_a_tool_name_whose_own_methods_raise_is_simply_not_found() -> None:
    class Hostile(str):
        def __hash__(self) -> int:
            raise RuntimeError("hash")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

    class Unshowable:
        def __repr__(self) -> str:
            raise RuntimeError("repr")

    runtime = Runtime([tool(sleeper(0))])
    assert runtime.observe_sync(Hostile("t.run"), {}) == {"ok": True, "output": "slept"}  # found by its text
    missed = runtime.observe_sync(Hostile("t.rnu"), {})["error"]
    assert (missed["code"], missed["suggestions"]) == ("TOOL_NOT_FOUND", ["t.run"])
    unshowable = runtime.observe_sync(Unshowable(), {})  # type: ignore[arg-type]
    assert unshowable["error"]["code"] == "TOOL_NOT_FOUND"


# -- a call's time limit covers its checks --------------------------------------------------------

# A plugin author's own pattern stays on Python's re (trusted code): checked with backtracking,
# holding the interpreter, it cannot be stopped half-way; the first alternative backtracks
# exponentially in the number of "a"s before the second one matches.
SLOW_PATTERN = r"^(?:(a+)+b|a+)$"


def slow_tool(handler: Any) -> Tool:
    return define_tool(
        name="t.slow_check",
        description="Take a text.",
        version="1.0.0",
        input=s.object({"text": s.string(pattern=SLOW_PATTERN)}),
        handler=handler,
    )


@functools.cache
def slow_text() -> tuple[str, float]:
    """A text that matches SLOW_PATTERN and takes at least a second of CPU to check here, and how much it took.

    Measured in this thread's CPU time, which a busy machine does not stretch: a check of the text takes at
    least about as long on any clock. (Measured on the wall clock under load, a check that took 2 s once took
    1 s in the test, and the call it had to make time out did not.)
    """
    check = compile_schema(slow_tool(lambda args: None).input, {})
    for length in range(16, 40):
        text = "a" * length
        started = time.thread_time()
        check.check({"text": text})
        took = time.thread_time() - started
        if took >= 1.0:
            return text, took
    raise AssertionError("no text was slow enough to check")


def test_a_check_of_the_input_that_outlasts_the_limit_ends_the_call_as_a_timeout_and_runs_no_handler() -> None:
    ran: list[str] = []
    runtime = Runtime([slow_tool(lambda args: ran.append("ran") or "done")])
    text, _ = slow_text()
    for call in (
        lambda: runtime.call_sync("t.slow_check", {"text": text}, timeout=0.5),
        lambda: asyncio.run(runtime.call("t.slow_check", {"text": text}, timeout=0.5)),
    ):
        started = time.monotonic()
        with pytest.raises(ToolFailedError) as caught:
            call()
        ended = time.monotonic()
        # The time it says the check took, on the runtime's own clock: past the limit, and within the call.
        spent = float(re.findall(r"input took ([0-9.]+) seconds?", str(caught.value))[0])
        assert 0.5 <= spent <= ended - started + 0.001  # written to the millisecond
        assert (caught.value.code.value, caught.value.reason, caught.value.retryable) == (
            "TOOL_FAILED",
            "timeout",
            True,
        )
        assert str(caught.value).startswith(
            "t.slow_check did not finish within 0.5 seconds: checking its permissions and input took "
        )
        assert str(caught.value).split("\n")[0].endswith(" seconds, so its handler was not run.")
    assert ran == []  # before, the check took its time and the handler was given the whole limit after it
    assert runtime.call_sync("t.slow_check", {"text": "aaa"}, timeout=60) == "done"


def test_a_rejected_input_is_input_invalid_however_long_its_check_took() -> None:
    runtime = Runtime([slow_tool(lambda args: "done")])
    text = slow_text()[0][:-3] + "!"  # about as slow to refuse as the whole text is to accept
    with pytest.raises(ToolError) as caught:
        runtime.call_sync("t.slow_check", {"text": text}, timeout=0.1)
    assert caught.value.code.value == "INPUT_INVALID"  # a verdict on the input is worth more than "too slow"


def test_the_handler_is_given_what_the_checks_left_of_the_limit() -> None:
    text, took = slow_text()  # its check takes at least `took` seconds of CPU, so at least that long on any clock
    limit = took + 1.0
    # The handler alone fits in the limit, half the check's time to spare; after the check it does not, by
    # as much. Either way by half a second at least, whatever the load: the check's time is CPU time.
    handler_time = limit - took / 2

    def sleepy(args: Any) -> Any:
        time.sleep(handler_time)
        return "done"

    runtime = Runtime([slow_tool(sleepy)])
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("t.slow_check", {"text": text}, timeout=limit)
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)
    assert runtime.call_sync("t.slow_check", {"text": "aaa"}, timeout=limit) == "done"


def test_a_coroutine_a_plain_handler_returns_past_the_limit_is_reported_against_the_calls_limit() -> None:
    async def later(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    def handler(args: Any) -> Any:
        time.sleep(0.2)  # a fifth of the limit spent before the coroutine is returned
        return later(args["n"])

    runtime = Runtime([tool(handler)])
    assert runtime.call_sync("t.run", {"n": 0}, timeout=1.0) == "done"
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("t.run", {"n": 30}, timeout=1.0)
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)
    assert "did not finish within 1 second" in caught.value.message  # the call's limit, not what was left of it


def test_an_output_check_that_outlasts_the_limit_drops_the_result() -> None:
    text, _ = slow_text()
    runtime = Runtime(
        [
            define_tool(
                name="t.slow_output",
                description="Return a text.",
                version="1.0.0",
                input=s.object({}),
                output=s.string(pattern=SLOW_PATTERN),
                handler=lambda args: text,
            )
        ]
    )
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("t.slow_output", {}, timeout=0.5)
    assert caught.value.reason == "timeout"
    assert "with the check of its output it took" in str(caught.value)
    assert "so its result was dropped" in str(caught.value)


# -- plain handlers stranded past their limit ----------------------------------------------------


@pytest.fixture
def stuck() -> Any:
    """A handler that blocks until the test ends, and waits at the end until every stranded call ended."""
    release = threading.Event()

    def handler(args: Any) -> Any:
        release.wait(600)  # released when the test ends, however long a busy machine makes it
        return "late"

    yield handler
    release.set()
    deadline = time.monotonic() + 60
    while _aio.stranded() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _aio.stranded() == {}


def test_forty_plain_calls_stuck_past_their_limit_leave_every_other_tool_running(stuck: Any) -> None:
    runtime = Runtime([tool(stuck, name="t.stuck"), tool(lambda args: "ok", name="t.ok")])
    errors: list[ToolFailedError] = []
    for _ in range(40):  # each ends at its limit, its handler left running (counted below), not waited for
        with pytest.raises(ToolFailedError) as caught:
            runtime.call_sync("t.stuck", {}, timeout=0.1)
        errors.append(caught.value)
    limit = _aio.STRANDED_PER_TOOL
    assert all(str(e).startswith("t.stuck did not finish within 0.1 seconds.") for e in errors[:limit])
    refused = errors[limit:]
    assert {(e.reason, e.retryable) for e in refused} == {("timeout", True)}
    assert str(refused[0]).split("\n")[0] == (
        f"t.stuck was not run: {limit} earlier calls of it are still running after their time limit, "
        f"the most one tool may leave running ({limit}); it can be called again once one ends."
    )
    assert _aio.stranded() == {"t.stuck": limit}
    # Before, the 33rd stuck call filled the pool: every plain tool then timed out without running, or hung.
    assert runtime.call_sync("t.ok", {}, timeout=60) == "ok"
    assert asyncio.run(runtime.call("t.ok", {}, timeout=60)) == "ok"
    assert asyncio.run(runtime.call("t.ok", {})) == "ok"


def test_calls_given_up_under_await_are_stranded_too_and_end_in_time(stuck: Any) -> None:
    runtime = Runtime([tool(stuck, name="t.stuck"), tool(lambda args: "ok", name="t.ok")])

    async def main() -> list[Any]:
        calls = [runtime.call("t.stuck", {}, timeout=0.2) for _ in range(200)]
        return await asyncio.gather(*calls, runtime.call("t.ok", {}), return_exceptions=True)

    *outcomes, ok = asyncio.run(main())
    assert ok == "ok"
    assert all(isinstance(outcome, ToolFailedError) and outcome.reason == "timeout" for outcome in outcomes)
    # A call starts only while its tool has fewer than the limit stranded: at most the workers
    # running at once when it was reached run on past it; the others never started. (Calls that waited for
    # their handlers would have left none running.)
    stranded = _aio.stranded()["t.stuck"]
    assert _aio.STRANDED_PER_TOOL <= stranded <= _aio.STRANDED_PER_TOOL + _aio.WORKERS
    assert asyncio.run(runtime.call("t.ok", {}, timeout=60)) == "ok"


def test_past_the_process_wide_limit_every_plain_call_is_refused_naming_the_stuck_tools(
    stuck: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_aio, "STRANDED_MAX", 3)
    runtime = Runtime([tool(stuck, name="t.a"), tool(stuck, name="t.b"), tool(lambda args: "ok", name="t.ok")])
    for name in ("t.a", "t.a", "t.b"):
        with pytest.raises(ToolFailedError):
            runtime.call_sync(name, {}, timeout=0.05)
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("t.ok", {}, timeout=60)
    assert str(caught.value).split("\n")[0] == (
        "t.ok was not run: 3 calls of plain tools are still running after their time limit (t.a: 2, t.b: 1), "
        "the most a process may leave running (3); it can be called again once one ends."
    )
    assert (caught.value.reason, caught.value.retryable) == ("timeout", True)


def test_an_untimed_call_sync_reads_no_clock_and_is_never_refused_for_stranded_calls(
    stuck: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_aio, "STRANDED_MAX", 1)
    runtime = Runtime([tool(stuck, name="t.stuck"), tool(lambda args: "ok", name="t.ok")])
    with pytest.raises(ToolFailedError):
        runtime.call_sync("t.stuck", {}, timeout=0.05)
    with pytest.raises(ToolFailedError, match="was not run"):  # the process-wide limit is reached
        runtime.call_sync("t.ok", {}, timeout=60)

    def clock() -> float:
        raise AssertionError("the clock was read")

    # A plain handler with no time limit runs inline: no thread to strand, no deadline to keep.
    monkeypatch.setattr(_calls, "monotonic", clock)
    assert runtime.call_sync("t.ok", {}) == "ok"
    assert runtime.observe_sync("t.ok", {"extra": 1})["error"]["code"] == "INPUT_INVALID"


def test_a_stranded_call_that_ends_gives_its_place_back(stuck: Any) -> None:
    release = threading.Event()

    def waits(args: Any) -> Any:
        release.wait(600)
        return "late"

    runtime = Runtime([tool(waits, name="t.wait")])
    for _ in range(_aio.STRANDED_PER_TOOL):
        with pytest.raises(ToolFailedError):
            runtime.call_sync("t.wait", {}, timeout=0.05)
    with pytest.raises(ToolFailedError, match="still running after their time limit"):
        runtime.call_sync("t.wait", {}, timeout=0.05)
    release.set()
    deadline = time.monotonic() + 60
    while _aio.stranded() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _aio.stranded() == {}
    assert runtime.call_sync("t.wait", {}, timeout=60) == "late"


def test_a_handler_still_running_past_its_limit_does_not_keep_the_process_alive(tmp_path: Path) -> None:
    script = tmp_path / "stuck.py"
    script.write_text(
        "import time\n"
        "from hermes_core import Runtime, ToolError, define_tool, schema as s\n"
        "tool = define_tool(name='t.sleep', description='Sleep.', version='1.0.0', input=s.object({}),\n"
        "                   handler=lambda args: time.sleep(3600))\n"
        "try:\n"
        "    Runtime([tool]).call_sync('t.sleep', {}, timeout=0.1)\n"
        "except ToolError as error:\n"
        "    print(error.code.value)\n"
    )
    # Before, the process waited out the handler's hour, and this ran into its own limit.
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "TOOL_FAILED\n", "")


def test_calls_ending_right_at_their_limit_leave_the_accounting_straight() -> None:
    def about_a_millisecond(args: Any) -> Any:
        time.sleep(args["n"])
        return "done"

    runtime = Runtime([tool(about_a_millisecond, name="t.edge")])

    def outcome(i: int) -> str:
        args = {"n": (i % 7) / 3000}
        try:
            if i % 2:
                return str(runtime.call_sync("t.edge", args, timeout=0.001))
            return str(asyncio.run(runtime.call("t.edge", args, timeout=0.001)))
        except ToolFailedError as error:
            return error.reason

    # Finishing and giving up race each other, on both paths.
    assert {outcome(i) for i in range(300)} <= {"done", "timeout"}
    deadline = time.monotonic() + 60
    while _aio.stranded() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _aio.stranded() == {}

    async def many() -> list[Any]:
        return await asyncio.gather(*(runtime.call("t.edge", {"n": 0.05}, timeout=60) for _ in range(100)))

    assert asyncio.run(many()) == ["done"] * 100
