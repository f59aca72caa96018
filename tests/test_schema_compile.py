"""The compiler below the nodes: it tells them apart by their ``kind`` tag, and ``parse`` calls it directly."""

from __future__ import annotations

from typing import get_args, get_type_hints

from hermes_core import schema as s
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
