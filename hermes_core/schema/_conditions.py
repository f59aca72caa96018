"""The keywords of an imported document that apply to a value in place: ``not``, ``if``/``then``/``else``, the rest.

JSON Schema applies some keywords to the value a schema describes, beside
its type's: ``not``, ``if``/``then``/``else``, ``dependentRequired``,
``dependentSchemas``, ``propertyNames`` and ``contains``
(``minContains``/``maxContains``). Each is a *check* here: a node that says
nothing of the value's type, accepts a value of a type it does not apply to
(``contains`` any non-array), and adds its issues where it refuses one. An
:class:`AppliedSchema` holds the node of the rest of the schema object (its
``base``: the typed node, an enum, a union...) and those checks: ``base``
decides the parsed value and what is expected in words, then each check runs.

A check's messages say why, for a model to act on: ``"zip" is required (a
string), because "country" is "US"``, ``"b" is required when "a" is
present``, ``must not have "a"``, ``"Foo" is not an allowed property name:
must match the pattern "^[a-z]+$"``. The words of a condition are read from
the document once, at import (:func:`condition_words`), bounded in length.

These nodes import the base, the alternatives and the containers, and are
imported by the importer and the strict-mode check only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from hermes_core._base._frozen import frozen
from hermes_core._base._issues import ISSUES_MAX, Issue, TooManyIssues, shorten
from hermes_core._base._names import suggest
from hermes_core.schema._alternatives import NeverSchema
from hermes_core.schema._nodes import AnySchema, Branching, EnumSchema, Schema
from hermes_core.schema._shared import BAD, Context, Path, as_json, because, path_key

__all__ = [
    "WORDS_MAX",
    "AppliedSchema",
    "ConditionalSchema",
    "ContainsSchema",
    "DependentSchema",
    "NotSchema",
    "PropertyNamesSchema",
    "condition_words",
    "negation_words",
]

#: The most characters the words of one condition (``"country" is "US"``) may take in a message.
WORDS_MAX = 300
# How many parts of a condition are said before "..." (each property's test, each required name).
_PARTS_SAID = 4
# How many characters of one value a condition shows.
_VALUE_SAID = 60
# How many keys a propertyNames remembers as accepted, and the longest it remembers.
_PASSED_MAX = 1024
_PASSED_LENGTH = 128
_TYPE_WORDS = {
    "null": "null",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "number": "a number",
    "integer": "an integer",
    "string": "a string",
}


def _tried(schema: Schema, value: Any, path: Path, ctx: Context) -> tuple[Any, list[Issue]]:
    """*schema*'s check of *value* with issues of its own: (parsed, issues); one that stopped has failed."""
    found: list[Issue] = []
    try:
        parsed = schema._collect(value, path, found, ctx)
    except TooManyIssues:
        return BAD, found or [Issue(path, "invalid", "has too many problems")]
    return parsed, found


def _holds(schema: Schema, value: Any, path: Path, ctx: Context) -> bool:
    parsed, found = _tried(schema, value, path, ctx)
    return parsed is not BAD and not found


def _merged(first: Any, other: Any, value: Any) -> Any:
    """*first* with the keys *other* adds (a branch's defaults) when both are objects, as ``allOf`` merges."""
    if other is value or type(first) is not dict or type(other) is not dict:
        return first
    return {**other, **first}


def _capped(issues: list[Issue]) -> None:
    if len(issues) > ISSUES_MAX:
        raise TooManyIssues(issues)


@frozen
class AppliedSchema(Schema):
    """``base`` (the rest of a schema object) and the ``checks`` of its in-place keywords, each run on the value.

    ``base`` parses the value and says what is expected; a check that holds a
    schema for the value itself (``then``, a dependent schema) adds the keys
    its object adds (its defaults), as ``allOf`` does. A value of a type
    ``base`` refuses is not given to the checks: its one issue is its type.
    """

    kind = "applied"

    base: Schema
    checks: tuple[Schema, ...]
    description: str | None = None

    _holds_schemas = ("base", "checks")

    def _json(self) -> dict[str, Any]:
        out = self.base._json()
        for check in self.checks:
            out.update(check._json())
        return self._with_description(out)

    def expected(self, ctx: Context | None = None) -> str:
        if isinstance(self.base, AnySchema):
            said = [check.expected(ctx) for check in self.checks]
            return shorten(" and ".join(dict.fromkeys(word for word in said if word)), 1000) or "a JSON value"
        return self.base.expected(ctx)

    def _admits(self, value: Any, ctx: Context) -> bool:
        return self.base._admits(value, ctx)

    def _collect(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        before = len(issues)
        result = self.base._collect(value, path, issues, ctx)
        if result is BAD and len(issues) > before and not self.base._admits(value, ctx):
            return BAD  # of a type the schema refuses: the checks would say nothing more of use
        failed = result is BAD
        for check in self.checks:
            parsed = check._collect(value, path, issues, ctx)
            if parsed is BAD:
                failed = True
            elif not failed:
                result = _merged(result, parsed, value)
        return BAD if failed or len(issues) > before else result


class _InPlace(Branching):
    """The base of a keyword applied to the value in place, beside the node of its type.

    It says nothing of what type the value is (:meth:`expected` is empty) and
    admits every value: :meth:`_check` says what is wrong with it.
    """

    __slots__ = ()

    def expected(self, ctx: Context | None = None) -> str:
        return ""

    def _admits(self, value: Any, ctx: Context) -> bool:
        return True


@frozen
class NotSchema(_InPlace):
    """``not``: a value ``schema`` refuses.

    ``said`` is what the value must not do, to follow "must not" (``have
    "a"``, ``be null``), read from the document; None when the document's
    words are not understood: then what ``schema`` expects is said.
    """

    kind = "not"

    schema: Schema
    said: str | None = None
    description: str | None = None

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"not": self.schema._json()})

    def _words(self, ctx: Context | None) -> str:
        if self.said is not None:
            return self.said
        expected = self.schema.expected(ctx)
        if expected and expected not in ("any JSON value", "a JSON value"):
            return "be " + expected
        return 'match the schema of "not"'

    def expected(self, ctx: Context | None = None) -> str:
        said = self._words(ctx)
        return f"anything but {said[3:]}" if said.startswith("be ") else f"a value that does not {said}"

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if _holds(self.schema, value, path, ctx):
            issues.append(Issue(path, "invalid", f"must not {self._words(ctx)}"))
            return BAD
        return value


@frozen
class ConditionalSchema(_InPlace):
    """``if``/``then``/``else``: ``then`` applies to a value ``condition`` accepts, ``otherwise`` to any other.

    Either branch may be None (no ``then``, no ``else``): nothing more is
    asked then. ``because`` and ``unless`` are the condition and its negation
    in words (``"country" is "US"``): an issue a branch brings says which.
    """

    kind = "conditional"

    condition: Schema
    then: Schema | None
    otherwise: Schema | None
    because: str
    unless: str
    description: str | None = None

    def children(self) -> tuple[Schema, ...]:
        return tuple(node for node in (self.condition, self.then, self.otherwise) if node is not None)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"if": self.condition._json()}
        if self.then is not None:
            out["then"] = self.then._json()
        if self.otherwise is not None:
            out["else"] = self.otherwise._json()
        return self._with_description(out)

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        holds = _holds(self.condition, value, path, ctx)
        branch, reason = (self.then, self.because) if holds else (self.otherwise, self.unless)
        if branch is None:
            return value
        before = len(issues)
        try:
            return branch._collect(value, path, issues, ctx)
        finally:  # the issues it brought say why, even when there were so many that checking stopped
            because(issues, before, reason)


@frozen
class DependentSchema(_InPlace):
    """``dependentRequired`` and ``dependentSchemas`` (draft-07's ``dependencies``): what a present key brings.

    ``required`` maps a key to the keys that must be there with it;
    ``schemas`` maps a key to a schema the whole object must match when it
    is there. Values other than objects are not concerned.
    """

    kind = "dependent"

    required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    schemas: tuple[tuple[str, Schema], ...] = ()
    description: str | None = None

    def children(self) -> tuple[Schema, ...]:
        return tuple(schema for _, schema in self.schemas)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.required:
            out["dependentRequired"] = {key: list(names) for key, names in self.required}
        if self.schemas:
            out["dependentSchemas"] = {key: schema._json() for key, schema in self.schemas}
        return self._with_description(out)

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, dict):
            return value
        before = len(issues)
        for key, names in self.required:
            if key in value:
                for name in names:
                    if name not in value:
                        issues.append(Issue((*path, name), "missing", f"is required when {as_json(key)} is present"))
                        _capped(issues)
        result = value
        for key, schema in self.schemas:
            if key in value:
                start = len(issues)
                try:
                    parsed = schema._collect(value, path, issues, ctx)
                finally:
                    because(issues, start, f"{shorten(as_json(key), _VALUE_SAID)} is present")
                if parsed is not BAD and len(issues) == before:
                    result = _merged(result, parsed, value) if result is not value else parsed
        return BAD if len(issues) > before else result


@frozen
class PropertyNamesSchema(_InPlace):
    """``propertyNames``: every key of an object matches ``names`` (a schema for strings)."""

    kind = "property_names"

    names: Schema
    description: str | None = None
    # The keys ``names`` accepted, remembered: a tool's callers send the same field names call after call, and an
    # imported pattern runs on RE2, whose every search costs microseconds (bench_core, row 1c). Bounded in count
    # and length; a key is a plain str, and ``names`` a schema of strings, whose answer depends on the text alone.
    _passed: set[str] = field(default_factory=set, repr=False, compare=False)

    _holds_schemas = ("names",)

    def _json(self) -> dict[str, Any]:
        return self._with_description({"propertyNames": self.names._json()})

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, dict):
            return value
        before = len(issues)
        passed = self._passed
        for key in value:
            if type(key) is str and key in passed:
                continue
            if not isinstance(key, str):
                continue  # the object's own check says a key is not a string
            plain = path_key(key)
            parsed, found = _tried(self.names, plain, (*path, plain), ctx)
            if parsed is not BAD and not found:
                if len(passed) < _PASSED_MAX and len(plain) <= _PASSED_LENGTH:
                    passed.add(plain)
                continue
            issues.append(Issue((*path, plain), found[0].kind if found else "invalid", self._refusal(plain, found)))
            _capped(issues)
        return BAD if len(issues) > before else value

    def _refusal(self, key: str, found: list[Issue]) -> str:
        names = self.names
        if isinstance(names, NeverSchema):
            return "is not allowed: this object takes no properties"
        detail = found[0].detail if found else "is not allowed"
        said = f"is not an allowed property name: {detail}"
        if isinstance(names, EnumSchema):
            close = suggest(key, [name for name in names.values if isinstance(name, str)], limit=1)
            if close:
                said = f"is not an allowed property name; did you mean {as_json(close[0])}?"
        return said


@frozen
class ContainsSchema(_InPlace):
    """``contains``, ``minContains``, ``maxContains``: how many items of an array match ``schema``.

    At least ``minimum`` (1 unless ``minContains`` says) and at most
    ``maximum`` items match; values other than arrays are not concerned.
    """

    kind = "contains"

    schema: Schema
    minimum: int = 1
    maximum: int | None = None
    description: str | None = None

    _holds_schemas = ("schema",)

    def _json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"contains": self.schema._json()}
        if self.minimum != 1:
            out["minContains"] = self.minimum
        if self.maximum is not None:
            out["maxContains"] = self.maximum
        return self._with_description(out)

    def _check(self, value: Any, path: Path, issues: list[Issue], ctx: Context) -> Any:
        if not isinstance(value, list) or (self.minimum == 0 and self.maximum is None):
            return value
        count = 0
        first: Issue | None = None
        for index, item in enumerate(value):
            parsed, found = _tried(self.schema, item, (*path, index), ctx)
            if parsed is not BAD and not found:
                count += 1
                if self.maximum is None and count >= self.minimum:
                    return value  # enough: the rest cannot change the answer
                if self.maximum is not None and count > self.maximum:
                    break
            elif first is None and found:
                first = found[0]
        what = self.schema.expected(ctx) or "matching its schema"
        if count < self.minimum:
            many = "1 item" if self.minimum == 1 else f"{self.minimum} items"
            detail = f"must contain at least {many} that {'is' if self.minimum == 1 else 'are'} {what}, got {count}"
            if count == 0 and first is not None:
                detail += f"; none is: {first.message()}"
            issues.append(Issue(path, "too_small", detail))
            return BAD
        if self.maximum is not None and count > self.maximum:
            many = "1 item" if self.maximum == 1 else f"{self.maximum} items"
            verb = "is" if self.maximum == 1 else "are"
            issues.append(Issue(path, "too_big", f"must contain at most {many} that {verb} {what}, got more"))
            return BAD
        return value


# -- the words of a condition, read from the document --------------------------------------------


def _value_words(doc: Any) -> tuple[str, str] | None:
    """What a property's schema in a condition asks, and its negation (``'is "US"'``, ``'is not "US"'``), or None."""
    if not isinstance(doc, Mapping):
        return None
    if "const" in doc:
        said = shorten(as_json(doc["const"]), _VALUE_SAID)
        return f"is {said}", f"is not {said}"
    values = doc.get("enum")
    if isinstance(values, list) and values:
        said = ", ".join(shorten(as_json(value), _VALUE_SAID) for value in values[:_PARTS_SAID])
        said += ", ..." if len(values) > _PARTS_SAID else ""
        return (f"is one of {said}", f"is none of {said}") if len(values) > 1 else (f"is {said}", f"is not {said}")
    kind = doc.get("type")
    if isinstance(kind, str) and kind in _TYPE_WORDS and len(doc.keys() - {"type", "description", "title"}) == 0:
        return f"is {_TYPE_WORDS[kind]}", f"is not {_TYPE_WORDS[kind]}"
    for keyword, more, less in (("minimum", "at least", "less than"), ("maximum", "at most", "more than")):
        bound = doc.get(keyword)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and len(doc.keys() - {keyword, "type"}) == 0:
            return f"is {more} {as_json(bound)}", f"is {less} {as_json(bound)}"
    return None


def _parts(doc: Mapping[str, Any]) -> list[tuple[str, str]] | None:
    """The tests of a condition on an object's properties, each with its negation; None if it asks anything else."""
    if doc.keys() - {"properties", "required", "type", "description", "title", "$comment"}:
        return None
    if doc.get("type", "object") != "object":
        return None
    properties = doc.get("properties", {})
    required = doc.get("required", [])
    if not isinstance(properties, Mapping) or not isinstance(required, list):
        return None
    needed = {name for name in required if isinstance(name, str)}
    parts: list[tuple[str, str]] = []
    for name, sub in properties.items():
        words = _value_words(sub)
        if words is None:
            return None
        quoted = shorten(as_json(name), _VALUE_SAID)
        if name in needed:
            parts.append((f"{quoted} {words[0]}", f"{quoted} is not given or {words[1]}"))
        else:
            parts.append((f"{quoted}, if given, {words[0]}", f"{quoted} is given and {words[1]}"))
    for name in required:
        if isinstance(name, str) and name not in properties:
            quoted = shorten(as_json(name), _VALUE_SAID)
            parts.append((f"{quoted} is given", f"{quoted} is not given"))
    return parts or None


def _joined(parts: list[str], joint: str) -> str:
    said = joint.join(parts[:_PARTS_SAID]) + (", ..." if len(parts) > _PARTS_SAID else "")
    return shorten(said, WORDS_MAX)


def condition_words(doc: Any) -> tuple[str, str]:
    """An ``if`` schema as a condition in words, and its negation: ``('"country" is "US"', '"country" is not ...')``.

    Understood: tests of an object's properties (``const``, ``enum``, a type,
    a bound) and ``required``; a value's ``const``, ``enum`` or type. Anything
    else is said as matching, or not, the schema of ``if``.
    """
    if isinstance(doc, Mapping):
        parts = _parts(doc)
        if parts is not None:
            if len(parts) == 1:
                return shorten(parts[0][0], WORDS_MAX), shorten(parts[0][1], WORDS_MAX)
            positive = _joined([part for part, _ in parts], " and ")
            return positive, f"not all of these hold: {positive}"
        words = _value_words(doc)
        if words is not None:
            return f"the value {words[0]}", f"the value {words[1]}"
    return 'the value matches the schema of "if"', 'the value does not match the schema of "if"'


def negation_words(doc: Any) -> str | None:
    """What the schema of ``not`` refuses, to follow "must not": ``have "a"``, ``be null``; None if not understood."""
    if doc is True or (isinstance(doc, Mapping) and not doc):
        return "be here (no value is allowed)"
    if not isinstance(doc, Mapping):
        return None
    required = doc.get("required")
    if (
        isinstance(required, list)
        and required
        and all(isinstance(name, str) for name in required)
        and not doc.keys() - {"required", "type", "description", "title", "$comment"}
        and doc.get("type", "object") == "object"
    ):
        names = [shorten(as_json(name), _VALUE_SAID) for name in required]
        return "have " + (names[0] if len(names) == 1 else _joined(names, " and ") + " together")
    parts = _parts(doc)
    if parts is not None:
        return "be such that " + _joined([part for part, _ in parts], " and ")
    words = _value_words(doc)
    if words is not None and words[0].startswith("is "):
        return "be " + words[0][3:]
    return None
