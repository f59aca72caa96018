"""The front door: a call from a model or a client in, its result or its error out, the same at every edge.

The OpenAI and Anthropic adapters, ``hermesos serve`` and ``hermesos call``
each hold a :class:`Door` of their runtime and do nothing else by hand:

* **arguments**: JSON text (at most :data:`ARGUMENTS_MAX` characters, nested
  no deeper than the JSON reader goes, integers no longer than Python
  converts) or a mapping, given as it is; none at all is ``{}``. Text that
  cannot be read is ``INPUT_INVALID``, saying where and why.
* **routing**: a wire name (or, for the command line, a tool's own name) to
  the runtime's call, with the door's time limit.
* **a result** is written as :func:`result_text` writes it: a string as it is,
  anything else as JSON; a media tool's :class:`~hermes_core.Content` as each
  edge carries it (:func:`mcp_content`, :func:`anthropic_content`,
  :func:`openai_content`), and as text (:func:`content_text`) where only text
  is carried: each image, sound or file a short note (``[image/png, 12.3 KB:
  ...]``), never its bytes.
* **lenient mode** (``Door(lenient=...)``, the tools' own choice first):
  an input its schema refused is repaired where that is unambiguous and
  lossless and called again; the result comes back as :class:`Repaired`,
  whose :meth:`~Repaired.note` each edge appends to what the model reads.
* **an error** is shown under wire names (:meth:`~hermes_core._door._wire.WireNames.shown`):
  as ``CODE: message`` (:meth:`Door.error_text`), and as that text with the
  error's ``to_dict()`` (:meth:`Door.error_result`).

Nothing a model can send makes a door raise anything but a
:class:`~hermes_core.ToolError`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final, final

from hermes_core._base._arguments import ARGUMENTS_MAX, parse_arguments
from hermes_core._base._errors import InvalidDefinitionError, ToolError
from hermes_core._door._wire import WireNames
from hermes_core._runtime._entries import UNSET
from hermes_core._runtime._lenient import NO_REPAIR, Repairing
from hermes_core._runtime._lenient import RepairedOutput as Repaired
from hermes_core._runtime._runtime import Runtime, calls_of
from hermes_core._tool._blocks import Audio, Block, Content, EmbeddedResource, Image, ResourceLink, Text, size_text
from hermes_core._tool._call_context import Listeners
from hermes_core._tool._definition import check_timeout
from hermes_core.schema._strict import absent_nulls

__all__ = [
    "ARGUMENTS_MAX",
    "Door",
    "Repaired",
    "anthropic_content",
    "content_text",
    "mcp_content",
    "media_note",
    "openai_content",
    "parse_arguments",
    "result_text",
]


# -- a result as a model is sent it ------------------------------------------------------------------

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
    if kind is Content:
        return content_text(value, None)
    return _encode(value)


# -- content, as each edge carries it ----------------------------------------------------------------

#: The image types both model APIs take in a tool's result (Anthropic's four; OpenAI's are the same).
_MODEL_IMAGES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def media_note(block: Block, why: str | None) -> str:
    """A block that is not text, as one short line of text: what it is, its size, and *why* it is not shown.

    ``[image/png, 12.3 KB: not shown: ...]``, ``[resource file:///a.pdf, application/pdf, 2.0 MB]``,
    ``[resource link: file:///a.pdf (a.pdf)]``; never the bytes.
    """
    tail = f": {why}" if why else ""
    if isinstance(block, Image | Audio):
        return f"[{block.mime_type}, {size_text(len(block.data))}{tail}]"
    if isinstance(block, EmbeddedResource):
        return f"[resource {block.uri}, {block.mime_type or 'bytes'}, {size_text(block.size)}{tail}]"
    if isinstance(block, ResourceLink):
        said = f" ({block.title or block.name})"
        about = f": {block.description}" if block.description else ""
        return f"[resource link: {block.uri}{said}{about}]"
    return block.text


def content_text(content: Content | str, why: str | None) -> str:
    """*content* as text alone: text blocks and text resources as they are, any other block a :func:`media_note`."""
    if type(content) is str:
        return content
    assert isinstance(content, Content)
    parts = []
    for block in content.blocks:
        text = block.text if isinstance(block, Text | EmbeddedResource) else None
        parts.append(media_note(block, why) if text is None else text)
    return "\n".join(parts)


def mcp_content(content: Content | str) -> list[dict[str, Any]]:
    """*content* as MCP content blocks (``text``, ``image``, ``audio``, ``resource``, ``resource_link``)."""
    if type(content) is str:
        return [{"type": "text", "text": content}]
    assert isinstance(content, Content)
    out: list[dict[str, Any]] = []
    for block in content.blocks:
        if type(block) is Text:
            out.append({"type": "text", "text": block.text})
        elif type(block) is Image or type(block) is Audio:
            out.append({"type": type(block).__name__.lower(), "data": _base64(block.data), "mimeType": block.mime_type})
        elif type(block) is EmbeddedResource:
            resource: dict[str, Any] = {"uri": block.uri}
            if block.mime_type is not None:
                resource["mimeType"] = block.mime_type
            if block.blob is not None:
                resource["blob"] = _base64(block.blob)
            else:
                resource["text"] = block.text
            out.append({"type": "resource", "resource": resource})
        else:
            assert type(block) is ResourceLink
            link: dict[str, Any] = {"type": "resource_link", "uri": block.uri, "name": block.name}
            for key, value in (
                ("title", block.title),
                ("description", block.description),
                ("mimeType", block.mime_type),
                ("size", block.size),
            ):
                if value is not None:
                    link[key] = value
            out.append(link)
    return out


def anthropic_content(content: Content | str) -> str | list[dict[str, Any]]:
    """*content* as a ``tool_result``'s ``content``: text, ``image`` and (a PDF) ``document`` blocks.

    An image of a type the Messages API does not take, a sound, another
    file and a resource link are each a note in a text block.
    """
    return _for_model(content, _anthropic_image, _anthropic_pdf, _anthropic_text)


def _anthropic_image(block: Image) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block.mime_type, "data": _base64(block.data)}}


def _anthropic_pdf(block: EmbeddedResource, data: bytes) -> dict[str, Any]:
    return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": _base64(data)}}


def _anthropic_text(block: Block) -> dict[str, Any] | None:
    text = content_text(Content(block), _not_taken(block, "Anthropic's Messages API"))
    return {"type": "text", "text": text} if text else None  # the API refuses an empty text block


def openai_content(content: Content | str) -> str | list[dict[str, Any]]:
    """*content* as a Responses ``function_call_output``'s ``output``: ``input_text``, ``input_image``, ``input_file``.

    A PDF is an ``input_file``; an image of a type the API does not take, a
    sound, another file and a resource link are each a note in ``input_text``.
    """
    return _for_model(content, _openai_image, _openai_pdf, _openai_text)


def _openai_image(block: Image) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{block.mime_type};base64,{_base64(block.data)}"}


def _openai_pdf(block: EmbeddedResource, data: bytes) -> dict[str, Any]:
    name = block.uri.rstrip("/").rsplit("/", 1)[-1] or "document.pdf"
    return {"type": "input_file", "filename": name, "file_data": f"data:application/pdf;base64,{_base64(data)}"}


def _openai_text(block: Block) -> dict[str, Any]:
    return {"type": "input_text", "text": content_text(Content(block), _not_taken(block, "this API"))}


def _for_model(
    content: Content | str,
    image: Callable[[Image], dict[str, Any]],
    pdf: Callable[[EmbeddedResource, bytes], dict[str, Any]],
    text: Callable[[Block], dict[str, Any] | None],
) -> str | list[dict[str, Any]]:
    """*content* as a model API takes a tool's result, each block written by the API's own writer.

    A string stays as it is. An image of a type the model APIs show is written
    by *image*, a PDF by *pdf* (given its bytes), any other block by *text*
    (None: left out); no block at all is ``""``.
    """
    if type(content) is str:
        return content
    assert isinstance(content, Content)
    out: list[dict[str, Any]] = []
    for block in content.blocks:
        item: dict[str, Any] | None
        if type(block) is Image and block.mime_type in _MODEL_IMAGES:
            item = image(block)
        elif type(block) is EmbeddedResource and block.blob is not None and block.mime_type == "application/pdf":
            item = pdf(block, block.blob)
        else:
            item = text(block)
        if item is not None:
            out.append(item)
    return out or ""


def _not_taken(block: Block, api: str) -> str | None:
    """Why *api* is not sent *block* as it is (None: it is text)."""
    if type(block) is Image:
        return f"not shown: {api} takes PNG, JPEG, GIF and WebP images in a tool's result"
    if type(block) is Audio:
        return f"not heard: {api} takes no audio in a tool's result"
    if type(block) is EmbeddedResource and block.blob is not None:
        return f"not shown: {api} takes PDF files only in a tool's result"
    return None


# -- the door --------------------------------------------------------------------------------------


@final
class Door:
    """One runtime's tools as every edge calls them: arguments in, a result or an error out.

    Args:
        runtime: the tools, their permissions and their checks.
        names: the wire names of the runtime's tools, to route and show tools
            by, arguments read as a model sends them (the adapters and the MCP
            server); None: tools go by their own names, errors are shown as
            they are, and arguments are values already read (the command line,
            which reads its JSON with its own messages).
        timeout: the most seconds a call may take, overriding the tools' own
            limits; None: each tool's own.
        null_is_absent: a null sent for an optional field that does not accept
            null is taken as the field left out (OpenAI's strict mode, where
            every field is sent).
        where: what to name in the error for a malformed *timeout*.
        lenient: repair an input its schema refused, where a tool leaves the
            choice to its caller (True, False; None: the runtime's choice).
            A repaired call returns :class:`Repaired`.

    Raises:
        InvalidDefinitionError: *timeout* is not a positive number or None,
            or *lenient* not True, False or None.
    """

    __slots__ = (
        "_calls",
        "_renamed",
        "_repairs",
        "_timeout",
        "_to_name",
        "_unrepaired",
        "names",
        "null_is_absent",
        "runtime",
    )

    runtime: Runtime
    names: WireNames | None
    null_is_absent: bool

    def __init__(
        self,
        runtime: Runtime,
        names: WireNames | None,
        *,
        timeout: float | None = None,
        null_is_absent: bool = False,
        where: str = "Door()",
        lenient: bool | None = None,
    ) -> None:
        seconds = check_timeout(where, "timeout", timeout)
        if lenient is not None and not isinstance(lenient, bool):
            got = type(lenient).__name__
            raise InvalidDefinitionError(where, "lenient", f"must be True, False or None (the runtime's), got {got}")
        # The runtime's one entry for every edge: call and call_sync, by keyword.
        self._calls = calls = calls_of(runtime)
        # The tools whose refused input is repaired: checked on every call, so a set (empty: one truth test).
        self._repairs = calls.repairable(lenient)
        # What a call of any other tool is given: nothing, unless the runtime would repair where this door does not.
        self._unrepaired = NO_REPAIR if calls.repairs - self._repairs else None
        self.runtime = runtime
        self.names = names
        self.null_is_absent = null_is_absent
        self._timeout: Any = UNSET if seconds is None else seconds  # UNSET: the tool's or the runtime's own
        # The fast path's lookup (call): a tool's name by what a call names it; routing by own names takes the long way.
        self._to_name: Mapping[str, str] = dict(names.to_name) if names is not None else {}  # a dict: faster to read
        # The tools whose wire name differs from their name, to the wire name their input and output are refused under.
        self._renamed: dict[str, str] = {name: wire for wire, name in self._to_name.items() if wire != name}

    def prepared(self, sent: Any, raw: Any) -> tuple[str, Any]:
        """The name of the tool a call named *sent*, and the call's arguments parsed from *raw*.

        Raises:
            ToolNotFoundError: no tool goes by *sent* (wire names: the
                suggestions are wire names).
            InputInvalidError: as :func:`parse_arguments` raises it.
        """
        names = self.names
        if names is None:
            return sent, {} if raw is None else raw
        name = names.lookup(sent)
        arguments = parse_arguments(sent, raw)
        if self.null_is_absent:
            arguments = absent_nulls(self.runtime.tools[name].input, arguments, self.runtime.schemas)
        return name, arguments

    def call(self, sent: Any, raw: Any, listeners: Listeners | None = None) -> Awaitable[Any]:
        """The runtime's call of the tool named *sent* with the arguments *raw*; ``await`` it for the result.

        *listeners* hear the call's progress and log messages (``hermesos serve``'s notifications).

        Raises:
            ToolError: the call failed: at the door (an unknown tool, arguments
                that cannot be read), now; in the runtime, when awaited.
        """
        # The common call first, with no helper frame: this is on every call (bench_adapters, row 1).
        name = self._to_name.get(sent) if type(sent) is str else None
        if name is None or self.null_is_absent:
            name, arguments = self.prepared(sent, raw)
            # Refused under the name the call used: the error a model reads is built once (bench_adapters, 1e).
            shown = self._renamed.get(name)
        else:
            arguments = parse_arguments(sent, raw)
            shown = None if sent == name else sent  # _renamed.get(name), as it is for a wire name: one compare
        # A lenient call collects its repairs, to be returned with its result (a Repaired).
        repairing = Repairing(self._repairs, []) if self._repairs and name in self._repairs else self._unrepaired
        return self._calls.call(
            name, arguments, timeout=self._timeout, shown=shown, listeners=listeners, repairing=repairing
        )

    def call_sync(self, sent: Any, raw: Any, listeners: Listeners | None = None) -> Any:
        """:meth:`call`, from code without an event loop, through ``runtime.call_sync``.

        Raises:
            ToolError: the call failed.
            RuntimeError: the tool is ``async`` and this thread already runs an event loop.
        """
        name = self._to_name.get(sent) if type(sent) is str else None  # call's fast path, as call has it
        if name is None or self.null_is_absent:
            name, arguments = self.prepared(sent, raw)
            shown = self._renamed.get(name)
        else:
            arguments = parse_arguments(sent, raw)
            shown = None if sent == name else sent
        repairing = Repairing(self._repairs, []) if self._repairs and name in self._repairs else self._unrepaired
        return self._calls.call_sync(
            name, arguments, timeout=self._timeout, shown=shown, listeners=listeners, repairing=repairing
        )

    def shown(self, error: ToolError) -> ToolError:
        """*error* as the other side may be shown it: under wire names, or as it is when routing by own names."""
        return error if self.names is None else self.names.shown(error)

    def error_text(self, error: ToolError) -> str:
        """What a model is sent for *error*: its code, then its message (``INPUT_INVALID: fs_read was ...``)."""
        names = self.names  # shown(), inlined: this is on every failed call (bench_adapters, row 1e)
        shown = error if names is None else names.shown(error)
        # The code is a StrEnum: its text is its value, and adding to it is cheaper than formatting it.
        return shown.code + ": " + shown.message

    def error_result(self, error: ToolError) -> tuple[str, dict[str, Any]]:
        """*error* as :meth:`error_text` writes it, and as data (its ``to_dict()``), both under one naming.

        ``hermesos serve`` sends the text as the result's content and the data
        in its ``_meta`` (:data:`hermes_core.serve.ERROR_META_KEY`), never as
        ``structuredContent``, which a client may check against the tool's
        output schema.
        """
        shown = self.shown(error)
        data = shown.to_dict()
        return f"{shown.code}: {data['message']}", data
