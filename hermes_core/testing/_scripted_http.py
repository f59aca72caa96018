"""HTTP/1.1 for the scripted model: the little of it the SDK clients use, with bounds on what is read.

Each reader raises :class:`Refused` for a request it will not take, with the
status and message to answer it with; :func:`send` writes one JSON answer.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import IO, Any

__all__ = ["LINE_MAX", "Refused", "parse_json", "read_body", "read_headers", "read_request_line", "send"]

LINE_MAX = 16 * 1024  # the longest request or header line read
_HEADERS_MAX = 100  # the most header lines read
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    505: "HTTP Version Not Supported",
}


class Refused(Exception):  # noqa: N818 - a refusal answered over HTTP, never seen outside the scripted model
    """A request answered with an HTTP error, *status* and *message*; ``close`` ends the connection."""

    def __init__(self, status: int, message: str, *, close: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.close = close


# -- HTTP/1.1, the little of it the SDKs use ---------------------------------------------------------


def read_request_line(line: bytes) -> tuple[str, str, str]:
    """``(method, path, version)`` of a request line (the path without its query)."""
    if len(line) > LINE_MAX or not line.endswith(b"\n"):
        raise Refused(400, f"the request line is longer than {LINE_MAX:,} bytes", close=True)
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise Refused(400, "malformed request line", close=True)
    method, target, version = parts
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise Refused(505, f"{version} is not served; use HTTP/1.1", close=True)
    return method, target.partition("?")[0], version


def read_headers(stream: IO[bytes]) -> dict[str, str]:
    """The headers of a request, names in lower case."""
    headers: dict[str, str] = {}
    for _ in range(_HEADERS_MAX + 1):
        line = stream.readline(LINE_MAX + 1)
        if len(line) > LINE_MAX:
            raise Refused(431, f"a header line is longer than {LINE_MAX:,} bytes", close=True)
        if line in (b"\r\n", b"\n", b""):
            return headers
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            raise Refused(400, "malformed header line", close=True)
        headers[name.strip().lower()] = value.strip()
    raise Refused(431, f"more than {_HEADERS_MAX} header lines", close=True)


def read_body(stream: IO[bytes], headers: Mapping[str, str], most: int) -> bytes | None:
    """The body of a request (None if the client closed before sending it whole)."""
    if "transfer-encoding" in headers:
        raise Refused(411, "send the body with a Content-Length, not a Transfer-Encoding", close=True)
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise Refused(400, "Content-Length must be a number of bytes", close=True) from None
    if length < 0:
        raise Refused(400, "Content-Length must be a number of bytes", close=True)
    if length > most:
        raise Refused(
            413, f"the request body is {length:,} bytes; this scripted model reads at most {most:,}", close=True
        )
    raw = stream.read(length) if length else b""
    return raw if len(raw) == length else None


def parse_json(raw: bytes) -> Any:
    """The JSON value of a body, None for an empty one; a refusal for one that is not JSON."""
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise Refused(400, f"the request body is not JSON: {error}") from None
    except RecursionError:
        raise Refused(400, "the request body nests arrays and objects too deeply") from None


def send(connection: socket.socket, status: int, payload: Mapping[str, Any], request_id: str, *, close: bool) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        f"x-request-id: {request_id}",  # OpenAI's clients read this one,
        f"request-id: {request_id}",  # Anthropic's this one
    ]
    if status >= 400:
        head.append("x-should-retry: false")  # a scripted refusal is the same on every try
    if close:
        head.append("connection: close")
    connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
