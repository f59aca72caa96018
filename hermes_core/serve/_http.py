"""Streamable HTTP: the app, its bearer token and health check, and the server that runs it within bounds.

What one connection may hold, and for how long, is :mod:`hermes_core.serve._connections`'s.
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

from hermes_core._door._door import ARGUMENTS_MAX
from hermes_core._runtime._runtime import Runtime
from hermes_core.serve._connections import Evictions, Limits, guarded_protocol

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send


from hermes_core.serve._server import mcp_server

__all__ = [
    "BODY_TIMEOUT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HEADER_TIMEOUT",
    "HEALTH_PATH",
    "IDLE_TIMEOUT",
    "MAX_BUFFER",
    "MAX_CONNECTIONS",
    "MCP_PATH",
    "SHUTDOWN_TIMEOUT",
    "WRITE_TIMEOUT",
    "check_exposure",
    "http_settings",
    "is_loopback",
    "mcp_http_app",
    "serve_http",
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

_LOOPBACK_NAMES = frozenset({"localhost", "localhost."})


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
    from hermes_core._base._errors import InvalidDefinitionError  # noqa: PLC0415
    from hermes_core.config._settings import setting  # noqa: PLC0415

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
