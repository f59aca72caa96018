"""``hermesos export``: the tools' definitions as an API takes them (OpenAI, Anthropic, MCP), as JSON."""

from __future__ import annotations

import argparse
from typing import Any, Literal

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS, add_common

#: What ``hermesos export --format`` writes, each as the API's ``tools=`` (or MCP's ``tools/list``) takes it.
EXPORT_FORMATS = ("openai", "openai-responses", "openai-strict", "anthropic", "mcp")


def _export(args: argparse.Namespace) -> int:
    from hermes_core._base._errors import ToolError  # noqa: PLC0415
    from hermes_core.adapters import AnthropicTools, OpenAITools  # noqa: PLC0415 - only export needs them
    from hermes_core.serve import mcp_tools  # noqa: PLC0415 - its SDK-free part

    found = out.discover(args)
    if out.fatal(found):
        out.report_problems(found.problems, args)
        return PROBLEMS
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
        return out.report(error, args)
    out.print_json(definitions)
    return OK


def add_parsers(subcommands: Any) -> None:
    """``export``."""
    export = subcommands.add_parser(
        "export",
        help="print the tools' definitions as an API takes them (OpenAI, Anthropic, MCP), as JSON",
        description="Print the installed tools' definitions as JSON, as one API takes them: openai (Chat "
        "Completions' tools=), openai-responses (the Responses API's), openai-strict (Chat Completions in "
        "strict mode), anthropic (the Messages API's tools=) or mcp (MCP's tools/list). Tools go by their "
        "wire names.",
        epilog="Exit statuses: 0 ok, 1 a plugin is broken, 2 usage, 7 INVALID_DEFINITION (a tool the format "
        "cannot express, such as an open object in strict mode, or two tools with the same wire name).",
    )
    add_common(export, json=False)
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True, help="the API to write the definitions for")
    export.set_defaults(run=_export, json=False)
