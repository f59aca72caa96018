"""The one way objects are made immutable here: :func:`frozen` classes, whose derived fields are set once.

Every immutable class of the package is declared with ``@frozen`` (a
``dataclass(frozen=True, slots=True)``): setting or deleting any attribute
afterwards raises :class:`dataclasses.FrozenInstanceError`, saying the object
is immutable. A class whose constructor computes its fields (a tool's
compiled validators, a runtime's entries) sets them with :func:`derive`, in
its ``__init__`` or ``__post_init__`` only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["derive", "frozen"]

_T = TypeVar("_T", bound=type)


def _refuse_set(self: object, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(
        f"a {type(self).__name__} is immutable once built; make a new one instead of setting {name!r}"
    )


def _refuse_delete(self: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(
        f"a {type(self).__name__} is immutable once built; it has nothing to delete ({name!r})"
    )


@overload
def frozen(cls: _T, /) -> _T: ...
@overload
def frozen(*, init: bool = True, eq: bool = True, repr: bool = True, kw_only: bool = False) -> Callable[[_T], _T]: ...
@dataclass_transform(frozen_default=True)
def frozen(cls: Any = None, /, **options: Any) -> Any:
    """``@dataclass(frozen=True, slots=True, **options)``, refusing any attribute change with one message.

    The refusal is written here rather than left to ``dataclass``: on a slotted
    class its own refuses only the fields by name, and fails with a
    ``TypeError`` for any other name.
    """

    def make(target: type) -> type:
        made: type = dataclasses.dataclass(frozen=True, slots=True, **options)(target)
        made.__setattr__ = _refuse_set  # type: ignore[assignment]
        made.__delattr__ = _refuse_delete  # type: ignore[assignment]
        return made

    return make if cls is None else make(cls)


def derive(obj: object, **fields: Any) -> None:
    """Set *fields* on the frozen *obj* while it is being constructed."""
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
