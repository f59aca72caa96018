"""The dynamic scope of an imported document: where each ``$dynamicRef`` goes, as JSON Schema 2020-12 defines it.

A ``$dynamicRef`` whose URI names a ``$dynamicAnchor`` of that name (in the
resource the URI names) goes to the ``$dynamicAnchor`` of that name in the
*outermost* schema resource of the dynamic scope that has one; any other
``$dynamicRef`` is a plain ``$ref``. The dynamic scope of a place is the
schema resources (the schemas with an ``$id``, and the document's root) a
check entered to reach it, from the root: the resource of each subschema it
went into and of each ref's target, never those it only passed through by
pointer, nor those of branches it left.

The import walks the document from its root and follows refs, so the dynamic
scope of every place it converts is known there: each ``$dynamicRef`` is
resolved as it is converted, to a plain link, and a check pays nothing for
it. All the walk needs of a scope is, for each name a ``$dynamicRef``
resolves dynamically (a live name), the anchor of the outermost resource
entered that has it: :class:`Scopes` numbers each such binding once (0,
nothing bound, is every scope of a document without live names). A subschema
is converted once for each scope it is reached in, memoised by its pointer
and that number, so refs that recurse end; each binding is counted in the
import's weight, as each node is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

__all__ = ["Scopes"]

# What one binding of a scope, or one step into a resource, holds: a dict entry and its key, about.
_BINDING_WEIGHT = 120


class Scopes:
    """The dynamic scopes of one import, numbered: 0 is the scope where no live name is bound yet.

    *bases* gives each subschema's base URI (its resource) by pointer,
    *anchors* the pointer of each live ``$dynamicAnchor`` by (base URI, name);
    *spend* counts what is held in the import's weight (and refuses past it).
    """

    def __init__(
        self, bases: Mapping[str, str], anchors: Mapping[tuple[str, str], str], spend: Callable[[int], None]
    ) -> None:
        self._bases = bases
        self._spend = spend
        # Each resource that has a live anchor: its names and their pointers.
        self._owned: dict[str, dict[str, str]] = {}
        for (base, name), pointer in anchors.items():
            self._owned.setdefault(base, {})[name] = pointer
        #: Whether any name is live: else every scope is 0, and nothing need ask for one.
        self.live = bool(self._owned)
        self._bindings: list[dict[str, str]] = [{}]  # by scope number: each live name bound, to its anchor
        self._numbers: dict[tuple[tuple[str, str], ...], int] = {(): 0}
        self._entered: dict[tuple[int, str], int] = {}  # (scope, resource) -> the scope once in the resource

    def enter(self, scope: int, pointer: str) -> int:
        """The scope a check is in at *pointer* when it reached it from *scope*: in its resource too."""
        if not self._owned:  # no live name: every scope is 0
            return scope
        base = self._bases.get(pointer)
        if base is None:  # a boolean schema: no resource of its own, nothing in it
            return scope
        owned = self._owned.get(base)
        if owned is None:
            return scope
        key = (scope, base)
        known = self._entered.get(key)
        if known is not None:
            return known
        self._spend(_BINDING_WEIGHT)
        bindings = self._bindings[scope]
        # The outermost resource with an anchor of a name wins: a name bound stays bound.
        added = {name: anchor for name, anchor in owned.items() if name not in bindings}
        made = scope
        if added:
            merged = {**bindings, **added}
            signature = tuple(sorted(merged.items()))
            found = self._numbers.get(signature)
            if found is None:
                self._spend(_BINDING_WEIGHT * len(merged) + sum(len(name) for name in merged))
                found = self._numbers[signature] = len(self._bindings)
                self._bindings.append(merged)
            made = found
        self._entered[key] = made
        return made

    def anchor(self, scope: int, name: str, initial: str) -> str:
        """Where a ``$dynamicRef`` to the live *name* goes in *scope*: *initial* (its static target) if unbound."""
        return self._bindings[scope].get(name, initial)
