"""The one way to visit a schema's nodes: children(), walk() and LinkSchema.follow()."""

from __future__ import annotations

from hermes_core import schema as s


def test_children_are_the_schemas_a_node_holds_in_declaration_order() -> None:
    name, size = s.string(), s.integer()
    node = s.object({"name": name, "size": s.optional(size)})
    assert node.children()[0] is name
    assert node.children()[1].children() == (size,)
    assert len(node.children()) == 2
    assert s.string().children() == ()
    assert s.ref("Point").children() == ()


def test_walk_visits_every_node_once_depth_first_and_stops_at_links() -> None:
    leaf = s.string()
    tree = s.array(s.union(leaf, s.tuple(s.integer(), s.null())))
    kinds = [type(node).__name__ for node in tree.walk()]
    assert kinds == [
        "ArraySchema",
        "UnionSchema",
        "StringSchema",
        "TupleSchema",
        "IntegerSchema",
        "NullSchema",
    ]
    # A recursive imported document: the link holds no child, so the walk ends; follow() goes on.
    imported = s.from_json_schema(
        {"$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "$ref": "#/$defs/node"}
    )
    links = [node for node in imported.walk() if isinstance(node, s.LinkSchema)]
    assert links
    assert all(isinstance(link.follow(), s.ArraySchema) for link in links)
