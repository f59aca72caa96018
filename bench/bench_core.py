"""hermesos-core against its peers, measured side by side in one process.

Run with ``python3 dev.py bench`` (``python3 dev.py bench --quick`` for a
smoke run of a few seconds). What is measured, and how to read the numbers,
is in docs/performance.md.

Method: every contender is one statement, compiled into a ``timeit``-style
loop (no extra function call per operation, the garbage collector off while a
sample runs). Each contender's loop count is calibrated so one sample takes
about ``--sample-ms``. Then, for ``--rounds`` rounds, every contender of every
case takes one sample, in a shuffled order. Per-op times are reported as the
best and the median sample; a ratio hermes/peer is the median, over rounds, of
the two contenders' ratio within the same round, so a slow phase of a shared
machine hits both sides of a ratio alike.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import importlib.metadata
import sys
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired

import fastjsonschema
import jsonschema
import msgspec
import pydantic
from _method import Case, Comparison, Contender, arguments, machine, report, require, time_all
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict  # pydantic needs it, not typing's, before Python 3.12

from hermes_core import InputInvalidError, Runtime, SchemaError, define_tool, tool
from hermes_core import schema as s

try:  # mcp 2 renamed FastMCP to MCPServer; the in-process API (tool(), call_tool()) is the same.
    from mcp.server.mcpserver import MCPServer
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP as MCPServer  # type: ignore[no-redef]

# -- 1. the payload, declared once per library -------------------------------------------------

PAYLOAD: dict[str, Any] = {
    "path": "notes/2024-06-01.md",
    "contents": "Buy milk, call the bank, water the plants. " * 4,
    "mode": "w",
    "files": [{"path": f"src/module_{i}.py", "size": 1024 * i} for i in range(10)],
    "options": {"overwrite": True},  # "encoding" is left out: each contender should fill in "utf-8"
}


def invalid_payload() -> dict[str, Any]:
    """The payload with one fault deep inside: ``files[7].path`` is an integer."""
    bad = copy.deepcopy(PAYLOAD)
    bad["files"][7]["path"] = 7
    return bad


WRITE = s.object(
    {
        "path": s.string(),
        "contents": s.string(),
        "mode": s.enum(["w", "a"]),
        "files": s.array(s.object({"path": s.string(), "size": s.integer(minimum=0)})),
        "options": s.object({"overwrite": s.boolean(), "encoding": s.optional(s.string(), default="utf-8")}),
    }
)

_STRICT = ConfigDict(strict=True, extra="forbid")


class FileTD(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    path: str
    size: Annotated[int, Field(ge=0)]


class OptionsTD(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    overwrite: bool
    encoding: NotRequired[Annotated[str, Field(default="utf-8")]]


class WriteTD(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    path: str
    contents: str
    mode: Literal["w", "a"]
    files: list[FileTD]
    options: OptionsTD


class FileModel(BaseModel):
    model_config = _STRICT
    path: str
    size: Annotated[int, Field(ge=0)]


class OptionsModel(BaseModel):
    model_config = _STRICT
    overwrite: bool
    encoding: str = "utf-8"


class WriteModel(BaseModel):
    model_config = _STRICT
    path: str
    contents: str
    mode: Literal["w", "a"]
    files: list[FileModel]
    options: OptionsModel


class FileStruct(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    size: Annotated[int, msgspec.Meta(ge=0)]


class OptionsStruct(msgspec.Struct, forbid_unknown_fields=True):
    overwrite: bool
    encoding: str = "utf-8"


class WriteStruct(msgspec.Struct, forbid_unknown_fields=True):
    path: str
    contents: str
    mode: Literal["w", "a"]
    files: list[FileStruct]
    options: OptionsStruct


# -- 2. the tool, declared once per library ----------------------------------------------------


def add_handler(args: dict[str, int]) -> int:
    """hermes and pydantic hand the handler the parsed input as one dict."""
    return args["a"] + args["b"]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_INPUT = s.object({"a": s.integer(), "b": s.integer()})


async def add_handler_async(args: dict[str, int]) -> int:
    """The same, as an async def handler."""
    return args["a"] + args["b"]


def add_tool(name: str, handler: Any = add_handler, *, inline: bool = False) -> Any:
    return define_tool(
        name=name,
        description="Add two integers.",
        version="1.0.0",
        input=ADD_INPUT,
        output=s.integer(),
        permissions=["math:add"],
        handler=handler,
        inline=inline,
    )


# The same tool from type hints: @tool makes the Tool define_tool makes, with a handler taking keywords.
add_decorated = tool(name="math.add_decorated", version="1.0.0", permissions=["math:add"])(add)
add_decorated_async = tool(name="math.add_decorated_async", version="1.0.0", permissions=["math:add"])(add_async)


class AddArgs(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    a: int
    b: int


# -- the contenders ----------------------------------------------------------------------------


def validation_cases() -> tuple[Case, Case]:
    """Case 1: the payload, valid and invalid, through each validator."""
    bad = invalid_payload()
    td = TypeAdapter(WriteTD)
    model = TypeAdapter(WriteModel)
    json_schema = WRITE.json_schema()
    validator = jsonschema.Draft202012Validator(json_schema)
    fast_validate = fastjsonschema.compile(json_schema)
    # fastjsonschema fills defaults in by mutating its input, so it gets its own copies.
    fjs_payload, fjs_bad = copy.deepcopy(PAYLOAD), invalid_payload()

    # Every contender accepts the valid payload and fills in the default where it can ...
    require(WRITE.parse(PAYLOAD)["options"]["encoding"] == "utf-8", "hermes accepts, with the default")
    require(td.validate_python(PAYLOAD)["options"]["encoding"] == "utf-8", "pydantic TypedDict default")
    require(model.validate_python(PAYLOAD).options.encoding == "utf-8", "pydantic model default")
    require(msgspec.convert(PAYLOAD, WriteStruct).options.encoding == "utf-8", "msgspec default")
    validator.validate(PAYLOAD)  # jsonschema validates only: it has no parsed value to fill a default into
    require(fast_validate(fjs_payload)["options"]["encoding"] == "utf-8", "fastjsonschema default")
    require("encoding" not in PAYLOAD["options"], "the shared payload is left as it was")

    # ... rejects the invalid one, with a message that points at files[7].path ...
    def rejects(call: Callable[[], object], error: type[Exception], where: str, name: str) -> None:
        try:
            call()
        except error as exc:
            require(where in str(exc), f"{name}'s message names {where}: {exc}")
        else:
            require(False, f"{name} rejects the invalid payload")

    rejects(lambda: WRITE.parse(bad), SchemaError, "files.7.path", "hermes")
    rejects(lambda: td.validate_python(bad), pydantic.ValidationError, "files.7.path", "pydantic TypedDict")
    rejects(lambda: model.validate_python(bad), pydantic.ValidationError, "files.7.path", "pydantic model")
    rejects(lambda: msgspec.convert(bad, WriteStruct), msgspec.ValidationError, "$.files[7].path", "msgspec")
    rejects(lambda: validator.validate(bad), jsonschema.ValidationError, "files", "jsonschema")
    require([e.json_path for e in validator.iter_errors(bad)] == ["$.files[7].path"], "jsonschema finds the one fault")
    rejects(lambda: fast_validate(fjs_bad), fastjsonschema.JsonSchemaValueException, "files[7].path", "fastjsonschema")

    # ... and unknown keys at every level.
    for where in ((), ("files", 0), ("options",)):
        extra = copy.deepcopy(PAYLOAD)
        target: Any = extra
        for step in where:
            target = target[step]
        target["surprise"] = 1
        rejects(lambda: WRITE.parse(extra), SchemaError, "surprise", "hermes (unknown key)")  # noqa: B023
        rejects(lambda: td.validate_python(extra), pydantic.ValidationError, "surprise", "pydantic TypedDict")  # noqa: B023
        rejects(lambda: model.validate_python(extra), pydantic.ValidationError, "surprise", "pydantic model")  # noqa: B023
        rejects(lambda: msgspec.convert(extra, WriteStruct), msgspec.ValidationError, "surprise", "msgspec")  # noqa: B023
        rejects(lambda: validator.validate(extra), jsonschema.ValidationError, "surprise", "jsonschema")  # noqa: B023
        rejects(
            lambda: fast_validate(copy.deepcopy(extra)),  # noqa: B023
            fastjsonschema.JsonSchemaValueException,
            "must not contain",
            "fastjsonschema",
        )

    env = {
        "payload": PAYLOAD,
        "bad": bad,
        "schema": WRITE,
        "SchemaError": SchemaError,
        "td": td,
        "model": model,
        "ValidationError": pydantic.ValidationError,
        "msgspec": msgspec,
        "WriteStruct": WriteStruct,
        "validator": validator,
        "validate": fast_validate,
        "fjs_payload": fjs_payload,
        "fjs_bad": fjs_bad,
        "JsonSchemaValueException": fastjsonschema.JsonSchemaValueException,
    }
    valid = Case(
        "1a. validate the payload (valid)",
        [
            Contender("1a.hermes", "hermes  schema.parse", "schema.parse(payload)", env),
            Contender("1a.pyd_td", "pydantic  TypeAdapter(TypedDict)", "td.validate_python(payload)", env),
            Contender("1a.pyd_model", "pydantic  TypeAdapter(BaseModel)", "model.validate_python(payload)", env),
            Contender("1a.msgspec", "msgspec  convert(Struct)", "msgspec.convert(payload, WriteStruct)", env),
            Contender("1a.jsonschema", "jsonschema  Draft202012Validator.validate", "validator.validate(payload)", env),
            Contender("1a.fastjsonschema", "fastjsonschema  compiled validate", "validate(fjs_payload)", env),
        ],
    )
    invalid = Case(
        "1b. validate the payload (invalid: files[7].path = 7), and str(error)",
        [
            Contender(
                "1b.hermes",
                "hermes  schema.parse + str(e)",
                """
                try:
                    schema.parse(bad)
                except SchemaError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "1b.pyd_td",
                "pydantic  TypeAdapter(TypedDict) + str(e)",
                """
                try:
                    td.validate_python(bad)
                except ValidationError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "1b.pyd_model",
                "pydantic  TypeAdapter(BaseModel) + str(e)",
                """
                try:
                    model.validate_python(bad)
                except ValidationError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "1b.msgspec",
                "msgspec  convert(Struct) + str(e)",
                """
                try:
                    msgspec.convert(bad, WriteStruct)
                except msgspec.ValidationError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "1b.jsonschema",
                "jsonschema  iter_errors + messages",
                '"\\n".join(f"{e.json_path}: {e.message}" for e in validator.iter_errors(bad))',
                env,
            ),
            Contender(
                "1b.fastjsonschema",
                "fastjsonschema  validate + str(e)",
                """
                try:
                    validate(fjs_bad)
                except JsonSchemaValueException as e:
                    str(e)
                """,
                env,
            ),
        ],
    )
    return valid, invalid


# -- 1c/1d. an imported document whose keywords apply in place: if/then/else, not, dependencies, propertyNames,
# contains. Written in draft-07, which fastjsonschema reads ("dependencies", not 2019-09's dependentRequired), and
# given to each validator as it is.

CONDITIONS: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "path": {"type": "string", "not": {"pattern": "\\.\\."}},
        "mode": {"enum": ["w", "a"]},
        "encoding": {"type": "string"},
        "country": {"type": "string"},
        "zip": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}, "contains": {"const": "draft"}},
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "size": {"type": "integer", "minimum": 0}},
                "required": ["path", "size"],
                "if": {"properties": {"size": {"minimum": 1000}}},
                "then": {"required": ["path"]},
                "else": {"not": {"required": ["chunk"]}},
            },
        },
    },
    "required": ["path", "mode", "files"],
    "if": {"properties": {"country": {"const": "US"}}, "required": ["country"]},
    "then": {"required": ["zip"]},
    "dependencies": {"encoding": ["mode"]},
    "propertyNames": {"pattern": "^[a-z]+$"},
    "additionalProperties": False,
}
CONDITIONS_PAYLOAD: dict[str, Any] = {
    "path": "notes/2024-06-01.md",
    "mode": "w",
    "encoding": "utf-8",
    "country": "US",
    "zip": "10001",
    "tags": ["todo", "draft"],
    "files": [{"path": f"src/module_{i}.py", "size": 1024 * i} for i in range(10)],
}


def conditions_cases() -> tuple[Case, Case]:
    """Cases 1c and 1d: the imported document of CONDITIONS, valid and invalid (``zip`` left out for the US)."""
    imported = s.from_json_schema(CONDITIONS)
    require(imported.unsupported == (), "hermes checks every keyword of the document")
    validator = jsonschema.Draft7Validator(CONDITIONS)
    fast_validate = fastjsonschema.compile(CONDITIONS)
    bad = {key: value for key, value in CONDITIONS_PAYLOAD.items() if key != "zip"}
    require(imported.parse(CONDITIONS_PAYLOAD) == CONDITIONS_PAYLOAD, "hermes accepts the payload")
    validator.validate(CONDITIONS_PAYLOAD)
    fast_validate(CONDITIONS_PAYLOAD)  # no defaults here: nothing is filled into the shared payload
    try:
        imported.parse(bad)
    except SchemaError as exc:
        require('"zip" is required' in str(exc) and 'because "country" is "US"' in str(exc), f"hermes says why: {exc}")
    else:
        require(False, "hermes rejects the payload without zip")
    require(not validator.is_valid(bad), "jsonschema rejects it")
    try:
        fast_validate(bad)
    except fastjsonschema.JsonSchemaValueException:
        pass
    else:
        require(False, "fastjsonschema rejects it")
    for wrong in ({**CONDITIONS_PAYLOAD, "tags": ["todo"]}, {**CONDITIONS_PAYLOAD, "Path": "x"}):
        require(not validator.is_valid(wrong), "jsonschema rejects a wrong payload")
        require(_refuses(imported, wrong), "hermes rejects it too")
    env = {
        "payload": CONDITIONS_PAYLOAD,
        "bad": bad,
        "schema": imported,
        "SchemaError": SchemaError,
        "validator": validator,
        "validate": fast_validate,
        "JsonSchemaValueException": fastjsonschema.JsonSchemaValueException,
    }
    valid = Case(
        "1c. an imported document of if/then/else, not, dependencies, propertyNames, contains (valid)",
        [
            Contender("1c.hermes", "hermes  from_json_schema(...).parse", "schema.parse(payload)", env),
            Contender("1c.jsonschema", "jsonschema  Draft7Validator.validate", "validator.validate(payload)", env),
            Contender("1c.fastjsonschema", "fastjsonschema  compiled validate", "validate(payload)", env),
        ],
    )
    invalid = Case(
        '1d. the same document (invalid: "zip" left out where "country" is "US"), and str(error)',
        [
            Contender(
                "1d.hermes",
                "hermes  from_json_schema(...).parse + str(e)",
                """
                try:
                    schema.parse(bad)
                except SchemaError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "1d.jsonschema",
                "jsonschema  iter_errors + messages",
                '"\\n".join(f"{e.json_path}: {e.message}" for e in validator.iter_errors(bad))',
                env,
            ),
            Contender(
                "1d.fastjsonschema",
                "fastjsonschema  validate + str(e)",
                """
                try:
                    validate(bad)
                except JsonSchemaValueException as e:
                    str(e)
                """,
                env,
            ),
        ],
    )
    return valid, invalid


def _refuses(schema: s.Schema, value: Any) -> bool:
    try:
        schema.parse(value)
    except SchemaError:
        return True
    return False


def call_cases(loop: asyncio.AbstractEventLoop, tool_count: int) -> tuple[Case, Case, Case, float, float]:
    """Cases 2 and 3: calling ``add`` through each framework, and the registry's size."""
    args = {"a": 1, "b": 2}
    bad_args = {"a": "x", "b": 2}
    tool = add_tool("math.add")
    # Under await runtime.call: math.add's plain handler runs on a worker thread (the default),
    # math.add_inline's on the event loop's thread, math.add_async's is awaited.
    inline_tool = add_tool("math.add_inline", inline=True)
    async_tool = add_tool("math.add_async", add_handler_async)
    runtime = Runtime([tool, inline_tool, async_tool, add_decorated, add_decorated_async], grants=["math:add"])
    # The same tools, lenient: a valid call must cost what it costs without (it only adds work to a refused one).
    lenient = Runtime([tool, async_tool], grants=["math:add"], lenient=True)
    require(add_decorated.input == ADD_INPUT and add_decorated.output == s.integer(), "@tool derives the schemas")
    in_ta = TypeAdapter(AddArgs)
    out_ta = TypeAdapter(int, config=ConfigDict(strict=True))
    server = MCPServer("bench")
    server.tool()(add)
    server.tool()(add_async)
    lc_tool = StructuredTool.from_function(add)

    # A full collection of what earlier set-up left behind would otherwise land in one of
    # these two timings or the other, depending on what the code before them allocated.
    gc.collect()
    started = time.perf_counter()
    others = [add_tool(f"bulk.tool_{i}") for i in range(tool_count - 1)]
    define_s = time.perf_counter() - started
    gc.collect()
    started = time.perf_counter()
    big = Runtime([*others, tool], grants=["math:add"])
    build_s = time.perf_counter() - started

    require(runtime.call_sync("math.add", args) == 3, "hermes call_sync")
    require(lenient.call_sync("math.add", {"a": "1", "b": 2}) == 3, "lenient mode repairs")
    require(runtime.call_sync("math.add_decorated", args) == 3, "hermes call_sync @tool")
    for name in ("math.add", "math.add_inline", "math.add_async", "math.add_decorated_async"):
        require(loop.run_until_complete(runtime.call(name, args)) == 3, f"hermes call {name}")
    require(out_ta.validate_python(add_handler(in_ta.validate_python(args))) == 3, "pydantic")
    for name in ("add", "add_async"):
        result = loop.run_until_complete(server.call_tool(name, args))
        require("3" in repr(result) and "error=True" not in repr(result), f"MCP {name}: {result!r}")
    require(lc_tool.invoke(args) == 3, "LangChain")
    require(len(big.tools) == tool_count and big.call_sync("math.add", args) == 3, "the big runtime")
    try:
        runtime.call_sync("math.add", bad_args)
    except InputInvalidError as exc:
        require('"a" must be an integer' in str(exc), f"hermes error message: {exc}")
    else:
        require(False, "hermes rejects the bad input")
    try:
        in_ta.validate_python(bad_args)
    except pydantic.ValidationError as exc:
        require("a\n" in str(exc), f"pydantic error message: {exc}")
    else:
        require(False, "pydantic rejects the bad input")

    env = {
        "runtime": runtime,
        "lenient": lenient,
        "big": big,
        "args": args,
        "bad_args": bad_args,
        "in_ta": in_ta,
        "out_ta": out_ta,
        "add": add_handler,
        "server": server,
        "lc_tool": lc_tool,
        "InputInvalidError": InputInvalidError,
        "ValidationError": pydantic.ValidationError,
    }
    calls = Case(
        "2. call add(a, b) -> int, input and output validated",
        [
            Contender("2.hermes_sync", "hermes  runtime.call_sync", 'runtime.call_sync("math.add", args)', env),
            Contender(
                "2.hermes_sync_lenient",
                "hermes  runtime.call_sync, lenient runtime",
                'lenient.call_sync("math.add", args)',
                env,
            ),
            Contender(
                "2.hermes_decorated_sync",
                "hermes  runtime.call_sync (@tool def)",
                'runtime.call_sync("math.add_decorated", args)',
                env,
            ),
            Contender(
                "2.hermes_decorated_async",
                "hermes  await runtime.call (@tool async def)",
                'await runtime.call("math.add_decorated_async", args)',
                env,
            ),
            Contender(
                "2.hermes_inline",
                "hermes  await runtime.call (inline def)",
                'await runtime.call("math.add_inline", args)',
                env,
            ),
            Contender(
                "2.hermes_async",
                "hermes  await runtime.call (async def)",
                'await runtime.call("math.add_async", args)',
                env,
            ),
            Contender(
                "2.hermes_async_lenient",
                "hermes  await runtime.call (async def), lenient runtime",
                'await lenient.call("math.add_async", args)',
                env,
            ),
            Contender(
                "2.hermes_thread",
                "hermes  await runtime.call (def: worker thread)",
                'await runtime.call("math.add", args)',
                env,
            ),
            Contender(
                "2.pydantic",
                "pydantic  TypeAdapter in + call + TypeAdapter out",
                "out_ta.validate_python(add(in_ta.validate_python(args)))",
                env,
            ),
            Contender(
                "2.mcp_async",
                "MCP SDK  await call_tool (async def tool)",
                'await server.call_tool("add_async", args)',
                env,
            ),
            Contender(
                "2.mcp_sync",
                "MCP SDK  await call_tool (def tool: worker thread)",
                'await server.call_tool("add", args)',
                env,
            ),
            Contender("2.langchain", "LangChain  StructuredTool.invoke", "lc_tool.invoke(args)", env),
        ],
    )
    errors = Case(
        '2e. call add with {"a": "x"}: the error and str(error)',
        [
            Contender(
                "2e.hermes",
                "hermes  call_sync, InputInvalidError + str(e)",
                """
                try:
                    runtime.call_sync("math.add", bad_args)
                except InputInvalidError as e:
                    str(e)
                """,
                env,
            ),
            Contender(
                "2e.pydantic",
                "pydantic  ValidationError + str(e)",
                """
                try:
                    out_ta.validate_python(add(in_ta.validate_python(bad_args)))
                except ValidationError as e:
                    str(e)
                """,
                env,
            ),
        ],
    )
    scale = Case(
        f"3. call_sync with 1 and with {tool_count:,} registered tools",
        [
            Contender("3.one", "hermes  call_sync, 1 tool", 'runtime.call_sync("math.add", args)', env),
            Contender("3.many", f"hermes  call_sync, {tool_count:,} tools", 'big.call_sync("math.add", args)', env),
        ],
    )
    return calls, errors, scale, define_s, build_s


def comparisons(tool_count: int) -> list[Comparison]:
    return [
        Comparison("1a.hermes", "1a.pyd_td", "valid: hermes / pydantic (TypedDict)", 0.6),
        Comparison("1a.hermes", "1a.pyd_model", "valid: hermes / pydantic (BaseModel)", 0.6),
        Comparison("1a.hermes", "1a.msgspec", "valid: hermes / msgspec"),
        Comparison("1a.hermes", "1a.jsonschema", "valid: hermes / jsonschema"),
        Comparison("1a.hermes", "1a.fastjsonschema", "valid: hermes / fastjsonschema"),
        Comparison("1b.hermes", "1b.pyd_td", "invalid+message: hermes / pydantic (TypedDict)", 0.5),
        Comparison("1b.hermes", "1b.pyd_model", "invalid+message: hermes / pydantic (BaseModel)", 0.5),
        Comparison("1b.hermes", "1b.msgspec", "invalid+message: hermes / msgspec"),
        Comparison("1b.hermes", "1b.jsonschema", "invalid+message: hermes / jsonschema"),
        Comparison("1b.hermes", "1b.fastjsonschema", "invalid+message: hermes / fastjsonschema"),
        Comparison("1c.hermes", "1c.fastjsonschema", "imported conditions, valid: hermes / fastjsonschema", 1.0),
        Comparison("1c.hermes", "1c.jsonschema", "imported conditions, valid: hermes / jsonschema"),
        Comparison(
            "1d.hermes", "1d.fastjsonschema", "imported conditions, invalid+message: hermes / fastjsonschema", 1.0
        ),
        Comparison("1d.hermes", "1d.jsonschema", "imported conditions, invalid+message: hermes / jsonschema"),
        Comparison("2.hermes_sync", "2.pydantic", "call_sync / pydantic TypeAdapter + call", 1.3),
        Comparison("2.hermes_inline", "2.pydantic", "await call (inline def) / pydantic TypeAdapter + call", 1.5),
        Comparison("2.hermes_async", "2.pydantic", "await call (async def) / pydantic TypeAdapter + call", 1.5),
        Comparison("2.hermes_async", "2.mcp_async", "await call (async def) / MCP call_tool (async def)"),
        Comparison("2.hermes_decorated_sync", "2.hermes_sync", "call_sync: @tool / define_tool", 1.10),
        Comparison("2.hermes_sync_lenient", "2.hermes_sync", "call_sync, valid input: lenient / strict runtime", 1.05),
        Comparison("2.hermes_async_lenient", "2.hermes_async", "await call, valid input: lenient / strict", 1.05),
        Comparison("2.hermes_decorated_async", "2.hermes_async", "await call (async def): @tool / define_tool", 1.10),
        Comparison("2.hermes_thread", "2.mcp_sync", "await call (def, thread) / MCP call_tool (def, thread)", 0.5),
        Comparison("2.hermes_sync", "2.langchain", "call_sync / LangChain invoke"),
        Comparison("2e.hermes", "2e.pydantic", "error path: hermes / pydantic", 1.5),
        Comparison("3.many", "3.one", f"{tool_count:,} tools / 1 tool", 1.10),
    ]


def _only(cases: list[Case], keys: list[str]) -> list[Case]:
    """The cases holding only the contenders named by *keys*; an unknown key is an error listing the known ones."""
    known = [c.key for case in cases for c in case.contenders]
    unknown = [key for key in keys if key not in known]
    if unknown:
        raise SystemExit(f"--only: no contender {', '.join(unknown)}; the contenders are {', '.join(known)}")
    kept = [Case(case.title, [c for c in case.contenders if c.key in keys]) for case in cases]
    return [case for case in kept if case.contenders]


def main(argv: list[str]) -> int:
    def tools_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--tools", type=int, default=10_000, help="tools in the big runtime (default 10,000)")
        parser.add_argument(
            "--only",
            type=lambda text: [key.strip() for key in text.split(",") if key.strip()],
            help="time only these contenders, by key (such as 2.hermes_sync,2.pydantic), and their comparisons",
        )

    args = arguments(__doc__.split("\n\n")[0], argv, tools_option)
    started = time.perf_counter()
    loop = asyncio.new_event_loop()
    try:
        valid, invalid = validation_cases()
        conditions_valid, conditions_invalid = conditions_cases()
        calls, errors, scale, define_s, build_s = call_cases(loop, args.tools)
        cases = [valid, invalid, conditions_valid, conditions_invalid, calls, errors, scale]
        if args.only:
            cases = _only(cases, args.only)
        print(
            f"set-up: define_tool x{args.tools:,} took {define_s:.2f} s, "
            f"Runtime() over them {build_s * 1e3:.0f} ms; every contender checked"
        )
        time_all(cases, loop, args)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    info = machine(("hermesos-core", "pydantic", "pydantic-core", "msgspec", "jsonschema", "fastjsonschema", "mcp"))
    info["langchain-core"] = importlib.metadata.version("langchain-core")
    timed = {c.key for case in cases for c in case.contenders}
    comps = [comp for comp in comparisons(args.tools) if {comp.hermes, comp.peer} <= timed]
    missed = report(cases, comps, info, args)
    print(f"{missed} target(s) not met; total run time {time.perf_counter() - started:.0f} s")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
