"""Shared fixtures: a directory on sys.path to install small plugin distributions into."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import pytest

_serial = itertools.count()

_TEMPLATE = """
from hermes_core import define_tool, hookimpl, schema as s

def make(name, **extra):
    return define_tool(name=name, description="d", version="1.0.0", input=s.object({{}}), handler=dict, **extra)

{body}
"""


class Site:
    """A directory on sys.path to install distributions into.

    A distribution here is what an installer leaves behind: a module and a
    ``.dist-info`` directory with ``METADATA`` and ``entry_points.txt``, found
    by the same ``importlib.metadata`` discovery as any installed package.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.names: list[str] = []

    @staticmethod
    def plugin(body: str) -> str:
        """Plugin source: *body* after imports and a ``make(name, **fields)`` that defines a small tool."""
        return _TEMPLATE.format(body=textwrap.dedent(body))

    def install(self, source: str, *, requires: str = "hermesos-core>=0.1", version: str = "1.0.0") -> str:
        """Install a distribution whose one module is *source*; return its distribution name."""
        serial = next(_serial)
        dist, module = f"hermesos-unit-{serial}", f"hermesos_unit_{serial}"
        (self.path / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.path / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\nRequires-Dist: {requires}\n"
        )
        (info / "entry_points.txt").write_text(f"[hermesos.plugins]\nunit{serial} = {module}\n")
        self.names.append(dist)
        return dist


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Site:
    """A fresh site directory, first on sys.path, with the HERMESOS_ variables cleared but a root for hermesos-fs."""
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("HERMESOS_GRANTS", "HERMESOS_DISABLE_PLUGINS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    # The bundled hermesos-fs has no default root: one of its own, so that it loads with its tools.
    (tmp_path / "fs-root").mkdir()
    monkeypatch.setenv("HERMESOS_FS_ROOT", str(tmp_path / "fs-root"))
    return Site(tmp_path)
