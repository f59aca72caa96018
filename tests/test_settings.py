from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core import InvalidDefinitionError, load_runtime, setting
from hermes_core import schema as s
from hermes_core._runtime._permissions import env_grants
from hermes_core.config import _settings as settings
from hermes_core.config import read_config_file, user_config_dir, user_config_file, user_config_path

VAR = "HERMESOS_DEMO_VALUE"


def read(text: str | None, schema: s.Schema | None = None, **kwargs: Any) -> Any:
    """The setting VAR with *text* as its value (None: unset)."""
    return setting(VAR, schema, environ={} if text is None else {VAR: text}, **kwargs)


def refused(text: str | None, schema: s.Schema | None = None) -> InvalidDefinitionError:
    with pytest.raises(InvalidDefinitionError) as caught:
        read(text, schema)
    assert (caught.value.declaration, caught.value.field) == (f"setting {VAR}", None)
    return caught.value


# -- values --------------------------------------------------------------------------------------


def test_a_string_is_the_text_itself_without_surrounding_whitespace() -> None:
    assert read("  /srv/work space \n") == "/srv/work space"
    assert read("1048576") == "1048576"  # the default schema takes text: it is not read as JSON
    assert read('["a"]', s.string()) == '["a"]'


def test_an_integer_is_read_as_json() -> None:
    assert read("1048576", s.integer(minimum=1)) == 1048576
    assert read(" 16 ", s.integer(minimum=1)) == 16
    assert read("1e6", s.integer()) == 1000000  # JSON's rule: an integral number is an integer


@pytest.mark.parametrize(("text", "value"), [("true", True), ("false", False)])
def test_a_boolean_is_read_as_json(text: str, value: bool) -> None:
    assert read(text, s.boolean()) is value


def test_a_list_is_read_as_json() -> None:
    assert read('["py", "md"]', s.array(s.string())) == ["py", "md"]


def test_a_union_with_text_takes_the_text_or_else_the_json() -> None:
    schema = s.union(s.enum(["auto"]), s.integer(minimum=1))
    assert read("auto", schema) == "auto"
    assert read("4", schema) == 4


def test_the_environment_is_read_when_none_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "from the environment")
    assert setting(VAR) == "from the environment"


# -- defaults ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_unset_or_blank_gives_the_default_as_it_is(text: str | None) -> None:
    assert read(text, s.integer(), default=1024) == 1024
    assert read(text, s.integer(), default=None) is None
    assert read(text, s.integer(), default="not checked") == "not checked"


def test_a_callable_default_is_called_only_when_needed(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.chdir(tmp_path)
    assert read(None, default=os.getcwd) == str(tmp_path)
    calls: list[int] = []
    assert read("set", default=lambda: calls.append(1)) == "set"
    assert calls == []


def test_unset_without_a_default_says_what_to_set_it_to() -> None:
    assert str(refused(None)) == "setting HERMESOS_DEMO_VALUE is not set; set it to a string."
    schema = s.string(min_length=1, description="the API key of your weather service")
    assert str(refused("  ", schema)) == (
        "setting HERMESOS_DEMO_VALUE is not set; set it to a string: the API key of your weather service."
    )


# -- invalid values ------------------------------------------------------------------------------

LIMIT = s.integer(minimum=1, description="the most bytes read at once, such as 1048576")


@pytest.mark.parametrize(
    ("text", "schema", "message"),
    [
        ("0", s.integer(minimum=1), "setting HERMESOS_DEMO_VALUE must be at least 1."),
        (
            "0",
            LIMIT,
            "setting HERMESOS_DEMO_VALUE must be at least 1; set it to an integer: the most bytes read at once, "
            "such as 1048576.",
        ),
        ("1.5", s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got number."),
        ("true", s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got boolean."),
        ('"16"', s.integer(), "setting HERMESOS_DEMO_VALUE must be an integer, got string."),
        (
            "1MiB",
            s.integer(),
            "setting HERMESOS_DEMO_VALUE must be an integer written in JSON, got text that is not JSON.",
        ),
        (
            "yes",
            s.boolean(),
            "setting HERMESOS_DEMO_VALUE must be a boolean written in JSON, got text that is not JSON.",
        ),
        (
            '["a", 2]',
            s.array(s.string()),
            'setting HERMESOS_DEMO_VALUE is invalid: "1" must be a string, got integer.',
        ),
        (
            "123",
            s.string(pattern="^sk-"),  # takes text: told about the pattern, not about the JSON number
            'setting HERMESOS_DEMO_VALUE must match the pattern "^sk-".',
        ),
        ("debug", s.enum(["info", "warning"]), 'setting HERMESOS_DEMO_VALUE must be one of "info", "warning".'),
    ],
)
def test_an_invalid_value_says_what_was_wrong(text: str, schema: s.Schema, message: str) -> None:
    error = refused(text, schema)
    assert str(error) == message
    assert error.__cause__ is None
    assert error.__suppress_context__


@pytest.mark.parametrize(
    "schema",
    [
        s.string(pattern="^sk-[a-z0-9]{20}$"),
        s.string(max_length=8),
        s.integer(),
        s.enum(["a", "b"]),
        s.array(s.integer()),
        s.object({"key": s.integer()}),
    ],
)
def test_a_secret_is_never_echoed(schema: s.Schema) -> None:
    secret = "sk-LEAKED0123456789secret"
    for text in (secret, f'["{secret}"]', f'{{"key": "{secret}"}}'):
        error = refused(text, schema)
        assert "LEAKED" not in str(error)
        assert "LEAKED" not in repr(error.to_dict())
        assert error.__cause__ is None
        assert error.__context__ is None or error.__suppress_context__


# -- programming mistakes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variable",
    [
        "DEMO_VALUE",
        "HERMESOS_",
        "hermesos_demo_value",
        "HERMESOS_demo",
        "HERMESOS_DEMO-VALUE",
        "HERMESOS__DEMO",
        "HERMESOS_DEMO_",
        "HERMESOS_1DEMO",
        " HERMESOS_DEMO",
    ],
)
def test_a_variable_not_named_hermesos_plugin_name_is_a_value_error(variable: str) -> None:
    with pytest.raises(ValueError, match=r"must look like HERMESOS_<PLUGIN>_<NAME>"):
        setting(variable, environ={variable: "x"})


@pytest.mark.parametrize("variable", ["HERMESOS_POLICY", "HERMESOS_FS_ROOT", "HERMESOS_FS_MAX_READ_BYTES"])
def test_well_named_variables(variable: str) -> None:
    assert setting(variable, environ={variable: "x"}) == "x"


def test_wrong_argument_types_are_type_errors() -> None:
    with pytest.raises(TypeError, match="variable must be a str"):
        setting(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema must be a schema"):
        setting(VAR, int, environ={VAR: "1"})  # type: ignore[arg-type]


# -- bounds: nothing an operator sets overflows later ------------------------------------------------------


def test_an_integer_past_what_the_machine_can_use_is_refused_whatever_the_schema() -> None:
    error = refused("9" * 20, s.integer(minimum=1, description="a size in bytes"))
    assert str(error) == (
        "setting HERMESOS_DEMO_VALUE is a number of 20 digits, larger than any this machine can use (at most "
        "9223372036854775807); set it to an integer: a size in bytes."
    )
    assert read(str(2**63 - 1), s.integer()) == 2**63 - 1
    assert "9" * 20 not in str(refused("-" + "9" * 20, s.integer()))


def test_a_schema_maximum_refuses_a_20_digit_size_naming_the_bound() -> None:
    error = refused("9" * 20, s.integer(minimum=1, maximum=1024**3, description="the most bytes one fs.read returns"))
    assert "must be at most 1073741824" in str(error)


# -- configuration files ------------------------------------------------------------------------------------


def test_the_configuration_directory_follows_xdg_and_ignores_a_relative_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "hermesos"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_config_dir({"XDG_CONFIG_HOME": "relative"}) == tmp_path / "home" / ".config" / "hermesos"
    assert user_config_file("mcp.toml", {}) == tmp_path / "home" / ".config" / "hermesos" / "mcp.toml"


def test_read_config_file_reads_a_regular_file_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "app.toml"
    path.write_bytes(b"x" * 10)
    assert read_config_file(path, 10, f'app file "{path}"') == b"x" * 10
    with pytest.raises(InvalidDefinitionError) as caught:
        read_config_file(path, 9, f'app file "{path}"', what="an app file", too_big="shorten it")
    assert str(caught.value) == f'app file "{path}" is larger than 9 bytes, the limit for an app file; shorten it.'
    with pytest.raises(InvalidDefinitionError, match=r"could not be read: it is a directory, not a regular file"):
        read_config_file(tmp_path, 9, "app file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_read_config_file_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "app.toml"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read_config_file(fifo, 100, "app file")
        except InvalidDefinitionError as error:
            outcome.append(error)

    reader = threading.Thread(target=attempt, daemon=True)
    reader.start()
    reader.join(10)  # a blocked open() would wait for a writer for ever
    if reader.is_alive():
        with open(fifo, "wb"):  # release it, then fail
            pass
        pytest.fail("read_config_file waited on a FIFO")
    assert "could not be read: it is a FIFO (named pipe), not a regular file" in str(outcome[0])


# -- every HERMESOS_* variable: read through setting(), listed in docs/settings.md ----------------------------

ROOT = Path(__file__).resolve().parents[1]
HERMES = Path(sys.executable).with_name("hermesos")
SETTINGS_PAGE = ROOT / "docs" / "settings.md"
# A whole variable name, as setting() takes it.
VARIABLE = re.compile(r"HERMESOS_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\Z")
COLUMNS = ("Variable", "Read by", "Takes", "Default", "Bounds", "What it sets")


def _sources() -> list[tuple[str, Path]]:
    """``(distribution, file)`` for each module of the core and of the bundled plugins (their tests left out)."""
    found = [("hermesos-core", path) for path in sorted((ROOT / "hermes_core").rglob("*.py"))]
    for project in sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists()):
        modules = sorted(project.glob("hermes_*.py")) + sorted(project.glob("hermes_*/*.py"))
        found += [(project.name, path) for path in modules]
    return found


def _named_in_code() -> tuple[dict[str, set[str]], set[str]]:
    """Every variable name the code writes whole, with the distributions writing it; and the prefixes of the
    names it computes (``f"HERMESOS_SERVE_{key.upper()}"``), which only running it tells."""
    named: dict[str, set[str]] = defaultdict(set)
    prefixes: set[str] = set()
    for distribution, path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.match(node.value):
                named[node.value].add(distribution)
            elif isinstance(node, ast.JoinedStr) and node.values:
                first = node.values[0]
                if isinstance(first, ast.Constant) and re.fullmatch(r"HERMESOS_[A-Z0-9_]*", str(first.value)):
                    prefixes.add(str(first.value))
    return named, prefixes


# Runs the core's and every bundled plugin's reading of its settings, with setting() watched: the names it was
# asked for and their defaults. Every plugin is loaded with what makes it read all of its settings: a
# workspace root for hermesos-fs, one MCP server (which exits at once) for hermesos-mcp.
_WATCH = """
import json, sys
import hermes_core.config._settings as settings

asked = {}
real = settings.setting

def watched(variable, schema=None, *, default=settings._NO_DEFAULT, environ=None):
    asked[variable] = None if default is settings._NO_DEFAULT else default
    return real(variable, schema, default=default, environ=environ)

settings.setting = watched
from hermes_core import load_runtime
from hermes_core.serve import http_settings

load_runtime().close()
http_settings()
print(json.dumps(asked))
"""


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every variable setting() is asked for when the core and the bundled plugins read their settings."""
    home = tmp_path_factory.mktemp("settings")
    (home / "config" / "hermesos").mkdir(parents=True)
    (home / "workspace").mkdir()
    servers = f'[servers.gone]\ncommand = {json.dumps(sys.executable)}\nargs = ["-c", "pass"]\n'
    (home / "config" / "hermesos" / "mcp.toml").write_text(servers)
    environment = {name: value for name, value in os.environ.items() if not name.startswith("HERMESOS_")}
    environment.update(
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        HERMESOS_FS_ROOT=str(home / "workspace"),
    )
    done = subprocess.run(
        [sys.executable, "-c", _WATCH], capture_output=True, text=True, env=environment, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    # The watch is real: the core's, each bundled plugin's and a computed name were all asked for.
    assert {"HERMESOS_GRANTS", "HERMESOS_FS_ROOT", "HERMESOS_POLICY", "HERMESOS_MCP_REFRESH"} <= set(found)
    return found


def _table() -> dict[str, dict[str, str]]:
    """The rows of the table of docs/settings.md, by variable."""
    rows: dict[str, dict[str, str]] = {}
    for line in SETTINGS_PAGE.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "Variable":
            assert tuple(cells) == COLUMNS, "the table's columns changed: update COLUMNS"
        elif cells[0].startswith("`HERMESOS_"):
            assert len(cells) == len(COLUMNS), f"docs/settings.md: the row of {cells[0]} has {len(cells)} cells"
            rows[cells[0].strip("`")] = dict(zip(COLUMNS, cells, strict=True))
    return rows


def test_every_variable_read_is_in_the_settings_table_and_every_row_is_read(asked: dict[str, Any]) -> None:
    named, prefixes = _named_in_code()
    read = set(named) | set(asked)
    table = set(_table())
    missing, unread = sorted(read - table), sorted(table - read)
    assert not missing, f"read by the code but not in the table of docs/settings.md: {missing}; add a row for each"
    assert not unread, f"docs/settings.md lists {unread}, which no code reads; remove their rows"
    # A computed name is found by running the code: each prefix the code builds names from was asked for.
    assert prefixes, "no computed name found: the search for them is broken"
    for prefix in prefixes:
        assert any(name.startswith(prefix) for name in asked), f"names made from {prefix!r} were never read"


def test_the_table_says_which_distribution_reads_each_variable() -> None:
    named, _ = _named_in_code()
    table = _table()
    for variable, distributions in named.items():
        reader = table[variable]["Read by"].split(":")[0]
        assert reader in distributions, f"docs/settings.md says {reader} reads {variable}; its code is {distributions}"
    assert len(named) >= 14  # the search is real: most names are written whole


def _shown(default: Any) -> str:
    """A default as the table writes it: ``none`` for no value, else the value in code style."""
    if default is None or default == "":
        return "none"
    if isinstance(default, float) and default.is_integer():
        default = int(default)
    return f"`{default}`"


def test_the_table_gives_each_default_the_code_has(asked: dict[str, Any]) -> None:
    table = _table()
    for variable, default in asked.items():
        if variable not in table:
            continue  # a missing row: the test above names it
        cell = table[variable]["Default"]
        if _shown(default) == "none":
            assert cell.startswith("none"), f"docs/settings.md: {variable} has no default in the code, not {cell!r}"
        else:
            assert cell.startswith(_shown(default)), f"docs/settings.md: {variable}'s default is {_shown(default)}"


# Names the pages use that are not hermesos settings: a plugin's settings in the guide to writing one, and the
# variable the serving examples name with --token-env (docs/settings.md, what is not a setting).
EXAMPLES = {"HERMESOS_WEATHER_API_KEY", "HERMESOS_WEATHER_TIMEOUT", "HERMESOS_WEATHER_UNITS", "HERMESOS_MCP_TOKEN"}


def test_the_pages_name_no_variable_the_table_does_not_list() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", *sorted((ROOT / "plugins").glob("*/README.md"))]
    table = set(_table())
    mentioned = {
        (name, page.relative_to(ROOT).as_posix())
        for page in pages
        for name in re.findall(r"HERMESOS_[A-Z][A-Z0-9_]*[A-Z0-9]", page.read_text(encoding="utf-8"))
    }
    unknown = sorted((name, page) for name, page in mentioned if name not in table | EXAMPLES)
    assert not unknown, f"pages name variables that are not settings (a typo, or one removed): {unknown}"
    assert {name for name, _ in mentioned} >= table  # the search is real: every setting is mentioned somewhere


# -- nothing reads a HERMESOS_* variable around setting() ------------------------------------------------

# The reads of the environment by a key that is not written in the call, each with why it is not a setting: a
# name the operator chooses is read as it is, whatever it is called.
OPERATOR_NAMED = {
    ("hermes_core/config/_settings.py", "variable"): "setting() itself",
    ("hermes_core/cli/_serve.py", "args.token_env"): "hermesos serve --token-env NAME",
    ("plugins/hermesos-mcp/hermes_mcp/_session.py", "server.token_env"): "an mcp.toml entry's token_env",
    ("plugins/hermesos-mcp/hermes_mcp/_session.py", "name"): "an mcp.toml entry's pass_env",
    ("plugins/hermesos-mcp/hermes_mcp/_config.py", "name"): "what a stdio server inherits, and its entry's pass_env",
}


def _environment_reads(tree: ast.AST) -> list[ast.expr]:
    """The keys of every read of one variable of an environment: ``environ.get(k)``, ``environ[k]``, ``getenv(k)``."""
    keys: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            on = ast.unparse(node.func.value)
            if (node.func.attr in ("get", "pop", "setdefault") and "environ" in on) or node.func.attr == "getenv":
                keys.append(node.args[0])
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and "environ" in ast.unparse(node):
            keys.append(node.slice)
    return keys


def _is_variable(value: object) -> bool:
    return isinstance(value, str) and VARIABLE.match(value) is not None


def _constants() -> dict[str, str]:
    """Every name the code binds to a variable name (``GRANTS_ENV = "HERMESOS_GRANTS"``), to its value."""
    bound: dict[str, str] = {}
    for _, path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[ast.expr] = []
            value = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                pairs = (
                    zip(target.elts, value.elts, strict=False)
                    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
                    else [(target, value)]
                )
                for name, text in pairs:
                    if isinstance(name, ast.Name) and isinstance(text, ast.Constant) and _is_variable(text.value):
                        bound[name.id] = text.value
    return bound


def test_no_module_reads_a_hermesos_variable_but_through_setting() -> None:
    constants = _constants()
    assert constants["GRANTS_ENV"] == "HERMESOS_GRANTS"  # the search is real
    around: list[str] = []
    operator_named = 0
    for _, path in _sources():
        where = path.relative_to(ROOT).as_posix()
        for key in _environment_reads(ast.parse(path.read_text(encoding="utf-8"))):
            text = ast.unparse(key)
            if isinstance(key, ast.Constant):
                if str(key.value).startswith("HERMESOS_"):
                    around.append(f"{where}:{key.lineno} reads {key.value}")
                continue
            name = key.attr if isinstance(key, ast.Attribute) else key.id if isinstance(key, ast.Name) else None
            if name in constants:
                around.append(f"{where}:{key.lineno} reads {constants[name]} ({text})")
            elif (where, text) in OPERATOR_NAMED:
                operator_named += 1
            else:
                around.append(f"{where}:{key.lineno} reads a variable named by {text!r}: a setting, or a name the "
                              "operator chooses (then add it to OPERATOR_NAMED, saying so)")  # fmt: skip
    assert not around, "read around setting(), which every HERMESOS_* variable goes through:\n" + "\n".join(around)
    assert operator_named, "not even setting()'s own read was found: the search is broken"


# -- the core's own settings, read through setting() -----------------------------------------------------


def test_the_grants_variable_is_a_list_with_blanks_ignored() -> None:
    assert env_grants({"HERMESOS_GRANTS": " fs:read , ,net:* "}) == ("fs:read", "net:*")
    assert env_grants({"HERMESOS_GRANTS": "   "}) == ()
    assert env_grants({}) == ()


def _hermesos(*argv: str, **variables: str) -> subprocess.CompletedProcess[str]:
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("HERMESOS_", "NO_"))}
    environment.update(variables)
    return subprocess.run(
        [str(HERMES), *argv], capture_output=True, text=True, env=environment, stdin=subprocess.DEVNULL, check=False
    )


def _workspace(folder: Path) -> dict[str, str]:
    """A workspace root for hermesos-fs, and a configuration directory outside it, in *folder*."""
    (folder / "workspace").mkdir()
    return {"HERMESOS_FS_ROOT": str(folder / "workspace"), "XDG_CONFIG_HOME": str(folder / "config")}


# A lone surrogate: the byte 0xff in the environment, which is not UTF-8 and so can name no plugin.
NOT_TEXT = "hermesos-math,\udcff"
NOT_TEXT_MESSAGE = (
    "INVALID_DEFINITION: setting HERMESOS_DISABLE_PLUGINS must be valid Unicode text, got a string with a lone "
    "surrogate.\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["tools", "list"],
        ["plugins", "list"],
        ["check"],
        ["call", "math.eval", '{"expression": "1 + 1"}'],
        ["export", "--format", "openai"],
        ["serve"],
    ],
    ids=lambda argv: argv[0],
)
def test_a_malformed_core_setting_ends_any_command_on_one_line(tmp_path: Path, argv: list[str]) -> None:
    workspace = _workspace(tmp_path)
    if argv != ["serve"]:  # serve keeps serving on stdin's end; the others end on their own
        disabled = _hermesos(*argv, HERMESOS_DISABLE_PLUGINS="hermesos-fs", **workspace)
        assert disabled.returncode == 0, disabled.stderr
    done = _hermesos(*argv, HERMESOS_DISABLE_PLUGINS=NOT_TEXT, **workspace)
    assert (done.returncode, done.stdout, done.stderr) == (7, "", NOT_TEXT_MESSAGE)


def test_a_malformed_grant_variable_ends_call_naming_it(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    granted = _hermesos("call", "fs.list", '{"path": "."}', HERMESOS_GRANTS=" fs:read ,", **workspace)
    assert (granted.returncode, granted.stderr) == (0, "")
    done = _hermesos("call", "fs.list", '{"path": "."}', HERMESOS_GRANTS="fs:read,\udcff", **workspace)
    assert (done.returncode, done.stderr) == (
        7,
        "INVALID_DEFINITION: setting HERMESOS_GRANTS must be valid Unicode text, got a string with a lone surrogate.\n",
    )


def test_load_runtime_refuses_a_malformed_disable_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMESOS_DISABLE_PLUGINS", "hermesos-fs,hermesos-mcp,hermesos-policy")
    with load_runtime() as runtime:
        assert list(runtime.tools) == ["math.eval"]
    monkeypatch.setenv("HERMESOS_DISABLE_PLUGINS", NOT_TEXT)
    with pytest.raises(InvalidDefinitionError, match=r"^setting HERMESOS_DISABLE_PLUGINS must be valid Unicode"):
        load_runtime()


@given(
    st.builds(str.__add__, st.sampled_from(["HERMESOS_", "HERMESOS", "hermesos_", ""]), st.text(alphabet="AZ09_az\n"))
    | st.sampled_from(["HERMESOS_FS_ROOT", "HERMESOS_FS__ROOT", "HERMESOS_1FS", "HERMESOS_FS_", "HERMESOS_FS\n"])
)
def test_a_variable_name_is_told_as_the_expression_tells_it(name: str) -> None:
    # Told with str's methods, not an expression compiled at every start (start-up).
    assert settings._is_variable(name) == (re.match(settings._VARIABLE, name) is not None)


# -- paths as text: what runs at every start works without pathlib (start-up) ---------------------------


@pytest.mark.skipif(os.name == "nt", reason="POSIX paths: Windows' are pathlib's own")
@given(st.lists(st.text(alphabet="/a.b~ ", max_size=8), min_size=1, max_size=4))
def test_a_path_is_written_as_pathlib_writes_it(parts: list[str]) -> None:
    from pathlib import PurePosixPath

    assert settings.path_text(*parts) == str(PurePosixPath(*parts))


@pytest.mark.parametrize("home", ["/home/ann", "/home//ann/", "//srv/ann", "/"])
@pytest.mark.parametrize("xdg", [None, "/etc/xdg", "/etc//xdg/./", "relative/xdg", ""])
def test_the_configuration_directory_as_text_is_the_one_pathlib_gives(
    monkeypatch: pytest.MonkeyPatch, home: str, xdg: str | None
) -> None:
    from pathlib import Path

    monkeypatch.setenv("HOME", home)
    environ = {} if xdg is None else {"XDG_CONFIG_HOME": xdg}
    assert settings.home_directory() == str(Path.home())
    assert settings.config_directory(environ) == str(user_config_dir(environ))
    assert user_config_path("mcp.toml", environ) == str(user_config_file("mcp.toml", environ))
