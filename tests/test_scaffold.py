"""hermesos new plugin: the files it writes, what it refuses, and a new plugin installed, tested and listed for real."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_core import Runtime, Tool
from hermes_core.cli import _scaffold, main

if TYPE_CHECKING:
    from conftest import Environments

ROOT = Path(__file__).resolve().parent.parent
NOTES = ["pyproject.toml", "hermes_notes.py", "README.md", "tests/test_hermes_notes.py", ".gitignore"]
NEXT_STEPS = ["next steps:", "  cd hermesos-notes", "  pip install -e '.[test]'", "  pytest", "  hermesos tools list"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["new", "plugin", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def files(folder: Path) -> list[str]:
    """Every file and directory under *folder*, relative, sorted."""
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load(path: Path) -> object:
    """Import the module at *path* under a name of its own."""
    spec = importlib.util.spec_from_file_location(f"scaffolded_{path.stem}_{id(path)}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- what it writes --------------------------------------------------------------------------


def test_new_plugin_writes_the_distribution_and_says_what_to_do_next(
    capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    status, out, err = run(capsys, "notes")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        "wrote hermesos-notes, a plugin with one tool, notes.greet:",
        *(f"  hermesos-notes/{name}" for name in NOTES),
        *NEXT_STEPS,
    ]
    assert files(here) == sorted(["hermesos-notes", "hermesos-notes/tests", *(f"hermesos-notes/{n}" for n in NOTES)])


def test_the_pyproject_declares_the_distribution_its_entry_point_and_its_tests(
    capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    assert run(capsys, "notes")[0] == 0
    pyproject = tomllib.loads((here / "hermesos-notes" / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"
    project = pyproject["project"]
    assert (project["name"], project["version"], project["requires-python"]) == ("hermesos-notes", "0.1.0", ">=3.11")
    assert project["dependencies"] == ["hermesos-core>=0.4"]
    assert project["optional-dependencies"] == {"test": ["hermesos-core[testing]>=0.4", "pytest>=8"]}
    assert project["entry-points"] == {"hermesos.plugins": {"notes": "hermes_notes"}}
    assert pyproject["tool"]["setuptools"] == {"py-modules": ["hermes_notes"]}
    assert pyproject["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]


@pytest.mark.parametrize(
    ("typed", "name", "distribution", "module"),
    [
        ("notes", "notes", "hermesos-notes", "hermes_notes"),
        ("hermesos-notes", "notes", "hermesos-notes", "hermes_notes"),
        ("word-count", "word_count", "hermesos-word-count", "hermes_word_count"),
        ("word_count", "word_count", "hermesos-word-count", "hermes_word_count"),
        ("hermesos-word_count2", "word_count2", "hermesos-word-count2", "hermes_word_count2"),
        ("a" * _scaffold.NAME_MAX, "a" * _scaffold.NAME_MAX, "hermesos-" + "a" * _scaffold.NAME_MAX, None),
    ],
)
def test_the_names_derive_from_the_one_typed(typed: str, name: str, distribution: str, module: str | None) -> None:
    names = _scaffold.plugin_names(typed)
    assert names == _scaffold.PluginNames(name=name, distribution=distribution, module=module or f"hermes_{name}")


def test_a_hyphenated_name_is_written_with_underscores_in_code_and_hyphens_in_the_distribution(
    capsys: pytest.CaptureFixture[str], here: Path
) -> None:
    status, out, _ = run(capsys, "hermesos-word-count")
    assert status == 0
    assert out.splitlines()[0] == "wrote hermesos-word-count, a plugin with one tool, word_count.greet:"
    project = here / "hermesos-word-count"
    assert (project / "hermes_word_count.py").is_file()
    assert (project / "tests" / "test_hermes_word_count.py").is_file()
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["entry-points"] == {"hermesos.plugins": {"word_count": "hermes_word_count"}}
    assert 'name="word_count.greet"' in (project / "hermes_word_count.py").read_text(encoding="utf-8")


def test_directory_chooses_where_and_an_empty_one_is_used(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    status, out, _ = run(capsys, "notes", "--directory", "plugins/my notes")
    assert status == 0
    assert out.splitlines()[1] == "  plugins/my notes/pyproject.toml"
    assert out.splitlines()[-4] == "  cd 'plugins/my notes'"
    assert files(here / "plugins/my notes") == sorted(["tests", *NOTES])
    (here / "empty").mkdir()
    assert run(capsys, "notes", "--directory", "empty")[0] == 0
    assert (here / "empty" / "hermes_notes.py").is_file()


def test_the_generated_module_defines_a_working_tool(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    assert run(capsys, "notes")[0] == 0
    module = load(here / "hermesos-notes" / "hermes_notes.py")
    greet = module.greet  # type: ignore[attr-defined]
    assert isinstance(greet, Tool)
    assert module.hermes_tools() == [greet]  # type: ignore[attr-defined]
    assert (greet.name, greet.version, greet.permissions) == ("notes.greet", "0.1.0", ())
    assert greet.description == "Greet someone by name."
    runtime = Runtime([greet])
    assert runtime.call_sync("notes.greet", {"name": "Ada"}) == "Hello, Ada."
    assert runtime.call_sync("notes.greet", {"name": "Ada", "excited": True}) == "Hello, Ada!"
    schema = greet.input.json_schema()
    assert schema["required"] == ["name"]
    assert schema["properties"]["name"]["description"] == "who to greet."


@pytest.mark.parametrize("name", ["notes", "word-count", "w" * _scaffold.NAME_MAX])
def test_the_generated_files_are_ruff_clean(capsys: pytest.CaptureFixture[str], here: Path, name: str) -> None:
    """Clean by ruff's defaults, and by this project's own broad selection (its tests' ignores included)."""
    assert run(capsys, name, "--directory", "project")[0] == 0
    project = here / "project"
    ruff = [sys.executable, "-m", "ruff"]
    for config in ([], ["--config", str(ROOT / "pyproject.toml")]):
        for command in (["check", *config, "."], ["format", *config, "--check", "--diff", "."]):
            done = subprocess.run([*ruff, *command], cwd=project, capture_output=True, text=True, check=False)
            assert done.returncode == 0, (command, done.stdout + done.stderr)


# -- what it refuses -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("", "''"),
        ("Notes", "'Notes'"),
        ("1notes", "'1notes'"),
        ("notes!", "'notes!'"),
        ("my notes", "'my notes'"),
        ("notes-", "'notes-'"),
        ("notes_", "'notes_'"),
        ("word--count", "'word--count'"),
        ("hermesos-", "'hermesos-'"),
        ("ñotes", "'ñotes'"),
        ("notes\nrm -rf", "'notes\\nrm -rf'"),
        ("a" * (_scaffold.NAME_MAX + 1), repr("a" * (_scaffold.NAME_MAX + 1))),
    ],
)
def test_a_bad_name_is_one_usage_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], here: Path, typed: str, shown: str
) -> None:
    status, out, err = run(capsys, "--", typed)
    assert (status, out, files(here)) == (2, "", [])
    assert err == (
        f"hermesos new plugin: error: {shown} is not a plugin name: use a short lowercase name, a letter then "
        f"letters, digits, hyphens or underscores (at most {_scaffold.NAME_MAX} characters), such as 'notes' or "
        "'word-count'" + ("; did you mean 'notes'?" if typed == "Notes" else "") + "\n"
    )


@pytest.mark.parametrize("typed", ["core", "hermesos-core"])
def test_the_core_s_own_name_is_refused(capsys: pytest.CaptureFixture[str], here: Path, typed: str) -> None:
    status, out, err = run(capsys, typed)
    assert (status, out, files(here)) == (2, "", [])
    assert err == (
        f"hermesos new plugin: error: {typed!r} would make a plugin named hermesos-core, the core's own name; "
        "choose another\n"
    )


@pytest.mark.parametrize("typed", ["fs", "math", "mcp", "policy", "hermesos-fs", "hermesos-policy"])
def test_a_bundled_plugin_s_name_is_refused(capsys: pytest.CaptureFixture[str], here: Path, typed: str) -> None:
    status, out, err = run(capsys, typed)
    assert (status, out, files(here)) == (2, "", [])  # before, hermesos-fs was written, shadowing the real one
    distribution = "hermesos-" + typed.removeprefix("hermesos-")
    assert err == (
        f"hermesos new plugin: error: {typed!r} would make a plugin named {distribution}, the name of a plugin "
        "bundled with hermesos-core; choose another\n"
    )


def test_the_bundled_names_are_the_plugins_the_core_is_released_with() -> None:
    released = sorted(
        Path(p).parent.name.removeprefix("hermesos-") for p in (ROOT / "plugins").glob("*/pyproject.toml")
    )
    assert sorted(_scaffold.BUNDLED) == released
    assert _scaffold.plugin_names("fs-tools").distribution == "hermesos-fs-tools"  # a longer name is free


def test_a_directory_in_use_is_refused_and_left_as_it_was(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    (here / "hermesos-notes").mkdir()
    (here / "hermesos-notes" / "README.md").write_text("mine\n")
    (here / "taken").mkdir()
    (here / "taken" / ".git").mkdir()  # hidden entries count
    (here / "a-file").write_text("mine too\n")
    before = files(here)
    in_use = "already exists and is not empty; choose another name or --directory"
    for argv, message in [
        (["notes"], f"hermesos-notes {in_use}"),
        (["notes", "--directory", "taken"], f"taken {in_use}"),
        (["notes", "--directory", "a-file"], "a-file exists and is not a directory; choose another --directory"),
    ]:
        status, out, err = run(capsys, *argv)
        assert (status, out, err) == (2, "", f"hermesos new plugin: error: {message}\n")
    (here / "two\nlines").mkdir()
    (here / "two\nlines" / "x").write_text("")
    before = files(here)
    status, _, err = run(capsys, "notes", "--directory", "two\nlines")
    assert (status, err) == (2, f"hermesos new plugin: error: 'two\\nlines' {in_use}\n")
    assert files(here) == before
    assert (here / "hermesos-notes" / "README.md").read_text() == "mine\n"
    assert (here / "a-file").read_text() == "mine too\n"


def test_a_directory_that_cannot_be_made_is_one_usage_line(capsys: pytest.CaptureFixture[str], here: Path) -> None:
    (here / "a-file").write_text("mine\n")
    status, out, err = run(capsys, "notes", "--directory", "a-file/notes")
    assert (status, out) == (2, "")
    assert err.startswith("hermesos new plugin: error: cannot write a-file/notes: ")
    assert err.count("\n") == 1
    assert files(here) == ["a-file"]


def test_a_failure_midway_removes_what_was_written_and_nothing_else(
    capsys: pytest.CaptureFixture[str], here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (here / "kept").mkdir()  # exists and is empty: used, and kept after the failure
    opened = Path.open

    def failing_open(self: Path, *args: object, **kwargs: object) -> object:
        if self.name == "test_hermes_notes.py":
            raise OSError(28, "No space left on device", str(self))
        return opened(self, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", failing_open)
    status, out, err = run(capsys, "notes", "--directory", "kept/deeper/notes")
    assert (status, out) == (2, "")
    where = "kept/deeper/notes/tests/test_hermes_notes.py"
    assert err == f"hermesos new plugin: error: cannot write {where}: No space left on device\n"
    assert files(here) == ["kept"]


# -- help ------------------------------------------------------------------------------------


def test_new_plugin_help_says_what_it_writes_and_its_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--help")
    assert status == 0
    assert out.startswith("usage: hermesos new plugin [-h] [--directory DIR] NAME")
    flat = " ".join(out.split())
    for words in ("hermesos-NAME", "hermes_NAME.py", "--directory DIR", "Exit statuses: 0 ok, 2 usage"):
        assert words in flat
    assert main(["new", "--help"]) == 0
    assert "plugin" in capsys.readouterr().out
    assert main(["new"]) == 2
    assert capsys.readouterr().err.startswith("usage: hermesos new")
    assert main(["--help"]) == 0
    assert "new" in capsys.readouterr().out


def test_only_new_plugin_imports_the_templates() -> None:
    code = (
        "import sys\n"
        "from hermes_core.cli import main\n"
        "main(['--help'])\n"
        "print('hermes_core.cli._scaffold' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"


# -- done when: a new plugin, installed in a fresh environment, passes its tests and is listed -------


def test_a_new_plugin_installs_passes_its_tests_and_lists_its_tool(tmp_path: Path, environments: Environments) -> None:
    # A fresh environment with hermesos-core and nothing else of hermesos (conftest's environments).
    environment = environments.new(tmp_path / "venv")
    bin_dir = environment / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR", "PYTHON", "PYTEST_"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(environment))
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]

    work = tmp_path / "work"
    work.mkdir()

    def step(*argv: str, cwd: Path = work) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-60:])
            pytest.fail(f"{' '.join(argv)} exited {done.returncode}:\n{tail}", pytrace=False)
        return done

    created = step(str(bin_dir / "hermesos"), "new", "plugin", "notes")
    assert created.stdout.splitlines()[-5:] == NEXT_STEPS
    step(*pip, "-e", "./hermesos-notes[test]")
    tested = step(str(bin_dir / "pytest"), cwd=work / "hermesos-notes")
    assert "4 passed" in tested.stdout.splitlines()[-1], tested.stdout
    listed = step(str(bin_dir / "hermesos"), "tools", "list")
    assert listed.stdout == "notes.greet  0.1.0  hermesos-notes  [-]  Greet someone by name.\n"  # as docs/cli.md shows
    called = step(str(bin_dir / "hermesos"), "call", "notes.greet", '{"name": "Ada"}')
    assert called.stdout == '"Hello, Ada."\n'  # as the README shows
