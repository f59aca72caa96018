"""A mounted tool's result as content: a server's text, image, audio and resource blocks as hermes blocks.

A mounted tool whose server lists no ``outputSchema`` declares media
(``define_tool(..., media=True)``): its result is the server's text when
every block is text (as before), else a :class:`~hermes_core.Content` of the
same blocks, so that an image reaches ``hermesos serve``'s clients and the
model adapters as an image, not as base64 inside JSON text. A tool with an
``outputSchema`` returns its structured content, as before.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_core import (
    MEDIA_MAX,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    ToolFailedError,
    shorten,
)

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["content_of", "mounted_handler"]


def _block(block: Mapping[str, Any]) -> Text | Image | Audio | EmbeddedResource | ResourceLink:
    """One MCP content block (as wire JSON) as a hermes block; an unknown kind is its JSON as text.

    Raises:
        ValueError, TypeError: the block is malformed (data that is not base64, a media type that is not one).
    """
    kind = block.get("type")
    if kind == "text":
        return Text(block["text"])
    if kind == "image":
        return Image.from_base64(block["data"], block["mimeType"])
    if kind == "audio":
        return Audio.from_base64(block["data"], block["mimeType"])
    if kind == "resource":
        resource = block["resource"]
        blob = resource.get("blob")
        return EmbeddedResource(
            uri=resource["uri"],
            text=resource.get("text") if blob is None else None,
            blob=None if blob is None else _decoded(blob),
            mime_type=resource.get("mimeType"),
        )
    if kind == "resource_link":
        return ResourceLink(
            uri=block["uri"],
            name=block["name"],
            title=block.get("title"),
            description=block.get("description"),
            mime_type=block.get("mimeType"),
            size=block.get("size"),
        )
    return Text(json.dumps(dict(block), ensure_ascii=False))


def _decoded(text: str) -> bytes:
    """A resource's base64 blob as bytes (the size is the resource's to check)."""
    if len(text) > (MEDIA_MAX // 3 + 1) * 4:
        raise ValueError(f"its blob is {len(text):,} characters of base64, more than {MEDIA_MAX:,} bytes of data")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"its blob is not base64 ({error})") from None


def content_of(result: CallToolResult) -> Content:
    """The blocks of a server's result, and its structured content, as a :class:`~hermes_core.Content`.

    Raises:
        ToolFailedError: a block is malformed (says which, and what is wrong).
    """
    return _content(
        [block.model_dump(by_alias=True, exclude_none=True, mode="json") for block in result.content],
        result.structured_content,
    )


def _content(blocks: Sequence[Mapping[str, Any]], structured: Any) -> Content:
    converted = []
    for index, block in enumerate(blocks):
        try:
            converted.append(_block(block))
        except (KeyError, TypeError, ValueError) as error:
            what = f"lacks {error}" if isinstance(error, KeyError) else str(error)
            raise ToolFailedError(
                f"the MCP server sent a result whose block {index} ({shorten(str(block.get('type')), 30)}) "
                f"cannot be read: {shorten(what, 300)}"
            ) from None
    return Content(*converted, structured=structured)


def mounted_handler(
    handler: Callable[[dict[str, Any]], Awaitable[Any]], *, media: bool
) -> Callable[[dict[str, Any]], Awaitable[Any]]:
    """*handler* of a mounted tool; with *media* (no output schema), a media tool's: content or text, never bare data.

    A server may send structured content without listing an output schema:
    it is kept as the content's structured data, with its JSON as the text a
    model reads.
    """
    if not media:
        return handler

    async def call(arguments: dict[str, Any]) -> Any:
        value = await handler(arguments)
        if type(value) is str or type(value) is Content:
            return value
        return Content(Text(json.dumps(value, ensure_ascii=False)), structured=value)

    call.__qualname__ = call.__name__ = getattr(handler, "__name__", "call")
    return call
