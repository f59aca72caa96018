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

Everything a model is shown uses wire names (:mod:`hermes_core._door._wire`):
``fs.read`` is ``fs_read``, in the definitions, in the suggestions of
``TOOL_NOT_FOUND`` and in every error message. Nothing a model can send
makes ``handle`` raise: arguments that are not JSON, an unknown tool, bad
input, a denied permission, a handler that fails or times out all come back
as the tool's result, the error's model-facing message after its code
(Anthropic: with ``is_error``). A media tool's content
(:class:`~hermes_core.Content`) is sent as far as each API carries it:
Anthropic's ``tool_result`` takes text, image and PDF ``document`` blocks;
a Responses ``function_call_output`` takes ``input_text``, ``input_image``
and ``input_file`` items; a Chat Completions ``role: tool`` message takes
text only, so each image or file there is a one-line note saying what it is
and that it is not shown, never its base64. Reading the arguments, routing the call and
writing its result or error are the front door's (``hermes_core._door._door``),
which ``hermesos serve`` and ``hermesos call`` go through too: the same call
reads the same at every edge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any, Literal, final

from hermes_core._base._errors import ToolError
from hermes_core._base._frozen import derive, frozen
from hermes_core._door._door import (
    ARGUMENTS_MAX,
    Door,
    Repaired,
    anthropic_content,
    content_text,
    openai_content,
    result_text,
)
from hermes_core._door._wire import WireNames
from hermes_core._runtime._runtime import Runtime
from hermes_core._tool._blocks import Content
from hermes_core._tool._definition import Tool
from hermes_core.schema._inputs import input_schemas
from hermes_core.schema._strict import STRICT_SCHEMAS_MAX, StrictTooLargeError, strict_problem, strict_schema
from hermes_core.schema._validators import follow_refs

__all__ = ["ARGUMENTS_MAX", "STRICT_SCHEMAS_MAX", "AnthropicTools", "OpenAITools", "result_text"]


def _field(call: Any, name: str) -> Any:
    """*name* of a call given as a dict or as an SDK object; None when it has none."""
    if type(call) is dict or isinstance(call, Mapping):  # a dict first: the ABC check costs more than the rest
        return call.get(name)
    return getattr(call, name, None)


_DESCRIPTION = frozenset({"description"})
# Why a Chat Completions tool message shows an image or a file as a note: it carries text parts only.
_CHAT_CARRIES_TEXT = "not shown: this API's tool messages carry text only"


# -- the adapters --------------------------------------------------------------------------------------


class _Adapter:
    """What both adapters share: the definitions' common parts, the front door (``_door``), concurrency."""

    __slots__ = ()

    runtime: Runtime
    names: WireNames
    _door: Door

    def _function(self, tool: Tool) -> dict[str, Any]:
        """The parts of a definition every format has: the wire name, the description and the input schema."""
        refs = input_schemas(self.runtime.schemas)  # what the input's refs reach, closed as the input is
        return {
            "name": self.names.to_wire[tool.name],
            "description": self.names.rewrite(tool.description),
            # Fields' descriptions name tools too ("as fs.list gives it").
            "parameters": self.names.rewrite_in(follow_refs(tool.input, refs).json_schema(defs=refs), _DESCRIPTION),
        }

    def _parts(self, call: Any) -> tuple[Any, Any]:
        """The call's wire name and its raw arguments."""
        raise NotImplementedError

    def _message(self, call: Any, text: Any, failed: bool) -> dict[str, Any]:
        """The message answering *call* with *text* (a string, or the API's content blocks)."""
        raise NotImplementedError

    def _content(self, content: Content) -> Any:
        """A media tool's *content* as this API's tool result carries it."""
        raise NotImplementedError

    async def handle(self, call: Any) -> dict[str, Any]:
        """The message answering one tool call; see each adapter for its shape.

        A failed call's text is the error's code, then its message for the model.
        """
        wire, raw = self._parts(call)
        door = self._door
        try:
            result = await door.call(wire, raw)
        except ToolError as error:
            return self._message(call, door.error_text(error), True)
        if type(result) is Repaired:
            return self._message(call, self._noted(result), False)
        return self._message(call, result_text(result) if type(result) is not Content else self._content(result), False)

    def handle_sync(self, call: Any) -> dict[str, Any]:
        """:meth:`handle`, from code without an event loop, through ``runtime.call_sync``.

        A plain handler runs in this thread (on a worker thread if a time
        limit applies); an ``async`` one in a new event loop.

        Raises:
            RuntimeError: the tool is ``async`` and this thread already runs an
                event loop; use ``await handle(call)`` there.
        """
        wire, raw = self._parts(call)
        door = self._door
        try:
            result = door.call_sync(wire, raw)
        except ToolError as error:
            return self._message(call, door.error_text(error), True)
        if type(result) is Repaired:
            return self._message(call, self._noted(result), False)
        return self._message(call, result_text(result) if type(result) is not Content else self._content(result), False)

    def _noted(self, repaired: Repaired) -> Any:
        """A repaired call's result with the line saying what was assumed: after the text, or as a last text block."""
        output, note = repaired.output, repaired.note()
        if type(output) is not Content:
            return result_text(output) + "\n" + note
        content = self._content(output)
        if isinstance(content, str):
            return content + "\n" + note
        return [*content, self._note_block(note)]

    def _note_block(self, note: str) -> dict[str, Any]:
        """A text block of this API's content, holding *note*."""
        raise NotImplementedError

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
    A media tool's content is, in Responses, a list of ``input_text``,
    ``input_image`` (a ``data:`` URL) and ``input_file`` items; in Chat
    Completions, whose tool messages carry text only, text with a note for
    each image or file (``[image/png, 12.3 KB: not shown: ...]``).

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
        lenient: repair an input its schema refused where that is unambiguous
            and lossless (``"5"`` for an integer...), and tell the model, in one
            line after the result, what was assumed; a tool's own ``lenient``
            wins. None (the default): the runtime's choice. See docs/errors.md.

    Raises:
        InvalidDefinitionError: two tools have the same wire name; *api* is not
            one of the two; with *strict*, a tool's input holds what strict mode
            cannot say (any JSON value, a record, an object with open keys), or
            would be written out past :data:`STRICT_SCHEMAS_MAX` schemas;
            *lenient* is not True, False or None.
    """

    runtime: Runtime
    api: Literal["chat", "responses"]
    strict: bool
    names: WireNames
    _door: Door

    def __init__(
        self,
        runtime: Runtime,
        *,
        api: Literal["chat", "responses"] = "chat",
        strict: bool = False,
        lenient: bool | None = None,
    ) -> None:
        from hermes_core._base._errors import InvalidDefinitionError  # noqa: PLC0415 - kept beside its only use

        if api not in ("chat", "responses"):
            raise InvalidDefinitionError("OpenAITools()", "api", f"must be 'chat' or 'responses', got {api!r}")
        if not isinstance(strict, bool):
            raise InvalidDefinitionError("OpenAITools()", "strict", f"must be True or False, got {strict!r}")
        names = WireNames(runtime.tools)
        derive(
            self,
            runtime=runtime,
            api=api,
            strict=strict,
            names=names,
            _door=Door(runtime, names, null_is_absent=strict, where="OpenAITools()", lenient=lenient),
        )
        if strict:
            for tool in runtime.tools.values():
                problem = strict_problem(tool.input, input_schemas(runtime.schemas))
                if problem is None:
                    try:
                        strict_schema(self._function(tool)["parameters"])
                    except StrictTooLargeError:
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
                function["parameters"] = strict_schema(function["parameters"])
                function["strict"] = True
            if self.api == "chat":
                out.append({"type": "function", "function": function})
            else:  # the Responses API requires "strict" on every function
                out.append({"type": "function", **function, "strict": self.strict})
        return out

    def _parts(self, call: Any) -> tuple[Any, Any]:
        # A dict's fields read inline, _field for the rest: this is on every call (bench_adapters, row 1).
        if self.api == "chat":
            function = call.get("function") if type(call) is dict else _field(call, "function")
        else:
            function = call
        if type(function) is dict:
            return function.get("name"), function.get("arguments")
        return _field(function, "name"), _field(function, "arguments")

    def _content(self, content: Content) -> Any:
        if self.api == "chat":
            return content_text(content, _CHAT_CARRIES_TEXT)
        return openai_content(content)

    def _message(self, call: Any, text: Any, failed: bool) -> dict[str, Any]:
        """Chat Completions: a ``role: tool`` message; Responses: a ``function_call_output`` item."""
        if self.api == "chat":
            return {
                "role": "tool",
                "tool_call_id": call.get("id") if type(call) is dict else _field(call, "id"),
                "content": text,
            }
        return {"type": "function_call_output", "call_id": _field(call, "call_id"), "output": text}

    def _note_block(self, note: str) -> dict[str, Any]:
        return {"type": "input_text", "text": note}


@final
@frozen(init=False, eq=False)
class AnthropicTools(_Adapter):
    """A runtime's tools for Anthropic's Messages API.

    ``handle(call)`` answers a ``tool_use`` content block with
    ``{"type": "tool_result", "tool_use_id", "content", "is_error"}``; a
    media tool's ``content`` is a list of ``text``, ``image``
    (``{"type": "base64", "media_type", "data"}``) and, for a PDF,
    ``document`` blocks.

    Args:
        runtime: the tools, their permissions and their checks.
        lenient: as :class:`OpenAITools`'s.

    Raises:
        InvalidDefinitionError: two tools have the same wire name; *lenient*
            is not True, False or None.
    """

    runtime: Runtime
    names: WireNames
    _door: Door

    def __init__(self, runtime: Runtime, *, lenient: bool | None = None) -> None:
        names = WireNames(runtime.tools)
        door = Door(runtime, names, where="AnthropicTools()", lenient=lenient)
        derive(self, runtime=runtime, names=names, _door=door)

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

    def _parts(self, call: Any) -> tuple[Any, Any]:
        if type(call) is dict:  # as OpenAITools._parts
            return call.get("name"), call.get("input")
        return _field(call, "name"), _field(call, "input")

    def _content(self, content: Content) -> Any:
        return anthropic_content(content)

    def _message(self, call: Any, text: Any, failed: bool) -> dict[str, Any]:
        """``{"type": "tool_result", "tool_use_id", "content", "is_error"}``."""
        tool_use_id = call.get("id") if type(call) is dict else _field(call, "id")
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": failed}

    def _note_block(self, note: str) -> dict[str, Any]:
        return {"type": "text", "text": note}
