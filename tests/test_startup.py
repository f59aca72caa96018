"""Start-up: what ``hermesos --version``, ``--help`` and ``import hermes_core`` import, in fresh processes.

The timings themselves are bench/bench_startup.py's (docs/performance.md); these
tests hold the imports that made them slow out of the commands that do not need them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet

import hermes_core
from hermes_core._base._issues import json_string, json_unicode_string
from hermes_core._plugins._load import (
    _leading_name,
    _plain_core,
    _plainly_met,
    _release,
    _release_clause,
    canonicalize_name,
)

HERMESOS = Path(sys.executable).with_name("hermesos")
# The schema compiler and pluggy: the bulk of a plugin load, and nothing --version or --help needs.
HEAVY = (
    "hermes_core.schema._compile",
    "hermes_core.schema",
    "pluggy",
    "hermes_core._plugins._discover",
    "importlib.metadata",
)


def _imported(*command: str, environ: dict[str, str] | None = None) -> tuple[str, set[str]]:
    """The stdout of *command* run by this Python with ``-X importtime``, and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *command],
        capture_output=True,
        text=True,
        check=False,
        env=environ,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done.stdout, modules


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["call", "--help"], ["tools", "list", "--help"]])
def test_version_and_help_import_neither_the_schema_compiler_nor_pluggy(argv: list[str]) -> None:
    stdout, modules = _imported(str(HERMESOS), *argv)
    assert "hermesos" in stdout
    assert "hermes_core.cli" in modules  # the listing is real: the command's own modules are in it
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_version_does_not_even_build_the_parser() -> None:
    stdout, modules = _imported(str(HERMESOS), "--version")
    assert stdout == f"hermesos-core {hermes_core.__version__}\n"
    assert "argparse" not in modules


def test_importing_the_facade_imports_none_of_its_modules() -> None:
    _, modules = _imported("-c", "import hermes_core")
    assert {m for m in modules if m.startswith("hermes_core")} == {
        "hermes_core",
        "hermes_core._base",
        "hermes_core._base._version",
    }


def test_every_public_name_of_the_facade_is_there_and_listed() -> None:
    code = (
        "import hermes_core, inspect\n"
        "missing = [n for n in hermes_core.__all__ if n not in dir(hermes_core)]\n"
        "from hermes_core import *\n"
        "objects = [getattr(hermes_core, n) for n in hermes_core.__all__]\n"
        "from hermes_core import Tool, schema\n"
        "print(missing, Tool.__module__, schema.__name__, len(objects))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [
        "[]",
        "hermes_core._tool._definition",
        "hermes_core.schema",
        str(len(hermes_core.__all__)),
    ]
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        hermes_core.nothing_here  # noqa: B018


def test_tools_list_without_an_mcp_server_imports_neither_the_mcp_sdk_nor_asyncio(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "workspace").mkdir()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")},
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no mcp.toml: no MCP server configured
        "HERMESOS_FS_ROOT": str(tmp_path / "workspace"),
    }
    stdout, modules = _imported(str(HERMESOS), "tools", "list", environ=environ)
    assert "math.eval" in stdout  # the bundled plugins were loaded
    assert "hermes_mcp._config" in modules  # hermesos-mcp was loaded, and looked for its configuration
    # hermesos-mcp connects to servers with asyncio and the MCP SDK: without a server, it needs neither.
    assert not {m for m in modules if m.split(".")[0] in ("mcp", "anyio", "httpx", "httpx2", "asyncio")}

    # What no bundled plugin's load needs, imported where it is used (docs/performance.md, start-up): the
    # importlib-metadata backport, RE2 (only an imported pattern runs on it), logging (only a handler someone
    # set up reads the loader's records), packaging (the plugins' requirements are plain release numbers).
    late = {m for m in modules if m.split(".")[0] in ("importlib_metadata", "re2", "logging", "packaging", "secrets")}
    assert not late, sorted(late)
    # Nor the call path: a listing makes no runtime (PluginSet.runtime() imports it).
    call_path = {
        f"hermes_core.{name}"
        for name in (
            "_runtime._runtime",
            "_runtime._calls",
            "_runtime._entries",
            "_runtime._lenient",
            "_tool._call_context",
        )
    }
    assert not modules & call_path, sorted(modules & call_path)
    # Nor the JSON Schema importer and the nodes it alone makes: imported with s.from_json_schema's first use.
    importer = {f"hermes_core.schema.{name}" for name in ("_import", "_conditions", "_evaluation", "_dynamic")}
    assert "hermes_core.schema._containers" in modules  # the control: the schema package's own nodes
    assert not modules & importer, sorted(modules & importer)
    # And what the standard library would bring along, each a millisecond or more: importlib.metadata (email,
    # zipfile, csv; discovery reads the same files itself), shutil (argparse asks it the terminal's width;
    # tempfile imports it), the modules of JSON Schema formats, suggestions, TOML files no one wrote, long
    # wire names, media and a broken plugin's remedy.
    # And signal, whose enums cost more than the wakeup descriptor Ctrl-C is recorded with (its C module, _signal),
    # heapq (suggestions only) and unicodedata (a docstring's names that are not ASCII only).
    stdlib = ("importlib.metadata", "email", "zipfile", "csv", "shutil", "tempfile", "calendar", "ipaddress",
              "fractions", "decimal", "difflib", "tomllib", "datetime", "hashlib", "base64", "shlex",
              "signal", "heapq", "unicodedata")  # fmt: skip
    _, at_start = _imported("-c", "pass", environ=environ)  # an editable install's finder imports some at start
    brought = {m for m in modules - at_start if m in stdlib or m.split(".")[0] in stdlib[1:]}
    assert not brought, sorted(brought)


@pytest.mark.parametrize("argv", [["tools", "list"], ["tools", "list", "--json"]])
def test_the_listing_is_read_as_the_parser_reads_it_without_argparse(argv: list[str], tmp_path: Path) -> None:
    """tools list (--json) is read without building a parser (start-up): to the same namespace, every field."""
    from hermes_core.cli import _parser
    from hermes_core.cli._tools import shortcut

    read = shortcut(argv)
    assert read is not None
    assert vars(read) == vars(_parser(argv).parse_args(argv))
    (tmp_path / "workspace").mkdir()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")},
        "XDG_CONFIG_HOME": str(tmp_path),  # no configuration
        "HERMESOS_FS_ROOT": str(tmp_path / "workspace"),
    }
    stdout, modules = _imported(str(HERMESOS), *argv, environ=environ)
    assert "math.eval" in stdout  # the listing ran, in text or in JSON
    assert not modules & {"argparse", "gettext", "locale", "hermes_core.cli._parsing"}, sorted(modules)


@pytest.mark.parametrize(
    "argv",
    [["tools", "list", "--debug"], ["tools", "list", "--disable", "x"], ["tools", "show", "fs.read"], ["tools"],
     ["--debug", "tools", "list"], ["tools", "list", "--json", "--json"], ["tools", "lst"], ["plugins", "list"]],
)  # fmt: skip
def test_every_other_line_goes_to_the_parser(argv: list[str]) -> None:
    from hermes_core.cli._tools import shortcut

    assert shortcut(argv) is None
    assert shortcut(["tools", "list"]) is not None  # the shortcut itself is there


# Run in the process of 'hermesos tools list': records what the listing compiles, then lists.
_PROBE = """
import builtins, dataclasses, json, re, sys
from re import _compiler

patterns, processed, templates, annotations = [], [], [], []
compile_pattern, process, compile_code = _compiler.compile, dataclasses._process_class, builtins.compile


def pattern(*args, **kwargs):  # a regular expression compiled, not found in re's cache: by which file
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(re.__file__.rpartition("/")[0]):
        frame = frame.f_back
    patterns.append(frame.f_code.co_filename.rpartition("/")[2])
    return compile_pattern(*args, **kwargs)


def dataclass(cls, *args, **kwargs):
    processed.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)


def code(source, filename, *args, **kwargs):
    templates.append(filename)
    if filename == "<string>":  # a string annotation typing reads (a NamedTuple's field): in which module
        frame = sys._getframe(1)
        while frame.f_code.co_filename.endswith("typing.py"):
            frame = frame.f_back
        annotations.append(frame.f_globals.get("__name__"))
    return compile_code(source, filename, *args, **kwargs)


_compiler.compile, dataclasses._process_class, builtins.compile = pattern, dataclass, code
from hermes_core._base import _frozen
from hermes_core.cli import main

made = []
_make = _frozen._make
_frozen._make = lambda target, **options: made.append(f"{target.__module__}.{target.__qualname__}") or _make(
    target, **options
)
status = main(["tools", "list"])
dataclasses.dataclass(type("Seen", (), {"__annotations__": {"x": "int"}}))  # what the probe sees: a dataclass made
print(json.dumps({"patterns": patterns, "dataclasses": processed, "frozen": made,
                  "templates": templates.count("<frozen __init__>"), "annotations": annotations}))
"""


def _listing_probe(tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """The output of 'hermesos tools list' (the bundled plugins, no configuration), and what it compiled."""
    (tmp_path / "config").mkdir()
    (tmp_path / "workspace").mkdir()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")},
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HOME": str(tmp_path),
        "HERMESOS_FS_ROOT": str(tmp_path / "workspace"),
    }
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=False, env=environ)
    assert done.returncode == 0, done.stderr[-2000:]
    listing, _, probed = done.stdout.rstrip("\n").rpartition("\n")
    return listing, json.loads(probed)


def test_tools_list_compiles_no_pattern_of_the_text_it_does_not_read(tmp_path: Path) -> None:
    """Patterns of messages, TOML files, policies and expressions are compiled where first used (start-up)."""
    listing, probed = _listing_probe(tmp_path)
    assert "math.eval" in listing
    assert "_names.py" in probed["patterns"]  # the probe sees what is compiled: the tools' names are checked
    unused = ("_issues.py", "_toml.py", "hermes_math.py", "hermes_policy.py")
    # Nor the requirements, entry points, settings, protected names and mcp.toml it reads: with str's methods.
    unused += ("_loading.py", "_distributions.py", "_settings.py", "fnmatch.py", "_config.py")
    assert not [name for name in probed["patterns"] if name in unused], probed["patterns"]


def test_tools_list_makes_its_frozen_classes_without_dataclass_and_one_init_per_shape(tmp_path: Path) -> None:
    """@frozen reads the fields itself and compiles one __init__ template per shape of fields (start-up)."""
    listing, probed = _listing_probe(tmp_path)
    assert "fs.read" in listing
    assert len(probed["frozen"]) > 40  # the classes the listing declares
    assert not set(probed["frozen"]) & set(probed["dataclasses"])
    assert "__main__.Seen" in probed["dataclasses"]  # the probe sees dataclass
    # Nor the plugins: hermesos-mcp's three classes were 14 million instructions of dataclass (start-up).
    plugins = ("hermes_mcp.", "hermes_fs.", "hermes_policy.", "hermes_math.")
    assert not [name for name in probed["dataclasses"] if name.startswith(plugins)], probed["dataclasses"]
    mounted = {"hermes_mcp._config.ServerConfig", "hermes_mcp._config.Config", "hermes_mcp.Mounted"}
    assert mounted <= set(probed["frozen"])
    # A NamedTuple compiles each of its string annotations as it is declared: the core's internal ones and
    # hermesos-policy's rule are @frozen. Issue, public and a tuple, stays one (the control); @tool reads the
    # annotations of the function it is given (hermesos-math's).
    ours = {name for name in probed["annotations"] if name.startswith("hermes")}
    assert ours == {"hermes_core._base._issues", "hermes_core._tool._decorator"}, probed["annotations"]
    assert 0 < probed["templates"] < len(probed["frozen"]) / 2


# Run in the process of 'hermesos tools list': records which function first imported each module watched.
_IMPORTS_PROBE = """
import sys

WATCHED = {"json", "threading", "hermes_fs", "pathlib", "urllib.parse", "ipaddress"}
first = {}
for name in WATCHED:  # an editable install's finder imports some as Python starts: imported again if asked
    sys.modules.pop(name, None)


class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED and name not in first:
            frame = sys._getframe(1)
            while frame.f_code.co_filename.startswith("<frozen"):  # importlib's own frames
                frame = frame.f_back
            first[name] = frame.f_code.co_filename.rpartition("/")[2] + ":" + frame.f_code.co_name
        return None


sys.meta_path.insert(0, Watch())
from hermes_core.cli import main

status = main(["tools", "list"])
print(repr(first))
"""


def test_tools_list_imports_neither_json_nor_threading_nor_pathlib_for_itself(tmp_path: Path) -> None:
    """json (six patterns compiled at its import), threading and pathlib: 5, 2.5 and 18 million instructions."""
    (tmp_path / "workspace").mkdir()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")},
        "XDG_CONFIG_HOME": str(tmp_path),
        "HOME": str(tmp_path),
        "HERMESOS_FS_ROOT": str(tmp_path / "workspace"),
    }
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS_PROBE], capture_output=True, text=True, check=False, env=environ
    )
    assert done.returncode == 0, done.stderr[-2000:]
    listing, _, probed = done.stdout.rstrip("\n").rpartition("\n")
    first = ast.literal_eval(probed)
    assert "math.eval" in listing
    assert "hermes_fs" in first  # the probe sees the imports of the listing
    assert "threading" not in first
    # json reads where an editable install's source is (the bundled plugins of a development environment are
    # installed so); a regular install, whose direct_url.json names no dir_info, never imports it.
    assert first.get("json", "_guard.py:_editable_folder") == "_guard.py:_editable_folder", first
    # pathlib (with urllib.parse and ipaddress behind it: 18 million instructions): the core and the bundled
    # plugins' hooks work with the text of their paths; urllib.parse reads an editable install's URL only.
    assert "pathlib" not in first, first
    assert first.get("urllib.parse", "_guard.py:_editable_folder") == "_guard.py:_editable_folder", first
    assert first.get("ipaddress", "parse.py:<module>") == "parse.py:<module>", first


@given(st.text() | st.sampled_from(["", "fs.write", '"\\', "\u00e9\u2028\ud800", "\x00\x1f\x7f"]))
def test_text_is_written_as_json_writes_it_without_json(text: str) -> None:
    assert json_string(text) == json.dumps(text)
    assert json_unicode_string(text) == json.dumps(text, ensure_ascii=False)


VERSIONS = ["0.4.0", "0.4", "1.0", "0.10.1", "0.4.0rc1", "0.4.0.post1", "0.4.0+local"]
CLAUSES = [">=0.4", ">=0.4.0", ">0.4", "<0.5", "<=0.4", "==0.4", "==0.4.0.0", "!=0.4", ">=0.2", "<1", ">=0.5",
           ">=0.4,<1", ">=0.4, <0.4.1", " >= 0.10 ", "~=0.4", "==0.*", ">=0.4rc1", ">=0.4,", "==04.0"]  # fmt: skip


@pytest.mark.parametrize("installed", VERSIONS)
@pytest.mark.parametrize("clauses", CLAUSES)
def test_a_plain_requirement_met_without_packaging_is_met_by_packaging(installed: str, clauses: str) -> None:
    """The loader's shortcut says "met" only where packaging would, and otherwise leaves it to packaging."""
    if _plainly_met(clauses, installed):
        assert SpecifierSet(clauses).contains(installed, prereleases=True)
    elif "rc" not in installed + clauses and "+" not in installed and ".post" not in installed:
        plain = all(c.strip() and c.strip()[0] in "<>=!" and "~" not in c and "*" not in c for c in clauses.split(","))
        if plain:  # plain release numbers on both sides: the shortcut decides them all, met or not
            assert not SpecifierSet(clauses).contains(installed, prereleases=True)


# The expressions the loader read requirements with, before it read them with str's methods (start-up).
_LEADING_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PLAIN_CORE = re.compile(r"\s*hermesos[-_.]core\s*([<>=!~][=<>!~=\s0-9A-Za-z.*+,-]*)", re.IGNORECASE)
_RELEASE_CLAUSE = re.compile(r"\s*(==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)\s*")
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_REQUIREMENT_TEXT = st.text(alphabet="hermsoHERMSOcCK-_.. \t\n\x1c<>=!~,0123456789ab*+;[]\u017f\u212a\u0663\u2003")
_NAMED_CORE = st.sampled_from(["hermesos-core", "Hermesos_Core", "hermesos.core", "hermesos--core", "hermesos-cores",
                                " hermesos-core", "hermesos-core>=1\u017f", "hermesos-core >=1,<\u212a",
                                "hermesoscore"])  # fmt: skip


@given(_REQUIREMENT_TEXT | st.builds(str.__add__, _NAMED_CORE, _REQUIREMENT_TEXT))
def test_a_requirement_is_read_as_the_expressions_read_it(line: str) -> None:
    leading = _LEADING_NAME.match(line)
    assert _leading_name(line) == (None if leading is None else leading.group(1))
    name = _leading_name(line)
    if name is not None and canonicalize_name(name) == "hermesos-core":
        plain = _PLAIN_CORE.fullmatch(line)
        assert _plain_core(line, name) == (None if plain is None else plain.group(1))
    clause = _RELEASE_CLAUSE.fullmatch(line)
    assert _release_clause(line) == (
        None if clause is None else (clause.group(1), tuple(int(part) for part in clause.group(2).split(".")))
    )
    assert (_release(line.strip()) is not None) == (_RELEASE.fullmatch(line.strip()) is not None)


@given(st.text(alphabet="aB9-_.\u00e9 ") | st.sampled_from(["Hermesos_FS", "a--b", "-a", "a_.-b.", "x"]))
def test_a_name_is_canonicalized_as_packaging_canonicalizes_it(name: str) -> None:
    assert canonicalize_name(name) == re.sub(r"[-_.]+", "-", name).lower()
