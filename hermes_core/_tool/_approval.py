"""Approval: a permission provider's third answer, the approver's request and answer, and the audit records.

A provider may answer :class:`Ask` for a permission: the call then waits for
the runtime's approver (``Runtime(approver=...)``), which is given an
:class:`ApprovalRequest` once the input is validated and answers an
:class:`Approval`. Every permission decision is one record on the
``hermes_core.audit`` logger (see :func:`audit`), written only when that logger
has its own level set to ``INFO`` or lower: records are opt-in, and a root
logger at ``INFO`` (which ``logging.basicConfig`` and the MCP SDK's server
set) does not ask for a record of every call.
"""

from __future__ import annotations

import _thread
from collections.abc import Awaitable, Callable
from dataclasses import field
from time import time
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final

from hermes_core._base import _tracing as tracing
from hermes_core._base._errors import (
    InputInvalidError,
    InputRejected,
    PermissionDeniedError,
    ToolFailedError,
    exception_type_name,
)
from hermes_core._base._frozen import derive, frozen

if TYPE_CHECKING:
    from hermes_core._tool._definition import Tool

__all__ = [
    "AUDIT_LOGGER",
    "Approval",
    "ApprovalRequest",
    "Approver",
    "Ask",
    "audit",
    "audit_enabled",
    "audit_logger",
    "no_approver",
]

#: The name of the logger every permission decision is recorded on, one record each.
AUDIT_LOGGER: Final = "hermes_core.audit"
_INFO: Final = 20  # logging.INFO, without importing logging (it costs every start-up)
_audit: Any = None  # the logger, got on first use


def audit_logger() -> Any:
    """The ``hermes_core.audit`` logger (``logging`` is imported on first use: it costs every start-up)."""
    return _audit or _audit_logger()


def _audit_logger() -> Any:
    global _audit  # noqa: PLW0603 - one logger for the process, got on first use
    if _audit is None:
        import logging  # noqa: PLC0415 - see _INFO

        _audit = logging.getLogger(AUDIT_LOGGER)
    return _audit


@final
@frozen
class Ask:
    """A permission provider's answer "ask a person": the call waits for the runtime's approver.

    A deny (``False``) from any provider wins over an ask; an ask wins over a grant.

    Attributes:
        reason: why approval is needed, shown to the approver (None: no reason given).

    """

    reason: str | None = None


@final
@frozen(eq=False)
class ApprovalRequest:
    """What the approver is asked: one call of one tool, its input already validated.

    Attributes:
        tool: the tool to be called.
        permissions: the permissions a provider answered :class:`Ask` for, in the tool's order.
        reasons: the reasons the providers gave, in the same order (None where a provider gave none).
        call_id: the call's id, the same as in its audit records, span and errors.
        input: the input the handler will get: parsed by the tool's schema, defaults filled in.
        message: the handler's own question, when the running call asks for a
            confirmation (:meth:`~hermes_core.CallContext.confirm`, with no
            *permissions*); None for a permission's approval.
        target: what the call acts on, as the tool names it from *input* (its
            ``target`` function: hermesos-fs's path, normalised), or None when
            the tool names none. Derived when the request is made; an approver
            shows it first and in full, since the input may be too long to show.

    Raises:
        InputInvalidError: the tool's ``target`` function refused the input
            (:func:`~hermes_core.reject`), as its handler would: nobody is asked.
        ToolFailedError: the ``target`` function raised anything else, or
            returned something other than a string: a fault in the tool.

    """

    tool: Tool
    permissions: tuple[str, ...]
    reasons: tuple[str | None, ...]
    call_id: str
    input: Any
    message: str | None = None
    target: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        name = self.tool.target
        if name is not None:
            derive(self, target=_target(self.tool.name, name, self.input, self.call_id))


def _target(tool: str, name: Callable[[Any], str], value: Any, call_id: str) -> str:
    """What the tool's *name* function says a call of *tool* with the input *value* acts on."""
    try:
        target = name(value)
    except InputRejected as error:  # the handler would refuse it too: INPUT_INVALID, as from the handler
        raise InputInvalidError(tool, error.issues) from error
    except Exception as error:
        detail = f"its target function raised {exception_type_name(error)}, so the call was not made"
        raise ToolFailedError(detail, tool=tool, reason="reported", call_id=call_id) from error
    if type(target) is not str:
        detail = f"its target function returned {type(target).__name__}, not a string, so the call was not made"
        raise ToolFailedError(detail, tool=tool, reason="reported", call_id=call_id)
    return target


_Decision: TypeAlias = Literal["once", "always", "decline"]


@final
@frozen
class Approval:
    """The approver's answer: make :meth:`once`, :meth:`always` or :meth:`decline` one.

    Attributes:
        decision: ``"once"`` (this call), ``"always"`` (every call of this tool
            asking for these permissions, for the rest of the runtime's life)
            or ``"decline"``.
        message: for a decline, what the person said, passed on to the model (None: nothing).

    """

    decision: _Decision
    message: str | None = None

    @classmethod
    def once(cls) -> Approval:
        """Approve this call only."""
        return cls("once")

    @classmethod
    def always(cls) -> Approval:
        """Approve this call, and every later call of the same tool asking for the same permissions."""
        return cls("always")

    @classmethod
    def decline(cls, message: str | None = None) -> Approval:
        """Decline this call; *message*, if given, is passed on to the model."""
        return cls("decline", message)


#: The runtime's approver: a plain or async callable answering one request.
Approver: TypeAlias = Callable[[ApprovalRequest], "Approval | Awaitable[Approval]"]


@final
class Approved:
    """What was approved "always" in one runtime, beside the frozen runtime in one slot.

    Each is a (tool, permissions) pair, or (tool, ("(confirm)", message)) for a handler's question.
    """

    __slots__ = ("_lock", "_pairs")

    def __init__(self) -> None:
        self._pairs: set[tuple[str, tuple[str, ...]]] = set()
        self._lock = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)

    def __contains__(self, pair: tuple[str, tuple[str, ...]]) -> bool:
        return pair in self._pairs

    def add(self, pair: tuple[str, tuple[str, ...]]) -> None:
        """Remember *pair* as approved for good."""
        with self._lock:
            self._pairs.add(pair)


def audit(call_id: str, tool: str, permission: str, decision: str, source: str) -> None:
    """Write one permission decision on the ``hermes_core.audit`` logger; callers check :func:`audit_enabled` first.

    The record's ``extra`` fields are ``call_id``, ``tool``, ``permission``,
    ``decision`` (``granted``, ``denied``, ``asked``, ``approved`` or
    ``declined``), ``source`` (what decided: ``grants``, a provider's type,
    ``approver``...) and ``time`` (seconds since the epoch). Never the input.
    With tracing on, the decision is also an event of the call's span,
    ``hermesos.permission``, with the permission, decision and source.
    """
    if tracing.TRACER is not None:
        tracing.event(
            "hermesos.permission",
            {"hermesos.permission": permission, "hermesos.decision": decision, "hermesos.source": source},
        )
    logger = _audit or _audit_logger()
    if not (logger.level and logger.isEnabledFor(_INFO)):
        return
    logger.info(
        "%s (call %s): %s %s by %s",
        tool,
        call_id,
        permission,
        decision,
        source,
        extra={
            "call_id": call_id,
            "tool": tool,
            "permission": permission,
            "decision": decision,
            "source": source,
            "time": time(),
        },
    )


def audit_enabled() -> bool:
    """Whether decisions are recorded: the ``hermes_core.audit`` logger's own level asks for ``INFO``, or tracing is on.

    Its own level, not the one it inherits: a process whose root logger is at
    ``INFO`` has not asked for a record of every call.
    """
    if tracing.TRACER is not None:
        return True
    logger = _audit or _audit_logger()
    return bool(logger.level) and bool(logger.isEnabledFor(_INFO))


#: What the approval's parts are called in an audit record.
APPROVER: Final = "approver"
NO_APPROVER: Final = "no approver"


def no_approver(
    tool: str, permissions: tuple[str, ...], reasons: tuple[str | None, ...], call_id: str
) -> PermissionDeniedError:
    """The refusal of a call of *tool* whose providers asked a person for *permissions*, and nobody could be asked.

    ``PERMISSION_DENIED`` with ``reason="no_approver"``, its detail what the
    providers gave as *reasons*; each permission is an audit record, denied by
    ``no approver``. What a runtime without an approver raises, and an approver
    that has nobody to ask (``hermesos call`` without a terminal) raises the same.
    """
    if audit_enabled():
        for permission in permissions:
            audit(call_id, tool, permission, "denied", NO_APPROVER)
    said = [f'"{p}": {r}' for p, r in zip(permissions, reasons, strict=True) if r]
    others = [f'"{p}"' for p in permissions[1:]]
    detail = "; ".join([*said, *(["also " + ", ".join(others)] if others else [])]) or None
    return PermissionDeniedError(tool, permissions[0], reason="no_approver", detail=detail)
