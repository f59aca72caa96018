"""Optional OpenTelemetry tracing: one span per tool call, after the GenAI conventions for tool execution.

Off by default, and free while off: :data:`TRACER` is None, the runtime tests
that one attribute per call and does nothing else. OpenTelemetry is imported
only by :func:`enable_tracing`, never when this module is imported, so
importing ``hermes_core`` does not pay for it (install it with the ``otel``
extra: ``pip install "hermesos-core[otel]"``).

A span carries the tool's name, the call's id and, when the call fails, the
error's stable code; never the input, the output or an error's message, which
may hold what a caller or a tool wants kept out of telemetry. What each span
carries, and why, is documented in ``docs/observability.md``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from hermes_core._base._errors import (  # one rule names an exception's type: TOOL_FAILED's
    ToolError,
    exception_type_name,
)
from hermes_core._base._version import __version__

__all__ = ["TRACER", "disable_tracing", "enable_tracing", "event", "tool_span", "tracing_enabled"]

#: The tracer every runtime's calls are traced with; None while tracing is off.
#: The runtime reads it once per call, so turning tracing on or off takes
#: effect for every existing runtime at its next call.
TRACER: Any | None = None

# The opentelemetry.trace module, kept by enable_tracing so that a call does not import it.
_trace: Any = None

_OPERATION = "execute_tool"
# Every tool a runtime calls is a function the application runs with arguments a model wrote.
_TOOL_TYPE = "function"


def enable_tracing(tracer_provider: Any | None = None) -> None:
    """Start tracing every tool call of every runtime; tracer_provider defaults to the global one.

    Each call gets one span, named ``execute_tool <tool name>``, from a tracer
    named ``hermes_core`` at this package's version. Calling it again replaces
    the tracer.

    Args:
        tracer_provider: an OpenTelemetry ``TracerProvider``; None (the
            default) uses the one ``opentelemetry.trace.get_tracer_provider()``
            returns, so spans follow whatever provider the application sets.

    Raises:
        RuntimeError: OpenTelemetry is not installed.
    """
    global TRACER, _trace  # noqa: PLW0603 - one switch for every runtime, read per call
    try:
        from opentelemetry import trace  # noqa: PLC0415 - see the module docstring
    except ImportError as error:
        raise RuntimeError(
            'tracing needs the OpenTelemetry API, which is not installed: pip install "hermesos-core[otel]"'
        ) from error
    provider = trace.get_tracer_provider() if tracer_provider is None else tracer_provider
    tracer = provider.get_tracer("hermes_core", __version__)
    _trace = trace
    TRACER = tracer


def disable_tracing() -> None:
    """Stop tracing tool calls: every runtime's next call starts no span."""
    global TRACER  # noqa: PLW0603 - see enable_tracing
    TRACER = None


def tracing_enabled() -> bool:
    """Whether tool calls are traced: True after :func:`enable_tracing`, until :func:`disable_tracing`."""
    return TRACER is not None


def event(name: str, attributes: dict[str, Any]) -> None:
    """Add the event *name* to the current span (the running call's, while tracing is on)."""
    if _trace is not None:
        _trace.get_current_span().add_event(name, attributes)


def _cancelled(error: BaseException) -> bool:
    """Whether *error* ends a call its caller gave up on: a cancelled task, or a coroutine closed unfinished."""
    if isinstance(error, GeneratorExit):
        return True
    # A CancelledError exists only once asyncio is imported; this module does not import it.
    asyncio = sys.modules.get("asyncio")
    return asyncio is not None and isinstance(error, asyncio.CancelledError)


def _fail(span: Any, error_type: str) -> None:
    """Mark *span* failed with *error_type*: the attribute and the status say the same thing."""
    span.set_attribute("error.type", error_type)
    span.set_status(_trace.Status(_trace.StatusCode.ERROR, error_type))


@contextlib.contextmanager
def tool_span(tool: str, call_id: str) -> Iterator[None]:
    """One span around one call: the runtime enters it only when TRACER is not None.

    The span is the current span while the body runs, so spans a handler
    starts are its children. It works around plain and ``async`` code alike
    (OpenTelemetry keeps the current span in a context variable). What
    escapes the body is re-raised unchanged, after the span records it:

    * a :class:`~hermes_core.ToolError`: ``error.type`` is its code,
      ``hermesos.retryable`` its ``retryable``, the status ERROR;
    * a cancellation (``asyncio.CancelledError``, or the coroutine closed
      unfinished): ``hermesos.cancelled`` is true, the status stays unset;
    * anything else (``KeyboardInterrupt``...): ``error.type`` is the
      exception's type, named as ``TOOL_FAILED`` names one (qualified by its
      module unless built in), the status ERROR.

    No message, traceback or exception event is recorded.

    Args:
        tool: the tool's name, as the caller asked for it.
        call_id: the runtime's id for this call.
    """
    tracer = TRACER
    if tracer is None:  # turned off since the runtime looked
        yield
        return
    with tracer.start_as_current_span(
        f"{_OPERATION} {tool}",
        kind=_trace.SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": _OPERATION,
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": _TOOL_TYPE,
        },
        # Both would write the exception's message into the span; see the module docstring.
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield
        except ToolError as error:
            span.set_attribute("hermesos.retryable", bool(error.retryable))
            _fail(span, str(error.code))
            raise
        except BaseException as error:
            if _cancelled(error):
                span.set_attribute("hermesos.cancelled", True)
            else:
                _fail(span, exception_type_name(error))
            raise
