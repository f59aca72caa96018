"""The ``hermesos`` command: list, inspect, call, serve and export the tools; install, write, diagnose plugins.

``main(argv) -> int`` is a plain function: the console script and
``python -m hermes_core`` call it, and so do the tests. It holds no business
logic: each command asks :mod:`hermes_core._plugins`, the runtime or pip, and
formats the answer.

Exit statuses (stable; see ``EXIT_CODES`` for 3 to 8 and 10):

====  ============================================================
0     success
1     a plugin is broken: ``check`` found problems, ``call``, ``serve`` or
      ``export`` refused to start, ``tools list`` could not list every tool
      (or a plugin reported a problem), ``install`` installed a broken plugin,
      a plugin's resource failed to open (``call``, ``serve``) or to close
      after a call that succeeded
2     usage error: unknown command or option, input that is not a JSON
      value (or more than 16 MiB of it on stdin), ``uninstall hermesos-core``,
      ``new plugin`` with a bad name or a directory in use, ``serve`` without
      the MCP SDK, without a token off loopback, or on a port in use
3     ``TOOL_NOT_FOUND``
4     ``INPUT_INVALID``
5     ``PERMISSION_DENIED``
6     ``OUTPUT_INVALID``
7     ``INVALID_DEFINITION``
8     ``SCHEMA_INVALID``
9     ``install`` or ``uninstall``: pip failed, or is missing
10    ``TOOL_FAILED``: the tool's handler raised or ran out of time
130   interrupted (Ctrl-C, or a plugin raised ``KeyboardInterrupt``):
      one line on stderr, no traceback
143   ``call`` terminated (SIGTERM), its runtime closed first; ``serve``
      stops on SIGTERM with 0
====  ============================================================

``call`` and ``serve`` open the runtime (its plugins' resources) before the
first call and close it on every way out: the call's end, a tool error,
Ctrl-C, SIGTERM, a stdio client going away.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import shlex
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal, NoReturn

from hermes_core._errors import (
    ErrorCode,
    PermissionDeniedError,
    ToolError,
    ToolFailedError,
    ToolNotFoundError,
    shorten,
)
from hermes_core._version import __version__

if TYPE_CHECKING:
    from hermes_core._plugins import PluginOrigin, PluginProblem, PluginSet
    from hermes_core._runtime import ResourceError, Runtime

__all__ = ["EXIT_CODES", "STDIN_LIMIT", "main"]

#: The exit status of ``hermesos call`` for each error code.
EXIT_CODES: dict[ErrorCode, int] = {
    ErrorCode.TOOL_NOT_FOUND: 3,
    ErrorCode.INPUT_INVALID: 4,
    ErrorCode.PERMISSION_DENIED: 5,
    ErrorCode.OUTPUT_INVALID: 6,
    ErrorCode.INVALID_DEFINITION: 7,
    ErrorCode.SCHEMA_INVALID: 8,
    ErrorCode.TOOL_FAILED: 10,  # 9 is pip's
}
_OK, _PROBLEMS, _USAGE, _PIP_FAILED, _INTERRUPTED, _TERMINATED = 0, 1, 2, 9, 130, 143
_CORE = "hermesos-core"
# The variables are named here rather than imported: --help and --version import nothing heavy.
_GRANTS_ENV, _DISABLE_ENV = "HERMESOS_GRANTS", "HERMESOS_DISABLE_PLUGINS"
# A requirement as pip takes it starts with the distribution's name (PEP 508).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class _Usage(Exception):  # noqa: N818 - control flow inside this module
    """A usage error found after parsing, such as input that is not a JSON value."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the main thread is, so that ``call`` and ``serve`` close the runtime on the way out."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise _Usage(f"{self.prog}: {message}")


class _Style:
    """ANSI colour, only on a terminal and never with NO_COLOR set (https://no-color.org)."""

    def __init__(self, stream: IO[str]) -> None:
        self.on = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    def bold(self, text: str) -> str:
        return self(text, "1")

    def dim(self, text: str) -> str:
        return self(text, "2")

    def red(self, text: str) -> str:
        return self(text, "31")

    def green(self, text: str) -> str:
        return self(text, "32")

    def yellow(self, text: str) -> str:
        return self(text, "33")


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _count(number: int, noun: str) -> str:
    """*number* and *noun*, agreeing: ``1 tool``, ``0 tools``, ``2 tools``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _summary(text: str) -> str:
    """The first sentence of a description's first line, for one-line listings."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    sentence, stop, _ = line.partition(". ")
    return sentence + "." if stop else line


def _discover(args: argparse.Namespace) -> PluginSet:
    from hermes_core._plugins import discover_plugins  # noqa: PLC0415 - --version and --help never load plugins

    return discover_plugins(disable=args.disable, strict=False)


# -- what an operator can do about it ---------------------------------------------------


def _cause(origin: PluginOrigin, message: str) -> str:
    """The first line of a problem's *message*, without the plugin origin it starts with."""
    first = message.splitlines()[0] if message else ""
    return first.removeprefix(str(origin)).lstrip(": ")


def _with(variable: str, names: Iterable[str]) -> str:
    """``VARIABLE=value``: *names* added to what the variable already holds, ready to paste into a shell."""
    held = [part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()]
    return f"{variable}={shlex.quote(','.join(dict.fromkeys([*held, *names])))}"


def _broken_line(origin: PluginOrigin, message: str) -> str:
    """One line naming a broken plugin (distribution, version, entry point) and what is wrong with it."""
    return f"{_Style(sys.stderr).red('error')}: broken {origin}: {_cause(origin, message)}"


def _skip_hint(names: Sequence[str]) -> str:
    """How to start without the broken plugins *names*, and where to read more: the loader's own remedy."""
    from hermes_core._plugins import remedy  # noqa: PLC0415 - only a broken plugin needs it

    return remedy(*names)


def _report_broken(problems: Sequence[PluginProblem], args: argparse.Namespace) -> None:
    """On stderr: one line for each problem, its traceback with --debug, then how to skip the plugins."""
    for problem in problems:
        print(_broken_line(problem.origin, problem.message), file=sys.stderr)
        if args.debug:
            traceback.print_exception(problem.error.__cause__ or problem.error, file=sys.stderr)
    names = list(dict.fromkeys(problem.origin.distribution for problem in problems))
    print(_skip_hint(names), file=sys.stderr)


def _warning_line(problem: PluginProblem) -> str:
    """One line for a problem a plugin reported (hermes_problems): the plugin is loaded, and something is missing."""
    return f"{_Style(sys.stderr).yellow('warning')}: {problem.message}"


def _report_problems(problems: Sequence[PluginProblem], args: argparse.Namespace) -> None:
    """On stderr: a warning line for each problem a plugin reported, then the broken plugins (see _report_broken)."""
    for problem in problems:
        if not problem.fatal:
            print(_warning_line(problem), file=sys.stderr)
    broken = [problem for problem in problems if problem.fatal]
    if broken:
        _report_broken(broken, args)


def _fatal(found: PluginSet) -> bool:
    """Whether a plugin is broken (a fatal problem); a problem a plugin reported leaves it loaded."""
    return any(problem.fatal for problem in found.problems)


def _permission_hint(error: PermissionDeniedError, args: argparse.Namespace) -> str:
    """How to grant what was denied, or, when it was granted, that a provider denied it."""
    from hermes_core._permissions import StaticGrants, env_grants  # noqa: PLC0415 - only a denied call needs it

    if StaticGrants((*args.grant, *env_grants())).allows(error.permission):
        return (
            f"{error.permission} is granted, but a permission provider denied it (a deny wins over any grant); "
            "'hermesos plugins list' shows the plugins that provide permissions."
        )
    return f"To grant it: --grant {shlex.quote(error.permission)} or {_with(_GRANTS_ENV, [error.permission])}"


def _report(error: ToolError, args: argparse.Namespace, hint: str | None = None) -> int:
    if args.json:
        print(json.dumps(error.to_dict(), ensure_ascii=False), file=sys.stderr)
    else:
        style = _Style(sys.stderr)
        print(f"{style.red(error.code.value)}: {error}", file=sys.stderr)
        if hint:
            print(hint, file=sys.stderr)
    cause = error.__cause__
    if args.debug and isinstance(error, ToolFailedError) and error.reason != "timeout" and cause is not None:
        # What the handler raised, with its own causes: the traceback the runtime logs. (A timeout's
        # cause is the runtime's own signal, whose traceback says nothing about the tool.)
        traceback.print_exception(cause, file=sys.stderr)
    return EXIT_CODES[error.code]


# -- commands ---------------------------------------------------------------------------


def _tools_list(args: argparse.Namespace) -> int:
    found = _discover(args)
    rows: list[dict[str, Any]] = [
        {
            "name": tool.name,
            "version": tool.version,
            "distribution": plugin.origin.distribution,
            "permissions": list(tool.permissions),
            "description": _summary(tool.description),
        }
        for plugin in found.plugins
        if plugin.ok
        for tool in plugin.tools
    ]
    broken = [
        {"distribution": p.origin.distribution, "version": p.origin.version, "entry_point": p.origin.entry_point}
        for p in found.plugins
        if not p.ok and not p.disabled
    ]
    warnings = [
        {
            "distribution": problem.origin.distribution,
            "version": problem.origin.version,
            "entry_point": problem.origin.entry_point,
            "message": problem.message,
        }
        for problem in found.problems
        if not problem.fatal
    ]
    status = _PROBLEMS if found.problems else _OK
    if args.json:
        _print_json({"tools": rows, "broken_plugins": broken, "warnings": warnings})
        return status
    style = _Style(sys.stdout)
    cells = [
        (row["name"], row["version"], row["distribution"], f"[{','.join(row['permissions']) or '-'}]") for row in rows
    ]
    widths = [max((len(cell[i]) for cell in cells), default=0) for i in range(4)]
    for (name, version, distribution, permissions), row in zip(cells, rows, strict=True):
        print(
            f"{style.bold(name.ljust(widths[0]))}  {version.ljust(widths[1])}  {distribution.ljust(widths[2])}  "
            f"{permissions.ljust(widths[3])}  {row['description']}"
        )
    if found.problems:
        sys.stdout.flush()  # the listing first, then what is missing from it, when both go to one terminal
        _report_problems(found.problems, args)
    if not rows and not broken:
        print("no tools installed: hermesos install a plugin, such as hermesos-fs", file=sys.stderr)
    return status


def _plugins_list(args: argparse.Namespace) -> int:
    found = _discover(args)
    rows: list[dict[str, Any]] = [
        {
            "distribution": p.origin.distribution,
            "version": p.origin.version,
            "entry_point": p.origin.entry_point,
            "module": p.origin.value,
            "state": "disabled" if p.disabled else "ok" if p.ok else "broken",
            "tools": [tool.name for tool in p.tools],
            "schemas": list(p.schemas),
            "providers": [type(provider).__name__ for provider in p.providers],
            "problems": [problem.message for problem in p.problems],
        }
        for p in found.plugins
    ]
    if args.json:
        _print_json({"plugins": rows})
        return _OK
    style = _Style(sys.stdout)
    for plugin, row in zip(found.plugins, rows, strict=True):
        state = {"ok": style.green, "broken": style.red}.get(row["state"], style.dim)(row["state"])
        line = f"{style.bold(row['distribution'])} {row['version']}  {row['entry_point']} = {row['module']}  {state}"
        if plugin.ok:
            counts = [
                _count(len(row["tools"]), "tool"),
                _count(len(row["schemas"]), "schema"),
                _count(len(row["providers"]), "provider"),
            ]
            line += "  " + ", ".join(counts)
        print(line)
        for problem in plugin.problems:
            label = style.red("problem") if problem.fatal else style.yellow("warning")
            print(f"  {label}: {_cause(problem.origin, problem.message)}")
    if not rows:
        print("no plugins installed", file=sys.stderr)
    return _OK


def _tools_show(args: argparse.Namespace) -> int:
    found = _discover(args)
    tool = next((t for t in found.tools if t.name == args.name), None)
    if tool is None:
        from hermes_core._names import suggest  # noqa: PLC0415 - only a mistyped name needs it

        status = _report(ToolNotFoundError(args.name, suggest(args.name, [t.name for t in found.tools])), args)
        if found.problems and not args.json:
            _report_problems(found.problems, args)  # the tool may be one a broken plugin would have contributed
        return status
    origin = found.origin(tool.name)
    data = {
        "name": tool.name,
        "description": tool.description,
        "version": tool.version,
        "permissions": list(tool.permissions),
        "distribution": origin.distribution if origin else None,
        "distribution_version": origin.version if origin else None,
        "input_schema": tool.input.json_schema(defs=found.schemas),
        "output_schema": tool.output.json_schema(defs=found.schemas),
    }
    if args.json:
        _print_json(data)
        return _OK
    style = _Style(sys.stdout)
    print(f"{style.bold(tool.name)} {tool.version}")
    if origin:
        print(style.dim(f"from {origin.distribution} {origin.version} (entry point {origin.entry_point})"))
    print(f"permissions: {', '.join(tool.permissions) or 'none'}\n")
    print(tool.description.strip(), end="\n\n")
    print(style.bold("input schema:"))
    print(json.dumps(data["input_schema"], indent=2, ensure_ascii=False), end="\n\n")
    print(style.bold("output schema:"))
    print(json.dumps(data["output_schema"], indent=2, ensure_ascii=False))
    return _OK


#: The most ``call -`` reads from stdin: 16 MiB, far above any tool input, far below a machine's memory.
STDIN_LIMIT = 16 * 1024 * 1024


def _not_json(problem: str) -> _Usage:
    return _Usage(f"hermesos call: error: the input is not valid JSON: {problem}")


def _bytes(size: int) -> str:
    """A size for a message: ``16 MiB``, or ``100 bytes`` when it is not a whole number of MiB."""
    mib, rest = divmod(size, 1024 * 1024)
    return f"{mib} MiB" if mib and not rest else f"{size} bytes"


def _read_stdin() -> str:
    """The input from stdin: at most :data:`STDIN_LIMIT` bytes of UTF-8, or a usage error."""
    stream = getattr(sys.stdin, "buffer", None)  # a text stream without one (a test's StringIO) is read as text
    data: bytes | str = sys.stdin.read(STDIN_LIMIT + 1) if stream is None else stream.read(STDIN_LIMIT + 1)
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > STDIN_LIMIT:
        raise _Usage(
            f"hermesos call: error: the input on stdin is larger than {_bytes(STDIN_LIMIT)}, "
            "the most 'hermesos call -' reads"
        )
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _not_json(f"it is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})") from None


def _constant(name: str) -> NoReturn:
    """Refuse the ``NaN``, ``Infinity`` and ``-Infinity`` that Python's json module accepts: JSON has none."""
    raise _not_json(f"{name} is not a JSON value (JSON numbers are finite)")


def _integer(text: str) -> int:
    """An integer of the input; one with more digits than Python converts is a usage error, not a traceback."""
    try:
        return int(text)
    except ValueError:
        raise _Usage(
            f"hermesos call: error: the input holds an integer of {len(text.lstrip('-'))} digits, "
            f"more than the {sys.get_int_max_str_digits()} this Python reads"
        ) from None


def _float(text: str) -> float:
    """A number of the input with a fraction or exponent; one too large for a float is a usage error."""
    number = float(text)
    if math.isinf(number):
        raise _Usage(
            f"hermesos call: error: the input holds the number {shorten(text, 40)}, too large for a 64-bit float"
        )
    return number


def _read_input(text: str) -> Any:
    """Parse the call's input, or raise a usage error of one line (naming the line and column where it can)."""
    try:
        return json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as error:
        raise _not_json(f"{error.msg} at line {error.lineno}, column {error.colno}") from None
    except RecursionError:
        raise _Usage("hermesos call: error: the input nests arrays and objects too deeply to read") from None


def _call(args: argparse.Namespace) -> int:
    from hermes_core._permissions import env_grants  # noqa: PLC0415 - only commands that need plugins load them

    if args.input == "-":
        source = _read_stdin()
    elif args.input is None:
        source = "{}"
    else:
        source = args.input
    value = _read_input(source)
    # Strict as load_runtime is, but every broken plugin is reported, each on one line.
    found = _discover(args)
    if _fatal(found):
        _report_problems(found.problems, args)
        return _PROBLEMS
    try:
        runtime = found.runtime(grants=(*args.grant, *env_grants()))
    except ToolError as error:
        return _report(error, args)
    limit = {} if args.timeout is None else {"timeout": args.timeout}

    def call() -> int:
        try:
            output = runtime.call_sync(args.tool, value, **limit)
        except PermissionDeniedError as error:
            return _report(error, args, None if args.json else _permission_hint(error, args))
        except ToolNotFoundError as error:
            status = _report(error, args)
            if found.problems and not args.json:
                _report_problems(found.problems, args)  # a plugin said what it could not load: the tool, maybe
            return status
        except ToolError as error:
            return _report(error, args)
        _print_json(output)
        return _OK

    try:
        return _while_open(runtime, args, call)
    except _Terminated:
        print("hermesos: terminated", file=sys.stderr)
        return _TERMINATED


# -- the runtime's resources: opened before the first call, closed on every way out ------


@contextlib.contextmanager
def _terminate_raises() -> Iterator[None]:
    """While the block runs, SIGTERM raises :class:`_Terminated` in the main thread, as Ctrl-C raises its own.

    Python's own SIGTERM ends the process where it stands, and no ``finally``
    runs: a plugin's server subprocess would outlive it.
    """
    import signal  # noqa: PLC0415 - only call and serve need it
    import threading  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread():  # main() called from a thread: no signals
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _resource_failed(error: ResourceError, args: argparse.Namespace) -> int:
    """One line on stderr for a resource that failed to open or close, naming its plugin; with --debug, the cause."""
    print(f"{_Style(sys.stderr).red('error')}: {error}", file=sys.stderr)
    if args.debug and error.__cause__ is not None:
        traceback.print_exception(error.__cause__, file=sys.stderr)
    return _PROBLEMS


def _while_open(runtime: Runtime, args: argparse.Namespace, work: Callable[[], int]) -> int:
    """Run *work* with *runtime* open; its status, or 1 if it succeeded and a resource then failed to close.

    The runtime is closed on every way out of *work*: its return, an
    exception, Ctrl-C, SIGTERM (raised as :class:`_Terminated`).
    """
    from hermes_core._runtime import ResourceError  # noqa: PLC0415 - --version and --help import nothing heavy

    with _terminate_raises():
        try:
            runtime.open()
        except ResourceError as error:
            return _resource_failed(error, args)
        closed = False
        try:
            status = work()
        finally:
            try:
                runtime.close()
                closed = True
            except ResourceError as error:  # reported, never hiding what ended the work
                _resource_failed(error, args)
    return status if closed or status != _OK else _PROBLEMS


# -- serve and export: the tools for MCP clients and model APIs ---------------------------

_MCP_EXTRA = "pip install 'hermesos-core[mcp]'"
_HTTP_ONLY = (("--host", "host"), ("--port", "port"), ("--token-file", "token_file"), ("--token-env", "token_env"))


def _token(args: argparse.Namespace) -> str | None:
    """The bearer token of ``serve --token-file`` or ``--token-env``: stripped, never empty; None if neither."""
    if args.token_file is not None:
        try:
            with open(args.token_file, encoding="utf-8") as file:
                token = file.read(64 * 1024).strip()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            raise _Usage(
                f"hermesos serve: error: --token-file {shlex.quote(args.token_file)} cannot be read: {reason}"
            ) from None
        if not token:
            raise _Usage(f"hermesos serve: error: --token-file {shlex.quote(args.token_file)} is empty")
        return token
    if args.token_env is not None:
        token = os.environ.get(args.token_env, "").strip()
        if not token:
            raise _Usage(f"hermesos serve: error: --token-env names {args.token_env}, which is not set or empty")
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
    from hermes_core._permissions import env_grants  # noqa: PLC0415

    if args.transport == "stdio":
        given = [flag for flag, name in _HTTP_ONLY if getattr(args, name) is not None]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise _Usage(f"hermesos serve: error: {' and '.join(given)} only {verb} to --transport http")
    host = serve.DEFAULT_HOST if args.host is None else args.host
    token = _token(args)
    if args.transport == "http":
        try:
            serve.check_exposure(host, token)
            serve.http_settings()  # the HERMESOS_SERVE_* bounds, checked before anything starts
        except ValueError as error:
            raise _Usage(f"hermesos serve: error: {error}") from None
    try:
        import mcp  # noqa: F401, PLC0415 - the extra's one requirement
    except ImportError:
        raise _Usage(f"hermesos serve: error: serving over MCP needs the MCP SDK: {_MCP_EXTRA}") from None
    found = _discover(args)
    if found.problems:
        _report_problems(found.problems, args)
        if _fatal(found):
            return _PROBLEMS
    import anyio  # noqa: PLC0415 - installed with the MCP SDK

    port = serve.DEFAULT_PORT if args.port is None else args.port
    try:
        runtime = found.runtime(grants=(*args.grant, *env_grants()))
        serve.mcp_tools(runtime)  # two tools of one wire name: refused before any resource opens
    except ToolError as error:  # a malformed grant, two tools of one wire name: before anything is served
        return _report(error, args)
    count = _count(len(runtime.tools), "tool")

    def listening(url: str) -> None:
        print(f"hermesos serve: serving {count} at {url}", file=sys.stderr, flush=True)

    def run() -> int:
        if args.transport == "stdio":
            print(f"hermesos serve: serving {count} over stdio", file=sys.stderr, flush=True)
            anyio.run(lambda: serve.serve_stdio(runtime, timeout=args.timeout))
            return _OK
        try:
            anyio.run(
                lambda: serve.serve_http(
                    runtime, host=host, port=port, token=token, timeout=args.timeout, on_listening=listening
                )
            )
        except OSError as error:  # binding: uvicorn handles what happens to a connection afterwards
            reason = error.strerror or str(error)
            raise _Usage(f"hermesos serve: error: cannot listen on {host} port {port}: {reason}") from None
        return _OK

    with _serve_logging(args.debug):
        try:
            return _while_open(runtime, args, run)
        except _Terminated:
            return _OK  # SIGTERM stops the server, as it stops uvicorn's: the runtime is closed by now


def _port(text: str) -> int:
    """A ``--port`` value: 0 (any free port) to 65535."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 (any free port) to 65535, got {text!r}")
    return port


#: What ``hermesos export --format`` writes, each as the API's ``tools=`` (or MCP's ``tools/list``) takes it.
EXPORT_FORMATS = ("openai", "openai-responses", "openai-strict", "anthropic", "mcp")


def _export(args: argparse.Namespace) -> int:
    from hermes_core.adapters import AnthropicTools, OpenAITools  # noqa: PLC0415 - only export needs them
    from hermes_core.serve import mcp_tools  # noqa: PLC0415 - its SDK-free part

    found = _discover(args)
    if _fatal(found):
        _report_problems(found.problems, args)
        return _PROBLEMS
    try:
        runtime = found.runtime()
        if args.format == "mcp":
            definitions = mcp_tools(runtime)
        elif args.format == "anthropic":
            definitions = AnthropicTools(runtime).definitions()
        else:
            api: Literal["chat", "responses"] = "responses" if args.format == "openai-responses" else "chat"
            definitions = OpenAITools(runtime, api=api, strict=args.format == "openai-strict").definitions()
    except ToolError as error:
        return _report(error, args)
    _print_json(definitions)
    return _OK


def _check_report(found: PluginSet) -> dict[str, Any]:
    """What ``check`` reports, as JSON data: how many plugins, how many healthy, every problem."""
    return {
        "plugins": len(found.plugins),
        "healthy": sum(1 for p in found.plugins if p.ok),
        "problems": [
            {
                "distribution": p.origin.distribution,
                "version": p.origin.version,
                "entry_point": p.origin.entry_point,
                "error": type(p.error).__name__,
                "message": p.message,
                "fatal": p.fatal,
            }
            for p in found.problems
        ],
    }


def _check(args: argparse.Namespace) -> int:
    if args.report_progress:
        return _check_worker(args)
    if args.timeout is None:
        report = _check_report(_discover(args))
    else:
        try:
            report = _check_stopping(args)
        except _WorkerFailed as failed:
            print(f"hermesos check: error: {failed}", file=sys.stderr)
            return _PROBLEMS
    problems = report["problems"]
    if args.json:
        _print_json(report)
        return _PROBLEMS if problems else _OK
    style = _Style(sys.stdout)
    for problem in problems:
        label = style.red("problem") if problem.get("fatal", True) else style.yellow("warning")
        print(f"{label}: {problem['message']}")
    summary = f"{_count(report['plugins'], 'plugin')}, {report['healthy']} healthy, {_count(len(problems), 'problem')}"
    print(style.red(summary) if problems else style.green(summary))
    return _PROBLEMS if problems else _OK


# -- check --timeout: discovery in a worker process, which can be stopped ------------------
#
# A hung import cannot be interrupted in the process running it, so 'check --timeout' runs
# 'check --json' in a new process (the worker) and watches it. The worker reports each plugin's
# steps (its import, each hook: plugins.py logs them) on stderr as they begin; a plugin that
# has not finished within the limit is the one the worker is on. It is stopped, reported, and
# the worker runs again without that distribution, until a run finishes.

_PROGRESS = "hermesos-progress "  # the prefix of the worker's progress lines on its stderr


class _WorkerFailed(Exception):  # noqa: N818 - control flow inside this module
    """The worker stopped before any plugin, so no plugin can be blamed."""


def _check_worker(args: argparse.Namespace) -> int:
    """The worker: each plugin's steps on stderr as they begin, then the report as JSON on stdout."""
    import faulthandler  # noqa: PLC0415 - only the worker needs these
    import logging  # noqa: PLC0415
    import signal  # noqa: PLC0415

    class Progress(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            origin, step = getattr(record, "plugin", None), getattr(record, "step", None)
            if origin is None:
                return
            event = {
                "distribution": origin.distribution,
                "version": origin.version,
                "entry_point": origin.entry_point,
                "module": origin.value,
                "step": step,
            }
            os.write(2, (_PROGRESS + json.dumps(event) + "\n").encode())  # unbuffered: it may be the last

    log = logging.getLogger("hermes_core._plugins")
    log.addHandler(Progress())
    log.setLevel(logging.DEBUG)
    if hasattr(signal, "SIGUSR1"):  # with --debug, the watcher asks where a stopped plugin was stuck
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # The report gets stdout to itself: what the plugins print goes to stderr, which the watcher passes on.
    sys.stdout.flush()
    report_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    report = _check_report(_discover(args))
    sys.stdout.flush()
    report_stream.write(json.dumps(report, ensure_ascii=False) + "\n")
    report_stream.flush()
    sys.stderr.flush()
    # Now, not at interpreter exit: a thread a plugin left running must not keep the worker alive.
    os._exit(_PROBLEMS if report["problems"] else _OK)


def _progress(line: str) -> dict[str, Any] | None:
    """The worker's progress event on *line*, if any; the rest of the line, what a plugin printed, passes on."""
    at = line.find(_PROGRESS)  # not always at the start: a plugin may have printed part of a line
    if at < 0:
        sys.stderr.write(line)
        return None
    sys.stderr.write(line[:at])
    try:
        event: dict[str, Any] = json.loads(line[at + len(_PROGRESS) :])
    except ValueError:  # cut short by the worker being killed
        return None
    return event


def _duration(seconds: float) -> str:
    return "1 second" if seconds == 1 else f"{seconds:g} seconds"


def _check_stopping(args: argparse.Namespace) -> dict[str, Any]:
    """``check`` in a worker, each plugin held to ``args.timeout``; a plugin stopped is a problem."""
    from hermes_core._plugins import canonicalize_name  # noqa: PLC0415 - only check needs it

    skip = list(args.disable)
    stopped: list[dict[str, Any]] = []
    while True:
        report, event, why = _run_worker(args, skip)
        if report is not None:
            break
        if event is None:
            raise _WorkerFailed(f"the process checking the plugins {why} before it reached any plugin")
        origin = _origin(event)
        stopped.append(
            {
                "distribution": origin.distribution,
                "version": origin.version,
                "entry_point": origin.entry_point,
                "error": "PluginLoadError",
                "message": f"{origin}: {event['step']} {why}",
                "fatal": True,
            }
        )
        skip.append(origin.distribution)
    # In the order discovery reports problems: by distribution, then entry point.
    problems = sorted(
        [*report["problems"], *stopped], key=lambda p: (canonicalize_name(p["distribution"]), p["entry_point"])
    )
    return {**report, "problems": problems}


def _run_worker(args: argparse.Namespace, skip: list[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str]:
    """Run the worker once: (its report, None, "") or, when it was stopped or ended, (None, its last event, why)."""
    import queue  # noqa: PLC0415 - only check --timeout runs a worker
    import subprocess  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    # -P: the current directory is not put first on sys.path, as it is not for the hermesos script.
    argv = [sys.executable, "-P", "-m", "hermes_core", "check", "--json", "--report-progress"]
    argv += [f"--disable={name}" for name in skip]
    worker = subprocess.Popen(  # noqa: S603 - argv, no shell
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8", errors="replace"
    )
    lines: queue.Queue[str | None] = queue.Queue()  # the worker's stderr, line by line; None at its end
    output: list[str] = []

    def pump_stderr(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump_stderr, args=(worker.stderr,), daemon=True).start()
    # Read as it comes: a report larger than the pipe holds would otherwise block the worker.
    reading = threading.Thread(target=lambda stream: output.append(stream.read()), args=(worker.stdout,))
    reading.daemon = True
    reading.start()
    event: dict[str, Any] | None = None
    deadline = time.monotonic() + args.timeout
    try:
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                _stop(worker, lines, event if args.debug else None)
                return None, event, f"did not finish within {_duration(args.timeout)}; check stopped it"
            if line is None:
                break
            step = _progress(line)
            if step is None:
                continue
            if event is None or (step["distribution"], step["entry_point"]) != (
                event["distribution"],
                event["entry_point"],
            ):
                deadline = time.monotonic() + args.timeout  # each plugin has the whole limit
            event = step
        status = worker.wait()
        reading.join(5)  # the worker has exited: its stdout is at its end, unless a child of it holds it
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    try:
        report: dict[str, Any] = json.loads(output[0])
    except (IndexError, ValueError):
        return None, event, f"ended the process checking the plugins (exit status {status})"
    return report, None, ""


def _stop(worker: Any, lines: Any, event: dict[str, Any] | None) -> None:
    """Kill the worker; given the *event* it is stuck on (--debug), first print where its threads are."""
    import queue  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import time  # noqa: PLC0415

    if event is not None and hasattr(signal, "SIGUSR1"):
        print(f"where {_origin(event)} was stopped ({event['step']}):", file=sys.stderr)
        sys.stderr.flush()
        worker.send_signal(signal.SIGUSR1)
        until = time.monotonic() + 1
        while time.monotonic() < until:
            try:
                line = lines.get(timeout=max(until - time.monotonic(), 0))
            except queue.Empty:
                break
            if line is None:
                break
            _progress(line)
    worker.kill()
    worker.wait()


# -- install and uninstall: pip, in the environment this command runs in -----------------


def _pip(command: str, *arguments: str) -> int:
    """Run ``pip COMMAND ARGUMENTS`` with this interpreter, its output passing through; the exit status."""
    import subprocess  # noqa: PLC0415 - only install and uninstall run anything

    sys.stdout.flush()
    done = subprocess.run([sys.executable, "-m", "pip", command, *arguments], check=False)  # noqa: S603 - argv, no shell
    if done.returncode != 0:
        print(
            f"hermesos {command}: error: pip {command} failed with exit status {done.returncode}; "
            "its output above says why",
            file=sys.stderr,
        )
        return _PIP_FAILED
    return _OK


def _require_pip(command: str) -> bool:
    """Whether pip is importable here; if not, say how to add it (a ``uv tool`` environment has none)."""
    import importlib.util  # noqa: PLC0415 - only install and uninstall need it

    if importlib.util.find_spec("pip") is not None:
        return True
    print(
        f"hermesos {command}: error: pip is not installed in the environment hermesos runs in; "
        f"add it with: {shlex.quote(sys.executable)} -m ensurepip",
        file=sys.stderr,
    )
    return False


def _installed_plugins() -> list[dict[str, Any]] | None:
    """The rows of ``plugins list --json``, as a new process sees the environment (None if it cannot say)."""
    import subprocess  # noqa: PLC0415 - only install and uninstall run anything

    # A new process: this one has imported the old plugins and never read the .pth files pip just wrote.
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "plugins", "list", "--json"], capture_output=True, text=True, check=False
    )
    try:
        rows: list[dict[str, Any]] = json.loads(done.stdout)["plugins"]
    except (ValueError, KeyError, TypeError):
        return None
    return rows


def _key(row: dict[str, Any]) -> tuple[str, str]:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - only install and uninstall compare names

    return canonicalize_name(row["distribution"]), row["entry_point"]


def _contributions(row: dict[str, Any]) -> str:
    """What a plugin contributes, for one line: its tools by name, then how many schemas and providers."""
    parts = [", ".join(row["tools"])] if row["tools"] else []
    if row["schemas"]:
        parts.append(_count(len(row["schemas"]), "schema"))
    if row["providers"]:
        parts.append(_count(len(row["providers"]), "permission provider"))
    return "; ".join(parts)


def _origin(row: dict[str, Any]) -> PluginOrigin:
    from hermes_core._plugins import PluginOrigin  # noqa: PLC0415 - only install and check --timeout need it

    return PluginOrigin(row["distribution"], row["version"], row["entry_point"], row["module"])


def _report_installed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """Say what pip added or changed among the plugins; 1 if that broke a plugin."""
    previous = {_key(row): row for row in before}
    changed = [row for row in after if _key(row) not in previous or previous[_key(row)]["version"] != row["version"]]
    # A new plugin may break an old one (two tools of one name: the later in name order loses).
    broken = [
        row
        for row in after
        if row["state"] == "broken" and (row in changed or previous[_key(row)]["state"] != "broken")
    ]
    if not changed:
        print("no hermesos plugin was added or changed; 'hermesos plugins list' lists the installed ones")
    for row in changed:
        was = previous.get(_key(row))
        name = f"{row['distribution']} {row['version']}" + (f" (replacing {was['version']})" if was else "")
        if row["state"] == "ok":
            print(f"installed {name}: {_contributions(row) or 'no tools, schemas or permission providers'}")
        elif row["state"] == "disabled":
            print(f"installed {name}, disabled by {_DISABLE_ENV}")
        else:
            print(f"installed {name}, which is broken")
    if changed:
        print("'hermesos tools list' lists every installed tool")
    if not broken:
        return _OK
    sys.stdout.flush()
    for row in broken:
        for message in row["problems"]:
            print(_broken_line(_origin(row), message), file=sys.stderr)
    print(_skip_hint(list(dict.fromkeys(row["distribution"] for row in broken))), file=sys.stderr)
    return _PROBLEMS


# The options of pip install that 'hermesos install' passes through, in the order it passes them:
# (flags, metavar or None for a switch, repeatable, help). The parser and the pip call both read it.
_PIP_INSTALL_OPTIONS: tuple[tuple[tuple[str, ...], str | None, bool, str], ...] = (
    (("-U", "--upgrade"), None, False, "upgrade what is already installed"),
    (("--pre",), None, False, "allow pre-releases"),
    (("--no-index",), None, False, "use no index: only --find-links"),
    (("--no-cache-dir",), None, False, "do not use pip's cache"),
    (("--index-url",), "URL", False, "the package index to use instead of PyPI"),
    (("--extra-index-url",), "URL", True, "another index (repeatable)"),
    (("-f", "--find-links"), "URL", True, "a directory or page of distributions to install from (repeatable)"),
    (
        ("-e", "--editable"),
        "PATH",
        True,
        "install the project at PATH in editable mode (repeatable), as when writing a plugin",
    ),
)


def _pip_options(args: argparse.Namespace) -> list[str]:
    """The pass-through options given to ``hermesos install``, as pip's own arguments."""
    options: list[str] = []
    for flags, metavar, _, _ in _PIP_INSTALL_OPTIONS:
        flag = flags[-1]
        given = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if metavar is None:
            options.extend([flag] if given else [])
        else:
            for value in given if isinstance(given, list) else [given] if given else []:
                options += [flag, value]
    return options


def _only_names(command: str, names: list[str], allowed: str, options: str) -> None:
    """Refuse a name that pip would read as an option (``hermesos install -- -r file``): only *allowed* pass.

    Only the options the command declares reach pip; anything after ``--``
    that starts with ``-`` (``-r``, ``--target``, ``--user``, ``-e``...)
    would be one of pip's own, so it is refused, whatever pip would make of it.
    """
    for name in names:
        if name.startswith("-"):
            raise _Usage(
                f"hermesos {command}: error: {shorten(repr(name))} is an option, not something to {command}: "
                f"give only {allowed}; {options}"
            )


def _install(args: argparse.Namespace) -> int:
    if not args.names and not args.editable:
        raise _Usage("hermesos install: error: name a distribution to install, or give -e PATH")
    _only_names(
        "install",
        args.names,
        "requirements (such as hermesos-fs or 'hermesos-fs>=0.4'), paths (./-x for one starting with '-') and URLs",
        "'hermesos install --help' lists the options it passes to pip",
    )
    if not _require_pip("install"):
        return _PIP_FAILED
    options = _pip_options(args)
    before = _installed_plugins()
    status = _pip("install", *options, *args.names)
    if status != _OK:
        return status
    after = _installed_plugins()
    if before is None or after is None:
        print("'hermesos tools list' lists every installed tool")
        return _OK
    return _report_installed(before, after)


def _uninstall(args: argparse.Namespace) -> int:
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - only uninstall compares names

    _only_names(
        "uninstall", args.names, "the names of installed distributions (such as hermesos-fs)", "no option goes to pip"
    )
    for name in args.names:
        match = _NAME.match(name)
        if match and canonicalize_name(match.group()) == _CORE:
            raise _Usage(
                f"hermesos uninstall: error: {_CORE} runs this command and cannot uninstall itself; "
                "uninstall it with the installer that installed it"
            )
    if not _require_pip("uninstall"):
        return _PIP_FAILED
    before = _installed_plugins()
    status = _pip("uninstall", "--yes", *args.names)
    after = _installed_plugins() if status == _OK else None
    if before is None or after is None:
        return status
    remaining = {_key(row) for row in after}
    gone = [row for row in before if _key(row) not in remaining]
    for row in gone:
        contributed = _contributions(row)
        print(f"uninstalled {row['distribution']} {row['version']}" + (f": {contributed}" if contributed else ""))
    if not gone:
        print("no hermesos plugin was uninstalled")
    return _OK


# -- new plugin: a plugin distribution written from templates ----------------------------


def _new_plugin(args: argparse.Namespace) -> int:
    from hermes_core import _scaffold  # noqa: PLC0415 - only new plugin needs the templates

    try:
        names = _scaffold.plugin_names(args.name)
        directory = args.directory or names.distribution
        written = _scaffold.write_plugin(names, directory)
    except _scaffold.ScaffoldError as error:
        raise _Usage(f"hermesos new plugin: error: {error}") from None
    print(f"wrote {names.distribution}, a plugin with one tool, {names.name}.greet:")
    for file in written:
        print(f"  {os.path.join(directory, file)}")
    print("next steps:")
    for step in (f"cd {shlex.quote(directory)}", "pip install -e '.[test]'", "pytest", "hermesos tools list"):
        print(f"  {step}")
    return _OK


# -- the parser -------------------------------------------------------------------------


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command that prints *parser*'s help: 'hermesos' or 'hermesos tools' alone, as git does."""

    def show(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return _USAGE

    return show


_DEBUG_HELP = "with a broken plugin or a tool that failed, also print the traceback of what went wrong"


def _install_parser(commands: Any) -> None:
    install = commands.add_parser(
        "install",
        help="install plugins with pip, into the environment hermesos runs in",
        description="Install plugins (any pip requirement) with pip, run by the Python that runs hermesos, so "
        "that a hermesos installed with pipx or uv gets its plugins in its own environment. pip's output "
        "passes through; then hermesos says what each new plugin contributes.",
        epilog="Exit statuses: 0 ok, 1 an installed plugin is broken, 2 usage, 9 pip failed or is missing.",
    )
    install.add_argument("names", nargs="*", metavar="NAME", help="what to install, such as hermesos-fs")
    for flags, metavar, repeatable, text in _PIP_INSTALL_OPTIONS:
        if metavar is None:
            install.add_argument(*flags, action="store_true", help=text)
        elif repeatable:
            _repeatable(install, *flags, metavar=metavar, help=text)
        else:
            install.add_argument(*flags, metavar=metavar, help=text)
    install.set_defaults(run=_install)

    uninstall = commands.add_parser(
        "uninstall",
        help="uninstall plugins with pip, from the environment hermesos runs in",
        description=f"Uninstall distributions with pip uninstall --yes, run by the Python that runs hermesos. "
        f"{_CORE} itself is refused.",
        epilog="Exit statuses: 0 ok, 2 usage (such as uninstalling hermesos-core), 9 pip failed or is missing.",
    )
    uninstall.add_argument("names", nargs="+", metavar="NAME", help="a distribution to uninstall")
    uninstall.set_defaults(run=_uninstall)


def _new_parser(commands: Any) -> None:
    new = commands.add_parser("new", help="write a new project from a template: a plugin")
    new.set_defaults(run=_help(new))
    new_commands = new.add_subparsers(dest="new_command", metavar="COMMAND", parser_class=_Parser)
    plugin = new_commands.add_parser(
        "plugin",
        help="write a new plugin distribution, with one tool and its tests, ready to install",
        description="Write a new plugin distribution into ./hermesos-NAME (or DIR): pyproject.toml with the "
        "entry point, the module hermes_NAME.py with one tool (NAME.greet), its tests, a README and a "
        ".gitignore. Nothing is overwritten: DIR must not exist, or be empty.",
        epilog="Exit statuses: 0 ok, 2 usage (a bad NAME, a directory that exists and is not empty, or one "
        "that cannot be written).",
    )
    plugin.add_argument(
        "name",
        metavar="NAME",
        help="a short lowercase name such as notes or word-count: the distribution is hermesos-NAME, the "
        "module hermes_NAME (hyphens become underscores); a hermesos- prefix is dropped",
    )
    plugin.add_argument("--directory", metavar="DIR", help="where to write it (default: ./hermesos-NAME)")
    plugin.set_defaults(run=_new_plugin)


_DISABLE_HELP = f"skip a plugin by entry-point or distribution name (repeatable; {_DISABLE_ENV} adds more)"
_GRANT_HELP = f"grant a permission pattern: fs:read, fs:*, * (repeatable; {_GRANTS_ENV} adds more)"


def _serve_parser(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the installed tools to MCP clients, over stdio or Streamable HTTP",
        description="Serve the installed tools as an MCP server (needs the mcp extra: "
        f"{_MCP_EXTRA}). Tools go by their wire names (fs.read is fs_read); a tool error is a result "
        "with isError and the error's code. Over stdio (the default), an MCP client starts this command. "
        "Over HTTP, the server is stateless (each request stands alone, so several processes can serve "
        "behind a load balancer); an address other than a loopback one needs a bearer token, which every "
        "request must then carry.",
        epilog="Exit statuses: 0 ok (stdin ended, or the server was stopped), 1 a plugin is broken, 2 usage "
        "(no MCP SDK, no token for a public address, an address that cannot be bound), 7 INVALID_DEFINITION "
        "(two tools with the same wire name, a malformed grant), 130 interrupted.",
    )
    serve.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    _repeatable(serve, "--disable", metavar="NAME", help=_DISABLE_HELP)
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
    _repeatable(serve, "--grant", metavar="PERMISSION", help=_GRANT_HELP)
    serve.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="the most seconds a call may take (default: each tool's own limit, if any)",
    )
    serve.set_defaults(run=_serve, json=False)

    export = commands.add_parser(
        "export",
        help="print the tools' definitions as an API takes them (OpenAI, Anthropic, MCP), as JSON",
        description="Print the installed tools' definitions as JSON, as one API takes them: openai (Chat "
        "Completions' tools=), openai-responses (the Responses API's), openai-strict (Chat Completions in "
        "strict mode), anthropic (the Messages API's tools=) or mcp (MCP's tools/list). Tools go by their "
        "wire names.",
        epilog="Exit statuses: 0 ok, 1 a plugin is broken, 2 usage, 7 INVALID_DEFINITION (a tool the format "
        "cannot express, such as an open object in strict mode, or two tools with the same wire name).",
    )
    export.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    _repeatable(export, "--disable", metavar="NAME", help=_DISABLE_HELP)
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True, help="the API to write the definitions for")
    export.set_defaults(run=_export, json=False)


def _seconds(text: str) -> float:
    """A ``--timeout`` value: a positive, finite number of seconds."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds such as 2.5, got {text!r}")
    return seconds


def _repeatable(parser: argparse.ArgumentParser, *flags: str, metavar: str, help: str) -> None:  # noqa: A002
    """An option that may be given several times, collected into a list (empty when never given)."""
    parser.add_argument(*flags, action="append", default=[], metavar=metavar, help=help)


def _parser() -> _Parser:
    common = _Parser(add_help=False)
    # --debug is accepted before the command and after it; after it, its absence must not reset it.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    _repeatable(common, "--disable", metavar="NAME", help=_DISABLE_HELP)
    parser = _Parser(
        prog="hermesos",
        description="List, inspect and call the installed hermesos tools; install plugins, start new ones "
        "(new plugin); diagnose broken ones.",
        epilog="Exit statuses: 0 ok, 1 a broken plugin, 2 usage, 3-8 and 10 the error codes of 'hermesos call' "
        "(see 'hermesos call -h'), 9 pip failed (install, uninstall), 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"{_CORE} {__version__}")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    tools = commands.add_parser("tools", help="list or show tools")
    tools.set_defaults(run=_help(tools))
    tool_commands = tools.add_subparsers(dest="tools_command", metavar="COMMAND", parser_class=_Parser)
    listing = tool_commands.add_parser(
        "list", parents=[common], help="one line per installed tool (exit 1 if a plugin is broken)"
    )
    listing.set_defaults(run=_tools_list)
    show = tool_commands.add_parser("show", parents=[common], help="everything about one tool")
    show.add_argument("name", help="the tool's name, such as fs.read")
    show.set_defaults(run=_tools_show)

    plugins = commands.add_parser("plugins", help="list plugins")
    plugins.set_defaults(run=_help(plugins))
    plugin_commands = plugins.add_subparsers(dest="plugins_command", metavar="COMMAND", parser_class=_Parser)
    plugin_list = plugin_commands.add_parser("list", parents=[common], help="one line per installed plugin")
    plugin_list.set_defaults(run=_plugins_list)

    codes = ", ".join(f"{code} {status}" for code, status in EXIT_CODES.items())
    call = commands.add_parser(
        "call",
        parents=[common],
        help="call a tool through the runtime and print its output as JSON",
        description="Call a tool through the runtime (permissions, input and output checked) and print its "
        "output as JSON. On a tool error, print the error on stderr (with --json, its to_dict() JSON); "
        "a handler that raised is the error TOOL_FAILED, and --debug adds the traceback of what it raised.",
        epilog=f"Exit statuses: 0 ok, 1 a plugin is broken, 2 the input is not a JSON value, {codes}.",
    )
    call.add_argument("tool", help="the tool's name, such as fs.read")
    call.add_argument("input", nargs="?", help="the input as JSON, or - to read it from stdin (default: {})")
    _repeatable(call, "--grant", metavar="PERMISSION", help=_GRANT_HELP)
    call.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="the most seconds the tool may take (default: the tool's own limit, if any)",
    )
    call.set_defaults(run=_call)

    check = commands.add_parser(
        "check",
        parents=[common],
        help="load every plugin and list every problem (exit 1 if any)",
        description="Load every plugin in report mode and list every problem of every plugin. With --timeout, "
        "the plugins are loaded in a new process, and a plugin whose import or hooks take longer is stopped "
        "and reported as a problem.",
        epilog="Exit statuses: 0 ok, 1 a problem (or a plugin stopped by --timeout), 2 usage.",
    )
    check.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="the most seconds one plugin may take to import and run its hooks (default: no limit)",
    )
    check.add_argument("--report-progress", action="store_true", help=argparse.SUPPRESS)  # the worker's
    check.set_defaults(run=_check)
    _serve_parser(commands)
    _install_parser(commands)
    _new_parser(commands)
    parser.set_defaults(run=_help(parser))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hermesos`` command with *argv* (default: ``sys.argv[1:]``); return the exit status."""
    parser = _parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as done:  # --help and --version: argparse exits, main returns
            return done.code if isinstance(done.code, int) else _OK
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except _Usage as error:
        print(error, file=sys.stderr)
        return _USAGE
    except KeyboardInterrupt:
        # Ctrl-C, or a plugin raising it: one line, no traceback, and the shell's status for SIGINT.
        print("hermesos: interrupted", file=sys.stderr)
        return _INTERRUPTED
    except BrokenPipeError:
        # The reader went away ('hermesos tools list | head -1'): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return _OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
