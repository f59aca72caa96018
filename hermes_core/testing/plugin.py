"""The pytest plugin of ``hermesos-core[testing]``: fixtures for testing tools and plugins.

Loaded only where asked for, so that installing hermesos-core changes no
other project's test sessions: ``pytest -p hermes_core.testing.plugin``, the
same in the ``addopts`` of the project's pytest configuration, or
``pytest_plugins = ["hermes_core.testing.plugin"]`` in its top-level
``conftest.py``. It only defines fixtures: a test that asks for none is run
as if the plugin were not there.

* ``hermes_env``: the test runs with no ``HERMESOS_*`` variable, no user
  configuration and a fresh working directory (under ``tmp_path``), which
  it returns.
* ``hermes_runtime``: a factory, ``hermes_runtime(*sources, grants=(), ...)``,
  building a runtime of exactly the given tools, modules and installed
  distributions (:func:`hermes_core.testing.build_runtime`), in ``hermes_env``.
  Each runtime is opened (its resources too) and closed when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core._runtime._runtime import ResourceError, Runtime
from hermes_core.testing import build_runtime, isolated_environment

__all__ = ["hermes_env", "hermes_runtime"]


@pytest.fixture
def hermes_env(tmp_path: Path) -> Iterator[Path]:
    """No ``HERMESOS_*`` variable, no user configuration, and a fresh working directory, returned."""
    with isolated_environment(tmp_path / "hermes-env") as folder:
        yield folder


@pytest.fixture
def hermes_runtime(hermes_env: Path) -> Iterator[Callable[..., Runtime]]:
    """A factory of open runtimes holding exactly the tools of the given sources, in an isolated environment.

    ``hermes_runtime(tool, module, "hermesos-notes", grants=["notes:*"])``: see
    :func:`hermes_core.testing.build_runtime` for the arguments. Each runtime
    is opened (its resources with it) and closed when the test ends, the
    last made first; a resource that fails to close fails the test's teardown.
    """
    made: list[Runtime] = []

    def make(*sources: Any, **options: Any) -> Runtime:
        runtime = build_runtime(*sources, **options)
        runtime.open()
        made.append(runtime)
        return runtime

    yield make
    failures: list[ResourceError] = []
    for runtime in reversed(made):
        try:
            runtime.close()
        except ResourceError as error:
            failures.append(error)
    if failures:
        raise failures[0]
