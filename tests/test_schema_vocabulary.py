"""``$schema``, ``$vocabulary`` and ``format`` of an imported document: read as its meta-schema says, fetching nothing.

A document whose ``$schema`` names a meta-schema the caller holds
(``from_json_schema(metaschemas=)``) is read with the vocabularies that
meta-schema's ``$vocabulary`` declares: the keywords of one it leaves out are
not checked, and an unknown one it requires refuses the document, as JSON
Schema says. One the import neither knows nor holds is read as 2020-12 and
listed in ``unsupported``. ``formats=False`` reads ``format`` as 2020-12's
default does, an annotation.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core import InvalidDefinitionError, Runtime, SchemaError, define_tool
from hermes_core import schema as s

VOCAB = "https://json-schema.org/draft/2020-12/vocab/"
META = "https://example.com/meta/no-validation"


def _meta(uri: str, *names: str, **more: bool) -> dict[str, Any]:
    """A meta-schema at *uri* requiring the 2020-12 vocabularies *names*, and the vocabularies *more* by URI."""
    vocabulary = {VOCAB + name: True for name in ("core", *names)}
    vocabulary.update({key.replace("_", "/"): value for key, value in more.items()})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": uri, "$vocabulary": vocabulary}


def _valid(schema: s.Schema, value: Any) -> bool:
    try:
        schema.parse(value)
    except SchemaError:
        return False
    return True


DOCUMENT = {
    "$schema": META,
    "type": "object",
    "properties": {"gone": False, "n": {"type": "integer", "minimum": 10}, "tags": {"items": False}},
    "required": ["n"],
}


def test_a_meta_schema_without_the_validation_vocabulary_makes_its_keywords_annotations() -> None:
    metaschemas = {META: _meta(META, "applicator", "unevaluated")}
    imported = s.from_json_schema(DOCUMENT, metaschemas=metaschemas, strict=True)
    assert imported.unsupported == ()
    assert imported.parse({"n": "three"}) == {"n": "three"}  # type and minimum are not checked, nor required
    assert imported.parse({}) == {}
    assert not _valid(imported, {"gone": 1})  # the applicator vocabulary still applies: properties, false
    assert not _valid(imported, {"tags": [1]})  # items: false
    assert imported.json_schema() == DOCUMENT  # exported as written
    # The positive control: read as 2020-12 itself, the same keywords are assertions.
    standard = s.from_json_schema({**DOCUMENT, "$schema": "https://json-schema.org/draft/2020-12/schema"})
    assert not _valid(standard, {"n": "three"})
    assert not _valid(standard, {})


def test_a_meta_schema_without_the_applicator_vocabulary_applies_no_subschema() -> None:
    metaschemas = {META: _meta(META, "validation")}
    imported = s.from_json_schema(DOCUMENT, metaschemas=metaschemas)
    assert imported.parse({"n": "three", "gone": 1, "tags": [1]}) == {"n": "three", "gone": 1, "tags": [1]}
    assert not _valid(imported, [])  # type is validation's: still checked
    assert not _valid(imported, {})  # required too


@pytest.mark.parametrize("how", ["vocabulary", "formats"])
def test_how_a_document_is_read_holds_where_a_tool_closes_its_input(how: str) -> None:
    """A tool's input is imported again, closed: with the same meta-schema, or the same formats=."""
    document = {**DOCUMENT, "properties": {**DOCUMENT["properties"], "at": {"format": "date"}}}
    if how == "vocabulary":  # no format vocabulary: format is not a keyword of the document
        imported = s.from_json_schema(document, metaschemas={META: _meta(META, "applicator", "validation")})
    else:
        imported = s.from_json_schema({**document, "$schema": "https://json-schema.org/draft/2020-12/schema"},
                                      formats=False)  # fmt: skip
    tool = define_tool(name="t.x", description="d", version="1.0.0", input=imported, handler=lambda args: "ok")
    runtime = Runtime([tool])
    assert tool.input is not imported  # imported again, closed
    assert runtime.call_sync("t.x", {"n": 10, "at": "not a date"}) == "ok"
    assert not _valid(tool.input, {"n": 10, "other": 1})  # closed, as a tool's input is
    assert not _valid(tool.input, {"n": 1})  # minimum still checked: the positive control


@pytest.mark.parametrize(
    ("optional", "expected"),
    [(False, None), (True, "requires the vocabulary 'https://example.com/vocab/odd'")],
)
def test_an_unknown_vocabulary_refuses_the_document_only_when_required(optional: bool, expected: str | None) -> None:
    metaschemas = {META: _meta(META, "applicator", "validation", **{"https://example.com/vocab/odd": optional})}
    if expected is None:
        imported = s.from_json_schema(DOCUMENT, metaschemas=metaschemas)
        assert not _valid(imported, {"n": "three"})
        return
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(DOCUMENT, metaschemas=metaschemas)
    assert str(caught.value).startswith(
        "from_json_schema(): $vocabulary of the meta-schema 'https://example.com/meta/no-validation' requires the "
        "vocabulary 'https://example.com/vocab/odd', which this import does not know; JSON Schema says a document "
        "whose meta-schema requires an unknown vocabulary must not be read."
    )


def test_a_meta_schema_without_vocabulary_reads_every_one_of_its_dialect() -> None:
    meta = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": META}
    imported = s.from_json_schema(DOCUMENT, metaschemas={META: meta}, strict=True)
    assert not _valid(imported, {"n": "three"})
    assert imported.parse({"n": 10}) == {"n": 10}
    draft7 = s.from_json_schema(
        {"$schema": META, "items": [{"type": "string"}]},
        metaschemas={META: {"$schema": "http://json-schema.org/draft-07/schema#"}},
    )
    assert draft7.dialect == "draft-07"  # the meta-schema's own $schema says the dialect
    assert not _valid(draft7, [1])


def test_a_meta_schema_neither_known_nor_held_is_read_as_2020_12_and_listed() -> None:
    imported = s.from_json_schema(DOCUMENT)
    assert [str(note) for note in imported.unsupported] == [
        "$schema at the root names 'https://example.com/meta/no-validation', a meta-schema this import neither "
        "knows nor was given in metaschemas= (it fetches nothing): the document is read as 2020-12, with all its "
        "vocabularies, so a keyword of a vocabulary of that meta-schema's own is not checked"
    ]
    assert not _valid(imported, {"n": "three"})
    with pytest.raises(InvalidDefinitionError, match=r"\$schema at the root names 'https://example.com/meta/"):
        s.from_json_schema(DOCUMENT, strict=True)
    # The positive control: the dialects' own meta-schemas are known.
    for known in ("https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#"):
        assert s.from_json_schema({"$schema": known}, strict=True).unsupported == ()


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"metaschemas": [META]}, "metaschemas must be a mapping of meta-schema URIs to meta-schemas, got list"),
        ({"metaschemas": {META: "x"}}, "metaschemas['https://example.com/meta/no-validation'] must be a meta-schema"),
        ({"metaschemas": {META: {"$vocabulary": [VOCAB + "core"]}}}, "$vocabulary of the meta-schema "),
        ({"metaschemas": {META: {"$vocabulary": {VOCAB + "core": "yes"}}}}, "each true (required) or false"),
        ({"formats": "no"}, "formats must be True or False, got 'no'"),
    ],
)
def test_a_malformed_option_or_meta_schema_is_a_definition_error(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.from_json_schema(DOCUMENT, **options)
    assert problem in str(caught.value)


def test_formats_false_reads_format_as_an_annotation() -> None:
    document = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
    asserted = s.from_json_schema(document)
    assert not _valid(asserted, {"at": "yesterday"})  # the default: the eight formats known are checked
    annotated = s.from_json_schema(document, formats=False)
    assert annotated.parse({"at": "yesterday"}) == {"at": "yesterday"}
    assert annotated.json_schema() == document
    assert not _valid(annotated, {"at": 5})  # type is still checked


def test_the_format_assertion_vocabulary_asserts_formats_and_lists_those_it_cannot() -> None:
    metaschemas = {META: _meta(META, "applicator", "validation", "format-assertion")}
    document = {"$schema": META, "properties": {"ip": {"format": "ipv4"}, "host": {"format": "idn-hostname"}}}
    imported = s.from_json_schema(document, metaschemas=metaschemas, formats=False)
    assert not _valid(imported, {"ip": "not an address"})  # asserted, whatever formats= says
    assert imported.parse({"ip": "127.0.0.1"}) == {"ip": "127.0.0.1"}
    assert [str(note) for note in imported.unsupported] == [
        "format at /properties/host names 'idn-hostname', a format this import cannot check, though the "
        "meta-schema's format-assertion vocabulary asks for every format to be; the import checks date-time, "
        "date, time, email, uri, uuid, ipv4, ipv6"
    ]
