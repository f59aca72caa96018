"""``hermesos serve``: the installed tools for MCP clients, over stdio or Streamable HTTP."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
from collections.abc import Iterator
from typing import Any

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS, Usage, add_common, add_grant, add_timeout
from hermes_core.cli._running import Terminated, while_open

_MCP_EXTRA = "pip install 'hermesos-core[mcp]'"

_HTTP_ONLY = (("--host", "host"), ("--port", "port"), ("--token-file", "token_file"), ("--token-env", "token_env"))


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token of ``serve --token-file`` or ``--token-env``: stripped, never empty; None if neither."""
    if args.token_file is not None:
        from hermes_core._base._errors import InvalidDefinitionError  # noqa: PLC0415 - serve --transport http only
        from hermes_core.config import read_token_file  # noqa: PLC0415

        shown = f"--token-file {shlex.quote(args.token_file)}"
        try:
            return read_token_file(args.token_file, shown)
        except InvalidDefinitionError as error:
            raise Usage(f"hermesos serve: error: {shown} {error.detail}") from None
    if args.token_env is not None:
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            raise Usage(f"hermesos serve: error: --token-env names {args.token_env}, which is not set or empty")
        return token
    return None


class _ServeLog:
    """What ``serve`` logs, on stderr: warnings and errors, with tracebacks only under --debug."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug

    def filter(self, record: Any) -> bool:
        if not self.debug:
            record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


@contextlib.contextmanager
def _serve_logging(debug: bool) -> Iterator[None]:
    """While serving, warnings and errors of every logger (the runtime's, the SDK's) go to stderr."""
    import logging  # noqa: PLC0415 - only serve logs

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("hermesos serve: %(levelname)s: %(message)s"))
    handler.addFilter(_ServeLog(debug))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:  # main() may be called again in this process (the tests do)
        root.removeHandler(handler)
        root.setLevel(level)


def _serve(args: argparse.Namespace) -> int:
    from hermes_core import serve  # noqa: PLC0415 - imports the MCP SDK only when it serves
    from hermes_core._base._errors import ToolError  # noqa: PLC0415
    from hermes_core._runtime._permissions import env_grants  # noqa: PLC0415

    if args.transport == "stdio":
        given = [flag for flag, name in _HTTP_ONLY if getattr(args, name) is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise Usage(f"hermesos serve: error: {' and '.join(given)} only {verb} to --transport http")
    host = serve.DEFAULT_HOST if args.host is None else args.host
    token = _token(args)
    if args.transport == "http":
        try:
            serve.check_exposure(host, token)
            serve.http_settings()  # the HERMESOS_SERVE_* bounds, checked before anything starts
        except ValueError as error:
            raise Usage(f"hermesos serve: error: {error}") from None
    try:
        # pydantic-core, under the SDK, imports datetime from Rust code, where a Ctrl-C landing in that import is a
        # panic (a Rust backtrace, status 1) instead of an interrupt; imported here first, it is only looked up.
        import datetime  # noqa: F401, PLC0415

        import mcp  # noqa: F401, PLC0415 - the extra's one requirement
    except ImportError:
        raise Usage(f"hermesos serve: error: serving over MCP needs the MCP SDK: {_MCP_EXTRA}") from None
    found = out.discover(args)
    if found.problems:
        out.report_problems(found.problems, args)
        if out.fatal(found):
            return PROBLEMS
    import anyio  # noqa: PLC0415 - installed with the MCP SDK

    port = serve.DEFAULT_PORT if args.port is None else args.port
    try:
        # A provider's ask is put to the client's user (MCP elicitation), where the client can be asked.
        runtime = found.runtime(
            grants=(*args.grant, *env_grants()), approver=serve.elicit_approval, lenient=args.lenient
        )
        serve.mcp_tools(runtime)  # two tools of one wire name: refused before any resource opens
    except ToolError as error:  # a malformed grant, two tools of one wire name: before anything is served
        return out.report(error, args)
    tools = out.count(len(runtime.tools), "tool")

    def listening(url: str) -> None:
        print(f"hermesos serve: serving {tools} at {url}", file=sys.stderr, flush=True)

    def run() -> int:
        if args.transport == "stdio":
            print(f"hermesos serve: serving {tools} over stdio", file=sys.stderr, flush=True)
            anyio.run(lambda: serve.serve_stdio(runtime, timeout=args.timeout))
            return OK
        try:
            anyio.run(
                lambda: serve.serve_http(
                    runtime, host=host, port=port, token=token, timeout=args.timeout, on_listening=listening
                )
            )
        except OSError as error:  # binding: uvicorn handles what happens to a connection afterwards
            reason = error.strerror or str(error)
            raise Usage(f"hermesos serve: error: cannot listen on {host} port {port}: {reason}") from None
        return OK

    with _serve_logging(args.debug):
        try:
            return while_open(runtime, args, run)
        except Terminated:
            return OK  # SIGTERM stops the server, as it stops uvicorn's: the runtime is closed by now


def _port(text: str) -> int:
    """A ``--port`` value: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 (any free port) to 65535, got {text!r}")
    return port


def add_parsers(subcommands: Any) -> None:
    """``serve``."""
    serve = subcommands.add_parser(
        "serve",
        help="serve the installed tools to MCP clients, over stdio or Streamable HTTP",
        description="Serve the installed tools as an MCP server (needs the mcp extra: "
        f"{_MCP_EXTRA}). Tools go by their wire names (fs.read is fs_read); a tool error is a result "
        "with isError and the error's code. Over stdio (the default), an MCP client starts this command. "
        "Over HTTP, the server is stateless (each request stands alone, so several processes can serve "
        "behind a load balancer); an address other than a loopback one needs a bearer token, which every "
        "request must then carry.",
        epilog="Exit statuses: 0 ok (stdin ended, or the server was stopped), 1 a plugin is broken, 2 usage "
        "(no MCP SDK, no token for a public address, an address that cannot be bound, a malformed --grant), "
        "7 INVALID_DEFINITION (two tools with the same wire name, a malformed grant in HERMESOS_GRANTS), 130 "
        "interrupted.",
    )
    add_common(serve, json=False)
    serve.add_argument(
        "--transport", choices=("stdio", "http"), default="stdio", help="stdio (the default) or http (Streamable HTTP)"
    )
    serve.add_argument("--host", metavar="HOST", help="http: the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=_port, metavar="PORT", help="http: the port (default: 8000; 0: any free port)")
    tokens = serve.add_mutually_exclusive_group()
    tokens.add_argument("--token-file", metavar="PATH", help="http: read the bearer token clients must send from PATH")
    tokens.add_argument(
        "--token-env", metavar="VARIABLE", help="http: read the bearer token clients must send from VARIABLE"
    )
    add_grant(serve)
    add_timeout(serve, "the most seconds a call may take (default: each tool's own limit, if any)")
    serve.add_argument(
        "--lenient",
        action="store_true",
        help="repair a call's input where that is unambiguous and lossless ('5' for an integer, 'true' for a "
        "boolean...), telling the client what was assumed in one line after the result; a tool's own choice wins",
    )
    serve.set_defaults(run=_serve, json=False)
