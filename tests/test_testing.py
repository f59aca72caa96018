"""hermes_core.testing: error helpers, isolation, runtimes of only the named plugins, and the contract checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pytest

import hermes_core.testing
from hermes_core import (
    InvalidDefinitionError,
    PluginLoadError,
    Runtime,
    SchemaError,
    define_tool,
    reject,
    tool,
)
from hermes_core import schema as s
from hermes_core.testing import (
    ToolCheck,
    build_runtime,
    check_plugin,
    check_tool,
    isolated_environment,
    issues,
    raises_code,
)

if TYPE_CHECKING:
    from conftest import Site

pytest_plugins = ["pytester"]


@tool(name="notes.add", version="1.0.0")
def add(text: Annotated[str, s.string(min_length=1, max_length=20)], count: int = 1) -> list[str]:
    """Repeat a note.

    Args:
        text: the note.
        count: how many times.
    """
    return [text] * max(0, min(count, 3))


# -- errors as data ------------------------------------------------------------------------------------


def test_issues_gives_path_and_kind_of_each_issue_in_order() -> None:
    runtime = Runtime([add])
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("notes.add", {"text": "", "count": "x", "extra": 1})
    assert issues(caught.value) == [("text", "too_small"), ("count", "type"), ("extra", "unexpected")]
    with pytest.raises(SchemaError) as schema_error:
        s.object({"a": s.array(s.integer())}).parse({"a": [1, "b"]})
    assert issues(schema_error.value) == [("a.1", "type")]


def test_issues_refuses_an_error_that_has_none() -> None:
    runtime = Runtime([add])
    with raises_code("TOOL_NOT_FOUND") as caught:
        runtime.call_sync("notes.ad", {})
    with pytest.raises(TypeError, match=r"^ToolNotFoundError carries no issues"):
        issues(caught.value)


def test_raises_code_passes_the_right_code_and_fails_any_other_or_none() -> None:
    runtime = Runtime([add])
    with raises_code("TOOL_NOT_FOUND") as caught:
        runtime.call_sync("notes.ad", {})
    assert caught.value.code == "TOOL_NOT_FOUND"
    with (
        pytest.raises(AssertionError, match=r"^expected INPUT_INVALID, got TOOL_NOT_FOUND: ") as wrong,
        raises_code("INPUT_INVALID"),
    ):
        runtime.call_sync("notes.ad", {})
    assert wrong.value.__cause__ is not None
    with (
        pytest.raises(AssertionError, match=r"^expected INPUT_INVALID, but nothing was raised$"),
        raises_code("INPUT_INVALID"),
    ):
        runtime.call_sync("notes.add", {"text": "a"})
    with pytest.raises(ValueError, match="INPUT_INVALD"), raises_code("INPUT_INVALD"):
        pass
    with pytest.raises(KeyError), raises_code("INPUT_INVALID"):  # anything not a ToolError passes through
        raise KeyError("x")
    unfinished = raises_code("INPUT_INVALID").__enter__()
    with pytest.raises(AttributeError, match="has not raised yet"):
        _ = unfinished.value


# -- isolation -----------------------------------------------------------------------------------------


def test_an_isolated_environment_has_no_settings_no_user_folders_and_its_own_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMESOS_GRANTS", "*")
    monkeypatch.setenv("HERMESOS_FS_ROOT", "/")
    before = Path.cwd()
    with isolated_environment(tmp_path / "env") as folder:
        assert folder == tmp_path / "env"
        assert Path.cwd() == folder
        assert not [name for name in os.environ if name.startswith("HERMESOS_")]
        assert os.environ["HOME"] == str(folder / "home")
        assert os.environ["XDG_CONFIG_HOME"] == os.environ["APPDATA"] == str(folder / "config")
    assert Path.cwd() == before
    assert os.environ["HERMESOS_GRANTS"] == "*"


# -- runtimes of exactly what is named ------------------------------------------------------------------


def test_build_runtime_takes_tools_modules_and_distributions(site: Site) -> None:
    good = site.install(site.plugin('def hermes_tools():\n    return [make("unit.good")]'))
    site.install(site.plugin("raise RuntimeError('this plugin is broken')"))

    class Module:
        __name__ = "inline_module"

        @staticmethod
        def hermes_tools() -> list[Any]:
            return [define_tool(name="unit.inline", description="d", version="1.0.0", input=s.object({}), handler=dict)]

    runtime = build_runtime(add, Module, good, grants=["notes:*"])
    assert list(runtime.tools) == ["notes.add", "unit.inline", "unit.good"]
    assert runtime.call_sync("unit.good", {}) == {}


def test_build_runtime_names_what_it_cannot_find_or_load(site: Site) -> None:
    broken = site.install(site.plugin("raise RuntimeError('this plugin is broken')"))
    with pytest.raises(InvalidDefinitionError, match=r"only names hermesos-nothing-here, but no installed"):
        build_runtime("hermesos-nothing-here")
    with pytest.raises(PluginLoadError, match=r"RuntimeError: this plugin is broken"):
        build_runtime(broken)

    class Hookless:
        pass

    with pytest.raises(InvalidDefinitionError, match=r"implements no hook: Hookless defines none of hermes_tools"):
        build_runtime(Hookless())


# -- contract checks -------------------------------------------------------------------------------------


def test_check_tool_passes_a_sound_tool_and_counts_what_it_tried() -> None:
    result = check_tool(add, examples=20)
    assert result == ToolCheck("notes.add", accepted=20, refused=0, rejected=20)


def test_check_tool_finds_a_handler_that_raises_on_some_valid_input() -> None:
    @tool(name="demo.div", version="1.0.0")
    def div(a: int, b: int) -> float:
        """Divide."""
        return a / b

    with pytest.raises(AssertionError) as caught:
        check_tool(div, examples=100)
    text = str(caught.value)
    assert text.splitlines()[:4] == [
        'tool "demo.div" failed on a valid input: TOOL_FAILED',
        "input: {'a': 0, 'b': 0}",  # shrunk to the smallest failing input
        "the handler raised ZeroDivisionError: division by zero",
        "a model is told: demo.div failed: its handler raised ZeroDivisionError.",
    ]


def test_check_tool_finds_a_result_that_breaks_the_output_schema() -> None:
    @tool(name="demo.count", version="1.0.0")
    def count(text: str) -> Annotated[int, s.integer(maximum=3)]:
        """Count characters."""
        return len(text)

    with pytest.raises(AssertionError) as caught:
        check_tool(count, examples=100)
    assert str(caught.value).splitlines()[:3] == [
        'tool "demo.count" failed on a valid input: OUTPUT_INVALID',
        "input: {'text': '0000'}",
        "a model is told: demo.count returned invalid output: output must be at most 3.",
    ]


def test_a_refusal_by_the_handler_is_counted_not_failed() -> None:
    @tool(name="demo.pick", version="1.0.0")
    def pick(n: int) -> int:
        """Refuse odd numbers."""
        if n % 2:
            raise reject("n", "must be even")
        return n

    result = check_tool(pick, examples=40)
    assert result.refused > 0
    assert result.accepted > 0
    assert result.accepted + result.refused == 40


def _opens_one_file() -> Any:
    @tool(name="demo.open", version="1.0.0")
    def open_file(path: str) -> str:
        """Read a file, of which there is one."""
        if path != "here.txt":
            raise reject("path", "names no file")
        return "text"

    return open_file


def test_a_handler_that_refuses_every_input_fails_the_check_saying_so() -> None:
    with pytest.raises(AssertionError) as caught:
        check_tool(_opens_one_file(), examples=10)
    headline, last, said, *_ = str(caught.value).splitlines()
    assert headline == (
        'tool "demo.open": its handler refused every one of the 10 valid inputs tried, so its results were never '
        "checked; give check_tool inputs= it accepts (such as the path of a file the test made) or a fake handler="
    )
    assert last.startswith("the last refused: {'path': ")
    assert said == 'it said: demo.open was called with invalid input: "path" names no file.'


def test_inputs_given_are_tried_besides_the_generated_ones() -> None:
    checked = check_tool(_opens_one_file(), examples=10, inputs=[{"path": "here.txt"}])
    assert checked == ToolCheck("demo.open", accepted=1, refused=10, rejected=10)


def test_the_scripted_model_is_imported_only_when_used() -> None:
    code = (
        "import sys, hermes_core.testing as t; before = 'hermes_core.testing.scripted' in sys.modules; "
        "t.ScriptedModel; print(before, 'hermes_core.testing.scripted' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False True\n"
    with pytest.raises(AttributeError, match="has no attribute 'Scripted'"):
        _ = hermes_core.testing.Scripted  # type: ignore[attr-defined]


def test_a_fake_handler_replaces_the_one_that_touches_the_world() -> None:
    def fetch(args: dict[str, Any]) -> str:
        raise ConnectionError("the network is not here")

    remote = define_tool(
        name="web.get",
        description="Fetch.",
        version="1.0.0",
        input=s.object({"url": s.string()}),
        handler=fetch,
        output=s.string(),
    )
    with pytest.raises(AssertionError, match="failed on a valid input"):
        check_tool(remote, examples=5)
    calls: list[dict[str, Any]] = []
    check_tool(remote, examples=5, handler=lambda args: calls.append(args) or "<html>")
    assert len(calls) == 5
    assert all(isinstance(call["url"], str) for call in calls)


def test_check_tool_follows_named_schemas() -> None:
    node = s.object({"name": s.string(), "children": s.optional(s.array(s.ref("demo.node")), default=[])})
    walk = define_tool(
        name="demo.walk",
        description="Count nodes.",
        version="1.0.0",
        input=s.object({"root": s.ref("demo.node")}),
        output=s.integer(minimum=1),
        handler=lambda args: _count(args["root"]),
    )
    assert check_tool(walk, examples=20, schemas={"demo.node": node}).accepted == 20


def _count(node: dict[str, Any]) -> int:
    return 1 + sum(_count(child) for child in node["children"])


def test_check_plugin_checks_an_installed_distribution_and_only_it(site: Site) -> None:
    site.install(site.plugin("raise RuntimeError('another plugin, broken')"))
    (checked,) = check_plugin("hermesos-math", examples=10)
    assert checked.name == "math.eval"
    assert checked.accepted + checked.refused == 10
    assert checked.rejected == 10


def test_check_plugin_reports_a_broken_plugin_and_a_misnamed_fake(site: Site) -> None:
    broken = site.install(site.plugin('def hermes_tools():\n    return [make("unit.bad!")]'))
    with pytest.raises(AssertionError, match=r'tool "unit.bad!": name must'):
        check_plugin(broken)
    good = site.install(site.plugin('def hermes_tools():\n    return [make("unit.good")]'))
    with pytest.raises(AssertionError, match=r'^handlers names the tool "unit.god", .* did you mean "unit.good"\?$'):
        check_plugin(good, handlers={"unit.god": dict})
    with pytest.raises(AssertionError, match=r'^inputs names the tool "unit.god", .* did you mean "unit.good"\?$'):
        check_plugin(good, inputs={"unit.god": [{}]})
    with pytest.raises(AssertionError, match=r"only names hermesos-nothing-here"):
        check_plugin("hermesos-nothing-here")


# -- the pytest plugin ---------------------------------------------------------------------------------


def test_the_pytest_plugin_gives_isolated_runtimes_and_nothing_else(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_author=textwrap.dedent(
            """
            import os
            from hermes_core.testing import raises_code

            def test_untouched():
                assert os.environ["HERMESOS_GRANTS"] == "*"

            def test_env(hermes_env):
                assert "HERMESOS_GRANTS" not in os.environ
                assert os.getcwd() == str(hermes_env)

            def test_runtime(hermes_runtime, hermes_env, monkeypatch):
                runtime = hermes_runtime("hermesos-math")
                assert list(runtime.tools) == ["math.eval"]
                assert runtime.call_sync("math.eval", {"expression": "6 * 7"}) == 42
                (hermes_env / "workspace").mkdir()  # hermesos-fs has no default root
                monkeypatch.setenv("HERMESOS_FS_ROOT", str(hermes_env / "workspace"))
                with raises_code("PERMISSION_DENIED"):
                    hermes_runtime("hermesos-fs").call_sync("fs.read", {"path": "x"})
            """
        )
    )
    monkeypatch.setenv("HERMESOS_GRANTS", "*")
    monkeypatch.setenv("HERMESOS_FS_ROOT", str(pytester.path))
    result = pytester.runpytest_subprocess("-p", "hermes_core.testing.plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    # Not asked for, it is not there: installing hermesos-core registers no pytest plugin.
    plain = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    plain.assert_outcomes(passed=1, errors=2)
    assert "fixture 'hermes_env' not found" in plain.stdout.str()


# What a test session has imported of hermes_core, printed by the one test of the session.
_IMPORTED = """
import json, sys

def test_imported():
    print("imported:", json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "hermes_core")))
"""


def _imported(result: pytest.RunResult) -> list[str]:
    result.assert_outcomes(passed=1)
    (line,) = [line for line in result.stdout.lines if "imported: " in line]  # after the file's name, with -s
    names: list[str] = json.loads(line.partition("imported: ")[2].rstrip(". "))
    return names


def test_a_test_session_imports_nothing_of_hermes_core_unless_it_asks_for_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_imported=_IMPORTED)
    assert _imported(pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")) == []
    asked = _imported(pytester.runpytest_subprocess("-s", "-p", "hermes_core.testing.plugin", "-p", "no:cacheprovider"))
    assert "hermes_core.testing.plugin" in asked


def test_the_pytest_plugin_can_be_asked_for_in_the_top_conftest(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["hermes_core.testing.plugin"]')
    pytester.makepyfile(test_env="def test_env(hermes_env):\n    assert hermes_env.is_dir()\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_hermesos_core_registers_no_pytest_plugin() -> None:
    """Installed, it registers none (an install made before 0.5 did: reinstall it, pip install -e .)."""
    from importlib.metadata import distribution

    groups = {entry_point.group for entry_point in distribution("hermesos-core").entry_points}
    assert "console_scripts" in groups  # the metadata read is the installed one's
    assert "pytest11" not in groups


def test_the_pytest_plugin_imports_neither_hypothesis_nor_jsonschema() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, hermes_core.testing.plugin; "
        "print(sorted(m for m in ('hypothesis', 'jsonschema') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
