"""Imported patterns run in linear time, keep ECMA-262's meaning, and are reported when they cannot be run.

The attack these reproduce: ``^(a+)+$`` in an imported document, checked
against 26 ``a`` and a ``!``, took 19.7 s on Python's ``re`` (a call with
``timeout=0.5`` took 3.5 s, a mounted MCP server's tool 49.7 s), and doubles
with each ``a`` more.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from hermes_core import InputInvalidError, InvalidDefinitionError, Runtime, SchemaError, define_tool
from hermes_core import schema as s
from hermes_core.schema._patterns import ENGINE, to_re2

EVIL = "^(a+)+$"
ATTACK = "a" * 26 + "!"
# CPU seconds, generous: the attack took 19.7 s; with a linear engine it takes microseconds.
BOUND = 2.0

pytestmark = pytest.mark.skipif(ENGINE is None, reason="google-re2 has no wheel for this platform")


def _timed(check: Any) -> float:
    """The CPU seconds *check* took: a bound on work that a busy machine does not stretch, as it does wall time."""
    started = time.process_time()
    check()
    return time.process_time() - started


def test_a_catastrophic_pattern_from_json_schema_is_checked_in_linear_time() -> None:
    imported = s.from_json_schema({"type": "string", "pattern": EVIL})
    assert imported.unsupported == ()

    def attack() -> None:
        with pytest.raises(SchemaError, match=r'must match the pattern "\^\(a\+\)\+\$"'):
            imported.parse(ATTACK)

    assert _timed(attack) < BOUND
    long = "a" * 1_000_000 + "!"

    def long_attack() -> None:  # linear: a million characters take no longer than the bound either
        with pytest.raises(SchemaError):
            imported.parse(long)

    assert _timed(long_attack) < BOUND
    assert imported.parse("a" * 26) == "a" * 26


def test_a_catastrophic_pattern_property_is_checked_in_linear_time() -> None:
    imported = s.from_json_schema(
        {"type": "object", "patternProperties": {EVIL: {"type": "integer"}}, "additionalProperties": False}
    )
    assert imported.unsupported == ()

    def attack() -> None:
        with pytest.raises(SchemaError, match="unexpected field"):
            imported.parse({ATTACK: 1})

    assert _timed(attack) < BOUND
    assert imported.parse({"aaa": 1}) == {"aaa": 1}


def test_a_call_with_a_catastrophic_imported_pattern_answers_input_invalid_within_its_bound() -> None:
    document = {"type": "object", "properties": {"name": {"type": "string", "pattern": EVIL}}, "required": ["name"]}
    tool = define_tool(
        name="greet",
        description="Greet someone.",
        version="1.0.0",
        input=s.from_json_schema(document, closed=True),
        handler=lambda arguments: f"hello {arguments['name']}",
    )
    runtime = Runtime([tool])

    def attack() -> None:
        with pytest.raises(InputInvalidError, match='"name" must match the pattern'):
            runtime.call_sync("greet", {"name": ATTACK}, timeout=0.5)

    assert _timed(attack) < BOUND
    assert runtime.call_sync("greet", {"name": "aaa"}) == "hello aaa"


def test_a_mounted_mcp_tool_with_a_catastrophic_pattern_is_bounded() -> None:
    """The mount path of hermesos-mcp: a listed tool's inputSchema goes through from_json_schema(closed=True)."""
    hermes_mcp = pytest.importorskip("hermes_mcp")
    from hermes_mcp._connect import Pool
    from hermes_mcp._mount import mount

    [server] = hermes_mcp.parse_config('[servers.evil]\ncommand = "evil-server"\n', "mcp.toml").servers
    listing = [
        {
            "name": "lookup",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": EVIL}}},
        }
    ]
    problems: list[str] = []
    [tool] = mount(Pool([server]), server, listing, problems)
    assert problems == []
    runtime = Runtime([tool], grants=["mcp:evil"])

    def attack() -> None:
        # Refused before the call leaves: the server (which is not running) is never reached.
        with pytest.raises(InputInvalidError, match='"q" must match the pattern'):
            runtime.call_sync("evil.lookup", {"q": ATTACK}, timeout=5)

    assert _timed(attack) < BOUND


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        (r"^(a)\1$", "backreferences"),
        (r"^(?=a)a$", "lookaround"),
        (r"(?<!a)b", "lookaround"),
        (r"a{1001}", "repetition counts above 1,000"),
        (r"(?i)abc", "the group opening '(?i', which ECMA-262 does not have"),
        (r"\ud800", "a lone surrogate escape"),
    ],
)
def test_a_pattern_the_engine_cannot_run_is_reported_never_run(pattern: str, said: str) -> None:
    imported = s.from_json_schema({"type": "string", "pattern": pattern})
    [unsupported] = imported.unsupported
    assert (unsupported.pointer, unsupported.keyword) == ("", "pattern")
    assert unsupported.reason.startswith("is not checked: ")
    assert said in unsupported.reason
    assert imported.parse("anything") == "anything"  # not checked, as reported
    with pytest.raises(InvalidDefinitionError, match="strict=True refuses"):
        s.from_json_schema({"type": "string", "pattern": pattern}, strict=True)
    keyed = s.from_json_schema({"type": "object", "patternProperties": {pattern: {"type": "string"}}})
    where = f"/patternProperties/{pattern}"
    assert [(u.pointer, u.keyword) for u in keyed.unsupported] == [(where, "patternProperties")]


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        (r"^\s$", ["\ufeff", "\u00a0", "\u2028", "\t", "\x0b"], ["\x1c", "\x85", "a"]),  # ECMA-262's white space
        (r"^\S$", ["a", "\x1c"], ["\ufeff", " "]),
        (r"^.$", ["a", "\x85"], ["\n", "\r", "\u2028", "\u2029"]),  # . stops at every line terminator
        (r"^a$", ["a"], ["a\n"]),  # $ is the end, not before a final newline as in re
        (r"^\d+$", ["0123"], ["\u0663"]),  # ASCII digits only
        (r"^\w+$", ["a_1"], ["é"]),
        (r"^\cJ$", ["\n"], ["cJ"]),
        (r"^\u00e9\x41$", ["éA"], ["e"]),
        (r"^\ud83d\ude00$", ["\U0001f600"], ["\ud83d"]),
        (r"^[\b]$", ["\b"], ["b"]),
        (r"^a[]$", [], ["a", "a[]"]),
        (r"^[^]$", ["x", "\n"], ["", "xy"]),
        (r"^[[]$", ["["], ["]"]),
        (r"^\p{Letter}cole$", ["école"], ["1cole"]),
        (r"^\p{digit}+$", ["\u09ea\u09e8"], ["x"]),
        (r"^[\p{Cased_Letter}]+$", ["Ab"], ["1"]),
        (r"^\p{Script=Greek}$", ["\u03b1"], ["a"]),
        (r"^(?<year>\d{4})-\z$", ["2024-z"], ["2024-"]),  # named group; \z is a plain z in ECMA-262
        (r"^\/\-\_$", ["/-_"], ["x"]),
    ],
)
def test_imported_patterns_keep_ecma_262_semantics(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    imported = s.from_json_schema({"type": "string", "pattern": pattern})
    assert imported.unsupported == (), to_re2(pattern)
    for text in matching:
        assert imported.parse(text) == text
    for text in not_matching:
        with pytest.raises(SchemaError):
            imported.parse(text)


def test_a_pattern_written_in_python_stays_on_re() -> None:
    """s.string(pattern=...) is the plugin author's own code: Python's re, backreferences and all."""
    doubled = s.string(pattern=r"^(ab)\1$")
    assert doubled.parse("abab") == "abab"
    with pytest.raises(SchemaError):
        doubled.parse("abba")


def test_without_the_engine_imported_patterns_are_reported_and_never_run() -> None:
    """Where google-re2 is not installed, an imported pattern is listed as unchecked and the attack is harmless."""
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.modules["re2"] = None  # as if google-re2 were not installed: importing it fails
        from hermes_core import schema as s
        from hermes_core.schema._patterns import ENGINE
        assert ENGINE is None
        imported = s.from_json_schema({{"type": "string", "pattern": {EVIL!r}}})
        [unsupported] = imported.unsupported
        print(unsupported)
        started = time.process_time()
        assert imported.parse({ATTACK!r}) == {ATTACK!r}
        assert time.process_time() - started < {BOUND}
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "pattern at the root is not checked: no linear-time regular expression engine is installed (the "
        "google-re2 package), and a pattern from elsewhere is never run on Python's re, where one can take "
        "exponential time"
    )
