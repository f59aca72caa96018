"""Imports point one way, between the package's modules and inside the schema package; there is no circle.

Layers, lowest first, as ``LAYERS`` lists them: ``_version``, ``_frozen`` and ``_distributions``
(import nothing of ours), ``_docstrings``, ``_issues``, ``_errors``, ``_names``, ``_wire``, ``_arguments``,
``schema``, ``_content``, ``_settings``, ``_toml``, ``config``, ``_hints``, ``_toolhints``, ``_contextual``, ``_tools``,
``_tracing``,
``_approval``, ``_permissions``, ``_checks``, ``_guard``, ``_aio``, ``_context``, ``_decorator``, ``_resources``,
``_entries``, ``_repairing``, ``_calls``, ``_runtime``,
``_door``, ``adapters``, ``_hookspecs``, ``_pluginset``, ``_loading``, ``_plugin_checks``, ``_plugins``,
``_serve_calls``, ``_serve_stdio``, ``_serve_http``, ``serve``,
``_scaffold``, ``cli``, ``testing``.
The facade (``hermes_core/__init__.py``) and ``__main__`` sit above them all: no module imports the facade.
Inside ``schema``: ``_shared`` ← ``_patterns`` ← ``_kinds`` ← ``_compile`` ← ``_nodes`` ← ``_alternatives``
← ``_containers`` ← ``_conditions`` ← ``_evaluation`` ← ``_validators`` ← ``_strict`` ← ``_import`` ← ``_inputs``
← ``_repair`` ← the package's ``__init__``. The nodes are
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
LAYERS = [
    "_version",
    "_frozen",
    "_distributions",
    "_docstrings",
    "_issues",
    "_errors",
    "_names",
    "_wire",
    "_arguments",
    "schema",
    "_content",
    "_settings",
    "_toml",
    "config",
    "_hints",
    "_toolhints",
    "_contextual",
    "_tools",
    "_tracing",
    "_approval",
    "_permissions",
    "_checks",
    "_guard",
    "_aio",
    "_context",
    "_decorator",
    "_resources",
    "_entries",
    "_repairing",
    "_calls",
    "_runtime",
    "_door",
    "adapters",
    "_hookspecs",
    "_pluginset",
    "_loading",
    "_plugin_checks",
    "_plugins",
    "_serve_calls",
    "_serve_stdio",
    "_serve_http",
    "serve",
    "_scaffold",
    "cli",
    "testing",
]
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


def _layer(module: str) -> str:
    """The layer of a ``hermes_core...`` module name; the facade is ``hermes_core`` itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "hermes_core"


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


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    paths = sorted((PACKAGE / layer).rglob("*.py")) if (PACKAGE / layer).is_dir() else [PACKAGE / f"{layer}.py"]
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    for path in paths:
        upward = {name for name in _imports(path) if _layer(name) not in allowed}
        assert not upward, f"{path.relative_to(PACKAGE)} imports {sorted(upward)}, above its layer"


def test_every_module_has_a_layer() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name[0] != "_"
    }
    assert modules - {"__init__", "__main__"} == set(LAYERS)
    assert {p.stem for p in (PACKAGE / "schema").glob("*.py")} == set(SCHEMA_LAYERS)


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
