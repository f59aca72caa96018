"""Compile a schema once into straight-line Python that collects every issue in one pass.

The generated code tests each value with the cheapest exact test (``type(x)
is str``, ``k.keys() <= names``...). When a test fails, it hands that one
value to the node's own ``_collect`` walk, the authoritative check, with the
value's path; the walk appends the issues and returns the parsed value (so a
``str`` subclass or an integral float still parses). Paths are only built on
that failure branch, so a valid value pays for no bookkeeping. The compiled
code therefore finds exactly the issues the walk finds, in the same order.

The compiler sits below the nodes (``_nodes`` imports it for ``Schema.parse``)
and imports none of them: it tells nodes apart by their ``kind`` tag and reads
the attributes that kind has, as the protocols of ``_kinds`` describe them.
"""

from __future__ import annotations

import _thread
import functools
import types
from collections.abc import Callable, Iterator, Mapping
from types import CodeType
from typing import Any

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, TooManyIssues
from hermes_core.schema._kinds import (
    AppliedNode,
    ArrayNode,
    ConditionalNode,
    ContainsNode,
    DependentNode,
    Node,
    NotNode,
    NumericNode,
    ObjectNode,
    OptionalNode,
    RecordNode,
    SchemaNode,
    TypelessNode,
    UnionNode,
    as_node,
    reaching,
    reaching_branching,
)
from hermes_core.schema._shared import (
    BAD,
    FORMATS,
    MISSING,
    NESTING_MAX,
    Context,
    Path,
    because,
    copy_json,
    key_issue,
    multiple_ok,
    path_key,
    raised_issue,
    self_ref,
    size_issue,
    unicode_ok,
    unique_issues,
)

__all__ = ["CLOSED_ENTRIES", "Validator", "closed_validator", "compile_schema", "default_problem"]


# The nodes only JSON Schema import makes: rare in tool inputs, so their own walk checks them.
_WALKED = frozenset(
    {
        "never",
        "all_of",
        "one_of",
        "prefix_array",
        "pattern_properties",
        "dependent",
        "property_names",
        "contains",
        "unevaluated",
    }
)

# Loops and try blocks nest at most 20 deep in one CPython function; past this
# many levels of inlined containers, a nested container gets a function of its own.
_MAX_INLINE_DEPTH = 6
# CPython's compile() grows faster than the length of one function: an object of 100,000 fields,
# inlined, took 22 s to compile on its first call. An object with more fields than this is checked
# by its walk; one function inlines objects of at most this many fields in all, then calls new ones.
# (No object inlines past the function's budget: its own function always holds it whole.)
_MAX_COMPILED_FIELDS = 256
_MAX_FUNCTION_FIELDS = 512
# compile() holds about 120 bytes for each character of the source it compiles while it works, and the code it
# makes keeps about 4 (an imported document of nested objects of 500 fields, 0.3 MB, took 540 MB to compile as one
# module). So each function is compiled by itself (at most _MAX_FUNCTION_FIELDS fields: some 30 MB at work), and
# one validator compiles at most _SOURCE_MAX characters and inlines at most _MAX_INLINED_FIELDS fields in all:
# past them, each further node is checked by its walk, which finds the same issues without code of its own. A
# tool's schema is a few thousand characters, some tens of fields.
_SOURCE_MAX = 512 * 1024
_MAX_INLINED_FIELDS = 1024
# A union of more options than this is checked by its walk: compiled, each option would be a function.
_MAX_COMPILED_OPTIONS = 64
# The generated functions of at most this many characters are kept, compiled, by their text (the same shape in
# many schemas compiles once); a longer one is compiled each time, and not kept.
_CACHED_SOURCE_MAX = 16 * 1024


# A value of each exact JSON type (an int and a float: one option may hold both), as a typeless schema dispatches.
_DISPATCHED: tuple[Any, ...] = ({}, [], "", 0, 0.5, True, None)

# The exact types for which a leaf's test (_Codegen.test) is its whole check: a predicate asks the walk of no other.
_EXACT = {
    "string": "type(v) is str",
    "enum": "type(v) is str",
    "integer": "type(v) is int",
    "number": "type(v) is int or type(v) is float",
    "boolean": "True",
    "null": "True",
}


def _contains(passes: Callable[[Any], bool], items: list[Any], low: int, high: int | None) -> bool:
    """Whether at least *low* and at most *high* of *items* pass (``contains``); stops once the answer is known."""
    count = 0
    for item in items:
        if passes(item):
            count += 1
            if high is None and count >= low:
                return True
            if high is not None and count > high:
                return False
    return count >= low


def _plain_keys(value: dict[Any, Any]) -> bool:
    """Whether every key of *value* is text a JSON object may have: one join, not a test per key (row 1c)."""
    try:
        joined = "".join(value)
    except TypeError:  # a key that is not a str
        return False
    return joined.isascii() or unicode_ok(joined)


def _adds_keys(schema: SchemaNode) -> bool:
    """Whether *schema* may parse an object into one with a key it did not have: a default, below no container."""
    pending = [as_node(schema)]
    while pending:
        node = pending.pop()
        if node.kind == "optional" and node.default is not MISSING:
            return True
        if node.kind in {"link", "ref"}:
            return True  # not followed here: assumed to
        if node.kind not in {"array", "tuple", "record", "prefix_array"}:
            pending.extend(as_node(child) for child in node.children())
    return False


def _stop(issues: list[Issue]) -> None:
    """Stop the check: *issues* holds more than ``ISSUES_MAX`` (the generated code tests that first)."""
    raise TooManyIssues(issues)


def _capped(parsed: Any, issues: list[Issue]) -> Any:
    """*parsed*, unless *issues* now holds more than ``ISSUES_MAX``: then stop the check."""
    if len(issues) > ISSUES_MAX:
        raise TooManyIssues(issues)
    return parsed


class _Trial(list[Issue]):
    """The issues of one option a compiled union tries, holding the ``tried`` of the check (``c``) for those below.

    A union whose options reach a branching node keeps what it finds in a
    ``Context.tried``, as the walk does (see ``Branching`` in ``_nodes``); that
    dict goes down through the lists its options' issues go to.
    """

    __slots__ = ("c",)
    c: dict[Any, Any]


class _NotJson(Exception):  # noqa: N818 - internal control flow, never raised to a caller
    """Raised by :func:`_any_fast` at the first doubt; the walk then says what is wrong."""


def _any_fast(value: Any, depth: int = 0) -> None:
    """Return if *value* is plainly JSON (builtin types only, within ``NESTING_MAX``), else raise ``_NotJson``."""
    kind = type(value)
    if kind is str:
        if not (value.isascii() or unicode_ok(value)):
            raise _NotJson
    elif kind is int or kind is bool or value is None:
        return
    elif kind is float:
        if value - value != 0.0:
            raise _NotJson
    elif kind is list:
        if depth >= NESTING_MAX:
            raise _NotJson
        for item in value:
            _any_fast(item, depth + 1)
    elif kind is dict:
        if depth >= NESTING_MAX:
            raise _NotJson
        for key, item in value.items():
            if type(key) is not str or not (key.isascii() or unicode_ok(key)):
                raise _NotJson
            _any_fast(item, depth + 1)
    else:
        raise _NotJson


_IS_STRING = "type({v}) is str and ({v}.isascii() or _uok({v}))"

# The leaves whose walk refuses a value of a wrong JSON type with one fixed issue (see _Codegen.misses).
_TYPED_LEAVES = frozenset({"string", "integer", "number", "boolean", "null"})
# One value of each exact builtin JSON type whose issue, on a leaf that refuses the type, does not
# depend on the value (a float may be integral: an integer leaf takes 1.0, so floats are walked).
_TYPE_SAMPLES: tuple[Any, ...] = (None, True, 0, "", [], {})


class _Codegen:
    """Writes one module of functions for a schema and every schema it reaches.

    Each function has the signature ``f(v, p, I)``: the value, the path of the
    value (a tuple), and the list issues are appended to. It returns the
    parsed value, which is meaningless once an issue was appended.
    """

    def __init__(self, root: SchemaNode, refs: Mapping[str, SchemaNode]) -> None:
        self.root = root
        self.refs = refs
        self.context = Context(refs)
        self.namespace: dict[str, Any] = {
            "_uok": unicode_ok,
            "_M": MISSING,
            "_copy": copy_json,
            "_any": _any_fast,
            "_NotJson": _NotJson,
            "_Issue": Issue,
            # The context of a walk: with the check's tried, inside a trial of a union that keeps what it found.
            "_cx": lambda issues: Context(refs, set(), issues.c) if type(issues) is _Trial else Context(refs),
            "_ctxt": lambda tried: Context(refs, set(), tried),
            "_Trial": _Trial,
            "_C": self.context,
            "_size": size_issue,
            "_key_issue": key_issue,
            "_key": path_key,
            "_multiple": multiple_ok,
            "_unique": unique_issues,
            "_stop": _stop,
            "_capped": _capped,
            "_TooMany": TooManyIssues,
            "_tnew": tuple.__new__,
            "_BAD": BAD,
            "_because": because,
            "_plain_keys": _plain_keys,
            "_contains": _contains,
        }
        self.functions: dict[int, str] = {}
        self.predicates: dict[int, str] = {}  # the predicate of each node asked (see predicate())
        self.constants: dict[int, str] = {}
        self.shared: dict[Any, str] = {}  # constants equal by value (details, type issues), by a key of that value
        self.sources: list[str] = []
        self.written = 0  # the characters of source compiled so far (see _SOURCE_MAX)
        self.keep: list[Any] = []  # keeps ids unique while they are dict keys
        self.counter = 0
        self.budget = _MAX_FUNCTION_FIELDS  # the fields the function being written may still inline
        self.inlined = 0  # the fields inlined in all (see _MAX_INLINED_FIELDS)
        self.reaching: set[int] | None = None  # reaching_branching(root), found for the first union
        self.linked: set[int] | None = None  # the nodes reaching a ref or a link, found for the first condition

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, value: Any) -> str:
        """A namespace name bound to *value* (one name per object)."""
        key = id(value)
        if key not in self.constants:
            self.keep.append(value)
            self.constants[key] = self.name("_c")
            self.namespace[self.constants[key]] = value
        return self.constants[key]

    def equal_const(self, key: Any, value: Any) -> str:
        """A namespace name bound to *value*, one name for all values of the same *key* (a text, a table)."""
        name = self.shared.get(key)
        if name is None:
            name = self.shared[key] = self.const(value)
        return name

    def resolve(self, schema: SchemaNode) -> Node:
        node = as_node(schema)
        seen: set[str] = set()
        links: set[int] = set()
        while True:
            if node.kind == "imported":
                node = as_node(node.root)
                continue
            if node.kind == "link":
                if id(node) in links:
                    raise self_ref(node.pointer)
                links.add(id(node))
                node = as_node(node.follow())
                continue
            if node.kind != "ref":
                return node
            target = self.refs.get(node.name)
            if target is None:
                raise InvalidDefinitionError(
                    f"s.ref({node.name!r})",
                    None,
                    "names a schema that is not registered; named schemas are resolved by a Runtime "
                    "given schemas={...} (or contributed by a plugin)",
                )
            if node.name in seen:
                raise InvalidDefinitionError(
                    f"s.ref({node.name!r})", None, "only refers to itself; a named schema must describe a value"
                )
            seen.add(node.name)
            node = as_node(target)

    def function(self, schema: SchemaNode) -> str:
        """The name of ``f(v, p, I)`` checking *schema*, written on first use (refs may recurse)."""
        node = self.resolve(schema)
        key = id(node)
        if key in self.functions:
            return self.functions[key]
        name = self.name("_f")
        self.functions[key] = name
        self.keep.append(node)
        if (
            self.written >= _SOURCE_MAX
            or self.inlined >= _MAX_INLINED_FIELDS
            or (node.kind == "union" and len(node.options) > _MAX_COMPILED_OPTIONS)
        ):
            # Checked by its walk, without code of its own (see _SOURCE_MAX); the refs it reaches are resolved
            # now all the same, so that a missing one is a definition error here, as when compiled.
            self.namespace[name] = self.walker(node)
            self.resolve_refs(node)
            return name
        body: list[str] = []
        outer_budget, self.budget = self.budget, _MAX_FUNCTION_FIELDS
        if node.kind == "union":
            self.union_body(node, body)
        elif node.kind == "typeless":
            self.typeless_body(node, body)
        elif node.kind == "object" and not self.inlines(node, 0):  # too many fields, here or in all: walked
            body.append(f"    return {self.fallback(node, 'v', [])}")
        else:
            result = self.emit(node, "v", [], body, "    ", 0)
            body.append(f"    return {result}")
        self.budget = outer_budget
        source = f"def {name}(v, p, I):\n" + "\n".join(body)
        self.written += len(source)
        self.sources.append(source)  # byte-compiled at the validator's first call (see _deferred)
        return name

    def walker(self, node: Node) -> Callable[[Any, Path, list[Issue]], Any]:
        """``f(v, p, I)`` checking *node* by its walk, as the generated code's fallback does."""
        collect, context = node._collect, self.namespace["_cx"]
        return lambda v, p, issues: collect(v, p, issues, context(issues))

    def resolve_refs(self, node: Node) -> None:
        """Resolve each ``s.ref`` *node* holds (its walk does not compile them): a missing one raises now."""
        pending: list[SchemaNode] = [node]
        while pending:
            held = as_node(pending.pop())
            if held.kind == "ref":
                self.function(held)
            else:
                pending.extend(held.children())

    def union_body(self, node: UnionNode, body: list[str]) -> None:
        # The first option that accepts wins; when none does, the walk explains.
        # An option that stops (too many issues) has failed: J holds its first issues.
        union = self.const(node)
        if self.reaching is None:
            self.reaching = reaching_branching(self.root, self.refs)
        options = [(self.function(option), id(option) in self.reaching) for option in node.options]
        if not any(branches for _, branches in options):
            for function, _ in options:
                body.append("    J = []")
                body.append(f"    try: r = {function}(v, p, J)")
                body.append("    except _TooMany: r = None")
                body.append("    if not J: return r")
            body.append(f"    return {union}._collect(v, p, I, _cx(I))")
            return

        # Its options reach a branching node (itself, if it recurses), each of which could try
        # the same node on the same value again. The options that reach one are tried with a
        # _Trial holding the check's tried: made here, or, in a trial of another union, the one
        # that trial holds, where what this check found is recalled and what this union finds is
        # kept, as the walk keeps it. No node is tried twice on one value in a check: the time is
        # polynomial, not exponential in the value's depth (tests/test_schema_bounds.py).
        def attempts(ind: str, found: str) -> None:
            for function, branches in options:
                body.append(f"{ind}J = _Trial(); J.c = c" if branches else f"{ind}J = []")
                body.append(f"{ind}try: r = {function}(v, p, J)")
                body.append(f"{ind}except _TooMany: r = None")
                body.append(f"{ind}if not J: return {found}")
            body.append(f"{ind}return {union}._collect(v, p, I, _ctxt(c))")

        body.append("    if type(I) is _Trial:")
        body.append("        c = I.c")
        body.append(f"        r = {union}._recall(v, p, I, c)")
        body.append("        if r is not _M: return r")
        attempts("        ", f"{union}._keep(v, p, r, c)")
        body.append("    c = {}")  # no other union tries this value: what this one finds is not kept
        attempts("    ", "r")

    def typeless_body(self, node: TypelessNode, body: list[str]) -> None:
        # The option of the value's JSON type checks it, as the walk does (one option per type); a value of no
        # exact JSON type (a subclass, a tuple) goes to the walk.
        tests = {type(None): "v is None", bool: "t is bool", dict: "t is dict", list: "t is list", str: "t is str"}
        body.append("    t = type(v)")
        for sample in _DISPATCHED:
            for option in node.options:
                if option._admits(sample, self.context):
                    test = tests.get(type(sample), f"t is {type(sample).__name__}")
                    body.append(f"    if {test}: return {self.function(option)}(v, p, I)")
                    break
        body.append(f"    return {self.fallback(node, 'v', [])}")

    def applied(self, node: AppliedNode, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        """The base of *node* as :meth:`emit` writes it, then each check's walk, as ``AppliedSchema`` runs them."""
        before, result = self.name("b"), self.name("r")
        checked = self.name("x")  # emit may rebind what it checks: the checks are given the value itself
        out.append(f"{ind}{before} = len(I); {checked} = {var}")
        base = self.emit(node.base, checked, segments, out, ind, depth)
        out.append(f"{ind}{result} = {base}")
        # A value of a type the base refuses gets its one issue, not the checks' (see AppliedSchema).
        out.append(f"{ind}if len(I) == {before} or {self.const(node.base)}._admits({var}, _C):")
        for check in node.checks:
            held = self.name("x")
            out.append(f"{ind}    {held} = {var}")
            if check.kind == "dependent" and not check.schemas:
                self.dependent(check, held, segments, out, ind + "    ")
                continue
            if check.kind == "contains":
                # Counted by the predicate of its schema; the walk says why only when the count is wrong.
                out.append(f"{ind}    if type({held}) is list and not {self.contains_test(check, held)}:")
                out.append(f"{ind}        {self.fallback(check, held, segments)}")
                continue
            if check.kind == "property_names":
                # The keys its names accepted before, all of them, in one test (see PropertyNamesSchema._passed).
                out.append(
                    f"{ind}    if type({held}) is not dict or not {self.const(check._passed)}.issuperset({held}):"
                )
                out.append(f"{ind}        {self.fallback(check, held, segments)}")
                continue
            parsed = self.emit(check, held, segments, out, ind + "    ", depth)
            if _adds_keys(check):  # a default its object adds: merged, as the walk merges (else nothing to add)
                out.append(
                    f"{ind}    if {parsed} is not {var} and type({parsed}) is dict and type({result}) is dict:"
                    f" {result} = {{**{parsed}, **{result}}}"
                )
        if not node.checks:
            out.append(f"{ind}    pass")
        return result

    def in_place(self, node: Node, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        """Lines checking *var* against an imported schema object's in-place keywords (see ``_conditions``)."""
        if node.kind == "applied":
            return self.applied(node, var, segments, out, ind, depth)
        if self.shares(node):  # it may meet one node on one value again: walked, as it keeps what it found
            out.append(f"{ind}{var} = {self.fallback(node, var, segments)}")
            return var
        if node.kind == "not":
            return self.negation(node, var, segments, out, ind)
        assert node.kind == "conditional"  # narrows for mypy: the caller tested the kind
        return self.conditional(node, var, segments, out, ind)

    def dependent(self, node: DependentNode, var: str, segments: list[str], out: list[str], ind: str) -> None:
        # Each key's companions, tested in line; only where one is missing does the walk say which.
        tests = [
            f"({key!r} in {var} and not {self.const(frozenset(names))} <= {var}.keys())" for key, names in node.required
        ]
        out.append(f"{ind}if type({var}) is dict and ({' or '.join(tests)}):")
        out.append(f"{ind}    {self.fallback(node, var, segments)}")

    def shares(self, node: Node) -> bool:
        """Whether a schema *node* holds reaches a ref or a link: then *node* is walked, which keeps what it found.

        Without one, the schemas below *node* form a tree, each tried at most
        once for each time *node* is; through refs, one node may be reached
        on one value along many paths, which only the walk's ``tried`` keeps
        from taking time exponential in the depth.
        """
        if self.linked is None:
            self.linked = reaching(self.root, self.refs, frozenset({"link", "ref"}))
        return any(id(child) in self.linked for child in node.children())

    # -- predicates: whether a schema accepts a value, and nothing else (the test of an if, of a not) ----------

    def passes(self, node: SchemaNode) -> str:
        """A namespace name bound to ``q(v)``: whether *node*'s walk accepts *v* without an issue."""
        collect, refs = node._collect, self.refs

        def passes(value: Any) -> bool:
            found: list[Issue] = []
            try:
                parsed = collect(value, (), found, Context(refs))
            except TooManyIssues:
                return False
            return parsed is not BAD and not found

        return self.const(passes)

    def predicate(self, schema: SchemaNode) -> str:
        """The name of ``q(v)``: whether *schema* accepts *v*, as its check would, building no value and no issue.

        What decides a condition (``if``, ``not``) is only whether the value
        passes: a predicate tests that in line where it can (a field's type, a
        required key), and asks the walk (:meth:`passes`) where it cannot say
        for certain (a leaf's test failed: a subclass, an integral float).
        """
        node = self.resolve(schema)
        name = self.predicates.get(id(node))
        if name is not None:
            return name
        name = self.predicates[id(node)] = self.name("_q")
        self.keep.append(node)
        if self.written >= _SOURCE_MAX:
            self.namespace[name] = self.namespace[self.passes(node)]
            return name
        body: list[str] = []
        self.predicate_body(node, body)
        source = f"def {name}(v):\n" + "\n".join(body)
        self.written += len(source)
        self.sources.append(source)  # byte-compiled at the validator's first call (see _deferred)
        return name

    def predicate_body(self, node: Node, body: list[str]) -> None:
        if node.kind == "typeless":
            body.append("    t = type(v)")
            tests = {type(None): "v is None", bool: "t is bool", dict: "t is dict", list: "t is list", str: "t is str"}
            for sample in _DISPATCHED:
                for option in node.options:
                    if option._admits(sample, self.context):
                        test = tests.get(type(sample), f"t is {type(sample).__name__}")
                        body.append(f"    if {test}: return {self.predicate(option)}(v)")
                        break
            body.append(f"    return {self.passes(node)}(v)")
        elif node.kind == "object" and len(node.field_items) <= _MAX_COMPILED_FIELDS:
            self.object_predicate(node, body)
        elif node.kind == "applied":
            body.append(f"    if not {self.predicate(node.base)}(v): return False")
            for check in node.checks:
                body.append(f"    if not {self.predicate(check)}(v): return False")
            body.append("    return True")
        elif node.kind == "not" and not self.shares(node):
            body.append(f"    return not {self.predicate(node.schema)}(v)")
        elif node.kind == "conditional" and not self.shares(node):
            then = "True" if node.then is None else f"{self.predicate(node.then)}(v)"
            otherwise = "True" if node.otherwise is None else f"{self.predicate(node.otherwise)}(v)"
            body.append(f"    return {then} if {self.predicate(node.condition)}(v) else {otherwise}")
        elif node.kind == "optional":
            body.append(f"    return {self.predicate(node.schema)}(v)")
        elif node.kind == "contains":
            body.append(f"    return type(v) is not list or {self.contains_test(node, 'v')} or {self.passes(node)}(v)")
        else:
            leaf = self.test(node, "v")
            passes = self.passes(node)
            exact = _EXACT.get(node.kind)
            if leaf is not None and exact is not None:
                # Of these exact types the test says all (a str subclass, an integral float are the walk's).
                body.append(f"    if {exact}: return {leaf}")
            body.append(f"    return ({leaf}) or {passes}(v)" if leaf is not None else f"    return {passes}(v)")

    def contains_test(self, node: ContainsNode, var: str) -> str:
        """An expression true when enough items of the list *var*, and not too many, pass ``contains``."""
        return f"_contains({self.predicate(node.schema)}, {var}, {node.minimum}, {node.maximum})"

    def object_predicate(self, node: ObjectNode, body: list[str]) -> None:
        passes = self.passes(node)
        body.append(f"    if type(v) is not dict: return {passes}(v)")
        body.append(f"    n = {sum(1 for _, sub in node.field_items if sub.kind != 'optional')}")
        for name, sub in node.field_items:
            value = self.name("y")
            inner = as_node(sub.schema) if sub.kind == "optional" else sub
            test = self.test(self.resolve(inner), value)
            if test is not None:
                check = f"({test}) or {self.passes(inner)}({value})"
            else:
                check = f"{self.predicate(inner)}({value})"
            if sub.kind == "optional":
                body.append(f"    {value} = v.get({name!r}, _M)")
                body.append(f"    if {value} is not _M:")
                body.append("        n += 1")
                body.append(f"        if not ({check}): return False")
            else:
                body.append(f"    if {name!r} not in v: return False")
                body.append(f"    {value} = v[{name!r}]")
                body.append(f"    if not ({check}): return False")
        tests = ["len(v) != n"]
        if node.min_properties is not None:
            tests.append(f"len(v) < {node.min_properties}")
        if node.max_properties is not None:
            tests.append(f"len(v) > {node.max_properties}")
        if node.extra == "ignore" and len(tests) == 1:
            tests[0] += " and not _plain_keys(v)"
        body.append(f"    if {' or '.join(tests)}: return {passes}(v)")
        body.append("    return True")

    def negation(self, node: NotNode, var: str, segments: list[str], out: list[str], ind: str) -> str:
        # As NotSchema's walk: an issue when the value passes the schema of "not".
        said = f"must not {node._words(self.context)}"
        detail = self.equal_const(("text", said), said)
        out.append(f"{ind}if {self.predicate(node.schema)}({var}):")
        out.append(f"{ind}    I.append(_Issue({self.path(segments)}, 'invalid', {detail})); {var} = _BAD")
        return var

    def conditional(self, node: ConditionalNode, var: str, segments: list[str], out: list[str], ind: str) -> str:
        # As ConditionalSchema's walk: the branch the condition picks, its issues saying why.
        holds = self.name("h")
        out.append(f"{ind}{holds} = {self.predicate(node.condition)}({var})")
        result = self.name("r")
        out.append(f"{ind}{result} = {var}")
        for test, branch, reason in (("", node.then, node.because), ("not ", node.otherwise, node.unless)):
            if branch is None:
                continue
            before = self.name("b")
            out.append(f"{ind}if {test}{holds}:")
            out.append(f"{ind}    {before} = len(I)")
            out.append(f"{ind}    try: {result} = {self.function(branch)}({var}, {self.path(segments)}, I)")
            out.append(f"{ind}    finally:")
            out.append(f"{ind}        if len(I) > {before}: _because(I, {before}, {self.const(reason)})")
        return result

    def explains_own_type(self, node: Node, depth: int) -> bool:
        """Whether :meth:`emit` sends a value of the wrong type for *node* to the ``outer`` walk."""
        if node.kind in {"optional", "nullable"}:
            return self.explains_own_type(node.schema, depth)
        if self.test(node, "x") is not None or node.kind in {"enum", "const", "any"}:
            return True
        return self.inlines(node, depth)

    def inlines(self, node: Node, depth: int) -> bool:
        """Whether :meth:`emit` writes the container *node* inline, rather than as a call of its own function."""
        if depth >= _MAX_INLINE_DEPTH:
            return False
        if node.kind == "object":
            fields = len(node.field_items)
            return fields <= min(self.budget, _MAX_COMPILED_FIELDS) and self.inlined + fields <= _MAX_INLINED_FIELDS
        return node.kind in {"array", "record"}

    @staticmethod
    def path(segments: list[str]) -> str:
        return f"(*p, {', '.join(segments)})" if segments else "p"

    def fallback(self, node: SchemaNode, var: str, segments: list[str], context: str = "_cx(I)") -> str:
        """The walk's call on *var*: it appends the issues and returns the parsed value."""
        return f"{self.const(node)}._collect({var}, {self.path(segments)}, I, {context})"

    def test(self, node: Node, var: str) -> str | None:
        """An expression true when *var* certainly matches leaf *node* as it is; None if not a leaf."""
        if node.kind == "string":
            tests = [_IS_STRING.format(v=var)]
            if node.min_length is not None:
                tests.append(f"len({var}) >= {node.min_length}")
            if node.max_length is not None:
                tests.append(f"len({var}) <= {node.max_length}")
            if node._regex is not None:
                tests.append(f"{self.const(node._regex.search)}({var}) is not None")
            if node.format in FORMATS:
                tests.append(f"{self.const(FORMATS[node.format][0])}({var})")
            return " and ".join(tests)
        if node.kind == "integer":
            return " and ".join([f"type({var}) is int", *self.bounds(node, var)])
        if node.kind == "number":
            kind = f"(type({var}) is int or (type({var}) is float and {var} - {var} == 0.0))"
            return " and ".join([kind, *self.bounds(node, var)])
        if node.kind == "boolean":
            return f"({var} is True or {var} is False)"
        if node.kind == "null":
            return f"{var} is None"
        if node.kind == "enum" and all(type(v) is str for v in node.values):
            return f"type({var}) is str and {var} in {self.const(frozenset(node.values))}"
        return None

    def misses(self, node: Node) -> dict[type, str]:
        """The exact types leaf *node* refuses by type alone, each with the detail of the one issue its walk appends.

        Asked of the walk itself, once, on a sample of each type: the compiled code
        then appends that issue without the walk's call (bench_adapters, row 1e),
        and the issues stay the walk's, in its order.
        """
        if node.kind not in _TYPED_LEAVES:
            return {}
        found: dict[type, str] = {}
        for sample in _TYPE_SAMPLES:
            if node._admits(sample, self.context):
                continue
            issues: list[Issue] = []
            returned = node._collect(sample, (), issues, self.context)
            if returned is BAD and len(issues) == 1 and issues[0].kind == "type" and issues[0].path == ():
                found[type(sample)] = issues[0].detail
        return found

    def bounds(self, node: NumericNode, var: str) -> list[str]:
        tests = []
        for bound, operator in (
            (node.minimum, ">="),
            (node.maximum, "<="),
            (node.exclusive_minimum, ">"),
            (node.exclusive_maximum, "<"),
        ):
            if bound is not None:
                tests.append(f"{var} {operator} {self.const(bound)}")
        if isinstance(node.multiple_of, int):
            tests.append(f"{var} % {self.const(node.multiple_of)} == 0")
        elif node.multiple_of is not None:
            tests.append(f"_multiple({var}, {self.const(node.multiple_of)})")
        return tests

    def emit(
        self,
        node: Node,
        var: str,
        segments: list[str],
        out: list[str],
        ind: str,
        depth: int,
        outer: SchemaNode | None = None,
    ) -> str:
        """Append lines checking local *var* (at path ``p + segments``); return the result's expression.

        The lines may rebind *var*, which the caller owns. *outer* is the
        ``nullable`` wrapping *node*, whose walk explains a value of the wrong type.
        """
        if node.kind == "optional":
            return self.emit(node.schema, var, segments, out, ind, depth)
        test = self.test(node, var)
        if test is not None:
            # A leaf's walk never touches the context's cycle set, so one shared context serves.
            fallback = self.fallback(outer or node, var, segments, context="_C")
            misses = self.misses(node) if outer is None else {}
            if not misses:
                out.append(f"{ind}if not ({test}): {var} = {fallback}")
                return var
            # A value of a wrong JSON type (a string for an integer): the walk's one issue, without the walk.
            table = self.equal_const(("misses", *misses.items()), misses)  # one table for the leaves that say the same
            out.append(f"{ind}if not ({test}):")
            out.append(f"{ind}    if (d := {table}.get(type({var}))) is None: {var} = {fallback}")
            out.append(f"{ind}    else: I.append(_tnew(_Issue, ({self.path(segments)}, 'type', d))); {var} = _BAD")
            return var
        if node.kind in {"enum", "const"}:
            # Mixed scalars: JSON equality (1 == 1.0, True != 1) lives in the walk; it returns the member.
            out.append(f"{ind}{var} = {self.fallback(outer or node, var, segments)}")
            return var
        if node.kind == "tuple":
            # Rare in tool inputs: the node's own walk checks it, items and all. The refs it holds are
            # resolved now, so a missing one is a definition error here.
            self.resolve_refs(node)
            out.append(f"{ind}{var} = {self.fallback(outer or node, var, segments)}")
            return var
        if node.kind in _WALKED:
            out.append(f"{ind}{var} = {self.fallback(outer or node, var, segments)}")
            return var
        if node.kind in {"applied", "not", "conditional"} and outer is None:
            return self.in_place(node, var, segments, out, ind, depth)
        if node.kind == "any":
            out.append(f"{ind}try: _any({var})")
            out.append(f"{ind}except (_NotJson, RecursionError): {var} = {self.fallback(node, var, segments)}")
            return var
        if node.kind == "nullable":
            result = self.name("r")
            out.append(f"{ind}if {var} is None: {result} = None")
            if not self.explains_own_type(node.schema, depth):
                # The inner check would explain a wrong type as its own; "X or null" is the right word.
                admits = f"{self.const(node.schema)}._admits({var}, _C)"
                out.append(f"{ind}elif not {admits}: {result} = {self.fallback(outer or node, var, segments)}")
            out.append(f"{ind}else:")
            inner = self.emit(node.schema, var, segments, out, ind + "    ", depth, outer=outer or node)
            out.append(f"{ind}    {result} = {inner}")
            return result
        if self.inlines(node, depth):
            kind = "list" if node.kind == "array" else "dict"
            result = self.name("r")
            fallback = self.fallback(outer or node, var, segments)
            out.append(f"{ind}if type({var}) is not {kind}: {result} = {fallback}")
            out.append(f"{ind}else:")
            if node.kind == "array":
                inner = self.array(node, var, segments, out, ind + "    ", depth + 1)
            elif node.kind == "object":
                inner = self.object(node, var, segments, out, ind + "    ", depth + 1)
            else:
                assert node.kind == "record"  # inlines() says so; narrows for mypy
                inner = self.record(node, var, segments, out, ind + "    ", depth + 1)
            out.append(f"{ind}    {result} = {inner}")
            return result
        result = self.name("r")
        out.append(f"{ind}{result} = {self.function(node)}({var}, {self.path(segments)}, I)")
        return result

    def size(
        self, low: int | None, high: int | None, var: str, segments: list[str], out: list[str], ind: str, unit: str
    ) -> None:
        tests = []
        if low is not None:
            tests.append(f"len({var}) < {low}")
        if high is not None:
            tests.append(f"len({var}) > {high}")
        if tests:
            out.append(
                f"{ind}if {' or '.join(tests)}: _size(I, {self.path(segments)}, len({var}), "
                f"low={low}, high={high}, unit={unit!r})"
            )

    def array(self, node: ArrayNode, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        self.size(node.min_items, node.max_items, var, segments, out, ind, "item")
        if not node.unique_items:
            return self.items(node, var, segments, out, ind, depth)
        # As the walk: uniqueness is checked on the items as given, once none had an issue.
        before = self.name("b")
        out.append(f"{ind}{before} = len(I)")
        result = self.items(node, var, segments, out, ind, depth)
        out.append(f"{ind}if len(I) == {before}: _unique({var}, {self.path(segments)}, I)")
        return result

    def items(self, node: ArrayNode, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        result, index, item = self.name("r"), self.name("j"), self.name("i")
        test = self.test(node.items, item)
        if test is not None:
            # Leaf items are never rebound when they pass: check them all, then copy the list.
            # If one fails, the walk goes over each item that fails the test again, in order, so
            # the issues come in order; past ISSUES_MAX of them, _capped stops the check.
            leaf = self.const(node.items)
            out.append(f"{ind}{result} = None")
            out.append(f"{ind}for {item} in {var}:")
            out.append(f"{ind}    if not ({test}): break")
            out.append(f"{ind}else:")
            out.append(f"{ind}    {result} = {var}.copy()")
            out.append(f"{ind}if {result} is None:")
            out.append(f"{ind}    c = _C")
            walked = f"_capped({leaf}._collect({item}, {self.path([*segments, index])}, I, c), I)"
            out.append(
                f"{ind}    {result} = [{item} if ({test}) else {walked} for {index}, {item} in enumerate({var})]"
            )
            return result
        # An item's index is the length of the result so far: no counter on the valid path,
        # where the issues list is empty (its truthiness is the one test an item pays).
        out.append(f"{ind}{result} = []")
        out.append(f"{ind}for {item} in {var}:")
        parsed = self.emit(node.items, item, [*segments, f"len({result})"], out, ind + "    ", depth)
        out.append(f"{ind}    {result}.append({parsed})")
        out.append(f"{ind}    if I and len(I) > {ISSUES_MAX}: _stop(I)")
        return result

    def object(self, node: ObjectNode, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        # *count* tracks how many keys are fields; any other key is an extra, and only
        # then does the walk run over the keys (a len() test, not a set test, per object).
        self.budget -= len(node.field_items)
        self.inlined += len(node.field_items)
        count = self.name("n")
        required = sum(1 for _, sub in node.field_items if sub.kind != "optional")
        out.append(f"{ind}{count} = {required}")
        values: dict[str, str] = {}
        absent: list[tuple[str, str]] = []
        for name, sub in node.field_items:
            value = self.name("t")
            where = [*segments, repr(name)]
            if sub.kind == "optional":
                # An optional field is often absent, and a raised KeyError is dear: get() instead.
                out.append(f"{ind}{value} = {var}.get({name!r}, _M)")
                out.append(f"{ind}if {value} is _M:")
                if sub.default is MISSING:
                    absent.append((name, value))
                    out.append(f"{ind}    pass")
                elif isinstance(sub.default, list | dict):
                    out.append(f"{ind}    {value} = _copy({self.const(sub.default)})")
                else:
                    out.append(f"{ind}    {value} = {self.const(sub.default)}")
            else:
                # A required field is nearly always there: a subscript in a try costs nothing then.
                # A named constant, not a literal: what a field expects may be a thousand characters, and many
                # fields may expect the same (each a $ref to one enum).
                detail = f"is required ({sub.expected(self.context)})"
                said = self.equal_const(("text", detail), detail)
                out.append(f"{ind}try: {value} = {var}[{name!r}]")
                out.append(f"{ind}except KeyError:")
                out.append(f"{ind}    I.append(_Issue({self.path(where)}, 'missing', {said}))")
                out.append(f"{ind}    {value} = _M; {count} -= 1")
            out.append(f"{ind}else:")
            if sub.kind == "optional":
                out.append(f"{ind}    {count} += 1")
            parsed = self.emit(sub, value, where, out, ind + "    ", depth)
            if parsed != value:
                out.append(f"{ind}    {value} = {parsed}")
            values[name] = value
        result = self.name("r")
        pairs = ", ".join(f"{name!r}: {values[name]}" for name, _ in node.field_items)
        out.append(f"{ind}{result} = {{{pairs}}}")
        for name, value in absent:
            out.append(f"{ind}if {value} is _M: del {result}[{name!r}]")
        # The key count is checked by the walk over the keys, which runs on any extra key anyway.
        tests = [f"len({var}) != {count}"]
        if node.min_properties is not None:
            tests.append(f"len({var}) < {node.min_properties}")
        if node.max_properties is not None:
            tests.append(f"len({var}) > {node.max_properties}")
        if node.extra == "ignore" and len(tests) == 1:
            # Other keys are dropped: only one that is not plain text has anything to say (a part of an imported
            # schema applied in place, an if or a then, ignores the keys the rest of its schema checks: row 1c).
            tests[0] += f" and not _plain_keys({var})"
        out.append(f"{ind}if {' or '.join(tests)}:")
        out.append(f"{ind}    {self.const(node)}._extras({var}, {self.path(segments)}, I, _cx(I), {result})")
        return result

    def record(self, node: RecordNode, var: str, segments: list[str], out: list[str], ind: str, depth: int) -> str:
        result, key, item = self.name("r"), self.name("k"), self.name("x")
        self.size(node.min_properties, node.max_properties, var, segments, out, ind, "property")
        out.append(f"{ind}{result} = {{}}")
        out.append(f"{ind}for {key}, {item} in {var}.items():")
        out.append(f"{ind}    if not ({_IS_STRING.format(v=key)}) and _key_issue({key}, {self.path(segments)}, I):")
        out.append(f"{ind}        if len(I) > {ISSUES_MAX}: _stop(I)")
        out.append(f"{ind}        continue")
        # The key's plain text in paths (built only when an issue is found): see _shared.path_key.
        parsed = self.emit(node.values, item, [*segments, f"_key({key})"], out, ind + "    ", depth)
        out.append(f"{ind}    {result}[{key}] = {parsed}")
        out.append(f"{ind}    if I and len(I) > {ISSUES_MAX}: _stop(I)")
        return result


@frozen
class Validator:
    """A compiled schema. :meth:`run` checks a value in one pass, collecting every issue."""

    schema: SchemaNode
    refs: Mapping[str, SchemaNode]
    entry: Callable[[Any, Path, list[Issue]], Any]
    source: str

    def check(self, value: Any) -> tuple[Any, list[Issue]]:
        """Parse *value* in one pass: ``(parsed, [])``, or ``(None, issues)``. Raises nothing, whatever *value* is."""
        return _guarded(self.entry, value)

    def run(self, value: Any) -> tuple[bool, Any, tuple[Issue, ...]]:
        """``(True, parsed, ())`` if *value* matches, else ``(False, None, issues)``."""
        result, issues = _guarded(self.entry, value)
        return not issues, result, tuple(issues)

    def walk(self, value: Any) -> tuple[bool, Any, tuple[Issue, ...]]:
        """The same as :meth:`run` through the uncompiled walk: the reference the compiled code must match."""
        context = Context(self.refs)
        result, issues = _guarded(lambda v, p, i: self.schema._collect(v, p, i, context), value)
        return not issues, result, tuple(issues)


def _guarded(walk: Callable[[Any, Path, list[Issue]], Any], value: Any) -> tuple[Any, list[Issue]]:
    """Run *walk* over *value*, turning what the value's own code may raise into an issue."""
    issues: list[Issue] = []
    try:
        result = walk(value, (), issues)
    except TooManyIssues as exc:  # checking stopped: the first ISSUES_MAX + 1 issues stand for the rest
        return None, exc.issues[: ISSUES_MAX + 1]
    except Exception as exc:  # see raised_issue
        return None, [raised_issue(exc)]
    return (None, issues) if issues else (result, issues)


def _code(source: str) -> CodeType:
    """Byte-compile one generated function; one of at most ``_CACHED_SOURCE_MAX`` characters once."""
    if len(source) > _CACHED_SOURCE_MAX:
        return compile(source, "<hermes schema>", "exec")
    return _cached_code(source)


@functools.lru_cache(maxsize=1024)
def _cached_code(source: str) -> CodeType:
    """Byte-compile generated source once: schemas of the same shape generate the same source."""
    return compile(source, "<hermes schema>", "exec")


def compile_schema(schema: SchemaNode, refs: Mapping[str, SchemaNode]) -> Validator:
    """Compile *schema*, resolving ``s.ref`` names through *refs*.

    Raises:
        InvalidDefinitionError: a ``ref`` names a schema *refs* does not have.
    """
    gen = _Codegen(schema, refs)
    name = gen.function(schema)
    entry = _deferred(gen, name) if gen.sources else gen.namespace[name]
    return Validator(schema=schema, refs=refs, entry=entry, source="\n\n".join(gen.sources))


# Held while a validator's generated functions are byte-compiled: each validator's are compiled once,
# by the first of the threads that call it together.
_COMPILING = _thread.allocate_lock()  # threading.Lock, without importing threading (start-up)


def _pending(v: Any, p: Path, issues: list[Issue]) -> Any:
    """The code of an entry not byte-compiled yet, run with its generated code's namespace as globals (_deferred)."""
    first: Callable[[Any, Path, list[Issue]], Any] = globals()["_first"]
    return first(v, p, issues)


def _deferred(gen: _Codegen, name: str) -> Callable[[Any, Path, list[Issue]], Any]:
    """The entry *name* of what *gen* wrote, its functions byte-compiled at its first call.

    Writing the code is done now, where the schema is defined: a schema the
    writer cannot handle (nested too deeply, a ref missing) is refused there.
    Byte-compiling it was most of what defining a tool cost, paid by every
    command that loads the tools and calls one or none (``hermesos tools
    list``: docs/performance.md, start-up), so the first call does it. The
    entry keeps its identity: its code becomes the compiled function's, so
    what holds it (a runtime's table, ``CLOSED_ENTRIES``) then calls the
    compiled code with no step between, and no later call pays again. Should
    compiling fail (``compile`` itself recurses, and the call may come deep in
    a stack), that call is checked by the walk, which finds the same issues,
    and the next call compiles.
    """
    namespace = gen.namespace
    entry = types.FunctionType(_pending.__code__, namespace, name)
    walk = gen.walker(gen.resolve(gen.root))
    sources = gen.sources

    def first(v: Any, p: Path, issues: list[Issue]) -> Any:
        with _COMPILING:
            if entry.__code__ is _pending.__code__:
                try:
                    codes = [_code(source) for source in sources]  # one function at a time: see _SOURCE_MAX
                except Exception:  # compile() recursed too deep, or ran out of memory: this call is walked
                    codes = []
                for code in codes:
                    exec(code, namespace)  # noqa: S102 - our own generated code
                if codes:
                    entry.__code__ = namespace[name].__code__
                    namespace[name] = entry
                    sources.clear()  # Validator.source holds the text
        return (walk if entry.__code__ is _pending.__code__ else entry)(v, p, issues)

    namespace["_first"] = first
    return entry


#: The package's one cache: ``id(schema)`` to ``(schema, check, validator)`` for schemas that name
#: no other, ``check(value, path, issues)`` being the validator's straight-line check. Written only by
#: :func:`closed_validator`; read by ``Schema.parse`` on every call (an entry holds its schema, so
#: the id cannot be reused while it exists).
CLOSED_ENTRIES: dict[int, tuple[SchemaNode, Callable[[Any, Path, list[Issue]], Any], Validator]] = {}
# Bounded: schemas made in a loop must not pin memory; a schema no longer cached is compiled
# again (cheaply: the byte-code is shared).
_CLOSED_MAX = 4096


def closed_validator(schema: SchemaNode) -> Validator:
    """The validator of a schema that names no other, compiled once (the one cache of the package).

    Raises:
        InvalidDefinitionError: the schema holds an ``s.ref``, or a default that
            does not match its field's schema (naming the field).
    """
    hit = CLOSED_ENTRIES.get(id(schema))
    if hit is not None:
        return hit[2]
    problem = default_problem(schema, {})
    if problem is not None:
        where, issue = problem
        raise InvalidDefinitionError(
            "s.optional()", "default", f'of field "{where}" does not match its schema: {issue.message("default")}'
        )
    validator = compile_schema(schema, {})
    if len(CLOSED_ENTRIES) >= _CLOSED_MAX:
        # Emptied, not trimmed: deleting a dict's oldest entry one at a time makes finding the
        # next oldest ever slower (bench set-up: define_tool x10,000). Tools keep their own.
        CLOSED_ENTRIES.clear()
    CLOSED_ENTRIES[id(schema)] = (schema, validator.entry, validator)
    return validator


def default_problem(schema: SchemaNode, refs: Mapping[str, SchemaNode] | None) -> tuple[str, Issue] | None:
    """The first optional field of *schema* whose default does not match, as (field path, issue), or None.

    A default whose schema names no other was checked by ``s.optional()``; one
    under a ref is checked now against *refs*, or skipped when *refs* is None
    (a tool's schemas before a runtime resolves them).

    Raises:
        InvalidDefinitionError: a ref under a default names a schema *refs* does not have.
    """
    for where, node in _defaults(schema):
        issue = node.default_issue
        if issue is None and refs is not None and node.schema.has_refs:
            # Checked once, by the walk (what is written resolves the refs): nothing compiled (start-up).
            ok, _, issues = compile_schema(node.schema, refs).walk(node.default)
            issue = None if ok else issues[0]
        if issue is not None:
            return where, issue
    return None


def _defaults(schema: SchemaNode, prefix: str = "") -> Iterator[tuple[str, OptionalNode]]:
    """Every optional field of *schema* that has a default, with its field path (``options.mode``).

    An array's items add ``[]`` to the path and a record's values ``{}``; a ref
    is not followed (each named schema is looked at under its own name).
    """
    node = as_node(schema)
    if node.kind == "object":
        for name, sub in node.field_items:
            where = f"{prefix}.{name}" if prefix else name
            if sub.kind == "optional" and sub.default is not MISSING:
                yield where, sub
            yield from _defaults(sub, where)
    elif node.kind == "array":
        yield from _defaults(node.items, prefix + "[]")
    elif node.kind == "tuple":
        for index, item in enumerate(node.items):
            yield from _defaults(item, f"{prefix}[{index}]")
    elif node.kind == "record":
        yield from _defaults(node.values, prefix + "{}")
    else:
        for child in node.children():
            yield from _defaults(child, prefix)
