"""Inputs and plugins that used to get past the command's own error handling, through the real console script."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hermes_core.cli import main

if TYPE_CHECKING:
    from conftest import Site

HERMES = Path(sys.executable).with_name("hermesos")


def script(site: Site, *argv: str, stdin: str | bytes | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script, run as an operator runs it, with *site*'s distributions installed."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
    # hermesos-fs has no default root: the one the site fixture made, so that it loads with its tools.
    environment.update(PYTHONPATH=str(site.path), HERMESOS_FS_ROOT=str(site.path / "fs-root"), **env)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    # A bound on the test itself: what is tested here used to hang.
    done = subprocess.run(
        [str(HERMES), *argv], input=data, capture_output=True, env=environment, check=False, timeout=300
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    )


def origin(distribution: str) -> str:
    """How a message names a plugin of conftest's Site."""
    serial = distribution.rsplit("-", 1)[1]
    return f'plugin {distribution} 1.0.0 (entry point "unit{serial}" = hermesos_unit_{serial})'


# -- a plugin that exits or interrupts --------------------------------------------------


EXITING_HOOK = """
import sys

@hookimpl
def hermes_tools():
    sys.exit(3)
"""


def test_a_hook_calling_sys_exit_is_a_broken_plugin_not_the_commands_exit_status(site: Site) -> None:
    exiting = site.install(site.plugin(EXITING_HOOK))
    check = script(site, "check")
    assert check.returncode == 1  # 3 would read as TOOL_NOT_FOUND
    assert f"problem: {origin(exiting)}: hook hermes_tools raised SystemExit: 3" in check.stdout.splitlines()
    listing = script(site, "tools", "list")
    assert listing.returncode == 1
    assert f"error: broken {origin(exiting)}: hook hermes_tools raised SystemExit: 3" in listing.stderr.splitlines()
    call = script(site, "call", "math.eval", '{"expression": "1"}')
    assert (call.returncode, call.stdout) == (1, "")


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import sys\nsys.exit(4)", "importing {module} failed with SystemExit: 4"),
        ("raise SystemExit", "importing {module} failed with SystemExit"),
        (
            "import sys\n\n@hookimpl\ndef hermes_tools():\n    yield make('unit.first')\n    sys.exit(5)",
            "iterating what hermes_tools returned raised SystemExit: 5",
        ),
    ],
    ids=["import", "bare-import", "generator-hook"],
)
def test_sys_exit_at_import_or_in_a_generator_hook_is_a_broken_plugin(site: Site, source: str, what: str) -> None:
    exiting = site.install(site.plugin(source) if "hookimpl" in source else source)
    check = script(site, "check")
    module = "hermesos_unit_" + exiting.rsplit("-", 1)[1]
    assert check.returncode == 1
    assert f"problem: {origin(exiting)}: {what.format(module=module)}" in check.stdout.splitlines()


def test_a_keyboard_interrupt_in_a_hook_ends_the_command_with_one_line_and_status_130(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    raise KeyboardInterrupt"))
    for argv in (["check"], ["tools", "list"], ["call", "math.eval", "{}"], ["--debug", "plugins", "list"]):
        done = script(site, *argv)
        assert (done.returncode, done.stdout, done.stderr) == (130, "", "hermesos: interrupted\n"), argv


# -- input that is not JSON, or too much of it -----------------------------------------------


def _usage(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of a usage error, after checking it is one (exit 2, nothing on stdout, one line on stderr)."""
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()
    return line


@pytest.mark.parametrize("how", ["argument", "stdin"])
def test_input_nested_deeper_than_python_decodes_is_a_usage_error(site: Site, how: str) -> None:
    if how == "argument":  # as deep as one command-line argument can be (128 KiB)
        done = script(site, "call", "math.eval", "[" * 100_000)
    else:  # well-formed, and too deep all the same
        done = script(site, "call", "math.eval", "-", stdin="[" * 100_000 + "]" * 100_000)
    assert _usage(done) == "hermesos call: error: the input nests arrays and objects too deeply to read"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("NaN", "NaN is not a JSON value (JSON numbers are finite)"),
        ('{"expression": Infinity}', "Infinity is not a JSON value (JSON numbers are finite)"),
        ("[1, -Infinity]", "-Infinity is not a JSON value (JSON numbers are finite)"),
        ('{"expression": "1",}', "Expecting property name enclosed in double quotes at line 1, column 20"),
        ("", "Expecting value at line 1, column 1"),
    ],
)
def test_input_that_is_not_a_json_value_is_a_usage_error(site: Site, text: str, problem: str) -> None:
    assert (
        _usage(script(site, "call", "math.eval", text))
        == f"hermesos call: error: the input is not valid JSON: {problem}"
    )


def test_numbers_python_cannot_hold_are_usage_errors(site: Site) -> None:
    digits = sys.get_int_max_str_digits()
    assert _usage(script(site, "call", "math.eval", "-", stdin="-" + "9" * (digits + 1))) == (
        f"hermesos call: error: the input holds an integer of {digits + 1} digits, more than the {digits} this "
        "Python reads"
    )
    assert _usage(script(site, "call", "math.eval", '{"x": 1e400}')) == (
        "hermesos call: error: the input holds the number 1e400, too large for a 64-bit float"
    )


def test_stdin_that_is_not_utf8_is_a_usage_error(site: Site) -> None:
    done = script(site, "call", "math.eval", "-", stdin=b'{"expression": "\xff"}')
    assert (
        _usage(done)
        == "hermesos call: error: the input is not valid JSON: it is not UTF-8 text (byte 0xff at offset 16)"
    )


def test_stdin_is_read_up_to_16_mib(site: Site) -> None:
    from hermes_core.cli import STDIN_LIMIT

    assert STDIN_LIMIT == 16 * 1024 * 1024
    padded = '{"expression": "1 + 1"}'.ljust(STDIN_LIMIT)  # exactly the limit: read and called
    assert script(site, "call", "math.eval", "-", stdin=padded).stdout == "2\n"
    done = script(site, "call", "math.eval", "-", stdin=padded + " ")
    assert _usage(done) == (
        "hermesos call: error: the input on stdin is larger than 16 MiB, the most 'hermesos call -' reads"
    )


def test_a_text_stdin_is_held_to_the_same_limit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hermes_core.cli._call.STDIN_LIMIT", 8)
    monkeypatch.setattr(sys, "stdin", io.StringIO('"ééééé"'))
    assert main(["call", "math.eval", "-"]) == 2  # 7 characters, 12 bytes of UTF-8
    assert capsys.readouterr().err == (
        "hermesos call: error: the input on stdin is larger than 8 bytes, the most 'hermesos call -' reads\n"
    )


# -- check --timeout: a plugin that hangs is stopped and named -----------------------------------


HANGS_AT_IMPORT = "import time\n\ntime.sleep(600)\n"
HANGS_IN_HOOK = """
import threading

@hookimpl
def hermes_tools():
    threading.Event().wait()
"""
ENDS_THE_PROCESS = "import os\n\nos._exit(0)\n"
CHATTY = """
print("a plugin printing on stdout")

@hookimpl
def hermes_tools():
    return [make("unit.chatty")]
"""


def module_of(distribution: str) -> str:
    return "hermesos_unit_" + distribution.rsplit("-", 1)[1]


def test_check_timeout_stops_a_plugin_that_hangs_names_it_and_checks_the_others(site: Site) -> None:
    importing = site.install(HANGS_AT_IMPORT)
    hooking = site.install(site.plugin(HANGS_IN_HOOK))
    chatty = site.install(site.plugin(CHATTY))
    broken = site.install("raise RuntimeError('boom')")
    done = script(site, "check", "--timeout", "3")
    assert done.returncode == 1
    *problems, summary = done.stdout.splitlines()
    expected = {
        importing: f"problem: {origin(importing)}: importing {module_of(importing)} did not finish within 3 seconds; "
        "check stopped it",
        hooking: f"problem: {origin(hooking)}: hook hermes_tools did not finish within 3 seconds; check stopped it",
        broken: f"problem: {origin(broken)}: importing {module_of(broken)} failed with RuntimeError: boom",
    }
    assert problems == [expected[name] for name in sorted(expected)]  # in the order of check without --timeout
    assert chatty not in done.stdout
    assert "a plugin printing on stdout" in done.stderr  # what plugins print passes, on stderr
    plugins, healthy = (int(word) for word in summary.replace(",", "").split()[::2][:2])
    assert summary == f"{plugins} plugins, {healthy} healthy, 3 problems"
    as_json = script(site, "check", "--timeout", "3", "--json")
    assert as_json.returncode == 1
    report = json.loads(as_json.stdout)
    assert (report["plugins"], report["healthy"]) == (plugins, healthy)
    assert [(p["distribution"], p["error"]) for p in report["problems"]] == [
        (name, "PluginLoadError") for name in sorted(expected)
    ]
    assert [f"problem: {p['message']}" for p in report["problems"]] == problems


def test_check_timeout_names_a_plugin_that_ends_the_process(site: Site) -> None:
    ending = site.install(ENDS_THE_PROCESS)
    done = script(site, "check", "--timeout", "5")
    assert done.returncode == 1
    assert (
        f"problem: {origin(ending)}: importing {module_of(ending)} ended the process checking the plugins "
        "(exit status 0)"
    ) in done.stdout.splitlines()


def test_check_timeout_with_debug_shows_where_the_plugin_was_stuck(site: Site) -> None:
    hanging = site.install(HANGS_AT_IMPORT)
    done = script(site, "check", "--timeout", "2", "--debug")
    assert done.returncode == 1
    assert f"where {origin(hanging)} was stopped (importing {module_of(hanging)}):" in done.stderr.splitlines()
    assert f'{module_of(hanging)}.py", line 3 in <module>' in done.stderr


def test_check_without_trouble_gives_the_same_report_with_or_without_timeout(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return [make('unit.quiet')]"))
    site.install(site.plugin("def hermes_tool():\n    return []"))
    plain = script(site, "check", "--json")
    limited = script(site, "check", "--json", "--timeout", "30")
    assert (limited.returncode, json.loads(limited.stdout)) == (plain.returncode, json.loads(plain.stdout))
    assert plain.returncode == 1


@pytest.mark.parametrize("bad", ["0", "-2", "never", "nan"])
def test_check_timeout_must_be_a_positive_number(site: Site, bad: str) -> None:
    done = script(site, "check", "--timeout", bad)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        f"hermesos check: argument --timeout: must be a positive number of seconds such as 2.5, got {bad!r}"
    )


# -- output that cannot be written, streams that are closed ---------------------------------------


def _with_streams(site: Site, *argv: str, stdin: Any = None, stdout: Any = None) -> tuple[int, str]:
    """The console script with the given stdin and stdout: its status and its stderr."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
    environment.update(PYTHONPATH=str(site.path), HERMESOS_FS_ROOT=str(site.path / "fs-root"))
    done = subprocess.run(
        [str(HERMES), *argv],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=environment,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize("argv", [["--version"], ["tools", "list"], ["call", "math.eval", '{"expression": "1"}']])
def test_a_reader_that_went_away_ends_the_command_quietly(site: Site, argv: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # gone before the command writes a byte: every write is EPIPE
    try:
        status, err = _with_streams(site, *argv, stdout=write)
    finally:
        os.close(write)
    assert (status, err) == (0, "")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="/dev/full, a device every write to fails as a full disk")
@pytest.mark.parametrize("argv", [["--version"], ["tools", "list"], ["call", "math.eval", '{"expression": "1"}']])
def test_output_that_cannot_be_written_is_one_line_not_a_traceback(site: Site, argv: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        status, err = _with_streams(site, *argv, stdout=full)
    assert (status, err) == (1, "hermesos: cannot write the output: No space left on device\n")


def test_closed_standard_streams_are_the_null_device(site: Site) -> None:
    """Started with stdout or stdin closed (``>&-``, ``<&-``): the command runs, no AttributeError on None."""
    hermesos = shlex.quote(str(HERMES))
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
    environment.update(PYTHONPATH=str(site.path), HERMESOS_FS_ROOT=str(site.path / "fs-root"))
    for line, status, last in (
        (f"{hermesos} tools list >&-", 0, None),
        (f"{hermesos} call math.eval - <&-", 2, "hermesos call: error: the input is not valid JSON: "),
    ):
        done = subprocess.run(
            ["sh", "-c", line], capture_output=True, text=True, env=environment, timeout=120, check=False
        )
        assert done.returncode == status, done.stderr
        assert "Traceback" not in done.stderr
        if last is not None:
            assert done.stderr.splitlines()[-1].startswith(last)


# -- text from a plugin or a server, on a terminal -----------------------------------------------------

ESCAPING = r"""
SEQUENCE = "\x1b[2J\x1b]0;pwned\x07\rFAKE: all is well"

@hookimpl
def hermes_tools():
    return [define_tool(name="esc.show", description="Show." + SEQUENCE, version="1.0.0", input=s.object({}),
                        handler=dict)]

@hookimpl
def hermes_problems():
    return ["a server said: " + SEQUENCE]
"""


def test_text_from_plugins_reaches_the_terminal_with_its_control_characters_escaped(site: Site) -> None:
    """A description or a problem holding escape sequences could clear the screen and print lines of its own."""
    site.install(site.plugin(ESCAPING))
    for argv in (["tools", "list"], ["tools", "show", "esc.show"]):
        done = script(site, *argv)
        assert "\x1b" not in done.stdout + done.stderr
        assert "\x07" not in done.stdout + done.stderr
        assert "\\x1b[2J" in done.stdout + done.stderr
    warned = script(site, "tools", "list").stderr
    assert warned.endswith("): a server said: \\x1b[2J\\x1b]0;pwned\\x07\\x0dFAKE: all is well\n")
