"""The compiler below the nodes: it tells them apart by their ``kind`` tag, and ``parse`` calls it directly."""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import uuid
from collections.abc import Callable
from typing import get_args, get_type_hints

import pytest

from hermes_core import InvalidDefinitionError, setting
from hermes_core import schema as s
from hermes_core._base._issues import Issue
from hermes_core.schema import _alternatives, _compile, _conditions, _containers, _evaluation, _kinds, _nodes


def _node_classes() -> list[type[_nodes.Schema]]:
    """Every node class that is built (not the bases ``Schema`` and ``Branching``, nor the private ones such as
    ``_Numeric``, ``_Dict``, ``_Alternatives``)."""
    return [
        value
        for module in (_nodes, _alternatives, _containers, _conditions, _evaluation)
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, _nodes.Schema)
        and value.__module__ == module.__name__
        and name not in ("Schema", "Branching")
        and name[0] != "_"
    ]


def _compiler_kinds() -> set[str]:
    """The kinds the compiler's protocols name, one ``Literal`` per protocol."""
    kinds: set[str] = set()
    for protocol in get_args(_kinds.Node):
        kinds.update(get_args(get_type_hints(protocol)["kind"]))
    return kinds


def test_every_node_class_has_a_kind_of_its_own_that_the_compiler_knows() -> None:
    tags = {cls: cls.kind for cls in _node_classes()}
    assert tags[_alternatives.TypelessSchema] == "typeless"  # a union over the JSON types, checked by the value's type
    assert len(set(tags.values())) == len(tags), tags
    assert set(tags.values()) == _compiler_kinds()


def test_parse_compiles_a_new_schema_once_and_keeps_it_in_the_cache() -> None:
    schema = s.object({"a": s.integer()})
    assert id(schema) not in _compile.CLOSED_ENTRIES
    assert schema.parse({"a": 1.0}) == {"a": 1}
    entry = _compile.CLOSED_ENTRIES[id(schema)]
    assert entry[0] is schema
    assert entry[2] is _compile.closed_validator(schema)
    assert schema.parse({"a": 2}) == {"a": 2}
    assert _compile.CLOSED_ENTRIES[id(schema)] is entry


# -- a validator's code: written where the schema is defined, byte-compiled at its first call ----------------------


def _fresh_schema(levels: int = 9) -> s.Schema:
    """An object nested *levels* deep (deeper than one generated function inlines, so several are written), every
    field named anew, so that no earlier compilation has byte-compiled any of its functions (see ``_cached_code``)."""
    tag = uuid.uuid4().hex
    schema: s.Schema = s.object({f"leaf_{tag}": s.integer(), "note": s.optional(s.string())})
    for level in range(levels):
        schema = s.object({f"level{level}_{tag}": schema, f"count{level}_{tag}": s.integer()})
    return schema


def _value(schema: s.Schema, leaf: object) -> dict[str, object]:
    """A value of :func:`_fresh_schema`'s *schema*, its innermost integer *leaf* and every other integer 1."""
    node = schema
    value: dict[str, object] = {}
    top = value
    while True:
        assert isinstance(node, s.ObjectSchema)
        names = [name for name, _ in node.field_items]
        inner = node.field_items[0][1]
        if names[0].startswith("leaf_"):
            value[names[0]] = leaf
            return top
        value[names[1]] = 1
        value[names[0]] = value = {}
        node = inner


def test_a_validator_is_written_at_definition_and_byte_compiled_at_its_first_call_only() -> None:
    schema = _fresh_schema()
    validator = _compile.compile_schema(schema, {})
    entry = validator.entry
    functions = validator.source.count("\ndef ") + 1
    assert functions > 1  # nested deeper than one function inlines
    assert entry.__code__.co_name == "_pending"  # written, not yet byte-compiled
    before = _compile._cached_code.cache_info()
    good, bad = _value(schema, 1.0), _value(schema, "x")
    assert validator.run(good) == (True, _value(schema, 1), ())
    compiled = _compile._cached_code.cache_info()
    assert compiled.misses == before.misses + functions  # each function compiled, at the first call
    assert validator.entry is entry  # the same function, whoever holds it, now runs the compiled code
    assert entry.__code__.co_name == "_f1"
    assert validator.run(bad) == validator.walk(bad)
    assert validator.run(bad)[2][0].kind == "type"
    assert _compile._cached_code.cache_info() == compiled  # later calls compile nothing


def test_threads_that_call_a_new_validator_together_compile_it_once() -> None:
    schema = _fresh_schema(levels=30)
    validator = _compile.compile_schema(schema, {})
    functions = validator.source.count("\ndef ") + 1
    good, bad = _value(schema, 2), _value(schema, "x")
    expected = validator.walk(bad)
    before = _compile._cached_code.cache_info()
    start = threading.Barrier(8)
    results: list[object] = []

    def call(value: object) -> None:
        start.wait()
        results.append(validator.run(value))

    threads = [threading.Thread(target=call, args=(good if index % 2 else bad,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count((True, good, ())) == results.count(expected) == 4
    after = _compile._cached_code.cache_info()
    assert (after.misses, after.hits) == (before.misses + functions, before.hits)  # compiled once, by one thread


def test_a_first_call_too_deep_in_the_stack_to_compile_is_walked_and_the_next_call_compiles() -> None:
    # compile() counts the caller's frames against the recursion limit: near the limit, it fails where the call
    # itself would not. Found by calling closer and closer to the limit, a new validator each time.
    schema = s.object({"a": s.array(s.object({"b": s.integer(), "c": s.array(s.string())}))})
    good = {"a": [{"b": 1, "c": ["x"]}]}
    here = len(inspect.stack(0))

    def at_depth(depth: int, call: Callable[[], object]) -> object:
        return call() if depth <= 0 else at_depth(depth - 1, call)

    for margin in range(40, 0, -1):
        validator = _compile.compile_schema(schema, {})
        try:
            result = at_depth(sys.getrecursionlimit() - here - margin, functools.partial(validator.check, good))
        except RecursionError:  # the frames of the call itself went past the limit: no margin left to try
            break
        if validator.entry.__code__.co_name == "_pending":
            break
        assert result == (good, [])  # compiled, and right (the positive control: the same call, with room)
    else:
        pytest.fail("no call near the recursion limit failed to compile")
    if validator.entry.__code__.co_name != "_pending":
        pytest.skip("compile() on this Python does not count the caller's frames")
    # Walked: the right answer, or the walk's own word that the value is too deep to check there.
    assert result in ((good, []), (None, [Issue((), "too_deep", "is nested too deeply to check")]))
    assert validator.check(good) == (good, [])
    assert validator.entry.__code__.co_name == "_f1"


def test_a_value_checked_once_where_it_is_declared_or_read_compiles_nothing() -> None:
    # A default, a const, a default under a ref and a setting are checked once: by the walk, which finds what the
    # compiled check finds, and compiling that check cost every start a compile() (docs/performance.md, start-up).
    tag = uuid.uuid4().hex
    inner = s.object({f"k_{tag}": s.integer(), "n": s.optional(s.string(), default="d")})
    before = _compile._cached_code.cache_info()
    field = s.optional(inner, default={f"k_{tag}": 1.0})
    assert field.default == {f"k_{tag}": 1, "n": "d"}  # parsed, as before
    assert s.const({"a": [1, 2.0]}).value == {"a": [1, 2.0]}
    named = s.object({"x": s.optional(s.ref(f"n_{tag}"), default=3)})
    assert _compile.default_problem(named, {f"n_{tag}": s.integer()}) is None
    problem = _compile.default_problem(named, {f"n_{tag}": s.string()})
    assert problem is not None
    assert (problem[0], problem[1].kind) == ("x", "type")
    variable = f"HERMESOS_T{tag.upper()}_N"
    assert setting(variable, s.integer(minimum=1), environ={variable: "5"}) == 5
    with pytest.raises(InvalidDefinitionError, match="must be at least 1"):
        setting(variable, s.integer(minimum=1), environ={variable: "0"})
    wrong = s.optional(inner, default={f"k_{tag}": "x"}).default_issue  # reported where the schema is used
    assert wrong is not None
    assert (wrong.path, wrong.kind) == ((f"k_{tag}",), "type")
    with pytest.raises(InvalidDefinitionError, match="must be a JSON value"):
        s.const({"a": {1, 2}})
    assert _compile._cached_code.cache_info() == before  # nothing compiled
    # The control: parsing the same schema compiles its check.
    assert s.object({"f": field}).parse({}) == {"f": {f"k_{tag}": 1, "n": "d"}}
    assert _compile._cached_code.cache_info().misses > before.misses
