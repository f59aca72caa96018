"""The pieces a call is made of: a tool's entry, resolved once, the checks, and what a call raises when a step fails.

:class:`Entry` holds everything a call of one tool needs, resolved when the
runtime is built (compiled validators, the permission gate, the time limit,
whether the call can take the straight path). The rest are the steps' own
pieces, which :mod:`hermes_core._runtime._calls` puts in order: :func:`check` (a
validator run, raising the step's error), :func:`run_gate` (the permission
gate's run), :func:`time_left` (what is left of a call's limit once a step is
done), and what a call raises when its handler, a permission provider or the
approver fails (:func:`fail`, :func:`provider_failure`, :func:`approver_failed`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from time import monotonic
from typing import Any, Final, Literal, NoReturn, final

from hermes_core._base._aio import Expired, Stranded
from hermes_core._base._errors import (
    InputInvalidError,
    InputRejected,
    OutputInvalidError,
    ToolError,
    ToolFailedError,
    exception_type_name,
    seconds_text,
)
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import Issue, TooManyIssues
from hermes_core._runtime._permissions import Asked, Gate, Permissions
from hermes_core._tool._approval import audit_enabled, audit_logger
from hermes_core._tool._definition import Tool
from hermes_core._tool._resources import logger
from hermes_core.schema import Schema
from hermes_core.schema._validators import Validator, raised_issue

__all__ = [
    "PLAIN",
    "UNSET",
    "Check",
    "Entry",
    "approver_failed",
    "check",
    "fail",
    "gave_up",
    "new_call_id",
    "provider_failure",
    "run_gate",
    "time_left",
]


class _Unset:
    """The marker for "no timeout given for this call": the tool's, then the runtime's, apply."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<the tool's or the runtime's>"


UNSET: Final[Any] = _Unset()

#: Results of these types are never awaitable; skipping the check saves a costly call per await.
PLAIN: Final = frozenset({dict, list, str, int, float, bool, type(None)})

#: A compiled check: the value, its path, the list its issues go to; returns the parsed value.
Check = Callable[[Any, tuple[str | int, ...], list[Issue]], Any]


@final
@frozen
class Entry:
    """Everything a call of one tool needs, resolved when the runtime is built."""

    tool: Tool
    name: str
    handler: Callable[[Any], Any]
    is_async: bool
    input: Check
    output: Check
    validator: Validator  # the input's, whole: lenient mode repairs with it
    gate: Gate | None  # None when the tool declares no permission
    timeout: float | None  # the tool's, else the runtime's
    inline: bool  # a plain handler that runs on the event loop's thread under await call()
    settled: bool  # the grants settle every permission: the gate only writes audit records
    audit: Any  # the audit logger, for a tool with permissions: its own level 0 (unset) means no records
    contextual: bool  # the handler uses its call's context: the call sets it (see hermes_core._tool._call_context)
    # A call with no option takes the straight path when nothing is left to decide at call time: no time
    # limit, no context to set, no permission to ask (none declared, or granted when the runtime was built),
    # no input to repair (the runtime's lenient mode does not repair the tool, nor the caller's).
    straight_sync: bool  # ... and a plain handler: call_sync runs it inline
    straight: bool  # ... and an async handler or an inline one: await call() runs it on the loop's thread

    @classmethod
    def make(
        cls,
        tool: Tool,
        schemas: Mapping[str, Schema],
        permissions: Permissions,
        timeout: float | None,
        *,
        repaired: bool,
        contextual: bool,
    ) -> Entry:
        """The entry of *tool*, its validators compiled against *schemas* where it names them.

        *repaired*: the runtime's lenient mode repairs the tool's calls.
        *contextual*: its calls set their context (the tool uses it).
        """
        check_input, check_output = tool.validators(schemas)
        gate, settled = permissions.gate(tool), permissions.settles(tool)
        limit = tool.timeout if tool.timeout is not None else timeout
        straight = not contextual and limit is None and (gate is None or settled) and not repaired
        return cls(
            tool,
            tool.name,
            tool.handler,
            tool.is_async,
            check_input.entry,
            check_output.entry,
            check_input,
            gate,
            limit,
            tool.inline,
            settled,
            audit_logger() if tool.permissions else None,
            contextual,
            straight and not tool.is_async,
            straight and (tool.is_async or tool.inline),
        )


def check(validate: Check, value: Any, error: type[InputInvalidError | OutputInvalidError], tool: str) -> Any:
    """Validator.check, inlined, raising *error* for the tool: it runs twice on every call."""
    issues: list[Issue] = []
    try:
        result = validate(value, (), issues)
    except TooManyIssues as exc:  # checking stopped (see ISSUES_MAX); the error keeps the first ones
        issues = exc.issues
    except Exception as exc:  # only the value's own code can raise here
        issues = [raised_issue(exc)]
    if issues:
        raise error(tool, issues)
    return result


def new_call_id() -> str:
    """A new call's id: 16 hex digits, for matching a span, a log record and an error."""
    return os.urandom(8).hex()


def run_gate(entry: Entry, call_id: str | None) -> tuple[Asked | None, str | None]:
    """Run *entry*'s permission gate: what asked for approval, and the call's id (made here for the audit log).

    PermissionDeniedError passes as it is, a provider's own failure becomes TOOL_FAILED.
    """
    assert entry.gate is not None
    if audit_enabled():
        call_id = call_id or new_call_id()
        audited: str | None = call_id
    else:
        audited = None
    try:
        return entry.gate(audited), call_id
    except ToolError:
        raise
    except Exception as error:  # a permission provider's own failure: the call is not made
        raise provider_failure(entry, error, "a permission provider", call_id) from error


def gave_up(error: BaseException) -> bool:
    """Whether a call ended by *error* was given up on while its handler may run on: a timeout or a cancellation."""
    if isinstance(error, ToolFailedError):
        return error.reason == "timeout"
    return not isinstance(error, Exception)  # CancelledError, KeyboardInterrupt...


def approver_failed(entry: Entry, error: Exception, seconds: float | None, call_id: str) -> NoReturn:
    """Raise what a call raises when its approver raised *error* or ran out of the call's time."""
    if isinstance(error, Expired | Stranded | ToolError):
        fail(entry, error, seconds, call_id)
    raise provider_failure(entry, error, "the approver", call_id) from error


def provider_failure(entry: Entry, error: Exception, who: str, call_id: str | None) -> ToolFailedError:
    """TOOL_FAILED for a permission provider or an approver (*who*) that raised or answered nonsense, logged."""
    call_id = call_id or new_call_id()
    logger().error("%s (call %s): %s raised %s", entry.name, call_id, who, type(error).__name__, exc_info=error)
    detail = f"{who} raised {exception_type_name(error)}, so the call was not made"
    return ToolFailedError(detail, tool=entry.name, reason="reported", call_id=call_id)


def fail(entry: Entry, error: Exception, seconds: float | None, call_id: str | None) -> NoReturn:
    """Raise what a call raises for *error*, raised by or around *entry*'s handler, with *error* as its cause."""
    failure = _failure(entry, error, seconds, call_id)
    if failure is error:
        raise error
    if isinstance(error, Expired | Stranded):
        raise failure from None  # the runtime's own signal: nothing of the tool's to show
    raise failure from error


def _failure(entry: Entry, error: Exception, seconds: float | None, call_id: str | None) -> Exception:
    """What a call raises for *error* (*error* itself, to re-raise it as it is)."""
    if isinstance(error, InputRejected):
        return InputInvalidError(entry.name, error.issues)
    if isinstance(error, ToolFailedError):
        return error.with_context(entry.name, call_id or new_call_id()) if not error.tool else error
    if isinstance(error, ToolError):
        return error  # a tool error of its own (one of another runtime's calls, say) passes as it is
    log = logger()
    call_id = call_id or new_call_id()
    if isinstance(error, Stranded):
        log.warning("%s (call %s) was refused: %s", entry.name, call_id, error.detail)
        return ToolFailedError(error.detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
    if isinstance(error, Expired) and seconds is not None:
        log.warning("%s (call %s) did not finish within %g seconds", entry.name, call_id, seconds)
        return ToolFailedError.timed_out(entry.name, seconds, call_id=call_id)
    log.error("%s (call %s) failed: its handler raised %s", entry.name, call_id, type(error).__name__, exc_info=error)
    return ToolFailedError.from_exception(entry.name, error, call_id=call_id)


def time_left(
    entry: Entry, deadline: float, seconds: float, step: Literal["input", "output"], call_id: str | None
) -> float:
    """The seconds left of a call's limit once its *step* is checked; raise if none are.

    A check that holds the interpreter (a regular expression, say) cannot be
    stopped at the deadline: it is charged to the call when it ends, and a
    check that ended past the deadline ends the call as a timeout. A check
    that rejected the value has raised before this: its verdict stands.

    Raises:
        ToolFailedError: ``reason="timeout"``, retryable, naming the check that took the time.
    """
    now = monotonic()
    left = deadline - now
    if left > 0:
        return left
    call_id = call_id or new_call_id()
    limit, spent = seconds_text(seconds), seconds_text(seconds - left)
    if step == "input":
        detail = f"did not finish within {limit}: checking its permissions and input took {spent}"
        detail += ", so its handler was not run"
    else:
        detail = f"did not finish within {limit}: with the check of its output it took {spent}"
        detail += ", so its result was dropped"
    logger().warning("%s (call %s) %s", entry.name, call_id, detail)
    raise ToolFailedError(detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
