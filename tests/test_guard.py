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
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
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
    """The one line refusing hermesos-fs at load: for its root, a setting, so not "broken" but "not loaded"."""
    assert done.returncode == 1, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("error: plugin hermesos-fs ")]
    assert ") not loaded: setting HERMESOS_" in line
    assert "To start without" not in done.stderr  # the setting is the fix; disabling comes second
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
        f'setting HERMESOS_FS_ROOT names "{os.path.realpath(project)}" as a directory its tools may write, but it '
        f'contains "{sys.prefix}", the Python environment running hermesos (sys.prefix), so a tool could change what '
        "runs"
    ) in line
    assert line.endswith(
        "set HERMESOS_FS_ROOT to a folder of its own that holds none of these (the workspace root: an existing "
        "directory of its own, such as ~/hermesos-workspace)."
    )
    assert "fs.write" not in done.stdout


def test_a_pth_file_into_a_virtualenv_under_the_root_is_refused(box: Path) -> None:
    """A virtual environment that is not the one running: a folder holding pyvenv.cfg, whatever its name."""
    root = box / "root"
    for name in (".venv", "env"):
        (root / name / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
        (root / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    pth = ".venv/lib/python3.11/site-packages/x.pth"
    detail = refusal(write(box, pth, "import os; os.system('id > owned')\n", HERMESOS_FS_ROOT=str(root)))
    assert detail.startswith(f"names '{pth}', which is protected: '.venv/lib/python3.11' is a folder Python imports ")
    assert "the operator can allow it by adding lib/python[0-9]* to the setting HERMESOS_FS_UNPROTECT" in detail
    detail = refusal(write(box, ".venv/x.pth", "import os\n", HERMESOS_FS_ROOT=str(root)))
    assert "which is protected: '.venv/x.pth' is run by Python at start-up (a .pth file, " in detail
    # The activation script, outside the folders Python imports from: the folder is found by its pyvenv.cfg.
    script = "env/bin/activate"
    detail = refusal(write(box, script, "id\n", HERMESOS_FS_ROOT=str(root)))
    assert "which is protected: 'env' is a virtual environment (it holds pyvenv.cfg)" in detail
    assert "adding pyvenv.cfg to the setting HERMESOS_FS_UNPROTECT" in detail
    assert not (root / ".venv" / "lib" / "python3.11" / "site-packages" / "x.pth").exists()
    assert not (root / ".venv" / "x.pth").exists()
    assert not (root / "env" / "bin").exists()


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
        (".config/fish/config.fish", "'.config/fish' is a shell start-up file"),
        ("fish/config.fish", "'fish/config.fish' is a shell start-up file"),
        ("sitecustomize.py", "'sitecustomize.py' is run by Python at start-up"),
        ("lib/usercustomize.py", "'lib/usercustomize.py' is run by Python at start-up"),
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


# -- the root itself: never one of the protected names, nor inside one -----------------------------------


def call(cwd: Path, tool: str, arguments: dict[str, str], **env: str) -> subprocess.CompletedProcess[str]:
    """``hermesos call`` of *tool*, granted ``fs:read`` and ``fs:write``, the error (if any) as JSON."""
    grants = ("--grant", "fs:read", "--grant", "fs:write")
    return hermesos(cwd, "call", tool, json.dumps(arguments), *grants, "--json", **env)


def file_of(root: Path, tool: str, arguments: dict[str, str]) -> Path:
    """The file the call names under *root*; for a read, made now and holding a secret."""
    target = root / arguments["path"]
    if tool == "fs.read":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("the secret\n")
    return target


@pytest.mark.parametrize(
    ("root", "tool", "arguments", "protected", "says"),
    [
        (".git", "fs.write", {"path": "hooks/pre-commit", "content": "id\n"}, ".git", "is version-control internals"),
        ("repo/.git/hooks", "fs.write", {"path": "pre-commit", "content": "id\n"}, "repo/.git", "is version-control"),
        (".ssh", "fs.read", {"path": "config"}, ".ssh", "holds credentials"),  # id_* is refused in any root
        (".aws", "fs.read", {"path": "credentials"}, ".aws", "holds credentials"),
        (".config/fish", "fs.write", {"path": "conf.d/x.fish", "content": "id\n"}, ".config/fish", "is a shell start"),
        (".config/git", "fs.write", {"path": "config", "content": "[core]\n"}, ".config/git", "is the configuration"),
        (".ipython/profile_default", "fs.write", {"path": "startup/0.py", "content": "id\n"}, ".ipython", "is IPython"),
        ("lib/.Bashrc.d", "fs.write", {"path": "x.sh", "content": "id\n"}, "lib/.Bashrc.d", "is a shell start"),
    ],
)
def test_a_root_that_is_or_lies_inside_a_protected_name_stops_the_load(
    box: Path, root: str, tool: str, arguments: dict[str, str], protected: str, says: str
) -> None:
    """A root the protected names cover was accepted: hooks/pre-commit written, id_ed25519 read, and so on."""
    home = box.parent / "home"
    folder = home / root
    folder.mkdir(parents=True)
    target = file_of(folder, tool, arguments)
    # The control: the same call in a folder of its own, beside it, works.
    own = home / "workspace"
    own.mkdir()
    file_of(own, tool, arguments)
    worked = call(box, tool, arguments, HERMESOS_FS_ROOT=str(own))
    assert worked.returncode == 0, worked.stderr
    done = call(box, tool, arguments, HERMESOS_FS_ROOT=str(folder))
    line = broken_fs_line(done)
    assert f"setting HERMESOS_FS_ROOT is '{folder}', which is protected: '{home / protected}' {says}" in line
    assert "so a root cannot be or lie inside it either: set it to a folder of its own, such as " in line
    assert "to the setting HERMESOS_FS_UNPROTECT" in line
    assert "the secret" not in done.stdout + done.stderr
    if tool == "fs.write":
        assert not target.exists()


def test_a_root_is_checked_as_named_and_as_resolved(box: Path) -> None:
    """A link to ~/.ssh, a link named .git to a folder elsewhere, a bare repository: each refused at load."""
    home = box.parent / "home"
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("the secret\n")
    keys = box.parent / "keys"
    keys.symlink_to(home / ".ssh")
    done = call(box, "fs.read", {"path": "id_ed25519"}, HERMESOS_FS_ROOT=str(keys))
    assert f"is '{keys}' (that is, '{home / '.ssh'}'), which is protected: '{home / '.ssh'}' holds" in broken_fs_line(
        done
    )
    assert "the secret" not in done.stdout + done.stderr
    # git reads hooks through the name .git, wherever the link points (a work tree kept apart from its git directory).
    elsewhere = box.parent / "elsewhere"
    elsewhere.mkdir()
    (home / "repo").mkdir()
    (home / "repo" / ".git").symlink_to(elsewhere)
    named = call(
        box, "fs.write", {"path": "hooks/pre-commit", "content": "id\n"}, HERMESOS_FS_ROOT=str(home / "repo/.git")
    )
    assert f"which is protected: '{home / 'repo/.git'}' is version-control internals" in broken_fs_line(named)
    assert not (elsewhere / "hooks").exists()
    assert call(box, "fs.write", {"path": "x", "content": ""}, HERMESOS_FS_ROOT=str(elsewhere)).returncode == 0
    # A bare repository (its hooks run at the next push to it) is a git directory by what it holds, under any name.
    bare = home / "srv" / "site.git"
    for name in ("objects", "refs"):
        (bare / name).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    pushed = call(box, "fs.write", {"path": "hooks/post-receive", "content": "id\n"}, HERMESOS_FS_ROOT=str(bare))
    assert f"which is protected: '{bare}' is a git directory (it holds HEAD, objects and refs)" in broken_fs_line(
        pushed
    )
    assert "by adding .git to the setting HERMESOS_FS_UNPROTECT" in broken_fs_line(pushed)
    assert not (bare / "hooks").exists()


# -- the root: inside no Python environment or installation, whoever's -----------------------------------


def make_environment(folder: Path, marker: str) -> None:
    """A Python environment at *folder*: a virtual environment (pyvenv.cfg), a conda one, or a bare prefix."""
    (folder / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    if marker == "pyvenv.cfg":
        (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    elif marker == "conda-meta":
        (folder / "conda-meta").mkdir()


@pytest.mark.parametrize(
    ("environment", "marker", "root", "path", "says"),
    [
        # The attack as made: another environment's site-packages, where _distutils_hack runs at every start.
        ("other", "pyvenv.cfg", "other/lib/python3.11/site-packages", "_distutils_hack/__init__.py",
         "'{home}/other' is a virtual environment (it holds pyvenv.cfg)"),
        ("other", "pyvenv.cfg", "other/bin", "activate", "'{home}/other' is a virtual environment"),
        ("conda/envs/x", "conda-meta", "conda/envs/x/etc", "conda/activate.d/x.sh",
         "'{home}/conda/envs/x' is a conda environment (it holds conda-meta)"),
        # No marker: the user's site-packages of another Python version, a distribution's dist-packages.
        (".local", "", ".local/lib/python3.99/site-packages", "evil.py",
         "'{home}/.local/lib/python3.99' is a folder Python imports from"),
        ("usr", "", "usr/share/dist-packages", "evil.py",
         "'{home}/usr/share/dist-packages' is a folder Python imports"),
    ],
)  # fmt: skip
def test_a_root_inside_any_python_environment_stops_the_load(
    box: Path, environment: str, marker: str, root: str, path: str, says: str
) -> None:
    home = box.parent / "home"
    make_environment(home / environment, marker)
    folder = home / root
    folder.mkdir(parents=True, exist_ok=True)
    beside = home / "workspace"  # the control: a folder of its own takes the same write
    beside.mkdir()
    arguments = {"path": path, "content": "import os\n"}
    assert call(box, "fs.write", arguments, HERMESOS_FS_ROOT=str(beside)).returncode == 0
    done = call(box, "fs.write", arguments, HERMESOS_FS_ROOT=str(folder))
    line = broken_fs_line(done)
    assert f"setting HERMESOS_FS_ROOT is '{folder}', which is protected: {says.format(home=home)}" in line
    assert not (folder / path).exists()


def test_the_core_refuses_a_root_inside_any_python_environment_whatever_the_plugin_allows(box: Path) -> None:
    """hermesos-fs's names can be lifted by its operator; the core's floor, for every plugin's roots, cannot."""
    home = box.parent / "home"
    make_environment(home / "other", "pyvenv.cfg")
    root = home / "other" / "lib" / "python3.11" / "site-packages"
    lifted = {"HERMESOS_FS_UNPROTECT": "pyvenv.cfg, lib/python[0-9]*, site-packages"}
    done = call(box, "fs.write", {"path": "evil.py", "content": ""}, HERMESOS_FS_ROOT=str(root), **lifted)
    line = broken_fs_line(done)
    assert (
        f'setting HERMESOS_FS_ROOT names "{root}" as a directory its tools may write, but it lies inside '
        f'"{home / "other"}", a virtual environment (it holds pyvenv.cfg), whose .pth files and modules run at the '
        "next Python start"
    ) in line
    assert "set HERMESOS_FS_ROOT to a folder of its own outside every Python environment and installation" in line
    assert not (root / "evil.py").exists()
    # The control: lifted, a project's own environment inside a root of its own is written (the operator's choice).
    make_environment(box / "env", "pyvenv.cfg")
    wrote = call(box, "fs.write", {"path": "env/lib/python3.11/site-packages/x.py", "content": ""},
                 HERMESOS_FS_ROOT=str(box), **lifted)  # fmt: skip
    assert wrote.returncode == 0, wrote.stderr


def test_a_protected_name_that_begins_in_the_root_s_own_path_is_refused_inside_it(box: Path) -> None:
    """A root of ~/.config or ~/.local/lib is no protected name itself, but 'fish' or 'python3.99' under it are."""
    home = box.parent / "elsewhere"  # not the home directory, whose .config/hermesos the core guards
    for root, path in [(".config", "fish/conf.d/x.fish"), (".local/lib", "python3.99/site-packages/x.py")]:
        folder = home / root
        folder.mkdir(parents=True)
        assert call(box, "fs.write", {"path": "notes.txt", "content": ""}, HERMESOS_FS_ROOT=str(folder)).returncode == 0
        detail = refusal(call(box, "fs.write", {"path": path, "content": "id\n"}, HERMESOS_FS_ROOT=str(folder)))
        first, second = root.rsplit("/", 1)[-1], path.split("/", 1)[0]
        assert f"which is protected: '{first}/{second}' (the root ends in '{first}') " in detail
        assert not (folder / path).exists()


# -- protected names in every form a program would read them --------------------------------------------

PROTECTED_FORMS = [
    "sitecustomize/__init__.py",  # a package is as much a module as sitecustomize.py
    "usercustomize/__init__.py",
    "lib/sitecustomize.cpython-311-x86_64-linux-gnu.so",
    "SiteCustomize.PY",
    ".bash_aliases",
    ".bashrc.d/10-x.sh",
    ".bash_completion.d/x",
    ".zshenv",
    ".profile.d/x.sh",
    ".config/fish/conf.d/x.fish",
    "dotfiles/fish/conf.d/x.fish",
    ".gitconfig",
    ".config/git/config",
    ".ipython/profile_default/startup/00.py",
    "ipython/profile_work/startup/00.py",
    "ipython/profile_work/ipython_config.py",
    "jupyter_server_config.py",
    ".npmrc",
    ".yarnrc.yml",
    "pip.conf",
    ".config/pip/pip.conf",
    ".pypirc",
    ".local/bin/ls",
    ".config/systemd/user/x.service",
    ".config/autostart/x.desktop",
    ".vimrc",
    ".emacs.d/init.el",
    ".config/nvim/init.lua",
    ".docker/config.json",
    ".kube/config",
    ".g\u200cit/hooks/pre-commit",  # an ignorable code point, which HFS+ drops when it compares names
    ".git./hooks/pre-commit",  # a trailing dot, which Windows file systems drop
    ".\u212aube/config",  # KELVIN SIGN: .Kube once normalised, .kube ignoring case
    "\uff0egit/config",  # FULLWIDTH FULL STOP: .git by compatibility
]


@pytest.mark.parametrize("path", PROTECTED_FORMS)
def test_every_form_of_a_protected_name_is_refused(box: Path, path: str) -> None:
    detail = refusal(write(box, path, "id\n", HERMESOS_FS_ROOT=str(box)))
    assert f"names {path!r}, which is protected: " in detail
    assert "hermesos-fs does not write, create or delete anything there, whatever the arguments" in detail
    assert not (box / path).exists()
    assert not (box / path.split("/", maxsplit=1)[0]).exists()


def test_names_near_the_protected_ones_are_written(box: Path) -> None:
    """The control: the list is of what runs or holds credentials, not of everything that looks like it.

    The project's own files are written, though a tool runs them when someone
    builds or tests it: that is what the tools are for (docs/security.md).
    """
    for path in [
        "src/customize.py",
        "docs/bash.md",
        "config/git.txt",
        "npmrc.txt",
        "profile/startup/x.py",
        "lib/python/x.py",
        "local/bin/x",
        "Makefile",
        "package.json",
        "conftest.py",
        ".github/workflows/ci.yml",
        ".vscode/settings.json",
        ".pre-commit-config.yaml",
    ]:
        done = write(box, path, "x\n", HERMESOS_FS_ROOT=str(box))
        assert done.returncode == 0, (path, done.stderr)
        assert (box / path).read_text() == "x\n"


def test_a_git_directory_or_conda_environment_inside_the_root_is_found_by_what_it_holds(box: Path) -> None:
    bare = box / "mirror.git"
    for name in ("objects", "refs"):
        (bare / name).mkdir(parents=True)
    (bare / "HEAD").write_text("ref: refs/heads/main\n")
    detail = refusal(write(box, "mirror.git/hooks/post-receive", "id\n", HERMESOS_FS_ROOT=str(box)))
    assert "which is protected: 'mirror.git' is a git directory (it holds HEAD, objects and refs)" in detail
    (box / "conda" / "etc").mkdir(parents=True)
    (box / "conda" / "conda-meta").mkdir()
    detail = refusal(write(box, "conda/etc/conda/activate.d/x.sh", "id\n", HERMESOS_FS_ROOT=str(box)))
    assert "which is protected: 'conda' is a conda environment (it holds conda-meta)" in detail
    assert not (bare / "hooks").exists()
    assert not (box / "conda" / "etc" / "conda").exists()
    # The control: a folder with only some of what a git directory holds is an ordinary folder.
    (box / "notes" / "refs").mkdir(parents=True)
    (box / "notes" / "HEAD").write_text("a heading\n")
    assert write(box, "notes/todo.txt", HERMESOS_FS_ROOT=str(box)).returncode == 0


@pytest.mark.parametrize(
    "path",
    [".git-credentials", ".pgpass", "keys/id_rsa", ".npmrc", ".pypirc", ".docker/config.json", ".kube/config",
     ".config/gh/hosts.yml"],
)  # fmt: skip
def test_reading_more_credentials_is_refused(box: Path, path: str) -> None:
    (box / path).parent.mkdir(parents=True, exist_ok=True)
    (box / path).write_text("the secret\n")
    (box / "notes.txt").write_text("a note\n")
    read = hermesos(box, "call", "fs.read", '{"path": "notes.txt"}', "--grant", "fs:read", HERMESOS_FS_ROOT=str(box))
    assert "a note" in read.stdout  # the control
    done = hermesos(box, "call", "fs.read", json.dumps({"path": path}), "--grant", "fs:read", "--json",
                    HERMESOS_FS_ROOT=str(box))  # fmt: skip
    assert "the secret" not in done.stdout + done.stderr
    assert "hermesos-fs does not read, list or describe anything there" in refusal(done)


# -- what the process could not change, it does not replace: across calls too ------------------------------

NOBODY = 65534


@pytest.fixture
def unprivileged() -> Iterator[tuple[Path, tuple[str, ...]]]:
    """A folder (with ``home`` and ``root`` in it) of an unprivileged user, and how to run as that user.

    As root, ``setpriv`` runs the command as ``nobody`` (root may write any
    file, so the permissions would not be tested); as anyone else, the
    command runs as that user. The folder is made outside ``tmp_path``,
    whose parents only root may enter.
    """
    folder = Path(tempfile.mkdtemp(prefix="hermesos-nobody-"))
    try:
        folder.chmod(0o755)
        (folder / "home").mkdir()
        (folder / "root").mkdir()
        prefix: tuple[str, ...] = ()
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("running as root, and setpriv (util-linux) is missing to run as an unprivileged user")
            prefix = (setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
            for path in (folder / "home", folder / "root"):
                os.chown(path, NOBODY, NOBODY)
        yield folder, prefix
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_user(
    prefix: tuple[str, ...], folder: Path, tool: str, arguments: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``hermesos call`` of *tool* as the unprivileged user, its root ``folder/root``."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_"))}
    environment.update({"HOME": str(folder / "home"), "HERMESOS_FS_ROOT": str(folder / "root")})
    argv = [*prefix, str(HERMES), "call", tool, json.dumps(arguments), "--grant", "fs:write", "--json"]
    return subprocess.run(argv, cwd=folder, env=environment, capture_output=True, text=True, check=False, timeout=60)


def owned_by_the_user(path: Path, prefix: tuple[str, ...]) -> None:
    if prefix:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)


def another_user(path: Path, prefix: tuple[str, ...]) -> None:
    if not prefix:
        pytest.skip("a file of another user needs root to make; the read-only case runs as this user")


@pytest.mark.parametrize("member", ["read-only file", "another user's file", "another user's empty directory",
                                    "another user's link"])  # fmt: skip
def test_delete_then_write_never_replaces_what_the_process_could_not_change(
    unprivileged: tuple[Path, tuple[str, ...]], member: str
) -> None:
    """fs.write refused a 0444 file; fs.delete removed it, and the next fs.write made a new one in its place."""
    folder, prefix = unprivileged
    root = folder / "root"
    # The control: a file of the user's own, writable, is deleted and written again.
    (root / "mine.txt").write_text("mine\n")
    owned_by_the_user(root / "mine.txt", prefix)
    assert as_user(prefix, folder, "fs.delete", {"path": "mine.txt"}).returncode == 0
    assert as_user(prefix, folder, "fs.write", {"path": "mine.txt", "content": "again\n"}).returncode == 0
    assert (root / "mine.txt").read_text() == "again\n"
    target = root / "locked"
    if member == "read-only file":
        target.write_text("keep\n")
        owned_by_the_user(target, prefix)
        target.chmod(0o444)
    elif member == "another user's file":
        another_user(target, prefix)
        target.write_text("keep\n")  # root's, 0644: the user may not write it, only remove it from its folder
    elif member == "another user's empty directory":
        another_user(target, prefix)
        target.mkdir(mode=0o755)
    else:
        another_user(target, prefix)
        target.symlink_to("/etc/hostname")
    before = os.lstat(target)
    if member.endswith("file"):
        assert "which is read-only for this tool" in refusal(
            as_user(prefix, folder, "fs.write", {"path": "locked", "content": "changed\n"})
        )
    detail = refusal(as_user(prefix, folder, "fs.delete", {"path": "locked"}))
    assert "fs.delete does not remove it" in detail
    after = os.lstat(target)
    assert (after.st_ino, after.st_uid, after.st_mode) == (before.st_ino, before.st_uid, before.st_mode)
    if member.endswith("file"):
        assert target.read_text() == "keep\n"


_DIRECT_URL = """
import sys
from hermes_core._plugins._guard import _editable_folder


class Installed:  # a distribution, as importlib.metadata's reads its files
    def __init__(self, text):
        self.text = text

    def read_text(self, name):
        return self.text if name == "direct_url.json" else None


wheel = Installed('{"archive_info": {}, "url": "file:///wheels/hermesos_fs-0.1.0-py3-none-any.whl"}')
print(_editable_folder(wheel), "json" in sys.modules)
escaped = Installed('{"\\\\u0064ir_info": {"editable": true}, "url": "file:///src/escaped"}')
print(_editable_folder(escaped), "json" in sys.modules)
"""


def test_the_source_of_a_wheel_install_is_told_without_importing_json() -> None:
    """A regular install's direct_url.json names archive_info, never dir_info: json's import is not needed for it."""
    done = subprocess.run([sys.executable, "-c", _DIRECT_URL], capture_output=True, text=True, check=True)
    # The control: dir_info written with an escape is read as JSON, and found editable.
    assert done.stdout.splitlines() == ["None False", "/src/escaped True"]
