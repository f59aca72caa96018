"""What a server asks or says during a call, outside the call's own result: its questions and its log messages.

**Questions** (MCP elicitation) are put to the runtime's approver, through
the context of the local call that caused them (:class:`~hermes_mcp._caller.Caller`):
``await current_call().confirm(question)``. The approver answers yes or no,
so :func:`answer` puts only the questions a yes or a no can answer:

* a form that asks for no data (no fields): yes is ``accept``, with no content;
* a form of exactly one yes-or-no (boolean) field: yes is ``accept`` with
  that field ``true``;
* anything else (a field a person must type or choose, a URL to open) is
  declined without asking anyone, and the reason is a ``warning`` log message
  of the call.

The approver's request carries the server's words (at most 1,000
characters, made :func:`~hermes_mcp._failure.plain`), then who asked: ``Delete 3 files? (asked by the MCP server
"files")``; for a yes-or-no field, its title and description first
(``Subscribe? (Subscribe: Send me the digest; asked by ...)``).

No is ``decline``, and so is a runtime without an approver (the context's
``confirm`` answers no). A call that ends before the answer (it was
cancelled, or ran out of time) withdraws the question: ``cancel``.

A server asks in one of two ways. On a connection of the current protocol
(2026-07-28) the question comes back as the call's result
(``InputRequiredResult``), so it is known to be that call's: the session
answers it and calls again (:func:`hermes_mcp._session.call_tool`). On a
handshake-era connection (2025-11-25 and before) it is an
``elicitation/create`` request of its own, sent while the call runs, that
names no call: :class:`InFlight` puts it to the one call of that server in
flight, and declines it when there is none or there are several (which of
them asked cannot be known); the reason is a warning on the ``hermes_mcp``
logger.

**Log messages** (``notifications/message``) name no call either: each goes
to the one call in flight on that connection, as a log message of its
context at the same level; with none or several in flight, to the
``hermes_mcp`` logger, naming the server.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, final

import mcp_types as types

from hermes_core import shorten
from hermes_mcp._caller import MESSAGE_MAX, Caller
from hermes_mcp._failure import plain

if TYPE_CHECKING:
    from mcp.client.session import ClientRequestContext

__all__ = ["InFlight", "answer", "log_text"]

#: The most characters of a server's question the approver sees.
QUESTION_MAX: Final = 1000
_DECLINE: Final = types.ElicitResult(action="decline")
_CANCEL: Final = types.ElicitResult(action="cancel")
# The logging module's level for each MCP level, for the hermes_mcp logger.
_PY_LEVELS: Final = {"debug": 10, "info": 20, "notice": 20, "warning": 30, "error": 40}
_FIELDS_SHOWN: Final = 5

_logger = logging.getLogger("hermes_mcp")


def _yes_or_no(schema: Any) -> tuple[dict[str, Any], str] | None:
    """What a yes sends for a form of *schema*, and its field's words for the question; None if a yes cannot answer."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not properties:
        return {}, ""
    if not isinstance(properties, Mapping) or len(properties) != 1:
        return None
    ((name, field),) = properties.items()
    if not isinstance(field, Mapping) or field.get("type") != "boolean":
        return None
    said = [str(field[key]) for key in ("title", "description") if isinstance(field.get(key), str) and field[key]]
    return {str(name): True}, f"{shorten(plain(': '.join(said)), 300)}; " if said else ""


def _fields(schema: Any) -> str:
    """The names of the fields a form asks for, quoted, for a message."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    names = [f'"{shorten(plain(str(name)), 40)}"' for name in properties] if isinstance(properties, Mapping) else []
    more = len(names) - _FIELDS_SHOWN
    shown = ", ".join(names[:_FIELDS_SHOWN]) + (f" and {more} more" if more > 0 else "")
    return f"the field{'s' if len(names) > 1 else ''} {shown}" if names else "fields"


async def answer(caller: Caller, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The answer to the question *params* that *caller*'s call caused: its approver's, if a yes or a no answers it."""
    server = caller.server
    said = shorten(plain(params.message), QUESTION_MAX)
    if isinstance(params, types.ElicitRequestURLParams):
        caller.log(
            "warning",
            f'the MCP server "{server}" asked for a person to open {shorten(plain(params.url), 200)} ("{said}"); '
            f"declined without asking anyone: hermesos asks its approver for a yes or a no, and opens no page",
        )
        return _DECLINE
    yes = _yes_or_no(params.requested_schema)
    if yes is None:
        caller.log(
            "warning",
            f'the MCP server "{server}" asked for {_fields(params.requested_schema)} to be filled in ("{said}"); '
            f"declined without asking anyone: hermesos asks its approver for a yes or a no only, so it answers "
            f"questions that ask for no data or for one yes-or-no field",
        )
        return _DECLINE
    content, label = yes
    approved = await caller.confirm(f'{said} ({label}asked by the MCP server "{server}")')
    if approved is None:
        return _CANCEL
    return types.ElicitResult(action="accept", content=content) if approved else _DECLINE


def log_text(params: types.LoggingMessageNotificationParams) -> str:
    """A server's log message as text: its data (a string, else its JSON), after its logger's name if it gave one."""
    data = params.data
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    return shorten(plain(f"{params.logger}: {text}" if params.logger else text, lines=True), MESSAGE_MAX)


@final
class InFlight:
    """The calls in flight on one server's session, and what the server sends that names none of them.

    Its :meth:`on_log` and :meth:`on_elicit` are the session's logging and
    elicitation callbacks; every method runs on the pool's event loop.
    """

    __slots__ = ("_calls", "server")

    def __init__(self, server: str) -> None:
        self.server = server
        self._calls: list[Caller | None] = []  # None: a call made without a caller (it can answer nothing)

    @contextlib.contextmanager
    def holding(self, caller: Caller | None) -> Iterator[None]:
        """Count a call in flight while the block runs; when it ends, withdraw its questions still waiting."""
        self._calls.append(caller)
        try:
            yield
        finally:
            self._calls.remove(caller)
            if caller is not None:
                caller.close()

    def _only(self) -> Caller | None:
        """The caller of the one call in flight, or None when there is none, or there are several."""
        return self._calls[0] if len(self._calls) == 1 else None

    def _unattributed(self) -> str:
        """Why a question cannot be put to anyone, for the warning."""
        if not self._calls:
            return "while no call of its tools was running"
        if len(self._calls) == 1:
            return "during a call made without its context, which nobody can answer for"
        return f"while {len(self._calls)} calls of its tools were running, and which one it is about cannot be known"

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A log message of the server: the call's in flight, else the ``hermes_mcp`` logger's."""
        caller = self._only()
        if caller is not None:
            caller.log(params.level, log_text(params))
            return
        _logger.log(_PY_LEVELS.get(params.level, 50), 'MCP server "%s": %s', self.server, log_text(params))

    async def on_elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """An ``elicitation/create`` request of the server: answered for the one call in flight, else declined."""
        caller = self._only()
        if caller is not None:
            return await answer(caller, params)
        _logger.warning(
            'MCP server "%s" asked "%s" %s; declined without asking anyone',
            self.server,
            shorten(plain(params.message), QUESTION_MAX),
            self._unattributed(),
        )
        return _DECLINE
