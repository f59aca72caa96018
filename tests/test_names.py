from __future__ import annotations

import difflib
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, Runtime, ToolNotFoundError, define_tool
from hermes_core import schema as s
from hermes_core._base._issues import shorten
from hermes_core._base._names import (
    MAX_COMPARED,
    NAME_MAX,
    NameIndex,
    _close_matches,
    _fold,
    check_name,
    is_name,
    suggest,
)

RULE = (
    "must be segments joined by '.', each a letter or '_' then letters, digits, '_' or '-', "
    "at most 64 characters (such as 'fs.path'), got "
)


@pytest.mark.parametrize(
    "name",
    [
        "fs",
        "fs.write",
        "a.b_c.d9",
        "x" * NAME_MAX,
        # Names MCP servers and function-calling APIs give their tools, hosted as they are.
        "getTinyImage",
        "Weather_GetForecast",
        "api.Users.get_user",
        "a-b.c_d",
        "_private",
        "_",
        "a._b.C-",
        "fs-write",
        "FS.Write",
        "A" + "-" * (NAME_MAX - 1),
    ],
)
def test_names_that_follow_the_rule(name: str) -> None:
    assert is_name(name)
    assert check_name("s.ref()", "name", name, example="fs.path") == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "1abc",
        "a..b",
        ".a",
        "a.",
        "a b",
        "é",
        "café",
        "-a",
        "a.-b",
        "fs.9",
        "fs/write",
        "fs:write",
        "fs.write\n",
        "\u212a",  # KELVIN SIGN: a letter, but not an ASCII one
        "x" * (NAME_MAX + 1),
        "a." * 32 + "b",  # 65 characters, each segment fine
        3,
        None,
    ],
)
def test_names_that_do_not(name: object) -> None:
    assert not is_name(name)
    with pytest.raises(InvalidDefinitionError) as caught:
        check_name("Runtime()", "schemas name", name, example="fs.path")
    assert (caught.value.declaration, caught.value.field) == ("Runtime()", "schemas name")
    assert caught.value.detail == RULE + shorten(repr(name))


def test_a_long_bad_name_is_shortened_in_the_message() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        check_name("tool", "name", "X" * 500, example="fs.write")
    assert caught.value.detail.endswith("got '" + "X" * 56 + "...")  # shorten(): 60 characters in all


def test_suggestions_put_case_and_separator_slips_first_then_close_spellings() -> None:
    names = ["fs.read", "fs.write", "fs.stat", "math.eval"]
    assert suggest("FS_Write", names) == ("fs.write",)
    assert suggest("fs/read", names) == ("fs.read",)
    assert suggest("fs.raed", names)[0] == "fs.read"
    assert suggest("fs.reed", names, limit=1) == ("fs.read",)
    assert suggest("weather.today", names) == ()
    assert suggest("fs.read", {"fs.read": 1}) == ("fs.read",)  # a mapping's keys are its names


def test_a_name_misspelt_in_case_suggests_the_name_as_given() -> None:
    names = ["getTinyImage", "getLargeImage", "Weather_GetForecast", "api.Users.get_user"]
    assert suggest("getTinyimage", names)[0] == "getTinyImage"
    assert suggest("weather_getforecast", names) == ("Weather_GetForecast",)
    assert suggest("api.users.get_user", names)[0] == "api.Users.get_user"


def test_names_are_case_sensitive() -> None:
    tool = define_tool(name="getTinyImage", description="d", version="1.0.0", input=s.object({}), handler=dict)
    runtime = Runtime([tool])
    assert runtime.call_sync("getTinyImage", {}) == {}
    with pytest.raises(ToolNotFoundError) as caught:
        runtime.call_sync("gettinyimage", {})
    assert caught.value.suggestions == ("getTinyImage",)


# -- suggestions at scale: the same answers, in bounded time ------------------------------------------


def reference(name: str, names: list[str], limit: int = 3) -> tuple[str, ...]:
    """What suggest() returned before it had an index: every name folded, then difflib over all of them."""
    folded = _fold(name)
    found = [candidate for candidate in names if _fold(candidate) == folded]
    for close in difflib.get_close_matches(name, names, n=limit, cutoff=0.6):
        if close not in found:
            found.append(close)
    return tuple(found[:limit])


WORDS = ["fs", "read", "write", "list", "stat", "http", "get", "post", "math", "eval", "git", "log", "diff", "notes"]


def test_up_to_max_compared_names_the_suggestions_are_what_comparing_with_every_name_gives() -> None:
    rng = random.Random(20_240)
    for _ in range(60):
        size = rng.randint(1, MAX_COMPARED)
        names = list(
            dict.fromkeys(f"{rng.choice(WORDS)}.{rng.choice(WORDS)}{rng.choice(['', '_x', '2'])}" for _ in range(size))
        )
        for name in (
            rng.choice(names).upper(),
            rng.choice(names)[:-1],
            rng.choice(WORDS) + "." + rng.choice(WORDS),
            "zz",
        ):
            for limit in (1, 3, 5):
                assert suggest(name, names, limit=limit) == reference(name, names, limit), (name, names)
                assert NameIndex(names).suggest(name, limit=limit) == reference(name, names, limit)


def test_the_pruned_comparison_returns_what_difflib_returns() -> None:
    rng = random.Random(7)
    for _ in range(500):
        candidates = [
            "".join(rng.choice("abcde._") for _ in range(rng.randint(0, 9))) for _ in range(rng.randint(0, 60))
        ]
        word = "".join(rng.choice("abcde._") for _ in range(rng.randint(0, 9)))
        for limit in (1, 2, 3, 7):
            assert _close_matches(word, candidates, limit) == difflib.get_close_matches(word, candidates, limit, 0.6)


SERVICES = ["github", "gitlab", "slack", "jira", "notion", "drive", "gmail", "calendar", "stripe", "linear"]
SERVICES += ["zoom", "figma", "dropbox", "hubspot", "salesforce", "asana", "trello", "discord", "twilio", "shopify"]
VERBS = ["get", "list", "create", "update", "delete", "search", "archive", "restore", "export", "import"]
THINGS = ["issue", "page", "file", "message", "event", "user", "team", "invoice", "comment", "label", "project", "task"]


def many_names() -> list[str]:
    """100,000 distinct tool names such as an MCP gateway registers: service and account, verb, object."""
    return [f"{SERVICES[i % 20]}{i // 20 % 500}.{VERBS[i // 10_000]}_{THINGS[i * 7 % 12]}" for i in range(100_000)]


# Each mistyped name, then what comparing it with all 100,000 names gives (checked once with reference()).
AT_SCALE = [
    ("calendar.get_page", ("calendar9.get_page", "calendar6.get_page", "calendar3.get_page")),
    ("salesforce61.get_projecxt", ("salesforce61.get_project", "salesforce361.get_project", "salesforce1.get_project")),
    ("github0.creqte_comment", ("github0.create_comment", "github90.create_comment", "github60.create_comment")),
    ("discord66.update_taks", ("discord66.update_task", "discord366.update_task", "discord6.update_task")),
    ("xlinear339.search_task", ("linear339.search_task", "linear39.search_task", "linear33.search_task")),
    ("zoom394.archivq_team", ("zoom394.archive_team", "zoom94.archive_team", "zoom34.archive_team")),
    (
        "gitlab445.restore_invoiec",
        ("gitlab445.restore_invoice", "gitlab484.restore_invoice", "gitlab475.restore_invoice"),
    ),
    ("dropbox50.export_comment", ("dropbox450.export_comment", "dropbox150.export_comment", "dropbox0.export_comment")),
    ("shopify499.import_laxbel", ("shopify499.import_label", "shopify49.import_label", "shopify496.import_label")),
    ("SHOPIFY499.IMPORT-LABEL", ("shopify499.import_label",)),
]


@pytest.mark.scale
def test_among_100000_names_a_mistyped_one_gets_the_suggestions_comparing_with_all_would_give() -> None:
    names = many_names()
    assert len(set(names)) == 100_000
    registry = dict.fromkeys(names)  # as a runtime holds its tools
    index = NameIndex(names)
    for mistyped, expected in AT_SCALE:
        assert mistyped not in registry
        assert suggest(mistyped, registry) == expected, mistyped
        assert index.suggest(mistyped) == expected
        assert suggest(mistyped, index) == expected
    # A slip of case and separators comes first, whatever close spellings follow it.
    assert suggest("Twilio283 delete/team", registry)[0] == "twilio283.delete_team"
    assert suggest("weather.today", registry) == ()


def test_a_large_collection_that_changes_is_indexed_anew() -> None:
    names = [f"bulk.tool_{i}" for i in range(MAX_COMPARED * 2)]
    assert suggest("bulk.tol_7", names) == ("bulk.tool_7", "bulk.tool_97", "bulk.tool_87")
    names[7] = "other.thing"
    assert suggest("bulk.tol_7", names) == ("bulk.tool_97", "bulk.tool_87", "bulk.tool_79")
    assert suggest("other.thnig", names) == ("other.thing",)


def test_a_runtime_of_many_tools_suggests_through_the_index() -> None:
    tools = [
        define_tool(name=f"bulk.tool_{i}", description="d", version="1.0.0", input=s.object({}), handler=dict)
        for i in range(1_000)
    ]
    runtime = Runtime(tools)
    with pytest.raises(ToolNotFoundError) as caught:
        runtime.call_sync("bulk.tol_500", {})
    found = caught.value.suggestions
    assert found[0] == "bulk.tool_500"
    # As close as comparing with every tool: of names equally close, which ones are shown may differ.
    assert closeness("bulk.tol_500", found) == closeness("bulk.tol_500", reference("bulk.tol_500", list(runtime.tools)))


def closeness(name: str, suggestions: tuple[str, ...]) -> list[float]:
    return [difflib.SequenceMatcher(None, suggestion, name).ratio() for suggestion in suggestions]


@given(st.text(alphabet="aZ._-/: \t\n\x1c\x00\u00e9\u2003", max_size=16))
def test_a_name_is_folded_as_the_expression_folds_it(name: str) -> None:
    # Folded with str's methods, not an expression compiled at every start (start-up).
    assert _fold(name) == re.sub(r"[\s_\-/:]+", ".", name.strip().lower())
