"""What the compiler reads of a schema node, by kind: typed protocols, so the compiler imports no node class.

Each node class (in ``_nodes``, ``_alternatives`` and ``_containers``) names
its type in ``kind`` (``"string"``, ``"object"``, ``"union"``...).
:class:`SchemaNode` is what every node offers; :data:`Node` is the union of one
protocol per kind, which a test on ``kind`` narrows to the attributes that kind
has. :func:`reaching_branching` reads a whole schema by kind: which of its
nodes reach one that tries several schemas on one value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, cast

from hermes_core._base._issues import Issue
from hermes_core.schema._patterns import Searcher
from hermes_core.schema._shared import Context, Path

__all__ = [
    "AppliedNode",
    "ArrayNode",
    "ConditionalNode",
    "ContainsNode",
    "DependentNode",
    "EnumNode",
    "ImportedNode",
    "LinkNode",
    "Node",
    "NotNode",
    "NullableNode",
    "NumericNode",
    "ObjectNode",
    "OptionalNode",
    "OtherNode",
    "PropertyNamesNode",
    "RecordNode",
    "RefNode",
    "SchemaNode",
    "StringNode",
    "TupleNode",
    "TypelessNode",
    "UnionNode",
    "as_node",
    "reaching",
    "reaching_branching",
]


class SchemaNode(Protocol):
    """What the compiler needs of every schema node (``Schema`` in ``_nodes`` is one).

    ``kind`` tells the node's type apart (``"string"``, ``"object"``, ``"union"``...);
    the compiler reads the attributes of that kind, which :data:`Node` lists.
    """

    @property
    def kind(self) -> str:
        """The node's type tag (a class attribute of each node class)."""
        ...

    @property
    def has_refs(self) -> bool:
        """Whether the node names another schema through ``s.ref``."""
        ...

    def children(self) -> tuple[SchemaNode, ...]:
        """The schemas the node holds directly."""
        ...

    def expected(self, ctx: Context | None = None) -> str:
        """What a matching value is, in words."""
        ...

    def _admits(self, value: Any, ctx: Context) -> bool: ...

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any: ...


# What the compiler reads of each kind of node; as_node() tells mypy a SchemaNode is one of them,
# and a test on ``kind`` then narrows it. The node classes of _nodes, _alternatives and _containers
# have these attributes (tests/test_schema_compile.py holds that every class has a kind these protocols name).


class StringNode(SchemaNode, Protocol):
    kind: Literal["string"]
    min_length: int | None
    max_length: int | None
    format: str | None
    _regex: Searcher | None


class NumericNode(SchemaNode, Protocol):
    kind: Literal["integer", "number"]
    minimum: int | float | None
    maximum: int | float | None
    exclusive_minimum: int | float | None
    exclusive_maximum: int | float | None
    multiple_of: int | float | None


class EnumNode(SchemaNode, Protocol):
    kind: Literal["enum"]
    values: tuple[Any, ...]


class TupleNode(SchemaNode, Protocol):
    kind: Literal["tuple"]
    items: tuple[Node, ...]


class OptionalNode(SchemaNode, Protocol):
    kind: Literal["optional"]
    schema: Node
    default: Any
    default_issue: Issue | None


class NullableNode(SchemaNode, Protocol):
    kind: Literal["nullable"]
    schema: Node


class ArrayNode(SchemaNode, Protocol):
    kind: Literal["array"]
    items: Node
    min_items: int | None
    max_items: int | None
    unique_items: bool


class ObjectNode(SchemaNode, Protocol):
    kind: Literal["object"]
    field_items: tuple[tuple[str, Node], ...]
    extra: Any
    min_properties: int | None
    max_properties: int | None

    def _extras(
        self, value: dict[Any, Any], path: Path, issues: list[Issue], ctx: Context, out: dict[str, Any]
    ) -> bool: ...


class RecordNode(SchemaNode, Protocol):
    kind: Literal["record"]
    values: Node
    min_properties: int | None
    max_properties: int | None


class UnionNode(SchemaNode, Protocol):
    kind: Literal["union"]
    options: tuple[Node, ...]

    # What the check found for a value before (see Branching in _nodes), and keeping what it finds.
    def _recall(self, value: Any, path: Path, issues: list[Issue], tried: dict[Any, Any]) -> Any: ...

    def _keep(self, value: Any, path: Path, result: Any, tried: dict[Any, Any]) -> Any: ...


class TypelessNode(SchemaNode, Protocol):
    kind: Literal["typeless"]
    options: tuple[Node, ...]  # one per JSON type: null, boolean, object, array, number, string


class AppliedNode(SchemaNode, Protocol):
    kind: Literal["applied"]
    base: Node
    checks: tuple[Node, ...]


class NotNode(SchemaNode, Protocol):
    kind: Literal["not"]
    schema: Node

    def _words(self, ctx: Context | None) -> str: ...


class ConditionalNode(SchemaNode, Protocol):
    kind: Literal["conditional"]
    condition: Node
    then: Node | None
    otherwise: Node | None
    because: str
    unless: str


class DependentNode(SchemaNode, Protocol):
    kind: Literal["dependent"]
    required: tuple[tuple[str, tuple[str, ...]], ...]
    schemas: tuple[tuple[str, Node], ...]


class PropertyNamesNode(SchemaNode, Protocol):
    kind: Literal["property_names"]
    names: Node
    _passed: set[str]


class ContainsNode(SchemaNode, Protocol):
    kind: Literal["contains"]
    schema: Node
    minimum: int
    maximum: int | None


class RefNode(SchemaNode, Protocol):
    kind: Literal["ref"]
    name: str


class LinkNode(SchemaNode, Protocol):
    kind: Literal["link"]
    pointer: str

    def follow(self) -> SchemaNode: ...


class ImportedNode(SchemaNode, Protocol):
    kind: Literal["imported"]
    root: SchemaNode


class OtherNode(SchemaNode, Protocol):
    """The kinds whose attributes the compiler does not read: it calls their walk, or tests the value itself."""

    kind: Literal[
        "boolean",
        "null",
        "const",
        "any",
        "never",
        "all_of",
        "one_of",
        "prefix_array",
        "pattern_properties",
        "unevaluated",
    ]


Node = (
    StringNode
    | NumericNode
    | EnumNode
    | TupleNode
    | OptionalNode
    | NullableNode
    | ArrayNode
    | ObjectNode
    | RecordNode
    | UnionNode
    | TypelessNode
    | AppliedNode
    | NotNode
    | ConditionalNode
    | DependentNode
    | PropertyNamesNode
    | ContainsNode
    | RefNode
    | LinkNode
    | ImportedNode
    | OtherNode
)


def as_node(schema: SchemaNode) -> Node:
    """*schema* as the node of its kind, for mypy (the one place the compiler trusts the tags)."""
    return cast("Node", schema)


# The kinds of the nodes that check one value against several schemas (``Branching`` in ``_nodes``).
_BRANCHING = frozenset(
    {"union", "one_of", "all_of", "pattern_properties", "not", "conditional", "dependent", "property_names", "contains"}
)


def reaching_branching(root: SchemaNode, refs: Mapping[str, SchemaNode]) -> set[int]:
    """The ids of the nodes that reach a branching node (or are one), among all that *root* reaches.

    A union whose options reach none is tried as it always was; one whose
    options reach one keeps what it finds (see ``_compile``). Found in time
    linear in the schema: every node *root* reaches (through refs and links),
    then, backwards from the branching ones, every node that reaches one.
    """
    return reaching(root, refs, _BRANCHING)


def reaching(root: SchemaNode, refs: Mapping[str, SchemaNode], kinds: frozenset[str]) -> set[int]:
    """The ids of the nodes that reach a node of one of *kinds* (or are one), among all that *root* reaches."""
    parents: dict[int, list[int]] = {}
    branching: list[int] = []
    seen: set[int] = {id(root)}
    pending: list[SchemaNode] = [root]
    while pending:
        node = as_node(pending.pop())
        if node.kind in kinds:
            branching.append(id(node))
        for child in _next_nodes(node, refs):
            parents.setdefault(id(child), []).append(id(node))
            if id(child) not in seen:
                seen.add(id(child))
                pending.append(child)
    reaching = set(branching)
    while branching:
        for parent in parents.get(branching.pop(), ()):
            if parent not in reaching:
                reaching.add(parent)
                branching.append(parent)
    return reaching


def _next_nodes(node: Node, refs: Mapping[str, SchemaNode]) -> tuple[SchemaNode, ...]:
    """The nodes a check of *node* goes on to: its children, a link's target, a ref's named schema."""
    if node.kind == "link":
        return (node.follow(),)
    if node.kind == "ref":
        target = refs.get(node.name)
        return () if target is None else (target,)
    return node.children()
