"""The steps of a call, shared by the runtime's paths: a tool's resolved entry, the checks, the failures.

What :mod:`hermes_core._runtime` and its admission (:mod:`hermes_core._admission`)
both need: :class:`_Entry` (everything a call of one tool needs, resolved
when the runtime is built), :func:`_checked` (a validator run, raising the
step's error), the permission gate's run, the time left of a call's limit,
and what a call raises when a handler, a provider or an approver fails.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from time import monotonic
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, final

from hermes_core import _tracing as tracing
from hermes_core._aio import (
    Expired,
    Stranded,
    require_no_loop,
    run_coroutine,
)
from hermes_core._approval import audit_enabled, audit_logger
from hermes_core._errors import (
    InputInvalidError,
    InputRejected,
    OutputInvalidError,
    ToolError,
    ToolFailedError,
    _seconds,
    exception_type_name,
)
from hermes_core._frozen import frozen
from hermes_core._issues import Issue, TooManyIssues, format_path
from hermes_core._permissions import Asked, Gate, Permissions
from hermes_core._resources import logger as _logger
from hermes_core._tools import Tool
from hermes_core.schema import Schema
from hermes_core.schema._validators import Validator, raised_issue

if TYPE_CHECKING:
    from hermes_core.schema._repair import Repair

__all__ = ["NO_REPAIR", "UNSET", "RepairedOutput", "Repairing"]


class _Unset:
    """The marker for "no timeout given for this call": the tool's, then the runtime's, apply."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<the tool's or the runtime's>"


UNSET: Final[Any] = _Unset()

# Results of these types are never awaitable; skipping the check saves a costly call per await.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


_Check = Callable[[Any, tuple[str | int, ...], list[Issue]], Any]


@final
@frozen
class _Entry:
    """Everything a call of one tool needs, resolved at construction."""

    tool: Tool
    name: str
    handler: Callable[[Any], Any]
    is_async: bool
    input: _Check
    output: _Check
    validator: Validator  # the input's, whole: lenient mode repairs with it
    gate: Gate | None  # None when the tool declares no permission
    timeout: float | None  # the tool's, else the runtime's
    inline: bool  # a plain handler that runs on the event loop's thread under await call()
    settled: bool  # the grants settle every permission: the gate only writes audit records
    audit: Any  # the audit logger, for a tool with permissions: its own level 0 (unset) means no records
    contextual: bool  # the handler uses its call's context: the call sets it (see _context)
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
    ) -> _Entry:
        """The entry of *tool*, its validators compiled against *schemas* where it names them.

        *repaired*: the runtime's lenient mode repairs the tool's calls.
        """
        check_input, check_output = tool.validators(schemas)
        gate, settled = permissions.gate(tool), permissions.settles(tool)
        limit = tool.timeout if tool.timeout is not None else timeout
        straight = not tool.context and limit is None and (gate is None or settled) and not repaired
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
            tool.context,
            straight and not tool.is_async,
            straight and (tool.is_async or tool.inline),
        )


def _checked(
    validate: _Check,
    value: Any,
    error: type[InputInvalidError | OutputInvalidError],
    tool: str,
) -> Any:
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


# -- lenient mode ------------------------------------------------------------------------------------


def _repaired(tool: Tool, lenient: bool) -> bool:
    """Whether lenient mode repairs *tool*'s calls for a caller choosing *lenient*: the tool's own choice wins."""
    return lenient if tool.lenient is None else tool.lenient


@final
class Repairing:
    """One call's lenient mode: which tools it repairs, and where their repairs go.

    Given to a call by whoever chose lenient mode (the runtime, a door); a call
    without it repairs nothing and pays nothing. *repairs* None: the repairs
    are logged and traced only (``call()``), else collected for the caller,
    and the call returns a :class:`RepairedOutput` when there are any.
    """

    __slots__ = ("repairable", "repairs")

    def __init__(self, repairable: frozenset[str], repairs: list[Repair] | None) -> None:
        self.repairable = repairable
        self.repairs = repairs


@final
@frozen
class RepairedOutput:
    """What a call given a collecting :class:`Repairing` returns when it repaired its input.

    Attributes:
        output: the tool's result, as a call that needed no repair returns it.
        repairs: the repairs made to the input, at least one.
    """

    output: Any
    repairs: tuple[Repair, ...]

    def note(self) -> str:
        """The one short line appended to the result a model reads: what was assumed."""
        from hermes_core.schema._repair import repairs_note  # noqa: PLC0415 - only a repaired call needs it

        return repairs_note(self.repairs)


#: A call's lenient mode that repairs nothing: what a caller gives a call it does not want repaired, where the
#: runtime would (a door whose lenient=False wins over a lenient runtime's).
NO_REPAIR: Final = Repairing(frozenset(), None)


def _repaired_input(entry: _Entry, value: Any, refused: InputInvalidError, repairing: Repairing) -> Any:
    """The parsed input of *value*, which the schema refused (*refused*), repaired; else raise *refused*.

    Called where a call's input check raised, for a call given *repairing*:
    the input is repaired by lenient mode's rules and checked again with the
    same validator (:func:`hermes_core.schema._repair.repair_input`). Each
    repair is logged on the ``hermes_core`` logger, an event of the call's
    span, and collected for the caller when it asked.
    """
    if entry.name not in repairing.repairable:
        raise refused
    from hermes_core.schema._repair import repair_input  # noqa: PLC0415 - only a refused input needs it

    fixed = repair_input(entry.validator, value)
    if fixed is None:
        raise refused
    _logger().info("%s: input repaired: %s", entry.name, "; ".join(str(repair) for repair in fixed.repairs))
    if tracing.TRACER is not None:
        _trace_repairs(fixed.repairs)
    if repairing.repairs is not None:
        repairing.repairs.extend(fixed.repairs)
    return fixed.parsed


def _with_repairs(result: Any, repairing: Repairing) -> Any:
    """*result*, as a :class:`RepairedOutput` when *repairing* collected repairs."""
    repairs = repairing.repairs
    return RepairedOutput(result, tuple(repairs)) if repairs else result


def _observed(result: Any) -> dict[str, Any]:
    """What :meth:`Runtime.observe` returns for a call that succeeded (a repaired one: with its ``repairs``)."""
    if type(result) is not RepairedOutput:
        return {"ok": True, "output": result}
    return {"ok": True, "output": result.output, "repairs": [repair.to_dict() for repair in result.repairs]}


def _trace_repairs(repairs: tuple[Repair, ...]) -> None:
    """Each of *repairs* an event of the current span (the repaired call's)."""
    for repair in repairs:
        tracing.event(
            "hermesos.repair",
            {
                "hermesos.repair.path": format_path(repair.path),
                "hermesos.repair.rule": repair.rule,
                "hermesos.repair.message": str(repair),
            },
        )


def _call_id() -> str:
    """A new call's id: 16 hex digits, for matching a span, a log record and an error."""
    return os.urandom(8).hex()


def _gate(entry: _Entry, call_id: str | None) -> tuple[Asked | None, str | None]:
    """Run *entry*'s permission gate: what asked for approval, and the call's id (made here for the audit log).

    PermissionDeniedError passes as it is, a provider's own failure becomes TOOL_FAILED.
    """
    assert entry.gate is not None
    if audit_enabled():
        call_id = call_id or _call_id()
        audited: str | None = call_id
    else:
        audited = None
    try:
        return entry.gate(audited), call_id
    except ToolError:
        raise
    except Exception as error:  # a permission provider's own failure: the call is not made
        raise _provider_failure(entry, error, "a permission provider", call_id) from error


def _gave_up(error: BaseException) -> bool:
    """Whether a call ended by *error* was given up on while its handler may run on: a timeout or a cancellation."""
    if isinstance(error, ToolFailedError):
        return error.reason == "timeout"
    return not isinstance(error, Exception)  # CancelledError, KeyboardInterrupt...


def _approver_failed(entry: _Entry, error: Exception, seconds: float | None, call_id: str) -> NoReturn:
    """Raise what a call raises when its approver raised *error* or ran out of the call's time."""
    if isinstance(error, Expired | Stranded | ToolError):
        _fail(entry, error, seconds, call_id)
    raise _provider_failure(entry, error, "the approver", call_id) from error


def _run_returned(entry: _Entry, coroutine: Any, seconds: float | None, call_id: str | None) -> Any:
    """Run the coroutine a plain handler returned, as an async handler's, for at most *seconds*."""
    require_no_loop(entry.name, coroutine)
    try:
        return run_coroutine(coroutine, seconds)
    except Exception as error:
        _fail(entry, error, seconds, call_id)


def _provider_failure(entry: _Entry, error: Exception, who: str, call_id: str | None) -> ToolFailedError:
    """TOOL_FAILED for a permission provider or an approver (*who*) that raised or answered nonsense, logged."""
    call_id = call_id or _call_id()
    _logger().error("%s (call %s): %s raised %s", entry.name, call_id, who, type(error).__name__, exc_info=error)
    detail = f"{who} raised {exception_type_name(error)}, so the call was not made"
    return ToolFailedError(detail, tool=entry.name, reason="reported", call_id=call_id)


def _fail(entry: _Entry, error: Exception, seconds: float | None, call_id: str | None) -> NoReturn:
    """Raise what a call raises for *error*, raised by or around *entry*'s handler, with *error* as its cause."""
    failure = _failure(entry, error, seconds, call_id)
    if failure is error:
        raise error
    if isinstance(error, Expired | Stranded):
        raise failure from None  # the runtime's own signal: nothing of the tool's to show
    raise failure from error


def _failure(entry: _Entry, error: Exception, seconds: float | None, call_id: str | None) -> Exception:
    """What a call raises for *error* (*error* itself, to re-raise it as it is)."""
    if isinstance(error, InputRejected):
        return InputInvalidError(entry.name, error.issues)
    if isinstance(error, ToolFailedError):
        return error.with_context(entry.name, call_id or _call_id()) if not error.tool else error
    if isinstance(error, ToolError):
        return error  # a tool error of its own (one of another runtime's calls, say) passes as it is
    logger = _logger()
    call_id = call_id or _call_id()
    if isinstance(error, Stranded):
        logger.warning("%s (call %s) was refused: %s", entry.name, call_id, error.detail)
        return ToolFailedError(error.detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
    if isinstance(error, Expired) and seconds is not None:
        logger.warning("%s (call %s) did not finish within %g seconds", entry.name, call_id, seconds)
        return ToolFailedError.timed_out(entry.name, seconds, call_id=call_id)
    logger.error(
        "%s (call %s) failed: its handler raised %s", entry.name, call_id, type(error).__name__, exc_info=error
    )
    return ToolFailedError.from_exception(entry.name, error, call_id=call_id)


def _left(
    entry: _Entry, deadline: float, seconds: float, step: Literal["input", "output"], call_id: str | None
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
    call_id = call_id or _call_id()
    limit, spent = _seconds(seconds), _seconds(seconds - left)
    if step == "input":
        detail = f"did not finish within {limit}: checking its permissions and input took {spent}"
        detail += ", so its handler was not run"
    else:
        detail = f"did not finish within {limit}: with the check of its output it took {spent}"
        detail += ", so its result was dropped"
    _logger().warning("%s (call %s) %s", entry.name, call_id, detail)
    raise ToolFailedError(detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
