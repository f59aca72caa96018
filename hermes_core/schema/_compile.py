"""Compile a schema once into straight-line Python, and fall back to the walk only on failure.

The generated "fast" function checks a value with no bookkeeping at all: no
paths, no issue list. It raises ``_Invalid`` at the first doubt, and then
:meth:`Validator.slow` runs the authoritative ``_collect`` walk, which finds
every issue with its path (or, for the rare value the fast path is too strict
for, such as a ``str`` subclass, returns the parsed value after all). So the
fast path may be stricter than the walk, never looser.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from hermes_core.errors import InvalidDefinitionError, Issue
from hermes_core.schema._nodes import (
    _BAD,
    MISSING,
    AnySchema,
    ArraySchema,
    BooleanSchema,
    EnumSchema,
    IntegerSchema,
    NullableSchema,
    NullSchema,
    NumberSchema,
    ObjectSchema,
    OptionalSchema,
    RecordSchema,
    RefSchema,
    Schema,
    StringSchema,
    UnionSchema,
    _Context,
    copy_json,
    unicode_ok,
)

__all__ = ["FastPathError", "Validator", "compile_schema"]


class FastPathError(Exception):
    """Raised by a fast function at the first doubt. Never leaves this package's callers."""


def _any_fast(value: Any) -> None:
    """Raise ``FastPathError`` unless *value* is plainly JSON-shaped (exact builtin types only)."""
    kind = type(value)
    if kind is str:
        if not (value.isascii() or unicode_ok(value)):
            raise FastPathError
    elif kind is int or kind is bool or value is None:
        return
    elif kind is float:
        if value - value != 0.0:
            raise FastPathError
    elif kind is list:
        for item in value:
            _any_fast(item)
    elif kind is dict:
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or unicode_ok(key)):
                raise FastPathError
            _any_fast(item)
    else:
        raise FastPathError


def _enum_lookup(values: tuple[Any, ...]) -> Callable[[Any], Any]:
    """A function mapping a JSON scalar to the enum member it equals, or raising ``FastPathError``."""
    strings = {v: v for v in values if type(v) is str}
    numbers = {v: v for v in values if type(v) is int or type(v) is float}
    booleans = {v: v for v in values if type(v) is bool}
    has_null = any(v is None for v in values)

    def lookup(value: Any) -> Any:
        kind = type(value)
        if kind is str:
            table: dict[Any, Any] = strings
        elif kind is bool:
            table = booleans
        elif kind is int or kind is float:
            table = numbers
        elif value is None and has_null:
            return None
        else:
            raise FastPathError
        try:
            return table[value]
        except KeyError:
            raise FastPathError from None

    return lookup


_IS_STRING = "if type({v}) is not str or not ({v}.isascii() or _uok({v})): raise _F"
_PASSTHROUGH = (StringSchema, NumberSchema, BooleanSchema, NullSchema)


class _Codegen:
    """Writes one module of functions for a schema and every schema it reaches."""

    def __init__(self, refs: Mapping[str, Schema]) -> None:
        self.refs = refs
        self.namespace: dict[str, Any] = {
            "_F": FastPathError,
            "_uok": unicode_ok,
            "_M": MISSING,
            "_copy": copy_json,
            "_any": _any_fast,
        }
        self.functions: dict[int, str] = {}
        self.sources: list[str] = []
        self.keep: list[Schema] = []  # keeps ids unique while they are dict keys
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        name = self.name("_c")
        self.namespace[name] = value
        return name

    def function(self, node: Schema) -> str:
        """The name of a function checking *node*, writing it on first use (refs may recurse)."""
        if isinstance(node, RefSchema):
            return self.function(self.resolve(node))
        key = id(node)
        if key in self.functions:
            return self.functions[key]
        name = self.name("_f")
        self.functions[key] = name
        self.keep.append(node)
        body: list[str] = []
        if isinstance(node, UnionSchema):
            self.union_body(node, body)
        else:
            result = self.emit(node, "v", body, "    ")
            body.append(f"    return {result}")
        self.sources.append(f"def {name}(v):\n" + "\n".join(body))
        return name

    def resolve(self, node: RefSchema) -> Schema:
        target = self.refs.get(node.name)
        if target is None:
            raise InvalidDefinitionError(
                f"ref({node.name!r})",
                None,
                "names a schema that is not registered; named schemas are resolved by a Runtime "
                "given schemas={...} (or contributed by a plugin)",
            )
        return target

    def union_body(self, node: UnionSchema, body: list[str]) -> None:
        for option in node.options:
            var = self.name("o")
            body.append("    try:")
            body.append(f"        {var} = v")
            result = self.emit(option, var, body, "        ")
            body.append(f"        return {result}")
            body.append("    except _F:")
            body.append("        pass")
        body.append("    raise _F")

    def emit(self, node: Schema, var: str, out: list[str], ind: str) -> str:
        """Append lines checking local *var* against *node*; return the expression of the result.

        The lines may rebind *var*, which the caller owns.
        """
        if isinstance(node, StringSchema):
            out.append(ind + _IS_STRING.format(v=var))
            low, high = node.min_length, node.max_length
            if low is not None or high is not None:
                out.append(f"{ind}if {self.range_test(f'len({var})', low, high)}: raise _F")
            if node._regex is not None:
                out.append(f"{ind}if {self.const(node._regex.search)}({var}) is None: raise _F")
            return var
        if isinstance(node, IntegerSchema):
            out.append(f"{ind}if type({var}) is not int:")
            out.append(f"{ind}    if type({var}) is float and {var}.is_integer(): {var} = int({var})")
            out.append(f"{ind}    else: raise _F")
            self.bounds(node.minimum, node.maximum, var, out, ind)
            return var
        if isinstance(node, NumberSchema):
            out.append(f"{ind}if type({var}) is float:")
            out.append(f"{ind}    if {var} - {var} != 0.0: raise _F")
            out.append(f"{ind}elif type({var}) is not int: raise _F")
            self.bounds(node.minimum, node.maximum, var, out, ind)
            return var
        if isinstance(node, BooleanSchema):
            out.append(f"{ind}if {var} is not True and {var} is not False: raise _F")
            return var
        if isinstance(node, NullSchema):
            out.append(f"{ind}if {var} is not None: raise _F")
            return var
        if isinstance(node, EnumSchema):
            if all(type(v) is str for v in node.values):
                allowed = self.const(frozenset(node.values))
                out.append(f"{ind}if type({var}) is not str or {var} not in {allowed}: raise _F")
                return var
            out.append(f"{ind}{var} = {self.const(_enum_lookup(node.values))}({var})")
            return var
        if isinstance(node, AnySchema):
            out.append(f"{ind}_any({var})")
            return var
        if isinstance(node, OptionalSchema):
            return self.emit(node.schema, var, out, ind)
        if isinstance(node, NullableSchema):
            result = self.name("r")
            out.append(f"{ind}if {var} is None: {result} = None")
            out.append(f"{ind}else:")
            inner = self.emit(node.schema, var, out, ind + "    ")
            out.append(f"{ind}    {result} = {inner}")
            return result
        if isinstance(node, ArraySchema):
            return self.array(node, var, out, ind)
        if isinstance(node, ObjectSchema):
            return self.object(node, var, out, ind)
        if isinstance(node, RecordSchema):
            result, key, item = self.name("r"), self.name("k"), self.name("x")
            out.append(f"{ind}if type({var}) is not dict: raise _F")
            out.append(f"{ind}{result} = {{}}")
            out.append(f"{ind}for {key}, {item} in {var}.items():")
            out.append(f"{ind}    " + _IS_STRING.format(v=key))
            parsed = self.emit(node.values, item, out, ind + "    ")
            out.append(f"{ind}    {result}[{key}] = {parsed}")
            return result
        if isinstance(node, UnionSchema | RefSchema):
            result = self.name("r")
            out.append(f"{ind}{result} = {self.function(node)}({var})")
            return result
        raise TypeError(f"cannot compile {node!r}")  # pragma: no cover - every node is handled above

    def range_test(self, expr: str, low: float | None, high: float | None) -> str:
        tests = []
        if low is not None:
            tests.append(f"{expr} < {self.const(low)}")
        if high is not None:
            tests.append(f"{expr} > {self.const(high)}")
        return " or ".join(tests)

    def bounds(self, low: float | None, high: float | None, var: str, out: list[str], ind: str) -> None:
        if low is not None or high is not None:
            out.append(f"{ind}if {self.range_test(var, low, high)}: raise _F")

    def array(self, node: ArraySchema, var: str, out: list[str], ind: str) -> str:
        out.append(f"{ind}if type({var}) is not list: raise _F")
        if node.min_items is not None or node.max_items is not None:
            test = self.range_test(f"len({var})", node.min_items, node.max_items)
            out.append(f"{ind}if {test}: raise _F")
        result, item = self.name("r"), self.name("i")
        items = node.items
        passthrough = isinstance(items, _PASSTHROUGH) or (
            isinstance(items, EnumSchema) and all(type(v) is str for v in items.values)
        )
        if passthrough:
            # The checks never rebind the item, so the list is copied whole afterwards.
            out.append(f"{ind}for {item} in {var}:")
            self.emit(items, item, out, ind + "    ")
            out.append(f"{ind}{result} = {var}.copy()")
        else:
            out.append(f"{ind}{result} = []")
            out.append(f"{ind}for {item} in {var}:")
            parsed = self.emit(items, item, out, ind + "    ")
            out.append(f"{ind}    {result}.append({parsed})")
        return result

    def object(self, node: ObjectSchema, var: str, out: list[str], ind: str) -> str:
        out.append(f"{ind}if type({var}) is not dict: raise _F")
        if node.extra == "forbid":
            out.append(f"{ind}if not {var}.keys() <= {self.const(node._names)}: raise _F")
        else:
            key = self.name("k")
            out.append(f"{ind}for {key} in {var}:")
            out.append(f"{ind}    " + _IS_STRING.format(v=key))
        values: dict[str, str] = {}
        absent: list[tuple[str, str]] = []
        required = [(name, sub) for name, sub in node.field_items if not isinstance(sub, OptionalSchema)]
        if required:
            out.append(f"{ind}try:")
            for name, _ in required:
                values[name] = self.name("t")
                out.append(f"{ind}    {values[name]} = {var}[{name!r}]")
            out.append(f"{ind}except KeyError: raise _F from None")
        for name, sub in node.field_items:
            if isinstance(sub, OptionalSchema):
                value, result = self.name("t"), self.name("r")
                out.append(f"{ind}{value} = {var}.get({name!r}, _M)")
                out.append(f"{ind}if {value} is _M:")
                if sub.default is MISSING:
                    out.append(f"{ind}    {result} = _M")
                    absent.append((name, result))
                elif isinstance(sub.default, list | dict):
                    out.append(f"{ind}    {result} = _copy({self.const(sub.default)})")
                else:
                    out.append(f"{ind}    {result} = {self.const(sub.default)}")
                out.append(f"{ind}else:")
                parsed = self.emit(sub.schema, value, out, ind + "    ")
                out.append(f"{ind}    {result} = {parsed}")
                values[name] = result
            else:
                values[name] = self.emit(sub, values[name], out, ind)
        result = self.name("r")
        pairs = ", ".join(f"{name!r}: {values[name]}" for name, _ in node.field_items)
        out.append(f"{ind}{result} = {{{pairs}}}")
        for name, marker in absent:
            out.append(f"{ind}if {marker} is _M: del {result}[{name!r}]")
        if node.extra == "allow":
            key, item = self.name("k"), self.name("x")
            out.append(f"{ind}for {key}, {item} in {var}.items():")
            out.append(f"{ind}    if {key} not in {self.const(node._names)}:")
            out.append(f"{ind}        _any({item})")
            out.append(f"{ind}        {result}[{key}] = {item}")
        return result


@dataclass(frozen=True, slots=True)
class Validator:
    """A compiled schema: ``fast`` for the common case, ``slow`` for every issue."""

    schema: Schema
    refs: Mapping[str, Schema]
    fast: Callable[[Any], Any]
    source: str

    def slow(self, value: Any) -> tuple[bool, Any, tuple[Issue, ...]]:
        """Walk *value* collecting every issue: ``(True, parsed, ())`` or ``(False, None, issues)``."""
        issues: list[Issue] = []
        try:
            result = self.schema._collect(value, (), issues, _Context(self.refs))
        except RecursionError:
            return False, None, (Issue((), "too_deep", "is nested too deeply to check"),)
        if result is _BAD:
            return False, None, tuple(issues)
        return True, result, ()

    def run(self, value: Any) -> tuple[bool, Any, tuple[Issue, ...]]:
        """``(True, parsed, ())`` if *value* matches, else ``(False, None, issues)``."""
        try:
            return True, self.fast(value), ()
        except (FastPathError, RecursionError):
            return self.slow(value)


def compile_schema(schema: Schema, refs: Mapping[str, Schema]) -> Validator:
    """Compile *schema*, resolving ``s.ref`` names through *refs*.

    Raises:
        InvalidDefinitionError: a ``ref`` names a schema *refs* does not have.

    """
    gen = _Codegen(refs)
    entry = gen.function(schema)
    source = "\n\n".join(gen.sources)
    exec(compile(source, f"<hermes schema {entry}>", "exec"), gen.namespace)  # noqa: S102 - our own generated code
    return Validator(schema=schema, refs=refs, fast=gen.namespace[entry], source=source)
