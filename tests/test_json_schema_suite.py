"""The official JSON-Schema-Test-Suite (draft 2020-12) against ``s.from_json_schema``.

Each test of the suite's files taken is one case:
``from_json_schema(schema).parse(data)`` succeeds exactly when the suite says
the data is valid, in the default mode (JSON Schema's semantics: not strict,
objects open), with two things given as the suite asks: the meta-schemas its
tests name by ``$schema`` (:data:`METASCHEMAS`, passed as a caller that holds
them passes them, in ``metaschemas=``: the import fetches nothing), and, for
``format.json`` alone, ``formats=False`` (``format`` an annotation, 2020-12's
default; every other file runs with the eight formats the import knows
asserted, its default). A case whose schema uses what the import cannot
check is in :data:`EXCLUDED`, with why; the import must then report that
keyword (``.unsupported``), and ``strict=True`` must refuse the schema. A
case the import gets wrong today would be in :data:`KNOWN_BUGS`, an expected
failure (strict: a fixed bug fails until its entry is removed); there is none.

The suite is not in the repository: ``python3 dev.py test`` (or ``suite``)
fetches the copy in the pinned jsonschema release's source distribution into
``.cache/``; the variable ``JSON_SCHEMA_TEST_SUITE`` may name a checkout of the
suite instead.

Files taken: every file of the draft's required tests, and the optional ones
of what the import does: ``bignum`` and ``float-overflow`` (numbers are
Python's, of any size), ``ecmascript-regex`` and ``non-bmp-regex`` (the
dialect ``pattern`` is written in), ``dependencies-compatibility``, unknown
keywords, ``$anchor``, ``$id`` and ``$dynamicRef`` forms, ``format-assertion``
and the formats the import asserts. Excluded, all of them refs to documents
elsewhere, which the import never fetches: ``refRemote.json``, five groups
of ``dynamicRef.json`` (refs to the suite's ``remotes/``) and the two refs to
the 2020-12 meta-schema by its URL (``ref.json``, ``defs.json``). Not taken:
the optional formats the import does not assert, and ``cross-draft`` (a
remote ref too).

Run as a script (``python3 dev.py suite``), this module prints a Markdown table
of the counts per file, from the same cases and tables as the tests.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError, SchemaError

ROOT = Path(__file__).resolve().parent.parent
DRAFT = "draft2020-12"
FORMATS = ("date-time", "date", "time", "email", "uri", "uuid", "ipv4", "ipv6")
FILES = (
    "type",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "enum",
    "const",
    "default",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if-then-else",
    "ref",
    "refRemote",
    "defs",
    "anchor",
    "dynamicRef",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "boolean_schema",
    "content",
    "format",
    "vocabulary",
    "infinite-loop-detection",
    "optional/bignum",
    "optional/float-overflow",
    "optional/ecmascript-regex",
    "optional/non-bmp-regex",
    "optional/dependencies-compatibility",
    "optional/unknownKeyword",
    "optional/refOfUnknownKeyword",
    "optional/anchor",
    "optional/id",
    "optional/no-schema",
    "optional/dynamicRef",
    "optional/format-assertion",
    *(f"optional/format/{name}" for name in FORMATS),
)

# The files whose cases read format as 2020-12 does by default, an annotation (from_json_schema(formats=False)):
# every other file runs with the default, the eight formats the import knows asserted.
ANNOTATED_FORMATS = frozenset({"format"})


def _metaschema(name: str, vocabularies: dict[str, bool]) -> dict[str, Any]:
    """The suite's ``remotes/draft2020-12/<name>.json``: a meta-schema declaring *vocabularies* (by short name)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"http://localhost:1234/draft2020-12/{name}.json",
        "$vocabulary": {
            (short if ":" in short else f"https://json-schema.org/draft/2020-12/vocab/{short}"): required
            for short, required in vocabularies.items()
        },
        "$dynamicAnchor": "meta",
        "allOf": [
            {"$ref": f"https://json-schema.org/draft/2020-12/meta/{name}"} for name in vocabularies if ":" not in name
        ],
    }


#: The meta-schemas the suite's tests name by ``$schema``, as the suite's ``remotes/`` holds them, given to the
#: import as a caller holds them (``metaschemas=``): the import fetches nothing, and the suite's copy of ``remotes/``
#: is not fetched either. Only their ``$vocabulary`` is read.
METASCHEMAS = {
    meta["$id"]: meta
    for meta in (
        _metaschema("metaschema-no-validation", {"applicator": True, "core": True}),
        _metaschema(
            "metaschema-optional-vocabulary",
            {"validation": True, "core": True, "http://localhost:1234/draft/2020-12/vocab/custom": False},
        ),
        _metaschema("format-assertion-false", {"core": True, "format-assertion": False}),
        _metaschema("format-assertion-true", {"core": True, "format-assertion": True}),
    )
}


def _load_dev() -> ModuleType:
    """dev.py, which knows where it fetches the suite to (it has no side effect when imported)."""
    spec = importlib.util.spec_from_file_location("_hermes_dev", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_dev = _load_dev()
FETCH = "run `python3 dev.py suite` (or `python3 dev.py test`) once to fetch it"


def suite_root() -> Path:
    """Where the suite is: ``JSON_SCHEMA_TEST_SUITE``, or where dev.py fetches the pinned release to."""
    named = os.environ.get(_dev.SUITE_VARIABLE)
    return Path(named) if named else _dev.SUITE_CACHE / _dev.suite_version()


def missing() -> str | None:
    """Why the suite cannot be read, with how to fetch it; None when it is there."""
    folder = suite_root() / "tests" / DRAFT
    if folder.is_dir():
        return None
    if os.environ.get(_dev.SUITE_VARIABLE):
        return f"{_dev.SUITE_VARIABLE} names {suite_root()}, which has no tests/{DRAFT}/ (it is not the suite)"
    return f"the JSON-Schema-Test-Suite is not in {folder.relative_to(ROOT)}: {FETCH}"


# -- the cases -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    """One test of the suite: *data* against the schema of its *group*, in *file*."""

    file: str
    group: str
    description: str
    schema: Any
    data: Any
    valid: bool

    @property
    def id(self) -> str:
        """``file/group/description``."""
        return f"{self.file}/{self.group}/{self.description}"


def cases() -> list[Case]:
    """Every test of :data:`FILES`, in the suite's order; none if the suite is missing."""
    if missing() is not None:
        return []
    found: list[Case] = []
    folder = suite_root() / "tests" / DRAFT
    for file in FILES:
        for group in json.loads((folder / f"{file}.json").read_text(encoding="utf-8")):
            for test in group["tests"]:
                found.append(
                    Case(file, group["description"], test["description"], group["schema"], test["data"], test["valid"])
                )
    return found


# -- what is not run, and what fails today -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Exclusion:
    """Why a group (or one test) is not run: its schema uses *keyword*, which the import does not support."""

    keyword: str
    reason: str


_REMOTE_REF = Exclusion(
    "$ref",
    "a remote ref (the meta-schema's URL): only refs within the document (pointer, $id or $anchor) are supported",
)
_REMOTE_DOCUMENT = Exclusion(
    "$ref",
    "a ref to a document of the suite's remotes/ (http://localhost:1234/...), which the import never fetches",
)

# Keyed by (file,) for a whole file, (file, group) for a whole group, or (file, group, test) for one test.
EXCLUDED: dict[tuple[str, ...], Exclusion] = {
    ("refRemote",): _REMOTE_DOCUMENT,
    ("ref", "remote ref, containing refs itself"): _REMOTE_REF,
    ("defs", "validate definition against metaschema"): _REMOTE_REF,
    ("dynamicRef", "strict-tree schema, guards against misspelled properties"): _REMOTE_DOCUMENT,
    ("dynamicRef", "tests for implementation dynamic anchor and reference link"): _REMOTE_DOCUMENT,
    ("dynamicRef", "$ref and $dynamicAnchor are independent of order - $defs first"): _REMOTE_DOCUMENT,
    ("dynamicRef", "$ref and $dynamicAnchor are independent of order - $ref first"): _REMOTE_DOCUMENT,
    ("dynamicRef", "$ref to $dynamicRef finds detached $dynamicAnchor"): _REMOTE_DOCUMENT,
}

# Bugs of from_json_schema, each with its cause: the cases it fails (expected failures, strict, so a
# fix fails until its entries go). For an excluded group, the entry is for its exclusion check.
KNOWN_BUGS: dict[tuple[str, ...], str] = {}


def _entry(table: dict[tuple[str, ...], Any], case: Case) -> Any:
    """The entry of *table* for *case*: its own, else its group's, else its file's; None if none."""
    for key in ((case.file, case.group, case.description), (case.file, case.group), (case.file,)):
        found = table.get(key)
        if found is not None:
            return found
    return None


def exclusion(case: Case) -> Exclusion | None:
    """Why *case* is not run, or None."""
    found: Exclusion | None = _entry(EXCLUDED, case)
    return found


def known_bug(case: Case) -> str | None:
    """Why *case* fails today, or None."""
    found: str | None = _entry(KNOWN_BUGS, case)
    return found


# -- running a case ------------------------------------------------------------------------------

# What the import may list in ``unsupported`` without changing what is valid: a default that does
# not match its schema is not applied, which JSON Schema (where a default is an annotation) agrees with.
_ANNOTATIONS = frozenset({"default"})


def import_case(case: Case, **options: Any) -> s.ImportedSchema:
    """The schema of *case* imported as the suite asks: with its meta-schemas, format asserted but in ``format``."""
    formats = case.file not in ANNOTATED_FORMATS
    return s.from_json_schema(case.schema, metaschemas=METASCHEMAS, formats=formats, **options)


def check(case: Case) -> str | None:
    """Run *case*: None if the import agrees with the suite, else what went wrong (one line)."""
    try:
        imported = import_case(case)
    except Exception as error:
        return f"from_json_schema raised {type(error).__name__}: {error}"
    unchecked = sorted({item.keyword for item in imported.unsupported} - _ANNOTATIONS)
    if unchecked:
        return f"the import reports {', '.join(unchecked)} unsupported: the case belongs in EXCLUDED"
    try:
        imported.parse(case.data)
    except SchemaError as error:
        return None if not case.valid else f"rejected valid data: {error}"
    except Exception as error:  # anything but SchemaError is a bug of parse
        return f"parse raised {type(error).__name__}: {error}"
    return None if case.valid else "accepted invalid data"


Result = Literal["passed", "failed", "excluded"]


def result(case: Case) -> Result:
    """How *case* does today."""
    if exclusion(case) is not None:
        return "excluded"
    return "passed" if check(case) is None else "failed"


# -- the tests -----------------------------------------------------------------------------------

CASES = cases()


def _require_suite() -> None:
    """Fail (in CI, or when JSON_SCHEMA_TEST_SUITE names no suite) or skip, saying how to fetch the suite."""
    problem = missing()
    if problem is None:
        return
    if os.environ.get("CI") or os.environ.get(_dev.SUITE_VARIABLE):
        pytest.fail(problem)
    pytest.skip(problem)


# Stands for the cases when the suite is missing, so that the tests say so rather than run nothing.
_NO_SUITE = pytest.param(None, id="the-suite-is-missing")


def _params() -> Iterator[Any]:
    if not CASES:
        yield _NO_SUITE
    for case in CASES:
        if exclusion(case) is not None:
            continue
        reason = known_bug(case)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_the_import_agrees_with_the_suite(case: Case | None) -> None:
    if case is None:
        _require_suite()
        return
    problem = check(case)
    assert problem is None, f"{problem}\nschema: {json.dumps(case.schema)}\ndata: {json.dumps(case.data)}"


def _excluded_schemas() -> Iterator[Any]:
    if not CASES:
        yield pytest.param(None, None, id="the-suite-is-missing")
    seen: set[tuple[str, str]] = set()
    for case in CASES:
        found = exclusion(case)
        if found is None or (case.file, case.group) in seen:
            continue
        seen.add((case.file, case.group))
        bug = KNOWN_BUGS.get((case.file, case.group))
        marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
        yield pytest.param(case.schema, found.keyword, id=f"{case.file}/{case.group}", marks=marks)


@pytest.mark.parametrize(("schema", "keyword"), list(_excluded_schemas()))
def test_an_excluded_schema_is_reported_and_refused_in_strict_mode(schema: Any, keyword: str | None) -> None:
    if keyword is None:
        _require_suite()
        return
    imported = s.from_json_schema(schema)
    assert keyword in {item.keyword for item in imported.unsupported}, imported.unsupported
    with pytest.raises(InvalidDefinitionError):
        s.from_json_schema(schema, strict=True)


def test_every_exclusion_and_known_bug_names_a_case() -> None:
    _require_suite()
    keys = {(case.file,) for case in CASES} | {(case.file, case.group) for case in CASES}
    keys |= {(case.file, case.group, case.description) for case in CASES}
    assert set(EXCLUDED) <= keys, set(EXCLUDED) - keys
    assert set(KNOWN_BUGS) <= keys, set(KNOWN_BUGS) - keys


def test_the_pinned_suite_release_satisfies_the_testing_extra() -> None:
    from packaging.requirements import Requirement

    with (ROOT / "pyproject.toml").open("rb") as file:
        testing = tomllib.load(file)["project"]["optional-dependencies"]["testing"]
    (requirement,) = [Requirement(line) for line in testing if Requirement(line).name == "jsonschema"]
    assert requirement.specifier.contains(_dev.suite_version()), (requirement, _dev.suite_version())


# -- export: the keywords issue 29 brought, through a tool's definitions --------------------------------------

#: The files of the keywords the import applies in place, of unevaluated* and of $dynamicRef: a tool whose input
#: uses them exports them as written, and what it exports, imported again, checks what the tool checks.
EXPORTED = (
    "if-then-else",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dynamicRef",
)


def _exported_groups() -> Iterator[Any]:
    if not CASES:
        yield pytest.param([], id="the-suite-is-missing")
    groups: dict[tuple[str, str], list[Case]] = {}
    for case in CASES:
        if case.file in EXPORTED and exclusion(case) is None:
            groups.setdefault((case.file, case.group), []).append(case)
    for (file, group), found in groups.items():
        yield pytest.param(found, id=f"{file}/{group}")


def _as_input(schema: Any) -> dict[str, Any]:
    """A tool's input whose field "value" is *schema*, a resource of its own (its refs resolve as they did)."""
    case = {"$id": "https://example.com/case", **schema} if isinstance(schema, dict) else schema
    return {"type": "object", "properties": {"value": {"$ref": "#/$defs/case"}}, "required": ["value"],
            "$defs": {"case": case}}  # fmt: skip


def _verdict(schema: s.Schema, value: Any) -> bool:
    try:
        schema.parse(value)
    except SchemaError:
        return False
    return True


@pytest.mark.parametrize("group", list(_exported_groups()))
def test_a_tool_exports_the_new_keywords_so_that_imported_again_they_check_the_same(group: list[Case]) -> None:
    if not group:
        _require_suite()
        return
    from hermes_core import InputInvalidError, Runtime, define_tool
    from hermes_core.adapters import OpenAITools
    from hermes_core.serve import mcp_tools

    again = s.from_json_schema(import_case(group[0]).json_schema())
    for case in group:  # the schema's own export
        assert _verdict(again, case.data) == case.valid, case.id
    tool = define_tool(name="suite.case", description="A case of the suite.", version="1.0.0",
                       input=s.from_json_schema(_as_input(group[0].schema)), handler=lambda args: "ok")  # fmt: skip
    runtime = Runtime([tool])
    exports = {
        "definitions": runtime.definitions()[0]["inputSchema"],
        "MCP tools/list": mcp_tools(runtime)[0]["inputSchema"],
        "OpenAI": OpenAITools(runtime).definitions()[0]["function"]["parameters"],
    }
    for where, exported in exports.items():
        assert exported["$defs"]["case"] == _as_input(group[0].schema)["$defs"]["case"] or where, where
        again = s.from_json_schema(exported)
        for case in group:
            try:
                called = runtime.call_sync("suite.case", {"value": case.data}) == "ok"
            except InputInvalidError:
                called = False
            assert _verdict(again, {"value": case.data}) == called, (where, case.id)
    # What strict mode cannot carry refuses the tool, saying why; it is never left out of what a model reads.
    refused = None
    try:
        strict = OpenAITools(runtime, strict=True).definitions()[0]["function"]["parameters"]
    except InvalidDefinitionError as error:
        refused = str(error)
    if refused is not None:
        assert "cannot be given to OpenAI's strict mode: " in refused
    else:
        written = json.dumps(strict)
        assert all(f'"{keyword}"' in written for keyword in _keywords(group[0].schema) & NEW_KEYWORDS), written


#: The keywords issue 29 brought.
NEW_KEYWORDS = frozenset(
    {
        *("if", "then", "else", "not", "dependentRequired", "dependentSchemas", "propertyNames"),
        *("contains", "minContains", "maxContains", "unevaluatedProperties", "unevaluatedItems"),
        *("$dynamicRef", "$dynamicAnchor"),
    }
)


def _keywords(schema: Any) -> set[str]:
    """Every key of every object in *schema*: the keywords it uses (and some names, which NEW_KEYWORDS leaves out)."""
    found: set[str] = set()
    pending = [schema]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.update(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


# -- the report ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    """The counts of one file: its tests, and how many pass, fail and are not run (with why)."""

    file: str
    tests: int = 0
    passed: int = 0
    failed: int = 0
    excluded: int = 0
    reasons: dict[str, int] = dataclasses.field(default_factory=dict)


def tally(found: Iterable[Case]) -> list[Row]:
    """The counts per file of *found*, in the order of :data:`FILES`."""
    rows = {file: Row(file) for file in FILES}
    for case in found:
        row = rows[case.file]
        row.tests += 1
        outcome = result(case)
        if outcome == "passed":
            row.passed += 1
        elif outcome == "failed":
            row.failed += 1
        else:
            excluded = exclusion(case)
            assert excluded is not None
            row.excluded += 1
            row.reasons[excluded.keyword] = row.reasons.get(excluded.keyword, 0) + 1
    return list(rows.values())


def markdown(rows: list[Row]) -> str:
    """The table of *rows*, and a total, in Markdown."""
    lines = [
        "| file | tests | passed | failed | excluded | excluded because the schema uses |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        why = ", ".join(f"`{keyword}` ({count})" for keyword, count in sorted(row.reasons.items()))
        lines.append(f"| {row.file} | {row.tests} | {row.passed} | {row.failed} | {row.excluded} | {why} |")
    total = Row("total")
    for row in rows:
        total.tests += row.tests
        total.passed += row.passed
        total.failed += row.failed
        total.excluded += row.excluded
    lines.append(f"| **total** | {total.tests} | {total.passed} | {total.failed} | {total.excluded} | |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the table; list the failures with ``-v``. 1 if a result disagrees with KNOWN_BUGS, 2 if no suite."""
    problem = missing()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    print(markdown(tally(CASES)))
    status = 0
    for case in CASES:
        if exclusion(case) is not None:
            continue
        problem = check(case)
        bug = known_bug(case)
        if problem is not None and bug is None:
            print(f"FAILS, not in KNOWN_BUGS: {case.id}: {problem}", file=sys.stderr)
            status = 1
        elif problem is None and bug is not None:
            print(f"PASSES, remove from KNOWN_BUGS: {case.id}", file=sys.stderr)
            status = 1
        elif problem is not None and "-v" in argv:
            print(f"known bug: {case.id}: {problem}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
