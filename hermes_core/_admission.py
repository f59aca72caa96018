"""Admission: the permission gate, the input check and the approver, for a tool that declares permissions.

The runtime's call paths admit a call here when its tool's permissions are
not all settled by the grants: the gate (providers, each possibly answering
ask), then the input, then, if anything asked, the approver, within the
call's time limit. :class:`Admission` is a base of
:class:`~hermes_core.Runtime`, holding these methods apart from the call
pipeline; it reads the runtime's approver and what was approved for good.
"""

from __future__ import annotations

import inspect
from time import monotonic
from types import CoroutineType
from typing import TYPE_CHECKING, Any

from hermes_core._aio import (
    await_within,
    require_no_loop,
    run_coroutine,
    run_in_thread,
    to_thread,
)
from hermes_core._approval import APPROVER, Approval, ApprovalRequest, Approved, Approver, audit, audit_enabled
from hermes_core._errors import (
    InputInvalidError,
    PermissionDeniedError,
)
from hermes_core._permissions import Asked

if TYPE_CHECKING:
    pass
from hermes_core._steps import (
    Repairing,
    _approver_failed,
    _call_id,
    _checked,
    _Entry,
    _gate,
    _left,
    _provider_failure,
    _repaired_input,
)

__all__ = ["Admission"]


class Admission:
    """The admission of a call: permissions, input and approval (a base of the runtime, with no state of its own)."""

    __slots__ = ()

    _approver: Approver | None
    _approved: Approved

    # -- permissions and approval, for a tool that declares permissions -------------------

    def _request(self, entry: _Entry, asked: Asked | None, call_id: str | None, parsed: Any) -> ApprovalRequest | None:
        """The approver's request for a call whose providers *asked*, or None when nothing needs approving.

        Raises:
            PermissionDeniedError: something asked and this runtime has no approver (``reason="no_approver"``).
        """
        if asked is None:
            return None
        permissions, reasons = asked
        call_id = call_id or _call_id()
        if (entry.name, permissions) in self._approved:
            if audit_enabled():
                for permission in permissions:
                    audit(call_id, entry.name, permission, "approved", f"{APPROVER} (always)")
            return None
        if self._approver is None:
            if audit_enabled():
                for permission in permissions:
                    audit(call_id, entry.name, permission, "denied", "no approver")
            said = [f'"{p}": {r}' for p, r in zip(permissions, reasons, strict=True) if r]
            others = [f'"{p}"' for p in permissions[1:]]
            detail = "; ".join([*said, *(["also " + ", ".join(others)] if others else [])]) or None
            raise PermissionDeniedError(entry.name, permissions[0], reason="no_approver", detail=detail)
        return ApprovalRequest(entry.tool, permissions, reasons, call_id, parsed)

    def _settle(self, entry: _Entry, request: ApprovalRequest, answer: Any) -> None:
        """Act on the approver's *answer*: remember an "always", raise for a decline, audit either way."""
        if type(answer) is not Approval:
            error = TypeError(f"the approver returned {type(answer).__name__}; it must return an Approval")
            raise _provider_failure(entry, error, "the approver", request.call_id) from None
        declined = answer.decision == "decline"
        if audit_enabled():
            for permission in request.permissions:
                audit(request.call_id, entry.name, permission, "declined" if declined else "approved", APPROVER)
        if declined:
            raise PermissionDeniedError(entry.name, request.permissions[0], reason="declined", detail=answer.message)
        if answer.decision == "always":
            self._approved.add((entry.name, request.permissions))

    def _asked(  # noqa: PLR0917 - as _admit_sync's
        self,
        entry: _Entry,
        value: Any,
        shown: str | None,
        call_id: str | None,
        deadline: float,
        seconds: float | None,
        repairing: Repairing | None,
    ) -> tuple[Any, str | None, ApprovalRequest | None, float | None]:
        """What both admissions do first: the gate, the input, and what the approver is to be asked.

        Returns the parsed input, the call's id, the approver's request (None:
        nothing to approve) and the seconds left for the approver (None: no limit).
        """
        asked, call_id = _gate(entry, call_id)
        parsed = _input(entry, value, shown, repairing)
        request = self._request(entry, asked, call_id, parsed)
        if request is None:
            return parsed, call_id, None, None
        left = None if seconds is None else _left(entry, deadline, seconds, "input", request.call_id)
        return parsed, call_id, request, left

    def _admit_sync(  # noqa: PLR0917 - on the call path of every tool with permissions: positional is cheaper
        self,
        entry: _Entry,
        value: Any,
        shown: str | None,
        call_id: str | None,
        deadline: float,
        seconds: float | None,
        repairing: Repairing | None,
    ) -> tuple[Any, str | None]:
        """Permissions, input and approval of one call_sync: the parsed input, and the call's id if one was made."""
        if entry.settled:  # granted when the runtime was built: one logging check, and the records if it listens
            if audit_enabled():
                call_id = call_id or _call_id()
                entry.gate(call_id)  # type: ignore[misc]  # a gated entry's
            return _input(entry, value, shown, repairing), call_id
        parsed, call_id, request, left = self._asked(entry, value, shown, call_id, deadline, seconds, repairing)
        if request is None:
            return parsed, call_id
        approver = self._approver
        assert approver is not None  # _request raised otherwise
        try:
            if inspect.iscoroutinefunction(approver):
                require_no_loop(entry.name)
                answer = run_coroutine(approver(request), left)
            elif left is None:
                answer = approver(request)
            else:
                answer = run_in_thread(approver, request, left, entry, entry.name)
            if type(answer) is CoroutineType:  # a plain callable that returned one: run it as an async approver's
                require_no_loop(entry.name, answer)
                answer = run_coroutine(answer, None if left is None else deadline - monotonic())
        except Exception as error:
            _approver_failed(entry, error, seconds, request.call_id)
        self._settle(entry, request, answer)
        return parsed, request.call_id

    async def _admit(  # noqa: PLR0917 - on the call path of every tool with permissions
        self,
        entry: _Entry,
        value: Any,
        shown: str | None,
        call_id: str | None,
        deadline: float,
        seconds: float | None,
        repairing: Repairing | None,
    ) -> tuple[Any, str | None]:
        """:meth:`_admit_sync` for :meth:`call`: an async approver awaited, a plain one run on a worker thread."""
        parsed, call_id, request, left = self._asked(entry, value, shown, call_id, deadline, seconds, repairing)
        if request is None:
            return parsed, call_id
        approver = self._approver
        assert approver is not None  # _request raised otherwise
        try:
            if inspect.iscoroutinefunction(approver):
                answer = await await_within(approver(request), left)
            else:  # it may block, waiting for a person: never on the event loop's thread
                answer = await to_thread(approver, request, left, entry, entry.name)
            if inspect.isawaitable(answer):
                answer = await await_within(answer, None if left is None else deadline - monotonic())
        except Exception as error:
            _approver_failed(entry, error, seconds, request.call_id)
        self._settle(entry, request, answer)
        return parsed, request.call_id


def _input(entry: _Entry, value: Any, shown: str | None, repairing: Repairing | None) -> Any:
    """The checked input of a call of *entry* (repaired, when lenient mode applies and it was refused)."""
    try:
        return _checked(entry.input, value, InputInvalidError, shown or entry.name)
    except () if repairing is None else InputInvalidError as refused:  # noqa: B030 - () catches nothing: no cost
        return _repaired_input(entry, value, refused, repairing)  # type: ignore[arg-type]
