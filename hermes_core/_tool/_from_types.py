"""Schemas from Python type hints, for tools written as plain functions (:func:`hermes_core.tool`).

:func:`schema_from_hint` turns one annotation into a schema, and into a
*converter*: what turns the parsed JSON value into the value the annotation
promises (an ``Enum`` member, a dataclass instance, a tuple). :func:`to_json`
goes the other way, for a handler's result and a parameter's default.

What each annotation becomes:

============================================  ==========================================
annotation                                    schema
============================================  ==========================================
``str``, ``int``, ``float``, ``bool``         ``s.string()``, ``s.integer()``, ``s.number()``, ``s.boolean()``
``None``                                      ``s.null()``
``Any``, ``object``                           ``s.any()``
``list[T]``, ``Sequence[T]``                  ``s.array(T)``
``tuple[T, ...]``                             ``s.array(T)``, given to the handler as a tuple
``tuple[A, B]``                               ``s.tuple(A, B)``, given as a tuple
``dict[str, T]``, ``Mapping[str, T]``         ``s.record(T)``
``Literal["a", 1]``                           ``s.enum(["a", 1])``
an ``Enum`` of JSON scalars                   ``s.enum(values)``, given as the member
``T | None``                                  ``s.nullable(T)``
``A | B``                                     ``s.union(A, B)``
a ``TypedDict`` (``NotRequired``, ``total``)  ``s.object(...)``, fields optional as declared
a dataclass                                   ``s.object(...)``, given as an instance
``Annotated[T, schema]``                      *schema*, as written (the converter of T applies)
``Annotated[T, "text"]``                      T, described by *text*
============================================  ==========================================

Other ``Annotated`` metadata is left to whatever it is for. A recursive
TypedDict or dataclass cannot be expressed here: declare it with ``s.ref``
and :func:`~hermes_core.define_tool`.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError, SchemaError
from hermes_core.schema import OptionalSchema, Schema

__all__ = ["SUPPORTED", "Converter", "needs_to_json", "schema_from_hint", "to_json"]

#: What turns a parsed value into the value its annotation promises; None when it is that already.
Converter = Callable[[Any], Any] | None

#: The annotations :func:`schema_from_hint` supports, as messages list them.
SUPPORTED = (
    "str, int, float, bool, None, Any, list[T], tuple[...], dict[str, T], Literal[...], an Enum, "
    "T | None, a union, a TypedDict, a dataclass, or Annotated[T, schema or description]"
)

_SCALARS: dict[Any, Callable[[], Schema]] = {
    str: s.string,
    int: s.integer,
    float: s.number,
    bool: s.boolean,
    None: s.null,
    type(None): s.null,
    Any: s.any,
    object: s.any,
}
_LISTS = frozenset({list, Sequence, typing.Sequence, typing.List})  # noqa: UP006 - the old alias is still written
_DICTS = frozenset({dict, Mapping, typing.Mapping, typing.Dict})  # noqa: UP006
_JSON_SCALARS = (str, int, float, bool, type(None))
# What a TypedDict's field may be wrapped in; it says whether the key is required, not what it holds.
_FIELD_QUALIFIERS = frozenset(
    q for q in (typing.Required, typing.NotRequired, getattr(typing, "ReadOnly", None)) if q is not None
)


class _Unsupported(Exception):  # noqa: N818 - internal signal, turned into an InvalidDefinitionError
    """An annotation (or part of one) that has no schema, and why; *listed*: say what is supported."""

    def __init__(self, text: str, *, listed: bool = False) -> None:
        super().__init__(text)
        self.listed = listed


def schema_from_hint(hint: Any, *, declaration: str, field: str) -> tuple[Schema, Converter]:
    """The schema of values annotated *hint*, and their converter (None if they need none).

    Args:
        hint: a resolved annotation (``typing.get_type_hints(..., include_extras=True)``).
        declaration: how messages name what is being declared, e.g. ``tool "notes.add"``.
        field: how messages name the annotated thing, e.g. ``parameter "limit"``.

    Raises:
        InvalidDefinitionError: naming *declaration* and *field*, for an
            annotation that has no schema, and saying what is supported.

    """
    try:
        return _convert(hint, ())
    except _Unsupported as problem:
        text = f"{problem}; supported: {SUPPORTED}" if problem.listed else str(problem)
        raise InvalidDefinitionError(declaration, field, text) from None
    except InvalidDefinitionError as error:  # a combinator refused what the hint implies (an empty Literal...)
        raise InvalidDefinitionError(declaration, field, f"cannot be expressed: {error}") from None


def _text(hint: Any) -> str:
    if isinstance(hint, type):
        return hint.__qualname__
    return repr(hint).replace("typing.", "")


def _convert(hint: Any, seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    if isinstance(hint, typing.ForwardRef | str):
        raise _Unsupported(f"is annotated {_text(hint)}, a name that cannot be resolved where the function is")
    try:
        scalar = _SCALARS.get(hint)
    except TypeError:  # an unhashable annotation
        scalar = None
    if scalar is not None:
        return scalar(), None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _annotated(args[0], args[1:], seen)
    if origin is typing.Literal:
        return s.enum(list(args)), None
    if origin is typing.Union or origin is types.UnionType:
        return _union(args, seen)
    if hint in _LISTS or origin in _LISTS:
        item, convert = _convert(args[0], seen) if args else (s.any(), None)
        return s.array(item), None if convert is None else (lambda value: [convert(x) for x in value])
    if hint is tuple or origin is tuple:
        return _tuple(hint, args, seen)
    if hint in _DICTS or origin in _DICTS:
        return _dict(hint, args, seen)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if typing.is_typeddict(hint) or (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        if hint in seen:
            raise _Unsupported(
                f"refers to {hint.__qualname__} inside itself; a recursive type needs a named schema "
                "(s.ref) declared with define_tool"
            )
        return _record_type(hint, (*seen, hint))
    if origin in _FIELD_QUALIFIERS:
        return _convert(args[0], seen)
    raise _Unsupported(f"is annotated {_text(hint)}, which has no JSON schema here", listed=True)


def _annotated(hint: Any, metadata: tuple[Any, ...], seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    inner, convert = _convert(hint, seen)
    schema: Schema = inner
    description = None
    for item in metadata:
        if isinstance(item, Schema):
            schema = item
        elif isinstance(item, str):
            description = item
    if isinstance(schema, OptionalSchema):
        raise _Unsupported("is annotated with s.optional(), which marks an object field; give the parameter a default")
    if description is not None:
        schema = _described(schema, description)
    return schema, convert


def _described(schema: Schema, description: str) -> Schema:
    """*schema* with *description*, unless it has its own."""
    if schema.description is not None:
        return schema
    return dataclasses.replace(schema, description=description)  # type: ignore[type-var] # every node is a dataclass


def _union(args: tuple[Any, ...], seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    options = [arg for arg in args if arg is not type(None) and arg is not None]
    converted = [_convert(arg, seen) for arg in options]
    schemas = [schema for schema, _ in converted]
    inner = schemas[0] if len(schemas) == 1 else s.union(*schemas)
    converters = [convert for _, convert in converted]
    convert: Converter = None
    if len(converters) == 1:
        convert = converters[0]
    elif any(c is not None for c in converters):
        # The union takes the first option that accepts the value: convert the way that option does.
        pairs = list(zip(schemas, converters, strict=True))

        def convert(value: Any) -> Any:
            for schema, option_convert in pairs:
                try:
                    schema.parse(value)
                except SchemaError:
                    continue
                return value if option_convert is None else option_convert(value)
            return value

    if len(options) < len(args):
        base = convert
        return s.nullable(inner), None if base is None else (lambda value: None if value is None else base(value))
    return inner, convert


def _tuple(hint: Any, args: tuple[Any, ...], seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        item, convert = _convert(args[0], seen) if args else (s.any(), None)
        if convert is None:
            return s.array(item), tuple
        return s.array(item), lambda value: tuple(convert(x) for x in value)
    if args == ((),):
        raise _Unsupported("is annotated tuple[()], which only the empty list matches; use list[T] or a bigger tuple")
    if Ellipsis in args:
        raise _Unsupported(f"is annotated {_text(hint)}; a tuple is tuple[T, ...] or tuple[A, B, ...] of fixed length")
    converted = [_convert(arg, seen) for arg in args]
    converters = [convert for _, convert in converted]
    schema = s.tuple(*(item for item, _ in converted))
    if all(c is None for c in converters):
        return schema, tuple
    return schema, lambda value: tuple(x if c is None else c(x) for x, c in zip(value, converters, strict=True))


def _dict(hint: Any, args: tuple[Any, ...], seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    if args and args[0] is not str:
        raise _Unsupported(f"is annotated {_text(hint)}; JSON object keys are strings, so a dict is dict[str, T]")
    values, convert = _convert(args[1], seen) if args else (s.any(), None)
    if convert is None:
        return s.record(values), None
    return s.record(values), lambda value: {key: convert(item) for key, item in value.items()}


def _enum(hint: type[enum.Enum]) -> tuple[Schema, Converter]:
    members = list(hint)
    if not members:
        raise _Unsupported(f"is annotated {hint.__qualname__}, an Enum with no members")
    for member in members:
        if not isinstance(member.value, _JSON_SCALARS):
            raise _Unsupported(
                f"is annotated {hint.__qualname__}, whose member {member.name} has the value {member.value!r}; "
                "an Enum's values must be strings, numbers, booleans or None"
            )
    return s.enum([member.value for member in members]), hint


def _record_type(hint: Any, seen: tuple[Any, ...]) -> tuple[Schema, Converter]:
    """A TypedDict or dataclass: an object schema, each field as declared."""
    try:
        hints = typing.get_type_hints(hint, include_extras=True)
    except Exception as error:
        raise _Unsupported(f"is annotated {hint.__qualname__}, whose annotations do not resolve ({error})") from None
    fields: dict[str, Schema] = {}
    converters: dict[str, Callable[[Any], Any]] = {}
    if typing.is_typeddict(hint):
        for name, field_hint in hints.items():
            schema, convert = _convert(field_hint, seen)
            fields[name] = schema if _required(hint, name, field_hint) else s.optional(schema)
            if convert is not None:
                converters[name] = convert
        description = _own_doc(hint)
        built = s.object(fields, description=description)
        if not converters:
            return built, None
        return built, lambda value: {k: converters[k](v) if k in converters else v for k, v in value.items()}
    for item in dataclasses.fields(hint):
        if not item.init:
            continue
        schema, convert = _convert(hints[item.name], seen)
        if item.default is not dataclasses.MISSING:
            fields[item.name] = s.optional(schema, default=to_json(item.default))
        elif item.default_factory is not dataclasses.MISSING:
            fields[item.name] = s.optional(schema)  # the factory makes the default when the instance is built
        else:
            fields[item.name] = schema
        if convert is not None:
            converters[item.name] = convert
    built = s.object(fields, description=_own_doc(hint))
    return built, lambda value: hint(**{k: converters[k](v) if k in converters else v for k, v in value.items()})


def _required(typed_dict: Any, name: str, hint: Any) -> bool:
    """Whether a TypedDict's key is required: ``Required[...]``, ``NotRequired[...]``, else ``total`` decides.

    Read from the resolved hint: under ``from __future__ import annotations`` the
    class's own ``__required_keys__`` cannot see inside the strings.
    """
    origin = typing.get_origin(hint)
    if origin is typing.Required:
        return True
    if origin is typing.NotRequired:
        return False
    return name in typed_dict.__required_keys__


def _own_doc(hint: type) -> str | None:
    """A class's own docstring, not the one a dataclass writes for it (``Point(x: int, y: int)``)."""
    doc = hint.__dict__.get("__doc__")
    if not doc or (dataclasses.is_dataclass(hint) and doc.startswith(hint.__name__ + "(")):
        return None
    from hermes_core._tool._docstrings import parse_docstring  # noqa: PLC0415 - only described classes need it

    return parse_docstring(doc).description


def to_json(value: Any) -> Any:
    """*value* as JSON data: an Enum member as its value, a dataclass as a dict, a tuple as a list, recursively."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: to_json(getattr(value, item.name)) for item in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value


def needs_to_json(hint: Any) -> bool:
    """Whether a value annotated *hint* may hold something :func:`to_json` changes."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return needs_to_json(typing.get_args(hint)[0])
    if isinstance(hint, type) and (issubclass(hint, enum.Enum | tuple) or dataclasses.is_dataclass(hint)):
        return True
    if origin is tuple:
        return True
    if typing.is_typeddict(hint):
        return any(needs_to_json(h) for h in typing.get_type_hints(hint).values())
    return any(needs_to_json(arg) for arg in typing.get_args(hint) if arg is not Ellipsis)
