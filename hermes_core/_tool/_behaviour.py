"""What a tool tells clients about itself: one value, as the Model Context Protocol's ``ToolAnnotations`` is.

:class:`ToolHints` holds a tool's title and its four hints; :meth:`ToolHints.annotations`
writes them as MCP's ``annotations`` object, and :meth:`ToolHints.from_annotations`
reads one that an MCP server listed. They are hints: a runtime enforces
permissions, never hints. ``define_tool`` and ``@tool`` take them as one value,
``hints=ToolHints(...)``; :func:`given_hints` takes their old spelling, one
keyword argument each, until 0.6, with a warning saying what to write instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, final

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import json_string, shorten

if TYPE_CHECKING:  # for type checkers only: nothing reads the class at run time
    from typing import TypedDict

    class HintKeywords(TypedDict, total=False):
        """The title and hints as keyword arguments of ``define_tool`` and ``@tool``: deprecated, until 0.6."""

        title: str | None
        read_only: bool | None
        destructive: bool | None
        idempotent: bool | None
        open_world: bool | None


__all__ = ["ToolHints", "check_hints", "given_hints", "unchecked_hints"]

# Each hint's field, and its key in MCP's ToolAnnotations, in the order MCP lists them.
_KEYS: Final = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)
# The fields of ToolHints, in its order: what define_tool and @tool took as keyword arguments before hints=.
_FIELDS: Final = ("title", *(name for name, _ in _KEYS))
_TITLE_MAX: Final = 100


@final
@frozen(kw_only=True)
class ToolHints:
    """A tool's title and hints for clients, such as MCP hosts deciding what to confirm with the user.

    Every field is None (not said) unless given. Checked when made: a
    malformed one raises :class:`~hermes_core.InvalidDefinitionError`.

    Attributes:
        title: a short human-readable name, for a client's user interface (at most 100 characters).
        read_only: the tool changes nothing in its environment.
        destructive: the tool may delete or overwrite things (meaningful when not read-only).
        idempotent: calling it again with the same input has no further effect.
        open_world: the tool reaches an open world (the web, say), not a closed domain.

    """

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def __post_init__(self) -> None:
        check_hints("ToolHints()", self)

    def annotations(self) -> dict[str, Any]:
        """The hints as MCP's ``ToolAnnotations`` (``title``, ``readOnlyHint``...), the unsaid left out."""
        out: dict[str, Any] = {} if self.title is None else {"title": self.title}
        for name, key in _KEYS:
            value = getattr(self, name)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_annotations(cls, annotations: Mapping[str, Any], *, title: object = None) -> ToolHints:
        """The hints an MCP server listed for a tool, read leniently: what is malformed is left unsaid.

        Args:
            annotations: MCP's ``annotations`` object (``readOnlyHint``...); a
                hint that is not a boolean is ignored, and ``destructiveHint``
                is ignored when ``readOnlyHint`` is true (MCP gives it meaning
                only for a tool that is not read-only).
            title: the tool's own ``title``, which wins over ``annotations["title"]``;
                a title that is not a non-blank string is ignored, a long one shortened.
        """
        values: dict[str, Any] = {}
        for name, key in _KEYS:
            value = annotations.get(key)
            if isinstance(value, bool):
                values[name] = value
        if values.get("read_only"):
            values.pop("destructive", None)
        for text in (title, annotations.get("title")):
            if isinstance(text, str) and text.strip():
                values["title"] = shorten(text.strip(), _TITLE_MAX)
                break
        return cls(**values)


def check_hints(decl: str, hints: ToolHints) -> None:
    """Raise, naming *decl* and the field, for a malformed title or hint.

    Raises:
        InvalidDefinitionError: the title is not a short non-blank string, a
            hint is not True, False or None, or a read-only tool says it is destructive.
    """
    title: object = hints.title
    if title is not None and (not isinstance(title, str) or not title.strip() or len(title) > _TITLE_MAX):
        raise InvalidDefinitionError(
            decl,
            "title",
            f"must be a short non-blank string (at most {_TITLE_MAX} characters) such as 'Read a file', "
            f"or None, got {shorten(repr(title))}",
        )
    for name, _ in _KEYS:
        value = getattr(hints, name)
        if value is not None and not isinstance(value, bool):
            raise InvalidDefinitionError(
                decl, name, f"must be True, False or None (not said), got {shorten(repr(value))}"
            )
    if hints.read_only and hints.destructive:
        raise InvalidDefinitionError(
            decl, "destructive", "is True, but read_only is True too: a tool that changes nothing destroys nothing"
        )


def unchecked_hints(**values: Any) -> ToolHints:
    """A ToolHints of *values* not yet checked, for a :class:`~hermes_core.Tool` to check naming itself."""
    hints = object.__new__(ToolHints)
    for name in _FIELDS:
        object.__setattr__(hints, name, values.get(name))
    return hints


def given_hints(caller: str, name: object, hints: ToolHints | None, keywords: Mapping[str, Any]) -> ToolHints:
    """The hints a tool was given: *hints*, or the deprecated keyword arguments (``read_only=True``...) of *caller*.

    The keyword arguments are the old spelling: they are taken until 0.6, with a
    ``DeprecationWarning`` that spells out the replacement with their values
    (``hints=ToolHints(read_only=True)``), pointing at the line that called
    *caller* (``define_tool`` or ``@tool``, which call this directly). The
    hints they make are left for the Tool to check, naming itself.

    Raises:
        TypeError: a keyword argument *caller* does not take, as Python says it.
        InvalidDefinitionError: *hints* is given and so is a keyword argument: one spelling, not both.
    """
    if not keywords:
        return unchecked_hints() if hints is None else hints
    for keyword in keywords:
        if keyword not in _FIELDS:
            raise TypeError(f"{caller.lstrip('@')}() got an unexpected keyword argument {keyword!r}")
    decl = f"tool {json_string(name)}" if isinstance(name, str) else "tool"
    ordered = [field for field in _FIELDS if field in keywords]  # in ToolHints' order, as a reader writes them
    written = _and([f"{field}={_shown(keywords[field])}" for field in ordered])
    if hints is not None:
        raise InvalidDefinitionError(decl, "hints", _both(hints, keywords, ordered, written))
    import warnings  # noqa: PLC0415 - only the old spelling needs it

    replacement = ", ".join(f"{field}={_shown(keywords[field])}" for field in ordered)
    warnings.warn(
        f"{decl}: {caller}'s keyword argument{'s' if len(ordered) > 1 else ''} "
        f"{_and([f'{field}=' for field in ordered])} {'are' if len(ordered) > 1 else 'is'} deprecated and will be "
        f"removed in 0.6: write hints=ToolHints({replacement}) instead (ToolHints from hermes_core)",
        DeprecationWarning,
        stacklevel=3,  # the line calling define_tool or @tool: past this function and the caller
    )
    return unchecked_hints(**keywords)


def _both(hints: object, keywords: Mapping[str, Any], ordered: list[str], written: str) -> str:
    """Why hints given both ways are refused, and the one value to give instead where it is clear."""
    said = f"is given, and so {'are' if len(ordered) > 1 else 'is'} {written}, which hints replaces: "
    if not isinstance(hints, ToolHints):
        return said + "give the title and hints once, in hints=ToolHints(...)"
    merged = {field: getattr(hints, field) for field in _FIELDS if getattr(hints, field) is not None}
    for field in ordered:
        if keywords[field] is None:  # not said
            continue
        if field in merged and merged[field] != keywords[field]:
            return said + (
                f"{field} is {_shown(merged[field])} in hints and {_shown(keywords[field])} as {field}=; "
                "give the one meant, once, in hints=ToolHints(...)"
            )
        merged[field] = keywords[field]
    values = ", ".join(f"{field}={_shown(merged[field])}" for field in _FIELDS if field in merged)
    return said + f"give the title and hints once, in hints=ToolHints({values})"


def _shown(value: object) -> str:
    return shorten(repr(value), 120)


def _and(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
