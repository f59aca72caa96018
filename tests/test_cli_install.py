"""hermesos install and uninstall: pip, run by the Python the command runs in.

In process, pip is replaced by a stand-in, to check what it is asked and what
the command says of its answer. For real, wheels of hermesos-core, the bundled
plugins and fixture plugins are built, and a fresh virtual environment's own
``hermesos`` installs and uninstalls them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from hermes_core import __version__
from hermes_core.cli import main

if TYPE_CHECKING:
    from conftest import Environments

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
FIXTURES = ROOT / "tests" / "fixtures" / "plugins"
# A third-party plugin that requires hermesos-core for real (installed without --no-deps), and a broken one.
THIRD_PARTY = FIXTURES / "hermesos-fixture-good"
BROKEN = FIXTURES / "hermesos-fixture-import-error"
# -P: not the current directory first on sys.path, where a plugin's *.egg-info would read as installed.
LISTING = [sys.executable, "-P", "-m", "hermes_core", "plugins", "list", "--json"]
PIP_FAILED = 9


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# -- in process: what pip is asked, and what the command says -----------------------------


def row(distribution: str, version: str = "1.0.0", state: str = "ok", **fields: Any) -> dict[str, Any]:
    """One row of ``plugins list --json``."""
    name = distribution.removeprefix("hermesos-")
    return {
        "distribution": distribution,
        "version": version,
        "entry_point": name,
        "module": name.replace("-", "_"),
        "state": state,
        "tools": [],
        "schemas": [],
        "providers": [],
        "problems": [],
        **fields,
    }


class FakePip:
    """Stands in for subprocess.run: pip answers *status*; the plugin listing, *before* then *after*."""

    def __init__(
        self,
        monkeypatch: pytest.MonkeyPatch,
        before: list[dict[str, Any]] | None = None,
        after: list[dict[str, Any]] | None = None,
        status: int = 0,
    ) -> None:
        self.listings = [before or [], after or []]
        self.status = status
        self.calls: list[list[str]] = []
        monkeypatch.setattr(subprocess, "run", self)

    def __call__(self, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if argv[1:3] == ["-m", "pip"]:
            return subprocess.CompletedProcess(argv, self.status)
        assert argv == LISTING
        return subprocess.CompletedProcess(argv, 0, json.dumps({"plugins": self.listings.pop(0)}), "")

    @property
    def pip(self) -> list[list[str]]:
        return [call[3:] for call in self.calls if call[1:3] == ["-m", "pip"]]


def test_install_runs_pip_with_this_python_and_passes_the_options_through(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip = FakePip(monkeypatch)
    argv = ["install", "-U", "--pre", "--no-index", "--no-cache-dir", "--index-url", "https://example.org/simple"]
    argv += ["--extra-index-url", "https://a.example", "--extra-index-url", "https://b.example"]
    argv += ["-f", "wheels", "--find-links", "more", "-e", "one", "--editable", "two", "hermesos-fs", "hermesos-math"]
    run(capsys, *argv)
    assert pip.calls[0] == LISTING
    assert pip.calls[1][:3] == [sys.executable, "-m", "pip"]
    assert pip.pip == [
        [
            "install",
            "--upgrade",
            "--pre",
            "--no-index",
            "--no-cache-dir",
            "--index-url",
            "https://example.org/simple",
            "--extra-index-url",
            "https://a.example",
            "--extra-index-url",
            "https://b.example",
            "--find-links",
            "wheels",
            "--find-links",
            "more",
            "--editable",
            "one",
            "--editable",
            "two",
            "hermesos-fs",
            "hermesos-math",
        ]
    ]
    assert pip.calls[2] == LISTING


def test_install_says_what_each_new_plugin_contributes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = [row("hermesos-fs", "0.1.0", tools=["fs.read"]), row("hermesos-old")]
    after = [
        row("hermesos-fs", "0.2.0", tools=["fs.read", "fs.write"], schemas=["fs.path"]),
        row("hermesos-math", "0.1.0", tools=["math.eval"]),
        row("hermesos-old"),
        row("hermesos-policy", "0.1.0", providers=["PolicyProvider"]),
        row("hermesos-quiet", "0.1.0", state="disabled"),
    ]
    FakePip(monkeypatch, before, after)
    status, out, err = run(capsys, "install", "-U", "hermesos-fs", "hermesos-math", "hermesos-policy")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "installed hermesos-fs 0.2.0 (replacing 0.1.0): fs.read, fs.write; 1 schema",
        "installed hermesos-math 0.1.0: math.eval",
        "installed hermesos-policy 0.1.0: 1 permission provider",
        "installed hermesos-quiet 0.1.0, disabled by HERMESOS_DISABLE_PLUGINS",
        "'hermesos tools list' lists every installed tool",
    ]


def test_install_of_nothing_new_says_so(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    FakePip(monkeypatch, [row("hermesos-math")], [row("hermesos-math")])
    assert run(capsys, "install", "hermesos-math") == (
        0,
        "no hermesos plugin was added or changed; 'hermesos plugins list' lists the installed ones\n",
        "",
    )


def test_install_of_a_broken_plugin_exits_1_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = 'plugin hermesos-bad 1.0.0 (entry point "bad" = bad)'
    clash = 'plugin hermesos-old 1.0.0 (entry point "old" = old)'
    after = [
        row("hermesos-bad", state="broken", problems=[f"{origin}: importing bad failed with ImportError: no\nmore"]),
        row("hermesos-old", state="broken", problems=[f'{clash}: tool "x.y" is also contributed by ...']),
    ]
    FakePip(monkeypatch, [row("hermesos-old", tools=["x.y"])], after)
    status, out, err = run(capsys, "install", "hermesos-bad")
    assert status == 1
    assert out.splitlines() == [
        "installed hermesos-bad 1.0.0, which is broken",
        "'hermesos tools list' lists every installed tool",
    ]
    assert err.splitlines() == [
        f"error: broken {origin}: importing bad failed with ImportError: no",
        f'error: broken {clash}: tool "x.y" is also contributed by ...',
        "To start without them, disable them: --disable hermesos-bad --disable hermesos-old or "
        "HERMESOS_DISABLE_PLUGINS=hermesos-bad,hermesos-old; 'hermesos check' lists every problem of every plugin.",
    ]


def test_a_pip_failure_is_one_line_and_status_9(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip = FakePip(monkeypatch, status=2)
    assert run(capsys, "install", "hermesos-nothing") == (
        PIP_FAILED,
        "",
        "hermesos install: error: pip install failed with exit status 2; its output above says why\n",
    )
    assert pip.calls[-1][3] == "install"  # no listing after a failure
    assert run(capsys, "uninstall", "hermesos-nothing") == (
        PIP_FAILED,
        "",
        "hermesos uninstall: error: pip uninstall failed with exit status 2; its output above says why\n",
    )


def test_without_pip_install_says_how_to_add_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else find_spec(name, *a))
    pip = FakePip(monkeypatch)
    status, _, err = run(capsys, "install", "hermesos-math")
    assert status == PIP_FAILED
    assert err == (
        "hermesos install: error: pip is not installed in the environment hermesos runs in; "
        f"add it with: {sys.executable} -m ensurepip\n"
    )
    assert pip.calls == []


def test_install_needs_something_to_install(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "install") == (
        2,
        "",
        "hermesos install: error: name a distribution to install, or give -e PATH\n",
    )


INSTALL_ALLOWED = (
    "give only requirements (such as hermesos-fs or 'hermesos-fs>=0.4'), paths (./-x for one starting with '-') "
    "and URLs; 'hermesos install --help' lists the options it passes to pip"
)


@pytest.mark.parametrize(
    "after",
    [
        ["-r", "requirements.txt"],
        ["--requirement=requirements.txt"],
        ["--target", "/tmp/elsewhere"],
        ["--prefix=/usr"],
        ["--root", "/"],
        ["--user", "hermesos-fs"],
        ["hermesos-fs", "-e", "."],
        ["--index-url", "https://evil.example/simple", "hermesos-fs"],
        ["-c", "constraints.txt"],
        ["--config-settings", "x=y"],
    ],
    ids=lambda after: after[0] if after[0].startswith("-") else after[1],
)
def test_install_refuses_pip_options_after_the_double_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, after: list[str]
) -> None:
    pip = FakePip(monkeypatch)
    option = next(arg for arg in after if arg.startswith("-"))
    assert run(capsys, "install", "--", *after) == (
        2,
        "",
        f"hermesos install: error: {option!r} is an option, not something to install: {INSTALL_ALLOWED}\n",
    )
    assert pip.calls == []  # before, pip was run with the option: -r read a file, --target wrote elsewhere


def test_install_after_the_double_dash_takes_requirements_paths_and_urls(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip = FakePip(monkeypatch)
    names = ["hermesos-fs>=0.4", "./-odd-folder", "wheels/hermesos_x-1.0-py3-none-any.whl", "https://example.org/x.zip"]
    assert run(capsys, "install", "--", *names)[0] == 0
    assert pip.pip == [["install", *names]]


def test_uninstall_refuses_pip_options_after_the_double_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pip = FakePip(monkeypatch)
    assert run(capsys, "uninstall", "--", "-r", "everything.txt") == (
        2,
        "",
        "hermesos uninstall: error: '-r' is an option, not something to uninstall: give only the names of "
        "installed distributions (such as hermesos-fs); no option goes to pip\n",
    )
    assert pip.calls == []


def test_install_refuses_an_option_after_the_double_dash_for_real(tmp_path: Path) -> None:
    target = tmp_path / "target"
    done = subprocess.run(
        [sys.executable, "-m", "hermes_core", "install", "--", "--target", str(target), "hermesos-fs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == f"hermesos install: error: '--target' is an option, not something to install: {INSTALL_ALLOWED}\n"
    )
    assert not target.exists()


def test_uninstall_runs_pip_uninstall_yes_and_says_what_went(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = [row("hermesos-math", "0.1.0", tools=["math.eval"]), row("hermesos-fs", "0.1.0"), row("hermesos-x")]
    pip = FakePip(monkeypatch, before, [row("hermesos-fs", "0.1.0")])
    status, out, _ = run(capsys, "uninstall", "hermesos-math", "hermesos-x")
    assert status == 0
    assert pip.pip == [["uninstall", "--yes", "hermesos-math", "hermesos-x"]]
    assert out.splitlines() == ["uninstalled hermesos-math 0.1.0: math.eval", "uninstalled hermesos-x 1.0.0"]
    FakePip(monkeypatch, before, before)
    assert run(capsys, "uninstall", "requests") == (0, "no hermesos plugin was uninstalled\n", "")


@pytest.mark.parametrize(
    "name", ["hermesos-core", "Hermesos_Core", "hermesos.core==0.1.0", " hermesos-core", "\thermesos-core \n"]
)
def test_uninstall_refuses_hermesos_core_itself(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    pip = FakePip(monkeypatch)
    assert run(capsys, "uninstall", "hermesos-math", name) == (
        2,
        "",
        "hermesos uninstall: error: hermesos-core runs this command and cannot uninstall itself; "
        "uninstall it with the installer that installed it\n",
    )
    assert pip.calls == []


# -- for real: a fresh virtual environment and its own hermesos ----------------------------


class Env:
    """A virtual environment with its own ``hermesos`` command."""

    def __init__(self, path: Path, wheels: Path) -> None:
        self.path = path
        self.wheels = wheels
        self.bin = path / ("Scripts" if os.name == "nt" else "bin")
        self.python = self.bin / ("python.exe" if os.name == "nt" else "python")

    def pip(self, *args: str) -> str:
        done = subprocess.run(
            [self.python, "-m", "pip", "--disable-pip-version-check", *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def hermesos(self, *argv: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
        # hermesos-fs has no default root: a folder of its own, beside the environment (never holding it).
        (root := self.path.parent / "fs-root").mkdir(exist_ok=True)
        environment.update(HERMESOS_FS_ROOT=str(root), **env)
        # cwd: the environment, where no hermesos-policy.toml lies.
        return subprocess.run(
            [self.bin / "hermesos", *argv],
            capture_output=True,
            text=True,
            env=environment,
            cwd=cwd or self.path,
            check=False,
        )

    def tools(self) -> dict[str, dict[str, Any]]:
        done = self.hermesos("tools", "list", "--json")
        assert done.returncode == 0, done.stderr
        return {tool["name"]: tool for tool in json.loads(done.stdout)["tools"]}

    def version(self, wheel: str) -> str:
        """The version of the built wheel of the distribution *wheel* (such as hermesos_math)."""
        (path,) = self.wheels.glob(f"{wheel}-*.whl")
        return path.name.split("-")[1]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, wheels: Path, environments: Environments) -> Env:
    """Every hermesos distribution and a third-party plugin, installed from local wheels with their dependencies.

    hermesos-core's and the bundled plugins' third-party dependencies (the MCP
    SDK for hermesos-mcp) are the shared layer of conftest's ``environments``;
    pip gets --no-index, so that it takes hermesos-core, which every plugin
    requires, from the local wheel only.
    """
    base = tmp_path_factory.mktemp("install")
    environment = Env(environments.new(base / "venv", core=False), wheels)
    plugins = [p.name for p in (*BUNDLED, THIRD_PARTY)]
    environment.pip("install", "-q", "--no-index", "--find-links", str(wheels), *plugins)
    return environment


def test_every_distribution_installs_from_local_wheels_and_only_hermesos_is_on_the_path(env: Env) -> None:
    assert "hermesos-core" not in [p.name for p in (*BUNDLED, THIRD_PARTY)]  # it came as a dependency
    shown = env.pip("show", "hermesos-core")
    assert f"Version: {__version__}\n" in shown
    assert env.pip("check").startswith("No broken requirements")
    tools = env.tools()
    assert {"fs.read", "fs.write", "math.eval", "fixture.echo"} <= set(tools)
    assert tools["fixture.echo"]["distribution"] == "hermesos-fixture-good"
    # The one command, and the bundled plugins' own (hermesos-mcp's cache command).
    scripts = [
        name
        for project in BUNDLED
        for name in tomllib.loads((project / "pyproject.toml").read_text())["project"].get("scripts", {})
    ]
    assert sorted(p.name for p in env.bin.iterdir() if p.name.startswith("hermes")) == sorted(["hermesos", *scripts])
    assert not (env.bin / "hermes").exists()


def test_uninstall_then_install_a_plugin(env: Env) -> None:
    version = env.version("hermesos_math")
    try:
        gone = env.hermesos("uninstall", "hermesos-math")
        assert gone.returncode == 0, gone.stderr
        assert "Successfully uninstalled hermesos-math" in gone.stdout  # pip's own output passes through
        assert gone.stdout.splitlines()[-1] == f"uninstalled hermesos-math {version}: math.eval"
        assert "math.eval" not in env.tools()
        back = env.hermesos("install", "--no-index", "--find-links", str(env.wheels), "hermesos-math")
        assert back.returncode == 0, back.stderr
        assert f"Successfully installed hermesos-math-{version}" in back.stdout
        assert back.stdout.splitlines()[-2:] == [
            f"installed hermesos-math {version}: math.eval",
            "'hermesos tools list' lists every installed tool",
        ]
        assert "math.eval" in env.tools()
    finally:
        env.pip("install", "-q", "--no-index", "--find-links", str(env.wheels), "hermesos-math")


def test_install_of_a_broken_plugin_names_it_and_exits_1(env: Env) -> None:
    try:
        done = env.hermesos("install", "--no-index", "--find-links", str(env.wheels), BROKEN.name)
        assert done.returncode == 1
        assert done.stdout.splitlines()[-2:] == [
            f"installed {BROKEN.name} 1.2.3, which is broken",
            "'hermesos tools list' lists every installed tool",
        ]
        assert done.stderr.splitlines() == [
            f'error: broken plugin {BROKEN.name} 1.2.3 (entry point "import-error" = fixture_import_error): '
            "importing fixture_import_error failed with ModuleNotFoundError: "
            "No module named 'hermes_core_does_not_exist'",
            f"To start without it, disable it: --disable {BROKEN.name} or HERMESOS_DISABLE_PLUGINS={BROKEN.name}; "
            "'hermesos check' lists every problem of every plugin.",
        ]
    finally:
        gone = env.hermesos("uninstall", BROKEN.name)
    assert gone.stdout.splitlines()[-1] == f"uninstalled {BROKEN.name} 1.2.3"


def test_install_editable_follows_the_source(env: Env, tmp_path: Path) -> None:
    project = tmp_path / "hermesos-fixture-editable"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "hermesos-fixture-editable"
version = "1.0.0"
dependencies = ["hermesos-core"]

[project.entry-points."hermesos.plugins"]
editable = "fixture_editable"

[tool.setuptools]
py-modules = ["fixture_editable"]
"""
    )
    source = """
from hermes_core import define_tool, hookimpl, schema as s

@hookimpl
def hermes_tools():
    return [define_tool(name="editable.echo", description="{}", version="1.0.0", input=s.object({{}}), handler=dict)]
"""
    module = project / "fixture_editable.py"
    module.write_text(source.format("Before the edit."))
    try:
        # Building the project needs setuptools, which pip fetches for its isolated build.
        done = env.hermesos("install", "-e", str(project))
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-2] == "installed hermesos-fixture-editable 1.0.0: editable.echo"
        assert env.tools()["editable.echo"]["description"] == "Before the edit."
        module.write_text(source.format("After the edit."))
        assert env.tools()["editable.echo"]["description"] == "After the edit."
    finally:
        gone = env.hermesos("uninstall", "hermesos-fixture-editable")
    assert gone.stdout.splitlines()[-1] == "uninstalled hermesos-fixture-editable 1.0.0: editable.echo"
    assert "editable.echo" not in env.tools()


def test_install_and_uninstall_in_a_plugins_folder_holding_its_egg_info(env: Env, tmp_path: Path) -> None:
    """Run where a plugin's *.egg-info lies (as an earlier 'pip install -e .' leaves it), the changes are seen.

    The listing before and after pip must not read the folder's egg-info as an
    installed plugin: it would be there before the install and after the uninstall.
    """
    project = tmp_path / "hermesos-fixture-egg"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "hermesos-fixture-egg"
version = "1.0.0"
dependencies = ["hermesos-core"]

[project.entry-points."hermesos.plugins"]
egg = "fixture_egg"

[tool.setuptools]
py-modules = ["fixture_egg"]
"""
    )
    (project / "fixture_egg.py").write_text(
        """
from hermes_core import define_tool, hookimpl, schema as s

@hookimpl
def hermes_tools():
    return [define_tool(name="egg.echo", description="Echo.", version="1.0.0", input=s.object({}), handler=dict)]
"""
    )
    egg_info = project / "hermesos_fixture_egg.egg-info"
    egg_info.mkdir()
    (egg_info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: hermesos-fixture-egg\nVersion: 1.0.0\n")
    (egg_info / "entry_points.txt").write_text("[hermesos.plugins]\negg = fixture_egg\n")
    try:
        done = env.hermesos("install", "-e", ".", cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-2] == "installed hermesos-fixture-egg 1.0.0: egg.echo"
    finally:
        gone = env.hermesos("uninstall", "hermesos-fixture-egg", cwd=project)
    assert gone.stdout.splitlines()[-1] == "uninstalled hermesos-fixture-egg 1.0.0: egg.echo"


def test_index_url_reaches_pip_and_its_failure_is_one_line(env: Env, tmp_path: Path) -> None:
    index = (tmp_path / "no-index-here" / "simple").as_uri()
    done = env.hermesos("install", "--index-url", index, "hermesos-fixture-on-no-index")
    assert done.returncode == PIP_FAILED
    assert f"Looking in indexes: {index}" in done.stdout  # pip says which index it was given
    assert done.stderr.splitlines()[-1] == (
        "hermesos install: error: pip install failed with exit status 1; its output above says why"
    )
    assert "Traceback" not in done.stderr


def test_uninstall_refuses_hermesos_core_for_real(env: Env) -> None:
    done = env.hermesos("uninstall", "hermesos_core")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "hermesos uninstall: error: hermesos-core runs this command and cannot uninstall itself; "
        "uninstall it with the installer that installed it\n"
    )
    assert "Version:" in env.pip("show", "hermesos-core")
    # pip strips a name's white space: so does the check (it uninstalled the core, and the command with it).
    done = env.hermesos("uninstall", " hermesos-core")
    assert (done.returncode, done.stdout) == (2, "")
    assert "Version:" in env.pip("show", "hermesos-core")
