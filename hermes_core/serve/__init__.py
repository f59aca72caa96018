"""A runtime's tools as an MCP server, over stdio or Streamable HTTP, on the official MCP Python SDK.

``hermesos serve`` runs it; :func:`mcp_server` builds the SDK's low-level
``Server`` for any :class:`~hermes_core.Runtime`, and :func:`serve_stdio` and
:func:`serve_http` run one. The protocol (both of the SDK's eras, the
handshake and the per-request envelope), the transports and cancellation are
the SDK's; what this module adds is what a client is shown and told:

* ``tools/list``: each tool under its wire name (:mod:`hermes_core._door._wire`),
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
  asked of the client's user (MCP elicitation): see :mod:`hermes_core.serve._calls`.
* Permissions are the runtime's: nothing a client sends grants anything.

The SDK is imported only by the functions that need it: :func:`mcp_tools`
(what ``hermesos export --format mcp`` prints) works without it.
"""

from __future__ import annotations

from hermes_core.serve._calls import elicit_approval
from hermes_core.serve._http import (
    BODY_TIMEOUT,
    DEFAULT_HOST,
    DEFAULT_PORT,
    HEADER_TIMEOUT,
    HEALTH_PATH,
    IDLE_TIMEOUT,
    MAX_BUFFER,
    MAX_CONNECTIONS,
    MCP_PATH,
    SHUTDOWN_TIMEOUT,
    WRITE_TIMEOUT,
    check_exposure,
    http_settings,
    is_loopback,
    mcp_http_app,
    serve_http,
)
from hermes_core.serve._server import ERROR_META_KEY, mcp_server, mcp_tools
from hermes_core.serve._stdio import serve_stdio, unreadable_answer

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
