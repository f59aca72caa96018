"""Plugin discovery for real.

hermesos-core, the bundled plugins and the fixture distributions under
``tests/fixtures/plugins`` are built as wheels, pip-installed into a fresh
virtual environment, and discovered by a separate Python process there, as
an agent builder's ``pip install`` would have them. (The wheels and the
environment's third-party requirements come from conftest's ``wheels`` and
``environments``, shared by the install tests.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from conftest import Environments

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "plugins").iterdir() if (p / "pyproject.toml").exists())
BUNDLED = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
BROKEN = [p.name for p in FIXTURES if p.name != "hermesos-fixture-good"]


class Venv:
    """A virtual environment with hermesos-core and every plugin installed from wheels."""

    def __init__(self, path: Path, wheels: Path) -> None:
        self.path = path
        self.wheels = wheels
        self.python = path / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def pip(self, *args: str) -> None:
        done = subprocess.run(
            [self.python, "-m", "pip", "--disable-pip-version-check", "-q", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr

    def install(self, *names: str) -> None:
        # --no-deps: hermesos-core is installed once; one fixture deliberately requires a core
        # that does not exist, which only an install without dependency checks lets in.
        self.pip("install", "--no-deps", "--find-links", str(self.wheels), *names)

    def hermesos(self, *argv: str) -> subprocess.CompletedProcess[str]:
        """Run the environment's own ``hermesos`` command."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
        # hermesos-fs has no default root: a folder of its own, beside the environment (never holding it).
        (root := self.path.parent / "fs-root").mkdir(exist_ok=True)
        environment["HERMESOS_FS_ROOT"] = str(root)
        command = self.python.with_name("hermesos.exe" if os.name == "nt" else "hermesos")
        return subprocess.run(
            [command, *argv], capture_output=True, text=True, env=environment, cwd=self.path, check=False
        )

    def probe(self, code: str, *, env: dict[str, str] | None = None) -> Any:
        """Run *code* in the environment; it prints one JSON document, which is returned."""
        environment = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
        (root := self.path.parent / "fs-root").mkdir(exist_ok=True)  # as for hermesos() above
        environment.update({"HERMESOS_FS_ROOT": str(root), **(env or {})})
        done = subprocess.run(
            [self.python, "-c", code],
            capture_output=True,
            text=True,
            env=environment,
            cwd=self.path,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheels: Path, environments: Environments) -> Venv:
    base = tmp_path_factory.mktemp("plugins")
    environment = Venv(environments.new(base / "venv"), wheels)
    environment.install(*(p.name for p in (*FIXTURES, *BUNDLED)))
    return environment


LOAD = """
import json, hermes_core
try:
    runtime = hermes_core.load_runtime(disable={disable!r})
except Exception as error:
    print(json.dumps({{
        "type": type(error).__name__,
        "tool_error": isinstance(error, hermes_core.ToolError),
        "code": getattr(error, "code", None),
        "message": str(error),
        "cause": type(error.__cause__).__name__ if error.__cause__ else None,
    }}))
else:
    print(json.dumps({{"tools": list(runtime.tools)}}))
"""


def load(env: Venv, *enabled: str, extra: dict[str, str] | None = None) -> Any:
    """load_runtime() in the environment with every broken fixture but *enabled* disabled."""
    disable = sorted(set(BROKEN) - set(enabled))
    return env.probe(LOAD.format(disable=disable), env=extra)


def test_installed_plugins_are_discovered_with_their_distribution(env: Venv) -> None:
    listing = env.probe(
        """
import json, hermes_core
found = hermes_core.discover_plugins(strict=False)
print(json.dumps({p.origin.distribution: {
    "version": p.origin.version, "entry_point": p.origin.entry_point, "ok": p.ok,
    "tools": [t.name for t in p.tools], "schemas": list(p.schemas), "providers": len(p.providers),
} for p in found.plugins}))
"""
    )
    assert listing["hermesos-fixture-good"] == {
        "version": "1.2.3",
        "entry_point": "good",
        "ok": True,
        "tools": ["fixture.echo"],
        "schemas": ["fixture.text"],
        "providers": 0,
    }
    for bundled in BUNDLED:
        plugin = listing[bundled.name]
        assert plugin["ok"] is True, bundled.name
        # hermesos-mcp mounts the servers of its configuration file, and there is none here.
        assert plugin["tools"] or plugin["providers"] or bundled.name == "hermesos-mcp", bundled.name
    assert {name for name, plugin in listing.items() if not plugin["ok"]} == set(BROKEN) - {
        "hermesos-fixture-clash-a"
    } - {"hermesos-fixture-schema-clash-a"}


def test_a_discovered_tool_is_called_through_load_runtime(env: Venv) -> None:
    code = """
import json, hermes_core
runtime = hermes_core.load_runtime(disable={disable!r}, grants=["fixture:echo"])
print(json.dumps(runtime.call_sync("fixture.echo", {{"text": "hi"}})))
"""
    assert env.probe(code.format(disable=BROKEN)) == "hi"


def test_hermes_grants_in_the_environment_is_always_consulted(env: Venv) -> None:
    code = """
import json, hermes_core
runtime = hermes_core.load_runtime(disable={disable!r})
print(json.dumps(runtime.observe_sync("fixture.echo", {{"text": "hi"}})))
"""
    denied = env.probe(code.format(disable=BROKEN))
    assert denied["error"]["code"] == "PERMISSION_DENIED"
    granted = env.probe(code.format(disable=BROKEN), env={"HERMESOS_GRANTS": "net:get, fixture:*"})
    assert granted == {"ok": True, "output": "hi"}


def test_hermes_disable_plugins_skips_by_distribution_or_entry_point(env: Venv) -> None:
    assert "fixture.echo" in load(env)["tools"]
    for name in ("hermesos-fixture-good", "good", "Hermesos_Fixture_Good"):
        assert "fixture.echo" not in load(env, extra={"HERMESOS_DISABLE_PLUGINS": f"x, {name}"})["tools"]


def test_an_uninstalled_plugin_is_gone(env: Venv) -> None:
    env.pip("uninstall", "-y", "hermesos-fixture-good")
    try:
        assert "fixture.echo" not in load(env)["tools"]
    finally:
        env.install("hermesos-fixture-good")
    assert "fixture.echo" in load(env)["tools"]


FAILURES: dict[str, tuple[tuple[str, ...], str, list[str]]] = {
    # fixture: (also enabled, error type, what the message must say besides the origin)
    "hermesos-fixture-import-error": (
        (),
        "PluginLoadError",
        ["importing fixture_import_error failed with ModuleNotFoundError"],
    ),
    "hermesos-fixture-not-a-tool": ((), "InvalidDefinitionError", ["hermes_tools", "must be a Tool"]),
    "hermesos-fixture-not-a-schema": ((), "InvalidDefinitionError", ["hermes_schemas", "must be a schema"]),
    "hermesos-fixture-not-a-provider": ((), "InvalidDefinitionError", ["hermes_permission_providers", "check(tool"]),
    "hermesos-fixture-clash-b": (
        ("hermesos-fixture-clash-a",),
        "InvalidDefinitionError",
        ['tool "clash.tool"', "also contributed by plugin hermesos-fixture-clash-a 1.2.3"],
    ),
    "hermesos-fixture-schema-clash-b": (
        ("hermesos-fixture-schema-clash-a",),
        "InvalidDefinitionError",
        ['schema "clash.path"', "also contributed by plugin hermesos-fixture-schema-clash-a 1.2.3"],
    ),
    "hermesos-fixture-unresolved-ref": ((), "InvalidDefinitionError", ['refers to the schema "nowhere.path"']),
    "hermesos-fixture-wrong-core": ((), "InvalidDefinitionError", ['requires "hermesos-core>=99"', "is installed"]),
    "hermesos-fixture-unknown-hook": (
        (),
        "InvalidDefinitionError",
        ['hermes_tool is not a hermesos hook; did you mean "hermes_tools"?'],
    ),
    "hermesos-fixture-hook-args": ((), "InvalidDefinitionError", ["config", "hooks take none"]),
    "hermesos-fixture-bad-definition": ((), "InvalidDefinitionError", ['tool "fixture.broken"', "semantic version"]),
    "hermesos-fixture-hook-raises": ((), "PluginLoadError", ["hook hermes_tools raised RuntimeError"]),
    "hermesos-fixture-no-hooks": (
        (),
        "InvalidDefinitionError",
        ["hermes_tools", "hermes_schemas", "hermes_permission_providers"],
    ),
}


def test_every_broken_fixture_has_a_case() -> None:
    assert set(FAILURES) | {"hermesos-fixture-clash-a", "hermesos-fixture-schema-clash-a"} == set(BROKEN)


@pytest.mark.parametrize("fixture", sorted(FAILURES))
def test_a_broken_plugin_fails_the_load_naming_distribution_version_and_entry_point(env: Venv, fixture: str) -> None:
    also, kind, says = FAILURES[fixture]
    outcome = load(env, fixture, *also)
    assert outcome["type"] == kind
    entry_point = fixture.removeprefix("hermesos-fixture-")
    assert f'plugin {fixture} 1.2.3 (entry point "{entry_point}" = ' in outcome["message"]
    for text in says:
        assert text in outcome["message"]
    if kind == "PluginLoadError":
        assert outcome["tool_error"] is False
        assert outcome["cause"] is not None
    else:
        assert outcome["code"] == "INVALID_DEFINITION"


def test_report_mode_lists_every_problem_of_every_plugin_at_once(env: Venv) -> None:
    problems = env.probe(
        """
import json, hermes_core
found = hermes_core.discover_plugins(strict=False)
print(json.dumps([[p.origin.distribution, p.message] for p in found.problems]))
"""
    )
    assert sorted(name for name, _ in problems) == sorted(FAILURES)
    assert all(f"plugin {name} 1.2.3" in message for name, message in problems)


def test_the_command_shows_a_plugin_that_implements_no_hook_as_broken(env: Venv) -> None:
    name, origin = "hermesos-fixture-no-hooks", 'plugin hermesos-fixture-no-hooks 1.2.3 (entry point "no-hooks" = '
    listing = env.hermesos("plugins", "list")
    assert listing.returncode == 0
    lines = listing.stdout.splitlines()
    at = lines.index(f"{name} 1.2.3  no-hooks = fixture_no_hooks  broken")
    problem = lines[at + 1]
    assert problem.startswith("  problem: ")
    assert origin not in problem  # the line above names the plugin
    for hook in ("hermes_tools", "hermes_schemas", "hermes_permission_providers"):
        assert hook in problem
    check = env.hermesos("check")
    assert check.returncode == 1
    (line,) = [line for line in check.stdout.splitlines() if line.startswith(f"problem: {origin}")]
    assert "hermes_permission_providers" in line
    assert check.stdout.splitlines()[-1] == (
        f"{len(FIXTURES) + len(BUNDLED)} plugins, {len(BUNDLED) + 3} healthy, {len(FAILURES)} problems"
    )
