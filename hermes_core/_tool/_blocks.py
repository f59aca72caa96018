"""Content: a tool's result as blocks of text, images, audio and resources, not only JSON.

A tool that returns media (a screenshot, a chart, a recording) declares it
(``define_tool(..., media=True)``, or ``@tool`` on a function annotated
``-> Content``) and returns a :class:`Content`: its blocks, and optionally its
structured data, which the tool's output schema checks. Every edge sends the
blocks as its API carries them (:mod:`hermes_core._door._door`): ``hermesos serve``
as MCP content blocks, the Anthropic adapter as ``tool_result`` blocks, the
OpenAI adapters as far as each API takes them, ``hermesos call`` as a summary.

The blocks are frozen values checked when they are made: the bytes of an
image, a sound or an embedded file are bytes (at most :data:`MEDIA_MAX`), a
media type is ``type/subtype`` of the right type. A block that cannot be
made raises ``TypeError`` or ``ValueError`` naming the field; from a
handler, that is the tool's own fault (``TOOL_FAILED``).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable
from typing import Any, Final, TypeAlias, final

from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import Issue, shorten
from hermes_core.schema._validators import Validator

__all__ = [
    "BLOCK_TYPES",
    "MEDIA_MAX",
    "Audio",
    "Block",
    "Content",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "Text",
    "as_content",
    "content_validator",
    "size_text",
]

#: The most bytes one image, sound or embedded file may hold (16 MiB; in base64, a third more).
MEDIA_MAX: Final = 16 * 1024 * 1024

# A media type as RFC 6838 names them: type "/" subtype, each a restricted name; parameters are not kept.
_MEDIA_TYPE = re.compile(r"([a-z0-9][a-z0-9!#$&^_.+-]{0,126})/([a-z0-9][a-z0-9!#$&^_.+-]{0,126})\Z", re.IGNORECASE)


def _describe(value: object) -> str:
    return f"{type(value).__name__} {shorten(repr(value), 40)}"


def _data(block: str, field: str, value: object) -> bytes:
    """*value* as bytes (bytes, bytearray or memoryview), at most MEDIA_MAX of them."""
    if isinstance(value, bytes):
        data = value
    elif isinstance(value, bytearray | memoryview):
        data = bytes(value)
    else:
        hint = f" (base64 text: use {block}.from_base64(...))" if isinstance(value, str) else ""
        raise TypeError(f"{block}.{field} must be bytes{hint}, got {type(value).__name__}")
    if len(data) > MEDIA_MAX:
        raise ValueError(f"{block}.{field} is {size_text(len(data))}; at most {size_text(MEDIA_MAX)} are sent")
    return data


def _media_type(block: str, field: str, value: object, family: str | None) -> str:
    """*value* as a media type ``type/subtype``, lower-cased; of *family* (``image``) when one is given."""
    example = f"{family or 'application'}/{'png' if family == 'image' else 'wav' if family == 'audio' else 'pdf'}"
    if not isinstance(value, str):
        raise TypeError(f'{block}.{field} must be a media type such as "{example}", got {_describe(value)}')
    found = _MEDIA_TYPE.match(value.strip())
    if found is None:
        raise ValueError(f'{block}.{field} must be a media type such as "{example}", got {shorten(repr(value), 60)}')
    if family is not None and found.group(1).lower() != family:
        raise ValueError(f'{block}.{field} must be an {family}/* media type such as "{example}", got "{value}"')
    return value.strip().lower()


def _text(block: str, field: str, value: object, *, optional: bool = False) -> None:
    if not isinstance(value, str) and not (optional and value is None):
        wanted = "a string or None" if optional else "a string"
        raise TypeError(f"{block}.{field} must be {wanted}, got {_describe(value)}")


def _decoded(block: str, text: object) -> bytes:
    """Base64 *text* (standard alphabet, padded, no other characters) as bytes."""
    if not isinstance(text, str | bytes):
        raise TypeError(f"{block}.from_base64() takes base64 text, got {type(text).__name__}")
    if len(text) > (MEDIA_MAX // 3 + 1) * 4:
        raise ValueError(
            f"{block}.from_base64() was given {size_text(len(text))} of base64; at most "
            f"{size_text(MEDIA_MAX)} of data are sent"
        )
    import base64  # noqa: PLC0415 - not on every start (docs/performance.md, start-up)

    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"{block}.from_base64() was given text that is not base64 ({error})") from None


def size_text(size: int) -> str:
    """A size for people: ``812 bytes``, ``12.3 KB``, ``4.0 MB`` (powers of 1024)."""
    if size < 1024:
        return f"{size} byte" if size == 1 else f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


# -- the blocks ------------------------------------------------------------------------------------


@final
@frozen
class Text:
    """A block of text.

    Attributes:
        text: the text, as a model reads it.
    """

    text: str

    def __post_init__(self) -> None:
        _text("Text", "text", self.text)


@final
@frozen(repr=False)
class Image:
    """An image: its bytes and its media type (``image/png``, ``image/jpeg``...).

    Attributes:
        data: the image file's bytes (not base64), at most :data:`MEDIA_MAX`.
        mime_type: an ``image/*`` media type.

    Raises:
        TypeError: *data* is not bytes, or *mime_type* not a string.
        ValueError: *data* is larger than :data:`MEDIA_MAX`, or *mime_type* is not ``image/...``.
    """

    data: bytes
    mime_type: str = "image/png"

    def __post_init__(self) -> None:
        derive(
            self,
            data=_data("Image", "data", self.data),
            mime_type=_media_type("Image", "mime_type", self.mime_type, "image"),
        )

    @classmethod
    def from_base64(cls, text: str | bytes, mime_type: str = "image/png") -> Image:
        """An image from base64 text (as MCP and the model APIs carry it).

        Raises:
            ValueError: *text* is not base64, or is too large.
        """
        return cls(_decoded("Image", text), mime_type)

    def __repr__(self) -> str:
        return f"Image(<{size_text(len(self.data))}>, {self.mime_type!r})"


@final
@frozen(repr=False)
class Audio:
    """A sound: its bytes and its media type (``audio/wav``, ``audio/mpeg``...).

    Attributes:
        data: the audio file's bytes (not base64), at most :data:`MEDIA_MAX`.
        mime_type: an ``audio/*`` media type.

    Raises:
        TypeError: *data* is not bytes, or *mime_type* not a string.
        ValueError: *data* is larger than :data:`MEDIA_MAX`, or *mime_type* is not ``audio/...``.
    """

    data: bytes
    mime_type: str

    def __post_init__(self) -> None:
        derive(
            self,
            data=_data("Audio", "data", self.data),
            mime_type=_media_type("Audio", "mime_type", self.mime_type, "audio"),
        )

    @classmethod
    def from_base64(cls, text: str | bytes, mime_type: str) -> Audio:
        """A sound from base64 text (as MCP carries it).

        Raises:
            ValueError: *text* is not base64, or is too large.
        """
        return cls(_decoded("Audio", text), mime_type)

    def __repr__(self) -> str:
        return f"Audio(<{size_text(len(self.data))}>, {self.mime_type!r})"


@final
@frozen(kw_only=True, repr=False)
class EmbeddedResource:
    """A resource given whole, by its URI: its text, or its bytes (``blob``); exactly one of the two.

    Attributes:
        uri: the resource's URI (``file:///report.pdf``, ``memo://notes``).
        text: its text, for a text resource.
        blob: its bytes, for any other, at most :data:`MEDIA_MAX`.
        mime_type: its media type, when known.

    Raises:
        TypeError: a field has the wrong type.
        ValueError: both or neither of *text* and *blob* are given, *blob* is
            too large, or *mime_type* is not a media type.
    """

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        _text("EmbeddedResource", "uri", self.uri)
        _text("EmbeddedResource", "text", self.text, optional=True)
        if (self.text is None) == (self.blob is None):
            raise ValueError("EmbeddedResource takes exactly one of text (a text resource) and blob (its bytes)")
        if self.blob is not None:
            derive(self, blob=_data("EmbeddedResource", "blob", self.blob))
        if self.mime_type is not None:
            derive(self, mime_type=_media_type("EmbeddedResource", "mime_type", self.mime_type, None))

    def __repr__(self) -> str:
        held = f"text={shorten(repr(self.text), 40)}" if self.blob is None else f"blob=<{size_text(len(self.blob))}>"
        return f"EmbeddedResource(uri={self.uri!r}, {held}, mime_type={self.mime_type!r})"

    @property
    def size(self) -> int:
        """Its size in bytes (its text's, in UTF-8)."""
        return len(self.blob) if self.blob is not None else len((self.text or "").encode("utf-8", "surrogatepass"))


@final
@frozen(kw_only=True)
class ResourceLink:
    """A link to a resource the client may read (MCP's ``resource_link``), not the resource itself.

    Attributes:
        uri: the resource's URI.
        name: its name.
        title: a name for people, when it has one.
        description: what it is.
        mime_type: its media type, when known.
        size: its size in bytes, when known.

    Raises:
        TypeError: a field has the wrong type.
        ValueError: *mime_type* is not a media type, or *size* is negative.
    """

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        _text("ResourceLink", "uri", self.uri)
        _text("ResourceLink", "name", self.name)
        _text("ResourceLink", "title", self.title, optional=True)
        _text("ResourceLink", "description", self.description, optional=True)
        if self.mime_type is not None:
            derive(self, mime_type=_media_type("ResourceLink", "mime_type", self.mime_type, None))
        if self.size is not None and (isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 0):
            raise ValueError(
                f"ResourceLink.size must be a number of bytes (0 or more) or None, got {_describe(self.size)}"
            )


#: One block of content.
Block: TypeAlias = Text | Image | Audio | EmbeddedResource | ResourceLink
BLOCK_TYPES: Final = (Text, Image, Audio, EmbeddedResource, ResourceLink)


@final
@frozen(init=False)
class Content:
    """What a media tool returns: blocks of content, in order, and optionally structured data.

    ::

        return Content(Text("Sales by month"), Image(png, "image/png"), structured={"total": 1234})

    Args:
        blocks: the blocks, in the order a model is shown them.
        structured: JSON data for code (MCP's ``structuredContent``), checked
            against the tool's output schema; None: none. A tool that
            declares an output schema must give it.

    Raises:
        TypeError: a block is not one of :class:`Text`, :class:`Image`,
            :class:`Audio`, :class:`EmbeddedResource`, :class:`ResourceLink`.
    """

    blocks: tuple[Block, ...]
    structured: Any

    def __init__(self, *blocks: Block, structured: Any = None) -> None:
        for index, block in enumerate(blocks):
            if not isinstance(block, BLOCK_TYPES):
                raise TypeError(
                    f"Content's block {index} must be a Text, Image, Audio, EmbeddedResource or ResourceLink, "
                    f"got {_describe(block)}"
                )
        derive(self, blocks=tuple(blocks), structured=structured)

    def text(self) -> str:
        """The text blocks, joined by newlines."""
        return "\n".join(block.text for block in self.blocks if type(block) is Text)


def as_content(value: Any) -> Content | str | None:
    """What a media tool returned, as content: a :class:`Content`, a block, a list of blocks, or text.

    Returns:
        The value as a :class:`Content` (a string is kept as it is: one
        block of text), or None when it is none of those.
    """
    kind = type(value)
    if kind is Content or kind is str:
        return value  # type: ignore[no-any-return]
    if kind in BLOCK_TYPES:
        return Content(value)
    if (kind is list or kind is tuple) and all(type(item) in BLOCK_TYPES for item in value):
        return Content(*value)
    return None


def content_validator(structured: Validator, declared: bool) -> Validator:
    """The output check of a media tool: its result must be content; its structured data, *structured*'s.

    Args:
        structured: the compiled output schema, for the structured data.
        declared: whether the tool declares an output schema: then every
            result carries structured data (a plain string cannot), as MCP
            requires of a tool with an ``outputSchema``.
    """
    check: Callable[[Any, tuple[str | int, ...], list[Issue]], Any] = structured.entry

    def entry(value: Any, path: tuple[str | int, ...], issues: list[Issue]) -> Any:
        content = as_content(value)
        if content is None:
            issues.append(
                Issue(
                    path,
                    "type",
                    "must be content, as the tool declares media: a Content, a block (Text, Image, Audio, "
                    f"EmbeddedResource, ResourceLink), a list of blocks or a string, got {type(value).__name__}",
                )
            )
            return None
        data = content.structured if isinstance(content, Content) else None
        if data is None:
            if declared:
                issues.append(
                    Issue(
                        (*path, "structured"),
                        "missing",
                        "is required: the tool declares an output schema, so its Content carries structured data "
                        "matching it (Content(..., structured=...))",
                    )
                )
                return None
            return content
        before = len(issues)
        parsed = check(data, (*path, "structured"), issues)
        if len(issues) > before:
            return None
        assert isinstance(content, Content)  # a string has no structured data
        return content if parsed is data else Content(*content.blocks, structured=parsed)

    return Validator(structured.schema, structured.refs, entry, f"<content>\n{structured.source}")
