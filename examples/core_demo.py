"""The core alone: define a tool, call it, and show each of the six error codes as a model receives it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hermes_core import Runtime, SchemaError, ToolError, define_tool, reject
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


def show(title: str, observation: dict[str, Any]) -> None:
    print(f"--- {title}")
    print(json.dumps(observation, indent=2, ensure_ascii=False))


async def main() -> None:
    runtime = Runtime([notes_write, notes_read, broken], grants=["notes:write"])
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
