"""Tools handed to model APIs, and the model's calls routed back: OpenAI and Anthropic.

An adapter wraps a :class:`~hermes_core.Runtime`. ``definitions()`` is the
list to pass as ``tools=``; ``handle(call)`` takes one tool call as the SDK
gives it (its own object, or the same as a dict) and returns the message to
send back; ``handle_all(calls)`` does a whole turn's calls concurrently, in
the model's order::

    tools = OpenAITools(runtime)
    response = client.chat.completions.create(model=..., messages=messages, tools=tools.definitions())
    message = response.choices[0].message
    messages.append(message)
    messages.extend(await tools.handle_all(message.tool_calls or []))

Everything a model is shown uses wire names (:mod:`hermes_core._wire`):
``fs.read`` is ``fs_read``, in the definitions, in the suggestions of
``TOOL_NOT_FOUND`` and in every error message. Nothing a model can send
makes ``handle`` raise: arguments that are not JSON, an unknown tool, bad
input, a denied permission, a handler that fails or times out all come back
as the tool's result, the error's model-facing message after its code
(Anthropic: with ``is_error``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, final

from hermes_core._errors import InputInvalidError, Issue, ToolError
from hermes_core._frozen import derive, frozen
from hermes_core._runtime import Runtime
from hermes_core._tools import Tool
from hermes_core._wire import WireNames
from hermes_core.schema import (
    AllOfSchema,
    AnySchema,
    ArraySchema,
    ImportedSchema,
    LinkSchema,
    NeverSchema,
    NullableSchema,
    ObjectSchema,
    OneOfSchema,
    OptionalSchema,
    PatternPropertiesSchema,
    PrefixArraySchema,
    RecordSchema,
    RefSchema,
    Schema,
    TupleSchema,
    TypelessSchema,
    UnionSchema,
)
from hermes_core.schema._validators import follow_refs

__all__ = ["ARGUMENTS_MAX", "STRICT_SCHEMAS_MAX", "AnthropicTools", "OpenAITools", "result_text"]

#: The longest arguments text a call may carry, in characters; a longer one is INPUT_INVALID.
ARGUMENTS_MAX = 16 * 1024 * 1024

# JSON Schema keywords OpenAI's strict mode refuses; the runtime still enforces each.
_STRICT_DROPPED = frozenset(
    {
        "default",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    }
)


# One encoder, made once: json.dumps with any option builds a new one on every call (bench_adapters).
_encode = json.JSONEncoder(ensure_ascii=False).encode


_SCALAR_TEXT: dict[Any, str] = {True: "true", False: "false", None: "null"}


def result_text(value: Any) -> str:
    """A tool's result as the text a model is sent: a string as it is, anything else as JSON."""
    kind = type(value)
    if kind is str:
        return value  # type: ignore[no-any-return] # it is a str
    if kind is int or kind is float:
        return repr(value)  # what JSON writes; a checked result is never NaN or infinite
    if kind is bool or value is None:
        return _SCALAR_TEXT[value]
    if isinstance(value, str):
        return str(value)
    return _encode(value)


def _field(call: Any, name: str) -> Any:
    """*name* of a call given as a dict or as an SDK object; None when it has none."""
    if type(call) is dict or isinstance(call, Mapping):  # a dict first: the ABC check costs more than the rest
        return call.get(name)
    return getattr(call, name, None)


_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined] # set in __init__


def _arguments(wire: str, raw: Any) -> Any:
    """A call's arguments: JSON text parsed (INPUT_INVALID, located, if it is not JSON), or the object given."""
    if type(raw) is not str:
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw
        raw = str(raw)
    if not raw:
        return {}
    if len(raw) > ARGUMENTS_MAX:
        issue = Issue((), "too_big", f"is {len(raw):,} characters of JSON; at most {ARGUMENTS_MAX:,} are read")
        raise InputInvalidError(wire, [issue])
    try:
        # The C scanner alone, for the common case of a value filling the text: json.loads costs three times
        # as much in its Python layers (bench_adapters). Anything else takes the full path, and its messages.
        value, end = _scan(raw, 0)
        if end == len(raw):
            return value
    except (ValueError, StopIteration, RecursionError):
        pass
    try:
        return json.loads(raw, parse_int=_integer)
    except json.JSONDecodeError as error:
        detail = f"is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}; send a JSON object"
        raise InputInvalidError(wire, [Issue((), "invalid", detail)]) from None
    except _TooManyDigitsError as error:
        detail = (
            f"holds an integer of {error.digits:,} digits, more than the {sys.get_int_max_str_digits():,} this "
            "Python reads; send a shorter number, or a string of digits if the tool takes one"
        )
        raise InputInvalidError(wire, [Issue((), "too_big", detail)]) from None
    except RecursionError:
        raise InputInvalidError(wire, [Issue((), "too_deep", "nests arrays and objects too deeply")]) from None


class _TooManyDigitsError(ValueError):
    """An integer of the arguments longer than Python converts (``sys.get_int_max_str_digits()``)."""

    def __init__(self, digits: int) -> None:
        super().__init__(digits)
        self.digits = digits


def _integer(text: str) -> int:
    """An integer of the arguments; one past Python's int-string limit is named, not a bare ValueError."""
    try:
        return int(text)
    except ValueError:
        raise _TooManyDigitsError(len(text.lstrip("-"))) from None


_DESCRIPTION = frozenset({"description"})


# -- OpenAI's strict mode ------------------------------------------------------------------------------


#: The most schemas one tool's parameters may hold once written for strict mode. Inlining each ``$ref``
#: that has a description beside it can multiply a document's size (a definition used twice at each
#: of 16 levels: 65,536 copies); past this, far beyond what strict mode takes, the tool is refused.
STRICT_SCHEMAS_MAX = 100_000


class _StrictTooLargeError(Exception):
    """The strict form of a tool's parameters would hold more than :data:`STRICT_SCHEMAS_MAX` schemas."""


def _strict(
    schema: dict[str, Any], defs: Mapping[str, Any] | None = None, left: list[int] | None = None
) -> dict[str, Any]:
    """*schema* (exported JSON Schema) as OpenAI's strict mode takes it.

    Every object lists all its properties as required, with no others; a
    property that was optional accepts null instead; keywords strict mode
    refuses are left out; a ``$ref`` with other keywords beside it (a field's
    description) is replaced by what it refers to, as strict mode takes a
    ``$ref`` only alone. *defs* are the root's ``$defs``; *left* counts down
    the schemas still allowed to be written.

    Raises:
        _StrictTooLargeError: more than :data:`STRICT_SCHEMAS_MAX` schemas would be written.
    """
    if defs is None:
        defs = schema.get("$defs", {})
    if left is None:
        left = [STRICT_SCHEMAS_MAX]
    left[0] -= 1
    if left[0] < 0:  # the work stops with the budget: an inlining that multiplies never runs long
        raise _StrictTooLargeError
    ref = schema.get("$ref")
    if isinstance(ref, str) and len(schema) > 1 and ref.startswith("#/$defs/") and ref[8:] in defs:
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        schema = {**defs[ref[8:]], **siblings}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _STRICT_DROPPED:
            continue
        if key == "properties":
            required = set(schema.get("required", ()))
            out[key] = {
                name: _strict(sub, defs, left) if name in required else _nullable(_strict(sub, defs, left))
                for name, sub in value.items()
            }
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _strict(value, defs, left)
        elif key in ("anyOf", "prefixItems"):
            out[key] = [_strict(sub, defs, left) for sub in value]
        elif key == "$defs":
            out[key] = {name: _strict(sub, defs, left) for name, sub in value.items()}
        else:
            out[key] = value
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    if "prefixItems" in out:  # a tuple: strict mode has no prefixItems; any of its item schemas, in order
        items = out.pop("prefixItems")
        out["items"] = items[0] if len(items) == 1 else {"anyOf": items}
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]} if kind != "null" else schema
    if "anyOf" in schema:
        options = schema["anyOf"]
        if any(option.get("type") == "null" for option in options):
            return schema
        return {**schema, "anyOf": [*options, {"type": "null"}]}
    if "enum" in schema:
        values = schema["enum"]
        return schema if None in values else {**schema, "enum": [*values, None]}
    return {"anyOf": [schema, {"type": "null"}]}


def _strict_problem(schema: Schema, refs: Mapping[str, Schema], path: str, seen: set[int]) -> str | None:
    """Why *schema* cannot be given to strict mode at all (where, and what), or None.

    *seen* holds the nodes already looked at, and grows: a node reached again
    (through a cycle, or a second ref to one definition) was found fine the
    first time, or is being looked at; so the walk is linear in the nodes.
    """
    if id(schema) in seen:
        return None
    seen.add(id(schema))
    if isinstance(schema, RefSchema):
        if schema.name not in refs:
            return None
        return _strict_problem(refs[schema.name], refs, path, seen)
    if isinstance(schema, ImportedSchema):
        if schema.unsupported:
            return f"its imported JSON Schema has what strict mode cannot be given: {schema.unsupported[0]}"
        return _strict_problem(schema.root, refs, path, seen)
    if isinstance(schema, LinkSchema):
        if schema.target is None:
            return None
        return _strict_problem(schema.target, refs, path, seen)
    if isinstance(schema, tuple(_IMPORTED_ONLY)):
        keyword = _IMPORTED_ONLY[type(schema)]
        return f'field "{path or "(the input)"}" uses {keyword}, which strict mode cannot say'
    if isinstance(schema, AnySchema):
        return f'field "{path or "(the input)"}" accepts any JSON value (s.any()), which strict mode cannot say'
    if isinstance(schema, RecordSchema):
        return f'field "{path or "(the input)"}" is a record (s.record()), whose keys strict mode cannot leave open'
    if isinstance(schema, ObjectSchema) and schema.extra != "forbid":
        return (
            f'field "{path or "(the input)"}" allows unknown keys (extra={schema.extra!r}), which strict mode forbids'
        )
    for name, child in _children(schema):
        problem = _strict_problem(child, refs, f"{path}.{name}" if path and name else path or name, seen)
        if problem is not None:
            return problem
    return None


# The shapes only imported JSON Schema has, as the document says them.
_IMPORTED_ONLY: dict[type[Schema], str] = {
    NeverSchema: "false (no value)",
    AllOfSchema: "allOf",
    OneOfSchema: "oneOf",
    TypelessSchema: "a schema without type",
    PrefixArraySchema: "prefixItems with more items after them",
    PatternPropertiesSchema: "patternProperties",
}


def _through(schema: Schema, refs: Mapping[str, Schema]) -> Schema:
    """*schema* with named refs, imported documents and their links followed to the node they stand for."""
    for _ in range(64):  # a chain of refs and links longer than this is a cycle: the checks explain those
        if isinstance(schema, ImportedSchema):
            schema = schema.root
        elif isinstance(schema, LinkSchema) and schema.target is not None:
            schema = schema.target
        elif isinstance(schema, RefSchema) and schema.name in refs:
            schema = follow_refs(schema, refs)
            if isinstance(schema, RefSchema):
                break
        else:
            break
    return schema


def _children(schema: Schema) -> list[tuple[str, Schema]]:
    if isinstance(schema, ObjectSchema):
        return list(schema.field_items)
    if isinstance(schema, ArraySchema):
        return [("", schema.items)]
    if isinstance(schema, TupleSchema):
        return [("", item) for item in schema.items]
    if isinstance(schema, UnionSchema):
        return [("", option) for option in schema.options]
    if isinstance(schema, NullableSchema | OptionalSchema):
        return [("", schema.schema)]
    return []


def _absent_nulls(schema: Schema, value: Any, refs: Mapping[str, Schema], depth: int = 0) -> Any:
    """*value* with a null sent for an optional field that does not accept null taken as the field left out."""
    if depth > 64:  # a deeper value is checked as it is: the schema's own depth limit explains it
        return value
    schema = _through(schema, refs)
    if isinstance(schema, NullableSchema | OptionalSchema):
        return _absent_nulls(schema.schema, value, refs, depth)
    if isinstance(schema, ObjectSchema) and type(value) is dict:
        fields = schema.fields
        out = {}
        for key, item in value.items():
            field = fields.get(key) if type(key) is str else None
            if item is None and isinstance(field, OptionalSchema) and not _accepts_null(field.schema, refs):
                continue
            out[key] = item if field is None else _absent_nulls(field, item, refs, depth + 1)
        return out
    if isinstance(schema, ArraySchema) and type(value) is list:
        return [_absent_nulls(schema.items, item, refs, depth + 1) for item in value]
    return value


def _accepts_null(schema: Schema, refs: Mapping[str, Schema]) -> bool:
    schema = _through(schema, refs)
    if isinstance(schema, NullableSchema | AnySchema):
        return True
    if isinstance(schema, UnionSchema):
        return any(_accepts_null(option, refs) for option in schema.options)
    values = getattr(schema, "values", None)
    return isinstance(values, tuple) and None in values


# -- the adapters --------------------------------------------------------------------------------------


class _Adapter:
    """What both adapters share: wire names, routing a call through the runtime, and concurrency."""

    __slots__ = ()

    runtime: Runtime
    names: WireNames

    def _function(self, tool: Tool) -> dict[str, Any]:
        """The parts of a definition every format has: the wire name, the description and the input schema."""
        refs = self.runtime.schemas
        return {
            "name": self.names.to_wire[tool.name],
            "description": self.names.rewrite(tool.description),
            # Fields' descriptions name tools too ("as fs.list gives it").
            "parameters": self.names.rewrite_in(follow_refs(tool.input, refs).json_schema(defs=refs), _DESCRIPTION),
        }

    def _prepared(self, wire: Any, raw: Any, null_is_absent: bool) -> tuple[str, Any]:
        """The tool's name and the call's arguments, or the ToolError a model is sent instead."""
        name = self.names.lookup(wire)
        arguments = _arguments(wire, raw)
        if null_is_absent:
            arguments = _absent_nulls(self.runtime.tools[name].input, arguments, self.runtime.schemas)
        return name, arguments

    def _failure(self, error: ToolError) -> str:
        """What a model is sent for *error*: its code, then its message, under wire names."""
        shown = self.names.shown(error)
        return f"{shown.code.value}: {shown.message}"

    def _parts(self, call: Any) -> tuple[Any, Any, bool]:
        """The call's wire name, its raw arguments, and whether a null sent for an optional field is left out."""
        raise NotImplementedError

    def _message(self, call: Any, text: str, failed: bool) -> dict[str, Any]:
        """The message answering *call* with *text*."""
        raise NotImplementedError

    async def handle(self, call: Any) -> dict[str, Any]:
        """The message answering one tool call; see each adapter for its shape.

        A failed call's text is the error's code, then its message for the model.
        """
        wire, raw, null_is_absent = self._parts(call)
        # One frame, no helper coroutine, the common case first: this is on every call (bench_adapters).
        try:
            name = self.names.to_name.get(wire) if type(wire) is str else None
            if name is None or null_is_absent or type(raw) is not str:
                name, arguments = self._prepared(wire, raw, null_is_absent)
            else:
                arguments = _arguments(wire, raw)
            result = await self.runtime.call(name, arguments)
        except ToolError as error:
            return self._message(call, self._failure(error), True)
        return self._message(call, result_text(result), False)

    def handle_sync(self, call: Any) -> dict[str, Any]:
        """:meth:`handle`, from code without an event loop, through ``runtime.call_sync``.

        A plain handler runs in this thread (on a worker thread if a time
        limit applies); an ``async`` one in a new event loop.

        Raises:
            RuntimeError: the tool is ``async`` and this thread already runs an
                event loop; use ``await handle(call)`` there.
        """
        wire, raw, null_is_absent = self._parts(call)
        try:
            name, arguments = self._prepared(wire, raw, null_is_absent)
            text, failed = result_text(self.runtime.call_sync(name, arguments)), False
        except ToolError as error:
            text, failed = self._failure(error), True
        return self._message(call, text, failed)

    async def handle_all(self, calls: Iterable[Any]) -> list[dict[str, Any]]:
        """The messages answering every tool call of one model turn, run concurrently, in the model's order."""
        return list(await asyncio.gather(*(self.handle(call) for call in calls)))


@final
@frozen(init=False, eq=False)
class OpenAITools(_Adapter):
    """A runtime's tools for OpenAI's Chat Completions or Responses API.

    ``handle(call)`` answers a Chat Completions ``tool_calls`` item with
    ``{"role": "tool", "tool_call_id", "content"}``, and a Responses
    ``function_call`` item with ``{"type": "function_call_output", "call_id", "output"}``.

    Args:
        runtime: the tools, their permissions and their checks.
        api: ``"chat"`` (Chat Completions: ``{"type": "function", "function":
            {...}}``) or ``"responses"`` (``{"type": "function", "name", ...}``).
        strict: give the schemas as structured outputs' strict mode takes them
            and set ``strict: true``: every property required, an optional one
            nullable (a null sent for it is taken as left out, so its default
            applies), and keywords strict mode refuses (lengths, bounds,
            patterns, defaults) left out of what the model is shown, though the
            runtime still enforces them.

    Raises:
        InvalidDefinitionError: two tools have the same wire name; *api* is not
            one of the two; with *strict*, a tool's input holds what strict mode
            cannot say (any JSON value, a record, an object with open keys), or
            would be written out past :data:`STRICT_SCHEMAS_MAX` schemas.
    """

    runtime: Runtime
    api: Literal["chat", "responses"]
    strict: bool
    names: WireNames

    def __init__(self, runtime: Runtime, *, api: Literal["chat", "responses"] = "chat", strict: bool = False) -> None:
        from hermes_core._errors import InvalidDefinitionError  # noqa: PLC0415 - kept beside its only use

        if api not in ("chat", "responses"):
            raise InvalidDefinitionError("OpenAITools()", "api", f"must be 'chat' or 'responses', got {api!r}")
        if not isinstance(strict, bool):
            raise InvalidDefinitionError("OpenAITools()", "strict", f"must be True or False, got {strict!r}")
        names = WireNames(runtime.tools)
        derive(self, runtime=runtime, api=api, strict=strict, names=names)
        if strict:
            for tool in runtime.tools.values():
                problem = _strict_problem(tool.input, runtime.schemas, "", set())
                if problem is None:
                    try:
                        _strict(self._function(tool)["parameters"])
                    except _StrictTooLargeError:
                        problem = (
                            f"its input schema, written out for strict mode, would hold more than "
                            f"{STRICT_SCHEMAS_MAX:,} schemas (strict mode takes a $ref only alone, so each $ref with "
                            "a description beside it is written out in full); give the $refs no siblings, or use "
                            "strict=False"
                        )
                if problem is not None:
                    raise InvalidDefinitionError(
                        f'tool "{tool.name}"', "input", f"cannot be given to OpenAI's strict mode: {problem}"
                    )

    def definitions(self) -> list[dict[str, Any]]:
        """The tools, as ``tools=`` takes them."""
        out: list[dict[str, Any]] = []
        for tool in self.runtime.tools.values():
            function = self._function(tool)
            if self.strict:
                function["parameters"] = _strict(function["parameters"])
                function["strict"] = True
            if self.api == "chat":
                out.append({"type": "function", "function": function})
            else:  # the Responses API requires "strict" on every function
                out.append({"type": "function", **function, "strict": self.strict})
        return out

    def _parts(self, call: Any) -> tuple[Any, Any, bool]:
        function = _field(call, "function") if self.api == "chat" else call
        return _field(function, "name"), _field(function, "arguments"), self.strict

    def _message(self, call: Any, text: str, failed: bool) -> dict[str, Any]:
        """Chat Completions: a ``role: tool`` message; Responses: a ``function_call_output`` item."""
        if self.api == "chat":
            return {"role": "tool", "tool_call_id": _field(call, "id"), "content": text}
        return {"type": "function_call_output", "call_id": _field(call, "call_id"), "output": text}


@final
@frozen(init=False, eq=False)
class AnthropicTools(_Adapter):
    """A runtime's tools for Anthropic's Messages API.

    ``handle(call)`` answers a ``tool_use`` content block with
    ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``.

    Args:
        runtime: the tools, their permissions and their checks.

    Raises:
        InvalidDefinitionError: two tools have the same wire name.
    """

    runtime: Runtime
    names: WireNames

    def __init__(self, runtime: Runtime) -> None:
        derive(self, runtime=runtime, names=WireNames(runtime.tools))

    def definitions(self) -> list[dict[str, Any]]:
        """The tools, as ``tools=`` takes them: ``{"name", "description", "input_schema"}``."""
        out = []
        for tool in self.runtime.tools.values():
            function = self._function(tool)
            out.append(
                {
                    "name": function["name"],
                    "description": function["description"],
                    "input_schema": function["parameters"],
                }
            )
        return out

    def _parts(self, call: Any) -> tuple[Any, Any, bool]:
        return _field(call, "name"), _field(call, "input"), False

    def _message(self, call: Any, text: str, failed: bool) -> dict[str, Any]:
        """``{"type": "tool_result", "tool_use_id", "content", "is_error"}``."""
        return {"type": "tool_result", "tool_use_id": _field(call, "id"), "content": text, "is_error": failed}
