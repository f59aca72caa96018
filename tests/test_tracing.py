from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from hermes_core import (
    InputInvalidError,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    PermissionDeniedError,
    Runtime,
    SchemaError,
    Tool,
    ToolError,
    ToolNotFoundError,
    __version__,
    define_tool,
    disable_tracing,
    enable_tracing,
    tracing_enabled,
)
from hermes_core import schema as s
from hermes_core._base import _tracing as tracing
from hermes_core._base._tracing import tool_span

SECRET = "s3cr3t-token"


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    provider = TracerProvider()
    yield provider
    provider.shutdown()


@pytest.fixture
def exporter(provider: TracerProvider) -> Iterator[InMemorySpanExporter]:
    """Tracing on, into an in-memory exporter; off again after the test, whatever it did."""
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    yield exporter
    disable_tracing()


def only_span(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


def base_attributes(tool: str, call_id: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }


def assert_failed(span: ReadableSpan, error_type: str) -> None:
    assert span.attributes is not None
    assert span.attributes["error.type"] == error_type
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == error_type
    assert [e.name for e in span.events if e.name == "exception"] == [], "no exception event is recorded"


def assert_cancelled(span: ReadableSpan) -> None:
    assert span.attributes is not None
    assert span.attributes["hermesos.cancelled"] is True
    assert "error.type" not in span.attributes
    assert span.status.status_code is StatusCode.UNSET
    assert not span.events


# -- switching on and off -------------------------------------------------------------------


def test_tracing_is_off_until_enabled_and_off_again_after_disable(provider: TracerProvider) -> None:
    assert not tracing_enabled()
    assert tracing.TRACER is None
    enable_tracing(provider)
    try:
        assert tracing_enabled()
        assert tracing.TRACER is not None
    finally:
        disable_tracing()
    assert not tracing_enabled()
    assert tracing.TRACER is None


def test_spans_come_from_a_tracer_named_for_the_package(exporter: InMemorySpanExporter) -> None:
    with tool_span("text.echo", "call-1"):
        pass
    scope = only_span(exporter).instrumentation_scope
    assert scope is not None
    assert (scope.name, scope.version) == ("hermes_core", __version__)


def test_without_a_provider_the_global_one_is_used(provider: TracerProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    enable_tracing()
    try:
        with tool_span("text.echo", "call-1"):
            pass
    finally:
        disable_tracing()
    assert only_span(exporter).name == "execute_tool text.echo"


def test_enabling_without_opentelemetry_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    with pytest.raises(RuntimeError, match=r'pip install "hermesos-core\[otel\]"') as raised:
        enable_tracing()
    assert isinstance(raised.value.__cause__, ImportError)
    assert not tracing_enabled()


def test_importing_the_package_does_not_import_opentelemetry() -> None:
    code = "import sys, hermes_core; print(sorted(m for m in ('opentelemetry', 'asyncio') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_a_span_entered_while_tracing_is_off_records_nothing(exporter: InMemorySpanExporter) -> None:
    disable_tracing()
    with tool_span("text.echo", "call-1"):
        pass
    assert exporter.get_finished_spans() == ()


# -- tool_span itself -----------------------------------------------------------------------


def test_a_successful_call_is_one_internal_span_current_inside_its_body(
    exporter: InMemorySpanExporter, provider: TracerProvider
) -> None:
    with tool_span("text.echo", "call-1"):
        inside = trace.get_current_span()
        with provider.get_tracer("a handler").start_as_current_span("handler work"):
            pass
    child, span = exporter.get_finished_spans()
    assert span.name == "execute_tool text.echo"
    assert span.kind is SpanKind.INTERNAL
    assert span.attributes == base_attributes("text.echo", "call-1")
    assert span.status.status_code is StatusCode.UNSET
    assert not span.events
    assert inside.get_span_context() == span.context
    assert child.parent is not None
    assert child.parent.span_id == span.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN, "the span is current only inside the body"


_ISSUE = Issue(("path",), "invalid", f"is not allowed here: {SECRET}")
_TOOL_ERRORS = [
    SchemaError([_ISSUE]),
    InputInvalidError("text.echo", [_ISSUE]),
    OutputInvalidError("text.echo", [_ISSUE]),
    PermissionDeniedError("text.echo", "fs:write"),
    ToolNotFoundError(f"text.{SECRET}", ["text.echo"]),
    InvalidDefinitionError('tool "text.echo"', "description", f"must not mention {SECRET}"),
]


@pytest.mark.parametrize("error", _TOOL_ERRORS, ids=lambda error: error.code.value)
def test_a_tool_error_sets_its_code_as_error_type_and_is_reraised_unchanged(
    exporter: InMemorySpanExporter, error: ToolError
) -> None:
    with pytest.raises(ToolError) as raised, tool_span("text.echo", "call-1"):
        raise error
    assert raised.value is error
    span = only_span(exporter)
    assert_failed(span, error.code.value)
    assert span.attributes == {
        **base_attributes("text.echo", "call-1"),
        "error.type": error.code.value,
        "hermesos.retryable": error.retryable,
    }


@pytest.mark.parametrize("error", _TOOL_ERRORS, ids=lambda error: error.code.value)
def test_a_tool_errors_message_is_not_recorded(exporter: InMemorySpanExporter, error: ToolError) -> None:
    with pytest.raises(ToolError), tool_span("text.echo", "call-1"):
        raise error
    assert SECRET not in only_span(exporter).to_json()


@pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit, ValueError, RuntimeError])
def test_any_other_exception_sets_its_class_name_as_error_type(
    exporter: InMemorySpanExporter, kind: type[BaseException]
) -> None:
    error = kind(SECRET)
    with pytest.raises(kind) as raised, tool_span("text.echo", "call-1"):
        raise error
    assert raised.value is error
    span = only_span(exporter)
    assert_failed(span, kind.__name__)
    assert "hermesos.retryable" not in (span.attributes or {})
    assert SECRET not in span.to_json()


def test_an_exception_of_a_module_is_named_with_its_module(exporter: InMemorySpanExporter) -> None:
    with pytest.raises(json.JSONDecodeError), tool_span("text.echo", "call-1"):
        json.loads('{"token": "s3cr3t-token"')
    span = only_span(exporter)
    assert_failed(span, "json.decoder.JSONDecodeError")
    assert SECRET not in span.to_json()


def test_a_cancelled_task_is_not_an_error(exporter: InMemorySpanExporter) -> None:
    async def work(started: asyncio.Event) -> None:
        with tool_span("text.echo", "call-1"):
            started.set()
            await asyncio.sleep(10)

    async def main() -> None:
        started = asyncio.Event()
        task = asyncio.create_task(work(started))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    span = only_span(exporter)
    assert_cancelled(span)
    assert span.attributes == {**base_attributes("text.echo", "call-1"), "hermesos.cancelled": True}


def test_a_coroutine_closed_unfinished_is_a_cancellation(exporter: InMemorySpanExporter) -> None:
    async def work() -> None:
        with tool_span("text.echo", "call-1"):
            await asyncio.sleep(0)  # yields once, without an event loop

    coroutine = work()
    coroutine.send(None)  # runs into the span, up to the sleep
    coroutine.close()
    assert_cancelled(only_span(exporter))


def test_the_span_stays_current_across_awaits_and_apart_from_concurrent_calls(
    exporter: InMemorySpanExporter,
) -> None:
    seen: dict[str, trace.SpanContext] = {}

    async def work(call_id: str) -> None:
        with tool_span("text.echo", call_id):
            await asyncio.sleep(0.01)
            seen[call_id] = trace.get_current_span().get_span_context()

    async def main() -> None:
        await asyncio.gather(work("call-1"), work("call-2"))

    asyncio.run(main())
    spans = {span.attributes["gen_ai.tool.call.id"]: span for span in exporter.get_finished_spans() if span.attributes}
    assert set(spans) == {"call-1", "call-2"}
    for call_id, span in spans.items():
        assert seen[call_id] == span.context
        assert span.parent is None


# -- through the runtime --------------------------------------------------------------------


def echo_tool(handler: Callable[[Any], Any] | None = None, **overrides: Any) -> Tool:
    fields: dict[str, Any] = {
        "name": "text.echo",
        "description": "Echo a text.",
        "version": "1.0.0",
        "input": s.object({"text": s.string()}),
        "output": s.object({"text": s.string()}),
        "handler": handler or (lambda args: {"text": args["text"]}),
    }
    fields.update(overrides)
    return define_tool(**fields)


def call(runtime: Runtime, mode: str, name: str, value: Any) -> Any:
    """Call through call_sync, or through an awaited call in a new event loop."""
    if mode == "sync":
        return runtime.call_sync(name, value)
    return asyncio.run(runtime.call(name, value))


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


def call_id_of(span: ReadableSpan) -> str:
    assert span.attributes is not None
    call_id = span.attributes["gen_ai.tool.call.id"]
    assert isinstance(call_id, str)
    assert call_id
    return call_id


@MODES
def test_a_successful_call_is_one_span_with_a_fresh_call_id(
    exporter: InMemorySpanExporter, provider: TracerProvider, mode: str
) -> None:
    def echo(args: dict[str, Any]) -> dict[str, Any]:
        with provider.get_tracer("a handler").start_as_current_span("handler work"):
            return {"text": args["text"]}

    runtime = Runtime([echo_tool(echo)])
    assert call(runtime, mode, "text.echo", {"text": "hi"}) == {"text": "hi"}
    child, span = exporter.get_finished_spans()
    assert span.name == "execute_tool text.echo"
    assert span.kind is SpanKind.INTERNAL
    assert span.attributes == base_attributes("text.echo", call_id_of(span))
    assert span.status.status_code is StatusCode.UNSET
    assert child.parent is not None
    assert child.parent.span_id == span.context.span_id

    exporter.clear()
    call(runtime, mode, "text.echo", {"text": "again"})
    _, again = exporter.get_finished_spans()
    assert call_id_of(again) != call_id_of(span)


@MODES
def test_invalid_input_is_an_input_invalid_span(exporter: InMemorySpanExporter, mode: str) -> None:
    runtime = Runtime([echo_tool()])
    with pytest.raises(InputInvalidError):
        call(runtime, mode, "text.echo", {"text": 1})
    span = only_span(exporter)
    assert span.name == "execute_tool text.echo"
    assert_failed(span, "INPUT_INVALID")
    assert span.attributes is not None
    assert span.attributes["hermesos.retryable"] is True


@MODES
def test_a_missing_permission_is_a_permission_denied_span(exporter: InMemorySpanExporter, mode: str) -> None:
    runtime = Runtime([echo_tool(permissions=["fs:write"])])
    with pytest.raises(PermissionDeniedError):
        call(runtime, mode, "text.echo", {"text": "hi"})
    span = only_span(exporter)
    assert span.name == "execute_tool text.echo"
    assert_failed(span, "PERMISSION_DENIED")
    assert span.attributes is not None
    assert span.attributes["hermesos.retryable"] is False


@MODES
def test_a_call_to_a_missing_tool_gets_a_span_named_as_asked(exporter: InMemorySpanExporter, mode: str) -> None:
    runtime = Runtime([echo_tool()])
    with pytest.raises(ToolNotFoundError):
        call(runtime, mode, "text.ecko", {"text": "hi"})
    span = only_span(exporter)
    assert span.name == "execute_tool text.ecko"
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.name"] == "text.ecko"
    assert_failed(span, "TOOL_NOT_FOUND")


@MODES
def test_a_name_that_is_not_a_string_is_shown_as_its_repr(exporter: InMemorySpanExporter, mode: str) -> None:
    runtime = Runtime([echo_tool()])
    with pytest.raises(ToolNotFoundError):
        call(runtime, mode, 42, {"text": "hi"})
    span = only_span(exporter)
    assert span.name == "execute_tool 42"
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.name"] == "42"
    assert_failed(span, "TOOL_NOT_FOUND")


@MODES
def test_output_the_schema_rejects_is_an_output_invalid_span(exporter: InMemorySpanExporter, mode: str) -> None:
    runtime = Runtime([echo_tool(lambda args: {"text": 1})])
    with pytest.raises(OutputInvalidError):
        call(runtime, mode, "text.echo", {"text": "hi"})
    assert_failed(only_span(exporter), "OUTPUT_INVALID")


@MODES
def test_a_failing_handler_is_a_tool_failed_span_sharing_its_call_id_with_the_error_and_the_log(
    exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    from hermes_core._base._errors import ToolFailedError

    def broken(args: dict[str, Any]) -> dict[str, Any]:
        raise ValueError(f"cannot open /home/alice/{SECRET}")

    runtime = Runtime([echo_tool(broken)])
    with caplog.at_level(logging.ERROR, logger="hermes_core"), pytest.raises(ToolFailedError) as raised:
        call(runtime, mode, "text.echo", {"text": "hi"})
    span = only_span(exporter)
    assert_failed(span, "TOOL_FAILED")
    assert SECRET not in span.to_json()
    call_id = call_id_of(span)
    assert call_id in raised.value.to_dict().values()
    logged = [record for record in caplog.records if record.name.startswith("hermes_core")]
    assert any(
        record.levelno == logging.ERROR
        and record.exc_info is not None
        and (call_id in record.getMessage() or call_id in vars(record).values())
        for record in logged
    ), "the handler's failure is logged at ERROR, with its traceback and the call id"


@MODES
def test_a_timeout_is_an_error_with_the_code_raised(exporter: InMemorySpanExporter, mode: str) -> None:
    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(1)
        return {"text": args["text"]}

    runtime = Runtime([echo_tool(slow)], timeout=0.05)
    with pytest.raises(ToolError) as raised:
        call(runtime, mode, "text.echo", {"text": "hi"})
    span = only_span(exporter)
    assert_failed(span, raised.value.code.value)
    assert "hermesos.cancelled" not in (span.attributes or {}), "a timeout is the call failing, not a cancellation"
    assert span.end_time is not None
    assert span.start_time is not None
    assert span.end_time - span.start_time < 0.9e9, "the span ends when the call times out"


def test_a_cancelled_call_is_a_span_marked_cancelled(exporter: InMemorySpanExporter) -> None:
    started = asyncio.Event()

    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(10)
        return {"text": args["text"]}

    runtime = Runtime([echo_tool(slow)])

    async def main() -> None:
        task = asyncio.create_task(runtime.call("text.echo", {"text": "hi"}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    span = only_span(exporter)
    assert span.name == "execute_tool text.echo"
    assert_cancelled(span)


@MODES
def test_enabling_and_disabling_takes_effect_for_an_existing_runtime(
    exporter: InMemorySpanExporter, provider: TracerProvider, mode: str
) -> None:
    disable_tracing()
    runtime = Runtime([echo_tool()])
    call(runtime, mode, "text.echo", {"text": "off"})
    assert exporter.get_finished_spans() == ()
    enable_tracing(provider)
    call(runtime, mode, "text.echo", {"text": "on"})
    assert only_span(exporter).name == "execute_tool text.echo"
    disable_tracing()
    call(runtime, mode, "text.echo", {"text": "off again"})
    assert len(exporter.get_finished_spans()) == 1
