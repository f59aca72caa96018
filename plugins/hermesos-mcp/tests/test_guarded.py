"""What decides what an MCP server runs is guarded: no tool may write it.

A model granted only ``fs:write``, with a workspace holding the script a
configured server runs, rewrote the script; the next call of the server's tool
ran the model's code. Every path an entry names that decides the code the
server runs is a guarded path now, and a workspace holding one is refused
when the plugins load, naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import parse_config

HERE = Path(__file__).resolve().parent
MATH_SERVER = HERE / "math_server.py"
NODE_SERVER = HERE / "node_server.js"
HERMESOS = [sys.executable, "-m", "hermes_core"]


def _decisive(entry: str, environ: dict[str, str] | None = None) -> dict[str, str]:
    config = parse_config(f"[servers.s]\n{entry}\n", "test")
    assert not config.problems, config.problems
    (server,) = config.servers
    return server.decisive_paths({} if environ is None else environ, "test")


def test_every_path_of_an_entry_that_decides_what_runs_is_named(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text("")
    settings = tmp_path / "app.toml"
    settings.write_text("")
    served = tmp_path / "data"
    served.mkdir()
    modules = tmp_path / "modules"
    modules.mkdir()
    program = tmp_path / "bin" / "serve-it"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    entry = (
        f'command = "serve-it"\n'
        f'args = ["server.py", "--config={settings}", "{served}", "-m", "pkg"]\n'
        f'cwd = "{tmp_path}"\n'
        f'env = {{ PATH = "{program.parent}", PYTHONPATH = "{modules}", DATA = "{served}", KEY = "{settings}" }}\n'
    )
    found = _decisive(entry)
    assert {str(program), str(script), str(settings), str(tmp_path), str(program.parent), str(modules)} <= set(found)
    assert found[str(program)] == 'the program [servers.s] in "test" runs'
    assert found[str(script)] == 'the script [servers.s] in "test" runs (args[0])'
    # The working directory holds the script, so it is named as its folder first (a root may not lie inside either).
    assert found[str(tmp_path)].startswith('the folder of the script [servers.s] in "test" runs (args[0]; ')
    assert _decisive(f'command = "x"\ncwd = "{served}"')[str(served)] == (
        'the working directory of [servers.s] in "test" (cwd)'
    )
    assert found[str(modules)] == 'a folder of the search path PYTHONPATH of [servers.s] in "test"'
    # A folder an argument names is most often what the server serves: left out, as is a variable's folder
    # that is not a search path. A server at a URL runs nothing here.
    assert str(served) not in found
    assert _decisive('url = "http://127.0.0.1:1/mcp"') == {}


def test_the_variables_a_server_inherits_are_those_the_sdk_passes_on() -> None:
    from hermes_mcp._config import INHERITED_ENV
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    assert list(INHERITED_ENV) == list(DEFAULT_INHERITED_ENV_VARS)
    (server,) = parse_config('[servers.s]\ncommand = "x"\npass_env = ["TOKEN"]\nenv = { PATH = "/opt/bin" }').servers
    environ = {"PATH": "/usr/bin", "HOME": "/home/me", "SHELL": "() { :; }", "TOKEN": "t", "OTHER": "o"}
    assert server.environment(environ) == {"PATH": "/opt/bin", "HOME": "/home/me", "TOKEN": "t"}


# -- the class: a path is guarded where it would be created, as the program finds it --------------------------


def _member(tmp_path: Path, member: str) -> tuple[str, dict[str, str], Path, str]:
    """An entry, the environment hermesos has, a path that decides the server's code, and what it is said to be."""
    w = tmp_path / "w"
    python = sys.executable
    server = MATH_SERVER
    members: dict[str, tuple[str, dict[str, str], Path, str]] = {
        "NODE_OPTIONS --require VALUE": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\nenv = {{ NODE_OPTIONS = "--require {w}/hook.js" }}',
            {},
            w / "hook.js",
            'a file NODE_OPTIONS of [servers.s] in "test" has the program load (--require)',
        ),
        "NODE_OPTIONS -r VALUE, quoted": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\n'
            f"env = {{ NODE_OPTIONS = \"--max-old-space-size=99 -r '{w}/a b.js'\" }}",
            {},
            w / "a b.js",
            "(-r)",
        ),
        "NODE_OPTIONS --import=VALUE, relative": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\ncwd = "{w}"\nenv = {{ NODE_OPTIONS = "--import=./x.mjs" }}',
            {},
            w / "x.mjs",
            "(--import)",
        ),
        "NODE_OPTIONS --env-file VALUE": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\nenv = {{ NODE_OPTIONS = "--env-file {w}/.env" }}',
            {},
            w / ".env",
            "(--env-file)",
        ),
        "node's own --loader argument": (
            f'command = "node"\nargs = ["--loader", "{w}/loader.mjs", "{NODE_SERVER}"]',
            {},
            w / "loader.mjs",
            'a file the program of [servers.s] in "test" loads (--loader, args[1])',
        ),
        "PYTHONPATH folder not made yet": (
            f'command = "{python}"\nargs = ["{server}"]\nenv = {{ PYTHONPATH = "/opt/x{os.pathsep}{w}/lib" }}',
            {},
            w / "lib",
            "a folder of the search path PYTHONPATH",
        ),
        "NODE_PATH folder not made yet": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\nenv = {{ NODE_PATH = "{w}/modules" }}',
            {},
            w / "modules",
            "a folder of the search path NODE_PATH",
        ),
        "PYTHONHOME": (f'command = "{python}"\nenv = {{ PYTHONHOME = "{w}/home" }}', {}, w / "home", "search path"),
        "PERL5LIB": (f'command = "perl"\nenv = {{ PERL5LIB = "{w}/perl" }}', {}, w / "perl", "search path"),
        "BASH_ENV file not made yet": (
            f'command = "bash"\nargs = ["/opt/run.sh"]\nenv = {{ BASH_ENV = "{w}/env.sh" }}',
            {},
            w / "env.sh",
            'the file BASH_ENV of [servers.s] in "test" names (run when the program starts)',
        ),
        "ENV": (f'command = "sh"\nenv = {{ ENV = "{w}/env.sh" }}', {}, w / "env.sh", "the file ENV of"),
        "PYTHONSTARTUP": (
            f'command = "{python}"\nenv = {{ PYTHONSTARTUP = "{w}/start.py" }}',
            {},
            w / "start.py",
            "the file PYTHONSTARTUP of",
        ),
        "PERL5OPT -I": (f'command = "perl"\nenv = {{ PERL5OPT = "-I{w}/lib -Mstrict" }}', {}, w / "lib", "PERL5OPT"),
        "RUBYOPT -r": (f'command = "ruby"\nenv = {{ RUBYOPT = "-r{w}/x.rb" }}', {}, w / "x.rb", "RUBYOPT"),
        "JAVA_TOOL_OPTIONS -javaagent:": (
            f'command = "java"\nenv = {{ JAVA_TOOL_OPTIONS = "-javaagent:{w}/agent.jar" }}',
            {},
            w / "agent.jar",
            "JAVA_TOOL_OPTIONS",
        ),
        "LD_PRELOAD": (f'command = "x"\nenv = {{ LD_PRELOAD = "{w}/a.so /lib/b.so" }}', {}, w / "a.so", "LD_PRELOAD"),
        "any absolute path in a variable": (
            f'command = "x"\nenv = {{ HOOKS = "{w}/hooks.py" }}',
            {},
            w / "hooks.py",
            "the path HOOKS of",
        ),
        "pass_env, as hermesos sees it": (
            f'command = "node"\nargs = ["{NODE_SERVER}"]\npass_env = ["NODE_OPTIONS"]',
            {"NODE_OPTIONS": f"--require {w}/hook.js"},
            w / "hook.js",
            "NODE_OPTIONS (from the environment of hermesos) of [servers.s]",
        ),
        "PATH inherited from hermesos": (
            'command = "x"',
            {"PATH": f"/usr/bin{os.pathsep}{w}/bin"},
            w / "bin",
            "a folder of the search path PATH (from the environment of hermesos)",
        ),
        "an argument naming a script not made yet": (
            f'command = "{python}"\nargs = ["{w}/server.py"]',
            {},
            w / "server.py",
            'the script [servers.s] in "test" runs (args[0])',
        ),
        "an argument after --option= naming a file not made yet": (
            f'command = "{python}"\nargs = ["{server}", "--plugins={w}/plugins.py"]',
            {},
            w / "plugins.py",
            "a path args[1] of",
        ),
        "an argument starting with ~": (
            f'command = "{python}"\nargs = ["{server}", "~/w/conf.toml"]',
            {"HOME": str(tmp_path)},
            w / "conf.toml",
            "a path args[1] of",
        ),
        "a relative argument, from the working directory": (
            f'command = "{python}"\nargs = ["{server}", "extra.py"]\ncwd = "{tmp_path}"',
            {},
            tmp_path / "extra.py",
            "a path args[1] of",
        ),
        "a path in a command line given whole": (
            f'command = "sh"\nargs = ["-c", "exec {python} {w}/server.py"]',
            {},
            w / "server.py",
            "a path in args[1] of",
        ),
        "the folder an interpreter runs": (
            f'command = "{python}"\nargs = ["{tmp_path}"]',
            {},
            tmp_path,
            'the folder [servers.s] in "test" runs (args[0]; Python runs its __main__.py, Node its index.js)',
        ),
        "the folder of the script": (
            f'command = "{python}"\nargs = ["{server}"]',
            {},
            server.parent,
            'the folder of the script [servers.s] in "test" runs (args[0]; Python puts it first on sys.path',
        ),
        "the folder of the program": (
            f'command = "{w}/bin/serve"',
            {},
            w / "bin",
            'the folder of the program [servers.s] in "test" runs (a Python program puts it first on sys.path)',
        ),
        "node_modules above the script": (
            f'command = "node"\nargs = ["{w}/app/srv/index.js"]',
            {},
            w / "app" / "node_modules",
            "a folder where Node and npx look for the modules of [servers.s]",
        ),
        "python -m from the working directory of hermesos": (
            f'command = "{python}"\nargs = ["-m", "server"]',
            {},
            Path.cwd(),
            'the working directory [servers.s] in "test" gets, that of hermesos (python -m and -c put it first',
        ),
        "node_modules of the working directory of hermesos": (
            'command = "npx"\nargs = ["some-server"]',
            {},
            Path.cwd() / "node_modules",
            "a folder where Node and npx look for the modules of [servers.s]",
        ),
    }
    return members[member]


MEMBERS = [
    "NODE_OPTIONS --require VALUE",
    "NODE_OPTIONS -r VALUE, quoted",
    "NODE_OPTIONS --import=VALUE, relative",
    "NODE_OPTIONS --env-file VALUE",
    "node's own --loader argument",
    "PYTHONPATH folder not made yet",
    "NODE_PATH folder not made yet",
    "PYTHONHOME",
    "PERL5LIB",
    "BASH_ENV file not made yet",
    "ENV",
    "PYTHONSTARTUP",
    "PERL5OPT -I",
    "RUBYOPT -r",
    "JAVA_TOOL_OPTIONS -javaagent:",
    "LD_PRELOAD",
    "any absolute path in a variable",
    "pass_env, as hermesos sees it",
    "PATH inherited from hermesos",
    "an argument naming a script not made yet",
    "an argument after --option= naming a file not made yet",
    "an argument starting with ~",
    "a relative argument, from the working directory",
    "a path in a command line given whole",
    "the folder an interpreter runs",
    "the folder of the script",
    "the folder of the program",
    "node_modules above the script",
    "python -m from the working directory of hermesos",
    "node_modules of the working directory of hermesos",
]


@pytest.mark.parametrize("member", MEMBERS)
def test_a_path_that_decides_a_servers_code_is_guarded_whether_it_exists_or_not(tmp_path: Path, member: str) -> None:
    entry, environ, path, said = _member(tmp_path, member)
    found = _decisive(entry, environ)
    assert str(path) in found, sorted(found)
    assert said in found[str(path)]
    assert not (tmp_path / "w").exists()  # none of it was made: guarded where it would be created


def test_a_folder_an_argument_or_variable_names_is_data_unless_the_program_runs_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    entry = f'command = "mcp-server-filesystem"\nargs = ["{data}", "--root={data}"]\nenv = {{ DATA = "{data}" }}'
    assert str(data) not in _decisive(entry, {})
    # A search path, or a folder an interpreter runs (its __main__.py), is not data.
    assert str(data) in _decisive(f'command = "x"\nenv = {{ PYTHONPATH = "{data}" }}', {})
    assert str(data) in _decisive(f'command = "{sys.executable}"\nargs = ["{data}"]', {})
    # Words that are not paths are not guarded: a time zone, a URL, a package name an option takes.
    found = _decisive('command = "x"\nargs = ["--local-timezone", "UTC", "https://example.com/a/b", "stdio"]', {})
    assert not [path for path in found if path.endswith(("UTC", "stdio", "/b"))]


@pytest.mark.parametrize(
    "member",
    ["the program", "a file an argument names", "a file after --option=", "the working directory", "PYTHONPATH"],
)
def test_a_workspace_holding_what_a_server_runs_is_refused_and_the_model_cannot_rewrite_it(
    tmp_path: Path, member: str
) -> None:
    """The attack as it was made: fs.write rewrites the server's code, and the next call of its tool runs it."""
    workspace, config = tmp_path / "workspace", tmp_path / "config"
    (config / "hermesos").mkdir(parents=True)
    workspace.mkdir()
    server = workspace / "server.py"
    server.write_text(MATH_SERVER.read_text())
    python = sys.executable
    entries = {
        "the program": f'command = "{workspace / "run.sh"}"\nargs = []',
        "a file an argument names": f'command = "{python}"\nargs = ["{server}"]',
        "a file after --option=": f'command = "{python}"\nargs = ["{MATH_SERVER}", "--plugin={server}"]',
        "the working directory": f'command = "{python}"\nargs = ["{MATH_SERVER}"]\ncwd = "{workspace}"',
        "PYTHONPATH": f'command = "{python}"\nargs = ["{MATH_SERVER}"]\nenv = {{ PYTHONPATH = "{workspace}" }}',
    }
    (workspace / "run.sh").write_text(f"#!/bin/sh\nexec {python} {server}\n")
    (workspace / "run.sh").chmod(0o755)
    (config / "hermesos" / "mcp.toml").write_text(f"cache_ttl = 0\n[servers.calc]\n{entries[member]}\n")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
    environ.update(HERMESOS_FS_ROOT=str(workspace), XDG_CONFIG_HOME=str(config), HOME=str(tmp_path))
    hostile = json.dumps({"path": "server.py", "content": "open('pwned', 'w').write('code ran')\n"})
    write = subprocess.run(
        [*HERMESOS, "call", "fs.write", hostile, "--grant", "fs:write"],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert write.returncode == 1, write.stderr
    assert '(entry point "fs" = hermes_fs) not loaded: setting HERMESOS_FS_ROOT names' in write.stderr
    assert f'names "{workspace}" as a directory its tools may write, but it ' in write.stderr
    assert "which plugin hermesos-mcp guards (hermes_guarded_paths)" in write.stderr
    assert server.read_text() == MATH_SERVER.read_text()
    assert not (tmp_path / "pwned").exists()


def test_an_entry_with_a_nul_anywhere_names_no_path_with_one_and_the_load_goes_on(tmp_path: Path) -> None:
    entry = (
        'command = "serve\\u0000it"\nargs = ["/a\\u0000b.py", "--x=/c\\u0000d"]\ncwd = "/e\\u0000f"\n'
        'env = { PYTHONPATH = "/g\\u0000h", NODE_OPTIONS = "--require /i\\u0000j.js", K = "/l\\u0000m" }'
    )
    found = _decisive(entry, {"PATH": "/usr/bin\x00x"})
    assert found
    assert not [path for path in found if "\x00" in path]
    from hermes_core._plugins._guard import GuardedPath, check_guarded_paths

    check_guarded_paths([GuardedPath(path, what) for path, what in found.items()], [("w", "f", str(tmp_path))])


# -- the attacks, as they were made: one fs.write, then the server's next start ---------------------------------

HERMES_CMD = Path(sys.executable).with_name("hermesos")
RUN_MATH = "import runpy\nrunpy.run_path({math!r}, run_name='__main__')\n"


def _hermesos(tmp_path: Path, root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real ``hermesos`` command, with hermesos-fs rooted at *root* and tmp_path/mcp.toml as the MCP configuration.

    It runs from a folder of its own, with a home directory and a listing cache of their own.
    """
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME", "NO_COLOR"))}
    environ.update(
        HERMESOS_FS_ROOT=str(root),
        HERMESOS_MCP_CONFIG=str(tmp_path / "mcp.toml"),
        HERMESOS_MCP_CACHE_DIR=str(tmp_path / "cache"),
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
    )
    return subprocess.run(
        [str(HERMES_CMD), *argv],
        capture_output=True,
        text=True,
        env=environ,
        cwd=tmp_path / "run",
        timeout=120,
        check=False,
    )


@dataclass(frozen=True)
class Attack:
    """One member: the server's entry, its tool, the file the model writes under the root, and the refusal."""

    entry: str
    call: tuple[str, str, str]  # the server's tool, its arguments, the permission it needs
    answer: str  # what the tool answers when the server runs
    root: Path  # the root the model writes under
    path: str  # what it writes there (relative to the root)...
    content: str  # ...with this content, which writes the marker when it runs
    said: str  # what the refusal says
    benign: str | None = None  # what the operator has there when the server cannot start without it


def _attacks(tmp_path: Path, member: str) -> Attack:
    w, srv, marker = tmp_path / "w", tmp_path / "srv", tmp_path / "marker"
    config = tmp_path / "mcp.toml"
    python, math = sys.executable, str(MATH_SERVER)
    writes_marker = f"open({str(marker)!r}, 'w').write('code ran')\n"
    double = ("calc.double", '{"n": 2}', "mcp:calc")
    guards = "which plugin hermesos-mcp guards (hermes_guarded_paths)"
    if member == "NODE_OPTIONS --require of a file not made yet":
        return Attack(
            f'[servers.pong]\ncommand = "node"\nargs = ["{NODE_SERVER}"]\n'
            f'env = {{ NODE_OPTIONS = "--require {w}/hook.js" }}\n',
            ("pong.ping", "{}", "mcp:pong"),
            "pong",
            w,
            "hook.js",
            f"require('fs').writeFileSync({json.dumps(str(marker))}, 'code ran');\n",
            f'contains "{w}/hook.js", a file NODE_OPTIONS of [servers.pong] in "{config}" has the program load '
            f"(--require), {guards}",
            benign="globalThis.hooked = true;\n",
        )
    if member == "PYTHONPATH folder missing at load":
        return Attack(
            f'[servers.calc]\ncommand = "{python}"\nargs = ["{math}"]\nenv = {{ PYTHONPATH = "{w}/lib" }}\n',
            double,
            "4",
            w,
            "lib/json/__init__.py",
            writes_marker,
            f'contains "{w}/lib", a folder of the search path PYTHONPATH of [servers.calc] in "{config}", {guards}',
        )
    if member == "an argument naming a script not made yet":
        return Attack(
            f'[servers.calc]\ncommand = "{python}"\nargs = ["{w}/server.py"]\n',
            double,
            "4",
            w,
            "server.py",
            writes_marker,
            f'contains "{w}/server.py", the script [servers.calc] in "{config}" runs (args[0]), {guards}',
            benign=RUN_MATH.format(math=math),
        )
    if member == "BASH_ENV naming a file not made yet":
        (srv / "run.sh").write_text(f'#!/bin/sh\nexec "{python}" "{math}"\n')
        return Attack(
            f'[servers.calc]\ncommand = "bash"\nargs = ["{srv}/run.sh"]\nenv = {{ BASH_ENV = "{w}/env.sh" }}\n',
            double,
            "4",
            w,
            "env.sh",
            f"echo ran > '{marker}'\n",
            f'contains "{w}/env.sh", the file BASH_ENV of [servers.calc] in "{config}" names (run when the program '
            f"starts), {guards}",
        )
    assert member == "a server script importing a module from a root inside its folder"
    (srv / "plugins").mkdir()
    (srv / "server.py").write_text(
        "try:\n    import plugins.extra  # extensions the operator may drop beside the server\n"
        "except ImportError:\n    pass\n" + RUN_MATH.format(math=math)
    )
    return Attack(
        f'[servers.calc]\ncommand = "{python}"\nargs = ["{srv}/server.py"]\n',
        double,
        "4",
        srv / "plugins",
        "extra.py",
        writes_marker,
        f'lies inside "{srv}", the folder of the script [servers.calc] in "{config}" runs (args[0]; Python puts '
        f"it first on sys.path, Node looks for node_modules there), {guards}",
    )


@pytest.mark.parametrize(
    "member",
    [
        "NODE_OPTIONS --require of a file not made yet",
        "PYTHONPATH folder missing at load",
        "an argument naming a script not made yet",
        "BASH_ENV naming a file not made yet",
        "a server script importing a module from a root inside its folder",
    ],
)
def test_one_fs_write_no_longer_runs_code_in_a_mounted_server(tmp_path: Path, member: str) -> None:
    """Each attack as it was made: fs.write under the root, then the next load starts the server and runs it."""
    if member.startswith("NODE_OPTIONS") and shutil.which("node") is None:
        pytest.skip("node is needed to run this server")
    for name in ("w", "srv", "run", "home", "elsewhere"):
        (tmp_path / name).mkdir()
    attack = _attacks(tmp_path, member)
    (tmp_path / "mcp.toml").write_text(f"cache_ttl = 0\n{attack.entry}")
    elsewhere = tmp_path / "elsewhere"
    written = attack.root / attack.path
    tool, arguments, permission = attack.call
    # The control: with the root elsewhere, the server starts and its tool answers, and fs.write writes.
    if attack.benign is not None:
        written.write_text(attack.benign)
    answered = _hermesos(tmp_path, elsewhere, "call", tool, arguments, "--grant", permission)
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout) == attack.answer
    hostile = json.dumps({"path": attack.path, "content": attack.content})
    wrote = _hermesos(tmp_path, elsewhere, "call", "fs.write", hostile, "--grant", "fs:write")
    assert wrote.returncode == 0, wrote.stderr
    assert (elsewhere / attack.path).read_text() == attack.content
    if attack.benign is not None:
        written.unlink()
    # The attack: the root holds what decides the server's code, where it would be created; refused, naming it.
    refused = _hermesos(tmp_path, attack.root, "call", "fs.write", hostile, "--grant", "fs:write")
    assert refused.returncode == 1, refused.stderr
    assert '(entry point "fs" = hermes_fs) not loaded: setting HERMESOS_FS_ROOT names' in refused.stderr
    assert (
        f'setting HERMESOS_FS_ROOT names "{attack.root}" as a directory its tools may write, but it '
    ) in refused.stderr
    assert attack.said in refused.stderr
    assert not written.exists()
    # The next loads start nothing that could run it: the server is not started while the root meets it.
    for argv in (("tools", "list"), ("call", tool, arguments, "--grant", permission)):
        again = _hermesos(tmp_path, attack.root, *argv)
        assert again.returncode == 1, again.stderr
        assert '(entry point "mcp" = hermes_mcp) not loaded: hermes_guarded_paths names' in again.stderr
        assert f'which "{attack.root}" meets, a directory the tools of plugin hermesos-fs' in again.stderr
    assert not (tmp_path / "marker").exists()


def test_a_refused_load_never_starts_the_server_not_even_to_list_its_tools(tmp_path: Path) -> None:
    """The refusal came after the server had started to list its tools: a script already in the root ran."""
    for name in ("w", "run", "home", "elsewhere"):
        (tmp_path / name).mkdir()
    marker = tmp_path / "marker"
    script = tmp_path / "w" / "server.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('started')\n" + RUN_MATH.format(math=str(MATH_SERVER)))
    (tmp_path / "mcp.toml").write_text(
        f'cache_ttl = 0\n[servers.calc]\ncommand = "{sys.executable}"\nargs = ["{script}"]\n'
    )
    # The control: with the root elsewhere the server starts (writing the marker) and its tool answers.
    answered = _hermesos(tmp_path, tmp_path / "elsewhere", "call", "calc.double", '{"n": 21}', "--grant", "mcp:calc")
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout) == "42"
    assert marker.read_text() == "started"
    marker.unlink()
    # With the root holding its script, no command starts it: not to list its tools, not to report on it.
    for argv in (("tools", "list"), ("check",), ("call", "calc.double", '{"n": 21}', "--grant", "mcp:calc")):
        refused = _hermesos(tmp_path, tmp_path / "w", *argv)
        assert not marker.exists(), argv
        assert refused.returncode == 1, refused.stderr
        assert f'contains "{script}", the script [servers.calc] in ' in refused.stderr + refused.stdout


# -- what the plugin reads for a server is bounded, as what decides it is guarded -------------------


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (os.mkfifo, "is a FIFO (named pipe), not a regular file"),
        (lambda path: path.write_text("x" * 5000), "is larger than 4096 bytes"),
        (lambda path: path.write_bytes(b"to\x00ken"), "that holds characters a bearer token cannot have"),
    ],
)
def test_a_token_file_is_read_bounded_never_waited_on(tmp_path: Path, make: Any, said: str) -> None:
    """A FIFO hung the load, /dev/zero filled the memory: the token file is read as any configuration file."""
    from hermes_mcp._session import ServerFailure, _token

    token = tmp_path / "token"
    make(token)
    (server,) = parse_config(f'[servers.web]\nurl = "http://127.0.0.1:1/mcp"\ntoken_file = "{token}"\n').servers
    with pytest.raises(ServerFailure) as caught:
        _token(server)
    assert said in str(caught.value)
    (device,) = parse_config('[servers.web]\nurl = "http://127.0.0.1:1/mcp"\ntoken_file = "/dev/zero"\n').servers
    with pytest.raises(ServerFailure, match="is a character device, not a regular file"):
        _token(device)
