"""A new plugin distribution, written from templates: what ``hermesos new plugin NAME`` does.

:func:`plugin_names` turns the name a person types (``notes``,
``hermesos-word-count``) into the names of the distribution, its module and
entry point, or refuses it; :func:`write_plugin` writes the project into a
directory that does not exist or is empty, and never overwrites a file. Both
raise :class:`ScaffoldError`, whose message is one line, for the command to
print as a usage error.

The templates are :class:`string.Template` strings (``$name``), so the braces
of Python, TOML and f-strings need no escaping; ``$$`` is a dollar sign.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from hermes_core._base._issues import shorten
from hermes_core._base._version import __version__

__all__ = ["BUNDLED", "NAME_MAX", "PluginNames", "ScaffoldError", "plugin_names", "write_plugin"]

#: The longest plugin name accepted, in characters: it prefixes every tool name (at most 64).
NAME_MAX = 40

#: The plugins released with the core, as ``hermesos-NAME``: a new plugin may not take their names.
BUNDLED = ("fs", "math", "mcp", "policy")

_PREFIX = "hermesos-"
# Lowercase words joined by single hyphens or underscores: a Python identifier once hyphens are
# underscores, and a distribution name (PEP 508) that ends with a letter or digit.
_NAME = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*\Z")
_RULE = (
    f"use a short lowercase name, a letter then letters, digits, hyphens or underscores "
    f"(at most {NAME_MAX} characters), such as 'notes' or 'word-count'"
)


class ScaffoldError(ValueError):
    """The plugin cannot be written: a bad name, or a directory in use; the message is one line."""


@dataclass(frozen=True)
class PluginNames:
    """The names of a new plugin, all derived from the one its author typed.

    Attributes:
        name: the entry point's name and the prefix of the plugin's tool names (``word_count``).
        distribution: the distribution's name, hyphenated (``hermesos-word-count``).
        module: the module holding the tools and hooks (``hermes_word_count``).
    """

    name: str
    distribution: str
    module: str


def plugin_names(typed: str) -> PluginNames:
    """The names of the plugin *typed* (``notes``, ``word-count``, ``hermesos-notes``).

    A ``hermesos-`` prefix is dropped; hyphens become underscores in the
    module, entry point and tool names, and underscores hyphens in the
    distribution's name.

    Raises:
        ScaffoldError: *typed* is not a short lowercase name, or names the core itself or a
            plugin bundled with it (:data:`BUNDLED`).
    """
    name = typed.removeprefix(_PREFIX)
    if len(name) > NAME_MAX or not _NAME.match(name):
        lower = name.lower()
        hint = f"; did you mean {lower!r}?" if len(lower) <= NAME_MAX and _NAME.match(lower) else ""
        raise ScaffoldError(f"{shorten(repr(typed))} is not a plugin name: {_RULE}{hint}")
    identifier = name.replace("-", "_")
    distribution = _PREFIX + name.replace("_", "-")
    if distribution == "hermesos-core":
        raise ScaffoldError(f"{typed!r} would make a plugin named hermesos-core, the core's own name; choose another")
    if distribution.removeprefix(_PREFIX) in BUNDLED:
        raise ScaffoldError(
            f"{typed!r} would make a plugin named {distribution}, the name of a plugin bundled with hermesos-core; "
            "choose another"
        )
    return PluginNames(name=identifier, distribution=distribution, module=f"hermes_{identifier}")


def write_plugin(names: PluginNames, directory: str | os.PathLike[str]) -> list[str]:
    """Write the plugin *names* into *directory*, which must not exist or be empty.

    Args:
        names: from :func:`plugin_names`.
        directory: the project's folder, created with any missing parents.

    Returns:
        The files written, relative to *directory*, in the order written
        (``/``-separated).

    Raises:
        ScaffoldError: *directory* exists and is not an empty directory, or
            cannot be written; whatever was written before the failure is
            removed again, and nothing that existed is touched.
    """
    root = Path(directory)
    files = _render(names)
    made: list[Path] = []  # what this call created, to remove if a later step fails
    try:
        if root.exists() and not root.is_dir():
            raise ScaffoldError(f"{_shown(root)} exists and is not a directory; choose another --directory")
        if root.is_dir() and any(root.iterdir()):
            raise ScaffoldError(f"{_shown(root)} already exists and is not empty; choose another name or --directory")
        for relative, text in files.items():
            path = root / relative
            _make_directories(path.parent, made)
            # "x": a file that appeared since the check above is never overwritten.
            with path.open("x", encoding="utf-8", newline="\n") as stream:
                made.append(path)
                stream.write(text)
    except OSError as error:
        _remove(made)
        where = error.filename if error.filename is not None else root
        raise ScaffoldError(f"cannot write {_shown(where)}: {error.strerror or error}") from error
    return list(files)


def _shown(path: object) -> str:
    """*path* for a message of one line: as written, or quoted when it holds a line break or control character."""
    text = os.fsdecode(path) if isinstance(path, str | bytes | os.PathLike) else str(path)
    return text if text.isprintable() else shorten(repr(text), 120)


def _make_directories(directory: Path, made: list[Path]) -> None:
    """Create *directory* and its missing parents, recording each one created in *made*."""
    missing: list[Path] = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    for path in reversed(missing):
        path.mkdir()
        made.append(path)


def _remove(made: list[Path]) -> None:
    """Remove what :func:`write_plugin` created, newest first; what cannot be removed stays."""
    for path in reversed(made):
        try:
            path.rmdir() if path.is_dir() else path.unlink()
        except OSError:
            continue


def _requirement() -> str:
    """The release of the core the new plugin needs: this one's major and minor version or later."""
    major, minor = __version__.split(".")[:2]
    return f"hermesos-core>={major}.{minor}"


def _render(names: PluginNames) -> dict[str, str]:
    """Every file of the plugin *names*: its path (``/``-separated) and its text."""
    core = _requirement()
    values = {
        "name": names.name,
        "distribution": names.distribution,
        "module": names.module,
        "core": core,
        "core_testing": core.replace("hermesos-core", "hermesos-core[testing]", 1),
    }
    return {
        "pyproject.toml": _PYPROJECT.substitute(values),
        f"{names.module}.py": _MODULE.substitute(values),
        "README.md": _README.substitute(values),
        f"tests/test_{names.module}.py": _TESTS.substitute(values),
        ".gitignore": _GITIGNORE,
    }


# -- the templates -----------------------------------------------------------------------

_PYPROJECT = Template("""\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "$distribution"
version = "0.1.0"
description = "A hermesos plugin: $name.greet, which greets someone by name"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["$core"]

[project.optional-dependencies]
test = ["$core_testing", "pytest>=8"]

# How hermesos finds the plugin: the entry point's module defines the hook
# functions (hermes_tools, ...).
[project.entry-points."hermesos.plugins"]
$name = "$module"

[tool.setuptools]
py-modules = ["$module"]

# -p: the fixtures of hermesos-core's testing kit (hermes_runtime), which a project turns on.
[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = ["-ra", "--strict-markers", "-p", "hermes_core.testing.plugin"]
""")

_MODULE = Template('''\
"""$distribution: a hermesos plugin with one tool, greet.

Each tool is a function decorated with @tool: its parameters' annotations
are the input schema a model sees, its docstring the description, and its
return annotation the output schema. hermes_tools() lists the tools the
plugin contributes; hermesos calls it when it loads the plugin.
"""

from __future__ import annotations

from typing import Annotated

from hermes_core import Tool, tool
from hermes_core import schema as s

__all__ = ["greet", "hermes_tools"]


@tool(name="$name.greet", version="0.1.0")
def greet(
    name: Annotated[str, s.string(min_length=1, max_length=80)],
    excited: bool = False,
) -> str:
    """Greet someone by name.

    Args:
        name: who to greet.
        excited: end with "!" instead of ".".
    """
    return f"Hello, {name}{'!' if excited else '.'}"


def hermes_tools() -> list[Tool]:
    """The tools this plugin contributes."""
    return [greet]
''')

_README = Template("""\
# $distribution

A [hermesos](https://github.com/hermesos-core/hermesos-core) plugin
contributing one tool, `$name.greet`, which greets someone by name. It is a
starting point: change `greet`, or add tools beside it in `$module.py` and
list them in `hermes_tools()`.

## Install

From this folder, with the tests' requirements, in the environment where
`hermesos` runs:

```console
pip install -e '.[test]'
```

hermesos finds the plugin through its entry point `$name` in the
`hermesos.plugins` group (see `pyproject.toml`). To start without it:
`HERMESOS_DISABLE_PLUGINS=$distribution`.

## Use

```console
$$ hermesos tools list
$$ hermesos call $name.greet '{"name": "Ada"}'
"Hello, Ada."
$$ hermesos call $name.greet '{"name": "Ada", "excited": true}'
"Hello, Ada!"
```

Or from Python, through the runtime, as a model's call goes:

```python
from hermes_core import load_runtime

tool = "$name.greet"
runtime = load_runtime()
print(runtime.call_sync(tool, {"name": "Ada"}))  # Hello, Ada.
```

`$name.greet` declares no permissions: it reads and writes nothing.

## Test

```console
pytest
```

The tests in `tests/` use the pytest plugin of `hermesos-core[testing]`,
which `pyproject.toml` turns on (`-p hermes_core.testing.plugin`):
`check_plugin("$distribution")` loads the plugin as hermesos does and checks
its contributions, the `hermes_runtime` fixture makes a runtime of the
plugin's tools, and `raises_code` and `issues` check the errors a model would
be sent.
""")

_TESTS = Template('''\
"""Tests of $distribution: the contract check, and calls of its tool."""

from collections.abc import Callable

from hermes_core import Runtime
from hermes_core.testing import check_plugin, issues, raises_code

from $module import greet

DISTRIBUTION = "$distribution"
TOOL = "$name.greet"

# The hermes_runtime fixture: a runtime of exactly the tools given to it.
MakeRuntime = Callable[..., Runtime]


def test_the_plugin_passes_the_contract_check() -> None:
    check_plugin(DISTRIBUTION)


def test_greet_greets_by_name(hermes_runtime: MakeRuntime) -> None:
    runtime = hermes_runtime(greet)
    assert runtime.call_sync(TOOL, {"name": "Ada"}) == "Hello, Ada."
    assert runtime.call_sync(TOOL, {"name": "Ada", "excited": True}) == "Hello, Ada!"


def test_an_empty_name_is_refused(hermes_runtime: MakeRuntime) -> None:
    runtime = hermes_runtime(greet)
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync(TOOL, {"name": ""})
    assert issues(caught.value) == [("name", "too_small")]


def test_a_misspelt_field_is_refused(hermes_runtime: MakeRuntime) -> None:
    runtime = hermes_runtime(DISTRIBUTION)
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync(TOOL, {"name": "Ada", "exited": True})
    assert issues(caught.value) == [("exited", "unexpected")]
''')

_GITIGNORE = """\
__pycache__/
*.py[cod]
*.egg-info/
build/
dist/
.venv/
.pytest_cache/
.ruff_cache/
.mypy_cache/
"""
