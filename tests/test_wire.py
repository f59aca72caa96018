"""Wire names: one mapping from tool names to what APIs and clients accept, both ways."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import (
    InputInvalidError,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    Runtime,
    ToolFailedError,
    ToolNotFoundError,
    define_tool,
)
from hermes_core import schema as s
from hermes_core._base._names import NAME_MAX, NAME_PATTERN, is_name
from hermes_core._door._wire import WIRE_PATTERN, WireNames, wire_name
from hermes_core.adapters import OpenAITools


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("search", "search"),
        ("fs_read", "fs_read"),
        ("fs.read", "fs_read"),
        ("a.b.c", "a_b_c"),
        ("math.eval", "math_eval"),
        ("x" * 64, "x" * 64),
    ],
)
def test_a_name_is_unchanged_if_it_can_be_sent_and_readable_if_not(name: str, wire: str) -> None:
    assert wire_name(name) == wire


def test_a_long_name_is_shortened_with_a_stable_hash() -> None:
    long = "a." * 40
    wire = wire_name(long)
    assert len(wire) == 64
    assert wire.startswith("a_a_a_")
    assert re.fullmatch(r"[a-z_]{55}_[0-9a-f]{8}", wire)
    assert wire == wire_name(long)  # the same on every run: sha256, not hash()
    assert wire_name(long + "b") != wire


tool_names = st.from_regex(NAME_PATTERN, fullmatch=True).filter(lambda name: len(name) <= NAME_MAX)


@pytest.mark.parametrize(
    ("name", "wire"),
    [
        ("getTinyImage", "getTinyImage"),
        ("Weather_GetForecast", "Weather_GetForecast"),
        ("a-b", "a-b"),
        ("_private", "_private"),
        ("api.Users.get_user", "api_Users_get_user"),
        ("a-b.c_d", "a-b_c_d"),
        ("A" + ".b" * 31 + "c", "A" + "_b" * 31 + "c"),  # 64 characters: mapped one for one, never hashed
    ],
)
def test_names_of_either_case_keep_their_case_on_the_wire(name: str, wire: str) -> None:
    assert is_name(name)
    assert wire_name(name) == wire


@settings(max_examples=300, deadline=None, derandomize=True)
@given(tool_names)
def test_every_tool_name_has_a_wire_name_the_apis_accept(name: str) -> None:
    wire = wire_name(name)
    assert WIRE_PATTERN.match(wire)
    # A name is at most 64 characters and each maps to one, so no name of the rule is ever hashed.
    assert wire == name.replace(".", "_")


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(tool_names, max_size=8))
def test_wire_names_clash_exactly_when_their_case_folds_do(names: list[str]) -> None:
    folded = [wire_name(name).casefold() for name in dict.fromkeys(names)]
    if len(set(folded)) == len(folded):
        wires = WireNames(dict.fromkeys(names))
        assert all(wires.lookup(wires.to_wire[name]) == name for name in names)
    else:
        with pytest.raises(InvalidDefinitionError):
            WireNames(dict.fromkeys(names))


# Names of one segment, drawn as such: filtering the dotted ones out of tool_names rejected most draws.
undotted_names = st.from_regex(rf"[A-Za-z_][A-Za-z0-9_-]{{0,{NAME_MAX - 1}}}", fullmatch=True)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(undotted_names, max_size=8))
def test_wire_names_of_undotted_names_distinct_in_case_fold_never_clash(names: list[str]) -> None:
    # Without a dot a name is its own wire name: names that a runtime accepts (no two differing only in
    # case) are always accepted by WireNames; dotted ones may still clash with an underscored twin.
    assert all(is_name(name) and "." not in name for name in names)
    distinct = list({name.casefold(): name for name in names}.values())
    assert dict(WireNames(distinct).to_wire) == {name: name for name in distinct}


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(min_size=1, max_size=200))
def test_any_text_has_a_wire_name_the_apis_accept(name: str) -> None:
    assert WIRE_PATTERN.match(wire_name(name))


def test_names_are_mapped_both_ways() -> None:
    names = WireNames(["fs.read", "search", "math.eval"])
    assert dict(names.to_wire) == {"fs.read": "fs_read", "search": "search", "math.eval": "math_eval"}
    assert names.lookup("fs_read") == "fs.read"
    assert names.lookup("search") == "search"


def test_two_tools_with_one_wire_name_are_refused_naming_both() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        WireNames(["fs.read", "fs_read"])
    assert str(caught.value) == (
        "tools \"fs.read\" and \"fs_read\" have the same wire name ('fs_read', 'fs_read'), which models and clients "
        "send instead of the tool's name; rename one of them."
    )


def test_two_wire_names_differing_only_in_case_are_refused() -> None:
    with pytest.raises(InvalidDefinitionError, match=r"have wire names that differ only in case \('a_B', 'a_b'\)"):
        WireNames(["a.B", "a.b"])


def test_an_unknown_wire_name_suggests_wire_names_only() -> None:
    names = WireNames(["fs.read", "fs.write", "math.eval"])
    with pytest.raises(ToolNotFoundError) as caught:
        names.lookup("fs.read")  # the tool's own name is not what a model may send
    assert caught.value.suggestions == ("fs_read",)
    assert (
        str(caught.value)
        == '"fs.read" is not a registered tool name.\nCall a registered tool instead, such as "fs_read".'
    )
    # A call that names no tool (no name, or one that is not a string) is not one that named "None".
    for sent, said in ((None, "missing or not a string"), (5, "missing or not a string"), ("", "empty")):
        with pytest.raises(ToolNotFoundError) as odd:
            names.lookup(sent)
        assert odd.value.name == (None if sent != "" else "")
        assert odd.value.suggestions == ()
        assert str(odd.value) == f"the call names no tool: its name is {said}.\nCall a registered tool instead."
    # A name of megabytes is refused in time and memory that do not grow with it: no suggestion can be close.
    with pytest.raises(ToolNotFoundError) as long:
        names.lookup("fs_read" * 2_000_000)
    assert long.value.suggestions == ()
    assert len(str(long.value)) < 200
    # A lone surrogate, which no UTF-8 text can carry, is escaped in the message.
    with pytest.raises(ToolNotFoundError) as odd:
        names.lookup("fs_rea\ud800")
    assert str(odd.value).startswith('"fs_rea\\ud800" is not a registered tool name.')
    str(odd.value).encode()


def test_an_error_is_shown_under_the_wire_name() -> None:
    names = WireNames(["fs.read"])
    error = InputInvalidError("fs.read", [Issue(("path",), "missing", "is required (a string)")])
    shown = names.shown(error)
    assert isinstance(shown, InputInvalidError)
    assert shown.tool == "fs_read"
    assert shown.issues == error.issues
    assert shown.__cause__ is error
    assert str(shown) == (
        'fs_read was called with invalid input: "path" is required (a string).\n'
        "Fix the arguments and call fs_read again."
    )
    failed = ToolFailedError.from_exception("fs.read", OSError("disk"), call_id="c1", retryable=True)
    shown_failed = names.shown(failed)
    assert isinstance(shown_failed, ToolFailedError)
    assert (shown_failed.tool, shown_failed.exception, shown_failed.call_id, shown_failed.retryable) == (
        "fs_read",
        "OSError",
        "c1",
        True,
    )
    unrelated = ToolNotFoundError("x")
    assert names.shown(unrelated) is unrelated


def test_an_error_is_rewritten_throughout_so_message_fields_and_data_agree() -> None:
    names = WireNames(["fs.list", "fs.read"])
    error = InputInvalidError("fs.read", [Issue(("path",), "invalid", "is a folder; list it with fs.list")])
    shown = names.shown(error)
    assert shown.issues == (Issue(("path",), "invalid", "is a folder; list it with fs_list"),)
    assert "fs.list" not in str(shown.to_dict())
    assert shown.message == (
        'fs_read was called with invalid input: "path" is a folder; list it with fs_list.\n'
        "Fix the arguments and call fs_read again."
    )
    failed = names.shown(ToolFailedError("run fs.list first", tool="fs.read"))
    assert (failed.tool, failed.detail) == ("fs_read", "run fs_list first")
    # The runtime's own TOOL_NOT_FOUND suggests tool names: shown, they are wire names; the name sent stays.
    missing = names.shown(ToolNotFoundError("fs.lst", ["fs.list"]))
    assert (missing.name, missing.suggestions) == ("fs.lst", ("fs_list",))
    assert missing.message.endswith('such as "fs_list".')


def test_an_error_built_under_the_wire_name_still_has_its_details_rewritten() -> None:
    # As the front door builds them: the tool already under its wire name, the details as the tool wrote them.
    names = WireNames(["fs.list", "fs.read"])
    plain = InputInvalidError("fs_read", [Issue(("path",), "invalid", "must be a string")])
    assert names.shown(plain) is plain
    assert names.shown(plain) is plain  # its detail now remembered as naming no tool
    for issues in (
        [Issue(("path",), "invalid", "is a folder; list it with fs.list")],
        [Issue(("path",), "invalid", "must be a string"), Issue(("mode",), "invalid", "see fs.list")],
    ):
        for error in (InputInvalidError("fs_read", issues), OutputInvalidError("fs_read", issues)):
            shown = names.shown(error)
            assert shown is not error
            assert type(shown) is type(error)
            assert shown.tool == "fs_read"
            assert "fs.list" not in shown.message
            assert "fs_list" in shown.message


def test_names_in_text_are_rewritten_where_they_stand_as_names() -> None:
    names = WireNames(["fs.list", "fs.list_all", "fs.read", "search"])
    assert names.rewrite("list it with fs.list.") == "list it with fs_list."
    assert names.rewrite("fs.list_all, then fs.read; search") == "fs_list_all, then fs_read; search"
    assert names.rewrite("myfs.list fs.listing fs.list.x fs.list-x") == "myfs.list fs.listing fs.list.x fs.list-x"
    assert WireNames(["search"]).rewrite("fs.list") == "fs.list"


def test_a_value_in_an_issue_that_is_a_tool_name_is_kept_the_prose_around_it_renamed() -> None:
    """A field whose values are tool names: the model is told the values it can send, as its definition shows them."""
    names = WireNames(["fs.read", "tools.help"])
    error = InputInvalidError(
        "tools.help",
        [
            Issue(("tool",), "enum", 'must be one of "fs.read", "tools.help"'),
            Issue(("topic",), "invalid", 'is not a topic of fs.read; "fs.read" lists its own topics'),
            Issue(("text",), "pattern", 'must match "^a", got "see \\"fs.read\\" or fs.read"'),
        ],
    )
    shown = names.shown(error)
    assert shown.tool == "tools_help"
    assert [issue.detail for issue in shown.issues] == [
        'must be one of "fs.read", "tools.help"',
        'is not a topic of fs_read; "fs.read" lists its own topics',
        'must match "^a", got "see \\"fs.read\\" or fs.read"',
    ]


def test_an_enum_of_tool_names_is_refused_with_the_values_a_model_can_send() -> None:
    take = define_tool(
        name="tools.help",
        description="Help on one tool.",
        version="1.0.0",
        input=s.object({"tool": s.enum(["fs.read", "tools.help"])}),
        handler=lambda args: f"help for {args['tool']}",
    )
    read = define_tool(name="fs.read", description="Read.", version="1.0.0", input=s.object({}), handler=lambda _: "")
    tools = OpenAITools(Runtime([take, read]))
    call = {"id": "c", "type": "function", "function": {"name": "tools_help", "arguments": '{"tool": "fs-read"}'}}
    assert '"tool" must be one of "fs.read", "tools.help".' in tools.handle_sync(call)["content"]
    call["function"]["arguments"] = '{"tool": "fs.read"}'
    assert tools.handle_sync(call)["content"] == "help for fs.read"
