"""Calls at load on an MCP endpoint, each named by a tag, and what became of each: answered, or why not.

Two drivers, closed loops (each worker sends its next call when its last
one is answered):

* :func:`raw_calls`: HTTP/1.1 over asyncio streams, each worker on its own
  keep-alive connection, a ``tools/call`` as a bare ``POST`` (stateless HTTP
  needs no handshake), its answer read whole. As little client work per call
  as Python allows, so the figures are the server's.
* :func:`sdk_calls`: the MCP Python SDK's own client (``Client`` over
  ``streamable_http_client``), several sessions at once, as a host runs them.

Each call is an :class:`Outcome`. A call's tag is recorded by the load test's
plugin where it ran (``loadtools.py``): :func:`ran` counts the tags over
every replica's records, and :func:`lost_or_doubled` holds the answers
against them: a call answered ran exactly once, and no call ran twice.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "Call",
    "Outcome",
    "Summary",
    "lost_or_doubled",
    "ran",
    "raw_calls",
    "sdk_calls",
    "started",
    "summarize",
    "tags",
]


@dataclass(frozen=True, slots=True)
class Call:
    """One call to make: the tool's wire name and its arguments, whose ``tag`` names it."""

    tool: str
    arguments: dict[str, Any]

    @property
    def tag(self) -> str:
        """The call's name, unique in a run."""
        return str(self.arguments["tag"])


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of a call: answered (*error* None), or the error its client saw, and when."""

    tag: str
    started: float  # time.monotonic()
    seconds: float
    error: str | None = None
    #: The JSON-RPC error's code, when the client got one (an MCPError); None otherwise.
    code: int | None = None
    #: What the error's data says of whether the call ran: "no", "unknown", or None when it does not say.
    ran: str | None = None

    @property
    def answered(self) -> bool:
        """Whether the client got the tool's answer."""
        return self.error is None


# -- the raw driver ------------------------------------------------------------------------------------


def _head(host: str, port: int, path: str, token: str | None) -> str:
    """The head of every call's request, but its length."""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
    )
    return head + (f"Authorization: Bearer {token}\r\n" if token else "")


def _request(head: str, call: Call, ident: int) -> bytes:
    params = {"name": call.tool, "arguments": call.arguments}
    body = json.dumps({"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}).encode()
    return f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


async def _response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response: its status, its headers (names in lower case), its body."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                break
            chunks.append(chunk[:-2])
        return status, headers, b"".join(chunks)
    if "content-length" in headers:
        return status, headers, await reader.readexactly(int(headers["content-length"]))
    return status, headers, await reader.read()


def _judge(call: Call, status: int, body: bytes) -> tuple[str | None, int | None, str | None]:
    """The error of an answer to *call* (None if it is the tool's answer), its JSON-RPC code, and ``ran``."""
    text = body.decode("utf-8", "replace")
    message: Any = None
    if text.lstrip().startswith("{"):
        message = json.loads(text)
    else:
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1]) if data else None
    if not isinstance(message, dict):
        return f"HTTP {status}, not a JSON-RPC answer: {text[:200]!r}", None, None
    if "error" in message:
        error = message["error"]
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        return f"HTTP {status}: {error.get('message')}", error.get("code"), data.get("ran")
    result = message.get("result", {})
    if result.get("isError") or result.get("structuredContent", {}).get("result", "")[: len(call.tag)] != call.tag:
        return f"HTTP {status}, a wrong answer: {text[:300]!r}", None, None
    return None, None, None


async def raw_calls(
    url: str,
    calls: Iterable[Call],
    *,
    concurrency: int,
    token: str | None = None,
    until: float | None = None,
    on_answer: Callable[[Outcome], object] | None = None,
) -> list[Outcome]:
    """Make *calls* over *concurrency* keep-alive connections, until they run out or ``time.monotonic()`` is *until*.

    A connection that fails is made anew for the next call; the call it was
    carrying is an error (the driver never sends a call twice). *on_answer* is
    called with each outcome as it comes.
    """
    parts = urlsplit(url)
    host, port, path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
    head = _head(host, port, path, token)
    source = iter(calls)
    outcomes: list[Outcome] = []
    idents = itertools.count(1)

    def note(outcome: Outcome) -> None:
        outcomes.append(outcome)
        if on_answer is not None:
            on_answer(outcome)

    async def worker() -> None:
        reader: asyncio.StreamReader | None = None
        writer: asyncio.StreamWriter | None = None
        try:
            for call in source:
                if until is not None and time.monotonic() >= until:
                    return
                started = time.monotonic()
                try:
                    if writer is None:
                        reader, writer = await asyncio.open_connection(host, port)
                    assert reader is not None
                    writer.write(_request(head, call, next(idents)))
                    status, headers, body = await _response(reader)
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as error:
                    took = time.monotonic() - started
                    note(Outcome(call.tag, started, took, f"the connection ended without an answer: {error!r}"))
                    if writer is not None:
                        writer.close()
                    reader = writer = None
                    continue
                error_text, code, ran_text = _judge(call, status, body)
                note(Outcome(call.tag, started, time.monotonic() - started, error_text, code, ran_text))
                if headers.get("connection", "").lower() == "close":
                    writer.close()
                    reader = writer = None
        finally:
            if writer is not None:
                writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return outcomes


# -- the SDK's client ----------------------------------------------------------------------------------


async def sdk_calls(
    url: str,
    calls: Iterable[Call],
    *,
    sessions: int,
    token: str | None = None,
    until: float | None = None,
    mode: str = "auto",
    on_answer: Callable[[Outcome], object] | None = None,
) -> list[Outcome]:
    """Make *calls* over *sessions* sessions of the SDK's client at once (see :func:`raw_calls`).

    *mode* is the client's: ``auto`` (the 2026 protocol, each request standing
    alone) or ``legacy`` (the 2025 handshake). A session that cannot start
    (its server gone) is started again for the next call, that call counted as
    failed.
    """
    import httpx2  # noqa: PLC0415 - installed with the MCP SDK
    from mcp import Client  # noqa: PLC0415
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415

    source = iter(calls)
    outcomes: list[Outcome] = []
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    def note(outcome: Outcome) -> None:
        outcomes.append(outcome)
        if on_answer is not None:
            on_answer(outcome)

    async def session() -> None:
        while True:
            current: Call | None = None
            started = time.monotonic()
            try:
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
                    Client(streamable_http_client(url, http_client=http), mode=mode) as client,  # type: ignore[arg-type]
                ):
                    while until is None or time.monotonic() < until:
                        current = next(source, None)
                        if current is None:
                            return
                        started = time.monotonic()
                        try:
                            result = await client.call_tool(current.tool, current.arguments)
                        except MCPError as error:
                            data = error.data if isinstance(error.data, dict) else {}
                            took = time.monotonic() - started
                            note(Outcome(current.tag, started, took, error.message, error.code, data.get("ran")))
                            current = None
                            continue
                        took = time.monotonic() - started
                        got = result.structured_content or {}
                        if result.is_error or not str(got.get("result", "")).startswith(current.tag):
                            note(Outcome(current.tag, started, took, f"a wrong answer: {result!r}"[:300]))
                        else:
                            note(Outcome(current.tag, started, took))
                        current = None
                    return
            except Exception as error:  # the session's start (its server gone), or its transport
                if current is None:  # it could not start: the next call is not made, and counted as failed
                    current = next(source, None)
                    if current is None or (until is not None and time.monotonic() >= until):
                        return
                    error = RuntimeError(f"the session could not start: {error!r}")
                note(Outcome(current.tag, started, time.monotonic() - started, f"the session failed: {error!r}"))
                await asyncio.sleep(0.1)

    await asyncio.gather(*(session() for _ in range(sessions)))
    return outcomes


# -- what ran, and the figures -------------------------------------------------------------------------


def _lines(records: Path) -> Iterator[str]:
    for path in records.glob("*.log"):
        yield from path.read_text(encoding="utf-8").splitlines()


def ran(records: Path) -> Counter[str]:
    """How many times each tag ran to its end, over every process's records in *records* (``loadtools.py``)."""
    return Counter(line for line in _lines(records) if line and not line.startswith("+"))


def started(records: Path) -> set[str]:
    """The tags of the ``load.nap`` calls that started, over every process's records in *records*."""
    return {line[1:] for line in _lines(records) if line.startswith("+")}


def lost_or_doubled(outcomes: Sequence[Outcome], counts: Counter[str]) -> list[str]:
    """What breaks exactly-once: an answered call that did not run once, any call that ran more than once."""
    problems = [
        f"{outcome.tag}: answered, but ran {counts[outcome.tag]} times" for outcome in outcomes
        if outcome.answered and counts[outcome.tag] != 1
    ]  # fmt: skip
    problems += [f"{tag}: ran {count} times" for tag, count in counts.items() if count > 1]
    return problems


@dataclass(frozen=True, slots=True)
class Summary:
    """A run's figures: calls answered, errors, calls answered a second, and the answered calls' latencies."""

    answered: int
    errors: int
    per_second: float
    p50_ms: float
    p99_ms: float


def summarize(outcomes: Sequence[Outcome], seconds: float) -> Summary:
    """The figures of *outcomes*, made in *seconds*."""
    times = sorted(outcome.seconds for outcome in outcomes if outcome.answered)
    errors = sum(1 for outcome in outcomes if not outcome.answered)
    if not times:
        return Summary(0, errors, 0.0, float("nan"), float("nan"))
    cuts = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else [times[0]] * 99
    return Summary(len(times), errors, len(times) / seconds, cuts[49] * 1e3, cuts[98] * 1e3)


def tags(prefix: str, tool: str, **arguments: Any) -> Iterator[Call]:
    """Calls of *tool* with *arguments*, tagged ``<prefix>-0``, ``<prefix>-1``...: without end."""
    for serial in itertools.count():
        yield Call(tool, {"tag": f"{prefix}-{serial}", **arguments})
