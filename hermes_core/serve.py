"""A runtime's tools as an MCP server, over stdio or Streamable HTTP, on the official MCP Python SDK.

``hermesos serve`` runs it; :func:`mcp_server` builds the SDK's low-level
``Server`` for any :class:`~hermes_core.Runtime`, and :func:`serve_stdio` and
:func:`serve_http` run one. The protocol (both of the SDK's eras, the
handshake and the per-request envelope), the transports and cancellation are
the SDK's; what this module adds is what a client is shown and told:

* ``tools/list``: each tool under its wire name (:mod:`hermes_core._wire`),
  with its ``title`` and ``annotations`` when it declares them, its
  description (tool names in it written as wire names), its input schema as
  :meth:`~hermes_core.Runtime.definitions` writes it, and an output schema
  with an object at its root: any other output schema is wrapped as
  ``{"type": "object", "properties": {"result": ...}, "required": ["result"]}``,
  as the SDK's own ``MCPServer`` does, and the structured result of such a
  tool is then ``{"result": value}``.
* ``tools/call``: through ``await runtime.call(...)``. A result has one text
  block (a string as it is, anything else as JSON) and ``structuredContent``.
  A media tool's :class:`~hermes_core.Content` is sent as MCP content blocks
  (``text``, ``image``, ``audio``, ``resource``, ``resource_link``), with
  ``structuredContent`` only when it carries structured data; such a tool is
  listed without an ``outputSchema`` unless it declares one.
  A :class:`~hermes_core.ToolError` (an unknown tool, bad input, a denied
  permission, a handler that failed or ran out of time, a bad output) is a
  result too, with ``isError: true``: its text is ``CODE: message``, and the
  error's ``to_dict()`` is in its ``_meta`` under :data:`ERROR_META_KEY`, both
  naming tools by their wire names. It has no ``structuredContent``: a client
  may check that against the tool's output schema even in an error result
  (the TypeScript SDK 1.x does), and the error would reach the model as a
  schema mismatch. Nothing a client sends makes the server raise.
* A client that cancels a call (``notifications/cancelled``, or closing the
  response stream over HTTP) cancels the task running it: an ``async``
  handler gets ``CancelledError``.
* A call's progress and log messages are MCP notifications, and with
  :func:`elicit_approval` as the runtime's approver a person's approval is
  asked of the client's user (MCP elicitation): see :mod:`hermes_core._serve_calls`.
* Permissions are the runtime's: nothing a client sends grants anything.

The SDK is imported only by the functions that need it: :func:`mcp_tools`
(what ``hermesos export --format mcp`` prints) works without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import json
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_core._content import Content
from hermes_core._door import ARGUMENTS_MAX, Door, Repaired, mcp_content, result_text
from hermes_core._errors import ToolError
from hermes_core._runtime import Runtime
from hermes_core._serve_calls import Levels, elicit_approval, serve_call
from hermes_core._serve_http import Evictions, Limits, guarded_protocol
from hermes_core._serve_stdio import Replies, stdin_lines, unreadable_answer
from hermes_core._version import __version__
from hermes_core._wire import WireNames
from hermes_core.schema import AnySchema
from hermes_core.schema._validators import follow_refs

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

    from hermes_core._context import Listeners

__all__ = [
    "BODY_TIMEOUT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "ERROR_META_KEY",
    "HEADER_TIMEOUT",
    "HEALTH_PATH",
    "IDLE_TIMEOUT",
    "MAX_BUFFER",
    "MAX_CONNECTIONS",
    "MCP_PATH",
    "SHUTDOWN_TIMEOUT",
    "WRITE_TIMEOUT",
    "check_exposure",
    "elicit_approval",
    "http_settings",
    "is_loopback",
    "mcp_http_app",
    "mcp_server",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
    "unreadable_answer",
]

#: Where ``hermesos serve --transport http`` listens unless told otherwise: this machine only.
DEFAULT_HOST: Final = "127.0.0.1"
#: The port it listens on unless told otherwise.
DEFAULT_PORT: Final = 8000
#: The path of the Streamable HTTP endpoint.
MCP_PATH: Final = "/mcp"
#: The path of the health check: ``GET`` answers 200 while the server serves, with no token needed.
HEALTH_PATH: Final = "/healthz"
#: Seconds a connection has to send a request's head (and, between requests, the next one's), unless told otherwise.
HEADER_TIMEOUT: Final = 10.0
#: Seconds a connection has to send a request's body once its head is in, unless told otherwise.
BODY_TIMEOUT: Final = 60.0
#: Seconds an idle keep-alive connection is kept, unless told otherwise.
IDLE_TIMEOUT: Final = 5.0
#: Connections served at once, unless told otherwise.
MAX_CONNECTIONS: Final = 256
#: Seconds a connection's client has to take what the server has written for it, unless told otherwise.
WRITE_TIMEOUT: Final = 30.0
#: Bytes of responses one connection may have waiting to be sent (16 MiB, as a request body), unless told otherwise.
MAX_BUFFER: Final = 16 * 1024 * 1024
#: Seconds the requests in flight have to finish once the server is told to stop, unless told otherwise.
SHUTDOWN_TIMEOUT: Final = 5.0
#: The key of a failed call's result ``_meta`` that holds the error as data (its ``to_dict()``).
#: MCP's key rules: a reverse-DNS prefix of a namespace the project holds (its GitHub
#: organisation), then ``/``; its second label is not ``modelcontextprotocol`` or ``mcp``,
#: which are reserved.
ERROR_META_KEY: Final = "io.github.hermesos-core/error"

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


# -- what a client is shown and told -------------------------------------------------------------------


def _output_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """*schema* with an object at its root, and whether it had to be wrapped under ``result``.

    The named schemas a wrapped schema refers to (``#/$defs/...``) move up to
    the wrapper's root, where such a reference is resolved.
    """
    if schema.get("type") == "object":
        return schema, False
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, True


class _Tools:
    """A runtime's tools as MCP shows them, computed once, and each call through the front door (``_door``)."""

    __slots__ = ("door", "listing", "media", "wrapped")

    def __init__(self, runtime: Runtime, timeout: float | None = None) -> None:
        names = WireNames(runtime.tools)
        refs = runtime.schemas
        listing: list[dict[str, Any]] = []
        wrapped: dict[str, bool] = {}
        media: set[str] = set()
        for tool, definition in zip(runtime.tools.values(), runtime.definitions(), strict=True):
            output, wraps = _output_schema(follow_refs(tool.output, refs).json_schema(defs=refs))
            # A media tool declaring no output schema has no structured output to describe.
            unstructured = tool.media and isinstance(tool.output, AnySchema)
            shown: dict[str, Any] = {}
            for key, value in definition.items():
                if key == "outputSchema" and unstructured:
                    continue
                if key == "name":
                    value = names.to_wire[tool.name]  # noqa: PLW2901 - the same keys, in the same order
                elif key == "description":
                    value = names.rewrite(value)  # noqa: PLW2901
                elif key == "outputSchema":
                    value = output  # noqa: PLW2901
                shown[key] = value
            listing.append(shown)
            wrapped[names.to_wire[tool.name]] = wraps
            if tool.media:
                media.add(names.to_wire[tool.name])
        self.listing = listing
        self.wrapped = wrapped  # by wire name
        self.media = media  # the wire names of the tools whose result is content
        self.door = Door(runtime, names, timeout=timeout, where="mcp_server()")

    async def call(
        self, wire: str, arguments: Mapping[str, Any] | None, listeners: Listeners | None = None
    ) -> dict[str, Any]:
        """Call the tool whose wire name is *wire*, which *listeners* hear: the ``tools/call`` result, as wire JSON."""
        try:
            value = await self.door.call(wire, arguments, listeners)
        except ToolError as error:
            return self.failure(error)
        if type(value) is Repaired:  # lenient mode: what was assumed, as a text block of its own after the result
            result = self._result(wire, value.output)
            result["content"].append({"type": "text", "text": value.note()})
            return result
        return self._result(wire, value)

    def _result(self, wire: str, value: Any) -> dict[str, Any]:
        if wire in self.media:
            return self.content(wire, value)
        return {
            "content": [{"type": "text", "text": result_text(value)}],
            "structuredContent": {"result": value} if self.wrapped[wire] else value,
            "isError": False,
            "resultType": "complete",  # required from the 2026-07-28 protocol on; dropped for older ones
        }

    def content(self, wire: str, value: Content | str) -> dict[str, Any]:
        """The ``tools/call`` result of a media tool: its blocks, and its structured data when it has some."""
        result: dict[str, Any] = {"content": mcp_content(value)}
        data = value.structured if isinstance(value, Content) else None
        if data is not None:
            result["structuredContent"] = {"result": data} if self.wrapped[wire] else data
        result["isError"] = False
        result["resultType"] = "complete"
        return result

    def failure(self, error: ToolError) -> dict[str, Any]:
        """The ``tools/call`` result for *error*: ``isError``, ``CODE: message``, and the error as data in ``_meta``.

        No ``structuredContent``: the TypeScript SDK 1.x client checks it
        against the tool's output schema even when ``isError`` is true, and
        the error would reach the model as a schema mismatch instead.
        """
        text, data = self.door.error_result(error)
        return {
            "content": [{"type": "text", "text": text}],
            "isError": True,
            "resultType": "complete",
            "_meta": {ERROR_META_KEY: data},
        }


def mcp_tools(runtime: Runtime) -> list[dict[str, Any]]:
    """The runtime's tools as MCP's ``tools/list`` gives them: plain JSON data, one dict per tool.

    Each has ``name`` (the wire name), ``title`` (when declared),
    ``description``, ``inputSchema``, ``outputSchema`` (an object at its root)
    and ``annotations`` (when declared). Needs no MCP SDK.

    Raises:
        InvalidDefinitionError: two tools have the same wire name.
    """
    return _Tools(runtime).listing


# -- the SDK's server ----------------------------------------------------------------------------------


def mcp_server(runtime: Runtime, *, name: str = "hermesos", timeout: float | None = None) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) of the runtime's tools, for any SDK transport.

    Args:
        runtime: the tools, their permissions and their checks.
        name: the server's name, in its ``serverInfo``.
        timeout: the most seconds a call may take, overriding the tools' own
            limits, as ``hermesos call --timeout`` does; None: each tool's own.

    Raises:
        InvalidDefinitionError: two tools have the same wire name, or *timeout*
            is not a positive number or None.
        ImportError: the MCP SDK is not installed (``pip install 'hermesos-core[mcp]'``).
    """
    import mcp_types as types  # noqa: PLC0415 - see the module docstring
    from mcp.server.lowlevel import Server  # noqa: PLC0415

    tools = _Tools(runtime, timeout)
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(entry) for entry in tools.listing])
    input_schemas = {entry["name"]: entry["inputSchema"] for entry in tools.listing}
    levels = Levels()
    to_wire = {} if tools.door.names is None else tools.door.names.to_wire

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listing  # one page, whatever the cursor; the SDK writes it out afresh for every request

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await serve_call(ctx, params, tools.call, levels, to_wire)

    server: Server[Any] = Server(
        name, version=__version__, on_list_tools=list_tools, get_tool_input_schema=input_schemas.get
    )
    # A call's result is handed over as wire JSON, which the SDK checks against the protocol's
    # CallToolResult and writes out: building the model first would do that work twice (a
    # fifth of a round trip in memory, bench_mcp.py). The handler is registered as the
    # constructor's on_call_tool would be, under the same method and parameter type.
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    # Registered, not passed to the constructor (which warns that the 2026 protocol deprecates it): a
    # handler of logging/setLevel is what declares the logging capability to a client of the 2025 one.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, levels.set_level)
    return server


async def serve_stdio(
    runtime: Runtime, *, name: str = "hermesos", timeout: float | None = None, max_message_bytes: int = ARGUMENTS_MAX
) -> None:
    """Serve the runtime's tools over stdin and stdout until stdin ends (or the client stops reading stdout).

    While it serves, what the tools print goes to stderr, never onto the wire
    (the SDK's ``stdio_server`` sees to it), and a tool reading stdin reads
    nothing. One message (one line) is at most *max_message_bytes*, as an
    HTTP request's body is: a longer one is skipped without being held in
    memory and answered with a JSON-RPC error (``-32600``, ``id`` null), and
    the session goes on. The runtime is open while it serves (``async with
    runtime``; one opened already stays as it is). Other arguments as
    :func:`mcp_server`'s.
    """
    from mcp.server.stdio import stdio_server  # noqa: PLC0415 - see the module docstring

    server = mcp_server(runtime, name=name, timeout=timeout)
    async with runtime:
        try:
            with stdin_lines(max_message_bytes) as lines:
                async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
                    lines.replies = replies = Replies(write)
                    await server.run(read, replies, server.create_initialization_options())
        except* (BrokenPipeError, ConnectionResetError):
            pass  # the client closed its end of stdout: there is nobody left to serve


# -- Streamable HTTP -----------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether *host* (an address or ``localhost``) is this machine alone; any other name is not."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen on *host* without a token unless it is a loopback address.

    Raises:
        ValueError: *host* is reachable from other machines and *token* is None or empty.
    """
    if not token and not is_loopback(host):
        raise ValueError(
            f"{host} is not a loopback address: other machines could call the tools, so a bearer token is "
            "required (--token-file PATH or --token-env VARIABLE)"
        )


def _security(host: str) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks: on for a loopback address (DNS rebinding), off for any other.

    Behind a load balancer the names clients use are not known here; the
    bearer token, which a rebinding page cannot send, guards those.
    """
    from mcp.server.transport_security import TransportSecuritySettings  # noqa: PLC0415 - see the module docstring

    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{name}:*" for name in hosts)],
        allowed_origins=[f"http://{name}{port}" for name in hosts for port in ("", ":*")],
    )


class _BearerToken:
    """ASGI middleware: every request must carry ``Authorization: Bearer <token>``, else 401 (HTTP) or a close."""

    __slots__ = ("_app", "_digest")

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        # Digests compared, not the tokens: equal lengths, so the comparison's time says nothing.
        self._digest = hashlib.sha256(token.strip().encode("utf-8")).digest()

    def _allows(self, headers: Iterable[tuple[bytes, bytes]]) -> bool:
        given = b""
        for key, value in headers:
            if key.lower() == b"authorization":
                given = value
                break
        scheme, _, token = given.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(hashlib.sha256(token.strip()).digest(), self._digest)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not self._allows(scope.get("headers", ())):
            await send({"type": "websocket.close", "code": 1008})  # policy violation: never accepted
            return
        if scope["type"] == "http" and not self._allows(scope.get("headers", ())):
            body = json.dumps({"error": "invalid_token", "error_description": "a valid bearer token is required"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"www-authenticate", b'Bearer realm="hermesos"'),
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self._app(scope, receive, send)


def mcp_http_app(
    runtime: Runtime,
    *,
    host: str = DEFAULT_HOST,
    token: str | None = None,
    name: str = "hermesos",
    timeout: float | None = None,
) -> ASGIApp:
    """An ASGI application serving the runtime's tools over Streamable HTTP at :data:`MCP_PATH`.

    Stateless: every request stands alone (no session is kept between
    requests), so any number of processes behind a load balancer serve the
    same tools. A request body is at most :data:`~hermes_core.adapters.ARGUMENTS_MAX`
    bytes (413 otherwise). ``GET`` :data:`HEALTH_PATH` answers 200
    ``{"status": "serving"}``, without the token, for what watches the
    process (a load balancer, a container's health check, a Kubernetes probe).

    Args:
        runtime: the tools, their permissions and their checks.
        host: the address it will listen on: on a loopback address, the
            ``Host`` and ``Origin`` headers must name this machine (DNS
            rebinding protection).
        token: when given, every request must carry ``Authorization: Bearer
            <token>`` (401 otherwise).
        name: the server's name, in its ``serverInfo``.
        timeout: as :func:`mcp_server`'s.

    Raises:
        ValueError: *host* is not a loopback address and no *token* is given.
    """
    check_exposure(host, token)
    server = mcp_server(runtime, name=name, timeout=timeout)
    app: ASGIApp = _NoStream(
        server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            transport_security=_security(host),
            max_request_body_size=ARGUMENTS_MAX,
        )
    )
    return _Health(_BearerToken(app, token) if token else app)


class _Health:
    """ASGI middleware: ``GET`` or ``HEAD`` :data:`HEALTH_PATH` is answered 200 ``{"status": "serving"}``, first.

    Before the token and the ``Host`` check: what watches a replica (a
    container's health check, a Kubernetes probe, monitoring) has no token,
    and the answer says nothing but that this process serves. There is no
    "draining" answer: told to stop, the server closes its socket at once, so
    the check is refused as every new request is, which a load balancer acts
    on at once (the calls in flight finish meanwhile).
    """

    __slots__ = ("_app",)

    _BODY: Final = json.dumps({"status": "serving"}).encode()
    _HEADERS: Final = (
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_BODY)).encode()),
        (b"cache-control", b"no-store"),
    )

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != HEALTH_PATH:
            await self._app(scope, receive, send)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await send({"type": "http.response.start", "status": 405,
                        "headers": [(b"allow", b"GET, HEAD"), (b"content-length", b"0")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": list(self._HEADERS)})
        await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else self._BODY})


class _NoStream:
    """ASGI middleware: ``GET`` on the MCP endpoint is answered ``405``, as the protocol allows a server to.

    A stateless server has nothing to send on a stream a client opens with
    ``GET`` (no session ties a later message to it), and the SDK held such a
    stream open, silent, for as long as the client kept it: enough of them,
    each a connection sending nothing, took every connection the server takes.
    """

    __slots__ = ("_app",)

    _BODY: Final = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": "Method Not Allowed: this server keeps no session, so it sends nothing on a GET stream; "
                "send each request with POST",
            },
        }
    ).encode()

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "GET"
            or scope.get("path") not in (MCP_PATH, MCP_PATH + "/")
        ):
            await self._app(scope, receive, send)
            return
        headers = [
            (b"allow", b"POST"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(self._BODY)).encode()),
        ]
        await send({"type": "http.response.start", "status": 405, "headers": headers})
        await send({"type": "http.response.body", "body": self._BODY})


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on *host* and *port* (0: any free port), for uvicorn to serve on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(2048)  # now: a client told the URL may connect before uvicorn has started (it waits)
    except OSError:
        sock.close()
        raise
    return sock


def http_settings(environ: Mapping[str, str] | None = None) -> dict[str, float]:
    """The HTTP server's bounds, from the ``HERMESOS_SERVE_*`` settings, else their defaults.

    ``HERMESOS_SERVE_HEADER_TIMEOUT`` (:data:`HEADER_TIMEOUT`),
    ``HERMESOS_SERVE_BODY_TIMEOUT`` (:data:`BODY_TIMEOUT`),
    ``HERMESOS_SERVE_IDLE_TIMEOUT`` (:data:`IDLE_TIMEOUT`),
    ``HERMESOS_SERVE_WRITE_TIMEOUT`` (:data:`WRITE_TIMEOUT`),
    ``HERMESOS_SERVE_SHUTDOWN_TIMEOUT`` (:data:`SHUTDOWN_TIMEOUT`): seconds,
    more than 0 and at most 3600; ``HERMESOS_SERVE_MAX_CONNECTIONS``
    (:data:`MAX_CONNECTIONS`): 1 to 65536; ``HERMESOS_SERVE_MAX_BUFFER``
    (:data:`MAX_BUFFER`): bytes, 65536 (64 KiB) to 1073741824 (1 GiB).

    Returns:
        ``header_timeout``, ``body_timeout``, ``idle_timeout``, ``write_timeout``,
        ``shutdown_timeout``, ``max_connections`` and ``max_buffer``.

    Raises:
        ValueError: a setting is malformed; the message names it.
    """
    from hermes_core import schema as s  # noqa: PLC0415 - only serving over HTTP reads these settings
    from hermes_core._errors import InvalidDefinitionError  # noqa: PLC0415
    from hermes_core._settings import setting  # noqa: PLC0415

    seconds = s.number(exclusive_minimum=0, maximum=3600, description="seconds, more than 0 and at most 3600")
    count = s.integer(minimum=1, maximum=65536, description="a number of connections, 1 to 65536")
    size = s.integer(minimum=65536, maximum=1 << 30, description="a number of bytes, 65536 (64 KiB) to 1073741824")
    found: dict[str, float] = {}
    for key, schema, default in (
        ("header_timeout", seconds, HEADER_TIMEOUT),
        ("body_timeout", seconds, BODY_TIMEOUT),
        ("idle_timeout", seconds, IDLE_TIMEOUT),
        ("write_timeout", seconds, WRITE_TIMEOUT),
        ("shutdown_timeout", seconds, SHUTDOWN_TIMEOUT),
        ("max_connections", count, MAX_CONNECTIONS),
        ("max_buffer", size, MAX_BUFFER),
    ):
        try:
            found[key] = setting(f"HERMESOS_SERVE_{key.upper()}", schema, default=default, environ=environ)
        except InvalidDefinitionError as error:
            raise ValueError(str(error)) from None
    return found


def _url(address: Any) -> str:
    host, port = address[0], address[1]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"


async def serve_http(
    runtime: Runtime,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    name: str = "hermesos",
    timeout: float | None = None,
    on_listening: Callable[[str], object] | None = None,
    header_timeout: float | None = None,
    body_timeout: float | None = None,
    idle_timeout: float | None = None,
    max_connections: int | None = None,
    write_timeout: float | None = None,
    max_buffer: int | None = None,
    shutdown_timeout: float | None = None,
) -> None:
    """Serve the runtime's tools over Streamable HTTP (with uvicorn) until interrupted (Ctrl-C, SIGTERM).

    The runtime is open while it serves (``async with runtime``; one opened
    already stays as it is). What a connection may hold is bounded in time
    and bytes, whatever its client sends or reads; a connection closed for
    holding more is logged as a warning (logger ``hermes_core.serve``) naming
    the client, the reason and the count so far. Told to stop, the server
    stops accepting connections, closes at once those still sending a request
    or not taking their response, and gives the requests in flight
    *shutdown_timeout* seconds to finish (a second Ctrl-C: none).

    Args:
        runtime: the tools, their permissions and their checks.
        host: the address to listen on; one that is not a loopback address
            needs a *token*.
        port: the port to listen on; 0 for any free one.
        token: as :func:`mcp_http_app`'s.
        name: the server's name, in its ``serverInfo``.
        timeout: as :func:`mcp_server`'s.
        on_listening: called with the endpoint's URL (``http://127.0.0.1:8000/mcp``)
            once the socket listens: with ``port=0``, the way to learn the port.
        header_timeout: seconds a connection has to send a request's head,
            from when it is made or its last response ended; then it is closed
            (None: ``HERMESOS_SERVE_HEADER_TIMEOUT``, else :data:`HEADER_TIMEOUT`).
        body_timeout: seconds it then has to send the body (None:
            ``HERMESOS_SERVE_BODY_TIMEOUT``, else :data:`BODY_TIMEOUT`).
        idle_timeout: seconds an idle keep-alive connection is kept (None:
            ``HERMESOS_SERVE_IDLE_TIMEOUT``, else :data:`IDLE_TIMEOUT`).
        max_connections: connections served at once; beyond it, a new one
            closes the one whose client has kept it waiting longest (for a
            request's head, or to take a response), or, if every one is
            running a request, is closed (None: ``HERMESOS_SERVE_MAX_CONNECTIONS``,
            else :data:`MAX_CONNECTIONS`).
        write_timeout: seconds a client has to take what the server wrote for
            it and could not send at once; then its connection is closed
            (None: ``HERMESOS_SERVE_WRITE_TIMEOUT``, else :data:`WRITE_TIMEOUT`).
        max_buffer: bytes of responses a connection may have waiting to be
            sent; more close it at once (None: ``HERMESOS_SERVE_MAX_BUFFER``,
            else :data:`MAX_BUFFER`).
        shutdown_timeout: seconds the requests in flight have to finish once
            the server is told to stop; then they are cancelled (None:
            ``HERMESOS_SERVE_SHUTDOWN_TIMEOUT``, else :data:`SHUTDOWN_TIMEOUT`).

    Raises:
        ValueError: *host* is not a loopback address and no *token* is given.
        ValueError: one of the ``HERMESOS_SERVE_*`` settings is malformed (:func:`http_settings`).
        OSError: the address cannot be bound (the port is in use, say).
    """
    import uvicorn  # noqa: PLC0415 - see the module docstring

    settings = http_settings()
    given = {
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
        "idle_timeout": idle_timeout,
        "max_connections": max_connections,
        "write_timeout": write_timeout,
        "max_buffer": max_buffer,
        "shutdown_timeout": shutdown_timeout,
    }
    bounds = {key: settings[key] if value is None else value for key, value in given.items()}
    limits = Limits(
        header_timeout=float(bounds["header_timeout"]),
        body_timeout=float(bounds["body_timeout"]),
        write_timeout=float(bounds["write_timeout"]),
        max_buffer=int(bounds["max_buffer"]),
        max_connections=int(bounds["max_connections"]),
    )
    evictions = Evictions()
    app = mcp_http_app(runtime, host=host, token=token, name=name, timeout=timeout)
    config = uvicorn.Config(
        app,
        http=guarded_protocol(limits, evictions),
        timeout_keep_alive=max(1, round(bounds["idle_timeout"])),  # uvicorn takes whole seconds
        # Connections accepted per turn of the loop (and the kernel's queue): few enough that those past
        # max_connections are closed before more descriptors are taken (2,048 at once ran out of them).
        backlog=128,
        log_config=None,  # the application's logging, not uvicorn's own
        access_log=False,
        server_header=False,
        lifespan="on",
        # A long call does not hold a stopping server for ever. (Annotated int; uvicorn hands it to asyncio.timeout.)
        timeout_graceful_shutdown=bounds["shutdown_timeout"],  # type: ignore[arg-type]
    )
    with _listen(host, port) as sock, _finishing_streams():
        async with runtime:
            if on_listening is not None:
                on_listening(_url(sock.getsockname()))
            try:
                await uvicorn.Server(config).serve(sockets=[sock])
            finally:
                evictions.flush()


@contextlib.contextmanager
def _finishing_streams() -> Iterator[None]:
    """While the block runs, a stopping server lets the calls in flight finish their event streams.

    sse-starlette, which writes the SDK's event streams, ends every one of them
    the moment uvicorn is told to stop: a call in flight was answered with an
    empty stream, its result lost. The shutdown timeout bounds them instead.
    """
    from sse_starlette.sse import AppStatus  # noqa: PLC0415 - installed with the MCP SDK, which writes with it

    drains = AppStatus.enable_automatic_graceful_drain
    AppStatus.enable_automatic_graceful_drain = False  # what its disable_automatic_graceful_drain() does
    try:
        yield
    finally:
        AppStatus.enable_automatic_graceful_drain = drains
