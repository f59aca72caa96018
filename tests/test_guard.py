"""``fs:write`` never becomes code execution or a configuration change: each attack, as made, through the command.

With the working directory as the default root, a model granted only
``fs:write`` could write ``~/.config/hermesos/mcp.toml`` naming ``/bin/sh``
(run at the next ``hermesos tools list``), a ``.pth`` file into the project's
virtual environment (run at the next Python start), a git hook, a shell
start-up file or ``sitecustomize.py``; with ``fs:read``, read ``~/.ssh`` or a
project's ``.env``. Each is tried here with the installed ``hermesos``
command, and now ends in one named refusal: the loader's, for a root holding
what decides what runs, or hermesos-fs's, for a protected name inside a root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERMES = Path(sys.executable).with_name("hermesos")


def hermesos(cwd: Path, *argv: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the installed command in *cwd* with HOME under *cwd*'s parent and no hermesos setting but *env*."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "NO_COLOR"))
    }
    environment.update({"HOME": str(cwd.parent / "home"), **env})
    return subprocess.run(
        [str(HERMES), *argv], cwd=cwd, env=environment, capture_output=True, text=True, check=False, timeout=timeout
    )


@pytest.fixture
def box(tmp_path: Path) -> Path:
    """A working directory, ``box/work``, beside a home directory, ``box/home``."""
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


def write(cwd: Path, path: str, content: str = "x\n", **env: str) -> subprocess.CompletedProcess[str]:
    """``hermesos call fs.write`` of *content* to *path*, granted ``fs:write``, the error (if any) as JSON."""
    arguments = json.dumps({"path": path, "content": content})
    return hermesos(cwd, "call", "fs.write", arguments, "--grant", "fs:write", "--json", **env)


def refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The one issue's detail of a refused call (``INPUT_INVALID`` on ``path``)."""
    assert done.returncode == 4, done.stderr
    error = json.loads(done.stderr)
    assert error["code"] == "INPUT_INVALID"
    [issue] = error["issues"]
    assert issue["path"] == ["path"]
    detail: str = issue["detail"]
    return detail


def broken_fs_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line refusing hermesos-fs at load."""
    assert done.returncode == 1, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error: broken plugin hermesos-fs ")]
    return line


# -- the root: nothing that decides what runs ------------------------------------------------------------


def test_the_root_has_no_default_and_tools_list_says_what_to_set(box: Path) -> None:
    done = hermesos(box, "tools", "list")
    assert "fs.write" not in done.stdout
    assert "warning: plugin hermesos-fs " in done.stderr
    assert "HERMESOS_FS_ROOT is not set, so the file tools (fs.read, fs.write, " in done.stderr
    assert write(box, "x.txt").returncode != 0  # no fs.write: the working directory is not a root
    assert not (box / "x.txt").exists()


def test_a_root_holding_the_virtualenv_running_hermesos_stops_the_load(box: Path) -> None:
    """The project folder holding its .venv, as dev.py makes it: the root once was exactly this by default."""
    project = Path(sys.prefix).parent
    done = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(project))
    line = broken_fs_line(done)
    assert (
        f'hermes_write_roots names "{os.path.realpath(project)}" as a directory its tools may write, but it contains '
        f'"{sys.prefix}", the Python environment running hermesos (sys.prefix), so a tool could change what runs'
    ) in line
    assert "fs.write" not in done.stdout


def test_a_pth_file_into_a_virtualenv_under_the_root_is_refused(box: Path) -> None:
    """A virtual environment that is not the one running: a folder holding pyvenv.cfg, whatever its name."""
    root = box / "root"
    for name in (".venv", "env"):
        (root / name / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
        (root / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    pth = ".venv/lib/python3.11/site-packages/x.pth"
    detail = refusal(write(box, pth, "import os; os.system('id > owned')\n", HERMESOS_FS_ROOT=str(root)))
    assert detail.startswith(f"names '{pth}', which is protected: '{pth}' is a file Python runs at start-up; ")
    assert "the operator can allow it by adding *.pth to the setting HERMESOS_FS_UNPROTECT" in detail
    module = "env/lib/python3.11/site-packages/evil.py"
    detail = refusal(write(box, module, "import os\n", HERMESOS_FS_ROOT=str(root)))
    assert "which is protected: 'env' is a virtual environment (it holds pyvenv.cfg)" in detail
    assert "adding pyvenv.cfg to the setting HERMESOS_FS_UNPROTECT" in detail
    assert not (root / ".venv" / "lib" / "python3.11" / "site-packages" / "x.pth").exists()
    assert not (root / "env" / "lib" / "python3.11" / "site-packages" / "evil.py").exists()


def test_mcp_toml_under_a_home_root_stops_the_load_and_the_same_name_elsewhere_starts_nothing(box: Path) -> None:
    home = box.parent / "home"
    marker = box.parent / "owned"
    config = f'[servers.x]\ncommand = "/bin/sh"\nargs = ["-c", "touch {marker}"]\n'
    # Run from the home directory with it as the root: refused before any tool runs.
    done = hermesos(box, "call", "fs.write", json.dumps({"path": ".config/hermesos/mcp.toml", "content": config}),
                    "--grant", "fs:write", HERMESOS_FS_ROOT=str(home))  # fmt: skip
    line = broken_fs_line(done)
    assert f'names "{home}" as a directory its tools may write, but it is the home directory' in line
    assert not (home / ".config" / "hermesos" / "mcp.toml").exists()
    # A configuration directory under the root (XDG_CONFIG_HOME inside it): refused too.
    inside = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(box), XDG_CONFIG_HOME=str(box / ".config"))
    assert f'but it contains "{box}/.config/hermesos", the hermesos configuration directory' in broken_fs_line(inside)
    # A root inside the home directory that is not the configuration directory: the same name is a plain file.
    root = home / "projects" / "work"
    root.mkdir(parents=True)
    wrote = hermesos(box, "call", "fs.write", json.dumps({"path": ".config/hermesos/mcp.toml", "content": config}),
                     "--grant", "fs:write", HERMESOS_FS_ROOT=str(root))  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr
    listed = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(root))
    assert "x." not in listed.stdout
    assert not marker.exists()


def test_the_mcp_listing_cache_or_configuration_under_the_root_stops_the_load(box: Path) -> None:
    root = box / "root"
    (root / "cache").mkdir(parents=True)
    cached = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(root), HERMESOS_MCP_CACHE_DIR=str(root / "cache"))
    line = broken_fs_line(cached)
    assert f'but it contains "{root}/cache", a path plugin hermesos-mcp guards (hermes_guarded_paths)' in line
    (root / "mcp.toml").write_text("")
    named = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(root), HERMESOS_MCP_CONFIG=str(root / "mcp.toml"))
    assert f'but it contains "{root}/mcp.toml", a path plugin hermesos-mcp guards' in broken_fs_line(named)


# -- protected names inside a root ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (".git/hooks/pre-commit", "'.git' is version-control internals, where a hook runs at the next commit"),
        ("src/.GIT/config", "'src/.GIT' is version-control internals"),  # case-insensitive file systems
        (".hg/hgrc", "'.hg' is version-control internals"),
        (".bashrc", "'.bashrc' is a shell start-up file, which runs in every new shell"),
        (".config/fish/config.fish", "'.config/fish/config.fish' is a shell start-up file"),
        ("sitecustomize.py", "'sitecustomize.py' is a file Python runs at start-up"),
        ("lib/usercustomize.py", "'lib/usercustomize.py' is a file Python runs at start-up"),
        (".ssh/authorized_keys", "'.ssh' holds credentials"),
        (".env.local", "'.env.local' is an environment file"),
    ],
)
def test_writing_a_protected_name_is_refused_naming_it_and_the_setting(box: Path, path: str, says: str) -> None:
    detail = refusal(write(box, path, HERMESOS_FS_ROOT=str(box)))
    assert f"which is protected: {says}" in detail
    assert "hermesos-fs does not write, create or delete anything there, whatever the arguments" in detail
    assert "HERMESOS_FS_UNPROTECT" in detail
    assert not (box / path).exists()


@pytest.mark.parametrize("path", [".ssh/id_ed25519", ".aws/credentials", ".env", ".netrc", ".gnupg/private"])
def test_reading_credentials_is_refused(box: Path, path: str) -> None:
    (box / path).parent.mkdir(parents=True, exist_ok=True)
    (box / path).write_text("the secret\n")
    done = hermesos(box, "call", "fs.read", json.dumps({"path": path}), "--grant", "fs:read", "--json",
                    HERMESOS_FS_ROOT=str(box))  # fmt: skip
    assert "the secret" not in done.stdout + done.stderr
    assert "hermesos-fs does not read, list or describe anything there" in refusal(done)


def test_the_operator_narrows_and_widens_the_protected_names(box: Path) -> None:
    (box / ".env").write_text("TOKEN=1\n")
    (box / "keys").mkdir()
    (box / "keys" / "a.txt").write_text("key\n")
    root = {"HERMESOS_FS_ROOT": str(box)}
    allowed = {**root, "HERMESOS_FS_UNPROTECT": ".git, .env*"}
    assert write(box, ".git/hooks/pre-commit", **allowed).returncode == 0
    read = hermesos(box, "call", "fs.read", '{"path": ".env"}', "--grant", "fs:read", **allowed)
    assert read.returncode == 0, read.stderr
    assert "TOKEN=1" in read.stdout
    assert "sitecustomize.py" in refusal(write(box, "sitecustomize.py", **allowed))  # the others hold
    wider = {**root, "HERMESOS_FS_PROTECT": "*.KEY", "HERMESOS_FS_PROTECT_READS": "keys"}
    assert "protected by the operator" in refusal(write(box, "id.key", **wider))
    listed = hermesos(box, "call", "fs.list", '{"path": "keys"}', "--grant", "fs:read", "--json", **wider)
    assert "protected by the operator" in refusal(listed)
    unknown = hermesos(box, "tools", "list", **root, HERMESOS_FS_UNPROTECT=".gitt")
    line = broken_fs_line(unknown)
    assert "setting HERMESOS_FS_UNPROTECT names '.gitt', which is not a protected name of the defaults" in line


# -- settings and configuration files: bounded at load ----------------------------------------------------


def test_a_size_setting_of_20_digits_is_refused_at_load(box: Path) -> None:
    done = hermesos(box, "tools", "list", HERMESOS_FS_ROOT=str(box), HERMESOS_FS_MAX_READ_BYTES="9" * 20)
    line = broken_fs_line(done)
    assert "setting HERMESOS_FS_MAX_READ_BYTES must be at most 1073741824" in line
    assert "9" * 20 not in done.stderr  # a setting's value is never quoted


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_named_as_the_mcp_configuration_is_refused_at_once(box: Path) -> None:
    fifo = box / "mcp.toml"
    os.mkfifo(fifo)
    done = hermesos(box, "tools", "list", HERMESOS_MCP_CONFIG=str(fifo), timeout=20)  # it hung, waiting for a writer
    assert done.returncode == 1
    assert (
        f'MCP configuration file "{fifo}" could not be read: it is a FIFO (named pipe), not a regular file'
        in done.stderr
    )


# -- a broken plugin is one named line, whatever it raised ----------------------------------------------


def test_generator_exit_in_a_hook_is_a_broken_plugin_line_not_a_traceback(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "hermesos_genexit-1.0.0.dist-info"
    info.mkdir(parents=True)
    (site / "hermesos_genexit.py").write_text(
        textwrap.dedent("""
        def hermes_tools():
            raise GeneratorExit
        """)
    )
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermesos-genexit\nVersion: 1.0.0\n")
    (info / "entry_points.txt").write_text("[hermesos.plugins]\ngenexit = hermesos_genexit\n")
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    done = hermesos(tmp_path / "work", "tools", "list", PYTHONPATH=str(site))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert (
        'error: broken plugin hermesos-genexit 1.0.0 (entry point "genexit" = hermesos_genexit): hook hermes_tools '
        "raised GeneratorExit"
    ) in done.stderr
    assert "math.eval" in done.stdout  # the other plugins still load
