"""``hermesos tools list``, ``tools show`` and ``plugins list``: what is installed."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS, add_common, add_group

if TYPE_CHECKING:
    import argparse

    from hermes_core._tool._definition import Tool

# Where plugins come from: the bundled ones are folders of a hermesos-core checkout (and wheels built
# from them) before any package index has them, so the line says how to install from a path too.
_NO_TOOLS = (
    "no tools installed: install a plugin with 'hermesos install PATH', PATH a plugin's folder or wheel "
    "(the bundled plugins are the folders plugins/hermesos-fs, -math, -policy and -mcp of a hermesos-core "
    "checkout), or with 'hermesos install NAME' from a package index that has it"
)


def _tools_list(args: argparse.Namespace) -> int:
    found = out.discover(args)
    rows: list[dict[str, Any]] = [
        {
            "name": tool.name,
            "version": tool.version,
            "distribution": plugin.origin.distribution,
            "permissions": list(tool.permissions),
            "description": out.summary(tool.description),
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
    status = PROBLEMS if found.problems else OK
    if args.json:
        out.print_json({"tools": rows, "broken_plugins": broken, "warnings": warnings})
        return status
    style = out.Style(sys.stdout)
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
        out.report_problems(found.problems, args)
    if not rows and not broken:
        print(_NO_TOOLS, file=sys.stderr)
    return status


def _plugins_list(args: argparse.Namespace) -> int:
    found = out.discover(args)
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
        out.print_json({"plugins": rows})
        return OK
    style = out.Style(sys.stdout)
    for plugin, row in zip(found.plugins, rows, strict=True):
        state = {"ok": style.green, "broken": style.red}.get(row["state"], style.dim)(row["state"])
        line = f"{style.bold(row['distribution'])} {row['version']}  {row['entry_point']} = {row['module']}  {state}"
        if plugin.ok:
            counts = [
                out.count(len(row["tools"]), "tool"),
                out.count(len(row["schemas"]), "schema"),
                out.count(len(row["providers"]), "provider"),
            ]
            line += "  " + ", ".join(counts)
        print(line)
        for problem in plugin.problems:
            label = style.red("problem") if problem.fatal else style.yellow("warning")
            print(f"  {label}: {out.printable(out.cause(problem.origin, problem.message))}")
    if not rows:
        print("no plugins installed", file=sys.stderr)
    return OK


def _tools_show(args: argparse.Namespace) -> int:
    found = out.discover(args)
    tool = next((t for t in found.tools if t.name == args.name), None)
    if tool is None:
        from hermes_core._base._errors import ToolNotFoundError  # noqa: PLC0415 - only a mistyped name needs these
        from hermes_core._base._names import suggest  # noqa: PLC0415

        status = out.report(ToolNotFoundError(args.name, suggest(args.name, [t.name for t in found.tools])), args)
        if found.problems and not args.json:
            out.report_problems(found.problems, args)  # the tool may be one a broken plugin would have contributed
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
        "media": tool.media,
        # A media tool's output schema is its structured data's; None when it declares none (as serve leaves
        # MCP's outputSchema out): "{}" would say it returns any JSON, hiding that it returns content.
        "output_schema": None if _unstructured(tool) else tool.output.json_schema(defs=found.schemas),
    }
    if args.json:
        out.print_json(data)
        return OK
    style = out.Style(sys.stdout)
    print(f"{style.bold(tool.name)} {out.printable(tool.version)}")
    if origin:
        print(
            style.dim(out.printable(f"from {origin.distribution} {origin.version} (entry point {origin.entry_point})"))
        )
    print(f"permissions: {', '.join(tool.permissions) or 'none'}\n")
    print(out.printable(tool.description.strip(), lines=True), end="\n\n")
    print(style.bold("input schema:"))
    print(out.json_text(data["input_schema"]), end="\n\n")
    if tool.media:
        print(style.bold("output:"), _CONTENT, end="")
        if data["output_schema"] is None:
            print(", with no structured data")
            return OK
        print(", with structured data of this schema:")
    else:
        print(style.bold("output schema:"))
    print(out.json_text(data["output_schema"]))
    return OK


# What a media tool returns (hermes_core._tool._blocks's blocks), as tools show says it.
_CONTENT = "content (text, images, sound, embedded files and links to resources)"


def _unstructured(tool: Tool) -> bool:
    """Whether *tool* returns content with no structured data: a media tool that declares no output schema."""
    from hermes_core.schema import AnySchema  # noqa: PLC0415 - only tools show needs it

    return tool.media and isinstance(tool.output, AnySchema)


def shortcut(arguments: Sequence[str]) -> SimpleNamespace | None:
    """What the parser makes of ``tools list`` or ``tools list --json``, read without it; None for any other line.

    The listing is the command run most, and argparse (which imports gettext,
    and locale at its first message) and building the parsers cost it more
    than a tenth of its start (docs/performance.md, start-up). Any other
    command line, an option more or a misspelling, goes to the parser.
    ``tests/test_startup.py`` holds each namespace to the parser's.
    """
    if list(arguments) not in (["tools", "list"], ["tools", "list", "--json"]):
        return None
    return SimpleNamespace(
        debug=False, command="tools", tools_command="list", json=len(arguments) == 3, disable=[], run=_tools_list
    )


def add_parsers(subcommands: Any) -> None:
    """``tools`` (``list``, ``show``) and ``plugins`` (``list``)."""
    tool_commands = add_group(subcommands, "tools", "list or show tools", "tools_command")
    listing = tool_commands.add_parser("list", help="one line per installed tool (exit 1 if a plugin is broken)")
    add_common(listing)
    listing.set_defaults(run=_tools_list)
    show = tool_commands.add_parser("show", help="everything about one tool")
    add_common(show)
    show.add_argument("name", help="the tool's name, such as fs.read")
    show.set_defaults(run=_tools_show)

    plugin_commands = add_group(subcommands, "plugins", "list plugins", "plugins_command")
    plugin_list = plugin_commands.add_parser("list", help="one line per installed plugin")
    add_common(plugin_list)
    plugin_list.set_defaults(run=_plugins_list)
