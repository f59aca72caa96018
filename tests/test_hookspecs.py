"""Every hook spec is typed, documented, shown on the plugins page and exercised by a loader test."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from hermes_core import hookimpl
from hermes_core._plugins import _hookspecs as hookspecs

ROOT = Path(__file__).resolve().parents[1]
SPECS = [
    name
    for name, function in vars(hookspecs).items()
    if inspect.isfunction(function) and hasattr(function, f"{hookspecs.PROJECT}_spec")
]


def test_there_are_exactly_the_eight_hooks() -> None:
    assert sorted(SPECS) == [
        "hermes_guarded_paths",
        "hermes_permission_providers",
        "hermes_problems",
        "hermes_resources",
        "hermes_schemas",
        "hermes_tools",
        "hermes_write_roots",
        "hermes_yielding_tools",
    ]
    assert sorted(hookspecs.__all__) == sorted([*SPECS, "PROJECT", "hookimpl", "hookspec"])


@pytest.mark.parametrize("name", SPECS)
def test_each_hook_is_typed_and_says_what_to_return_and_when_it_is_called(name: str) -> None:
    function = getattr(hookspecs, name)
    signature = inspect.signature(function)
    assert list(signature.parameters) == []
    assert signature.return_annotation != inspect.Signature.empty
    doc = inspect.getdoc(function) or ""
    assert "Returns:" in doc
    assert "Called " in doc


@pytest.mark.parametrize("name", SPECS)
def test_each_hook_is_documented_and_tested(name: str) -> None:
    assert f"`{name}()`" in (ROOT / "docs" / "plugins.md").read_text()
    loader_tests = ("test_plugins.py", "test_lifecycle.py")  # the resource and problem hooks: test_lifecycle
    assert any(name in (ROOT / "tests" / test).read_text() for test in loader_tests)


def test_the_marker_is_the_projects() -> None:
    @hookimpl
    def hermes_tools() -> list[object]:
        return []

    assert hasattr(hermes_tools, f"{hookspecs.PROJECT}_impl")
