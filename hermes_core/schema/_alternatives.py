"""The nodes that stand for another node or choose among several: optional, nullable, ref, link, union, one-of, all-of.

Also the schema JSON Schema's ``false`` imports to (never) and the node that
wraps an imported document (with what of it is not checked). None of them is a
container: they check a value by handing it to the nodes they hold. They import
the base (``_nodes``) and nothing above it; the containers import them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from typing import Any, ClassVar

from hermes_core._base._frozen import frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, TooManyIssues, shorten
from hermes_core.schema._nodes import Branching, Schema
from hermes_core.schema._shared import (
    BAD,
    MISSING,
    Context,
    Path,
    copy_json,
    type_name,
)

__all__ = [
    "AllOfSchema",
    "ImportedSchema",
    "LinkSchema",
    "NeverSchema",
    "NullableSchema",
    "OneOfSchema",
    "OptionalSchema",
    "RefSchema",
    "TypelessSchema",
    "UnionSchema",
    "Unsupported",
]


@frozen
class OptionalSchema(Schema):
    """Marks an object field that may be absent; ``default``, if given, is filled in when it is.

    Only meaningful as a value in ``s.object({...})``.
    """

    kind = "optional"

    schema: Schema
    default: Any = MISSING
    description: str | None = None
    #: Why the default does not match ``schema``, found by ``s.optional()``; raised by whatever
    #: uses the schema first (``define_tool`` names the tool and field, ``parse`` the field).
    default_issue: Issue | None = field(default=None, repr=False, compare=False)

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        out = self.schema._json()
        if self.default is not MISSING:
            out["default"] = copy_json(self.default)  # the caller may change the exported schema
        return self._with_description(out)

    def expected(self, ctx: Context | None = None) -> str:
        return self.schema.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.schema._collect(value, path, issues, ctx)


@frozen
class _Alternatives(Branching):
    """Shared by union and one-of: ``options``, each tried on the value with its own issues list."""

    options: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("options",)
    _keyword: ClassVar[str] = ""  # "anyOf" or "oneOf"

    def _json(self) -> dict[str, Any]:
        return self._with_description({self._keyword: [option._json() for option in self.options]})

    def _admits(self, value: Any, ctx: Context) -> bool:
        return any(option._admits(value, ctx) for option in self.options)

    def _unmatched(self, best: list[Issue] | None, value: Any, path: Path, issues: list[Issue], ctx: Context) -> None:
        """Why no option accepted *value*: the closest option's own issues, else the types that were wanted."""
        if best is None:
            issues.append(Issue(path, "union", f"must be {_either(self.options, ctx)}, got {type_name(value)}"))
            return
        issues.extend(best)
        if len(issues) > ISSUES_MAX:
            raise TooManyIssues(issues)


@frozen
class UnionSchema(_Alternatives):
    """A value matching at least one of ``options``; the first option that matches parses it."""

    kind = "union"

    _keyword = "anyOf"

    def expected(self, ctx: Context | None = None) -> str:
        return _either(self.options, ctx)

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        # The first option that accepts wins. When none does, explain the option
        # whose type fits the value best: its own issues say more than "no match".
        best: list[Issue] | None = None
        for option in self.options:
            # Each option with its own issues; one that stopped (too many issues) failed, its first
            # issues in found. Tried here, not in a helper: a frame fewer for each level of a deep value.
            found: list[Issue] = []
            try:
                parsed = option._collect(value, path, found, ctx)
            except TooManyIssues:
                parsed = BAD
            if parsed is not BAD:
                return parsed
            best = _closer(best, option, found, value, ctx)
        self._unmatched(best, value, path, issues, ctx)
        return BAD


def _either(options: tuple[Schema, ...], ctx: Context | None) -> str:
    """What a value matching one of *options* is, in words: ``a string or an integer``."""
    return _words(" or ", (option.expected(ctx) for option in options))


# The longest description of alternatives, in characters. Alternatives that hold alternatives
# that say the same in other orders would double it at each level; no message needs more.
_WORDS_MAX = 1000


def _words(joint: str, said: Iterator[str]) -> str:
    """Each different description in *said*, once, joined by *joint*: at most ``_WORDS_MAX`` characters."""
    return shorten(joint.join(dict.fromkeys(said)), _WORDS_MAX)


def _closer(
    best: list[Issue] | None, option: Schema, found: list[Issue], value: Any, ctx: Context
) -> list[Issue] | None:
    """The issues that explain a value no option accepted: those of the option of its type with the fewest."""
    if option._admits(value, ctx) and (best is None or len(found) < len(best)):
        return found
    return best


@frozen
class TypelessSchema(UnionSchema):
    """A schema without ``type`` imported from JSON Schema: any value, checked by the keywords of its type.

    ``options`` holds one node per JSON type; JSON Schema's keywords each apply
    to values of one type only, so ``{"minimum": 1}`` accepts any string.
    """

    kind = "typeless"

    def expected(self, ctx: Context | None = None) -> str:
        return "any JSON value"

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        # One option per JSON type, so at most one admits the value: it alone checks it (no option is tried and
        # explained in vain, and nothing branches, so nothing is kept in the check's tried).
        for option in self.options:
            if option._admits(value, ctx):
                return option._collect(value, path, issues, ctx)
        self._unmatched(None, value, path, issues, ctx)
        return BAD


@frozen
class NullableSchema(Schema):
    """``schema``, or ``null``."""

    kind = "nullable"

    schema: Schema
    description: str | None = None

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"anyOf": [self.schema._json(), {"type": "null"}]})

    def expected(self, ctx: Context | None = None) -> str:
        return f"{self.schema.expected(ctx)} or null"

    def _admits(self, value: Any, ctx: Context) -> bool:
        return value is None or self.schema._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if value is None:
            return None
        if self.schema._admits(value, ctx):
            return self.schema._collect(value, path, issues, ctx)
        issues.append(Issue(path, "type", f"must be {self.expected(ctx)}, got {type_name(value)}"))
        return BAD


@frozen
class RefSchema(Schema):
    """A named schema, resolved by the ``Runtime`` from the schemas it was given."""

    kind = "ref"

    name: str
    description: str | None = None

    def ref_names(self) -> Iterator[str]:
        yield self.name

    def _json(self) -> dict[str, Any]:
        return self._with_description({"$ref": f"#/$defs/{self.name}"})

    def expected(self, ctx: Context | None = None) -> str:
        if ctx is not None and self.name in ctx.refs:
            target: Schema = ctx.refs[self.name]
            said: str = _asked(ctx, target, None, lambda: target.expected(ctx))
            return said
        return f'a "{self.name}"'

    def _admits(self, value: Any, ctx: Context) -> bool:
        target: Schema = ctx.refs[self.name]
        admits: bool = _asked(ctx, target, type(value), lambda: target._admits(value, ctx))
        return admits

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return ctx.refs[self.name]._collect(value, path, issues, ctx)


# -- the nodes JSON Schema import adds (see _import.py): never, all-of and one-of are checked by
# their walk, not compiled inline; link and imported are followed --


@frozen
class NeverSchema(Schema):
    """No value: JSON Schema's ``false`` (a property that must be absent, an array that takes no more items)."""

    kind = "never"

    description: str | None = None

    def _json(self) -> dict[str, Any]:
        return self._with_description({"not": {}})

    _expects = "nothing"

    def _admits(self, value: Any, ctx: Context) -> bool:
        return False

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        issues.append(Issue(path, "unexpected", "is not allowed here"))
        return BAD


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


@frozen
class AllOfSchema(Branching):
    """A value matching every one of ``parts`` (JSON Schema's ``allOf``); every part's issues are reported.

    The parsed value is the first part's, with the keys every other part
    adds to an object (its defaults) merged in.
    """

    kind = "all_of"

    parts: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("parts",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"allOf": [part._json() for part in self.parts]})

    def expected(self, ctx: Context | None = None) -> str:
        return _words(" and ", (part.expected(ctx) for part in self.parts))

    def _admits(self, value: Any, ctx: Context) -> bool:
        return all(part._admits(value, ctx) for part in self.parts)

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        before = len(issues)
        results = []
        for part in self.parts:  # a loop, not a comprehension: one frame fewer for each level of a deep value
            results.append(part._collect(value, path, issues, ctx))
        if len(issues) > before or any(result is BAD for result in results):
            return BAD
        first = results[0]
        if isinstance(first, dict):
            for other in results[1:]:
                if isinstance(other, dict):
                    first = {**other, **first}
        return first


@frozen
class OneOfSchema(_Alternatives):
    """A value matching exactly one of ``options`` (JSON Schema's ``oneOf``)."""

    kind = "one_of"

    _keyword = "oneOf"

    def expected(self, ctx: Context | None = None) -> str:
        return "exactly one of: " + _words("; ", (option.expected(ctx) for option in self.options))

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        matched: list[int] = []
        parsed: Any = BAD
        best: list[Issue] | None = None
        for index, option in enumerate(self.options):
            found: list[Issue] = []  # as UnionSchema tries an option
            try:
                result = option._collect(value, path, found, ctx)
            except TooManyIssues:
                result = BAD
            if result is not BAD and not found:
                matched.append(index)
                parsed = result
            else:
                best = _closer(best, option, found, value, ctx)
        if len(matched) == 1:
            return parsed
        if matched:
            which = " and ".join(_ordinal(index + 1) for index in matched[:2])
            detail = f"must match exactly one of {len(self.options)} alternatives, but matches the {which}"
            issues.append(Issue(path, "union", detail))
        else:
            self._unmatched(best, value, path, issues, ctx)
        return BAD


# The links whose expected() or _admits() is being worked out: a schema that reaches itself only
# through unions would otherwise recurse forever (the value's own depth bounds _collect).
_LINKS_IN_PROGRESS: set[int] = set()


def _asked(ctx: Context, target: Schema, about: type | None, ask: Callable[[], Any]) -> Any:
    """``ask()``, what *target* says or admits, once per *ctx* for each target and *about*.

    *about* is None for what the target expects, the value's type for whether
    it admits the value (which only the value's type decides). The $refs of a
    document may share a target (each option of a ``$defs`` entry referring to
    the next): asked once per target, not once per path to it, describing a
    value no option admits takes time linear in the document, not exponential.
    """
    key = (id(target), about)  # never a Branching node's key, whose second item is an id
    answer = ctx.tried.get(key, MISSING)
    if answer is MISSING:
        answer = ctx.tried[key] = ask()
    return answer


@frozen
class LinkSchema(Schema):
    """A local ``$ref`` of an imported document: ``target`` is the node at ``pointer``, set once when linked.

    It holds no child (``target`` may reach back to it), so :meth:`Schema.walk`
    stops here; the checks go on through :meth:`follow`. ``dynamic``: it is a
    ``$dynamicRef``, resolved to ``pointer`` in the dynamic scope it was
    reached in (another scope may have another link to another target).
    """

    kind = "link"

    pointer: str
    description: str | None = None
    target: Schema | None = field(default=None, repr=False, compare=False)
    dynamic: bool = False

    def _json(self) -> dict[str, Any]:
        return self._with_description({"$ref": self.pointer})

    def follow(self) -> Schema:
        """The node this link stands for (``target``), which every check and walk goes on to.

        Raises:
            RuntimeError: the link was never linked (the importer links every node it returns).
        """
        if self.target is None:  # pragma: no cover - the importer links every node it returns
            raise RuntimeError(f"the $ref {self.pointer!r} was never linked")
        return self.target

    def expected(self, ctx: Context | None = None) -> str:
        asking = Context({}) if ctx is None else ctx  # where what each target said is kept (see _asked)
        said: str = self._once(asking, None, lambda target: target.expected(asking), "a value")
        return said

    def _admits(self, value: Any, ctx: Context) -> bool:
        admits: bool = self._once(ctx, type(value), lambda target: target._admits(value, ctx), True)
        return admits

    def _once(self, ctx: Context, about: type | None, ask: Callable[[Schema], Any], again: Any) -> Any:
        """*ask* of the target (once per *ctx*: see :func:`_asked`), or *again* when this link is being asked."""
        target = self.follow()
        if id(self) in _LINKS_IN_PROGRESS:  # it reached itself
            return again

        def asked() -> Any:
            _LINKS_IN_PROGRESS.add(id(self))
            try:
                return ask(target)
            finally:
                _LINKS_IN_PROGRESS.discard(id(self))

        return _asked(ctx, target, about, asked)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.follow()._collect(value, path, issues, ctx)


@frozen
class Unsupported:
    """A part of an imported JSON Schema document that is not checked.

    Attributes:
        pointer: where, as a JSON pointer into the document (``/properties/when``).
        keyword: the keyword (``if``, ``patternProperties``, ``default``...).
        reason: what is wrong and what was done instead, in words that follow
            "<keyword> at <pointer>" (``str()`` joins them).
    """

    pointer: str
    keyword: str
    reason: str

    def __str__(self) -> str:
        where = self.pointer or "the root"
        return f"{self.keyword} at {where} {self.reason}"


@frozen
class ImportedSchema(Schema):
    """A schema made by :func:`~hermes_core.schema.from_json_schema` from a JSON Schema document.

    It checks values as ``root`` does. :meth:`json_schema` returns the
    document it came from (a copy), so whatever was not converted still
    reaches the reader; objects that import closed also say
    ``additionalProperties: false`` there.

    Attributes:
        root: the converted schema.
        document: the JSON Schema exported (the original, with the closed objects marked).
        unsupported: what is not checked: keywords not supported, refs that
            cannot be followed, defaults that do not match their schema (not applied).
        open_by_silence: the JSON pointers of the objects that list
            ``properties``, leave ``additionalProperties`` unsaid and so allow
            any other key, as JSON Schema says: what a tool's input closes
            (imported again with ``closed=True``). Empty for a closed import.
        dialect: the dialect the document was read as (``"2020-12"`` or ``"draft-07"``).
        size: how many bytes the document takes written as compact JSON (what
            bounds what importing it may cost: see :func:`~hermes_core.schema.from_json_schema`).
        formats: whether ``format`` was asserted (``from_json_schema(formats=)``).
        metaschemas: the meta-schema the document's ``$schema`` named, by its
            URI, when the caller gave it (``from_json_schema(metaschemas=)``);
            empty otherwise. With *formats*, how to read the document again.
    """

    kind = "imported"

    root: Schema
    document: Any = field(repr=False)
    unsupported: tuple[Unsupported, ...] = ()
    description: str | None = None
    open_by_silence: tuple[str, ...] = ()
    dialect: str = "2020-12"
    size: int = 0
    formats: bool = True
    metaschemas: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    _holds_schemas = ("root",)

    def json_schema(self, *, defs: Mapping[str, Schema] | None = None) -> dict[str, Any]:
        return self._json()

    def _json(self) -> dict[str, Any]:
        exported = copy_json(self.document)
        return exported if isinstance(exported, dict) else ({} if exported else {"not": {}})

    def expected(self, ctx: Context | None = None) -> str:
        return self.root.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.root._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        return self.root._collect(value, path, issues, ctx)
