"""The core alone: define a tool, call it, and show each of the seven error codes as a model receives it.

A handler that raises is shown too: the model reads only that the tool
failed and the exception's type; the operator's log (here, lines starting
``[log]``) has the exception itself, with its traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from typing import Any

from hermes_core import Runtime, SchemaError, ToolError, ToolFailedError, define_tool, reject
from hermes_core import schema as s

NOTES: dict[str, str] = {}


def write_note(args: dict[str, Any]) -> dict[str, Any]:
    text = args["text"] if args["mode"] == "w" else NOTES.get(args["title"], "") + args["text"]
    NOTES[args["title"]] = text
    return {"title": args["title"], "size": len(text)}


notes_write = define_tool(
    name="notes.write",
    description="Write a note under a title, replacing it (mode w) or appending to it (mode a).",
    version="1.0.0",
    input=s.object(
        {
            "title": s.string(min_length=1, description="The note's title"),
            "text": s.string(description="What to write"),
            "mode": s.optional(s.enum(["w", "a"]), default="w", description="w replaces, a appends"),
        }
    ),
    output=s.object({"title": s.string(), "size": s.integer(minimum=0)}),
    permissions=["notes:write"],
    handler=write_note,
)


def read_note(args: dict[str, Any]) -> str:
    if args["title"] not in NOTES:
        # Well-typed, but no such note: refused at the field, and the runtime names the tool.
        raise reject("title", "names no note; the notes are: " + (", ".join(sorted(NOTES)) or "none yet"))
    return NOTES[args["title"]]


notes_read = define_tool(
    name="notes.read",
    description="Read the note with this title.",
    version="1.0.0",
    input=s.object({"title": s.string(min_length=1)}),
    output=s.string(),
    handler=read_note,
)

broken = define_tool(
    name="notes.count",
    description="Count the notes (this one is deliberately broken: it returns a string).",
    version="1.0.0",
    input=s.object({}),
    output=s.integer(minimum=0),
    handler=lambda args: str(len(NOTES)),
)


def export_notes(args: dict[str, Any]) -> dict[str, Any]:
    # A bug: the template was never installed, so open() raises. The model is told the tool failed
    # and the exception's type, never its text (which names the file).
    with open(f"templates/export.{args['format']}", encoding="utf-8") as template:
        header = template.read()
    return {"exported": len(NOTES), "header": header}


notes_export = define_tool(
    name="notes.export",
    description="Export every note to the archive.",
    version="1.0.0",
    input=s.object({"format": s.enum(["md", "txt"])}),
    output=s.object({"exported": s.integer(minimum=0)}),
    handler=export_notes,
)


def sync_notes(args: dict[str, Any]) -> dict[str, Any]:
    try:
        raise ConnectionRefusedError("sync.example:443 refused the connection")  # stands in for the request
    except ConnectionError as error:
        # The handler knows what happened: it says so, and that it may pass.
        raise ToolFailedError("the sync service is not answering", retryable=True) from error


notes_sync = define_tool(
    name="notes.sync",
    description="Send the notes to the sync service.",
    version="1.0.0",
    input=s.object({}),
    output=s.object({"sent": s.integer(minimum=0)}),
    handler=sync_notes,
)


def show(title: str, observation: dict[str, Any]) -> None:
    print(f"--- {title}")
    print(json.dumps(observation, indent=2, ensure_ascii=False))


async def main() -> None:
    # The runtime logs a handler's exception on the hermes_core logger; an application sends it somewhere.
    logging.basicConfig(stream=sys.stdout, format="[log] %(levelname)s %(name)s: %(message)s")
    runtime = Runtime([notes_write, notes_read, broken, notes_export, notes_sync], grants=["notes:write"])
    print("Tool definitions a model is shown:")
    print(json.dumps(runtime.definitions()[0], indent=2))

    show("a successful call", await runtime.observe("notes.write", {"title": "todo", "text": "buy milk"}))
    show(
        "INPUT_INVALID: the model sent the wrong thing",
        await runtime.observe("notes.write", {"title": "", "txt": "x", "mode": "append"}),
    )
    show(
        "INPUT_INVALID from the handler: well-typed, but not usable (reject)",
        await runtime.observe("notes.read", {"title": "shopping"}),
    )
    show("TOOL_NOT_FOUND: a near miss gets a suggestion", await runtime.observe("notes_write", {}))
    show(
        "PERMISSION_DENIED: a wiring fact, not an argument fault",
        await Runtime([notes_write]).observe("notes.write", {"title": "t", "text": "x"}),
    )
    show("OUTPUT_INVALID: the tool is broken, not the call", await runtime.observe("notes.count", {}))
    print("--- TOOL_FAILED: the handler raised; the log has the exception, the model only its type")
    show("TOOL_FAILED, as the model receives it", await runtime.observe("notes.export", {"format": "md"}))
    show(
        "TOOL_FAILED reported by the handler: it may pass, so retryable",
        await runtime.observe("notes.sync", {}),
    )

    try:
        s.array(s.string()).parse(["ok", 7])
    except SchemaError as error:
        show("SCHEMA_INVALID: a bare Schema.parse", {"ok": False, "error": error.to_dict()})
    try:
        define_tool(name="notes.delete", description="Delete a note", version="1.0", input=s.object({}), handler=len)
    except ToolError as error:
        show("INVALID_DEFINITION: raised at definition time, on boot", {"ok": False, "error": error.to_dict()})


if __name__ == "__main__":
    asyncio.run(main())
