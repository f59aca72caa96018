"""A plugin refused at load, as the ``hermesos`` command says it: a setting's value is the setting's to change.

A plugin at fault is broken, and the command says how to start without it.
One refused for what a setting is set to (``setting HERMESOS_...`` is what its
refusal declares, or what it was raised from: the loader's refusal of a write
root a setting named, a plugin not loaded because that root meets what it
guards) is not broken: the command says it was not loaded, names the setting
and what to set it to, and offers starting without the plugin that reads the
setting only second. Each case runs the real console script, beside the same
command with the setting fixed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_core import InvalidDefinitionError, load_runtime

if TYPE_CHECKING:
    from conftest import Site

HERMES = Path(sys.executable).with_name("hermesos")
CHECK = "'hermesos check' lists every problem of every plugin."


def hermesos(site: Site, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command with the site's plugins, a home of its own (``site/home``) and no hermesos setting but *env*."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_", "NO_COLOR"))}
    (site.path / "home").mkdir(exist_ok=True)
    environment.update(PYTHONPATH=str(site.path), HOME=str(site.path / "home"), **env)
    return subprocess.run([str(HERMES), *argv], capture_output=True, text=True, env=environment, check=False)


def errors(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines of stderr but the "hermesos: loading the plugins... (1 s)" a busy machine may add."""
    return [line for line in done.stderr.splitlines() if not line.startswith("hermesos: ")]


def fix_setting(variable: str, *readers: str, held: str = "") -> str:
    """The line after the refusals: change *variable*, or else start without *readers*."""
    flags = " ".join(f"--disable {name}" for name in readers)
    value = ",".join([*([held] if held else []), *readers])
    plugins = "the plugin that reads" if len(readers) == 1 else "the plugins that read"
    return (
        f"Change the setting {variable} as said above, and run the command again; or start without {plugins} it: "
        f"{flags} or HERMESOS_DISABLE_PLUGINS={value}; {CHECK}"
    )


def not_loaded(done: subprocess.CompletedProcess[str], distribution: str) -> str:
    """The one line saying *distribution* was not loaded (for a setting: never "broken")."""
    [line] = [line for line in errors(done) if line.startswith(f"error: plugin {distribution} ")]
    assert ") not loaded: " in line
    return line


# -- hermesos-fs: its root ---------------------------------------------------------------------------------

#: What hermesos-fs's root setting says to set it to (its schema's description).
WORKSPACE = "the workspace root: an existing directory of its own, such as ~/hermesos-workspace"


@pytest.mark.parametrize("root", ["home", "/", "file"])
def test_a_refused_fs_root_names_the_setting_and_what_to_set_it_to_and_disabling_comes_second(
    site: Site, root: str
) -> None:
    home = site.path / "home"
    home.mkdir()
    (site.path / "notes.txt").write_text("not a folder\n")
    value = {"home": str(home), "/": "/", "file": str(site.path / "notes.txt")}[root]
    done = hermesos(site, "call", "math.eval", '{"expression": "1 + 1"}', HERMESOS_FS_ROOT=value)
    assert (done.returncode, done.stdout) == (1, "")
    assert "broken" not in done.stderr
    assert "To start without" not in done.stderr
    line = not_loaded(done, "hermesos-fs")
    if root == "file":
        assert line.endswith(
            f"not loaded: setting HERMESOS_FS_ROOT is '{value}', which cannot be opened as a directory "
            "(Not a directory); set it to an existing directory."
        )
    else:
        said = "is the home directory" if root == "home" else "is the root of the file system, which holds everything"
        assert (
            f'not loaded: setting HERMESOS_FS_ROOT names "{value}" as a directory its tools may write, but it {said}'
            in line
        )
        assert line.endswith(f"; set HERMESOS_FS_ROOT to a folder of its own that holds none of these ({WORKSPACE}).")
        # The plugins guarding paths under that root are not loaded either, for the same setting.
        for guarding in ("hermesos-mcp", "hermesos-policy"):
            assert "(its setting HERMESOS_FS_ROOT names it)" in not_loaded(done, guarding)
            assert not_loaded(done, guarding).endswith("set HERMESOS_FS_ROOT to a folder of its own.")
    # What to do: change the setting; or start without hermesos-fs, which reads it (never without the others).
    assert errors(done)[-1] == fix_setting("HERMESOS_FS_ROOT", "hermesos-fs")
    # The fix as said: a folder of its own, and the command runs.
    (site.path / "workspace").mkdir()
    fixed = hermesos(
        site, "call", "math.eval", '{"expression": "1 + 1"}', HERMESOS_FS_ROOT=str(site.path / "workspace")
    )
    assert (fixed.returncode, fixed.stdout, errors(fixed)) == (0, "2\n", [])
    # The second choice, as said: without hermesos-fs, the others load.
    skipped = hermesos(site, "call", "math.eval", '{"expression": "1 + 1"}', "--disable", "hermesos-fs",
                       HERMESOS_FS_ROOT=value)  # fmt: skip
    assert (skipped.returncode, skipped.stdout) == (0, "2\n")


# -- hermesos-policy: the file it names -----------------------------------------------------------------


def test_a_policy_setting_naming_a_missing_file_names_the_setting_not_a_broken_plugin(site: Site) -> None:
    (site.path / "workspace").mkdir()
    root = str(site.path / "workspace")
    missing = site.path / "policy.toml"
    done = hermesos(
        site, "call", "math.eval", '{"expression": "2"}', HERMESOS_FS_ROOT=root, HERMESOS_POLICY=str(missing)
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert "broken" not in done.stderr
    assert not_loaded(done, "hermesos-policy").endswith(
        f'not loaded: setting HERMESOS_POLICY names "{missing}", which does not exist; create it, fix the path, '
        "or unset HERMESOS_POLICY."
    )
    assert errors(done)[-1] == fix_setting("HERMESOS_POLICY", "hermesos-policy")
    missing.write_text('deny = ["fs:write"]\n')
    fixed = hermesos(
        site, "call", "math.eval", '{"expression": "2"}', HERMESOS_FS_ROOT=root, HERMESOS_POLICY=str(missing)
    )
    assert (fixed.returncode, fixed.stdout, errors(fixed)) == (0, "2\n", [])


# -- any plugin's settings: one mechanism in the core ----------------------------------------------------

KEYED = """
from hermes_core import setting

@hookimpl
def hermes_tools():
    key = setting("HERMESOS_UNIT_KEY", s.string(min_length=8, description="your API key, 8 characters or more"))
    return [make("unit.keyed")]
"""

ROOTED = """
from hermes_core import setting

@hookimpl
def hermes_write_roots():
    return [setting("HERMESOS_UNIT_ROOT")]

@hookimpl
def hermes_tools():
    return [make("unit.rooted")]
"""


def test_any_plugins_setting_refused_is_the_settings_to_change(site: Site) -> None:
    keyed = site.install(site.plugin(KEYED))
    (site.path / "workspace").mkdir()
    root = str(site.path / "workspace")
    unset = hermesos(site, "call", "unit.keyed", HERMESOS_FS_ROOT=root)
    assert (unset.returncode, unset.stdout) == (1, "")
    assert not_loaded(unset, keyed).endswith(
        "not loaded: setting HERMESOS_UNIT_KEY is not set; set it to a string: your API key, 8 characters or more."
    )
    assert errors(unset)[-1] == fix_setting("HERMESOS_UNIT_KEY", keyed)
    short = hermesos(site, "call", "unit.keyed", HERMESOS_FS_ROOT=root, HERMESOS_UNIT_KEY="abc")
    assert "not loaded: setting HERMESOS_UNIT_KEY must have at least 8 characters, got 3;" in not_loaded(short, keyed)
    assert "abc" not in short.stderr  # a setting's value is never quoted: it may be a secret
    fixed = hermesos(site, "call", "unit.keyed", HERMESOS_FS_ROOT=root, HERMESOS_UNIT_KEY="abcdefgh")
    assert (fixed.returncode, fixed.stdout, errors(fixed)) == (0, "{}\n", [])


def test_a_write_root_any_plugins_setting_named_is_refused_as_that_settings(site: Site) -> None:
    rooted = site.install(site.plugin(ROOTED))
    home = site.path / "home"
    home.mkdir()
    (site.path / "workspace").mkdir()
    root = str(site.path / "workspace")
    done = hermesos(site, "tools", "list", HERMESOS_FS_ROOT=root, HERMESOS_UNIT_ROOT=str(home))
    assert done.returncode == 1
    line = not_loaded(done, rooted)
    assert (
        f'not loaded: setting HERMESOS_UNIT_ROOT names "{home}" as a directory its tools may write, but it is' in line
    )
    # A setting without a description: the generic example.
    assert line.endswith(
        "set HERMESOS_UNIT_ROOT to a folder of its own that holds none of these, such as a new workspace folder."
    )
    assert errors(done)[-1] == fix_setting("HERMESOS_UNIT_ROOT", rooted)
    fixed = hermesos(site, "tools", "list", HERMESOS_FS_ROOT=root, HERMESOS_UNIT_ROOT=str(site.path / "elsewhere"))
    assert fixed.returncode == 0, fixed.stderr
    assert "unit.rooted" in fixed.stdout


def test_a_root_no_setting_named_is_still_the_plugins_fault(site: Site) -> None:
    home = site.path / "home"
    home.mkdir()
    fixed = site.install(site.plugin(f"@hookimpl\ndef hermes_write_roots():\n    return [{str(home)!r}]\n"))
    (site.path / "workspace").mkdir()
    done = hermesos(site, "tools", "list", HERMESOS_FS_ROOT=str(site.path / "workspace"))
    assert done.returncode == 1
    [line] = [line for line in errors(done) if line.startswith(f"error: broken plugin {fixed} 1.0.0 ")]
    assert f': hermes_write_roots names "{home}" as a directory its tools may write' in line
    assert line.endswith(
        "give the tools a folder of their own, such as a new workspace folder, that holds none of these."
    )
    assert ") not loaded: " not in done.stderr
    assert errors(done)[-1].startswith("To start without them, disable them: ")
    assert f"--disable {fixed} " in errors(done)[-1]


def test_a_setting_refused_beside_a_broken_plugin_gets_a_line_each_way(site: Site) -> None:
    keyed = site.install(site.plugin(KEYED))
    broken = site.install("raise RuntimeError('boom at import')")
    (site.path / "workspace").mkdir()
    done = hermesos(site, "tools", "list", HERMESOS_FS_ROOT=str(site.path / "workspace"))
    assert done.returncode == 1
    lines = errors(done)
    assert f"error: broken plugin {broken} 1.0.0 " in "\n".join(lines)
    assert not_loaded(done, keyed)
    assert lines[-2:] == [
        fix_setting("HERMESOS_UNIT_KEY", keyed),
        f"To start without it, disable it: --disable {broken} or HERMESOS_DISABLE_PLUGINS={broken}; {CHECK}",
    ]


def test_load_runtime_raises_the_same_remedy(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    keyed = site.install(site.plugin(KEYED))
    monkeypatch.delenv("HERMESOS_UNIT_KEY", raising=False)
    with pytest.raises(InvalidDefinitionError) as caught:
        load_runtime()
    assert caught.value.declaration.endswith(": setting HERMESOS_UNIT_KEY")
    assert str(caught.value).endswith("\n" + fix_setting("HERMESOS_UNIT_KEY", keyed))
    monkeypatch.setenv("HERMESOS_UNIT_KEY", "abcdefgh")
    assert "unit.keyed" in load_runtime().tools


def test_a_write_root_holding_a_nul_is_refused_by_its_index_not_a_traceback(site: Site) -> None:
    nul = site.install(site.plugin('@hookimpl\ndef hermes_write_roots():\n    return ["/srv/a\\0b"]\n'))
    (site.path / "workspace").mkdir()
    done = hermesos(site, "tools", "list", HERMESOS_FS_ROOT=str(site.path / "workspace"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    [line] = [line for line in errors(done) if line.startswith("error: ")]
    assert line.endswith(
        ": hermes_write_roots[0] must be a directory path such as '/srv/workspace', got a path holding a NUL."
    )
    assert f"error: broken plugin {nul} 1.0.0 " in line
    assert "math.eval" in done.stdout  # the others' tools are listed
