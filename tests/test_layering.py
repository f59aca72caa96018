"""Imports point one way: errors ← names ← schema ← tool ← permissions ← runtime ← hookspecs ← plugins ← cli.

``_version`` sits below them all; the facade (``hermes_core/__init__.py``) and
``__main__`` above them all: no module imports the facade.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import hermes_core

PACKAGE = Path(hermes_core.__file__).parent
LAYERS = ["_version", "errors", "names", "schema", "tool", "permissions", "runtime", "hookspecs", "plugins", "cli"]


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
        elif isinstance(node, ast.ImportFrom) and node.module == "hermes_core":
            # "from hermes_core import schema" imports a module; "... import define_tool", the facade.
            found.update(f"hermes_core.{alias.name}" for alias in node.names)
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
