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
import operator
import reprlib
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
    """A frozen, slotted dataclass (``@dataclass(frozen=True, slots=True, **options)``), refusing any change.

    The refusal is written here rather than left to ``dataclass``: on a slotted
    class its own refuses only the fields by name, and fails with a
    ``TypeError`` for any other name.

    Only the fields, the slots and ``__match_args__`` are left to
    ``dataclass``; the methods are made here: ``__init__`` compiled from one
    short text, ``__repr__``, ``__eq__`` and ``__hash__`` shared functions
    reading the fields through one ``attrgetter``. ``dataclass`` compiles six
    functions for each frozen class (two of them the ``__setattr__`` and
    ``__delattr__`` replaced here), which made declaring the package's classes
    a sixth of what ``hermesos tools list`` spent on start-up
    (docs/performance.md, start-up). The instances behave as before:
    ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work, the
    methods compare, hash and print the same fields, pickling and copying
    work, and ``__post_init__`` runs. Only dataclasses' own ``frozen`` flag
    reads False (immutability is the class's ``__setattr__`` and
    ``__delattr__``, which subclasses inherit), so a subclass is declared with
    ``@frozen`` too.
    """

    def make(target: type) -> type:
        return _make(
            target,
            init=options.get("init", True),
            eq=options.get("eq", True),
            repr_=options.get("repr", True),
            kw_only=options.get("kw_only", False),
        )

    return make if cls is None else make(cls)


def _make(target: type, *, init: bool, eq: bool, repr_: bool, kw_only: bool) -> type:
    documented = bool(target.__dict__.get("__doc__"))
    made: type = dataclasses.dataclass(slots=True, init=False, repr=False, eq=False, kw_only=kw_only)(target)
    fields = dataclasses.fields(made)
    if len(fields) != len(made.__dataclass_fields__) and any(  # type: ignore[attr-defined]
        _is_init_var(item.type)
        for item in made.__dataclass_fields__.values()  # type: ignore[attr-defined]
    ):
        raise TypeError(f"{target.__qualname__}: @frozen does not take InitVar fields")
    names = tuple(item.name for item in fields)
    own = made.__dict__
    if init and "__init__" not in own:
        made.__init__ = _init(made, fields)  # type: ignore[misc]
    if repr_ and "__repr__" not in own:
        made.__repr__ = _repr_of(tuple(item.name for item in fields if item.repr))  # type: ignore[assignment]
    if eq:
        compared = _getter(tuple(item.name for item in fields if item.compare))
        if "__eq__" not in own:
            made.__eq__ = _eq_of(compared)  # type: ignore[assignment]
        explicit = own.get("__hash__", _MISSING)
        if explicit is _MISSING or (explicit is None and "__eq__" in target.__dict__):
            hashed = _getter(tuple(item.name for item in fields if (item.compare if item.hash is None else item.hash)))
            made.__hash__ = _hash_of(hashed)  # type: ignore[assignment]
    made.__setattr__ = _refuse_set  # type: ignore[assignment]
    made.__delattr__ = _refuse_delete  # type: ignore[assignment]
    made.__getstate__ = _getstate_of(names)  # type: ignore[method-assign,assignment]
    made.__setstate__ = _setstate_of(names)  # type: ignore[attr-defined]
    params = made.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.repr, params.eq = init, repr_, eq
    if not documented and init:
        import inspect  # noqa: PLC0415 - dataclasses imports it already; as dataclass names an undocumented class

        made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
    return made


_MISSING: Any = object()


def _is_init_var(kind: object) -> bool:
    return (
        kind is dataclasses.InitVar
        or isinstance(kind, dataclasses.InitVar)
        or (isinstance(kind, str) and "InitVar" in kind)
    )


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """A function returning the tuple of *names* of an object, as dataclass compares and hashes them."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """The ``__init__`` dataclass would write for the frozen *cls*, compiled from one text."""
    names = {item.name for item in fields}
    me = "__frozen_self__" if "self" in names else "self"
    scope: dict[str, Any] = {"__set": object.__setattr__, "__factory_default": _HAS_FACTORY}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    seen_default = False
    for item in fields:
        has_default = item.default is not dataclasses.MISSING
        has_factory = item.default_factory is not dataclasses.MISSING
        if has_factory:
            scope[f"__factory_{item.name}"] = item.default_factory
        if has_default:
            scope[f"__default_{item.name}"] = item.default
        if not item.init:
            if has_factory:
                body.append(f"__set({me}, {item.name!r}, __factory_{item.name}())")
            elif has_default:
                body.append(f"__set({me}, {item.name!r}, __default_{item.name})")
            continue
        if has_factory:
            param = f"{item.name}=__factory_default"
            body.append(
                f"__set({me}, {item.name!r}, __factory_{item.name}() if {item.name} is __factory_default "
                f"else {item.name})"
            )
        else:
            param = f"{item.name}=__default_{item.name}" if has_default else item.name
            body.append(f"__set({me}, {item.name!r}, {item.name})")
        if item.kw_only:
            keywords.append(param)
        else:
            if not (has_default or has_factory) and seen_default:
                raise TypeError(f"non-default argument {item.name!r} follows default argument")
            seen_default = seen_default or has_default or has_factory
            positional.append(param)
    if hasattr(cls, "__post_init__"):
        body.append(f"{me}.__post_init__()")
    signature = ", ".join([me, *positional, *(["*", *keywords] if keywords else [])])
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    text = f"def __create__({', '.join(scope)}):\n def __init__({signature}):\n{lines}\n return __init__"
    namespace: dict[str, Any] = {}
    exec(text, {}, namespace)  # noqa: S102 - the text is made above from field names only
    made: Callable[..., None] = namespace["__create__"](**scope)
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    made.__annotations__ = {**{item.name: item.type for item in fields if item.init}, "return": None}
    return made


class _HasFactory:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()


def _repr_of(names: tuple[str, ...]) -> Callable[[object], str]:
    @reprlib.recursive_repr()
    def show(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return show


def _eq_of(compared: Callable[[object], tuple[Any, ...]]) -> Callable[[object, object], Any]:
    def equal(self: object, other: object) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    return equal


def _hash_of(hashed: Callable[[object], tuple[Any, ...]]) -> Callable[[object], int]:
    def hashed_(self: object) -> int:
        return hash(hashed(self))

    return hashed_


def _getstate_of(names: tuple[str, ...]) -> Callable[[object], list[Any]]:
    def get(self: object) -> list[Any]:
        return [getattr(self, name) for name in names]

    return get


def _setstate_of(names: tuple[str, ...]) -> Callable[[object, list[Any]], None]:
    def put(self: object, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return put


def derive(obj: object, **fields: Any) -> None:
    """Set *fields* on the frozen *obj* while it is being constructed."""
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
