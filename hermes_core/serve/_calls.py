"""One ``tools/call`` of :mod:`hermes_core.serve` while it runs: what it tells its MCP client, and what it asks.

* **Progress.** When the request carried a progress token (``_meta.progressToken``),
  each :class:`~hermes_core._tool._call_context.Progress` the call reports is a
  ``notifications/progress`` (``progressToken``, ``progress``, ``total``,
  ``message``), in the order reported, all of them before the result.
* **Log messages.** Each :meth:`~hermes_core.CallContext.log` is a
  ``notifications/message`` (``level``, ``logger``: the tool's wire name,
  ``data``: the message) when the client asked for that level: with the 2025
  protocol, every level unless the connection's ``logging/setLevel`` set a
  floor; with the 2026 protocol, only at or above the level the request's
  ``_meta`` asks for (``io.modelcontextprotocol/logLevel``), none without it.
* **Approval.** :func:`elicit_approval` is an approver (``Runtime(approver=...)``)
  that asks the user of the client whose request is running, through MCP
  elicitation: an ``elicitation/create`` request (the 2025 protocol, on a
  transport that carries a server's requests: stdio), or an
  ``input_required`` result the client answers by calling again with its
  answer (the 2026 protocol, on stdio and stateless HTTP alike). Where the
  client cannot be asked, a permission's ask is ``PERMISSION_DENIED`` with
  ``reason="unreachable"`` and a detail saying why; a handler's own question
  (``confirm``) is answered no.

The reports of a plain handler come from a worker thread: they hop to the
event loop serving the request, which sends them in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final

from hermes_core._base._errors import PermissionDeniedError
from hermes_core._base._issues import printable, unmistakable
from hermes_core._tool._approval import Approval, ApprovalRequest, audit, audit_enabled
from hermes_core._tool._call_context import LEVELS, Listeners, LogMessage, Progress

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.server.context import ServerRequestContext

__all__ = ["Levels", "elicit_approval", "serve_call"]

_logger = logging.getLogger("hermes_core.serve")

#: Why the client was not asked: the detail of the ``PERMISSION_DENIED`` a model reads (``reason="unreachable"``).
NO_REQUEST: Final = "no MCP request is being served here, so there is no client to ask"
NO_ELICITATION: Final = (
    "the MCP client that made the call cannot ask its user: it did not declare the elicitation capability"
)
NO_BACK_CHANNEL: Final = (
    "the MCP client cannot be asked over stateless HTTP with protocol version {version}, which has no way to "
    "carry a question from the server (version 2026-07-28 has)"
)
NO_ANSWER: Final = "the MCP client did not answer the question: it replied with an error"
#: Why a handler's own question mid-call (``confirm``) is answered no under the 2026 protocol.
MID_CALL: Final = "protocol version {version} cannot carry a question while a call runs, only before its handler starts"
#: What an audit record names as the source of a denial because the client could not be asked.
SOURCE: Final = "approver (the MCP client cannot be asked)"
#: The most progress and log notices of one call that wait to be sent to its client; more are dropped.
NOTICES_WAITING_MAX: Final = 1000
#: The most characters of a call's input shown in a question; the rest is counted, and the target never cut.
INPUT_SHOWN: Final = 500
_STANDS_IN = "the MCP client is being asked; its answer comes with its next call"  # replaced by input_required

_current: ContextVar[_Call | None] = ContextVar("hermes_core.serve.call", default=None)
_AT_OR_ABOVE: Final = {level: frozenset(LEVELS[index:]) for index, level in enumerate(LEVELS)}
_NONE: Final[frozenset[str]] = frozenset()


class Levels:
    """The log level each client connection asked for with ``logging/setLevel`` (the 2025 protocol's), and the gate.

    A connection is known by its ``initialize`` parameters, held by the SDK as
    long as the connection lives; a stateless HTTP request has none, so its
    level is not kept and every level is sent.
    """

    __slots__ = ("__weakref__", "_key", "_set", "modern")

    def __init__(self) -> None:
        from mcp_types import LOG_LEVEL_META_KEY  # noqa: PLC0415 - the SDK, only when serving
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # noqa: PLC0415

        #: The per-request-envelope protocol versions (2026-07-28), which have no server requests.
        self.modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        self._key = LOG_LEVEL_META_KEY
        self._set: dict[int, tuple[weakref.ref[Any], str]] = {}

    async def set_level(self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> Any:
        """The ``logging/setLevel`` handler: the level is kept for *ctx*'s connection (not when it stands alone)."""
        import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves

        key = ctx.session.client_params
        if key is not None:
            ident = id(key)
            forget = weakref.ref(self)

            def gone(_: Any) -> None:
                levels = forget()
                if levels is not None:
                    levels._set.pop(ident, None)

            self._set[ident] = (weakref.ref(key, gone), params.level)
        return types.EmptyResult()

    def allowed(self, ctx: ServerRequestContext[Any, Any], modern: bool) -> frozenset[str]:
        """The levels of log message the client of *ctx* takes for this request (empty: none)."""
        if modern:
            requested = ctx.meta.get(self._key) if ctx.meta else None
            return _AT_OR_ABOVE.get(requested, _NONE) if isinstance(requested, str) else _NONE
        key = ctx.session.client_params
        found = self._set.get(id(key)) if key is not None else None
        if found is None or found[0]() is not key:
            return _AT_OR_ABOVE["debug"]
        return _AT_OR_ABOVE.get(found[1], _NONE)


# -- one call -------------------------------------------------------------------------------------


async def serve_call(
    ctx: ServerRequestContext[Any, Any],
    params: types.CallToolRequestParams,
    call: Callable[[str, Any, Listeners | None], Awaitable[dict[str, Any]]],
    levels: Levels,
    to_wire: Mapping[str, str],
) -> Any:
    """Run *call* (the wire name, the arguments, who hears the call) as the ``tools/call`` of *ctx*.

    While it runs, :func:`elicit_approval` asks this request's client. Every
    notice the call reports is sent before this returns (but those reported
    while :data:`NOTICES_WAITING_MAX` wait: see :class:`_Notices`). Returns
    what *call* returned, or an ``InputRequiredResult`` when the client must
    answer a question and call again (the 2026 protocol).
    """
    modern = ctx.protocol_version in levels.modern
    here = _Call(ctx, params, modern, to_wire)
    notices = _Notices(ctx, params.name, levels.allowed(ctx, modern))
    token = _current.set(here)
    try:
        result = await call(params.name, params.arguments, notices.listeners)
    except BaseException:
        notices.abort()
        raise
    finally:
        _current.reset(token)
    if notices.posted:
        await notices.close()
        # The SDK's RequestParamsMeta: the request's _meta, its keys in snake case.
        if notices.progressed and not modern and ctx.meta and ctx.meta.get("progress_token") is not None:
            await _caught_up(ctx)
    else:
        notices.closed = True  # a plain handler on a worker thread may outlive a call that timed out
    if here.pending:
        import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves

        return types.InputRequiredResult(input_requests=here.pending)
    return result


class _Call:
    """One ``tools/call`` being served: its request, the client's answers it brought, the questions it leaves."""

    __slots__ = ("ctx", "modern", "params", "pending", "to_wire")

    def __init__(
        self,
        ctx: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        modern: bool,
        to_wire: Mapping[str, str],
    ) -> None:
        self.ctx = ctx
        self.params = params
        self.modern = modern
        self.to_wire = to_wire
        self.pending: dict[str, Any] | None = None  # the questions this call leaves the client (the 2026 protocol)

    async def ask(self, request: ApprovalRequest) -> Approval:
        """Ask this request's client *request*, by the means its protocol and transport have."""
        ctx = self.ctx
        if not self.modern and not ctx.session.can_send_request:  # stateless HTTP: not even the handshake is kept
            return _cannot(request, NO_BACK_CHANNEL.format(version=ctx.protocol_version))
        if not _elicits(ctx.session.client_capabilities):
            return _cannot(request, NO_ELICITATION)
        tool = self.to_wire.get(request.tool.name, request.tool.name)
        offers_always = ctx.request is None  # one client per server (stdio); over HTTP, a runtime serves many
        message, schema = _message(tool, request), _schema(tool, request, offers_always)
        if self.modern:
            if request.message is not None:
                return _cannot(request, MID_CALL.format(version=ctx.protocol_version))
            key = _key(tool, request, message, schema)
            answer = (self.params.input_responses or {}).get(key)
            if answer is None:
                import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves

                form = types.ElicitRequestFormParams(message=message, requested_schema=schema)
                self.pending = {**(self.pending or {}), key: types.ElicitRequest(params=form)}
                # The call stops here; serve_call answers the request with the question instead.
                raise PermissionDeniedError(
                    request.tool.name, request.permissions[0], reason="unreachable", detail=_STANDS_IN
                )
            return _approval(request, answer, offers_always)
        try:
            answer = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)
        except Exception as error:  # an error reply, a malformed one, a transport that refused
            _logger.warning(
                "%s (call %s): the MCP client did not answer the approval question: %s",
                tool,
                request.call_id,
                type(error).__name__,
            )
            return _cannot(request, NO_ANSWER)
        return _approval(request, answer, offers_always)


class _Notices:
    """A call's progress and log messages, sent to its client in the order reported, from any thread.

    Progress is always heard: the SDK sends it only when the client asked for
    it (a progress token, or an in-process client's callback, which no token
    shows), and a tool that reports none costs nothing more.

    At most :data:`NOTICES_WAITING_MAX` wait to be sent: a notice reported
    while that many wait (a client taking them more slowly than the call makes
    them, or not at all) is dropped, and the count of those dropped is logged
    once the call ends. They were held without limit: 300,000 log messages of
    1 KB, of a call whose client did not read them, held 319 MiB.
    """

    __slots__ = (
        "_ctx",
        "_levels",
        "_loop",
        "_queue",
        "_sender",
        "_wire",
        "closed",
        "dropped",
        "listeners",
        "posted",
        "progressed",
    )

    def __init__(self, ctx: ServerRequestContext[Any, Any], wire: str, levels: frozenset[str]) -> None:
        self._ctx = ctx
        self._wire = wire
        self._levels = levels
        self._loop = asyncio.get_running_loop()
        self._queue: deque[Progress | LogMessage] | None = None
        self._sender: asyncio.Task[None] | None = None
        self.closed = False
        self.dropped = 0  # notices not sent: reported while NOTICES_WAITING_MAX waited
        self.posted = False  # whether anything was reported: a call that reported nothing has nothing to wait for
        self.progressed = False  # whether progress was reported (sent only where the request has a token)
        self.listeners = Listeners(self._post, self._log if levels else None)

    def _log(self, message: LogMessage) -> None:
        if message.level in self._levels:
            self._post(message)

    def _post(self, notice: Progress | LogMessage) -> None:
        """Hand *notice* to the event loop (this may be a plain handler's worker thread)."""
        self.posted = True
        with contextlib.suppress(RuntimeError):  # a closed loop: the server has stopped, there is no one to tell
            self._loop.call_soon_threadsafe(self._push, notice)

    def _push(self, notice: Progress | LogMessage) -> None:
        if self.closed:  # a worker thread reporting after its call ended: the response has gone
            return
        if self._queue is None:
            self._queue = deque()
        elif len(self._queue) >= NOTICES_WAITING_MAX:  # a notice is advice: the call goes on without it
            self.dropped += 1
            return
        self._queue.append(notice)
        if self._sender is None:
            self._sender = self._loop.create_task(self._send())

    async def _send(self) -> None:
        queue = self._queue
        assert queue is not None  # made by _push, which starts this
        try:
            while queue:
                notice = queue.popleft()
                try:
                    await self._one(notice)
                except Exception as error:  # a notice is advice: a client that left misses it, the call goes on
                    _logger.debug("%s: a notice was not sent: %s", self._wire, type(error).__name__)
        finally:
            self._sender = None

    async def _one(self, notice: Progress | LogMessage) -> None:
        session = self._ctx.session
        if isinstance(notice, Progress):
            await session.report_progress(notice.done, notice.total, notice.message)
            self.progressed = True
            return
        import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves

        params = types.LoggingMessageNotificationParams(level=notice.level, data=notice.message, logger=self._wire)
        await session.send_notification(
            types.LoggingMessageNotification(params=params), related_request_id=self._ctx.request_id
        )

    async def close(self) -> None:
        """Send what is left, once the call has ended; nothing reported later is sent."""
        await asyncio.sleep(0)  # reports posted just before the call ended are pushed first
        self.closed = True
        sender = self._sender
        try:
            if sender is not None:
                await sender
        finally:  # cancelled too: its client went away, or was sent away, before taking them
            self._tell_dropped()

    def abort(self) -> None:
        """The call was given up on (cancelled): send nothing more."""
        self.closed = True
        if self._sender is not None:
            self._sender.cancel()
        self._tell_dropped()

    def _tell_dropped(self) -> None:
        if self.dropped:
            _logger.warning(
                "%s: %d of its progress and log notices were not sent: its client was not taking them (at most %d "
                "wait to be sent)",
                self._wire,
                self.dropped,
                NOTICES_WAITING_MAX,
            )


# How long a call's response waits, at most, for the client to answer the ping of _caught_up.
_CAUGHT_UP_SECONDS = 2.0


async def _caught_up(ctx: ServerRequestContext[Any, Any]) -> None:
    """Return once the client of *ctx* has taken in the progress sent before: it has answered a ping sent after it.

    The TypeScript SDK's 1.x client hands a notification to its handler a
    turn after reading it, but forgets a request's progress handler as soon as
    it reads the response: a last progress report read together with the
    response is dropped, "for an unknown token" (most of a call's last reports,
    over stdio). A client answers a ping after taking in what came before it,
    so the response goes once the reports are in. A client that cannot be
    asked (stateless HTTP), answers with an error, or does not answer within
    :data:`_CAUGHT_UP_SECONDS`, gets the response all the same.
    """
    import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves
    from mcp.shared.message import ServerMessageMetadata  # noqa: PLC0415

    session = ctx.session
    if not session.can_send_request:
        return
    with contextlib.suppress(Exception):
        await session.send_request(
            types.PingRequest(),
            types.EmptyResult,
            request_read_timeout_seconds=_CAUGHT_UP_SECONDS,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )


# -- the approver ---------------------------------------------------------------------------------


async def elicit_approval(request: ApprovalRequest) -> Approval:
    """An approver that asks the user of the MCP client whose call is being served, through MCP elicitation.

    Use it as ``Runtime(approver=elicit_approval)`` for a runtime served by
    :func:`~hermes_core.serve.mcp_server` (``hermesos serve`` does). The
    client's user sees what asks (the tool, by its wire name), the permissions
    and the reasons the providers gave (or the handler's question), and the
    call's input, at most 500 characters of it. Accept approves this call;
    over stdio the form also has an ``always`` box, which approves every later
    such call until the server stops (over HTTP, where one runtime serves many
    clients, it is not offered). Decline and cancel decline the call: the
    model reads that a person declined it.

    How the question travels: with protocol versions up to 2025-11-25, as an
    ``elicitation/create`` request, which needs a transport that carries a
    server's requests (stdio; not stateless HTTP); with 2026-07-28, as an
    ``input_required`` result, answered by the client calling again with its
    answer (any transport), which can ask only before the handler starts.

    Where the client cannot be asked (it did not declare the elicitation
    capability; stateless HTTP under 2025-11-25; it replied with an error; no
    MCP request is being served), a permission's ask is refused:
    ``PERMISSION_DENIED`` with ``reason="unreachable"`` and
    a detail saying why, recorded as denied in the audit log; a handler's
    own question (``confirm``) is answered no.

    Raises:
        PermissionDeniedError: as above.
    """
    here = _current.get()
    if here is None:
        return _cannot(request, NO_REQUEST)
    return await here.ask(request)


def _elicits(capabilities: types.ClientCapabilities | None) -> bool:
    """Whether a client with *capabilities* takes a form elicitation (a bare ``elicitation: {}`` is a form)."""
    elicitation = None if capabilities is None else capabilities.elicitation
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _cannot(request: ApprovalRequest, why: str) -> Approval:
    """What a question the client cannot be asked comes to: no for a handler's question, else a denial."""
    if request.message is not None:
        return Approval.decline(why)
    if audit_enabled():
        for permission in request.permissions:
            audit(request.call_id, request.tool.name, permission, "denied", SOURCE)
    raise PermissionDeniedError(request.tool.name, request.permissions[0], reason="unreachable", detail=why)


def _approval(request: ApprovalRequest, answer: Any, offers_always: bool) -> Approval:
    """The client's *answer* (an ``ElicitResult``) as an approval."""
    import mcp_types as types  # noqa: PLC0415 - imported already: the SDK serves

    if not isinstance(answer, types.ElicitResult):
        return _cannot(request, NO_ANSWER)
    if answer.action != "accept":  # decline, or cancel: dismissed without a yes
        return Approval.decline()
    content = answer.content
    if offers_always and isinstance(content, dict) and content.get("always") is True:
        return Approval.always()
    return Approval.once()


def _message(tool: str, request: ApprovalRequest) -> str:
    """What the client's user reads: who asks, on what (in full), for what, with which input; all of it escaped."""
    if request.message is not None:
        head = f"{tool} asks: {printable(request.message, lines=True)}"
        action = "Accept to answer yes; decline to answer no."
    else:
        permissions = " and ".join(f'"{permission}"' for permission in request.permissions)
        noun = "permission" if len(request.permissions) == 1 else "permissions"
        reasons = "; ".join(printable(reason) for reason in request.reasons if reason)
        head = f"{tool} needs your approval to use the {permissions} {noun}" + (f" ({reasons})." if reasons else ".")
        action = "Accept to allow this call; decline to refuse it."
    if request.target is not None:
        head += f"\nTarget: {unmistakable(request.target)}"
    return f"{head}\nInput: {_shown(request.input)}\n{action}"


def _schema(tool: str, request: ApprovalRequest, offers_always: bool) -> dict[str, Any]:
    """The form: nothing to fill in, or one ``always`` box (the simplest schemas elicitation allows)."""
    if not offers_always:
        return {"type": "object", "properties": {}}
    if request.message is not None:
        also = f"Answer yes whenever {tool} asks this again, until the server stops"
    else:
        also = f"Also approve every later call of {tool} that asks for this, until the server stops"
    box = {"type": "boolean", "title": "Always", "description": also, "default": False}
    return {"type": "object", "properties": {"always": box}}


def _shown(value: Any) -> str:
    """*value* as JSON, escaped, its first :data:`INPUT_SHOWN` characters, saying how many more there are."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    if len(text) <= INPUT_SHOWN:
        return printable(text)
    return f"{printable(text[:INPUT_SHOWN])}... ({len(text) - INPUT_SHOWN:,} more characters not shown)"


def _key(tool: str, request: ApprovalRequest, message: str, schema: Mapping[str, Any]) -> str:
    """The key of a question in ``inputRequests``: a digest of all it shows and the whole input.

    An answer counts only under the key of the question asked, so it answers
    that question and no other (not the same tool with another input), and
    any process serving the same tools reads it the same way.
    """
    try:
        whole = json.dumps(request.input, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        whole = repr(request.input)
    asked = json.dumps([tool, request.permissions, message, schema, whole], sort_keys=True)
    return "hermesos-approval-" + hashlib.sha256(asked.encode("utf-8", "surrogatepass")).hexdigest()[:32]
