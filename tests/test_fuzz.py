"""Fuzz targets: whatever a model sends, a bundled tool and ``schema.parse`` raise nothing but their own errors.

Each target draws inputs with Hypothesis: well-formed calls, nearly
well-formed ones (a field of the wrong type, an extra field, a hostile
path), and values no JSON decoder makes (NaN, tuples, bytes, cycles, deep
nesting, subclasses whose methods raise). A call must return its output or
raise a ``ToolError``; ``parse`` must return or raise ``SchemaError``. Two
targets bound what an attack made long: integers past Python's int-string
limit in an adapter's arguments (an answer, never a ``ValueError``), and
patterns of imported documents (checked in linear time, or reported). Two
draw imported documents, hostile nestings of the in-place keywords
(``if``, ``not``, ``unevaluated*``...) and resources whose anchors, dynamic or
not, ``$dynamicRef`` s and ``$ref`` s cross: each is imported and checked in
bounded CPU time, and finds a value valid exactly when jsonschema does.

The suite runs each target derandomized with a small budget
(``HERMESOS_FUZZ_EXAMPLES``, 150 by default); ``python3 dev.py fuzz`` runs
them with a large one and reports what was tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import sys
import time
from typing import Any

import hermes_fs
import hermes_math
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, Runtime, SchemaError, ToolError
from hermes_core import schema as s

EXAMPLES = int(os.environ.get("HERMESOS_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=os.environ.get("HERMESOS_FUZZ_RANDOM") != "1",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    database=None,
)


class Hostile(str):
    """A string whose comparison and hash raise once armed: nothing may call them and crash."""

    armed = False

    def __eq__(self, other: object) -> bool:
        if Hostile.armed:
            raise RuntimeError("eq")
        return str.__eq__(self, other)

    def __hash__(self) -> int:
        if Hostile.armed:
            raise RuntimeError("hash")
        return str.__hash__(self)


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner, max_size=5),
    max_leaves=20,
)
ODD = st.sampled_from(
    [
        math.nan,
        math.inf,
        -math.inf,
        (1, 2),
        b"bytes",
        {1, 2},
        object(),
        "\ud800",
        10**400,
        _nested(100_000),
        _cycle(),
    ]
)
ANY = st.one_of(JSON, ODD)
# Values whose own methods raise are tried one by one, outside Hypothesis (which hashes what it draws).
HOSTILE_KEY = Hostile("k")
HOSTILE: list[Any] = [Hostile("x"), {HOSTILE_KEY: 1}, {"path": Hostile("notes")}, {"expression": Hostile("1+1")}]
Hostile.armed = True  # built: now they bite
PATHS = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "../etc/passwd",
            "/etc/passwd",
            "a/../../b",
            "~/x",
            "",
            ".",
            "..",
            "a\x00b",
            "link/../x",
            "dir/",
            "con",
            "a" * 300,
            "\ud800",
            "//x",
            "a/./b",
            "pipe",
            "notes/todo.txt/",
        ]
    ),
)


def _fields(value_for: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Inputs around an object of these fields: right ones, wrong types, missing and extra fields, non-objects."""
    right = st.fixed_dictionaries({}, optional=value_for)
    return st.one_of(
        right,
        right.flatmap(lambda d: st.dictionaries(st.sampled_from(sorted(value_for)), ANY).map(lambda w: {**d, **w})),
        right.map(lambda d: {**d, "surprise": 1}),
        ANY,
    )


FS_INPUTS: dict[str, st.SearchStrategy[Any]] = {
    "fs.read": _fields({"path": PATHS, "offset": st.integers(), "limit": st.integers()}),
    "fs.write": _fields(
        {
            "path": PATHS,
            "content": st.text(max_size=100),
            "mode": st.sampled_from(["overwrite", "create", "x"]),
            "create_parents": st.booleans(),
        }
    ),
    "fs.list": _fields({"path": PATHS, "offset": st.integers(), "limit": st.integers()}),
    "fs.stat": _fields({"path": PATHS}),
    "fs.mkdir": _fields({"path": PATHS, "parents": st.booleans()}),
    "fs.delete": _fields({"path": PATHS}),
}


@pytest.fixture(scope="module")
def fs_runtime(tmp_path_factory: pytest.TempPathFactory) -> Runtime:
    root = tmp_path_factory.mktemp("fuzz-root")
    (root / "notes").mkdir()
    (root / "notes" / "todo.txt").write_text("buy milk\n")
    (root / "link").symlink_to(root / "notes")
    os.mkfifo(root / "pipe")  # refused by type before it is opened: never a hang
    tools = hermes_fs.make_tools(root, max_read_bytes=4096, max_write_bytes=4096)
    return Runtime(tools, grants=["*"], schemas=hermes_fs.hermes_schemas())


def _report(target: str, tried: int) -> None:
    """Say what a target tried (shown by ``python3 dev.py fuzz``, which runs pytest with ``-s``)."""
    print(f"\nfuzz {target}: {tried} inputs tried, none raised anything but its own errors")


def _only_tool_errors(runtime: Runtime, tool: str, value: Any) -> None:
    with contextlib.suppress(ToolError):  # anything else fails the test
        runtime.call_sync(tool, value, timeout=10)


@pytest.mark.parametrize("tool", sorted(FS_INPUTS))
def test_a_file_tool_raises_nothing_but_tool_errors(fs_runtime: Runtime, tool: str) -> None:
    tried = [0]

    @FUZZ
    @given(FS_INPUTS[tool])
    def run(value: Any) -> None:
        tried[0] += 1
        _only_tool_errors(fs_runtime, tool, value)

    run()
    for value in HOSTILE:
        _only_tool_errors(fs_runtime, tool, value)
    _report(tool, tried[0] + len(HOSTILE))


EXPRESSIONS = st.one_of(
    st.text(max_size=60),
    st.text(alphabet="0123456789+-*/%().e ,abcdefghijklmnopqrstuvwxyz_[]{}'\"", max_size=80),
    st.sampled_from(
        [
            "9**9**9",
            "(" * 5000 + "1" + ")" * 5000,
            "1" * 5000,
            "__import__('os')",
            "().__class__",
            "sqrt(-1)",
            "1/0",
            "log(0)",
            "10.0**400",
            "round(1e308*10)",
        ]
    ),
)


def test_math_eval_raises_nothing_but_tool_errors() -> None:
    runtime = Runtime([hermes_math.math_eval])
    tried = [0]

    @FUZZ
    @given(_fields({"expression": EXPRESSIONS}))
    def run(value: Any) -> None:
        tried[0] += 1
        _only_tool_errors(runtime, "math.eval", value)

    run()
    for value in HOSTILE:
        _only_tool_errors(runtime, "math.eval", value)
    _report("math.eval", tried[0] + len(HOSTILE))


SCHEMAS = [
    s.object(
        {"path": s.string(min_length=1, pattern="^[a-z/]+$"), "size": s.optional(s.integer(minimum=0), default=0)}
    ),
    s.array(s.union(s.string(), s.number(maximum=1e6), s.null()), max_items=50),
    s.record(s.nullable(s.boolean())),
    s.object({"tags": s.array(s.enum(["a", "b", 1, 2.5, None]))}, extra="allow"),
    s.any(),
]


@pytest.mark.parametrize("index", range(len(SCHEMAS)))
def test_parse_raises_nothing_but_schema_errors(index: int) -> None:
    schema = SCHEMAS[index]
    tried = [0]

    @FUZZ
    @given(ANY)
    def run(value: Any) -> None:
        tried[0] += 1
        with contextlib.suppress(SchemaError):  # anything else fails the test
            schema.parse(value)

    run()
    for value in HOSTILE:
        with contextlib.suppress(SchemaError):
            schema.parse(value)
    _report(f"schema.parse #{index}", tried[0] + len(HOSTILE))


# -- the adapters: whatever a model sends as a tool call, a message comes back ------------------


def _as_text(value: Any) -> str:
    """*value* written as a model might send it, or as far as it can be (deep or cyclic values raise)."""
    try:
        return json.dumps(value, default=repr)
    except (ValueError, TypeError, RecursionError):
        return "{"


WIRE_NAMES = st.one_of(
    st.sampled_from(["math_eval", "math.eval", "fs_read", "fs_write", "MATH_EVAL", "", "math_eval\x00"]),
    st.text(max_size=70),
)
ARGUMENT_TEXTS = st.one_of(
    st.text(max_size=200),
    st.sampled_from(['{"expression": "1+1"}', '{"expression": 1}', "{", "[]", "null", "NaN", "1e999", '"x"', "{}" * 3]),
    st.builds(lambda depth: "[" * depth + "]" * depth, st.integers(min_value=0, max_value=50_000)),
    _fields({"expression": EXPRESSIONS}).map(_as_text),
)


def test_an_adapter_answers_every_tool_call_with_a_message() -> None:
    from hermes_core.adapters import AnthropicTools, OpenAITools

    runtime = Runtime([hermes_math.math_eval])
    chat, strict, responses = (
        OpenAITools(runtime),
        OpenAITools(runtime, strict=True),
        OpenAITools(runtime, api="responses"),
    )
    anthropic = AnthropicTools(runtime)
    tried = [0]

    @FUZZ
    @given(WIRE_NAMES, ARGUMENT_TEXTS, _fields({"expression": EXPRESSIONS}), st.sampled_from([0, 1, 2]))
    def run(name: str, text: str, value: Any, shape: int) -> None:
        tried[0] += 1
        call: Any = {"id": "c", "function": {"name": name, "arguments": text}}
        if shape == 1:
            call = {"id": "c", "function": {"name": name, "arguments": value}}  # not text: taken as given
        elif shape == 2:
            call = value
        for adapter in (chat, strict):
            message = adapter.handle_sync(call)
            assert message["role"] == "tool"
            assert isinstance(message["content"], str)
        item = responses.handle_sync({"call_id": "c", "name": name, "arguments": text})
        assert isinstance(item["output"], str)
        block = anthropic.handle_sync({"id": "c", "name": name, "input": value})
        assert isinstance(block["content"], str)
        assert isinstance(block["is_error"], bool)

    run()
    _report("adapters", tried[0])


# Integers past Python's int-string limit (4,300 digits), anywhere in the arguments a model sends.
HUGE_INTEGERS = st.builds(
    lambda digits, sign: sign + "9" * digits, st.integers(min_value=4_250, max_value=6_000), st.sampled_from(["", "-"])
)
HUGE_PLACES = st.sampled_from(
    [
        '{"expression": %s}',
        '{"expression": "1+1", "extra": %s}',
        '{"expression": [1, {"n": %s}]}',
        "%s",
        "[%s]",
        '{"expression": %s, "expression": "1"}',
    ]
)


def test_an_adapter_answers_a_huge_integer_with_a_message() -> None:
    """A 4,301+-digit integer in a model's arguments is INPUT_INVALID (or a result), never a ValueError."""
    from hermes_core.adapters import AnthropicTools, OpenAITools

    runtime = Runtime([hermes_math.math_eval])
    openai, strict, anthropic = OpenAITools(runtime), OpenAITools(runtime, strict=True), AnthropicTools(runtime)
    tried = [0]

    @FUZZ
    @given(HUGE_INTEGERS, HUGE_PLACES, st.booleans())
    def run(number: str, place: str, asynchronous: bool) -> None:
        tried[0] += 1
        text = place % number
        for adapter in (openai, strict):
            call = {"id": "c", "function": {"name": "math_eval", "arguments": text}}
            message = asyncio.run(adapter.handle(call)) if asynchronous else adapter.handle_sync(call)
            if len(number.lstrip("-")) > sys.get_int_max_str_digits():
                assert message["content"].startswith(
                    "INPUT_INVALID: math_eval was called with invalid input: input holds an integer of"
                )
            else:  # read, then checked: any answer, as long as it is one
                assert isinstance(message["content"], str)
        block = anthropic.handle_sync({"id": "c", "name": "math_eval", "input": text})
        assert isinstance(block["content"], str)
        assert isinstance(block["is_error"], bool)

    run()
    _report("adapters with huge integers", tried[0])


# Patterns as imported documents write them: ECMA-262 syntax, catastrophic shapes, and what RE2 refuses.
PATTERN_PARTS = st.sampled_from(
    ["a", "a+", "(a+)+", "(a|a)*", "(a*)*", "\\d", "\\s", "\\S", ".", "[^]", "[]", "[\\b]", "\\1", "(?=a)", "(?<n>a)",
     "\\u00e9", "\\ud800", "\\p{Letter}", "\\p{L", "\\cJ", "{2}", "{1001}", "^", "$", "|", "(", ")", "[", "]", "\\"]
)  # fmt: skip
PATTERNS = st.lists(PATTERN_PARTS, max_size=8).map("".join) | st.text(max_size=20)
SUBJECTS = st.one_of(
    st.text(max_size=40),
    st.builds(lambda count, end: "a" * count + end, st.integers(min_value=0, max_value=5_000), st.sampled_from("!a\n")),
)


def test_an_imported_pattern_is_checked_in_bounded_time_or_reported() -> None:
    """Any pattern imports (checked, or listed as unchecked) and parses any text quickly, raising only its errors."""
    tried = [0]

    @FUZZ
    @given(PATTERNS, SUBJECTS, st.booleans())
    def run(pattern: str, subject: str, as_key: bool) -> None:
        tried[0] += 1
        if as_key:
            document: dict[str, Any] = {"type": "object", "patternProperties": {pattern: {"type": "integer"}}}
            value: Any = {subject: 1}
        else:
            document, value = {"type": "string", "pattern": pattern}, subject
        try:
            imported = s.from_json_schema(document)
        except InvalidDefinitionError:
            return
        started = time.process_time()
        with contextlib.suppress(SchemaError):
            imported.parse(value)
        assert time.process_time() - started < 1.0  # CPU time, linear: a backtracking engine took seconds here

    run()
    _report("imported patterns", tried[0])


# -- imported documents of the in-place keywords: hostile nestings of if, not and unevaluated* ---------------------

_LEAVES = st.sampled_from(
    [
        True,
        False,
        {},
        {"type": "object"},
        {"type": "array"},
        {"type": "integer"},
        {"type": "string"},
        {"const": 1},
        {"enum": [1, "a", None]},
        {"required": ["a"]},
        {"properties": {"a": {"type": "integer"}}},
        {"prefixItems": [{"type": "integer"}]},
        {"dependentRequired": {"a": ["b"]}},
        {"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
        {"propertyNames": {"maxLength": 1}, "minProperties": 1},
        {"if": {"required": ["a"]}, "then": {"properties": {"a": {"default": 1}}}},
        {"$ref": "#/$defs/d"},
    ]
)
_KEYWORDS = ("not", "if", "then", "else", "allOf", "anyOf", "oneOf", "unevaluatedProperties", "unevaluatedItems",
             "dependentSchemas", "contains", "items", "propertyNames", "additionalProperties")  # fmt: skip


def _applied(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A schema object of the keywords *pairs* name, each holding the schema drawn for it."""
    doc: dict[str, Any] = {}
    for keyword, sub in pairs:
        if keyword in ("allOf", "anyOf", "oneOf"):
            doc[keyword] = [sub, {"required": ["b"]}]
        elif keyword == "dependentSchemas":
            doc[keyword] = {"a": sub}
        elif keyword == "propertyNames":
            doc[keyword] = {"not": sub} if isinstance(sub, dict) else sub
        else:
            doc[keyword] = sub
    return doc


HOSTILE_DOCUMENTS = st.recursive(
    _LEAVES,
    lambda inner: st.lists(st.tuples(st.sampled_from(_KEYWORDS), inner), min_size=1, max_size=4).map(_applied),
    max_leaves=24,
).map(lambda root: {"$defs": {"d": {"anyOf": [root, {"not": root}], "unevaluatedProperties": root}}, **(
    root if isinstance(root, dict) else {"allOf": [root]})})  # fmt: skip
SMALL_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["a", "b", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=12,
)


def _jsonschema_says(document: dict[str, Any], value: Any) -> bool | None:
    """Whether jsonschema finds *value* valid; None where it recurses forever (the schema applies itself in place)."""
    import jsonschema

    try:
        return jsonschema.Draft202012Validator(document).is_valid(value)
    except RecursionError:
        return None
    except BaseException as error:  # a Rust extension under jsonschema (rpds) turns that RecursionError into a panic
        if type(error).__name__ != "PanicException":
            raise
        return None


def test_an_imported_document_of_in_place_keywords_agrees_with_jsonschema_in_bounded_time() -> None:
    """Hostile nestings of if/not/unevaluated*/$ref: valid exactly when jsonschema says, in bounded CPU time.

    The compiled check and the walk find the same issues in the same order.
    """

    from hermes_core.schema._compile import closed_validator

    tried = [0]

    @FUZZ
    @given(HOSTILE_DOCUMENTS, SMALL_JSON)
    def run(document: dict[str, Any], value: Any) -> None:
        tried[0] += 1
        try:
            imported = s.from_json_schema(document)
        except InvalidDefinitionError:
            return
        assert imported.unsupported == ()
        started = time.process_time()
        validator = closed_validator(imported)
        compiled = validator.run(value)
        assert time.process_time() - started < 5.0  # CPU time; each (node, value) is worked out once
        assert compiled == validator.walk(value)  # the compiled check finds what the walk finds, in its order
        valid = compiled[0]
        if any(issue.kind == "too_deep" for issue in compiled[2]):
            # A schema that applies itself in place forever ({"not": {"$ref": "#"}}): no answer to agree with.
            # jsonschema gives one only where it stops early ({"not": true, "allOf": [...]} stops at not).
            return
        expected = _jsonschema_says(document, value)
        if expected is not None:
            assert valid == expected, (document, value)

    run()
    _report("imported in-place keywords", tried[0])


# -- imported documents of $dynamicRef: scopes entered and left, recursion, in-place keywords beside -------------

_DYNAMIC_NAMES = ("a", "b")
_DYNAMIC_LEAVES = st.sampled_from(
    [
        True,
        False,
        {},
        {"type": "integer"},
        {"type": "string"},
        {"type": "object"},
        {"required": ["a"]},
        {"properties": {"a": {"type": "integer"}}},
        {"prefixItems": [{"type": "integer"}]},
        {"$dynamicRef": "#a"},
        {"$dynamicRef": "#b"},
        {"$dynamicRef": "r1#a"},
        {"$dynamicRef": "r2#b"},
        {"$dynamicRef": "root#/$defs/r0"},
        {"$ref": "r0"},
        {"$ref": "r1"},
        {"$ref": "r2"},
        {"$ref": "root#/$defs/anchor_b"},  # by its pointer: a $ref, even where anchor_b's anchor is dynamic
    ]
)
_DYNAMIC_SCHEMAS = st.recursive(
    _DYNAMIC_LEAVES,
    lambda inner: st.lists(st.tuples(st.sampled_from(_KEYWORDS), inner), min_size=1, max_size=3).map(_applied),
    max_leaves=12,
)


def _absolute(schema: Any, uri: str) -> Any:
    """*schema* with each ref that is a fragment alone (``#a``) written with *uri* before it.

    jsonschema (its ``referencing``) resolves a ref inside the target of a
    ``$dynamicRef`` against the base of the resource the ``$dynamicRef`` first
    named, not against the target's own: written whole, such a ref means the
    same to both. (It also resolves a ``$ref`` to an anchor that is a
    ``$dynamicAnchor`` as a ``$dynamicRef``, where 2020-12 makes it a plain
    ref: the documents drawn have no such ``$ref``.)
    """
    if isinstance(schema, list):
        return [_absolute(item, uri) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: uri + value if key in ("$ref", "$dynamicRef") and str(value).startswith("#") else _absolute(value, uri)
        for key, value in schema.items()
    }


def _resource(body: Any, anchors: list[tuple[bool, Any]], uri: str) -> dict[str, Any]:
    """*body* as a schema resource at *uri* whose anchors a and b are each dynamic or not, and their schemas."""
    resource = {"$id": uri, **(body if isinstance(body, dict) else {"allOf": [body]})}
    resource["$defs"] = {
        f"anchor_{name}": {("$dynamicAnchor" if dynamic else "$anchor"): name, "allOf": [_absolute(schema, uri)]}
        for name, (dynamic, schema) in zip(_DYNAMIC_NAMES, anchors, strict=True)
    }
    return resource


_ANCHORS = st.lists(st.tuples(st.booleans(), _DYNAMIC_SCHEMAS), min_size=2, max_size=2)


def _dynamic_document(root: tuple[Any, Any], resources: list[tuple[Any, Any]]) -> dict[str, Any]:
    """A root resource and three resources r0, r1, r2 in its $defs, each with anchors a and b: refs cross them all."""
    document = _resource(*root, "https://example.com/root")
    for index, (body, anchors) in enumerate(resources):
        document["$defs"][f"r{index}"] = _resource(body, anchors, f"https://example.com/r{index}")
    return document


DYNAMIC_DOCUMENTS = st.builds(
    _dynamic_document,
    st.tuples(_DYNAMIC_SCHEMAS, _ANCHORS),
    st.lists(st.tuples(_DYNAMIC_SCHEMAS, _ANCHORS), min_size=3, max_size=3),
)


def test_an_imported_document_of_dynamic_refs_agrees_with_jsonschema_in_bounded_time() -> None:
    """Resources whose anchors are dynamic or not, refs across them, in-place keywords: valid when jsonschema says.

    The compiled check and the walk find the same issues in the same order.
    """

    from hermes_core.schema._compile import closed_validator

    tried = [0]

    @FUZZ
    @given(DYNAMIC_DOCUMENTS, SMALL_JSON)
    def run(document: dict[str, Any], value: Any) -> None:
        tried[0] += 1
        started = time.process_time()
        try:
            imported = s.from_json_schema(document)
        except InvalidDefinitionError:  # a ref that reaches only itself, or scopes past the import's bound
            assert time.process_time() - started < 5.0
            return
        assert imported.unsupported == ()
        validator = closed_validator(imported)
        compiled = validator.run(value)
        assert time.process_time() - started < 5.0  # CPU time: import and check
        assert compiled == validator.walk(value)
        if any(issue.kind == "too_deep" for issue in compiled[2]):
            return  # a schema that applies itself in place forever: no answer to agree with (as above)
        expected = _jsonschema_says(document, value)
        if expected is not None:
            assert compiled[0] == expected, (document, value)

    run()
    _report("imported dynamic refs", tried[0])
