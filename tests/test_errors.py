from __future__ import annotations

import json
import pickle
import re
from typing import Any, ClassVar

import pytest

import hermes_core
from hermes_core import (
    ErrorCode,
    InputInvalidError,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    PermissionDeniedError,
    SchemaError,
    ToolError,
    ToolNotFoundError,
)
from hermes_core.errors import MAX_LISTED_ISSUES, InputRejected, format_path, reject, shorten

ISSUE = Issue(("files", 0, "path"), "type", "must be a string, got integer")
MODE = Issue(("mode",), "enum", 'must be one of "w", "a"')
TYPO = Issue(("contnets",), "unexpected", 'is an unexpected field; did you mean "contents"?')
ROOT = Issue((), "type", "must be an object, got null")
SEMVER = "must be a semantic version such as '1.0.0', got '1.0'"

EXAMPLES: list[ToolError] = [
    SchemaError([ISSUE]),
    InputInvalidError("fs.write", [ISSUE]),
    OutputInvalidError("fs.write", [ROOT]),
    PermissionDeniedError("fs.write", "fs:write"),
    ToolNotFoundError("fs_write", ["fs.write"]),
    InvalidDefinitionError('tool "fs.write"', "version", SEMVER),
]


def issues_at(count: int) -> list[Issue]:
    return [Issue((n,), "type", "must be a string, got integer") for n in range(count)]


def test_the_six_codes_and_classes_match_the_reference_table() -> None:
    table = {type(error).__name__: error.code for error in EXAMPLES}
    assert table == {
        "SchemaError": "SCHEMA_INVALID",
        "InputInvalidError": "INPUT_INVALID",
        "OutputInvalidError": "OUTPUT_INVALID",
        "PermissionDeniedError": "PERMISSION_DENIED",
        "ToolNotFoundError": "TOOL_NOT_FOUND",
        "InvalidDefinitionError": "INVALID_DEFINITION",
    }
    assert {code.value for code in ErrorCode} == set(table.values())


def test_every_error_is_importable_from_the_package() -> None:
    for error in EXAMPLES:
        assert getattr(hermes_core, type(error).__name__) is type(error)
    assert hermes_core.ToolError is ToolError


def test_the_module_lists_its_public_names() -> None:
    from hermes_core import errors

    assert {"InputRejected", "reject", "shorten", "format_path", "ToolError"} <= set(errors.__all__)
    for name in errors.__all__:
        if name != "IssueKind":  # a Literal alias, documented by the comment above it
            assert getattr(errors, name).__doc__, name


def test_tool_error_extends_exception_and_nothing_else() -> None:
    assert ToolError.__bases__ == (Exception,)
    for error in EXAMPLES:
        assert isinstance(error, ToolError)
        foreign = [c for c in type(error).__mro__ if c.__module__ not in ("hermes_core.errors", "builtins")]
        assert foreign == []


def test_tool_error_itself_cannot_be_raised() -> None:
    with pytest.raises(TypeError, match="abstract"):
        ToolError("boom")


def test_code_is_a_plain_string_too() -> None:
    error = InputInvalidError("t", [ISSUE])
    assert error.code == "INPUT_INVALID"
    assert str(error.code) == "INPUT_INVALID"
    assert json.dumps(error.code) == '"INPUT_INVALID"'


# -- the declaration: fields, to_dict, pickling ----------------------------------------


def test_each_class_declares_its_fields_once() -> None:
    declared = {type(error).__name__: (type(error).fields, type(error).dict_fields) for error in EXAMPLES}
    assert declared == {
        "SchemaError": (("issues", "subject"), ("path", "detail", "issues")),
        "InputInvalidError": (("tool", "issues"), ("tool", "issues")),
        "OutputInvalidError": (("tool", "issues"), ("tool", "issues")),
        "PermissionDeniedError": (("tool", "permission"), ("tool", "permission")),
        "ToolNotFoundError": (("name", "suggestions"), ("name", "suggestions")),
        "InvalidDefinitionError": (("declaration", "field", "detail"), ("declaration", "field", "detail")),
    }


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_to_dict_keys_are_the_common_three_then_the_declared_fields(error: ToolError) -> None:
    assert list(error.to_dict()) == ["code", "message", "retryable", *type(error).dict_fields]


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_to_dict_is_json_with_code_message_and_retryable(error: ToolError) -> None:
    data = error.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["code"] == error.code
    assert data["message"] == str(error) == error.message
    assert data["retryable"] is (error.code in ("INPUT_INVALID", "TOOL_NOT_FOUND"))


GOLDEN_DICTS: dict[str, dict[str, Any]] = {
    "SchemaError": {
        "code": "SCHEMA_INVALID",
        "message": 'value is invalid: "files.0.path" must be a string, got integer.',
        "retryable": False,
        "path": ["files", 0, "path"],
        "detail": "must be a string, got integer",
        "issues": [
            {
                "path": ["files", 0, "path"],
                "kind": "type",
                "detail": "must be a string, got integer",
                "message": '"files.0.path" must be a string, got integer',
            }
        ],
    },
    "InputInvalidError": {
        "code": "INPUT_INVALID",
        "message": (
            'fs.write was called with invalid input: "files.0.path" must be a string, got integer.\n'
            "Fix the arguments and call fs.write again."
        ),
        "retryable": True,
        "tool": "fs.write",
        "issues": [
            {
                "path": ["files", 0, "path"],
                "kind": "type",
                "detail": "must be a string, got integer",
                "message": '"files.0.path" must be a string, got integer',
            }
        ],
    },
    "OutputInvalidError": {
        "code": "OUTPUT_INVALID",
        "message": (
            "fs.write returned invalid output: output must be an object, got null.\n"
            "This is a fault in the tool, not in how it was called. Calling it again will not help."
        ),
        "retryable": False,
        "tool": "fs.write",
        "issues": [
            {
                "path": [],
                "kind": "type",
                "detail": "must be an object, got null",
                "message": "output must be an object, got null",
            }
        ],
    },
    "PermissionDeniedError": {
        "code": "PERMISSION_DENIED",
        "message": (
            'fs.write requires the "fs:write" permission, which was not granted.\n'
            "Retrying with different arguments will not help."
        ),
        "retryable": False,
        "tool": "fs.write",
        "permission": "fs:write",
    },
    "ToolNotFoundError": {
        "code": "TOOL_NOT_FOUND",
        "message": '"fs_write" is not a registered tool name.\nCall a registered tool instead, such as "fs.write".',
        "retryable": True,
        "name": "fs_write",
        "suggestions": ["fs.write"],
    },
    "InvalidDefinitionError": {
        "code": "INVALID_DEFINITION",
        "message": "tool \"fs.write\": version must be a semantic version such as '1.0.0', got '1.0'.",
        "retryable": False,
        "declaration": 'tool "fs.write"',
        "field": "version",
        "detail": SEMVER,
    },
}


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_to_dict_golden(error: ToolError) -> None:
    assert error.to_dict() == GOLDEN_DICTS[type(error).__name__]


@pytest.mark.parametrize(
    "error",
    [
        *EXAMPLES,
        SchemaError([ISSUE, MODE], subject="input"),
        InputInvalidError("fs.write", issues_at(25)),
        ToolNotFoundError("x"),
        InvalidDefinitionError("s.array()", None, "is wrong"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_pickling_round_trips(error: ToolError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.to_dict() == error.to_dict()
    for name in type(error).fields:
        assert getattr(copy, name) == getattr(error, name)


@pytest.mark.parametrize(
    "error",
    [reject("path", "does not exist"), InputRejected([ISSUE, MODE])],
    ids=["one", "several"],
)
def test_input_rejected_pickles(error: InputRejected) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is InputRejected
    assert copy.issues == error.issues
    assert str(copy) == str(error)


# A new code is an ErrorCode member plus a class like this one (an existing code stands in).
class _FlakyError(ToolError):
    code = ErrorCode.OUTPUT_INVALID
    retryable = False
    fields = ("tool", "reason", "retryable")

    def __init__(self, tool: str, reason: str, *, retryable: bool = False) -> None:
        self.tool = tool
        self.reason = reason
        self.retryable = retryable
        super().__init__(f"{tool} failed: {reason}.")


def test_a_new_code_is_declared_and_may_make_retryable_an_instance_field() -> None:
    assert _FlakyError.dict_fields == ("tool", "reason")
    assert _FlakyError.retryable is False
    error = _FlakyError("net.get", "the server timed out", retryable=True)
    assert error.to_dict() == {
        "code": "OUTPUT_INVALID",
        "message": "net.get failed: the server timed out.",
        "retryable": True,
        "tool": "net.get",
        "reason": "the server timed out",
    }
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.retryable, copy.to_dict()) == (_FlakyError, True, error.to_dict())
    assert _FlakyError("net.get", "refused").to_dict()["retryable"] is False


def test_a_declaration_the_constructor_cannot_take_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match=r"does not take the fields \['reason'\]"):

        class _WrongError(ToolError):
            code = ErrorCode.OUTPUT_INVALID
            fields = ("tool", "reason")

            def __init__(self, tool: str) -> None:
                super().__init__(tool)

    with pytest.raises(TypeError, match="tuple of attribute names"):

        class _NotATupleError(ToolError):
            fields: ClassVar[Any] = ["tool"]


# -- golden messages: one per code and shape --------------------------------------------

GOLDEN_MESSAGES: list[tuple[str, ToolError | InputRejected, str]] = [
    (
        "schema, one issue",
        SchemaError([ISSUE]),
        'value is invalid: "files.0.path" must be a string, got integer.',
    ),
    (
        "schema, at the root",
        SchemaError([Issue((), "type", "must be a string, got integer")], subject="input"),
        "input is invalid: input must be a string, got integer.",
    ),
    (
        "schema, several issues",
        SchemaError([ISSUE, MODE]),
        "value is invalid (2 problems):\n"
        '- "files.0.path" must be a string, got integer.\n'
        '- "mode" must be one of "w", "a".',
    ),
    (
        "input, one issue",
        InputInvalidError("fs.write", [ISSUE]),
        'fs.write was called with invalid input: "files.0.path" must be a string, got integer.\n'
        "Fix the arguments and call fs.write again.",
    ),
    (
        "input, a detail that asks a question",
        InputInvalidError("fs.write", [TYPO]),
        'fs.write was called with invalid input: "contnets" is an unexpected field; did you mean "contents"?\n'
        "Fix the arguments and call fs.write again.",
    ),
    (
        "input, several issues",
        InputInvalidError("fs.write", [ISSUE, MODE, TYPO]),
        "fs.write was called with invalid input (3 problems):\n"
        '- "files.0.path" must be a string, got integer.\n'
        '- "mode" must be one of "w", "a".\n'
        '- "contnets" is an unexpected field; did you mean "contents"?\n'
        "Fix the arguments and call fs.write again.",
    ),
    (
        "output, one issue",
        OutputInvalidError("fs.write", [Issue(("size",), "type", "must be an integer, got string")]),
        'fs.write returned invalid output: "size" must be an integer, got string.\n'
        "This is a fault in the tool, not in how it was called. Calling it again will not help.",
    ),
    (
        "output, several issues",
        OutputInvalidError("fs.write", [ROOT, Issue(("size",), "too_small", "must be at least 0")]),
        "fs.write returned invalid output (2 problems):\n"
        "- output must be an object, got null.\n"
        '- "size" must be at least 0.\n'
        "This is a fault in the tool, not in how it was called. Calling it again will not help.",
    ),
    (
        "permission",
        PermissionDeniedError("fs.write", "fs:write"),
        'fs.write requires the "fs:write" permission, which was not granted.\n'
        "Retrying with different arguments will not help.",
    ),
    (
        "not found, one suggestion",
        ToolNotFoundError("fs_write", ["fs.write"]),
        '"fs_write" is not a registered tool name.\nCall a registered tool instead, such as "fs.write".',
    ),
    (
        "not found, two suggestions",
        ToolNotFoundError("x", ["a.b", "a.c"]),
        '"x" is not a registered tool name.\nCall a registered tool instead, such as "a.b" or "a.c".',
    ),
    (
        "not found, three suggestions",
        ToolNotFoundError("fs.wirte", ["fs.write", "fs.wipe", "fs.wait"]),
        '"fs.wirte" is not a registered tool name.\n'
        'Call a registered tool instead, such as "fs.write", "fs.wipe" or "fs.wait".',
    ),
    (
        "not found, no suggestion",
        ToolNotFoundError("zzz"),
        '"zzz" is not a registered tool name.\nCall a registered tool instead.',
    ),
    (
        "definition, a field",
        InvalidDefinitionError('tool "fs.write"', "version", SEMVER),
        "tool \"fs.write\": version must be a semantic version such as '1.0.0', got '1.0'.",
    ),
    (
        "definition, the whole declaration",
        InvalidDefinitionError("s.array()", None, "is wrong"),
        "s.array() is wrong.",
    ),
    (
        "definition, a detail that closes itself",
        InvalidDefinitionError("s.ref('a.b')", None, "only refers to itself; a named schema must describe a value."),
        "s.ref('a.b') only refers to itself; a named schema must describe a value.",
    ),
    (
        "definition, a detail ending in a parenthesis",
        InvalidDefinitionError("Runtime()", "providers[0]", "must have a method check(tool, permission)"),
        "Runtime(): providers[0] must have a method check(tool, permission).",
    ),
    (
        "rejected, one issue",
        reject("path", "does not exist under the root; list the directory with fs.list"),
        'input was rejected: "path" does not exist under the root; list the directory with fs.list.',
    ),
    (
        "rejected, several issues",
        InputRejected([ISSUE, Issue((), "invalid", "names no file")]),
        'input was rejected (2 problems):\n- "files.0.path" must be a string, got integer.\n- input names no file.',
    ),
]


@pytest.mark.parametrize(("error", "message"), [g[1:] for g in GOLDEN_MESSAGES], ids=[g[0] for g in GOLDEN_MESSAGES])
def test_golden_message(error: Exception, message: str) -> None:
    assert str(error) == message


# The subjects of the golden messages: a value's name, a tool name, a quoted name, a declaration.
_SUBJECT = re.compile(r'(value|input|output|fs\.\w+|"[^"]+"|tool "fs\.write":|s\.\w+\(.*?\)|Runtime\(\):) ')


@pytest.mark.parametrize(("error", "message"), [g[1:] for g in GOLDEN_MESSAGES], ids=[g[0] for g in GOLDEN_MESSAGES])
def test_every_message_follows_the_one_format(error: Exception, message: str) -> None:
    lines = message.split("\n")
    # It starts with its subject as written, never a capitalised filler word.
    assert _SUBJECT.match(lines[0]), lines[0]
    assert not re.match(r"(No|The|A|An|Error|Invalid)\b", message)
    # A header ending in ":" is followed by its list; every other line is closed.
    for index, line in enumerate(lines):
        if line.endswith(":"):
            assert re.search(r" \(\d+ problems\):\Z", line)
            assert index == 0
            assert lines[1].startswith("- ")
        else:
            assert line[-1] in ".?!", line
    listed = [line for line in lines if line.startswith("- ")]
    if listed:
        assert f"({len(listed)} problems)" in lines[0]


@pytest.mark.parametrize(
    "make",
    [
        SchemaError,
        lambda i: InputInvalidError("t", i),
        lambda i: OutputInvalidError("t", i),
        InputRejected,
    ],
    ids=["schema", "input", "output", "rejected"],
)
@pytest.mark.parametrize(("count", "more"), [(20, None), (21, "- ... and 1 more."), (22, "- ... and 2 more.")])
def test_long_issue_lists_are_bounded_and_say_how_many_more(make: Any, count: int, more: str | None) -> None:
    error = make(issues_at(count))
    lines = str(error).splitlines()
    assert f"({count} problems):" in lines[0]
    assert sum(1 for line in lines if line.startswith('- "')) == MAX_LISTED_ISSUES == 20
    assert [line for line in lines if line.startswith("- ...")] == ([more] if more else [])
    assert len(error.issues) == count


def test_a_long_list_keeps_every_issue_in_the_data() -> None:
    assert len(InputInvalidError("t", issues_at(25)).to_dict()["issues"]) == 25


def test_tool_not_found_quotes_an_odd_name_safely_and_briefly() -> None:
    message = str(ToolNotFoundError('a"b\nc' + "x" * 500))
    first, advice = message.split("\n")
    assert first.startswith('"a\\"b\\nc')
    shown = first.removesuffix(" is not a registered tool name.")
    assert len(shown) == 80
    assert shown.endswith('..."')
    assert advice == "Call a registered tool instead."


def test_tool_not_found_shows_a_name_that_is_not_a_string_by_its_repr() -> None:
    assert str(ToolNotFoundError(42)).startswith("42 is not a registered tool name.")  # type: ignore[arg-type]


def test_invalid_definition_keeps_the_detail_as_written() -> None:
    error = InvalidDefinitionError('tool "fs.write"', "version", SEMVER)
    assert error.detail == SEMVER
    rewrapped = InvalidDefinitionError(f"plugin x: {error.declaration}", error.field, error.detail)
    assert str(rewrapped).endswith("got '1.0'.")


def test_errors_refuse_an_empty_issue_list() -> None:
    for make in (SchemaError, lambda i: InputInvalidError("t", i), lambda i: OutputInvalidError("t", i), InputRejected):
        with pytest.raises(ValueError, match="at least one issue"):
            make([])


def test_messages_name_paths_and_types_never_the_value() -> None:
    # The details come from the schema; the errors add only names, paths and counts.
    error = InputInvalidError("auth.login", [Issue(("token",), "too_small", "must have at least 32 characters, got 7")])
    assert "hunter2" not in str(error)
    assert str(error).startswith('auth.login was called with invalid input: "token" must have at least 32 characters')


# -- a handler refusing its input ---------------------------------------------------------


def test_input_rejected_is_not_a_tool_error() -> None:
    error = reject("path", "does not exist")
    assert isinstance(error, InputRejected)
    assert isinstance(error, Exception)
    assert not isinstance(error, ToolError)
    assert not issubclass(InputRejected, ToolError)


@pytest.mark.parametrize(
    ("path", "segments", "shown"),
    [
        ("path", ("path",), '"path"'),
        (0, (0,), '"0"'),
        (("files", 0, "path"), ("files", 0, "path"), '"files.0.path"'),
        (["files", 1], ("files", 1), '"files.1"'),
        ((), (), "input"),
        ("a.b", ("a.b",), "\"['a.b']\""),
    ],
)
def test_reject_takes_a_key_an_index_or_a_path(path: Any, segments: tuple[str | int, ...], shown: str) -> None:
    error = reject(path, "is not usable here")
    assert error.issues == (Issue(segments, "invalid", "is not usable here"),)
    assert str(error) == f"input was rejected: {shown} is not usable here."


def test_reject_takes_another_kind() -> None:
    error = reject("contents", "must be at most 1 MiB for this tool", kind="too_big")
    assert error.issues[0].kind == "too_big"
    assert error.issues[0].detail == "must be at most 1 MiB for this tool"


def test_a_rejection_becomes_an_input_error_of_the_tool() -> None:
    rejected = reject("path", "does not exist under the root; list the directory with fs.list")
    error = InputInvalidError("fs.read", rejected.issues)
    assert str(error) == (
        'fs.read was called with invalid input: "path" does not exist under the root; '
        "list the directory with fs.list.\n"
        "Fix the arguments and call fs.read again."
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "exception", "match"),
    [
        (("path", "x"), {"kind": "nonsense"}, ValueError, "kind must be one of"),
        (("path", "x"), {"kind": 3}, TypeError, "kind must be a str"),
        (("path", ""), {}, ValueError, "detail must say what was wrong"),
        (("path", "   "), {}, ValueError, "detail must say what was wrong"),
        (("path", None), {}, TypeError, "detail must be a str"),
        ((None, "x"), {}, TypeError, "path must be a key, an index"),
        ((b"path", "x"), {}, TypeError, "path must be a key, an index"),
        ((True, "x"), {}, TypeError, "segments must be str keys or int indices"),
        ((("a", 1.5), "x"), {}, TypeError, "segments must be str keys or int indices"),
        ((("a", -1), "x"), {}, ValueError, "must not be negative"),
    ],
)
def test_reject_refuses_programming_mistakes(
    args: tuple[Any, ...], kwargs: dict[str, Any], exception: type[Exception], match: str
) -> None:
    with pytest.raises(exception, match=match):
        reject(*args, **kwargs)


def test_input_rejected_takes_issues_only() -> None:
    with pytest.raises(TypeError, match="takes Issue items"):
        InputRejected(["path does not exist"])  # type: ignore[list-item]
    error = InputRejected(iter([ISSUE]))
    assert error.issues == (ISSUE,)


# -- shortening and the path quoting rule -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [("fs.write", 60, "fs.write"), ("x" * 60, 60, "x" * 60), ("x" * 61, 60, "x" * 57 + "..."), ("abcdef", 5, "ab...")],
)
def test_shorten(text: str, limit: int, shown: str) -> None:
    assert shorten(text, limit) == shown
    assert len(shorten(text, limit)) <= limit


@pytest.mark.parametrize(
    ("path", "written"),
    [
        (("files", 0, "path"), "files.0.path"),
        ((0,), "0"),
        (("a-b", "_x"), "a-b._x"),
        (("headers", "a.b"), "headers['a.b']"),
        (("",), "['']"),
        (("list", "0"), "list['0']"),
        (("has space", 1), "['has space'].1"),
        (("it's",), "['it\\'s']"),
        (("back\\slash",), "['back\\\\slash']"),
        (("new\nline",), "['new\\u000aline']"),
        (("lone\ud800",), "['lone\\ud800']"),
        (("café",), "['café']"),
        (("1abc", "x"), "['1abc'].x"),
    ],
)
def test_paths_are_written_unambiguously(path: tuple[str | int, ...], written: str) -> None:
    assert format_path(path) == written
    assert format_path(path) == written  # the second time, from the remembered keys


def test_a_very_long_key_is_shortened_in_messages_but_kept_in_data() -> None:
    key = "k." * 200
    issue = Issue((key,), "unexpected", "is an unexpected field")
    assert format_path((key,)) == f"['{'k.' * 38}k...']"
    assert len(issue.message()) < 120
    assert issue.to_dict()["path"] == [key]


def test_issue_message_is_a_clause_the_error_closes() -> None:
    assert ISSUE.message() == '"files.0.path" must be a string, got integer'
    assert ROOT.message("output") == "output must be an object, got null"
