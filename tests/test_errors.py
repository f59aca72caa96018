from __future__ import annotations

import json
import pickle

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
from hermes_core.errors import format_path

ISSUE = Issue(("files", 0, "path"), "type", "must be a string, got integer")

EXAMPLES: list[ToolError] = [
    SchemaError([ISSUE]),
    InputInvalidError("fs.write", [ISSUE]),
    OutputInvalidError("fs.write", [Issue((), "type", "must be an object, got null")]),
    PermissionDeniedError("fs.write", "fs:write"),
    ToolNotFoundError("fs_write", ["fs.write"]),
    InvalidDefinitionError('tool "fs.write"', "version", "must be a semantic version such as '1.0.0', got '1.0'"),
]


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


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_to_dict_is_json_with_code_message_and_retryable(error: ToolError) -> None:
    data = error.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["code"] == error.code
    assert data["message"] == str(error) == error.message
    assert data["retryable"] is (error.code in ("INPUT_INVALID", "TOOL_NOT_FOUND"))


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda e: type(e).__name__)
def test_pickling_round_trips(error: ToolError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.to_dict() == error.to_dict()


def test_each_error_carries_its_own_fields() -> None:
    schema_error, input_error, output_error, denied, not_found, definition = (e.to_dict() for e in EXAMPLES)
    assert schema_error["path"] == ["files", 0, "path"]
    assert schema_error["detail"] == "must be a string, got integer"
    assert schema_error["issues"] == [
        {
            "path": ["files", 0, "path"],
            "kind": "type",
            "detail": "must be a string, got integer",
            "message": '"files.0.path" must be a string, got integer',
        }
    ]
    assert input_error["tool"] == "fs.write"
    assert input_error["issues"][0]["path"] == ["files", 0, "path"]
    assert output_error["tool"] == "fs.write"
    assert output_error["issues"][0]["message"] == "output must be an object, got null"
    assert (denied["tool"], denied["permission"]) == ("fs.write", "fs:write")
    assert (not_found["name"], not_found["suggestions"]) == ("fs_write", ["fs.write"])
    assert (definition["declaration"], definition["field"]) == ('tool "fs.write"', "version")


# -- golden messages -------------------------------------------------------------------


def test_schema_error_message_has_the_seed_shape() -> None:
    assert str(SchemaError([ISSUE])) == 'value is invalid: "files.0.path" must be a string, got integer'


def test_schema_error_at_the_root_names_the_subject() -> None:
    error = SchemaError([Issue((), "type", "must be a string, got integer")], subject="input")
    assert str(error) == "input is invalid: input must be a string, got integer"


def test_permission_denied_message_is_exactly_the_seeds() -> None:
    assert str(PermissionDeniedError("fs.write", "fs:write")) == (
        'fs.write requires the "fs:write" permission, which was not granted.\n'
        "Retrying with different arguments will not help"
    )


def test_input_invalid_message_names_the_tool_and_the_field() -> None:
    assert str(InputInvalidError("fs.write", [ISSUE])) == (
        'fs.write was called with invalid input: "files.0.path" must be a string, got integer\n'
        "Fix the arguments and call fs.write again."
    )


def test_output_invalid_message_blames_the_tool_not_the_caller() -> None:
    message = str(OutputInvalidError("fs.write", [Issue(("size",), "type", "must be an integer, got string")]))
    assert message == (
        'fs.write returned invalid output: "size" must be an integer, got string\n'
        "This is a fault in the tool, not in how it was called."
    )
    assert "input" not in message


def test_several_issues_are_listed_one_per_line() -> None:
    issues = [ISSUE, Issue(("mode",), "enum", 'must be one of "w", "a"')]
    assert str(InputInvalidError("fs.write", issues)) == (
        "fs.write was called with invalid input (2 problems):\n"
        '- "files.0.path" must be a string, got integer\n'
        '- "mode" must be one of "w", "a"\n'
        "Fix the arguments and call fs.write again."
    )


@pytest.mark.parametrize(
    "make", [SchemaError, lambda i: InputInvalidError("t", i), lambda i: OutputInvalidError("t", i)]
)
def test_long_issue_lists_are_bounded_and_say_how_many_more(make: type[SchemaError]) -> None:
    issues = [Issue((n,), "type", "must be a string, got integer") for n in range(25)]
    lines = str(make(issues)).splitlines()
    assert "(25 problems)" in lines[0]
    assert sum(1 for line in lines if line.startswith('- "')) == 20
    assert "- ... and 5 more" in lines
    assert len(make(issues).to_dict()["issues"]) == 25


def test_tool_not_found_names_the_suggestions() -> None:
    assert str(ToolNotFoundError("fs_write", ["fs.write"])) == (
        'No tool named "fs_write" is registered; did you mean "fs.write"?'
    )
    assert (
        str(ToolNotFoundError("x", ["a.b", "a.c"])) == 'No tool named "x" is registered; did you mean "a.b" or "a.c"?'
    )
    assert str(ToolNotFoundError("zzz")) == 'No tool named "zzz" is registered'


def test_tool_not_found_quotes_an_odd_name_safely_and_briefly() -> None:
    message = str(ToolNotFoundError('a"b\nc' + "x" * 500))
    assert "\n" not in message
    assert '\\"' in message
    assert len(message) < 120


def test_invalid_definition_says_which_declaration_field_and_what_is_right() -> None:
    error = InvalidDefinitionError(
        'tool "fs.write"', "version", "must be a semantic version such as '1.0.0', got '1.0'"
    )
    assert str(error) == "tool \"fs.write\": version must be a semantic version such as '1.0.0', got '1.0'"
    assert str(InvalidDefinitionError("s.array()", None, "is wrong")) == "s.array() is wrong"


def test_errors_refuse_an_empty_issue_list() -> None:
    for make in (SchemaError, lambda i: InputInvalidError("t", i), lambda i: OutputInvalidError("t", i)):
        with pytest.raises(ValueError, match="at least one issue"):
            make([])


# -- the path quoting rule -------------------------------------------------------------


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


def test_a_very_long_key_is_shortened_in_messages_but_kept_in_data() -> None:
    key = "k." * 200
    issue = Issue((key,), "unexpected", "is an unexpected field")
    assert len(issue.message()) < 120
    assert issue.to_dict()["path"] == [key]
