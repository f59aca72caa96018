"""The call context: current_call() in plain and async handlers and on threads; progress, logs, cancelling, confirm."""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import hermes_core
from hermes_core import (
    Approval,
    ApprovalRequest,
    CallContext,
    LogMessage,
    Progress,
    Runtime,
    ToolFailedError,
    current_call,
    define_tool,
    tool,
)
from hermes_core import current_call as running_call
from hermes_core import schema as s

INPUT = s.object({"n": s.optional(s.integer(minimum=0), default=3)})


def counting(args: dict[str, Any]) -> int:
    context = current_call()
    for i in range(1, args["n"] + 1):
        context.progress(i, args["n"], f"step {i}")
        time.sleep(0.06)  # past the context's 50 ms between reports
    context.log("info", "counted")
    return args["n"]


async def counting_async(args: dict[str, Any]) -> int:
    context = current_call()
    for i in range(1, args["n"] + 1):
        context.progress(i, args["n"])
        await asyncio.sleep(0.06)
    return args["n"]


def helper_reporting() -> str:
    return current_call().tool.name


def make(name: str, handler: Any, **options: Any) -> Any:
    return define_tool(name=name, description="A test tool.", version="1.0.0", input=INPUT, handler=handler, **options)


class Heard:
    def __init__(self) -> None:
        self.progress: list[Progress] = []
        self.logs: list[LogMessage] = []
        self.threads: set[int] = set()

    def on_progress(self, report: Progress) -> None:
        self.threads.add(threading.get_ident())
        self.progress.append(report)

    def on_log(self, message: LogMessage) -> None:
        self.logs.append(message)


# -- finding the context -------------------------------------------------------------------------


def test_outside_a_call_current_call_says_so() -> None:
    with pytest.raises(LookupError, match=r"current_call\(\) found no running tool call here"):
        current_call()


def test_a_handler_calling_current_call_uses_its_context_by_itself() -> None:
    assert make("t.count", counting).context is True
    assert make("t.plain", lambda args: 1).context is False


@pytest.mark.parametrize("how", ["call_sync", "await call", "await call, plain handler on a thread", "timeout"])
def test_progress_and_logs_reach_the_callers_listeners(how: str) -> None:
    handler = counting_async if how == "await call" else counting
    runtime = Runtime([make("t.count", handler, timeout=30 if how == "timeout" else None)])
    heard = Heard()
    listen = {"on_progress": heard.on_progress, "on_log": heard.on_log}
    if how in {"call_sync", "timeout"}:
        assert runtime.call_sync("t.count", {}, **listen) == 3
    else:
        assert asyncio.run(runtime.call("t.count", {}, **listen)) == 3
    assert [(p.done, p.total) for p in heard.progress] == [(1, 3), (2, 3), (3, 3)]
    if handler is counting:
        assert heard.progress[0].message == "step 1"
        assert heard.logs == [LogMessage("info", "counted")]


def test_reports_that_do_not_move_forward_or_come_too_fast_are_dropped_but_the_last_is_not() -> None:
    def busy(args: dict[str, Any]) -> None:
        context = current_call()
        for i in range(1, 1001):
            context.progress(i, 1000)
        context.progress(5, 1000)  # backwards: dropped

    heard = Heard()
    Runtime([make("t.busy", busy)]).call_sync("t.busy", {}, on_progress=heard.on_progress)
    assert heard.progress[0].done == 1
    assert heard.progress[-1].done == 1000
    assert len(heard.progress) < 50


def test_a_tool_defined_with_context_finds_it_in_code_it_calls() -> None:
    runtime = Runtime([make("t.helper", lambda args: helper_reporting(), context=True)])
    assert runtime.call_sync("t.helper", {}) == "t.helper"


def test_a_tool_whose_helper_calls_current_call_gets_its_own_context_inside_another_call() -> None:
    inner = make("t.inner", lambda args: helper_reporting())
    outer_runtime: list[Runtime] = []

    def outer(args: dict[str, Any]) -> Any:
        return [current_call().tool.name, outer_runtime[0].call_sync("t.inner", {}), current_call().tool.name]

    runtime = Runtime([inner, make("t.outer", outer)])
    outer_runtime.append(runtime)
    # t.inner's handler reaches current_call() through a helper its code names: its call has its own context,
    # not the context of the call it is made from; t.outer's is back once it returns.
    assert inner.context is True
    assert runtime.call_sync("t.outer", {}) == ["t.outer", "t.inner", "t.outer"]


# -- every way a handler's own code reaches current_call() ------------------------------------------


def confirming_factory() -> Any:
    """A new user's handler: current_call imported under another name inside the function that makes it."""
    from hermes_core import current_call as cc

    return lambda args: cc().confirm_sync("Delete the files?")


def test_a_handler_from_a_factory_importing_current_call_as_another_name_confirms() -> None:
    handler = confirming_factory()
    person = Person(Approval.once())
    runtime = Runtime([make("t.delete", handler)], approver=person)
    assert runtime.call_sync("t.delete", {}) is True
    assert person.requests[0].message == "Delete the files?"
    assert asyncio.run(Runtime([make("t.delete", handler)]).call("t.delete", {})) is False  # no approver: no


def named_by_alias(args: dict[str, Any]) -> str:
    return running_call().tool.name


def named_by_attribute(args: dict[str, Any]) -> str:
    return hermes_core.current_call().tool.name


def named_by_default(args: dict[str, Any], here: Any = current_call) -> str:
    return str(here().tool.name)


def through_a_closure() -> Any:
    report = helper_reporting
    return lambda args: report()


class Reporter:
    """A callable object, and a method, that reach current_call() through a method of their own."""

    def __call__(self, args: dict[str, Any]) -> str:
        return self.name()

    def handle(self, args: dict[str, Any]) -> str:
        return self.name()

    def name(self) -> str:
        return helper_reporting()


def decorated_handler() -> Any:
    def logged(function: Any) -> Any:
        @functools.wraps(function)
        def wrapper(args: dict[str, Any]) -> Any:
            return function(args)

        return wrapper

    return logged(lambda args: current_call().tool.name)


SHAPES = {
    "an alias made at the top of the module": named_by_alias,
    "the package's attribute": named_by_attribute,
    "a default argument": named_by_default,
    "a helper function": lambda args: helper_reporting(),
    "a helper held by a closure": through_a_closure(),
    "a functools.partial": functools.partial(lambda prefix, args: prefix + helper_reporting(), ""),
    "a callable object": Reporter(),
    "a bound method": Reporter().handle,
    "a decorated function": decorated_handler(),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_handler_reaching_current_call_in_code_its_definition_shows_uses_its_context(shape: str) -> None:
    tool = make("t.shape", SHAPES[shape])
    assert tool.context is True
    assert Runtime([tool]).call_sync("t.shape", {}) == "t.shape"
    assert asyncio.run(Runtime([tool]).call("t.shape", {})) == "t.shape"


def test_a_handler_reaching_nothing_of_the_context_sets_none() -> None:
    def summing(args: dict[str, Any]) -> str:
        return json.dumps(sum_of(args))

    tool = make("t.plain", summing)
    assert tool.context is False
    assert Runtime([tool]).call_sync("t.plain", {}) == "3"


def sum_of(args: dict[str, Any]) -> int:
    return int(args["n"])


def test_a_helper_defined_below_its_handler_is_found_when_the_runtime_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "late_helper_tools.py").write_text(
        "from hermes_core import define_tool, schema as s\n"
        "TOOL = define_tool(name='t.late', description='d', version='1.0.0', input=s.object({}),\n"
        "                   handler=lambda args: report())\n"
        "def report():\n"
        "    from hermes_core import current_call\n"
        "    return current_call().tool.name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("late_helper_tools")
    assert module.TOOL.context is False  # the helper did not exist yet when the tool was defined
    assert Runtime([module.TOOL]).call_sync("t.late", {}) == "t.late"


def test_a_handler_reaching_current_call_through_a_name_built_at_call_time_needs_context_true() -> None:
    def dynamic(args: dict[str, Any]) -> str:
        found = getattr(hermes_core, "_".join(["current", "call"]))
        return str(found().tool.name)

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.dynamic", dynamic)]).call_sync("t.dynamic", {})
    assert isinstance(caught.value.__cause__, LookupError)
    assert "define_tool(..., context=True)" in str(caught.value.__cause__)
    assert Runtime([make("t.dynamic", dynamic, context=True)]).call_sync("t.dynamic", {}) == "t.dynamic"


def test_the_context_is_gone_after_the_call() -> None:
    runtime = Runtime([make("t.count", counting)])
    runtime.call_sync("t.count", {"n": 1})
    with pytest.raises(LookupError):
        current_call()


def test_a_tool_function_may_take_the_context_as_a_parameter() -> None:
    seen: list[CallContext] = []

    @tool(name="t.decorated", version="1.0.0")
    def decorated(path: str, context: CallContext) -> str:
        """Read a path.

        Args:
            path: the path.
            context: the call's context.
        """
        seen.append(context)
        context.progress(1, 1)
        return path

    assert decorated.context is True
    assert decorated.input.json_schema()["properties"].keys() == {"path"}
    heard = Heard()
    assert Runtime([decorated]).call_sync("t.decorated", {"path": "a"}, on_progress=heard.on_progress) == "a"
    assert seen[0].tool is decorated
    assert [p.done for p in heard.progress] == [1]


def test_the_call_id_is_the_one_a_failure_carries() -> None:
    ids: list[str] = []

    def failing(args: dict[str, Any]) -> None:
        ids.append(current_call().call_id)
        raise OSError("disk full")

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.fail", failing)]).call_sync("t.fail", {})
    assert caught.value.call_id == ids[0]


# -- what a handler may get wrong, and a listener ----------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "error", "text"),
    [
        ((-1,), ValueError, "progress done must be a finite number of at least 0, got -1"),
        ((float("nan"),), ValueError, "progress done must be a finite number of at least 0, got nan"),
        ((1, 0), ValueError, "progress total must be a positive finite number, got 0"),
        (("1",), TypeError, "progress done must be a number, got str"),
        ((True,), TypeError, "progress done must be a number, got bool"),
        ((1, None, 3), TypeError, "progress message must be a string or None, got int"),
    ],
)
def test_a_malformed_progress_report_fails_the_call_naming_it(
    arguments: tuple[Any, ...], error: type, text: str
) -> None:
    def reporting(args: dict[str, Any]) -> None:
        current_call().progress(*arguments)

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.bad", reporting)]).call_sync("t.bad", {})
    assert isinstance(caught.value.__cause__, error)
    assert str(caught.value.__cause__) == text


def test_a_listener_that_raises_never_fails_the_call(caplog: pytest.LogCaptureFixture) -> None:
    def broken(report: Progress) -> None:
        raise RuntimeError("listener bug")

    assert Runtime([make("t.count", counting)]).call_sync("t.count", {"n": 1}, on_progress=broken) == 1
    assert "a listener raised RuntimeError" in caplog.text


def test_without_a_listener_log_messages_go_to_the_calls_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hermes_core.calls")
    Runtime([make("t.count", counting)]).call_sync("t.count", {"n": 1})
    assert [(r.name, r.getMessage()[-7:]) for r in caplog.records] == [("hermes_core.calls", "counted")]


def test_an_unknown_log_level_is_named() -> None:
    def logging_badly(args: dict[str, Any]) -> None:
        current_call().log("verbose", "x")  # type: ignore[arg-type]

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.log", logging_badly)]).call_sync("t.log", {})
    assert "level must be one of debug, info, notice, warning, error, critical, alert, emergency" in str(
        caught.value.__cause__
    )


# -- cancellation ----------------------------------------------------------------------------


def test_a_plain_handler_past_its_time_limit_sees_it_is_cancelled() -> None:
    seen = threading.Event()
    stopped = threading.Event()

    def slow(args: dict[str, Any]) -> None:
        context = current_call()
        assert not context.cancelled
        seen.set()
        deadline = time.monotonic() + 30
        while not context.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        if context.cancelled:
            stopped.set()

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.slow", slow, timeout=0.2)]).call_sync("t.slow", {})
    assert caught.value.reason == "timeout"
    assert seen.is_set()
    assert stopped.wait(10), "the handler saw its call given up on and stopped"


def test_a_cancelled_task_marks_a_threaded_handlers_call_cancelled() -> None:
    started = threading.Event()
    stopped = threading.Event()

    def slow(args: dict[str, Any]) -> None:
        context = current_call()
        started.set()
        deadline = time.monotonic() + 30
        while not context.cancelled and time.monotonic() < deadline:
            time.sleep(0.01)
        if context.cancelled:
            stopped.set()

    async def main() -> None:
        task = asyncio.ensure_future(Runtime([make("t.slow", slow)]).call("t.slow", {}))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert stopped.wait(10)


# -- confirm ---------------------------------------------------------------------------------


class Person:
    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


def deleting(args: dict[str, Any]) -> str:
    return "deleted" if current_call().confirm_sync(f"Delete {args['n']} files?") else "kept"


async def deleting_async(args: dict[str, Any]) -> str:
    return "deleted" if await current_call().confirm(f"Delete {args['n']} files?") else "kept"


@pytest.mark.parametrize("handler", [deleting, deleting_async])
def test_confirm_asks_the_approver_with_the_question_and_the_checked_input(handler: Any) -> None:
    person = Person(Approval.once(), Approval.decline("no"))
    runtime = Runtime([make("t.delete", handler)], approver=person)
    assert asyncio.run(runtime.call("t.delete", {"n": 30})) == "deleted"
    assert runtime.call_sync("t.delete", {}) == "kept"
    first = person.requests[0]
    assert (first.tool.name, first.permissions, first.message, first.input) == (
        "t.delete",
        (),
        "Delete 30 files?",
        {"n": 30},
    )
    assert person.requests[1].input == {"n": 3}  # the default filled in: the checked input


def test_confirm_always_answers_the_same_question_for_the_runtimes_life() -> None:
    person = Person(Approval.always(), Approval.decline())
    runtime = Runtime([make("t.delete", deleting)], approver=person)
    assert [runtime.call_sync("t.delete", {}) for _ in range(3)] == ["deleted"] * 3
    assert runtime.call_sync("t.delete", {"n": 4}) == "kept"  # another question is asked
    assert len(person.requests) == 2


def test_confirm_without_an_approver_is_no(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hermes_core.audit")
    assert Runtime([make("t.delete", deleting)]).call_sync("t.delete", {}) == "kept"
    (record,) = [r for r in caplog.records if r.name == "hermes_core.audit"]
    assert (record.permission, record.decision, record.source) == ("(confirm)", "declined", "no approver")  # type: ignore[attr-defined]


def test_confirm_from_a_worker_thread_runs_an_async_approver_on_the_callers_loop() -> None:
    loops: list[Any] = []

    async def approver(request: ApprovalRequest) -> Approval:
        loops.append(asyncio.get_running_loop())
        return Approval.once()

    async def main() -> Any:
        runtime = Runtime([make("t.delete", deleting)], approver=approver)
        return await runtime.call("t.delete", {}), asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert result == "deleted"
    assert loops == [loop]


def test_an_approver_failing_a_confirm_fails_the_call_closed() -> None:
    def broken(request: ApprovalRequest) -> Approval:
        raise OSError("ui gone")

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.delete", deleting)], approver=broken).call_sync("t.delete", {})
    assert "the approver raised OSError while the tool asked for confirmation" in caught.value.message


def test_a_blank_question_is_refused() -> None:
    def asking(args: dict[str, Any]) -> bool:
        return current_call().confirm_sync("  ")

    with pytest.raises(ToolFailedError) as caught:
        Runtime([make("t.ask", asking)], approver=Person(Approval.once())).call_sync("t.ask", {})
    assert str(caught.value.__cause__) == "confirm() needs a question for a person: a non-blank string"


# -- spans -----------------------------------------------------------------------------------


def test_progress_logs_and_decisions_are_span_events() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hermes_core import disable_tracing, enable_tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    try:
        Runtime([make("t.count", counting)]).call_sync("t.count", {"n": 1})
        Runtime([make("t.delete", deleting)], approver=Person(Approval.once())).call_sync("t.delete", {})
    finally:
        disable_tracing()
    count, delete = exporter.get_finished_spans()
    assert [(e.name, dict(e.attributes or {})) for e in count.events] == [
        (
            "hermesos.progress",
            {"hermesos.progress.done": 1, "hermesos.progress.total": 1, "hermesos.progress.message": "step 1"},
        ),
        ("hermesos.log", {"hermesos.log.level": "info", "hermesos.log.message": "counted"}),
    ]
    assert [dict(e.attributes or {}) for e in delete.events] == [
        {"hermesos.permission": "(confirm)", "hermesos.decision": "approved", "hermesos.source": "approver"}
    ]
