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
    ToolFailedError,
    ToolNotFoundError,
)
from hermes_core._base._errors import InputRejected, reject
from hermes_core._base._issues import ISSUES_MAX, MAX_LISTED_ISSUES, format_path, shorten

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
    ToolFailedError.from_exception("fs.read", OSError(5, "I/O error reading /home/ada/.ssh/id_rsa"), call_id="call-1"),
]


def issues_at(count: int) -> list[Issue]:
    return [Issue((n,), "type", "must be a string, got integer") for n in range(count)]


def test_the_seven_codes_and_classes_match_the_reference_table() -> None:
    table = {type(error).__name__: error.code for error in EXAMPLES}
    assert table == {
        "SchemaError": "SCHEMA_INVALID",
        "InputInvalidError": "INPUT_INVALID",
        "OutputInvalidError": "OUTPUT_INVALID",
        "PermissionDeniedError": "PERMISSION_DENIED",
        "ToolNotFoundError": "TOOL_NOT_FOUND",
        "InvalidDefinitionError": "INVALID_DEFINITION",
        "ToolFailedError": "TOOL_FAILED",
    }
    assert {code.value for code in ErrorCode} == set(table.values())


def test_every_error_is_importable_from_the_package() -> None:
    for error in EXAMPLES:
        assert getattr(hermes_core, type(error).__name__) is type(error)
    assert hermes_core.ToolError is ToolError


def test_the_modules_list_their_public_names() -> None:
    from hermes_core._base import _errors as errors
    from hermes_core._base import _issues as issues

    assert {"InputRejected", "reject", "ToolError"} <= set(errors.__all__)
    assert {"Issue", "shorten", "format_path", "format_message"} <= set(issues.__all__)
    for module in (errors, issues):
        for name in module.__all__:
            if name != "IssueKind":  # a Literal alias, documented by the comment above it
                assert getattr(module, name).__doc__, name


def test_tool_error_extends_exception_and_nothing_else() -> None:
    assert ToolError.__bases__ == (Exception,)
    for error in EXAMPLES:
        assert isinstance(error, ToolError)
        foreign = [c for c in type(error).__mro__ if c.__module__ not in ("hermes_core._base._errors", "builtins")]
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
        "PermissionDeniedError": (
            ("tool", "permission", "reason", "detail"),
            ("tool", "permission", "reason", "detail"),
        ),
        "ToolNotFoundError": (("name", "suggestions"), ("name", "suggestions")),
        "InvalidDefinitionError": (("declaration", "field", "detail"), ("declaration", "field", "detail")),
        "ToolFailedError": (
            ("tool", "reason", "detail", "exception", "call_id", "retryable"),
            ("tool", "reason", "detail", "exception", "call_id"),
        ),
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
    assert data["retryable"] is error.retryable
    assert data["retryable"] is (error.code in ("INPUT_INVALID", "TOOL_NOT_FOUND"))  # TOOL_FAILED: per instance


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
        "reason": "not_granted",
        "detail": None,
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
    "ToolFailedError": {
        "code": "TOOL_FAILED",
        "message": (
            "fs.read failed: its handler raised OSError.\n"
            "This is a fault in the tool, not in how it was called. Calling it again will not help: "
            "use another tool, or tell the user."
        ),
        "retryable": False,
        "tool": "fs.read",
        "reason": "raised",
        "detail": None,
        "exception": "OSError",
        "call_id": "call-1",
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
        ToolFailedError.timed_out("fs.read", 2.5, call_id="call-2"),
        ToolFailedError("the weather service is down", retryable=True),
        ToolFailedError("the weather service is down", retryable=True).with_context("weather.get", "call-3"),
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

# The two advice lines of TOOL_FAILED: neither asks for other arguments.
LATER = "This is a fault in the tool, not in how it was called. The same call may work if it is made again later."
FINAL = (
    "This is a fault in the tool, not in how it was called. Calling it again will not help: "
    "use another tool, or tell the user."
)


def _decode_error() -> json.JSONDecodeError:
    try:
        json.loads('{"token": "s3cr3t"')
    except json.JSONDecodeError as error:
        return error
    raise AssertionError("unreachable")


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
        "failed, raised",
        ToolFailedError.from_exception("fs.read", OSError(5, "I/O error"), call_id="call-1"),
        "fs.read failed: its handler raised OSError.\n" + FINAL,
    ),
    (
        "failed, raised an exception of a module, retryable",
        ToolFailedError.from_exception("fs.read", _decode_error(), call_id="call-1", retryable=True),
        "fs.read failed: its handler raised json.decoder.JSONDecodeError.\n" + LATER,
    ),
    (
        "failed, timed out",
        ToolFailedError.timed_out("fs.read", 2.5, call_id="call-2"),
        "fs.read did not finish within 2.5 seconds.\n" + LATER,
    ),
    (
        "failed, timed out after one second",
        ToolFailedError.timed_out("fs.read", 1.0, call_id="call-2"),
        "fs.read did not finish within 1 second.\n" + LATER,
    ),
    (
        "failed, reported by the handler, retryable",
        ToolFailedError("the weather service is down", retryable=True).with_context("weather.get", "call-3"),
        "weather.get failed: the weather service is down.\n" + LATER,
    ),
    (
        "failed, reported by the handler, final",
        ToolFailedError("the account is closed").with_context("weather.get", "call-3"),
        "weather.get failed: the account is closed.\n" + FINAL,
    ),
    (
        "failed, reported without a detail",
        ToolFailedError(tool="weather.get"),
        "weather.get failed.\n" + FINAL,
    ),
    (
        "failed, reported, before a runtime names the tool",
        ToolFailedError("the weather service is down", retryable=True),
        "the tool failed: the weather service is down.\n" + LATER,
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
_SUBJECT = re.compile(
    r'(value|input|output|fs\.\w+|weather\.\w+|the tool|"[^"]+"|tool "fs\.write":|s\.\w+\(.*?\)|Runtime\(\):) '
)


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
@pytest.mark.parametrize("count", [ISSUES_MAX + 1, ISSUES_MAX + 2, 5 * ISSUES_MAX])
def test_past_issues_max_an_error_keeps_the_first_and_says_checking_stopped(make: Any, count: int) -> None:
    error = make(issues_at(count))
    assert error.issues == tuple(issues_at(ISSUES_MAX + 1))
    lines = str(error).splitlines()
    assert lines[0].endswith(f" (more than {ISSUES_MAX} problems):")
    assert sum(1 for line in lines if line.startswith('- "')) == MAX_LISTED_ISSUES
    assert [line for line in lines if line.startswith("- ...")] == [
        f"- ... and more: checking stopped after {ISSUES_MAX + 1} problems."
    ]


def test_issues_max_issues_are_all_kept_and_counted() -> None:
    error = SchemaError(issues_at(ISSUES_MAX))
    assert len(error.issues) == ISSUES_MAX
    assert str(error).splitlines()[0] == f"value is invalid ({ISSUES_MAX} problems):"
    assert str(error).splitlines()[-1] == f"- ... and {ISSUES_MAX - MAX_LISTED_ISSUES} more."


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


class HostileKey(str):
    """A str whose comparison, hash, text and methods all raise: only its plain value is safe to read."""

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("the key's own code ran")

    __eq__ = __ne__ = __hash__ = __str__ = __repr__ = __format__ = __len__ = __getitem__ = __iter__ = _refuse
    replace = strip = lower = isascii = encode = _refuse


class HostileIndex(int):
    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError("the index's own code ran")

    __eq__ = __hash__ = __str__ = __repr__ = __format__ = _refuse


def test_a_path_is_written_without_running_the_code_of_a_subclassed_key_or_index() -> None:
    assert format_path(("b",)) == "b"  # "b" is now in the module's cache of written keys
    assert format_path((HostileKey("b"),)) == "b"
    assert format_path((HostileKey("a.b"), HostileIndex(3), HostileKey("x"))) == "['a.b'].3.x"
    assert format_path((HostileIndex(0),)) == "0"
    issue = Issue((HostileKey("b"), HostileIndex(1)), "type", "must be a string, got integer")
    assert issue.message() == '"b.1" must be a string, got integer'
    assert str(SchemaError([issue])) == 'value is invalid: "b.1" must be a string, got integer.'
    assert str(InputInvalidError("t.x", [issue])).startswith('t.x was called with invalid input: "b.1" must')


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


# -- a tool that failed -------------------------------------------------------------------


class UnreachableError(Exception):
    """An exception of this module: its name is qualified by the module's."""


def test_tool_failed_golden_to_dict_of_each_reason() -> None:
    assert ToolFailedError.timed_out("fs.read", 2.5, call_id="call-2").to_dict() == {
        "code": "TOOL_FAILED",
        "message": "fs.read did not finish within 2.5 seconds.\n" + LATER,
        "retryable": True,
        "tool": "fs.read",
        "reason": "timeout",
        "detail": "did not finish within 2.5 seconds",
        "exception": None,
        "call_id": "call-2",
    }
    reported = ToolFailedError("the weather service is down", retryable=True)
    assert reported.to_dict() == {
        "code": "TOOL_FAILED",
        "message": "the tool failed: the weather service is down.\n" + LATER,
        "retryable": True,
        "tool": "",
        "reason": "reported",
        "detail": "the weather service is down",
        "exception": None,
        "call_id": None,
    }
    assert reported.with_context("weather.get", "call-3").to_dict() == {
        "code": "TOOL_FAILED",
        "message": "weather.get failed: the weather service is down.\n" + LATER,
        "retryable": True,
        "tool": "weather.get",
        "reason": "reported",
        "detail": "the weather service is down",
        "exception": None,
        "call_id": "call-3",
    }
    raised = ToolFailedError.from_exception(
        "net.get", UnreachableError("10.0.0.7 refused"), call_id="c", retryable=True
    )
    assert raised.to_dict() == {
        "code": "TOOL_FAILED",
        "message": f"net.get failed: its handler raised {__name__}.UnreachableError.\n" + LATER,
        "retryable": True,
        "tool": "net.get",
        "reason": "raised",
        "detail": None,
        "exception": f"{__name__}.UnreachableError",
        "call_id": "c",
    }


@pytest.mark.parametrize(
    "error",
    [
        OSError(13, "Permission denied: '/home/ada/.aws/credentials'"),
        _decode_error(),
        RuntimeError("SELECT * FROM users WHERE token = 's3cr3t'"),
        KeyError("s3cr3t"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_tool_failed_never_shows_the_exception_text(error: Exception) -> None:
    failed = ToolFailedError.from_exception("db.query", error, call_id="call-9")
    shown = json.dumps(failed.to_dict()) + str(failed) + repr(failed.args)
    for secret in ("s3cr3t", "/home/ada", "credentials", "SELECT", "Permission denied"):
        assert secret not in shown
    assert failed.__cause__ is error  # kept for the log, not shown
    assert failed.exception in ("PermissionError", "json.decoder.JSONDecodeError", "RuntimeError", "KeyError")


def test_tool_failed_names_the_exception_type_qualified_unless_builtin() -> None:
    def name(error: BaseException) -> str | None:
        return ToolFailedError.from_exception("t", error, call_id="c").exception

    assert name(ZeroDivisionError()) == "ZeroDivisionError"
    assert name(FileNotFoundError()) == "FileNotFoundError"
    assert name(_decode_error()) == "json.decoder.JSONDecodeError"

    class LocalError(Exception):
        pass

    assert (
        name(LocalError())
        == f"{__name__}.test_tool_failed_names_the_exception_type_qualified_unless_builtin.<locals>.LocalError"
    )


def test_tool_failed_keeps_the_call_id_in_the_data_not_in_the_message() -> None:
    failed = ToolFailedError.from_exception("fs.read", OSError(), call_id="call-5f3a")
    assert failed.call_id == failed.to_dict()["call_id"] == "call-5f3a"
    assert "call-5f3a" not in str(failed)


def test_tool_failed_retryable_is_per_instance_and_defaults_to_false() -> None:
    assert ToolFailedError.retryable is False
    assert ToolFailedError().retryable is False
    assert ToolFailedError("down", retryable=True).retryable is True
    assert ToolFailedError.from_exception("t", ValueError(), call_id="c").retryable is False
    assert ToolFailedError.from_exception("t", ValueError(), call_id="c", retryable=True).retryable is True
    assert ToolFailedError.timed_out("t", 3, call_id="c").retryable is True


def test_tool_failed_reasons() -> None:
    assert ToolFailedError("x").reason == "reported"
    assert ToolFailedError.from_exception("t", ValueError(), call_id="c").reason == "raised"
    assert ToolFailedError.timed_out("t", 3, call_id="c").reason == "timeout"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (2.5, "2.5 seconds"),
        (30, "30 seconds"),
        (30.0, "30 seconds"),
        (1, "1 second"),
        (0.25, "0.25 seconds"),
        (1 / 3, "0.333 seconds"),
        (0.0001, "0.0001 seconds"),
        (90061, "90061 seconds"),
    ],
)
def test_tool_failed_timed_out_says_how_long_it_waited(seconds: float, shown: str) -> None:
    failed = ToolFailedError.timed_out("fs.read", seconds, call_id="c")
    assert failed.detail == f"did not finish within {shown}"
    assert str(failed).splitlines()[0] == f"fs.read did not finish within {shown}."


@pytest.mark.parametrize(
    ("seconds", "exception"),
    [
        (0, ValueError),
        (-1.0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        ("2", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_tool_failed_timed_out_refuses_a_duration_that_is_not_one(seconds: Any, exception: type[Exception]) -> None:
    with pytest.raises(exception, match="seconds must be"):
        ToolFailedError.timed_out("fs.read", seconds, call_id="c")


def test_with_context_names_the_tool_and_keeps_everything_else() -> None:
    try:
        try:
            raise TimeoutError("upstream 10.0.0.7 timed out")
        except TimeoutError as upstream:
            raise ToolFailedError("the weather service did not answer", retryable=True) from upstream
    except ToolFailedError as raised:
        original = raised
    named = original.with_context("weather.get", "call-7")
    assert named is not original
    assert (named.tool, named.call_id) == ("weather.get", "call-7")
    assert (named.detail, named.retryable, named.reason, named.exception) == (
        original.detail,
        original.retryable,
        original.reason,
        original.exception,
    )
    assert named.__cause__ is original
    assert isinstance(original.__cause__, TimeoutError)
    assert (original.tool, original.call_id) == ("", None)  # the original is not changed
    raised_copy = ToolFailedError.from_exception("a.b", OSError(), call_id="1").with_context("c.d", "2")
    assert (raised_copy.reason, raised_copy.exception, raised_copy.tool) == ("raised", "OSError", "c.d")


def test_tool_failed_takes_a_blank_detail_as_none() -> None:
    assert ToolFailedError("").detail is None
    assert ToolFailedError("   ", tool="t").message.splitlines()[0] == "t failed."


def test_tool_failed_with_a_detail_and_an_exception_shows_both() -> None:
    failed = ToolFailedError("while reading the index", tool="t", reason="raised", exception="OSError")
    assert str(failed).splitlines()[0] == "t failed: its handler raised OSError; while reading the index."


@pytest.mark.parametrize(
    ("kwargs", "exception", "match"),
    [
        ({"detail": 7}, TypeError, "detail must be a str or None"),
        ({"detail": ValueError("boom")}, TypeError, "detail must be a str or None"),
        ({"retryable": 1}, TypeError, "retryable must be a bool"),
        ({"retryable": "yes"}, TypeError, "retryable must be a bool"),
        ({"reason": "crashed"}, ValueError, "reason must be raised, timeout, reported or answered"),
    ],
)
def test_tool_failed_refuses_programming_mistakes(
    kwargs: dict[str, Any], exception: type[Exception], match: str
) -> None:
    with pytest.raises(exception, match=match):
        ToolFailedError(**kwargs)


def test_tool_failed_is_a_tool_error_and_pickles_with_its_instance_retryable() -> None:
    failed = ToolFailedError.timed_out("fs.read", 2.5, call_id="call-2")
    assert isinstance(failed, ToolError)
    copy = pickle.loads(pickle.dumps(failed))
    assert (type(copy), copy.retryable, copy.reason, copy.detail) == (ToolFailedError, True, "timeout", failed.detail)
    assert str(copy) == str(failed)


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
