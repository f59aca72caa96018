"""The hermesos command: main(argv) in process, and the real console script in subprocesses."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_core import (
    PermissionDeniedError,
    Plugin,
    PluginLoadError,
    PluginOrigin,
    PluginProblem,
    PluginSet,
    Runtime,
    ToolFailedError,
    ToolNotFoundError,
    __version__,
    cli,
)
from hermes_core._base._names import suggest
from hermes_core._plugins import _discover as plugins_module
from hermes_core.cli import EXIT_CODES, main

if TYPE_CHECKING:
    from conftest import Site

HERMES = Path(sys.executable).with_name("hermesos")

GOOD = """
@hookimpl
def hermes_tools():
    return [
        make("unit.echo", permissions=["unit:echo"]),
        define_tool(
            name="unit.add",
            description="Add two integers.\\nReturns their sum.",
            version="2.0.0",
            input=s.object({"a": s.integer(), "b": s.integer(description="The second")}),
            output=s.integer(),
            handler=lambda args: args["a"] + args["b"],
        ),
        define_tool(
            name="unit.broken",
            description="Returns the wrong type.",
            version="1.0.0",
            input=s.object({}),
            output=s.integer(),
            handler=lambda args: "seven",
        ),
        define_tool(
            name="unit.crash",
            description="Raises.",
            version="1.0.0",
            input=s.object({}),
            handler=lambda args: 1 / 0,
        ),
    ]
"""


@pytest.fixture
def good(site: Site) -> str:
    return site.install(site.plugin(GOOD))


def entry_point(distribution: str) -> str:
    """The entry point conftest's Site gives *distribution*: hermesos-unit-7 has unit7."""
    return "unit" + distribution.rsplit("-", 1)[1]


def module(distribution: str) -> str:
    return distribution.replace("-", "_")


def origin(distribution: str, version: str = "1.0.0") -> str:
    """How a message names a plugin of conftest's Site."""
    return f'plugin {distribution} {version} (entry point "{entry_point(distribution)}" = {module(distribution)})'


def skip_hint(*distributions: str, held: str = "") -> str:
    """The line that follows the broken-plugin lines: how to start without them."""
    them = "it" if len(distributions) == 1 else "them"
    flags = " ".join(f"--disable {name}" for name in distributions)
    value = ",".join([*([held] if held else []), *distributions])
    return (
        f"To start without {them}, disable {them}: {flags} or HERMESOS_DISABLE_PLUGINS={value}; "
        "'hermesos check' lists every problem of every plugin."
    )


def without_waiting(stderr: str) -> list[str]:
    """The lines of *stderr* but the "hermesos: loading the plugins... (1 s)" lines a busy machine may add."""
    return [line for line in stderr.splitlines() if not re.fullmatch(r"hermesos: .*\.\.\. \(\d+ s\)", line)]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# -- listing ---------------------------------------------------------------------------


def test_tools_list_shows_name_version_distribution_permissions_and_first_line(
    capsys: pytest.CaptureFixture[str], good: str
) -> None:
    status, out, _ = run(capsys, "tools", "list")
    assert status == 0
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert lines["unit.add"].split() == ["unit.add", "2.0.0", good, "[-]", "Add", "two", "integers."]
    assert lines["unit.echo"].split()[:4] == ["unit.echo", "1.0.0", good, "[unit:echo]"]
    assert "\033[" not in out  # not a terminal: no colour


def test_tools_list_json(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, out, _ = run(capsys, "tools", "list", "--json")
    assert status == 0
    data = json.loads(out)
    rows = {row["name"]: row for row in data["tools"]}
    assert rows["unit.add"] == {
        "name": "unit.add",
        "version": "2.0.0",
        "distribution": good,
        "permissions": [],
        "description": "Add two integers.",
    }
    assert data["broken_plugins"] == []


def test_listings_show_a_broken_plugin_as_broken_instead_of_crashing(
    capsys: pytest.CaptureFixture[str], site: Site, good: str
) -> None:
    broken = site.install("raise RuntimeError('boom')")
    status, out, err = run(capsys, "tools", "list")
    assert status == 1
    assert "unit.add" in out
    assert "broken plugin" not in out
    assert f"error: broken {origin(broken)}: importing {module(broken)} failed with RuntimeError: boom\n" in err
    status, out, _ = run(capsys, "tools", "list", "--json")
    assert status == 1
    assert json.loads(out)["broken_plugins"] == [
        {"distribution": broken, "version": "1.0.0", "entry_point": entry_point(broken)}
    ]
    status, out, _ = run(capsys, "plugins", "list", "--json")
    assert status == 0
    states = {row["distribution"]: row for row in json.loads(out)["plugins"]}
    assert states[broken]["state"] == "broken"
    assert "RuntimeError: boom" in states[broken]["problems"][0]
    assert states[good]["state"] == "ok"
    assert states[good]["tools"] == ["unit.echo", "unit.add", "unit.broken", "unit.crash"]


def test_plugins_list_text(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, out, _ = run(capsys, "plugins", "list", "--disable", good)
    assert status == 0
    (line,) = [line for line in out.splitlines() if line.startswith(good)]
    assert "disabled" in line
    status, out, _ = run(capsys, "plugins", "list")
    (line,) = [line for line in out.splitlines() if line.startswith(good)]
    assert line.split()[:2] == [good, "1.0.0"]
    assert "ok  4 tools, 0 schemas, 0 providers" in line


def test_tools_show_gives_everything_about_one_tool(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, out, _ = run(capsys, "tools", "show", "unit.add", "--json")
    assert status == 0
    data = json.loads(out)
    assert data["description"] == "Add two integers.\nReturns their sum."
    assert data["distribution"] == good
    assert data["input_schema"]["properties"]["b"] == {"type": "integer", "description": "The second"}
    assert data["output_schema"] == {"type": "integer"}
    status, out, _ = run(capsys, "tools", "show", "unit.add")
    assert status == 0
    assert out.startswith("unit.add 2.0.0\n")
    assert f"from {good} 1.0.0" in out
    assert '"description": "The second"' in out


def test_tools_show_of_an_unknown_tool_suggests_one_without_calling_anything(
    capsys: pytest.CaptureFixture[str], good: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_call(*args: object, **kwargs: object) -> None:
        raise AssertionError("tools show called a tool")

    monkeypatch.setattr(Runtime, "call_sync", no_call)
    status, _, err = run(capsys, "tools", "show", "unit.ad")
    assert status == EXIT_CODES["TOOL_NOT_FOUND"] == 3
    names = ["unit.echo", "unit.add", "unit.broken", "unit.crash"]
    assert "unit.add" in suggest("unit.ad", names)
    assert err == f"TOOL_NOT_FOUND: {ToolNotFoundError('unit.ad', suggest('unit.ad', names))}\n"
    status, _, err = run(capsys, "tools", "show", "unit.ad", "--json")
    assert status == 3
    assert json.loads(err)["suggestions"] == list(suggest("unit.ad", names))


def test_tools_show_of_an_unknown_tool_names_the_broken_plugins(
    capsys: pytest.CaptureFixture[str], site: Site, good: str
) -> None:
    broken = site.install("raise RuntimeError('boom')")
    status, _, err = run(capsys, "tools", "show", "unit.missing")
    assert status == 3
    assert err.splitlines()[-2:] == [
        f"error: broken {origin(broken)}: importing {module(broken)} failed with RuntimeError: boom",
        skip_hint(broken),
    ]


# -- call ------------------------------------------------------------------------------


def test_call_prints_the_output_as_json(capsys: pytest.CaptureFixture[str], good: str) -> None:
    assert run(capsys, "call", "unit.add", '{"a": 2, "b": 3}') == (0, "5\n", "")


def test_call_reads_input_from_stdin(
    capsys: pytest.CaptureFixture[str], good: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"a": 1,\n "b": 1}'))
    assert run(capsys, "call", "unit.add", "-") == (0, "2\n", "")


def test_call_input_that_is_not_json_names_line_and_column(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, out, err = run(capsys, "call", "unit.add", '{"a": 1,\n "b": }')
    assert (status, out) == (2, "")
    assert err == ("hermesos call: error: the input is not valid JSON: Expecting value at line 2, column 7\n")


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["call", "unit.ad", "{}"], "TOOL_NOT_FOUND"),
        (["call", "unit.add", '{"a": "1", "b": 2}'], "INPUT_INVALID"),
        (["call", "unit.echo"], "PERMISSION_DENIED"),
        (["call", "unit.broken"], "OUTPUT_INVALID"),
        (["call", "unit.crash"], "TOOL_FAILED"),
    ],
)
def test_call_tool_errors_go_to_stderr_with_a_stable_exit_status(
    capsys: pytest.CaptureFixture[str], good: str, argv: list[str], code: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == EXIT_CODES[code]
    assert out == ""
    assert err.startswith(f"{code}: ")
    status, out, err = run(capsys, *argv, "--json")
    assert status == EXIT_CODES[code]
    assert json.loads(err)["code"] == code


def test_call_timeout_limits_the_call_and_a_bad_one_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], site: Site
) -> None:
    site.install(
        site.plugin("""
        import time

        NAP = define_tool(
            name="unit.nap", description="Nap.", version="1.0.0", input=s.object({}),
            handler=lambda args: time.sleep(2) or {},
        )

        @hookimpl
        def hermes_tools():
            return [NAP]
        """)
    )
    status, out, err = run(capsys, "call", "unit.nap", "--timeout", "0.05")
    assert (status, out) == (EXIT_CODES["TOOL_FAILED"], "")
    assert err.startswith("TOOL_FAILED: unit.nap did not finish within 0.05 seconds.\n")
    for bad in ("0", "-1", "soon", "inf"):
        status, _, err = run(capsys, "call", "unit.nap", "--timeout", bad)
        assert status == 2
        assert err.splitlines()[-1] == (
            f"hermesos call: argument --timeout: must be a positive number of seconds such as 2.5, got {bad!r}"
        )
    # Past what a wait can wait: a usage error, not a tool failure from OverflowError (nor a traceback).
    for command in (["call", "unit.nap"], ["check"]):
        status, _, err = run(capsys, *command, "--timeout", "1e10")
        assert status == 2
        assert err.splitlines()[-1] == (
            f"hermesos {command[0]}: argument --timeout: must be at most 1,000,000,000 seconds (leave the option "
            "out for no limit), got 1e+10"
        )


def test_the_exit_statuses_are_the_documented_table() -> None:
    assert {str(code): status for code, status in EXIT_CODES.items()} == {
        "TOOL_NOT_FOUND": 3,
        "INPUT_INVALID": 4,
        "PERMISSION_DENIED": 5,
        "OUTPUT_INVALID": 6,
        "INVALID_DEFINITION": 7,
        "SCHEMA_INVALID": 8,
        "TOOL_FAILED": 10,
    }
    table = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for code, status in EXIT_CODES.items():
        assert f"| {status} | `{code}` |" in table
    docstring = cli.__doc__ or ""
    for status in range(11):
        assert f"\n| {status} | " in table, status
        assert f"\n{status:<4}  " in docstring, status


def test_a_commands_options_are_accepted_anywhere_on_its_line(capsys: pytest.CaptureFixture[str], good: str) -> None:
    expected = (0, "42\n", "")
    assert run(capsys, "call", "unit.add", "--grant", "unit:*", '{"a": 20, "b": 22}') == expected
    assert run(capsys, "call", "unit.add", '{"a": 20, "b": 22}', "--grant", "unit:*") == expected
    assert run(capsys, "call", "--grant", "unit:*", "unit.add", '{"a": 20, "b": 22}') == expected
    assert run(capsys, "call", "unit.echo", "--grant", "unit:echo", "{}", "--timeout", "5") == (0, "{}\n", "")
    status, out, _ = run(capsys, "tools", "show", "unit.add", "--json", "--disable", "nothing-of-that-name")
    assert (status, json.loads(out)["name"]) == (0, "unit.add")


def test_a_grant_that_is_not_a_pattern_is_a_usage_error_naming_the_likely_one(
    capsys: pytest.CaptureFixture[str], good: str
) -> None:
    status, out, err = run(capsys, "call", "unit.echo", "--grant", "unit.echo")
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == (
        "hermesos call: argument --grant: 'unit.echo' is not a permission pattern: give scope:action, scope:* or * "
        "(such as fs:read); did you mean unit:echo?"
    )
    status, _, err = run(capsys, "serve", "--grant", "Not a pattern!")
    assert status == 2
    assert err.splitlines()[-1].endswith("not a permission pattern: give scope:action, scope:* or * (such as fs:read)")


def test_call_without_the_tools_name_says_it_is_missing(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, out, err = run(capsys, "call", '{"a": 20, "b": 22}')
    assert (status, out) == (2, "")
    assert err == (
        'hermesos call: error: the tool\'s name is missing: \'{"a": 20, "b": 22}\' is the input; give the name '
        "first, as in hermesos call NAME INPUT ('hermesos tools list' lists the names)\n"
    )
    assert run(capsys, "call", "[1]")[0] == 2
    assert run(capsys, "call", "unit.nothing", "{}")[0] == 3  # a name that is not a tool's is still not found


def test_tools_list_without_tools_says_how_to_install_a_plugin_from_a_path(
    capsys: pytest.CaptureFixture[str], site: Site
) -> None:
    bundled = ("hermesos-fs", "hermesos-math", "hermesos-policy", "hermesos-mcp")
    status, out, err = run(capsys, "tools", "list", *(f"--disable={name}" for name in bundled))
    assert (status, out) == (0, "")
    assert "'hermesos install PATH'" in err
    assert "plugins/hermesos-fs" in err


def test_call_grants_with_grant_and_hermes_grants(
    capsys: pytest.CaptureFixture[str], good: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "call", "unit.echo", "--grant", "unit:echo") == (0, "{}\n", "")
    assert run(capsys, "call", "unit.echo", "--grant", "net:get", "--grant", "unit:*")[0] == 0
    monkeypatch.setenv("HERMESOS_GRANTS", "unit:echo")
    assert run(capsys, "call", "unit.echo")[0] == 0


def test_call_is_strict_about_broken_plugins(capsys: pytest.CaptureFixture[str], site: Site, good: str) -> None:
    broken = site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return ['unit.x']"))
    status, out, err = run(capsys, "call", "unit.add", '{"a": 1, "b": 1}')
    assert (status, out) == (1, "")
    first, hint = err.splitlines()
    assert first.startswith(f"error: broken {origin(broken)}: hermes_tools")
    assert hint == skip_hint(broken)
    assert run(capsys, "call", "unit.add", '{"a": 1, "b": 1}', "--disable", broken)[0] == 0
    crashing = site.install("raise RuntimeError('boom at import')")
    status, _, err = run(capsys, "call", "unit.add", '{"a": 1, "b": 1}', "--disable", broken)
    assert status == 1
    assert err == (
        f"error: broken {origin(crashing)}: importing {module(crashing)} failed with RuntimeError: boom at import\n"
        f"{skip_hint(crashing)}\n"
    )


CRASHED = (
    "TOOL_FAILED: unit.crash failed: its handler raised ZeroDivisionError.\n"
    "This is a fault in the tool, not in how it was called. Calling it again will not help: "
    "use another tool, or tell the user.\n"
)


def test_a_handler_exception_is_a_tool_failure(capsys: pytest.CaptureFixture[str], good: str) -> None:
    assert run(capsys, "call", "unit.crash") == (10, "", CRASHED)
    status, out, err = run(capsys, "call", "unit.crash", "--json")
    assert (status, out) == (EXIT_CODES["TOOL_FAILED"], "")
    data = json.loads(err)
    assert data["code"] == "TOOL_FAILED"
    assert (data["reason"], data["exception"], data["retryable"]) == ("raised", "ZeroDivisionError", False)


# -- counts ----------------------------------------------------------------------------


def test_counts_agree_with_their_numbers(
    capsys: pytest.CaptureFixture[str], site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = site.install(
        site.plugin(
            """
            class Provider:
                def check(self, tool, permission):
                    return None

            @hookimpl
            def hermes_tools():
                return [make("unit.one")]

            @hookimpl
            def hermes_permission_providers():
                return [Provider()]
            """
        )
    )
    _, out, _ = run(capsys, "plugins", "list")
    (line,) = [line for line in out.splitlines() if line.startswith(one)]
    assert line.endswith("  ok  1 tool, 0 schemas, 1 provider")
    lonely = PluginOrigin("hermesos-lonely", "1.0.0", "lonely", "lonely")
    problem = PluginProblem(lonely, PluginLoadError(lonely, "importing lonely failed with ImportError: no"))
    found = PluginSet([Plugin(lonely, problems=(problem,))])
    monkeypatch.setattr(plugins_module, "discover_plugins", lambda **options: found)
    status, out, _ = run(capsys, "check")
    assert (status, out.splitlines()[-1]) == (1, "1 plugin, 0 healthy, 1 problem")


# -- check -----------------------------------------------------------------------------


def test_check_lists_every_problem_of_every_plugin_and_exits_1(
    capsys: pytest.CaptureFixture[str], site: Site, good: str
) -> None:
    status, out, _ = run(capsys, "check")
    assert status == 0
    assert out.endswith(" healthy, 0 problems\n")
    first = site.install("raise ImportError('missing dependency')")
    second = site.install(site.plugin("def hermes_tool():\n    return []"))
    status, out, _ = run(capsys, "check")
    assert status == 1
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    # In the order of the distributions' names, as strings ("hermesos-unit-10" before "hermesos-unit-9").
    expected = {
        first: ("ImportError: missing dependency", "PluginLoadError"),
        second: ('did you mean "hermes_tools"?', "InvalidDefinitionError"),
    }
    order = sorted(expected)
    assert len(problems) == 2
    for line, name in zip(problems, order, strict=True):
        assert f"plugin {name} 1.0.0" in line
        assert expected[name][0] in line
    status, out, _ = run(capsys, "check", "--json")
    assert status == 1
    data = json.loads(out)
    assert [p["distribution"] for p in data["problems"]] == order
    assert [p["error"] for p in data["problems"]] == [expected[name][1] for name in order]
    status, out, _ = run(capsys, "check", "--disable", second)
    assert out.endswith(" healthy, 1 problem\n")


# -- help, version, usage --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["tools"],
        ["tools", "list"],
        ["tools", "show"],
        ["plugins"],
        ["plugins", "list"],
        ["call"],
        ["check"],
        ["serve"],
        ["export"],
        ["install"],
        ["uninstall"],
        ["new"],
        ["new", "plugin"],
    ],
)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, out, _ = run(capsys, *argv, "--help")
    assert status == 0
    assert out.startswith("usage: hermesos")


def test_call_help_documents_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "call", "--help")
    flat = " ".join(out.split())
    assert "INPUT_INVALID 4" in flat
    assert "TOOL_FAILED 10" in flat
    _, out, _ = run(capsys, "--help")
    assert "3-8 and 10 the error codes" in " ".join(out.split())


@pytest.mark.parametrize("argv", [[], ["tools"], ["plugins"]])
def test_a_command_without_its_subcommand_shows_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith("usage: hermesos")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "frobnicate")
    assert status == 2
    assert "invalid choice: 'frobnicate'" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, f"hermesos-core {__version__}\n", "")


# -- the real console script -----------------------------------------------------------


def script(site: Site, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
    # hermesos-fs has no default root: the one the site fixture made, so that it loads with its tools.
    environment.update(PYTHONPATH=str(site.path), HERMESOS_FS_ROOT=str(site.path / "fs-root"), **env)
    return subprocess.run([str(HERMES), *argv], capture_output=True, text=True, env=environment, check=False)


def test_the_console_script_and_python_m_run_main(site: Site, good: str) -> None:
    done = script(site, "call", "unit.add", '{"a": 20, "b": 22}')
    assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")
    module = subprocess.run(
        [sys.executable, "-m", "hermes_core", "--version"], capture_output=True, text=True, check=True
    )
    assert module.stdout == f"hermesos-core {__version__}\n"


def test_version_discovers_no_plugin_and_imports_nothing_heavy(site: Site) -> None:
    site.install("raise RuntimeError('a plugin was imported')")
    code = (
        "import sys; from hermes_core.cli import main; main(['--version']);"
        "print(sorted(m for m in ('asyncio', 'importlib_metadata', 'packaging', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site.path)},
        check=True,
    )
    assert done.stdout.splitlines() == [f"hermesos-core {__version__}", "[]"]


def test_a_closed_pipe_exits_quietly(site: Site) -> None:
    many = "\n".join(f"    make('unit.t{n}')," for n in range(3000))
    site.install(site.plugin(f"@hookimpl\ndef hermes_tools():\n    return [\n{many}\n    ]"))
    environment = {**os.environ, "PYTHONPATH": str(site.path)}
    done = subprocess.run(
        f"'{HERMES}' tools list | head -1", shell=True, capture_output=True, text=True, env=environment, check=False
    )
    assert done.returncode == 0
    assert len(done.stdout.splitlines()) == 1
    assert without_waiting(done.stderr) == []


def _on_a_terminal(site: Site, **env: str) -> str:
    main_fd, child_fd = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environment.update(PYTHONPATH=str(site.path), TERM="xterm", **env)
    with subprocess.Popen([str(HERMES), "tools", "list"], stdout=child_fd, stderr=child_fd, env=environment) as proc:
        os.close(child_fd)
        chunks = []
        while True:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the terminal closes when the command exits
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait()
    os.close(main_fd)
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal_and_never_with_no_color(site: Site, good: str) -> None:
    assert "\033[1munit.add" in _on_a_terminal(site)
    assert "\033[" not in _on_a_terminal(site, NO_COLOR="1")
    assert "\033[" not in script(site, "tools", "list").stdout


# -- diagnostics, as the author sees them: the real console script -----------------------


def test_a_broken_plugin_stops_call_with_one_line_and_the_remedy(site: Site, good: str) -> None:
    broken = site.install("raise RuntimeError('boom at import')")
    done = script(site, "call", "unit.add", '{"a": 1, "b": 1}')
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f'error: broken plugin {broken} 1.0.0 (entry point "{entry_point(broken)}" = {module(broken)}): '
        f"importing {module(broken)} failed with RuntimeError: boom at import\n"
        f"To start without it, disable it: --disable {broken} or HERMESOS_DISABLE_PLUGINS={broken}; "
        "'hermesos check' lists every problem of every plugin.\n"
    )
    # The same remedy as the error load_runtime() raises.
    assert done.stderr.splitlines()[-1] == plugins_module.remedy(broken)
    assert script(site, "call", "unit.add", '{"a": 1, "b": 1}', "--disable", broken).stdout == "2\n"
    skipped = script(site, "call", "unit.add", '{"a": 1, "b": 1}', HERMESOS_DISABLE_PLUGINS=broken)
    assert skipped.stdout == "2\n"


def test_every_broken_plugin_gets_its_line_and_one_remedy_names_them_all(site: Site, good: str) -> None:
    first = site.install("raise RuntimeError('first')")
    second = site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return 'unit.x'"))
    done = script(site, "call", "unit.add", "{}", HERMESOS_DISABLE_PLUGINS="hermesos-fixture-gone")
    assert done.returncode == 1
    lines = without_waiting(done.stderr)
    assert len(lines) == 3
    assert lines[0] == f"error: broken {origin(first)}: importing {module(first)} failed with RuntimeError: first"
    assert lines[1].startswith(f"error: broken {origin(second)}: hermes_tools returned str")
    assert lines[2] == skip_hint(first, second, held="hermesos-fixture-gone")


def test_debug_adds_the_traceback_of_the_cause(site: Site, good: str) -> None:
    broken = site.install("def helper():\n    raise RuntimeError('boom at import')\n\nhelper()\n")
    for argv in (["--debug", "call", "unit.add"], ["call", "unit.add", "--debug"], ["--debug", "tools", "list"]):
        done = script(site, *argv)
        assert done.returncode == 1
        lines = done.stderr.splitlines()
        assert lines[0] == (
            f"error: broken {origin(broken)}: importing {module(broken)} failed with RuntimeError: boom at import"
        )
        assert lines[1] == "Traceback (most recent call last):"
        assert "in helper" in done.stderr
        assert lines[-2] == "RuntimeError: boom at import"
        assert lines[-1] == skip_hint(broken)
    assert "Traceback" not in script(site, "call", "unit.add").stderr


def test_a_handler_that_raises_exits_10_with_the_tool_failed_message_and_no_traceback(site: Site, good: str) -> None:
    done = script(site, "call", "unit.crash")
    assert (done.returncode, done.stdout, done.stderr) == (10, "", CRASHED)
    as_json = script(site, "call", "unit.crash", "--json")
    assert (as_json.returncode, as_json.stdout) == (10, "")
    data = json.loads(as_json.stderr)
    assert data == {
        "code": "TOOL_FAILED",
        "message": CRASHED.removeprefix("TOOL_FAILED: ").removesuffix("\n"),
        "retryable": False,
        "tool": "unit.crash",
        "reason": "raised",
        "detail": None,
        "exception": "ZeroDivisionError",
        "call_id": data["call_id"],
    }
    assert isinstance(data["call_id"], str)
    assert data["call_id"]


def test_debug_adds_the_traceback_of_what_the_handler_raised(site: Site, good: str) -> None:
    for argv in (["--debug", "call", "unit.crash"], ["call", "unit.crash", "--debug"]):
        done = script(site, *argv)
        assert (done.returncode, done.stdout) == (10, "")
        assert done.stderr.startswith(CRASHED + "Traceback (most recent call last):\n")
        assert "in <lambda>" in done.stderr
        assert done.stderr.splitlines()[-1] == "ZeroDivisionError: division by zero"
        assert "ToolFailedError" not in done.stderr  # the handler's exception, not the runtime's


REPORTING = """
def forecast(args):
    try:
        raise ConnectionRefusedError("api.weather.example refused: key=s3cr3t")
    except ConnectionError as error:
        raise ToolFailedError("the weather service is not answering", retryable=True) from error

@hookimpl
def hermes_tools():
    return [define_tool(name="weather.get", description="d", version="1.0.0", input=s.object({}), handler=forecast)]
"""


def test_a_failure_the_handler_reports_is_shown_in_its_words(site: Site) -> None:
    site.install(site.plugin("from hermes_core import ToolFailedError\n" + REPORTING))
    done = script(site, "call", "weather.get")
    assert (done.returncode, done.stdout) == (10, "")
    expected = ToolFailedError("the weather service is not answering", retryable=True, tool="weather.get")
    assert done.stderr == f"TOOL_FAILED: {expected}\n"
    assert "s3cr3t" not in done.stderr
    debug = script(site, "call", "weather.get", "--debug")
    assert debug.stderr.startswith(f"TOOL_FAILED: {expected}\nTraceback (most recent call last):\n")
    assert "ConnectionRefusedError: api.weather.example refused: key=s3cr3t" in debug.stderr  # the operator's view
    assert "in forecast" in debug.stderr
    # Then the handler's own error, raised before the runtime named the tool.
    assert (
        "hermes_core._base._errors.ToolFailedError: the tool failed: the weather service is not answering."
        in debug.stderr
    )


def test_permission_denied_says_how_to_grant_it(site: Site, good: str) -> None:
    done = script(site, "call", "unit.echo")
    assert done.returncode == EXIT_CODES["PERMISSION_DENIED"] == 5
    assert done.stderr == (
        f"PERMISSION_DENIED: {PermissionDeniedError('unit.echo', 'unit:echo')}\n"
        "To grant it: --grant unit:echo or HERMESOS_GRANTS=unit:echo\n"
    )
    held = script(site, "call", "unit.echo", HERMESOS_GRANTS="net:get")
    assert held.stderr.splitlines()[-1] == "To grant it: --grant unit:echo or HERMESOS_GRANTS=net:get,unit:echo"
    as_json = script(site, "call", "unit.echo", "--json")
    assert as_json.returncode == 5
    assert json.loads(as_json.stderr) == PermissionDeniedError("unit.echo", "unit:echo").to_dict()


def test_permission_denied_by_a_provider_says_so(site: Site, good: str) -> None:
    site.install(
        site.plugin(
            """
            class Deny:
                def check(self, tool, permission):
                    return False if permission == "unit:echo" else None

            @hookimpl
            def hermes_permission_providers():
                return [Deny()]
            """
        )
    )
    done = script(site, "call", "unit.echo", "--grant", "unit:*")
    assert done.returncode == 5
    assert done.stderr.splitlines()[-1] == (
        "unit:echo is granted, but a permission provider denied it (a deny wins over any grant); "
        "'hermesos plugins list' shows the plugins that provide permissions."
    )


def test_tools_list_reports_broken_plugins_on_stderr_and_exits_1(site: Site, good: str) -> None:
    broken = site.install("raise RuntimeError('boom')")
    done = script(site, "tools", "list", "--disable", "hermesos-fs", "--disable", "hermesos-math")
    assert done.returncode == 1
    assert [line.split()[0] for line in done.stdout.splitlines()] == [
        "unit.echo",
        "unit.add",
        "unit.broken",
        "unit.crash",
    ]
    assert done.stderr == (
        f"error: broken {origin(broken)}: importing {module(broken)} failed with RuntimeError: boom\n"
        f"{skip_hint(broken)}\n"
    )
    as_json = script(site, "tools", "list", "--json")
    assert as_json.returncode == 1
    assert as_json.stderr == ""
    assert [row["distribution"] for row in json.loads(as_json.stdout)["broken_plugins"]] == [broken]
    assert script(site, "tools", "list", "--disable", broken).returncode == 0


def test_plugins_list_shows_the_problems_of_a_broken_plugin(site: Site, good: str) -> None:
    broken = site.install("raise RuntimeError('boom\\nand more')")
    done = script(site, "plugins", "list")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    at = lines.index(f"{broken} 1.0.0  {entry_point(broken)} = {module(broken)}  broken")
    assert lines[at + 1] == f"  problem: importing {module(broken)} failed with RuntimeError: boom"
    assert [line for line in lines if line.startswith(" ")] == [lines[at + 1]]  # the first line only
    (line,) = [line for line in lines if line.startswith(good)]
    assert line == f"{good} 1.0.0  {entry_point(good)} = {module(good)}  ok  4 tools, 0 schemas, 0 providers"
    check = script(site, "check")
    assert check.returncode == 1
    assert check.stdout.splitlines()[0] == (
        f"problem: {origin(broken)}: importing {module(broken)} failed with RuntimeError: boom"
    )
    assert check.stdout.splitlines()[-1].endswith(" healthy, 1 problem")


def test_a_plugin_that_implements_no_hook_is_broken(site: Site) -> None:
    empty = site.install("def get_tools():\n    return []\n")
    done = script(site, "plugins", "list")
    lines = done.stdout.splitlines()
    at = lines.index(f"{empty} 1.0.0  {entry_point(empty)} = {module(empty)}  broken")
    problem = lines[at + 1]
    assert problem.startswith("  problem: ")
    for hook in ("hermes_tools", "hermes_schemas", "hermes_permission_providers"):
        assert hook in problem
    check = script(site, "check")
    assert check.returncode == 1
    (line,) = [line for line in check.stdout.splitlines() if line.startswith("problem: ")]
    assert line.startswith(f"problem: {origin(empty)}")
    assert "hermes_permission_providers" in line


def test_a_handler_that_cannot_take_the_input_and_a_bad_default_are_shown_by_check(site: Site) -> None:
    shouting = site.install(
        site.plugin("""
        def shout(text: str) -> str:
            return text.upper()

        SHOUT = define_tool(
            name="text.shout", description="Shout.", version="1.0.0",
            input=s.object({"text": s.string()}), handler=shout,
        )

        @hookimpl
        def hermes_tools():
            return [SHOUT]
        """)
    )
    noting = site.install(
        site.plugin("""
        ADD = define_tool(
            name="notes.add", description="Add a note.", version="1.0.0",
            input=s.object({"text": s.string(), "limit": s.optional(s.integer(minimum=1), default="ten")}),
            handler=dict,
        )

        @hookimpl
        def hermes_tools():
            return [ADD]
        """)
    )
    done = script(site, "check")
    assert done.returncode == 1
    *problems, summary = done.stdout.splitlines()
    assert summary.endswith(" healthy, 2 problems")  # the bundled plugins are installed here too
    assert problems == [
        f'problem: plugin {shouting} 1.0.0 (entry point "{entry_point(shouting)}" = {module(shouting)}): '
        'tool "text.shout": handler shout(text: str) annotates "text" as str, not a dict; a handler is called '
        "with the parsed input (a dict) as its one positional argument, such as "
        'def handler(args): return args["text"]; or declare the function with @tool, which passes each field as '
        "a keyword argument.",
        f'problem: plugin {noting} 1.0.0 (entry point "{entry_point(noting)}" = {module(noting)}): '
        'tool "notes.add": field "limit" has a default that does not match its schema: '
        "default must be an integer, got string.",
    ]


def test_check_reports_tool_names_differing_only_in_case_across_plugins(site: Site) -> None:
    first = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.Weather_GetForecast")]'))
    second = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.weather_getforecast")]'))
    done = script(site, "check")
    assert done.returncode == 1
    *problems, summary = done.stdout.splitlines()
    assert summary.endswith(" healthy, 1 problem")
    assert problems == [
        f'problem: plugin {second} 1.0.0 (entry point "{entry_point(second)}" = {module(second)}): '
        f'tool "unit.weather_getforecast" differs only in case from the tool "unit.Weather_GetForecast" contributed '
        f'by plugin {first} 1.0.0 (entry point "{entry_point(first)}" = {module(first)}); tool names must be unique '
        "across installed plugins, and differ in more than case: uninstall or disable one of "
        f"{first} and {second}.",
    ]


# -- call --lenient: serve's lenient mode, for one call ------------------------------------------

REPAIRED = (
    'hermesos: Note: the arguments were repaired before the call: "a": "2" read as 2. Next time, send them as read.\n'
)


def test_call_lenient_repairs_an_input_and_says_what_was_assumed(site: Site, good: str) -> None:
    strict = script(site, "call", "unit.add", '{"a": "2", "b": 3}')
    assert (strict.returncode, strict.stdout) == (EXIT_CODES["INPUT_INVALID"], "")  # refused without it
    assert strict.stderr.startswith("INPUT_INVALID: ")
    for argv in (["--lenient"], ["--lenient", "--json"]):
        done = script(site, "call", "unit.add", '{"a": "2", "b": 3}', *argv)
        assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", REPAIRED)
    # An input that needs no repair says nothing of it.
    plain = script(site, "call", "unit.add", '{"a": 2, "b": 3}', "--lenient")
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, "5\n", "")


def test_call_lenient_still_refuses_what_it_cannot_repair_without_guessing(site: Site, good: str) -> None:
    done = script(site, "call", "unit.add", '{"a": "two", "b": 3}', "--lenient")
    assert (done.returncode, done.stdout) == (EXIT_CODES["INPUT_INVALID"], "")
    assert done.stderr.startswith("INPUT_INVALID: unit.add ")
    assert '"a"' in done.stderr
    assert "repaired" not in done.stderr
    as_json = script(site, "call", "unit.add", '{"a": "two", "b": 3}', "--lenient", "--json")
    assert as_json.returncode == EXIT_CODES["INPUT_INVALID"]
    assert json.loads(as_json.stderr)["code"] == "INPUT_INVALID"


def test_call_lenient_means_what_serve_lenient_means(site: Site) -> None:
    def lenient(command: str) -> str:
        shown = " ".join(script(site, command, "--help").stdout.split())
        return shown.partition("--lenient ")[2].partition(" --")[0]

    call, serve = lenient("call"), lenient("serve")
    assert call.startswith("repair a call's input where that is unambiguous and lossless ('5' for an integer")
    assert call.partition("), ")[0] == serve.partition("), ")[0]
    assert call.endswith("a tool's own choice wins")
    assert "stderr" in call


# -- the clock of a command that waits (cli._output.waiting): threading's primitives, not threading ------------


def _threads_become(count: int) -> bool:
    """Whether the threads started by this process (but the main one) number *count*, within a minute."""
    import _thread
    import time

    deadline = time.monotonic() + 60  # a bound for a stalled machine, not a timing
    while _thread._count() != count and time.monotonic() < deadline:
        time.sleep(0.01)
    return _thread._count() == count


def test_a_block_that_outlasts_the_quiet_seconds_is_said_on_stderr_and_its_clock_ends_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import _thread
    import time

    from hermes_core.cli import _output

    threads = _thread._count()
    stream = io.StringIO()
    monkeypatch.setattr(_output, "WAIT_QUIET", 0.0)
    with _output.waiting("loading the plugins", stream=stream):
        deadline = time.monotonic() + 60  # a bound for a stalled machine, not a timing
        while "hermesos: loading the plugins... (" not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    said = stream.getvalue()  # the clock was joined as the block ended: it says nothing after
    assert re.fullmatch(r"(hermesos: loading the plugins\.\.\. \(\d+ s\)\n)+", said), said
    assert _threads_become(threads)
    assert stream.getvalue() == said


def test_a_block_within_the_quiet_seconds_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import _thread

    from hermes_core.cli import _output

    threads = _thread._count()
    stream = io.StringIO()
    monkeypatch.setattr(_output, "WAIT_QUIET", 3600.0)
    with _output.waiting("loading the plugins", stream=stream) as stop:
        assert _threads_become(threads + 1)  # the clock runs, quiet
    stop()  # stopping again is nothing
    assert stream.getvalue() == ""
    assert _threads_become(threads)
