"""The pytest plugin of ``hermesos-core[testing]``: fixtures for testing tools and plugins.

Registered through the ``pytest11`` entry point, so installing the extra is
all it takes. It only defines fixtures: a test that asks for none is run as
if the plugin were not there.

* ``hermes_env``: the test runs with no ``HERMESOS_*`` variable, no user
  configuration and a fresh working directory (under ``tmp_path``), which
  it returns.
* ``hermes_runtime``: a factory, ``hermes_runtime(*sources, grants=(), ...)``,
  building a runtime of exactly the given tools, modules and installed
  distributions (:func:`hermes_core.testing.build_runtime`), in ``hermes_env``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core.runtime import Runtime
from hermes_core.testing import build_runtime, isolated_environment

__all__ = ["hermes_env", "hermes_runtime"]


@pytest.fixture
def hermes_env(tmp_path: Path) -> Iterator[Path]:
    """No ``HERMESOS_*`` variable, no user configuration, and a fresh working directory, returned."""
    with isolated_environment(tmp_path / "hermes-env") as folder:
        yield folder


@pytest.fixture
def hermes_runtime(hermes_env: Path) -> Callable[..., Runtime]:
    """A factory of runtimes holding exactly the tools of the given sources, in an isolated environment.

    ``hermes_runtime(tool, module, "hermesos-notes", grants=["notes:*"])``: see
    :func:`hermes_core.testing.build_runtime` for the arguments.
    """

    def make(*sources: Any, **options: Any) -> Runtime:
        return build_runtime(*sources, **options)

    return make
