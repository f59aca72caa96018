from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, Runtime, Tool, ToolHints, define_tool, tool
from hermes_core import schema as s
from hermes_core._tool._definition import _SEMVER, _is_semver

if TYPE_CHECKING:
    from conftest import Site


def echo(args: dict[str, Any]) -> dict[str, Any]:
    return args


async def aecho(args: dict[str, Any]) -> dict[str, Any]:
    return args


def make(**overrides: Any) -> Tool:
    fields: dict[str, Any] = {
        "name": "fs.write",
        "description": "Write a file.",
        "version": "1.0.0",
        "input": s.object({"path": s.string()}),
        "handler": echo,
    }
    fields.update(overrides)
    return define_tool(**fields)


def definition_error(**overrides: Any) -> InvalidDefinitionError:
    with pytest.raises(InvalidDefinitionError) as caught:
        make(**overrides)
    assert caught.value.code == "INVALID_DEFINITION"
    return caught.value


def test_a_tool_exposes_its_fields() -> None:
    tool = make(permissions=["fs:write"], output=s.string())
    assert tool.name == "fs.write"
    assert tool.description == "Write a file."
    assert tool.version == "1.0.0"
    assert isinstance(tool.input, s.ObjectSchema)
    assert tool.output == s.string()
    assert tool.permissions == ("fs:write",)
    assert tool.handler is echo
    assert tool.is_async is False


def test_a_tool_is_immutable() -> None:
    tool = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]


def test_output_defaults_to_any_json_value() -> None:
    assert make().output == s.any()


def test_schemas_are_compiled_at_definition_time() -> None:
    made = make()
    check_input, check_output = made.validators()
    assert made.validators() == (check_input, check_output)  # the ones compiled when the tool was made
    assert check_input.run({"path": "a"}) == (True, {"path": "a"}, ())
    assert check_output.run([1]) == (True, [1], ())


def _nested(depth: int) -> s.Schema:
    schema: s.Schema = s.string()
    for _ in range(depth):
        schema = s.array(schema)
    return schema


@pytest.mark.parametrize("depth", [300, 3000])
@pytest.mark.parametrize("field", ["input", "output"])
def test_a_schema_nested_too_deeply_for_the_definition_is_refused_there_naming_the_field(
    depth: int, field: str
) -> None:
    # 300 levels are too deep to write the code of (the compiler's generator recursed); 3,000 too deep to close the
    # input's imported schemas (tool_input recursed too, and its RecursionError escaped define_tool).
    schema = s.object({"a": _nested(depth)}) if field == "input" else _nested(depth)
    error = definition_error(**{field: schema})
    assert (error.field, error.detail) == (field, "nests schemas too deeply to compile; no real schema nests so deep")
    deep_enough = make(**{field: s.object({"a": _nested(20)}) if field == "input" else _nested(20)})
    value = {"a": [[[]]]} if field == "input" else [[[]]]
    assert deep_enough.validators()[field == "output"].run(value) == (True, value, ())


def test_a_tool_whose_input_is_a_ref_is_compiled_against_the_named_schemas() -> None:
    made = make(input=s.ref("fs.args"))
    check_input, _ = made.validators({"fs.args": s.object({"path": s.string()})})
    assert check_input.run({"path": "a"}) == (True, {"path": "a"}, ())
    ok, _, issues = check_input.run({"path": 1})
    assert not ok
    assert [issue.path for issue in issues] == [("path",)]
    with pytest.raises(InvalidDefinitionError, match=r"fs\.args"):
        made.validators()


@pytest.mark.parametrize(
    "name",
    [
        "fs",
        "fs.write",
        "http.get",
        "a1.b_2.c",
        "x" * 64,
        "getTinyImage",
        "Weather_GetForecast",
        "api.Users.get_user",
        "a-b.c_d",
        "_private",
        "fs._x",
        "Fs.write",
        "fs-write",
    ],
)
def test_valid_names(name: str) -> None:
    assert make(name=name).name == name


@pytest.mark.parametrize(
    "name", ["", "fs..write", ".fs", "fs.", "1fs", "-fs", "fs.-x", "fs write", "fs/write", "é", "x" * 65, None, 3]
)
def test_invalid_names_are_refused_with_the_rule(name: object) -> None:
    error = definition_error(name=name)
    assert error.field == "name"
    assert "must be segments joined by '.', each a letter or '_' then letters, digits, '_' or '-'" in str(error)
    assert "such as 'fs.write'" in str(error)


@pytest.mark.parametrize("description", ["", "   ", "\n\t", None, 42])
def test_blank_descriptions_are_refused(description: object) -> None:
    error = definition_error(description=description)
    assert error.field == "description"
    assert error.declaration == 'tool "fs.write"'
    assert "a model reads it to decide whether to call the tool" in str(error)


@pytest.mark.parametrize("version", ["1.0.0", "0.0.0", "2.1.0-rc.1+build.5", "1.2.3-alpha", "10.20.30+meta"])
def test_semantic_versions_are_accepted(version: str) -> None:
    assert make(version=version).version == version


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "01.0.0", "1.0.0-", "1.0.0-01", "1", "1.0.0.0", "", None])
def test_other_versions_are_refused(version: object) -> None:
    error = definition_error(version=version)
    assert error.field == "version"
    assert "semantic version" in str(error)


def test_version_message_is_pinned() -> None:
    assert str(definition_error(version="1.0")) == (
        "tool \"fs.write\": version must be a semantic version MAJOR.MINOR.PATCH such as '1.0.0' "
        "or '2.1.0-rc.1', got '1.0'."
    )


# Near-misses of a plain X.Y.Z: other digits (Arabic-Indic ones are \d to the expression, superscripts are not),
# leading zeros, empty parts, spaces and a newline around, signs, a fourth part.
_VERSIONS = ["1.2.3", "0.0.0", "10.0.1", "01.2.3", "1.02.3", "1..3", "1.2.", " 1.2.3", "1.2.3 ", "1.2.3\n",
             "+1.2.3", "1.2.-3", "1.2.3.4", "\u0661.\u0660.\u0660", "\u00b2.0.0", "\uff11.2.3", "1.2.3-rc.1",
             "1.2.3+b"]  # fmt: skip


@given(st.sampled_from(_VERSIONS) | st.text(alphabet="0129.-+aZ \n\u0661\u00b2", max_size=14))
def test_a_version_is_told_as_semver_orgs_expression_tells_it_plain_ones_without_it(version: str) -> None:
    assert _is_semver(version) == (re.match(_SEMVER, version) is not None)


def test_a_plain_version_is_told_without_compiling_the_expression() -> None:
    re.purge()
    assert _is_semver("1.20.3")
    assert _SEMVER not in {pattern.pattern for pattern in _cached_patterns()}
    assert _is_semver("1.20.3-rc.1")  # the control: one that is not plain compiles it
    assert _SEMVER in {pattern.pattern for pattern in _cached_patterns()}


def _cached_patterns() -> list[re.Pattern[str]]:
    """The patterns re has compiled since it was last purged (its cache holds each it compiled)."""
    return [value for value in re._cache.values() if isinstance(value, re.Pattern)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("schema", [s.string(), s.array(s.string()), {"path": s.string()}, None])
def test_input_must_be_an_object_schema(schema: object) -> None:
    error = definition_error(input=schema)
    assert error.field == "input"
    assert "must be an object schema" in str(error)


def test_output_must_be_a_schema() -> None:
    error = definition_error(output={"type": "string"})
    assert error.field == "output"


@pytest.mark.parametrize("permissions", [["fs:write"], ("fs:read", "fs:write"), ["net-io:http_get"], []])
def test_valid_permissions(permissions: list[str]) -> None:
    assert make(permissions=permissions).permissions == tuple(permissions)


def test_repeated_permissions_are_kept_once() -> None:
    assert make(permissions=["fs:write", "fs:write"]).permissions == ("fs:write",)


@pytest.mark.parametrize("permission", ["fs", "fs:", ":write", "FS:write", "fs:write:x", "fs:*", "*", "1fs:w", 3])
def test_invalid_permissions_name_their_index(permission: object) -> None:
    error = definition_error(permissions=["fs:read", permission])
    assert error.field == "permissions[1]"
    assert "'namespace:action'" in str(error)


def test_a_single_string_of_permissions_is_refused() -> None:
    error = definition_error(permissions="fs:write")
    assert error.field == "permissions"


class AsyncCallable:
    async def __call__(self, args: dict[str, Any]) -> dict[str, Any]:
        return args


@pytest.mark.parametrize(
    ("handler", "is_async"),
    [
        (echo, False),
        (aecho, True),
        (lambda args: args, False),
        (functools.partial(lambda prefix, args: args, "x"), False),
        (functools.partial(aecho), True),
        (AsyncCallable(), True),
        (lambda args, extra=1: args, False),
        (lambda *args: args, False),
        (len, False),
    ],
)
def test_handlers_of_one_positional_argument_are_accepted(handler: Callable[..., Any], is_async: bool) -> None:
    assert make(handler=handler).is_async is is_async


@pytest.mark.parametrize(
    "handler",
    [lambda: None, lambda a, b: None, lambda *, args: None, "not callable", None],
)
def test_other_handlers_are_refused(handler: object) -> None:
    error = definition_error(handler=handler)
    assert error.field == "handler"


def shout(text: str) -> str:
    return text.upper()


def read_model(args: Tool) -> None:
    return None


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (shout, 'shout(text: str) annotates "text" as str, not a dict'),
        (read_model, 'read_model(args: Tool) annotates "args" as Tool, not a dict'),
        (
            lambda path: path,
            '<lambda>(path) names its parameter after the input field "path", but it is given the whole '
            'input, not the field: read args["path"], or name the parameter args',
        ),
        (lambda a, b: None, "<lambda>(a, b) needs 2 arguments (a, b), but it is called with one"),
        (lambda: None, "<lambda>() cannot be called with one positional argument"),
        (lambda *, args: None, "<lambda>(*, args) cannot be called with one positional argument"),
    ],
)
def test_a_handler_that_cannot_take_the_input_says_why_and_shows_the_expected_form(
    handler: Callable[..., Any], problem: str
) -> None:
    error = definition_error(handler=handler)
    assert (error.declaration, error.field) == ('tool "fs.write"', "handler")
    assert error.detail == (
        f"{problem}; a handler is called with the parsed input (a dict) as its one positional argument, "
        'such as def handler(args): return args["path"]; or declare the function with @tool, which passes each '
        "field as a keyword argument"
    )


@pytest.mark.parametrize(
    "handler",
    [
        lambda args: args,
        lambda params: params,  # any name but a field's
        lambda path, extra=1: path,  # more than one parameter: not the field-name mistake
    ],
)
def test_handlers_that_may_take_a_dict_are_accepted(handler: Callable[..., Any]) -> None:
    make(handler=handler)


def test_a_field_named_like_the_whole_input_is_no_mistake() -> None:
    make(input=s.object({"args": s.array(s.string())}), handler=lambda args: args["args"])


def annotated_mapping(args: dict[str, Any]) -> None:
    return None


def annotated_any(args: Any) -> None:
    return None


def annotated_object(args: object) -> None:
    return None


def annotated_unresolvable(args: NotImported) -> None:  # type: ignore[name-defined] # noqa: F821
    return None


@pytest.mark.parametrize("handler", [annotated_mapping, annotated_any, annotated_object, annotated_unresolvable])
def test_annotations_a_dict_satisfies_are_accepted(handler: Callable[..., Any]) -> None:
    make(handler=handler)


def test_a_default_that_does_not_match_names_the_tool_and_the_field() -> None:
    error = definition_error(
        name="notes.add",
        input=s.object({"text": s.string(), "options": s.object({"limit": s.optional(s.integer(), default="ten")})}),
    )
    assert (error.declaration, error.field) == ('tool "notes.add"', 'field "options.limit"')
    assert error.detail == "has a default that does not match its schema: default must be an integer, got string"
    error = definition_error(
        output=s.object({"items": s.array(s.object({"n": s.optional(s.integer(), default=-1.5)}))})
    )
    assert (error.declaration, error.field) == ('tool "fs.write"', 'output field "items[].n"')


def test_output_cannot_be_an_optional_marker() -> None:
    assert definition_error(output=s.optional(s.string())).field == "output"


@pytest.mark.parametrize(("name", "declaration"), [("A..b", 'tool "A..b"'), ("", 'tool ""'), (3, "tool")])
def test_a_bad_name_is_quoted_like_every_other_declaration(name: object, declaration: str) -> None:
    assert definition_error(name=name).declaration == declaration


def test_a_tool_made_any_way_is_checked() -> None:
    tool = make()
    with pytest.raises(InvalidDefinitionError) as caught:
        dataclasses.replace(tool, name="Bad Name")
    assert caught.value.field == "name"
    with pytest.raises(InvalidDefinitionError):
        Tool(name="fs.x", description=" ", version="1.0.0", input=s.object({}), handler=echo)
    direct = Tool(name="fs.x", description="d", version="1.0.0", input=s.object({}), handler=aecho)
    assert direct.is_async is True
    assert direct.output == s.any()
    assert direct.validators()[0].run({}) == (True, {}, ())


def test_replace_derives_what_is_derived_again() -> None:
    renamed = dataclasses.replace(make(permissions=["fs:write", "fs:write"]), handler=aecho, output=s.string())
    assert renamed.is_async is True
    assert renamed.permissions == ("fs:write",)
    assert renamed.validators()[1].run("x") == (True, "x", ())
    assert renamed.validators()[1].run(1)[0] is False


# -- titles and hints for clients --------------------------------------------------------------


def test_a_tool_may_declare_a_title_and_hints_for_clients() -> None:
    hints = ToolHints(title="Write a file", read_only=False, destructive=True, idempotent=True, open_world=False)
    made = make(hints=hints)
    assert made.hints is hints
    assert made.hints.annotations() == {
        "title": "Write a file",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert make().hints == ToolHints()
    assert make().hints.annotations() == {}
    (definition,) = Runtime([made]).definitions()
    assert list(definition) == ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]
    assert list(Runtime([make()]).definitions()[0]) == ["name", "description", "inputSchema", "outputSchema"]


def test_hints_are_one_value_given_to_define_tool_and_tool_without_a_warning() -> None:
    hints = ToolHints(title="Read a file", read_only=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the one spelling warns of nothing
        made = make(hints=hints)

        @tool(name="fs.read", version="1.0.0", hints=hints)
        def read(path: str) -> str:
            """Read a file."""
            return path

    assert made.hints is hints
    assert read.hints is hints
    assert Runtime([read]).definitions()[0]["annotations"] == {"title": "Read a file", "readOnlyHint": True}
    assert "read_only" not in inspect.signature(define_tool).parameters  # one spelling, in the signature too
    assert "read_only" not in inspect.signature(tool).parameters
    assert {"hints", "target"} <= set(inspect.signature(tool).parameters) & set(
        inspect.signature(define_tool).parameters
    )


# -- the old spelling, keyword arguments one by one: taken until 0.6, with a warning ---------------------


def test_hints_given_one_by_one_still_work_with_a_warning_spelling_out_the_replacement() -> None:
    with pytest.warns(DeprecationWarning, match="deprecated") as caught:
        made = make(title="Write a file", read_only=False, destructive=True, idempotent=True, open_world=False)
    assert made.hints == ToolHints(
        title="Write a file", read_only=False, destructive=True, idempotent=True, open_world=False
    )
    assert [str(warning.message) for warning in caught] == [
        'tool "fs.write": define_tool\'s keyword arguments title=, read_only=, destructive=, idempotent= and '
        "open_world= are deprecated and will be removed in 0.6: write hints=ToolHints(title='Write a file', "
        "read_only=False, destructive=True, idempotent=True, open_world=False) instead (ToolHints from hermes_core)"
    ]
    # In ToolHints' order, whatever the caller's; @tool says so in its own name.
    with pytest.warns(DeprecationWarning, match="deprecated") as caught:

        @tool(name="fs.read", version="1.0.0", open_world=False, read_only=True)
        def read(path: str) -> str:
            """Read a file."""
            return path

    assert read.hints == ToolHints(read_only=True, open_world=False)
    assert [str(warning.message) for warning in caught] == [
        'tool "fs.read": @tool\'s keyword arguments read_only= and open_world= are deprecated and will be removed '
        "in 0.6: write hints=ToolHints(read_only=True, open_world=False) instead (ToolHints from hermes_core)"
    ]
    with pytest.warns(
        DeprecationWarning, match=r"argument idempotent= is deprecated .* hints=ToolHints\(idempotent=None\) instead"
    ):
        assert make(idempotent=None).hints == ToolHints()  # said as None, still the old spelling


def test_the_warning_points_at_the_line_that_declares_the_tool_once_a_line() -> None:
    fields: dict[str, Any] = {"description": "d", "version": "1.0.0", "input": s.object({}), "handler": echo}
    here = inspect.currentframe()
    assert here is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's own: once a place (the module, the line, the message)
        lines = [here.f_lineno + 2, here.f_lineno + 3]
        for _ in range(3):
            define_tool(name="fs.read", read_only=True, **fields)  # three times on this line: warned once
        define_tool(name="fs.read", read_only=True, **fields)  # another line: warned again
        lines.append(here.f_lineno + 2)

        @tool(name="fs.read", version="1.0.0", read_only=True)  # the decorator's line
        def read(path: str) -> str:
            """Read a file."""
            return path

    assert [(warning.category, warning.filename, warning.lineno) for warning in caught] == [
        (DeprecationWarning, __file__, line) for line in lines
    ]
    assert read.hints == ToolHints(read_only=True)


def test_the_bundled_plugins_declare_their_hints_in_the_one_spelling(site: Site) -> None:
    def export(*options: str) -> subprocess.CompletedProcess[str]:
        """hermesos export --format mcp, where a DeprecationWarning is an error."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "PYTHON"))}
        environment.update(
            PYTHONPATH=str(site.path),
            HERMESOS_FS_ROOT=str(site.path / "fs-root"),
            PYTHONWARNINGS="error::DeprecationWarning",
        )
        command = [str(Path(sys.executable).with_name("hermesos")), "export", "--format", "mcp", *options]
        return subprocess.run(command, capture_output=True, text=True, env=environment, cwd=site.path, check=False)

    # The control: a plugin in the old spelling is broken where deprecations are errors, saying what to write.
    old = site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return [make('old.one', read_only=True)]\n"))
    done = export()
    assert done.returncode == 1
    assert f'broken plugin {old} 1.0.0 (entry point "unit{old.rsplit("-", 1)[1]}" = hermesos_unit_' in done.stderr
    assert (
        'raised DeprecationWarning: tool "old.one": define_tool\'s keyword argument read_only= is deprecated and '
        "will be removed in 0.6: write hints=ToolHints(read_only=True) instead (ToolHints from hermes_core)\n"
    ) in done.stderr
    # Without it, every bundled plugin loads, its hints as it declares them.
    done = export("--disable", old)
    assert (done.returncode, done.stderr) == (0, "")
    listed = {item["name"]: item.get("annotations") for item in json.loads(done.stdout)}
    assert listed["fs_read"] == {
        "title": "Read a text file",
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert listed["fs_delete"] == {
        "title": "Delete a path",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert listed["math_eval"] == {
        "title": "Evaluate arithmetic",
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_hints_given_both_ways_are_refused() -> None:
    error = definition_error(hints=ToolHints(read_only=True), title="Write", idempotent=True)
    assert error.field == "hints"
    assert str(error) == (
        "tool \"fs.write\": hints is given, and so are title='Write' and idempotent=True, which hints replaces: "
        "give the title and hints once, in hints=ToolHints(title='Write', read_only=True, idempotent=True)."
    )
    # The same value said two ways that disagree: which one is meant is the author's to say.
    assert str(definition_error(hints=ToolHints(read_only=False), read_only=True, idempotent=None)) == (
        'tool "fs.write": hints is given, and so are read_only=True and idempotent=None, which hints replaces: '
        "read_only is False in hints and True as read_only=; give the one meant, once, in hints=ToolHints(...)."
    )
    with pytest.raises(InvalidDefinitionError, match=r"and so is read_only=True, which hints replaces"):
        tool(name="fs.read", version="1.0.0", hints=ToolHints(), read_only=True)
    # The control: each spelling alone is taken (the old one with its warning).
    assert make(hints=ToolHints(read_only=True)).hints == ToolHints(read_only=True)
    with pytest.warns(DeprecationWarning, match=r"hints=ToolHints\(read_only=True\) instead"):
        assert make(read_only=True).hints == ToolHints(read_only=True)


def test_a_keyword_neither_takes_is_a_type_error_as_python_says_it() -> None:
    with pytest.raises(TypeError, match=r"^define_tool\(\) got an unexpected keyword argument 'raed_only'$"):
        make(raed_only=True)
    with pytest.raises(TypeError, match=r"^tool\(\) got an unexpected keyword argument 'titel'$"):
        tool(name="fs.read", version="1.0.0", titel="Read")  # type: ignore[call-arg]


def test_hints_that_are_not_a_tool_hints_are_refused() -> None:
    assert str(definition_error(hints={"read_only": True})) == (
        "tool \"fs.write\": hints must be a ToolHints such as ToolHints(read_only=True), got {'read_only': True}."
    )


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"read_only": "yes"}, "ToolHints(): read_only must be True, False or None (not said), got 'yes'."),
        ({"title": "x" * 101}, "ToolHints(): title must be a short non-blank string (at most 100 characters)"),
        ({"read_only": True, "destructive": True}, "ToolHints(): destructive is True, but read_only is True too"),
    ],
)
def test_tool_hints_check_themselves(values: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        ToolHints(**values)
    assert str(caught.value).startswith(message)


def test_tool_hints_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ToolHints().read_only = True  # type: ignore[misc]


def test_tool_hints_read_an_mcp_listing_leniently() -> None:
    listed = {
        "title": "From the annotations",
        "readOnlyHint": True,
        "destructiveHint": True,  # meaningless for a read-only tool (MCP): left unsaid
        "idempotentHint": "yes",  # not a boolean: left unsaid
        "openWorldHint": False,
    }
    assert ToolHints.from_annotations(listed) == ToolHints(
        title="From the annotations", read_only=True, open_world=False
    )
    assert ToolHints.from_annotations(listed, title="Own").title == "Own"
    assert ToolHints.from_annotations(listed, title="  ").title == "From the annotations"
    assert ToolHints.from_annotations({"title": 3}, title=None) == ToolHints()
    long = ToolHints.from_annotations({}, title=" " + "t" * 300)
    assert long.title is not None
    assert len(long.title) == 100
    assert long.title.endswith("...")
    assert ToolHints.from_annotations(ToolHints(read_only=False, destructive=True).annotations()) == ToolHints(
        read_only=False, destructive=True
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            {"title": " "},
            "tool \"fs.write\": title must be a short non-blank string (at most 100 characters) such as 'Read a file', "
            "or None, got ' '.",
        ),
        ({"read_only": "yes"}, "tool \"fs.write\": read_only must be True, False or None (not said), got 'yes'."),
        ({"open_world": 1}, 'tool "fs.write": open_world must be True, False or None (not said), got 1.'),
        (
            {"read_only": True, "destructive": True},
            'tool "fs.write": destructive is True, but read_only is True too: a tool that changes nothing destroys '
            "nothing.",
        ),
    ],
)
def test_a_malformed_title_or_hint_given_the_old_way_is_refused_naming_the_tool(
    overrides: dict[str, Any], message: str
) -> None:
    # Given in hints=ToolHints(...), the value refuses itself where it is made (test_tool_hints_check_themselves).
    with pytest.warns(DeprecationWarning, match="deprecated and will be removed in 0.6"):
        assert str(definition_error(**overrides)) == message
