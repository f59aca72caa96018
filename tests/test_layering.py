"""Imports point one way, between the package's wings and inside each of them; there is no circle.

The package is a handful of wings, lowest first, as ``WINGS`` lists them; a wing imports only the wings below it:

- ``_base``: what every part shares, knowing no tool and no schema (the version, frozen values, issues and
  errors, names, JSON arguments read within bounds, where handlers run, tracing);
- ``schema``: the schema combinators, their compiler and JSON Schema import;
- ``config``: what an operator sets (environment variables read with a schema, configuration files);
- ``_tool``: a tool and what its handler sees (its definition, hints, content blocks, its call's context,
  approval, resources);
- ``_runtime``: the runtime (grants, the checks of what it is built from, the order of a call);
- ``_door``: the front door every edge shares (wire names, the door);
- ``_plugins``: plugin loading (distributions, hooks, what no tool may write, the set of plugins);
- the edges: ``adapters``, ``serve``, ``cli``, ``testing``.

The facade (``hermes_core/__init__.py``) and ``__main__`` sit above them all: no module imports the facade.
A wing's ``__init__`` says what the wing is and imports nothing. Inside a wing, the imports between its
modules form no circle (``test_inside_a_wing_no_module_imports_in_a_circle``).
Inside ``schema``, the order is finer: ``_shared`` ← ``_patterns`` ← ``_kinds`` ← ``_compile`` ← ``_nodes``
← ``_alternatives`` ← ``_containers`` ← ``_conditions`` ← ``_evaluation`` ← ``_validators`` ← ``_strict``
← ``_import`` ← ``_inputs`` ← ``_repair`` ← the package's ``__init__``. The nodes are
the base and the scalars (``_nodes``), the nodes that stand for or choose among others (``_alternatives``) and
the arrays and objects (``_containers``). The compiler sits below the nodes and imports none of them (it tells
them apart by their ``kind``, as the protocols of ``_kinds`` type them), so ``Schema.parse`` calls it with a
plain import: nothing is plugged in at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hermes_core

PACKAGE = Path(hermes_core.__file__).parent
# The wings, lowest first; the last four are the edges.
WINGS = [
    "_base",
    "schema",
    "config",
    "_tool",
    "_runtime",
    "_door",
    "adapters",
    "_plugins",
    "serve",
    "cli",
    "testing",
]
PRIVATE_WINGS = [wing for wing in WINGS if wing.startswith("_")]
SCHEMA_LAYERS = [
    "_shared",
    "_patterns",
    "_kinds",
    "_compile",
    "_nodes",
    "_alternatives",
    "_containers",
    "_conditions",
    "_evaluation",
    "_validators",
    "_strict",
    "_dynamic",
    "_import",
    "_inputs",
    "_repair",
    "__init__",
]


def _wing(module: str) -> str:
    """The wing of a ``hermes_core...`` module name; the facade is ``hermes_core`` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in WINGS else "hermes_core"


def _imports(path: Path) -> set[str]:
    """Every hermes_core module *path* imports, at any depth of its code (TYPE_CHECKING blocks included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module in ("hermes_core", "hermes_core.schema"):
            # "from hermes_core import schema" imports a module; "... import define_tool", the facade.
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return {name for name in found if name.startswith("hermes_core")}


@pytest.mark.parametrize("wing", WINGS)
def test_a_wing_imports_only_the_wings_below_it(wing: str) -> None:
    paths = sorted((PACKAGE / wing).rglob("*.py")) if (PACKAGE / wing).is_dir() else [PACKAGE / f"{wing}.py"]
    allowed = set(WINGS[: WINGS.index(wing) + 1])
    for path in paths:
        upward = {name for name in _imports(path) if _wing(name) not in allowed}
        assert not upward, f"{path.relative_to(PACKAGE)} imports {sorted(upward)}, above its wing"


def test_every_module_is_in_a_wing() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert top - {"__init__", "__main__"} == set(WINGS)
    assert {p.stem for p in (PACKAGE / "schema").glob("*.py")} == set(SCHEMA_LAYERS)


@pytest.mark.parametrize("wing", PRIVATE_WINGS)
def test_a_private_wing_says_what_it_is_and_imports_nothing(wing: str) -> None:
    init = ast.parse((PACKAGE / wing / "__init__.py").read_text())
    assert ast.get_docstring(init), f"{wing}/__init__.py says nothing of what the wing is"
    assert [type(node).__name__ for node in init.body] == ["Expr"], f"{wing}/__init__.py holds more than its docstring"


def _module_of(name: str, wing: str) -> str | None:
    """The module of *wing* that the imported *name* is (``hermes_core._tool._definition`` → ``_definition``)."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == wing else None


@pytest.mark.parametrize("wing", [wing for wing in WINGS if wing != "schema" and (PACKAGE / wing).is_dir()])
def test_inside_a_wing_no_module_imports_in_a_circle(wing: str) -> None:
    """Imports at any depth count, those made inside a function too: a circle there is a circle deferred."""
    graph = {
        path.stem: {m for name in _imports(path) if (m := _module_of(name, wing)) and m != path.stem}
        for path in (PACKAGE / wing).glob("*.py")
    }
    done: set[str] = set()

    def visit(module: str, trail: tuple[str, ...]) -> None:
        assert module not in trail, f"{wing}: " + " -> ".join((*trail[trail.index(module) :], module))
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, (*trail, module))
        done.add(module)

    for module in sorted(graph):
        visit(module, ())


def _schema_module(name: str) -> str | None:
    """The schema-package module a ``hermes_core.schema...`` name is, or None for another package's."""
    if name == "hermes_core.schema":
        return "__init__"
    prefix = "hermes_core.schema."
    if not name.startswith(prefix):
        return None
    # "from hermes_core.schema import _compile" is the module; "... import string", the package.
    rest = name.removeprefix(prefix).split(".")[0]
    return rest if rest in SCHEMA_LAYERS else "__init__"


@pytest.mark.parametrize("module", SCHEMA_LAYERS)
def test_inside_the_schema_package_imports_point_down(module: str) -> None:
    allowed = set(SCHEMA_LAYERS[: SCHEMA_LAYERS.index(module)])
    imported = {_schema_module(name) for name in _imports(PACKAGE / "schema" / f"{module}.py")} - {None}
    assert imported <= allowed, f"schema/{module}.py imports {sorted(imported - allowed)}, above it"  # type: ignore[type-var]


def test_outside_the_schema_package_only_its_api_is_imported() -> None:
    """Layers above import the package and its documented APIs (``_validators``, ``_strict``, ``_inputs``,
    ``_repair``), never the rest."""
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "schema":
            continue
        private = {
            name
            for name in _imports(path)
            if name.startswith("hermes_core.schema._")
            and name.removeprefix("hermes_core.schema.") not in ("_validators", "_strict", "_inputs", "_repair")
        }
        assert not private, f"{path.relative_to(PACKAGE)} imports {sorted(private)}"


def test_no_module_imports_the_facade() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("__init__.py", "__main__.py") and path.parent == PACKAGE:
            continue
        assert "hermes_core" not in _imports(path), f"{path.relative_to(PACKAGE)} imports the facade"


# The public modules: the facade and these; every other module of the package is private (``_name``).
PUBLIC = {
    "hermes_core",
    "hermes_core.schema",
    "hermes_core.config",
    "hermes_core.adapters",
    "hermes_core.serve",
    "hermes_core.testing",
}
PLUGINS = PACKAGE.parent / "plugins"


@pytest.mark.parametrize(
    "path", sorted(PLUGINS.glob("*/hermes_*.py")) + sorted(PLUGINS.glob("*/hermes_*/*.py")), ids=lambda p: p.name
)
def test_the_bundled_plugins_use_only_the_public_api(path: Path) -> None:
    private = {name for name in _imports(path) if any(part.startswith("_") for part in name.split(".")[1:])}
    assert not private, f"{path.relative_to(PLUGINS)} imports {sorted(private)}, which are private"


def test_every_module_outside_the_public_set_is_private() -> None:
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] in ("__init__", "__main__"):
            parts = parts[:-1]
        if not parts:
            continue
        dotted = "hermes_core." + ".".join(parts)
        if dotted in PUBLIC or dotted.startswith(("hermes_core.testing.", "hermes_core.cli")):
            continue
        assert any(part.startswith("_") for part in parts), f"{dotted} is neither public nor private (_name)"


def test_no_module_imports_a_private_name_of_another() -> None:
    """A name two modules share is public in the module that defines it: no ``from ... import _name``.

    A private module may hold public names (listed in its ``__all__``) that the
    package's other modules use; what starts with ``_`` stays in its module.
    Importing a private module itself (``from hermes_core import _tracing``) is
    not a private name of another module.
    """
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("hermes_core"):
                continue
            assert node.module is not None
            where = PACKAGE.parent.joinpath(*node.module.split("."))
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                if (where / f"{name}.py").exists() or (where / name).is_dir():
                    continue  # a module of the package
                found.append(f"{path.relative_to(PACKAGE)}: from {node.module} import {name}")
    assert found == []
