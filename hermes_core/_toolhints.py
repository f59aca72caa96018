"""What a tool tells clients about itself: one value, as the Model Context Protocol's ``ToolAnnotations`` is.

:class:`ToolHints` holds a tool's title and its four hints; :meth:`ToolHints.annotations`
writes them as MCP's ``annotations`` object, and :meth:`ToolHints.from_annotations`
reads one that an MCP server listed. They are hints: a runtime enforces
permissions, never hints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, final

from hermes_core._errors import InvalidDefinitionError
from hermes_core._frozen import frozen
from hermes_core._issues import shorten

__all__ = ["ToolHints", "check_hints", "unchecked_hints"]

# Each hint's field, and its key in MCP's ToolAnnotations, in the order MCP lists them.
_KEYS: Final = (
    ("read_only", "readOnlyHint"),
    ("destructive", "destructiveHint"),
    ("idempotent", "idempotentHint"),
    ("open_world", "openWorldHint"),
)
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
    for name in ("title", *(name for name, _ in _KEYS)):
        object.__setattr__(hints, name, values.get(name))
    return hints
