"""An MCP server (the SDK's MCPServer) that reports progress, logs and asks its user: ``python people_server.py``.

It speaks the current protocol (2026-07-28), where a tool's question to the
user is an ``InputRequiredResult`` the client answers by calling again. With
``PEOPLE_LEGACY=1`` it refuses ``server/discover``, so a client falls back to
the handshake-era protocol (2025-11-25), where the question is an
``elicitation/create`` request sent to the client during the call.

Tools: ``work`` (progress and log messages), ``odd_progress`` (progress no
client could show as it is), ``delete`` (a yes-or-no question, no fields),
``subscribe`` (one boolean field), ``register`` (a field a person must type),
``visit`` (a URL, handshake-era only), ``hold`` (reports progress, then waits
until the file named by ``PEOPLE_GATE`` exists), ``stall`` (asks to be called
again, forever, with no question), ``crowd`` (nine questions at once) and
``sample`` (asks for a completion of the client's model), the last three of
the current protocol. ``PEOPLE_PID_DIR`` names a directory that
receives a file named after the server's pid.
"""

from __future__ import annotations

import os
import time
import warnings
from pathlib import Path
from typing import Annotated

import anyio
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    METHOD_NOT_FOUND,
    CreateMessageRequest,
    CreateMessageRequestParams,
    ElicitRequest,
    ElicitRequestFormParams,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
    JSONRPCRequest,
    SamplingMessage,
    TextContent,
)
from pydantic import BaseModel, Field

warnings.simplefilter("ignore")  # the SDK marks logging deprecated in the current protocol; it still sends it

server = MCPServer("people")


class Nothing(BaseModel):
    """No fields: a yes or a no."""


class Flag(BaseModel):
    agree: bool = Field(title="Subscribe", description="Send me the weekly digest")


class Person(BaseModel):
    name: str = Field(description="Your full name")


@server.tool()
async def work(steps: int, ctx: Context) -> str:
    """Do so many steps, reporting each as progress and as a log message."""
    await ctx.debug("starting")
    for step in range(1, steps + 1):
        await anyio.sleep(0.06)  # apart enough that a client keeping 20 reports a second keeps them all
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await ctx.info(f"step {step} done")
    await ctx.warning("all done")
    return f"{steps} steps"


@server.tool()
async def odd_progress(ctx: Context) -> str:
    """Report progress that goes backwards, below zero and against a total of zero, then a sane one."""
    await ctx.report_progress(-1)
    await anyio.sleep(0.06)
    await ctx.report_progress(5, 0, "x" * 10_000)
    await anyio.sleep(0.06)
    await ctx.report_progress(3)
    await anyio.sleep(0.06)
    await ctx.report_progress(10, 10, "done")
    return "odd"


def _delete_question(count: int) -> Elicit[Nothing]:
    return Elicit(f"Delete {count} files?", Nothing)


def _subscribe_question() -> Elicit[Flag]:
    return Elicit("Subscribe to the digest?", Flag)


def _register_question() -> Elicit[Person]:
    return Elicit("Who are you?", Person)


@server.tool()
async def delete(count: int, answer: Annotated[ElicitationResult[Nothing], Resolve(_delete_question)]) -> str:
    """Delete files, once the user says yes."""
    return f"delete: {answer.action}"


@server.tool()
async def subscribe(answer: Annotated[ElicitationResult[Flag], Resolve(_subscribe_question)]) -> str:
    """Subscribe to the digest, if the user agrees."""
    agreed = answer.data.agree if isinstance(answer, AcceptedElicitation) else None
    return f"subscribe: {answer.action} {agreed}"


@server.tool()
async def register(answer: Annotated[ElicitationResult[Person], Resolve(_register_question)]) -> str:
    """Register the user by name."""
    return f"register: {answer.action}"


@server.tool()
async def visit(ctx: Context) -> str:
    """Send the user to a web page (a URL-mode question)."""
    result = await ctx.elicit_url("Sign in to continue", "https://example.com/sign-in", "sign-in-1")
    return f"visit: {result.action}"


@server.tool()
async def hold(ctx: Context) -> str:
    """Say it is holding (progress 1), then wait until the gate file exists."""
    await ctx.report_progress(1, None, "holding")
    gate = Path(os.environ["PEOPLE_GATE"])
    deadline = time.monotonic() + 60
    while not gate.exists() and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    return "held"


@server.tool()
async def stall(ctx: Context) -> str | InputRequiredResult:
    """Ask to be called again, forever, with nothing to answer."""
    return InputRequiredResult(request_state=f"round-{ctx.request_state or ''}x")


@server.tool()
async def crowd() -> str | InputRequiredResult:
    """Ask nine questions at once."""
    ask = ElicitRequestFormParams(message="Again?", requested_schema={"type": "object", "properties": {}})
    return InputRequiredResult(input_requests={f"q{n}": ElicitRequest(params=ask) for n in range(9)})


@server.tool()
async def sample() -> str | InputRequiredResult:
    """Ask the client's model for a completion."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))
    asked = CreateMessageRequest(params=CreateMessageRequestParams(messages=[message], max_tokens=5))
    return InputRequiredResult(input_requests={"model": asked})


async def _serve_legacy() -> None:
    """Serve stdio, answering ``server/discover`` with "method not found" before the server sees it."""
    lowlevel = server._lowlevel_server  # the SDK's own stdio runner, with the probe taken out
    async with stdio_server() as (read, write):
        passed, received = anyio.create_memory_object_stream[SessionMessage | Exception](16)

        async def sift() -> None:
            async with passed:
                async for item in read:
                    message = item.message if isinstance(item, SessionMessage) else None
                    if isinstance(message, JSONRPCRequest) and message.method == "server/discover":
                        error = ErrorData(code=METHOD_NOT_FOUND, message="Method not found")
                        await write.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id=message.id, error=error)))
                        continue
                    await passed.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(sift)
            await lowlevel.run(received, write, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


if __name__ == "__main__":
    if os.environ.get("PEOPLE_PID_DIR"):
        Path(os.environ["PEOPLE_PID_DIR"], str(os.getpid())).write_text("")
    if os.environ.get("PEOPLE_LEGACY") == "1":
        anyio.run(_serve_legacy)
    else:
        server.run("stdio")
