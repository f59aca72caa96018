"""JSON Schema documents as schema nodes: :func:`from_json_schema`.

A document becomes the same nodes the combinators build wherever it can (a
typed object with properties is an ``ObjectSchema``, a bounded string a
``StringSchema``), so an imported tool's errors read exactly like a native
one's. What only JSON Schema says (a schema without ``type``, ``allOf`` of
mixed parts, ``oneOf``, ``false``, local ``$ref``) gets a node of its own,
checked by its walk.

JSON Schema keywords apply only to values of their type: ``{"minimum": 1}``
accepts any string. A document without ``type`` therefore becomes a union
over the JSON types, the constrained ones carrying their keywords.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import Issue, TooManyIssues, shorten
from hermes_core.schema._alternatives import (
    AllOfSchema,
    ImportedSchema,
    LinkSchema,
    NeverSchema,
    OneOfSchema,
    OptionalSchema,
    TypelessSchema,
    UnionSchema,
    Unsupported,
)
from hermes_core.schema._conditions import (
    AppliedSchema,
    ConditionalSchema,
    ContainsSchema,
    DependentSchema,
    NotSchema,
    PropertyNamesSchema,
    condition_words,
    negation_words,
)
from hermes_core.schema._containers import (
    ArraySchema,
    ObjectSchema,
    PatternPropertiesSchema,
    PrefixArraySchema,
    RecordSchema,
    TupleSchema,
)
from hermes_core.schema._dynamic import Scopes
from hermes_core.schema._evaluation import Evaluation, UnevaluatedSchema
from hermes_core.schema._nodes import (
    AnySchema,
    BooleanSchema,
    EnumSchema,
    IntegerSchema,
    NullSchema,
    NumberSchema,
    Schema,
    StringSchema,
)
from hermes_core.schema._patterns import Searcher, foreign_pattern
from hermes_core.schema._shared import (
    BAD,
    FORMATS,
    MISSING,
    NESTING_MAX,
    Context,
    Extra,
    canonical_json,
    copy_json,
    in_float_range,
    json_size,
    self_ref,
    unicode_ok,
)

__all__ = [
    "DEFAULT_BYTES_MAX",
    "DIALECTS",
    "SCHEMA_BYTES_MAX",
    "SCHEMA_DEPTH_MAX",
    "WEIGHT_PER_BYTE",
    "from_json_schema",
]

#: How deep an imported schema may nest (each subschema a level: an array's items, an object's
#: property...). Converting, compiling and exporting a schema each recurse once a level, from however
#: deep a caller's stack (a plugin load, a mounted MCP server's listing): a bound that no real schema
#: comes near keeps all of them from the interpreter's recursion limit, wherever they are called from.
SCHEMA_DEPTH_MAX = 64

#: The most bytes a document may take written as JSON (see :func:`from_json_schema`'s *max_bytes*): 64 MiB,
#: four times the largest message a mounted MCP server may send by default, and thousands of times any real schema.
SCHEMA_BYTES_MAX = 64 * 1024 * 1024

#: What importing a document may hold, per byte of its JSON: about this many bytes of memory (nodes, the JSON
#: pointers that locate them, the text of each enum value) for each byte. A real schema takes a tenth of it; a
#: document that would take more repeats what holds its parts in each of them (property names of thousands of
#: characters, nested deep, in the pointer of every subschema below them) and is refused, not held.
WEIGHT_PER_BYTE = 256
# What one converted subschema weighs, besides its pointer: a node, its place in the nodes by pointer, the field
# or option that holds it (about what CPython takes for those).
_NODE_WEIGHT = 400
# Below this weight (16 MiB) no document is refused: a small one's pointers may be long for its size and cost nothing.
_WEIGHT_FLOOR = 16 * 1024 * 1024

#: The most bytes of JSON a default array or object may take and still be applied. Each call that leaves its field
#: out gets a copy (a handler may change what it is given), so a larger one would cost what it weighs on every
#: such call: it is listed in ``unsupported``, not applied, and stays in the exported schema.
DEFAULT_BYTES_MAX = 4096

#: The dialects understood, and the ``$schema`` URIs that name them.
DIALECTS = ("2020-12", "draft-07")
_SCHEMA_URIS = {
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
    "https://json-schema.org/draft/2019-09/schema": "2020-12",
    "http://json-schema.org/draft-07/schema": "draft-07",
    "http://json-schema.org/draft-06/schema": "draft-07",
    "http://json-schema.org/draft-04/schema": "draft-07",
}

# Keywords that assert something this module does not check: reported, never silently dropped.
_UNSUPPORTED = {
    "$recursiveRef": "2019-09's recursive refs; 2020-12 writes them $dynamicRef, which is supported",
}
# In a draft-07 document, what only 2020-12 defines: not a keyword of its dialect, and not checked.
_UNSUPPORTED_DRAFT7 = {
    **_UNSUPPORTED,
    "$dynamicRef": "a dynamic ref of 2020-12, which a document read as draft-07 cannot use",
}

# The vocabularies a meta-schema's $vocabulary may name (2020-12's, and 2019-09's), each with the keywords
# it defines that this module reads; core (refs, ids, anchors) is always in force, as JSON Schema says.
_VOCABULARY = "https://json-schema.org/draft/{}/vocab/{}"
_APPLICATOR = frozenset(
    {
        "prefixItems",
        "items",
        "additionalItems",
        "contains",
        "additionalProperties",
        "properties",
        "patternProperties",
        "dependentSchemas",
        "dependencies",
        "propertyNames",
        "if",
        "then",
        "else",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
    }
)
_UNEVALUATED = frozenset({"unevaluatedItems", "unevaluatedProperties"})
_VALIDATION = frozenset(
    {
        "type",
        "nullable",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
    }
)
_VOCABULARIES: dict[str, frozenset[str]] = {
    **{_VOCABULARY.format("2020-12", name): frozenset() for name in ("core", "meta-data", "content")},
    _VOCABULARY.format("2020-12", "applicator"): _APPLICATOR,
    _VOCABULARY.format("2020-12", "unevaluated"): _UNEVALUATED,
    _VOCABULARY.format("2020-12", "validation"): _VALIDATION,
    _VOCABULARY.format("2020-12", "format-annotation"): frozenset({"format"}),
    _VOCABULARY.format("2020-12", "format-assertion"): frozenset({"format"}),
    **{_VOCABULARY.format("2019-09", name): frozenset() for name in ("core", "meta-data", "content")},
    _VOCABULARY.format("2019-09", "applicator"): _APPLICATOR | _UNEVALUATED,
    _VOCABULARY.format("2019-09", "validation"): _VALIDATION,
    _VOCABULARY.format("2019-09", "format"): frozenset({"format"}),
}
_FORMAT_ASSERTION = _VOCABULARY.format("2020-12", "format-assertion")
# The keywords that apply a subschema to the value itself, beside its type's: their subschemas are parts of a
# schema, never closed on their own (a closed import closes the schema object that holds them instead).
_IN_PLACE = ("if", "then", "else", "not", "dependentSchemas")
# The keywords whose subschemas may evaluate properties of the value itself (see _evaluation).
_DECLARING = frozenset({"if", "then", "else", "dependentSchemas", "dependencies"})
# Beside an allOf, the keywords whose subschemas may evaluate properties too: its parts merged and closed by
# additionalProperties would refuse what those take, where the export says unevaluatedProperties.
_BESIDE_ALL_OF = frozenset({"anyOf", "oneOf", "$ref", "$dynamicRef"})

_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
_STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_ARRAY_KEYWORDS = ("items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems")
_OBJECT_KEYWORDS = (
    "properties",
    "patternProperties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
)
# What an allOf part may hold and still be merged into one object with the others.
_MERGEABLE = {"type", "properties", "required", "description", "title", "$comment", "examples"}


# The base URI of a document without $id: refs by relative URI resolve against it.
_ROOT_BASE = "https://hermesos.invalid/document.json"
# Where a schema holds schemas: a mapping of them, a list of them, or one.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)


def _split(target: str, base: str) -> tuple[str, str]:
    """The absolute URI and the fragment (unquoted) that the ref *target* names from *base*."""
    from urllib.parse import unquote, urljoin, urlsplit  # noqa: PLC0415 - a reference followed only: start-up

    uri, _, fragment = target.partition("#")
    uri = (uri if urlsplit(uri).scheme else urljoin(base, uri)) if uri else base
    return uri, unquote(fragment)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _child(node: Any, token: str) -> Any:
    """What JSON pointer *token* (escaped) names in *node*, or ``MISSING``."""
    key = token.replace("~1", "/").replace("~0", "~")
    if isinstance(node, Mapping):
        return node.get(key, MISSING)
    if isinstance(node, list) and key.isdigit() and int(key) < len(node):
        return node[int(key)]
    return MISSING


def _at(pointer: str, *tokens: str | int) -> str:
    return pointer + "".join("/" + _escape(str(token)) for token in tokens)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _too_deep(pointer: str) -> InvalidDefinitionError:
    return InvalidDefinitionError(
        "from_json_schema()",
        shorten(pointer, 80),
        f"nests schemas more than {SCHEMA_DEPTH_MAX} levels deep; no real schema nests so deep",
    )


class _Budget:
    """What one import holds, in bytes (about), and the most it may hold: see :data:`WEIGHT_PER_BYTE`."""

    __slots__ = ("allowance", "size", "weight")

    def __init__(self, size: int) -> None:
        self.size = size  # the document's, in bytes of compact JSON
        self.weight = 0  # what the import holds so far
        self.allowance = max(_WEIGHT_FLOOR, WEIGHT_PER_BYTE * size)

    def spend(self, weight: int) -> None:
        """Count *weight* more bytes held by the import; past its allowance, refuse the document."""
        self.weight += weight
        if self.weight > self.allowance:
            raise InvalidDefinitionError(
                "from_json_schema()",
                "document",
                f"would take more than {WEIGHT_PER_BYTE} bytes of memory for each of its {self.size:,} bytes once "
                "imported (the parts of a real schema are not repeated in each part below them, as property names "
                "of thousands of characters nested deep are in the pointer of every subschema); it is not imported",
            )


class _Reading(NamedTuple):
    """How a document is read: what its meta-schema's ``$vocabulary`` leaves out, and whether format is asserted."""

    ignored: frozenset[str] = frozenset()  # the keywords of the vocabularies not in force
    formats: bool = True  # format is asserted, for the formats FORMATS knows
    every_format: bool = False  # the format-assertion vocabulary is in force: a format not known is reported


def _reading(uri: str, meta: Any, formats: bool) -> _Reading:
    """How a document whose ``$schema`` names the meta-schema *meta* (at *uri*) is read.

    Raises:
        InvalidDefinitionError: *meta*'s ``$vocabulary`` is malformed, or requires a vocabulary not known here.
    """
    vocabulary = meta.get("$vocabulary", MISSING) if isinstance(meta, Mapping) else MISSING
    if vocabulary is MISSING:  # every vocabulary of its dialect, as JSON Schema says for one without $vocabulary
        return _Reading(formats=formats)
    where = f"$vocabulary of the meta-schema {shorten(uri, 80)!r}"
    if not isinstance(vocabulary, Mapping) or not all(
        isinstance(name, str) and isinstance(required, bool) for name, required in vocabulary.items()
    ):
        raise InvalidDefinitionError(
            "from_json_schema()", where, "must be an object of vocabulary URIs, each true (required) or false"
        )
    for name, required in vocabulary.items():
        if required and name not in _VOCABULARIES:
            raise InvalidDefinitionError(
                "from_json_schema()",
                where,
                f"requires the vocabulary {shorten(name, 120)!r}, which this import does not know; JSON Schema "
                "says a document whose meta-schema requires an unknown vocabulary must not be read. The known "
                "ones are 2020-12's and 2019-09's (" + _VOCABULARY.format("2020-12", "validation") + ", ...)",
            )
    used: set[str] = set()
    for name in vocabulary:
        used.update(_VOCABULARIES.get(name, ()))
    every = _APPLICATOR | _UNEVALUATED | _VALIDATION | {"format"}
    assertion = _FORMAT_ASSERTION in vocabulary
    return _Reading(frozenset(every - used), formats or assertion, assertion)


class _Importer:
    """One document's conversion: nodes by pointer, the links to fill in, what was not converted."""

    def __init__(
        self, document: Any, dialect: str, strict: bool, closed: bool, size: int, *, reading: _Reading | None = None
    ) -> None:
        self.document = document
        self.budget = _Budget(size)
        # The budget's, not a method of this object: Scopes holds it, and a cycle back to the importer would keep
        # every pointer it holds alive past the import, until the collector runs (nested_deep held 55 MB, not 16).
        self.spend = self.budget.spend
        self.draft7 = dialect == "draft-07"
        self.strict = strict
        self.closed = closed
        reading = reading if reading is not None else _Reading()
        # How the document is read (its vocabularies, formats=); the keywords of the vocabularies not in force.
        self.reading = reading
        self.ignored = reading.ignored
        self.depth = 0  # how many schemas hold the one being converted
        self.unsupported: list[Unsupported] = []
        self.partial: set[str] = set()  # the pointers of subschemas applied in place (see part())
        self.closing_late: set[str] = set()  # objects a closed import closes as unevaluatedProperties: false
        # The schema objects holding unevaluated*, with their pointers and dynamic scopes.
        self.holders: list[tuple[Any, str, int]] = []
        # What each schema object evaluates, where unevaluated* asks, by pointer and dynamic scope.
        self.table: dict[tuple[str, int], Evaluation] = {}
        # Converted subschemas, by pointer and dynamic scope (what $ref targets): one node each, in most documents.
        # By pointer alone in scope 0 (every node of most documents: a tuple key a node would cost a tenth of
        # an import's memory), by (pointer, scope) in the others.
        self.nodes: dict[str, Schema] = {}
        self.scoped: dict[tuple[str, int], Schema] = {}
        self.links: list[LinkSchema] = []
        self.link_scopes: dict[int, int] = {}  # the dynamic scope of each link made in another scope than 0, by index
        self.defaults: list[tuple[str, OptionalSchema]] = []
        self.marks: list[tuple[str, str]] = []  # (pointer, keyword) written false in the export
        self.silent: list[str] = []  # objects listing properties, open only because additionalProperties is unsaid
        # Where refs lead: each schema's base URI, and the pointer of each $id's resource and $anchor.
        self.bases: dict[str, str] = {}
        self.resources: dict[str, str] = {_ROOT_BASE: ""}
        # By (base URI, anchor): the base is the one string its schemas share, never copied into a key of each.
        self.anchors: dict[tuple[str, str], str] = {}
        # $dynamicRef (see _dynamic): each $dynamicAnchor by (base URI, name), and each $dynamicRef as written.
        self.dynamic: dict[tuple[str, str], str] = {}
        dynamic_refs: list[tuple[str, str]] = []
        self.index(document, "", _ROOT_BASE, dynamic_refs)
        self.scopes = Scopes(self.bases, self.live_anchors(dynamic_refs), self.spend)
        self.scope = 0  # the dynamic scope of the schema being converted (see _dynamic); 0 in most documents
        # Keep this class under 30 attributes: from 30, CPython 3.11 no longer shares the keys of its instances'
        # dicts, and every attribute read of the walk is slower (an import took 5% longer with 30; it has 27).

    # -- problems ---------------------------------------------------------------------------

    def malformed(self, pointer: str, keyword: str, detail: str) -> InvalidDefinitionError:
        return InvalidDefinitionError("from_json_schema()", _at(pointer, keyword), detail)

    def skip(self, pointer: str, keyword: str, reason: str) -> None:
        """Report what is not checked; with strict, refuse it."""
        note = Unsupported(pointer, keyword, reason)
        if self.strict:
            raise InvalidDefinitionError(
                "from_json_schema()", None, f"{note}; strict=True refuses what it cannot check"
            )
        self.unsupported.append(note)

    # -- the walk ----------------------------------------------------------------------------

    def convert(self, doc: Any, pointer: str) -> Schema:
        """The node of *doc* at *pointer*, reached in the dynamic scope ``self.scope``."""
        self.spend(_NODE_WEIGHT + len(pointer))
        outer = self.scope
        if self.scopes.live:  # a document some $dynamicRef of which is dynamic: see _dynamic
            self.scope = scope = self.scopes.enter(outer, pointer)
            if scope:  # converted again for each scope it is reached in: what its own keywords hold, each time
                self.spend(self.own_weight(doc))
        else:
            scope = outer
        self.depth += 1
        try:
            if self.depth > SCHEMA_DEPTH_MAX:
                raise _too_deep(pointer)
            node = self._convert(doc, pointer)
        finally:
            self.depth -= 1
            self.scope = outer
        if scope:
            self.scoped[(pointer, scope)] = node
        else:
            self.nodes[pointer] = node
        return node

    def converted(self, pointer: str, scope: int) -> Schema | None:
        """The node converted at *pointer* in the dynamic *scope*, if it was."""
        return self.scoped.get((pointer, scope)) if scope else self.nodes.get(pointer)

    def own_weight(self, doc: Any) -> int:
        """What the keywords of the schema *doc* hold besides its subschemas, in bytes of JSON.

        A subschema reached in several dynamic scopes is converted once for
        each: what converting it reads (a long ``required``, a ``pattern``) is
        counted each time, as its subschemas are counted when they are. Working
        it out costs about what it counts.
        """
        own: dict[str, Any] = {}
        for keyword, value in doc.items() if isinstance(doc, Mapping) else ():
            if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
                own[keyword] = list(value)  # the names, not the schemas
            elif keyword not in _SCHEMA_LISTS and keyword not in _SCHEMA_VALUES:
                own[keyword] = value
        return json_size(own, self.budget.allowance)

    def read(self, doc: Mapping[str, Any]) -> Mapping[str, Any]:
        """*doc* without the keywords of the vocabularies its meta-schema leaves out (as it is, in most documents)."""
        if not self.ignored or self.ignored.isdisjoint(doc):
            return doc
        return {keyword: value for keyword, value in doc.items() if keyword not in self.ignored}

    def _convert(self, doc: Any, pointer: str) -> Schema:
        if doc is True:
            return AnySchema()
        if doc is False:
            return NeverSchema()
        if not isinstance(doc, Mapping):
            raise InvalidDefinitionError(
                "from_json_schema()",
                pointer or "the document",
                f"must be a schema (an object or a boolean), got {type(doc).__name__}",
            )
        if self.ignored:
            doc = self.read(doc)
        unsupported = _UNSUPPORTED_DRAFT7 if self.draft7 else _UNSUPPORTED
        for keyword in doc:
            if keyword in unsupported:
                self.skip(
                    pointer,
                    keyword,
                    f"is not supported ({unsupported[keyword]}), so values it would refuse are accepted",
                )
        for keyword in ("$defs", "definitions"):
            defs = doc.get(keyword)
            if defs is not None and not isinstance(defs, Mapping):
                raise self.malformed(pointer, keyword, "must be an object of schemas")
        description = doc.get("description") if isinstance(doc.get("description"), str) else None
        parts: list[Schema] = []
        if "$ref" in doc:
            linked = self.ref(doc["$ref"], pointer)
            if self.draft7:  # before 2019-09, $ref's siblings are ignored
                return linked
            if not isinstance(linked, AnySchema):  # one that names nothing here is listed, and adds nothing
                parts.append(linked)
        if "$dynamicRef" in doc and not self.draft7:
            parts.extend(self.refs(doc, pointer, "$dynamicRef"))
        if (
            self.closed
            and pointer not in self.partial
            and (_DECLARING.intersection(doc) or ("allOf" in doc and not _BESIDE_ALL_OF.isdisjoint(doc)))
            and ("properties" in doc or "allOf" in doc)
            and "additionalProperties" not in doc
            and "unevaluatedProperties" not in doc
        ):
            # Its ifs and dependent schemas (its allOf's parts and the options beside them) may name properties
            # of their own: closed as unevaluatedProperties closes, past every property a part it applies names,
            # not by additionalProperties before them.
            self.closing_late.add(pointer)
        merged = self.merged_all_of(doc, pointer)
        body = merged if merged is not None else doc
        typed = self.typed(body, pointer)
        choice = self.enum(body, pointer, typed)
        if choice is not None:
            parts.append(choice)
        elif typed is not None:
            parts.append(typed)
        if merged is None and "allOf" in doc:
            parts.extend(self.each(doc, "allOf", pointer))
        if "anyOf" in doc:
            parts.append(UnionSchema(tuple(self.each(doc, "anyOf", pointer))))
        if "oneOf" in doc:
            parts.append(OneOfSchema(tuple(self.each(doc, "oneOf", pointer))))
        if not parts:
            node: Schema = AnySchema()
        elif len(parts) == 1:
            node = parts[0]
        else:
            node = AllOfSchema(tuple(parts))
        checks = self.checks(doc, pointer)
        if checks:
            node = AppliedSchema(node, tuple(checks))
        if "unevaluatedProperties" in doc or "unevaluatedItems" in doc or pointer in self.closing_late:
            node = self.unevaluated(doc, pointer, node)
        if description is not None and not isinstance(node, LinkSchema) and node.description is None:
            node = replace(node, description=description)  # type: ignore[type-var]
        return node

    def each(self, doc: Mapping[str, Any], keyword: str, pointer: str) -> list[Schema]:
        options = doc[keyword]
        if not isinstance(options, list) or not options:
            raise self.malformed(pointer, keyword, "must be a non-empty array of schemas")
        if pointer in self.partial:  # the parts of a part are parts too
            self.partial.update(_at(pointer, keyword, index) for index in range(len(options)))
        return [self.convert(option, _at(pointer, keyword, index)) for index, option in enumerate(options)]

    def part(self, doc: Any, pointer: str) -> Schema:
        """The node of a subschema applied to the value itself (``not``, ``then``...): a part, never closed alone."""
        self.partial.add(pointer)
        return self.convert(doc, pointer)

    # -- the keywords applied in place (see _conditions) ------------------------------------

    def checks(self, doc: Mapping[str, Any], pointer: str) -> list[Schema]:
        """The checks of *doc*'s ``not``, ``if``/``then``/``else``, ``dependent*``, ``propertyNames``, ``contains``."""
        checks: list[Schema] = []
        if "not" in doc:
            negated = self.part(doc["not"], _at(pointer, "not"))
            checks.append(NotSchema(negated, negation_words(doc["not"])))
        if "if" in doc:
            condition = self.part(doc["if"], _at(pointer, "if"))  # converted alone too: unevaluated* reads it
            then = self.part(doc["then"], _at(pointer, "then")) if "then" in doc else None
            otherwise = self.part(doc["else"], _at(pointer, "else")) if "else" in doc else None
            if then is not None or otherwise is not None:
                because, unless = condition_words(doc["if"])
                checks.append(ConditionalSchema(condition, then, otherwise, because, unless))
        dependent = self.dependent(doc, pointer)
        if dependent is not None:
            checks.append(dependent)
        if "propertyNames" in doc:
            checks.append(PropertyNamesSchema(self.convert(doc["propertyNames"], _at(pointer, "propertyNames"))))
        if "contains" in doc:
            contained = self.convert(doc["contains"], _at(pointer, "contains"))
            low = 1 if self.draft7 else self.count(doc, pointer, "minContains")
            high = None if self.draft7 else self.count(doc, pointer, "maxContains")
            checks.append(ContainsSchema(contained, 1 if low is None else low, high))
        return checks

    def dependent(self, doc: Mapping[str, Any], pointer: str) -> DependentSchema | None:
        """``dependentRequired`` and ``dependentSchemas`` (and ``dependencies``, their draft-07 form) as one check."""
        required: list[tuple[str, tuple[str, ...]]] = []
        schemas: list[tuple[str, Schema]] = []
        for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
            given = doc.get(keyword, MISSING)
            if given is MISSING:
                continue
            if not isinstance(given, Mapping):
                raise self.malformed(
                    pointer,
                    keyword,
                    "must be an object whose values are arrays of property names"
                    if keyword == "dependentRequired"
                    else "must be an object of schemas",
                )
            for key, value in given.items():
                where = _at(pointer, keyword, key)
                if keyword != "dependentSchemas" and isinstance(value, list):
                    if not all(isinstance(name, str) for name in value):
                        raise InvalidDefinitionError("from_json_schema()", where, "must be an array of property names")
                    required.append((key, tuple(dict.fromkeys(value))))
                    self.spend(sum(len(name) + 50 for name in value))
                elif keyword == "dependentRequired":
                    raise InvalidDefinitionError("from_json_schema()", where, "must be an array of property names")
                else:
                    schemas.append((key, self.part(value, where)))
        if not required and not schemas:
            return None
        return DependentSchema(tuple(required), tuple(schemas))

    # -- $ref -------------------------------------------------------------------------------

    def refs(self, doc: Mapping[str, Any], pointer: str, keyword: str) -> list[Schema]:
        """The link of *doc*'s *keyword* (``$dynamicRef``), or none where it names nothing here (it is listed)."""
        linked = self.ref(doc[keyword], pointer, keyword)
        return [] if isinstance(linked, AnySchema) else [linked]

    def ref(self, target: Any, pointer: str, keyword: str = "$ref") -> Schema:
        """A link to what the ``$ref`` (or ``$dynamicRef``, in this dynamic scope) *target* at *pointer* names."""
        if not isinstance(target, str):
            raise self.malformed(pointer, keyword, "must be a string")
        found = self.target(target, pointer, keyword, self.scope)
        if found is None:
            uri, _ = _split(target, self.bases.get(pointer, _ROOT_BASE))
            elsewhere = uri.rstrip("#") not in self.resources
            self.skip(
                pointer,
                keyword,
                f"{target!r} is not supported: it names "
                + ("a document elsewhere, which the import never fetches" if elsewhere else "nothing in this document")
                + ", so anything is accepted there",
            )
            return AnySchema()
        self.spend(_NODE_WEIGHT + len(found))
        link = LinkSchema("#" + found, dynamic=True) if keyword == "$dynamicRef" else LinkSchema("#" + found)
        if self.scope:
            self.link_scopes[len(self.links)] = self.scope
        self.links.append(link)
        return link

    def target(self, target: str, pointer: str, keyword: str, scope: int) -> str | None:
        """The pointer of what *keyword* (``$ref``, ``$dynamicRef``) at *pointer* names in *scope*; None if outside.

        A ``$dynamicRef`` whose URI names a ``$dynamicAnchor`` of that name
        goes to the outermost schema resource of the dynamic scope that has
        one (see :mod:`._dynamic`); any other is a ``$ref``, as 2020-12 says.
        """
        base = self.bases.get(pointer, _ROOT_BASE)
        if not target.startswith("#"):
            self.spend(len(base))  # what resolving a URI against the base writes (a fragment alone writes nothing)
        uri, fragment = _split(target, base)
        found = self.locate(uri, fragment)
        if keyword == "$dynamicRef" and found is not None and self.dynamic.get((uri, fragment)) == found:
            return self.scopes.anchor(scope, fragment, found)
        return found

    def live_anchors(self, dynamic_refs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """The ``$dynamicAnchor`` s of the names some of the *dynamic_refs* resolve dynamically (see :mod:`._dynamic`).

        *dynamic_refs* are the document's ``$dynamicRef`` s: each one's pointer and what it says.
        """
        live: set[str] = set()
        for pointer, written in dynamic_refs:
            base = self.bases.get(pointer, _ROOT_BASE)
            if not written.startswith("#"):
                self.spend(len(base))  # as target() counts it
            uri, fragment = _split(written, base)
            found = self.locate(uri, fragment)
            if found is not None and self.dynamic.get((uri, fragment)) == found:
                live.add(fragment)
        return {key: pointer for key, pointer in self.dynamic.items() if key[1] in live}

    def locate(self, uri: str, fragment: str) -> str | None:
        """The JSON pointer, in the document, of *fragment* in the resource *uri*; None if outside it."""
        resource = self.resources.get(uri.rstrip("#"))
        if resource is None:
            return None
        if not fragment:
            return resource
        if fragment.startswith("/"):
            return resource + fragment
        return self.anchors.get((uri, fragment))

    def index(self, doc: Any, pointer: str, base: str, dynamic_refs: list[tuple[str, str]], depth: int = 1) -> None:
        """Record the base URI of every schema in *doc*, and where each ``$id`` and ``$anchor`` is.

        Each ``$dynamicRef`` goes to *dynamic_refs*, with its pointer.
        """
        from urllib.parse import urljoin, urlsplit  # noqa: PLC0415 - a reference followed only: start-up

        if not isinstance(doc, Mapping):
            return
        if depth > SCHEMA_DEPTH_MAX:
            raise _too_deep(pointer)
        self.spend(len(pointer))
        own = doc.get("$id")
        if isinstance(own, str) and not (self.draft7 and "$ref" in doc):
            base = urljoin(base, own) if not urlsplit(own).scheme else own
            base = base.split("#")[0] if not own.startswith("#") else base
            self.spend(2 * len(base))  # a base of its own, for each schema below it (and for a draft-07 anchor)
            if own.startswith("#") and self.draft7:  # draft-07's anchors are written as "$id": "#name"
                self.anchors[(base.split("#")[0], own[1:])] = pointer
            else:
                self.resources.setdefault(base, pointer)
        anchor = doc.get("$anchor")
        if isinstance(anchor, str):
            self.anchors[(base, anchor)] = pointer
        if "$dynamicAnchor" in doc and isinstance(doc["$dynamicAnchor"], str) and not self.draft7:
            name = doc["$dynamicAnchor"]
            self.anchors.setdefault((base, name), pointer)  # an anchor for $ref as well
            self.dynamic[(base, name)] = pointer
        if "$dynamicRef" in doc and isinstance(doc["$dynamicRef"], str) and not self.draft7:
            dynamic_refs.append((pointer, doc["$dynamicRef"]))
        self.bases[pointer] = base
        for keyword, value in doc.items():
            if keyword in _SCHEMA_MAPS and isinstance(value, Mapping):
                for name, sub in value.items():
                    self.index(sub, _at(pointer, keyword, name), base, dynamic_refs, depth + 1)
            elif keyword in _SCHEMA_LISTS and isinstance(value, list):
                for position, sub in enumerate(value):
                    self.index(sub, _at(pointer, keyword, position), base, dynamic_refs, depth + 1)
            elif keyword in _SCHEMA_VALUES:
                if isinstance(value, list) and keyword == "items":  # draft-07's array form
                    for position, sub in enumerate(value):
                        self.index(sub, _at(pointer, keyword, position), base, dynamic_refs, depth + 1)
                else:
                    self.index(value, _at(pointer, keyword), base, dynamic_refs, depth + 1)

    def resolve(self, link: LinkSchema, scope: int) -> Schema:
        """The node at *link*'s pointer, reached from the dynamic *scope*: converting that part on first use."""
        from urllib.parse import unquote  # noqa: PLC0415 - a reference followed only: start-up

        tokens = [] if link.pointer == "#" else link.pointer[2:].split("/")
        pointer = "".join("/" + unquote(token) for token in tokens)
        if self.scopes.live:
            found = self.converted(pointer, self.scopes.enter(scope, pointer))
        else:  # as in most documents: every scope is 0
            found = self.nodes.get(pointer)
        if found is not None:
            return found
        doc: Any = self.document
        for token in tokens:
            doc = _child(doc, unquote(token))
            if doc is MISSING:
                raise InvalidDefinitionError(
                    "from_json_schema()", f"$ref {link.pointer!r}", "points to nothing in the document"
                )
        return self.convert_in(doc, pointer, scope)

    def convert_in(self, doc: Any, pointer: str, scope: int) -> Schema:
        """:meth:`convert`, reached from the dynamic *scope* (a ref's, not the walk's)."""
        outer = self.scope
        self.scope = scope
        try:
            return self.convert(doc, pointer)
        finally:
            self.scope = outer

    # -- allOf of objects -------------------------------------------------------------------

    def merged_all_of(self, doc: Mapping[str, Any], pointer: str) -> dict[str, Any] | None:
        """*doc* with its ``allOf`` of plain objects merged in, or None when they are not all plain objects.

        Merged, a closed import closes the whole: each part alone would refuse the others' keys.
        """
        parts = doc.get("allOf")
        if not isinstance(parts, list) or not parts:
            return None
        if not all(isinstance(part, Mapping) for part in parts):
            return None
        parts = [self.read(part) for part in parts]
        if not all(part.keys() <= _MERGEABLE for part in parts):
            return None
        if any(part.get("type", "object") != "object" for part in parts):
            return None
        if doc.get("type", "object") != "object" or "additionalProperties" in doc:
            return None
        merged: dict[str, Any] = {key: value for key, value in doc.items() if key != "allOf"}
        properties: dict[str, Any] = dict(merged.get("properties", {}))
        required: list[Any] = list(merged.get("required", []))
        typed = "type" in doc
        for part in parts:
            typed = typed or "type" in part
            for name, sub in part.get("properties", {}).items():
                properties[name] = {"allOf": [properties[name], sub]} if name in properties else sub
            required.extend(part.get("required", []))
        if typed:
            merged["type"] = "object"
        merged["properties"] = properties
        # Each name once, in order, in linear time; anything but names is left for object() to refuse.
        merged["required"] = list(dict.fromkeys(required)) if all(isinstance(n, str) for n in required) else required
        if self.closes(doc, pointer):
            self.marks.append((pointer, "unevaluatedProperties"))
            merged["additionalProperties"] = False
        return merged

    def closes(self, doc: Mapping[str, Any], pointer: str) -> bool:
        """Whether a closed import closes the object of *doc* by ``additionalProperties`` (see :meth:`object`)."""
        return (
            self.closed
            and pointer not in self.partial
            and pointer not in self.closing_late
            and "unevaluatedProperties" not in doc
        )

    # -- enum and const ---------------------------------------------------------------------

    def enum(self, doc: Mapping[str, Any], pointer: str, typed: Schema | None) -> Schema | None:
        """The values ``enum`` and ``const`` allow (those *typed* accepts too) as one enum node, never a node each.

        Each value is known by its canonical JSON text (so ``const`` filters
        ``enum`` in time linear in their sizes); the node holds a copy of each.
        """
        values: list[Any] | None = None
        if "enum" in doc:
            if not isinstance(doc["enum"], list) or not doc["enum"]:
                raise self.malformed(pointer, "enum", "must be a non-empty array")
            values = list(doc["enum"])
        texts = [self.canonical(value, pointer, "enum") for value in values or ()]
        if "const" in doc:
            const = self.canonical(doc["const"], pointer, "const")
            if values is None:
                values, texts = [doc["const"]], [const]
            else:
                kept = [index for index, text in enumerate(texts) if text == const]
                values, texts = [values[index] for index in kept], [texts[index] for index in kept]
        if values is None:
            return None
        if typed is not None:
            if any(isinstance(node, LinkSchema) for node in typed.walk()):
                return AllOfSchema((typed, _choice(values)))
            values = [value for value in values if _accepts(typed, value)]
        return _choice(values)

    def canonical(self, value: Any, pointer: str, keyword: str) -> str:
        """The canonical JSON text of a value of *keyword* (``enum``, ``const``), counted in the import's weight."""
        text = canonical_json(value)
        if text is None:
            raise self.malformed(
                pointer,
                keyword,
                f"must hold JSON values nested at most {NESTING_MAX} levels deep, with numbers within a 64-bit "
                "float's range",
            )
        self.spend(2 * len(text) + 100)  # the text, and the copy of the value the node holds
        return text

    # -- the keywords of each type ----------------------------------------------------------

    def typed(self, doc: Mapping[str, Any], pointer: str) -> Schema | None:
        """The union over the JSON types *doc* allows, each with its keywords; None if *doc* constrains no type."""
        declared = doc.get("type")
        if declared is None:
            types: list[str] | None = None
        elif isinstance(declared, str):
            types = [declared]
        elif isinstance(declared, list) and all(isinstance(kind, str) for kind in declared):
            types = list(dict.fromkeys(declared))
        else:
            raise self.malformed(pointer, "type", "must be a type name or an array of them")
        for kind in types or ():
            if kind not in _TYPES:
                raise self.malformed(pointer, "type", f"names {kind!r}, which is not a JSON Schema type")
        if types is not None and doc.get("nullable") is True and "null" not in types:
            types.append("null")
        if types is not None and "number" in types and "integer" in types:
            types.remove("integer")
        constrained = {
            "string": any(key in doc for key in _STRING_KEYWORDS),
            "number": any(key in doc for key in _NUMBER_KEYWORDS),
            "array": any(key in doc for key in _ARRAY_KEYWORDS),
            "object": any(key in doc for key in _OBJECT_KEYWORDS),
        }
        if types is None:
            if not any(constrained.values()):
                return None
            every = ("null", "boolean", "object", "array", "number", "string")
            return TypelessSchema(tuple(self.of_type(kind, doc, pointer) for kind in every))
        options = [self.of_type(kind, doc, pointer) for kind in types]
        return options[0] if len(options) == 1 else UnionSchema(tuple(options))

    def of_type(self, kind: str, doc: Mapping[str, Any], pointer: str) -> Schema:
        if kind == "null":
            return NullSchema()
        if kind == "boolean":
            return BooleanSchema()
        if kind == "string":
            return self.string(doc, pointer)
        if kind in ("number", "integer"):
            return self.number(kind, doc, pointer)
        if kind == "array":
            return self.array(doc, pointer)
        return self.object(doc, pointer)

    def count(self, doc: Mapping[str, Any], pointer: str, keyword: str) -> int | None:
        value = doc.get(keyword)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.malformed(pointer, keyword, f"must be a non-negative integer, got {value!r}")
        return value

    def string(self, doc: Mapping[str, Any], pointer: str) -> Schema:
        pattern = doc.get("pattern")
        regex = None
        if pattern is not None:
            if not isinstance(pattern, str):
                raise self.malformed(pointer, "pattern", "must be a string")
            regex, reason = foreign_pattern(pattern)
            if regex is None:
                self.skip(pointer, "pattern", f"is not checked: {reason}")
                pattern = None
        fmt = doc.get("format")
        if fmt is not None and not (isinstance(fmt, str) and fmt and unicode_ok(fmt)):
            raise self.malformed(pointer, "format", "must be a format name")
        if not self.reading.formats:
            fmt = None  # an annotation, as 2020-12's format-annotation vocabulary has it
        elif fmt is not None and self.reading.every_format and fmt not in FORMATS:
            self.skip(
                pointer,
                "format",
                f"names {shorten(fmt, 80)!r}, a format this import cannot check, though the meta-schema's "
                f"format-assertion vocabulary asks for every format to be; the import checks {', '.join(FORMATS)}",
            )
        return StringSchema(
            min_length=self.count(doc, pointer, "minLength"),
            max_length=self.count(doc, pointer, "maxLength"),
            pattern=pattern,
            format=fmt,
            _regex=regex,
        )

    def number(self, kind: str, doc: Mapping[str, Any], pointer: str) -> Schema:
        bounds: dict[str, Any] = {}
        for keyword, attribute in (
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("exclusiveMinimum", "exclusive_minimum"),
            ("exclusiveMaximum", "exclusive_maximum"),
            ("multipleOf", "multiple_of"),
        ):
            value = doc.get(keyword)
            if value is None:
                continue
            if isinstance(value, bool) and keyword.startswith("exclusive"):  # draft-04: a flag on the bound
                plain = "minimum" if keyword == "exclusiveMinimum" else "maximum"
                if value and plain in bounds:
                    bounds[attribute] = bounds.pop(plain)
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not in_float_range(value):
                raise self.malformed(pointer, keyword, f"must be a number, got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise self.malformed(pointer, keyword, "must be a finite number")
            if keyword == "multipleOf" and value <= 0:
                raise self.malformed(pointer, keyword, "must be greater than 0")
            bounds[attribute] = value
        return IntegerSchema(**bounds) if kind == "integer" else NumberSchema(**bounds)

    def array(self, doc: Mapping[str, Any], pointer: str) -> Schema:
        items = doc.get("items", MISSING)
        prefix_docs = doc.get("prefixItems")
        rest_pointer = _at(pointer, "items")
        if isinstance(items, list):  # the draft-07 form: items as the prefix, additionalItems as the rest
            prefix_docs, items = items, doc.get("additionalItems", MISSING)
            rest_pointer = _at(pointer, "additionalItems")
            prefix_keyword = "items"
        else:
            prefix_keyword = "prefixItems"
        unique = doc.get("uniqueItems", False)
        if not isinstance(unique, bool):
            raise self.malformed(pointer, "uniqueItems", "must be true or false")
        low, high = self.count(doc, pointer, "minItems"), self.count(doc, pointer, "maxItems")
        rest = AnySchema() if items is MISSING else self.convert(items, rest_pointer)
        if prefix_docs is None:
            return ArraySchema(rest, low, high, unique)
        if not isinstance(prefix_docs, list):
            raise self.malformed(pointer, prefix_keyword, "must be an array of schemas")
        prefix = tuple(self.convert(item, _at(pointer, prefix_keyword, i)) for i, item in enumerate(prefix_docs))
        size = len(prefix)
        if size and isinstance(rest, NeverSchema) and low == size and high == size and not unique:
            return TupleSchema(prefix)
        return PrefixArraySchema(prefix, rest, low, high, unique)

    def object(self, doc: Mapping[str, Any], pointer: str) -> Schema:
        properties = doc.get("properties", {})
        if not isinstance(properties, Mapping):
            raise self.malformed(pointer, "properties", "must be an object of schemas")
        required = doc.get("required", [])
        if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
            raise self.malformed(pointer, "required", "must be an array of property names")
        low, high = self.count(doc, pointer, "minProperties"), self.count(doc, pointer, "maxProperties")
        fields: dict[str, Schema] = {}
        needed = set(required)  # a set: a server's document may list 100,000 names
        for name, sub in properties.items():
            node = self.convert(sub, _at(pointer, "properties", name))
            if name not in needed:
                node = self.optional(node, sub, _at(pointer, "properties", name))
            fields[name] = node
        for name in required:
            fields.setdefault(name, AnySchema())
        additional = doc.get("additionalProperties", MISSING)
        extra: Extra | Schema
        if additional is MISSING:
            closing = "properties" in doc and self.closes(doc, pointer)
            # A part applied in place (an if, a then) leaves the other keys to the schema it is part of, which
            # checks them: "ignore" does not check them again, nor copy them into a result merged away.
            extra = "forbid" if closing else "ignore" if pointer in self.partial else "allow"
            if closing and "allOf" not in doc:
                self.marks.append((pointer, "additionalProperties"))
            elif "properties" in doc and not self.closed and pointer not in self.partial:
                self.silent.append(pointer)
        elif additional is True:
            extra = "allow"
        elif additional is False:
            extra = "forbid"
        else:
            converted = self.convert(additional, _at(pointer, "additionalProperties"))
            extra = "allow" if isinstance(converted, AnySchema) else converted
        patterns = self.patterns(doc, pointer)
        if patterns:  # the key count is the wrapper's: it counts the keys the patterns take too
            base = ObjectSchema(tuple(fields.items()), extra, None, frozenset(fields))
            regexes = tuple(regex for regex, _, _ in patterns)
            taken = tuple((pattern, schema) for _, pattern, schema in patterns)
            return PatternPropertiesSchema(base, taken, low, high, None, regexes)
        if not fields and isinstance(extra, Schema):
            return RecordSchema(extra, min_properties=low, max_properties=high)
        return ObjectSchema(tuple(fields.items()), extra, None, frozenset(fields), low, high)

    def patterns(self, doc: Mapping[str, Any], pointer: str) -> list[tuple[Searcher, str, Schema]]:
        """The ``patternProperties`` of *doc*: each regex (ECMA-262 read, linear-time), its pattern, its schema."""
        given = doc.get("patternProperties", {})
        if not isinstance(given, Mapping):
            raise self.malformed(pointer, "patternProperties", "must be an object of schemas")
        found = []
        for pattern, sub in given.items():
            where = _at(pointer, "patternProperties", pattern)
            regex, reason = foreign_pattern(pattern)
            if regex is None:
                self.skip(where, "patternProperties", f"is not checked: {reason}")
                continue
            found.append((regex, pattern, self.convert(sub, where)))
        return found

    def optional(self, node: Schema, doc: Any, pointer: str) -> OptionalSchema:
        if not isinstance(doc, Mapping) or "default" not in doc:
            return OptionalSchema(node)
        default = doc["default"]
        if isinstance(default, list | dict):
            size = json_size(default, DEFAULT_BYTES_MAX)
            if size > DEFAULT_BYTES_MAX:
                self.skip(
                    pointer,
                    "default",
                    f"is an {'array' if isinstance(default, list) else 'object'} of more than {DEFAULT_BYTES_MAX:,} "
                    "bytes, so it is not applied (each call leaving the field out would get a copy of it)",
                )
                return OptionalSchema(node)
            self.spend(2 * size)
        made = OptionalSchema(node, copy_json(default))
        self.defaults.append((pointer, made))
        return made

    # -- unevaluatedProperties, unevaluatedItems (see _evaluation) ------------------------------

    def unevaluated(self, doc: Mapping[str, Any], pointer: str, node: Schema) -> Schema:
        """*node*, then the ``unevaluated*`` of *doc* (or the closing of a closed import) over what it evaluates."""
        properties: Schema | None = None
        items: Schema | None = None
        if "unevaluatedProperties" in doc:
            properties = self.convert(doc["unevaluatedProperties"], _at(pointer, "unevaluatedProperties"))
        elif pointer in self.closing_late:
            properties = NeverSchema()
            self.marks.append((pointer, "unevaluatedProperties"))
        if "unevaluatedItems" in doc:
            items = self.convert(doc["unevaluatedItems"], _at(pointer, "unevaluatedItems"))
        properties = None if isinstance(properties, AnySchema) else properties  # every key passes
        items = None if isinstance(items, AnySchema) else items
        if properties is None and items is None:
            return node
        self.holders.append((doc, pointer, self.scope))
        return UnevaluatedSchema(node, pointer, self.table, properties, items, scope=self.scope)

    def finish(self) -> None:
        """Link every ``$ref``, and read what each schema object an ``unevaluated*`` reaches evaluates.

        Each may convert parts of the document the other then needs (a ref's
        target holding ``unevaluated*``, an option only an evaluation asks of):
        repeated until neither finds more.
        """
        evaluated = 0
        while True:
            self.link()
            if evaluated == len(self.holders):
                return
            while evaluated < len(self.holders):
                pending = [self.holders[evaluated]]
                evaluated += 1
                while pending:
                    doc, pointer, scope = pending.pop()
                    self.evaluation(doc, pointer, scope, pending)

    def evaluation(
        self, doc: Any, pointer: str, reached: int, pending: list[tuple[Any, str, int]], depth: int = 0
    ) -> Evaluation:
        """What the schema object *doc* at *pointer* evaluates, reached in the dynamic scope *reached*.

        The targets of its refs go to *pending*, each with the scope it is reached in.
        """
        scope = self.scopes.enter(reached, pointer)
        key = (pointer, scope)
        known = self.table.get(key)
        if known is not None:
            return known
        if depth > SCHEMA_DEPTH_MAX:
            raise _too_deep(pointer)
        self.spend(_NODE_WEIGHT + len(pointer) + (self.own_weight(doc) if scope else 0))
        if not isinstance(doc, Mapping):  # true evaluates nothing; false passes nothing
            made = self.table[key] = Evaluation(pointer, table=self.table)
            return made
        doc = self.read(doc)
        if self.draft7 and "$ref" in doc:  # before 2019-09, $ref's siblings are ignored
            made = self.table[key] = Evaluation(
                pointer, refs=self.evaluated_refs(doc, pointer, scope, pending), table=self.table
            )
            return made

        def sub(keyword: str, *tokens: str | int) -> Evaluation:
            where = _at(pointer, keyword, *tokens)
            held: Any = doc[keyword]
            for token in tokens:
                held = held[token]
            return self.evaluation(held, where, scope, pending, depth + 1)

        def node(keyword: str, *tokens: str | int) -> Schema:
            where = _at(pointer, keyword, *tokens)
            held: Any = doc[keyword]
            for token in tokens:
                held = held[token]
            return self.node(held, where, scope)

        properties = doc.get("properties")
        patterns = doc.get("patternProperties")
        items = doc.get("items", MISSING)
        prefix = items if isinstance(items, list) else doc.get("prefixItems")
        every_item = "additionalItems" in doc if isinstance(items, list) else items is not MISSING
        options: list[tuple[Schema, Evaluation]] = []
        for keyword in ("anyOf", "oneOf"):
            for index in range(len(doc.get(keyword, ()))):
                options.append((node(keyword, index), sub(keyword, index)))
        condition = None
        if "if" in doc:
            condition = (
                node("if"),
                sub("if"),
                sub("then") if "then" in doc else None,
                sub("else") if "else" in doc else None,
            )
        dependent = [
            (key, sub(keyword, key))
            for keyword in ("dependentSchemas", "dependencies")
            if isinstance(doc.get(keyword), Mapping)
            for key, value in doc[keyword].items()
            if keyword == "dependentSchemas" or not isinstance(value, list)
        ]
        made = self.table[key] = Evaluation(
            pointer,
            properties=frozenset(properties) if isinstance(properties, Mapping) else frozenset(),
            patterns=tuple(
                regex for regex in (foreign_pattern(pattern)[0] for pattern in patterns) if regex is not None
            )
            if isinstance(patterns, Mapping)
            else (),
            every_key="additionalProperties" in doc,
            unevaluated_keys="unevaluatedProperties" in doc,
            prefix=len(prefix) if isinstance(prefix, list) else 0,
            every_item=every_item,
            unevaluated_items="unevaluatedItems" in doc,
            contains=node("contains") if "contains" in doc else None,
            all_of=tuple(sub("allOf", index) for index in range(len(doc.get("allOf", ())))),
            options=tuple(options),
            condition=condition,
            dependent=tuple(dependent),
            refs=self.evaluated_refs(doc, pointer, scope, pending),
            table=self.table,
        )
        return made

    def node(self, doc: Any, pointer: str, reached: int) -> Schema:
        """The node at *pointer* reached in the dynamic scope *reached* (converted with its holder, most often)."""
        found = self.converted(pointer, self.scopes.enter(reached, pointer))
        return found if found is not None else self.convert_in(doc, pointer, reached)

    def evaluated_refs(
        self, doc: Mapping[str, Any], pointer: str, scope: int, pending: list[tuple[Any, str, int]]
    ) -> tuple[tuple[str, int], ...]:
        """Where *doc*'s ``$ref`` and ``$dynamicRef`` go in *scope*, their evaluations queued; none for a remote one."""
        from urllib.parse import unquote  # noqa: PLC0415 - a reference followed only: start-up

        keys: list[tuple[str, int]] = []
        for keyword in ("$ref", "$dynamicRef"):
            target = doc.get(keyword)
            if not isinstance(target, str) or (keyword == "$dynamicRef" and self.draft7):
                continue
            found = self.target(target, pointer, keyword, scope)
            if found is None:
                continue
            held: Any = self.document
            for token in found.split("/")[1:]:
                held = _child(held, unquote(token))
                if held is MISSING:
                    break
            else:
                key = (found, self.scopes.enter(scope, found))
                if key not in self.table:
                    pending.append((held, found, scope))
                keys.append(key)
        return tuple(keys)

    # -- after the walk ---------------------------------------------------------------------

    def link(self) -> None:
        done = 0
        while done < len(self.links):  # resolving may convert more of the document, with more links
            link, scope = self.links[done], self.link_scopes.get(done, 0)
            object.__setattr__(link, "target", self.resolve(link, scope))
            done += 1
        # A link whose target is a link (a $ref to a $ref...) is pointed at the end of its chain, each chain
        # followed once: checks and messages then take one step, however long the chain (a document of
        # 50,000 $defs, each a $ref to the next, was followed from each of them: quadratic time).
        ends: dict[int, Schema] = {}
        for link in self.links:
            chain: list[LinkSchema] = []
            seen: set[int] = set()
            node: Schema = link
            while isinstance(node, LinkSchema) and id(node) not in ends:
                if id(node) in seen:
                    raise self_ref(link.pointer, "$dynamicRef" if link.dynamic else "$ref")
                seen.add(id(node))
                chain.append(node)
                node = node.follow()
            end = ends.get(id(node), node)
            for each in chain:
                ends[id(each)] = end
                object.__setattr__(each, "target", end)

    def check_defaults(self) -> None:
        """Drop each default that does not match its own schema: in JSON Schema a default is only an annotation."""
        for pointer, made in self.defaults:
            issues: list[Issue] = []
            try:
                parsed = made.schema._collect(made.default, (), issues, Context({}))
            except (RecursionError, TooManyIssues):  # too deep, or so wrong that checking stopped
                parsed = BAD
            if parsed is BAD or issues:
                said = issues[0].message("default") if issues else "default is nested too deeply to check"
                self.skip(pointer, "default", f"does not match its schema ({said}), so it is not applied")
                object.__setattr__(made, "default", MISSING)

    def exported(self) -> Any:
        document = copy_json(self.document)
        for pointer, keyword in self.marks:
            node = document
            for token in pointer.split("/")[1:]:
                node = _child(node, token)
            node[keyword] = False
        return document


def _choice(values: list[Any]) -> Schema:
    """One node allowing *values* (JSON, of any kind), held as copies; never when there are none."""
    if not values:
        return NeverSchema()
    return EnumSchema(tuple(value if _scalar(value) else copy_json(value) for value in values))


def _accepts(schema: Schema, value: Any) -> bool:
    issues: list[Issue] = []
    try:
        return schema._collect(value, (), issues, Context({})) is not BAD and not issues
    except TooManyIssues:  # so wrong that checking stopped
        return False


def from_json_schema(
    document: Mapping[str, Any] | bool,
    *,
    dialect: str | None = None,
    strict: bool = False,
    closed: bool = False,
    max_bytes: int = SCHEMA_BYTES_MAX,
    metaschemas: Mapping[str, Mapping[str, Any]] | None = None,
    formats: bool = True,
) -> ImportedSchema:
    """A schema that checks values as the JSON Schema *document* does, with hermes' located messages.

    Args:
        document: a JSON Schema, as parsed JSON (a dict, or ``True``/``False``).
        dialect: ``"2020-12"`` or ``"draft-07"``; by default the document's
            ``$schema`` says, else 2020-12.
        strict: raise for anything that cannot be checked (an unsupported
            keyword, a remote ``$ref``, a default that does not match its
            schema) instead of reporting it in ``unsupported``.
        closed: objects that list ``properties`` and do not say
            ``additionalProperties`` refuse other keys (with a "did you mean"),
            and the exported document says so. A tool's input is closed so
            without asking (a model's misspelt optional argument is an issue,
            never dropped): :func:`define_tool` and ``@tool`` import again,
            closed, what was imported open; pass it to import closed at once.

        max_bytes: the most bytes the document may take written as compact
            JSON (at most, and by default, :data:`SCHEMA_BYTES_MAX`): a larger
            one is refused before anything of it is read.
        metaschemas: meta-schemas the caller holds, by URI. A document whose
            ``$schema`` names one is read with the vocabularies its
            ``$vocabulary`` declares (one left out, its keywords are not
            checked; an unknown one required refuses the document). The
            import fetches nothing: a ``$schema`` it neither knows nor is
            given is read as 2020-12 and listed in ``unsupported``.
        formats: check the formats the import knows (``date-time``,
            ``date``, ``time``, ``email``, ``uri``, ``uuid``, ``ipv4``,
            ``ipv6``), as by default; False reads ``format`` as an annotation
            only, as 2020-12's format-annotation vocabulary does (a
            meta-schema declaring format-assertion asserts them either way).

    What importing costs is bounded by the document's size: it holds about
    :data:`WEIGHT_PER_BYTE` bytes of memory at most for each byte of it, and a
    document that would take more is refused (see ``docs/security.md``).
    An ``enum`` or ``const`` of arrays and objects is one node, its values
    looked up by their canonical JSON text, never a node per value.

    Its ``pattern`` and ``patternProperties`` are ECMA-262 regular expressions
    from elsewhere: they run on RE2, in time linear in the text, never on
    Python's ``re``; one RE2 cannot run (a backreference, lookaround), or any
    where ``google-re2`` is not installed, is listed in ``unsupported``.

    Returns:
        An :class:`ImportedSchema`: it parses as the document validates,
        exports the document, and lists in ``unsupported`` what is not checked.

    Raises:
        InvalidDefinitionError: the document is malformed (a keyword of the
            wrong type, a ``$ref`` to nothing...), the dialect is unknown, the
            document is larger than *max_bytes* or would weigh too much once
            imported, or, with *strict*, a part cannot be checked; the message
            gives its JSON pointer.
    """
    if metaschemas is not None and not (
        isinstance(metaschemas, Mapping) and all(isinstance(uri, str) for uri in metaschemas)
    ):
        raise InvalidDefinitionError(
            "from_json_schema()",
            "metaschemas",
            f"must be a mapping of meta-schema URIs to meta-schemas, got {type(metaschemas).__name__}",
        )
    if not isinstance(formats, bool):
        raise InvalidDefinitionError("from_json_schema()", "formats", f"must be True or False, got {formats!r}")
    uri = document.get("$schema") if isinstance(document, Mapping) else None
    uri = uri.rstrip("#") if isinstance(uri, str) else None
    held = {key.rstrip("#"): meta for key, meta in (metaschemas or {}).items()}
    reading = _Reading(formats=formats)
    unknown = None  # a $schema neither known nor held, which decides how the document is read
    used: dict[str, Any] = {}  # the meta-schema read, kept to read the document again (closed_import)
    if uri is not None and uri not in _SCHEMA_URIS and uri in held:
        meta = used[uri] = held[uri]
        if not isinstance(meta, Mapping):
            raise InvalidDefinitionError(
                "from_json_schema()", f"metaschemas[{shorten(uri, 80)!r}]", "must be a meta-schema (a dict)"
            )
        reading = _reading(uri, meta, formats)
        if dialect is None:
            named = meta.get("$schema")
            dialect = _SCHEMA_URIS.get(named.rstrip("#"), "2020-12") if isinstance(named, str) else "2020-12"
    elif dialect is None:
        dialect = _SCHEMA_URIS.get(uri, "2020-12") if uri is not None else "2020-12"
        unknown = uri if uri is not None and uri not in _SCHEMA_URIS else None
    if dialect not in DIALECTS:
        raise InvalidDefinitionError(
            "from_json_schema()", "dialect", f"must be one of {', '.join(map(repr, DIALECTS))}, got {dialect!r}"
        )
    if not isinstance(document, Mapping | bool):
        raise InvalidDefinitionError(
            "from_json_schema()", "document", f"must be a JSON Schema (a dict or a bool), got {type(document).__name__}"
        )
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or not 0 < max_bytes <= SCHEMA_BYTES_MAX:
        raise InvalidDefinitionError(
            "from_json_schema()", "max_bytes", f"must be a whole number from 1 to {SCHEMA_BYTES_MAX}, got {max_bytes!r}"
        )
    size = json_size(document, max_bytes)
    if size > max_bytes:
        most = "taken here" if max_bytes < SCHEMA_BYTES_MAX else "any document may take"
        raise InvalidDefinitionError(
            "from_json_schema()", "document", f"is more than {max_bytes:,} bytes of JSON, the most {most}"
        )
    try:
        importer = _Importer(document, dialect, strict, closed, size, reading=reading)
        if unknown is not None:
            importer.skip(
                "",
                "$schema",
                f"names {shorten(unknown, 80)!r}, a meta-schema this import neither knows nor was given in "
                "metaschemas= (it fetches nothing): the document is read as 2020-12, with all its vocabularies, "
                "so a keyword of a vocabulary of that meta-schema's own is not checked",
            )
        root = importer.convert(document, "")
        importer.finish()
        importer.check_defaults()
        exported = importer.exported()
    except RecursionError:  # a document from elsewhere (an MCP server's) may nest past any real schema
        raise InvalidDefinitionError(
            "from_json_schema()", "document", "is nested too deeply to import; no real schema nests so deep"
        ) from None
    silent = tuple(dict.fromkeys(importer.silent))  # a typeless schema converts its object keywords more than once
    return ImportedSchema(
        root,
        exported,
        tuple(importer.unsupported),
        open_by_silence=silent,
        dialect=dialect,
        size=size,
        formats=formats,
        metaschemas=used,
    )
