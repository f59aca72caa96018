"""The ``hermesos`` command: list, inspect and call the installed tools, and diagnose broken plugins.

``main(argv) -> int`` is a plain function: the console script and
``python -m hermes_core`` call it, and so do the tests. It holds no business
logic: each command asks :mod:`hermes_core.plugins` or the runtime, and
formats the answer.

Exit statuses (stable; see ``EXIT_CODES``):

====  ============================================================
0     success
1     ``check`` found problems; a plugin failed to load; a handler raised
2     usage error: unknown command or option, input that is not JSON
3     ``TOOL_NOT_FOUND``
4     ``INPUT_INVALID``
5     ``PERMISSION_DENIED``
6     ``OUTPUT_INVALID``
7     ``INVALID_DEFINITION``
8     ``SCHEMA_INVALID``
====  ============================================================
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import IO, TYPE_CHECKING, Any, NoReturn

from hermes_core._version import __version__
from hermes_core.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from hermes_core.plugins import PluginSet

__all__ = ["EXIT_CODES", "main"]

#: The exit status of ``hermesos call`` for each error code.
EXIT_CODES: dict[ErrorCode, int] = {
    ErrorCode.TOOL_NOT_FOUND: 3,
    ErrorCode.INPUT_INVALID: 4,
    ErrorCode.PERMISSION_DENIED: 5,
    ErrorCode.OUTPUT_INVALID: 6,
    ErrorCode.INVALID_DEFINITION: 7,
    ErrorCode.SCHEMA_INVALID: 8,
}
_OK, _PROBLEMS, _USAGE = 0, 1, 2


class _Usage(Exception):  # noqa: N818 - control flow inside this module
    """A usage error found after parsing, such as input that is not JSON."""


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


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def _summary(text: str) -> str:
    """The first sentence of a description's first line, for one-line listings."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    sentence, stop, _ = line.partition(". ")
    return sentence + "." if stop else line


def _discover(args: argparse.Namespace) -> PluginSet:
    from hermes_core.plugins import discover_plugins  # noqa: PLC0415 - --version and --help never load plugins

    return discover_plugins(disable=args.disable, strict=False)


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
        if p.problems
    ]
    if args.json:
        _print_json({"tools": rows, "broken_plugins": broken})
        return _OK
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
    for plugin in broken:
        print(
            style.red(f"broken plugin {plugin['distribution']} {plugin['version']} ({plugin['entry_point']}): "),
            "run 'hermesos check' for details",
            sep="",
        )
    if not rows and not broken:
        print("no tools installed: pip install a hermesos plugin, such as hermesos-fs", file=sys.stderr)
    return _OK


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
    for row in rows:
        state = {"ok": style.green, "broken": style.red}.get(row["state"], style.dim)(row["state"])
        parts = [f"{len(row['tools'])} tools", f"{len(row['schemas'])} schemas", f"{len(row['providers'])} providers"]
        print(
            f"{style.bold(row['distribution'])} {row['version']}  {row['entry_point']} = {row['module']}  "
            f"{state}  {', '.join(parts)}"
        )
    if not rows:
        print("no plugins installed", file=sys.stderr)
    return _OK


def _tools_show(args: argparse.Namespace) -> int:
    found = _discover(args)
    tool = next((t for t in found.tools if t.name == args.name), None)
    if tool is None:
        from hermes_core.runtime import Runtime  # noqa: PLC0415 - its suggestions make the error

        try:
            Runtime(found.tools, schemas=found.schemas).call_sync(args.name, {})
        except ToolError as error:
            return _report(error, args)
        raise AssertionError("unreachable: the tool is not registered")  # pragma: no cover
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


def _read_input(text: str) -> Any:
    """Parse the call's input, or raise a usage error naming the line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _Usage(
            f"hermesos call: error: the input is not valid JSON: {error.msg} "
            f"at line {error.lineno}, column {error.colno}"
        ) from None


def _call(args: argparse.Namespace) -> int:
    from hermes_core.plugins import load_runtime  # noqa: PLC0415 - only commands that need plugins load them

    if args.input == "-":
        source = sys.stdin.read()
    elif args.input is None:
        source = "{}"
    else:
        source = args.input
    value = _read_input(source)
    try:
        runtime = load_runtime(grants=args.grant, disable=args.disable)
        output = runtime.call_sync(args.tool, value)
    except ToolError as error:
        return _report(error, args)
    _print_json(output)
    return _OK


def _report(error: ToolError, args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(error.to_dict(), ensure_ascii=False), file=sys.stderr)
    else:
        style = _Style(sys.stderr)
        print(f"{style.red(error.code.value)}: {error}", file=sys.stderr)
    return EXIT_CODES[error.code]


def _check(args: argparse.Namespace) -> int:
    found = _discover(args)
    problems = found.problems
    if args.json:
        _print_json(
            {
                "plugins": len(found.plugins),
                "problems": [
                    {
                        "distribution": p.origin.distribution,
                        "version": p.origin.version,
                        "entry_point": p.origin.entry_point,
                        "error": type(p.error).__name__,
                        "message": p.message,
                    }
                    for p in problems
                ],
            }
        )
        return _PROBLEMS if problems else _OK
    style = _Style(sys.stdout)
    for problem in problems:
        print(f"{style.red('problem')}: {problem.message}")
    healthy = sum(1 for p in found.plugins if p.ok)
    summary = f"{len(found.plugins)} plugins, {healthy} healthy, {len(problems)} problems"
    print(style.red(summary) if problems else style.green(summary))
    return _PROBLEMS if problems else _OK


# -- the parser -------------------------------------------------------------------------


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command that prints *parser*'s help: 'hermesos' or 'hermesos tools' alone, as git does."""

    def show(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return _USAGE

    return show


def _parser() -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of text")
    common.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="NAME",
        help="skip a plugin by entry-point or distribution name (repeatable; HERMESOS_DISABLE_PLUGINS adds more)",
    )
    parser = _Parser(
        prog="hermesos",
        description="List, inspect and call the installed hermesos tools; diagnose broken plugins.",
        epilog="Exit statuses: 0 ok, 1 problems, 2 usage, 3-8 the error codes of 'hermesos call' "
        "(see 'hermesos call -h').",
    )
    parser.add_argument("--version", action="version", version=f"hermesos-core {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    tools = commands.add_parser("tools", help="list or show tools")
    tools.set_defaults(run=_help(tools))
    tool_commands = tools.add_subparsers(dest="tools_command", metavar="COMMAND", parser_class=_Parser)
    listing = tool_commands.add_parser("list", parents=[common], help="one line per installed tool")
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
        "output as JSON. On a tool error, print the error on stderr (with --json, its to_dict() JSON).",
        epilog=f"Exit statuses: 0 ok, 2 the input is not JSON, {codes}.",
    )
    call.add_argument("tool", help="the tool's name, such as fs.read")
    call.add_argument("input", nargs="?", help="the input as JSON, or - to read it from stdin (default: {})")
    call.add_argument(
        "--grant",
        action="append",
        default=[],
        metavar="PERMISSION",
        help="grant a permission pattern: fs:read, fs:*, * (repeatable; HERMESOS_GRANTS adds more)",
    )
    call.set_defaults(run=_call)

    check = commands.add_parser(
        "check", parents=[common], help="load every plugin and list every problem (exit 1 if any)"
    )
    check.set_defaults(run=_check)
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
    except BrokenPipeError:
        # The reader went away ('hermesos tools list | head -1'): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return _OK
    except Exception as error:
        from hermes_core.plugins import PluginLoadError  # noqa: PLC0415 - imported only when needed

        if isinstance(error, PluginLoadError):
            print(f"error: {error}", file=sys.stderr)
            if error.__cause__ is not None:
                traceback.print_exception(error.__cause__, file=sys.stderr)
            return _PROBLEMS
        raise


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
