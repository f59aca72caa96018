"""The hermesos command: main(argv) in process, and the real console script in subprocesses."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_core import __version__
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
    status, out, _ = run(capsys, "tools", "list")
    assert status == 0
    assert "unit.add" in out
    assert f"broken plugin {broken} 1.0.0" in out
    assert "hermesos check" in out
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


def test_tools_show_of_an_unknown_tool_suggests_one(capsys: pytest.CaptureFixture[str], good: str) -> None:
    status, _, err = run(capsys, "tools", "show", "unit.ad")
    assert status == EXIT_CODES["TOOL_NOT_FOUND"] == 3
    assert err.startswith('TOOL_NOT_FOUND: No tool named "unit.ad" is registered; did you mean "unit.add" or ')


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


def test_the_exit_statuses_are_the_documented_table() -> None:
    assert {str(code): status for code, status in EXIT_CODES.items()} == {
        "TOOL_NOT_FOUND": 3,
        "INPUT_INVALID": 4,
        "PERMISSION_DENIED": 5,
        "OUTPUT_INVALID": 6,
        "INVALID_DEFINITION": 7,
        "SCHEMA_INVALID": 8,
    }
    table = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    for code, status in EXIT_CODES.items():
        assert f"| {status} | `{code}` |" in table


def test_call_grants_with_grant_and_hermes_grants(
    capsys: pytest.CaptureFixture[str], good: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "call", "unit.echo", "--grant", "unit:echo") == (0, "{}\n", "")
    assert run(capsys, "call", "unit.echo", "--grant", "net:get", "--grant", "unit:*")[0] == 0
    monkeypatch.setenv("HERMESOS_GRANTS", "unit:echo")
    assert run(capsys, "call", "unit.echo")[0] == 0


def test_call_is_strict_about_broken_plugins(capsys: pytest.CaptureFixture[str], site: Site, good: str) -> None:
    broken = site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return ['unit.x']"))
    status, _, err = run(capsys, "call", "unit.add", '{"a": 1, "b": 1}')
    assert status == EXIT_CODES["INVALID_DEFINITION"]
    assert f"plugin {broken} 1.0.0" in err
    assert run(capsys, "call", "unit.add", '{"a": 1, "b": 1}', "--disable", broken)[0] == 0
    crashing = site.install("raise RuntimeError('boom at import')")
    status, _, err = run(capsys, "call", "unit.add", '{"a": 1, "b": 1}', "--disable", broken)
    assert status == 1
    assert f"error: plugin {crashing} 1.0.0" in err
    assert "RuntimeError: boom at import" in err


def test_a_handler_exception_is_not_disguised(capsys: pytest.CaptureFixture[str], good: str) -> None:
    with pytest.raises(ZeroDivisionError):
        main(["call", "unit.crash"])


# -- check -----------------------------------------------------------------------------


def test_check_lists_every_problem_of_every_plugin_and_exits_1(
    capsys: pytest.CaptureFixture[str], site: Site, good: str
) -> None:
    status, out, _ = run(capsys, "check")
    assert status == 0
    assert "0 problems" in out
    first = site.install("raise ImportError('missing dependency')")
    second = site.install(site.plugin("def hermes_tool():\n    return []"))
    status, out, _ = run(capsys, "check")
    assert status == 1
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 2
    assert f"plugin {first} 1.0.0" in problems[0]
    assert "ImportError: missing dependency" in problems[0]
    assert f"plugin {second} 1.0.0" in problems[1]
    assert 'did you mean "hermes_tools"?' in problems[1]
    status, out, _ = run(capsys, "check", "--json")
    assert status == 1
    data = json.loads(out)
    assert [p["distribution"] for p in data["problems"]] == [first, second]
    assert [p["error"] for p in data["problems"]] == ["PluginLoadError", "InvalidDefinitionError"]


# -- help, version, usage --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [[], ["tools"], ["tools", "list"], ["tools", "show"], ["plugins"], ["plugins", "list"], ["call"], ["check"]],
)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, out, _ = run(capsys, *argv, "--help")
    assert status == 0
    assert out.startswith("usage: hermesos")


def test_call_help_documents_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "call", "--help")
    assert "INPUT_INVALID 4" in out.replace("\n", " ").replace("  ", " ")


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
    environment.update(PYTHONPATH=str(site.path), **env)
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
    assert done.stderr == ""


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
