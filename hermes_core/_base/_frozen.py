"""The one way objects are made immutable here: :func:`frozen` classes, whose derived fields are set once.

Every immutable class of the package is declared with ``@frozen`` (the class
``dataclass(frozen=True, slots=True)`` makes): setting or deleting any
attribute afterwards raises :class:`dataclasses.FrozenInstanceError`, saying
the object is immutable. A class whose constructor computes its fields (a
tool's compiled validators, a runtime's entries) sets them with
:func:`derive`, in its ``__init__`` or ``__post_init__`` only.
"""

from __future__ import annotations

import copy
import dataclasses
import operator
import re
import reprlib
import sys
import types
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform, overload

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

    Use it for a plugin's value classes as the core does for its own::

        from hermes_core import frozen

        @frozen
        class Entry:
            name: str
            retries: int = 3

    A plugin's module is imported by every command that loads the plugins
    (``hermesos tools list`` among them), and ``dataclass`` compiles six
    methods for each class it declares: about 8 million instructions for a
    class of 18 fields, well over a millisecond, where this costs a tenth of
    that (docs/performance.md, start-up). ``InitVar`` fields are not taken.

    The refusal is written here rather than left to ``dataclass``: on a slotted
    class its own refuses only the fields by name, and fails with a
    ``TypeError`` for any other name.

    The class is made here, not by ``dataclass``, at a fraction of the cost
    (declaring the package's classes was the largest part of what ``hermesos
    tools list`` spent on start-up: docs/performance.md, start-up). Its
    fields are read as ``dataclass`` reads them (annotations in order, after
    the bases' fields; ``field()`` and plain defaults; ``ClassVar`` left out;
    a mutable default refused) and the slotted class is made in one step,
    with its methods: ``__init__`` from a template compiled once for each
    shape of fields (which are positional or keyword-only, and which have a
    default or a factory) and given the class's field names, at the class's
    first instance (most classes a command declares make none; until then
    ``inspect.signature`` reads the one it will be), ``__repr__``,
    ``__eq__`` and ``__hash__`` shared functions reading the fields through
    one ``attrgetter``. The instances behave as a frozen slotted
    dataclass's: ``dataclasses.fields``, ``replace`` and ``is_dataclass``
    work, the methods compare, hash and print the same fields, pickling and
    copying work, ``__match_args__`` is set, and ``__post_init__`` runs. Only
    dataclasses' own ``frozen`` flag reads False (immutability is the class's
    ``__setattr__`` and ``__delattr__``, which subclasses inherit), so a
    subclass is declared with ``@frozen`` too.
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
    own = target.__dict__
    if "__slots__" in own:
        raise TypeError(f"{target.__name__} already specifies __slots__")
    fields = _fields(target, kw_only)
    listed = tuple(item for item in fields.values() if item._field_type is _FIELD)  # type: ignore[attr-defined]
    names = tuple(item.name for item in listed)
    made = dict(own)
    for name in names:  # their defaults are the __init__'s; each name is a slot
        made.pop(name, None)
    made.pop("__dict__", None)
    made.pop("__weakref__", None)
    inherited = {slot for base in target.__mro__[1:-1] for slot in _slots(base)}
    made["__slots__"] = tuple(name for name in names if name not in inherited)
    made["__qualname__"] = target.__qualname__
    made["__dataclass_fields__"] = fields
    made["__dataclass_params__"] = _params(init=init, repr_=repr_, eq=eq, kw_only=kw_only)
    made.setdefault("__match_args__", tuple(item.name for item in listed if item.init and not item.kw_only))
    if init and "__init__" not in own:
        made["__init__"] = _deferred(_plan(target, listed))  # made at the first instance
        made["__signature__"] = _SIGNATURE
    if repr_ and "__repr__" not in own:
        made["__repr__"] = _repr_of(tuple(item.name for item in listed if item.repr))
    if eq:
        compared = _getter(tuple(item.name for item in listed if item.compare))
        if "__eq__" not in own:
            made["__eq__"] = _eq_of(compared)
        explicit = own.get("__hash__", _MISSING)
        if explicit is _MISSING or (explicit is None and "__eq__" in own):
            hashed = _getter(tuple(item.name for item in listed if (item.compare if item.hash is None else item.hash)))
            made["__hash__"] = _hash_of(hashed)
    made["__setattr__"] = _refuse_set
    made["__delattr__"] = _refuse_delete
    made["__getstate__"] = _getstate_of(names)
    made["__setstate__"] = _setstate_of(names)
    # One class, made with all of it: setting a method on a class after it is made costs a search of its bases.
    result: type = type(target)(target.__name__, target.__bases__, made)
    if not own.get("__doc__"):
        import inspect  # noqa: PLC0415 - an undocumented class only; as dataclass names one

        try:
            signature = str(inspect.signature(result)).replace(" -> None", "")
        except (TypeError, ValueError):
            signature = ""
        result.__doc__ = result.__name__ + signature
    return result


_MISSING: Any = object()
# What marks a field as one in dataclass's records (a ClassVar or an InitVar is marked otherwise): what
# dataclasses.fields() lists and dataclasses.replace() passes on.
_FIELD: Any = dataclasses._FIELD  # type: ignore[attr-defined]
_FIELD_CLASSVAR: Any = dataclasses._FIELD_CLASSVAR  # type: ignore[attr-defined]
# What dataclass reads a string annotation's leading name with (ClassVar[int], typing.ClassVar[int]): its own
# text, which dataclasses compiled as it was imported, so that re's cache has it.
_LEADING_NAME = re.compile(r"^(?:\s*(\w+)\s*\.)?\s*(\w+)")


def _fields(target: type, kw_only: bool) -> dict[str, dataclasses.Field[Any]]:
    """The fields of *target*, by name, in ``dataclass``'s order: its bases' first, then its own annotations.

    As in ``dataclass``'s record, a ``ClassVar`` is there too, marked so (``dataclasses.fields`` leaves it out).
    """
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in target.__mro__[-1:0:-1]:
        fields.update(base.__dict__.get("__dataclass_fields__", {}))
    own = target.__dict__
    annotations: dict[str, Any] = own.get("__annotations__", {})
    for name, kind in annotations.items():
        class_var = _is_class_var(target, kind)
        if not class_var and _is_init_var(kind):
            raise TypeError(f"{target.__qualname__}: @frozen does not take InitVar fields")
        default = getattr(target, name, dataclasses.MISSING)
        if isinstance(default, types.MemberDescriptorType):  # a base's slot: no default
            default = dataclasses.MISSING
        # A Field (typeshed types field() as returning its default, for the class body's sake).
        item: Any = default if isinstance(default, dataclasses.Field) else dataclasses.field(default=default)
        item.name = name
        item.type = kind
        if class_var:
            item._field_type = _FIELD_CLASSVAR
            if item.default_factory is not dataclasses.MISSING:
                raise TypeError(f"field {name} cannot have a default factory")
            if item.kw_only is not dataclasses.MISSING:
                raise TypeError(f"field {name} is a ClassVar but specifies kw_only")
        else:
            item._field_type = _FIELD
            if item.kw_only is dataclasses.MISSING:
                item.kw_only = kw_only
            if item.default.__class__.__hash__ is None:
                raise ValueError(
                    f"mutable default {type(item.default)} for field {name} is not allowed: use default_factory"
                )
        fields[name] = item
    for name, value in own.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    return fields


def _is_class_var(target: type, kind: object) -> bool:
    """Whether the annotation *kind* is a ``ClassVar``, as ``dataclass`` decides it (a string by its module's names)."""
    if kind is ClassVar or getattr(kind, "__origin__", None) is ClassVar:
        return True
    if not isinstance(kind, str):
        return False
    match = _LEADING_NAME.match(kind)
    if match is None:
        return False
    module = sys.modules.get(target.__module__)
    names: dict[str, Any] = module.__dict__ if module is not None else {}
    prefix = match.group(1)
    if prefix:
        if names.get(prefix) is not sys.modules["typing"]:
            return False
        names = sys.modules["typing"].__dict__
    found = names.get(match.group(2))
    return found is ClassVar or getattr(found, "__origin__", None) is ClassVar


def _is_init_var(kind: object) -> bool:
    return (
        kind is dataclasses.InitVar
        or isinstance(kind, dataclasses.InitVar)
        or (isinstance(kind, str) and "InitVar" in kind)
    )


def _slots(base: type) -> tuple[str, ...]:
    slots = base.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


# dataclass's record of the options a class was made with (read by dataclass itself), one for each set of
# options: copies of the record of a class dataclass made with none (its type's constructor differs
# between versions), documented so that dataclass does not describe it with its signature.
_NO_OPTIONS: Any = dataclasses.dataclass(init=False, repr=False, eq=False)(
    type("_Options", (), {"__doc__": "A class made with no options."})
).__dataclass_params__  # type: ignore[attr-defined]
_PARAMS: dict[tuple[bool, bool, bool, bool], Any] = {}


def _params(*, init: bool, repr_: bool, eq: bool, kw_only: bool) -> object:
    key = (init, repr_, eq, kw_only)
    params = _PARAMS.get(key)
    if params is None:
        params = _PARAMS[key] = copy.copy(_NO_OPTIONS)
        params.init, params.repr, params.eq = init, repr_, eq
        if hasattr(params, "slots"):  # Python 3.12 and later record these too
            params.kw_only, params.slots = kw_only, True
    return params


def _getter(names: tuple[str, ...]) -> Callable[[object], tuple[Any, ...]]:
    """A function returning the tuple of *names* of an object, as dataclass compares and hashes them."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda obj: (one(obj),)
    return lambda obj: ()


# How a field is set by __init__, its part of a template's shape: a parameter (positional or keyword-only),
# with a default factory or not; or no parameter, set from a default, from a factory, or not at all.
_PARAMETER, _PARAMETER_FACTORY, _KEYWORD, _KEYWORD_FACTORY, _DEFAULT, _FACTORY, _UNSET = range(7)
_FACTORIES = (_PARAMETER_FACTORY, _KEYWORD_FACTORY)
_TEMPLATES: dict[tuple[tuple[int, ...], bool], types.CodeType] = {}
_GLOBALS: dict[str, Any] = {}  # an __init__ reads nothing but its closure


# How a class's __init__ is made (_plan): its qualified name and module, its template's shape, whether it
# calls __post_init__, its variables' names (self, then the parameters, the positional ones first), each
# field's name by its name in the template (_0, _1...), what the body reads (the defaults and factories, by
# their names in the template), the positional defaults, the keyword-only ones, and its annotations. A plain
# tuple: a NamedTuple's string annotations cost a compile each as the module is imported.
_Plan = tuple[
    str, str, tuple[int, ...], bool, tuple[str, ...], dict[str, str], dict[str, Any], tuple[Any, ...], dict[str, Any],
    dict[str, Any],
]  # fmt: skip


def _plan(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> _Plan:
    """How the ``__init__`` dataclass would write for the frozen *cls* is made; raises what dataclass raises."""
    names = {item.name for item in fields}
    shape: list[int] = []
    scope: dict[str, Any] = {"__set": object.__setattr__, "__factory_default": _HAS_FACTORY}
    positional: list[str] = []
    defaults: list[Any] = []
    keywords: dict[str, Any] = {}
    keyword_names: list[str] = []
    for index, item in enumerate(fields):
        has_default = item.default is not dataclasses.MISSING
        has_factory = item.default_factory is not dataclasses.MISSING
        if has_factory:
            scope[f"__factory_{index}"] = item.default_factory
        if has_default:
            scope[f"__default_{index}"] = item.default
        if not item.init:
            shape.append(_FACTORY if has_factory else _DEFAULT if has_default else _UNSET)
            continue
        default = _HAS_FACTORY if has_factory else item.default
        if item.kw_only:
            shape.append(_KEYWORD_FACTORY if has_factory else _KEYWORD)
            keyword_names.append(item.name)
            if has_default or has_factory:
                keywords[item.name] = default
        else:
            if not (has_default or has_factory) and defaults:
                raise TypeError(f"non-default argument {item.name!r} follows default argument")
            shape.append(_PARAMETER_FACTORY if has_factory else _PARAMETER)
            positional.append(item.name)
            if has_default or has_factory:
                defaults.append(default)
    return (
        f"{cls.__qualname__}.__init__",
        cls.__module__,
        tuple(shape),
        hasattr(cls, "__post_init__"),
        ("__frozen_self__" if "self" in names else "self", *positional, *keyword_names),
        {f"_{index}": item.name for index, item in enumerate(fields)},
        scope,
        tuple(defaults),
        keywords,
        {**{item.name: item.type for item in fields if item.init}, "return": None},
    )


def _init(plan: _Plan) -> Callable[..., None]:
    """The ``__init__`` of *plan*: its template's code (compiled once for each shape), given the class's names."""
    qualname, module, shape, post_init, varnames, renamed, scope, defaults, keywords, annotations = plan
    template = _TEMPLATES.get((shape, post_init))
    if template is None:
        template = _TEMPLATES[(shape, post_init)] = _template(shape, post_init)
    code = template.replace(
        co_varnames=varnames,
        co_consts=tuple(renamed.get(c, c) if type(c) is str else c for c in template.co_consts),
        co_name="__init__",
        co_qualname=qualname,
    )
    closure = tuple(types.CellType(scope[name]) for name in code.co_freevars)
    made: Any = types.FunctionType(code, _GLOBALS, "__init__", defaults or None, closure)
    made.__kwdefaults__ = keywords or None
    made.__qualname__ = qualname
    made.__module__ = module
    made.__annotations__ = annotations
    return made  # type: ignore[no-any-return]


def _deferred(plan: _Plan) -> Callable[..., None]:
    """An ``__init__`` that makes the class's own at the first instance, puts it in its place, and calls it.

    Most classes a command declares make no instance in it: they cost no
    compiled template (docs/performance.md, start-up). Until then the class's
    ``__signature__`` (:class:`_Signature`) is the one its ``__init__`` will give.
    """

    def deferred(self: object, /, *args: Any, **kwargs: Any) -> None:
        made = _made(type(self), deferred)
        made(self, *args, **kwargs)

    deferred.__name__, deferred.__qualname__, deferred.__module__ = "__init__", plan[0], plan[1]
    deferred.__frozen_plan__ = plan  # type: ignore[attr-defined]
    return deferred


def _made(cls: type, deferred: Callable[..., None]) -> Callable[..., None]:
    """The ``__init__`` *deferred* stands for, made and put in its place on the class of *cls* that holds it."""
    owner = next(c for c in cls.__mro__ if c.__dict__.get("__init__") is deferred)
    made = _init(deferred.__frozen_plan__)  # type: ignore[attr-defined]
    type.__setattr__(owner, "__init__", made)  # a second thread made the same: either stays
    return made


class _Signature:
    """A class's ``__signature__`` while its ``__init__`` is deferred: its ``__init__``'s, made, without ``self``."""

    __slots__ = ()

    def __get__(self, instance: object, owner: type) -> Any:
        import inspect  # noqa: PLC0415 - dataclasses imports it already

        init: Any = owner.__init__  # type: ignore[misc] # the class's own, or its base's
        if hasattr(init, "__frozen_plan__"):
            init = _made(owner, init)
        signature = inspect.signature(init)
        return signature.replace(parameters=tuple(signature.parameters.values())[1:])


_SIGNATURE = _Signature()


def _template(shape: tuple[int, ...], post_init: bool) -> types.CodeType:
    """The code of an ``__init__`` setting fields of *shape*, named ``_0``, ``_1``... (parameters and attributes)."""
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for index, how in enumerate(shape):
        name = f"_{index}"
        if how in (_PARAMETER, _PARAMETER_FACTORY):
            positional.append(name)
        elif how in (_KEYWORD, _KEYWORD_FACTORY):
            keywords.append(name)
        if how in (_PARAMETER, _KEYWORD):
            body.append(f"__set(self, {name!r}, {name})")
        elif how in (_PARAMETER_FACTORY, _KEYWORD_FACTORY):
            body.append(f"__set(self, {name!r}, __factory_{index}() if {name} is __factory_default else {name})")
        elif how == _DEFAULT:
            body.append(f"__set(self, {name!r}, __default_{index})")
        elif how == _FACTORY:
            body.append(f"__set(self, {name!r}, __factory_{index}())")
    if post_init:
        body.append("self.__post_init__()")
    # What the body reads is a variable of the enclosing function: the body reads it from its closure.
    free = ["__set", "__factory_default"]
    free += [f"__default_{index}" for index, how in enumerate(shape) if how == _DEFAULT]
    free += [f"__factory_{index}" for index, how in enumerate(shape) if how in (_FACTORY, *_FACTORIES)]
    signature = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    lines = "\n".join(f"  {line}" for line in body or ["pass"])
    text = f"def __create__({', '.join(free)}):\n def __init__({signature}):\n{lines}\n return __init__"
    module = compile(text, "<frozen __init__>", "exec")
    outer = next(c for c in module.co_consts if isinstance(c, types.CodeType))
    inner: types.CodeType = next(c for c in outer.co_consts if isinstance(c, types.CodeType))
    return inner


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
