"""Shared fixtures: a directory on sys.path to install small plugin distributions into, and real environments.

The install tests (test_plugins_installed, test_cli_install, test_scaffold,
the tutorial in test_docs) each want a fresh virtual environment of their own
with pip-installed wheels. Building the wheels and installing the third-party
requirements of hermesos-core and of the bundled plugins (the MCP SDK and its
dependencies) is the slow part and the same each time, so it is done once per
run: :func:`wheels` builds every wheel once, and :func:`environments` makes
each test's fresh environment on top of one shared layer of those
requirements.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
import venv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    import fcntl
except ImportError:  # Windows: no pytest -n there by default; one process builds alone
    fcntl = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[1]
#: The bundled plugins and the fixture distributions under tests/fixtures/plugins, as project folders.
BUNDLED = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").exists())
FIXTURES = sorted(p for p in (ROOT / "tests" / "fixtures" / "plugins").iterdir() if (p / "pyproject.toml").exists())

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


# -- real environments, for the install tests --------------------------------------------------


@contextlib.contextmanager
def _built_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[tuple[Path, bool]]:
    """A folder *name* shared by every process of the run (``pytest -n``), and whether it still has to be built.

    The processes take a lock in turn: the first builds the folder, the others
    wait for it and use what it built. Building the checkout's wheels in two
    processes at once would race in its build folders.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # under pytest -n, each process's base folder is one of the run's
        shared = shared.parent
    folder = shared / name
    with (shared / f"{name}.lock").open("w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".done"
        yield folder, not done.exists()
        done.touch()


def _bin(environment: Path) -> Path:
    return environment / ("Scripts" if os.name == "nt" else "bin")


def _python(environment: Path) -> Path:
    return _bin(environment) / ("python.exe" if os.name == "nt" else "python")


def _purelib(environment: Path) -> Path:
    """The site-packages folder of *environment*, as its own Python names it."""
    done = subprocess.run(
        [_python(environment), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip())


def _pip(environment: Path, *args: str) -> None:
    done = subprocess.run(
        [_python(environment), "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# What a build of a project does not need: what is not its source, and what earlier builds and tools left.
_NOT_SOURCES = shutil.ignore_patterns(
    ".*", "build", "dist", "site", "*.egg-info", "__pycache__", "node_modules", "plugins", "tests", "bench", "docs"
)


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of wheels of hermesos-core, the bundled plugins and the fixture plugins, built once for the run."""
    with _built_once(tmp_path_factory, "hermesos-wheels") as (folder, build):
        if build:
            shutil.rmtree(folder, ignore_errors=True)  # what a process that failed half-way left
            # Built from copies: a build writes its build/ and *.egg-info folders beside the sources, and one
            # left there by an earlier build can break the next; the checkout is never written.
            sources = folder.parent / f"{folder.name}-sources"
            shutil.rmtree(sources, ignore_errors=True)
            copies = [shutil.copytree(p, sources / p.name, ignore=_NOT_SOURCES) for p in (ROOT, *BUNDLED, *FIXTURES)]
            done = subprocess.run(
                [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(folder)]
                + [str(p) for p in copies],
                check=False,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stdout + done.stderr
    return folder


class Environments:
    """Makes fresh virtual environments, each with its own ``hermesos``, over one shared layer of requirements.

    The shared layer is a virtual environment holding pip and the third-party
    requirements of hermesos-core and the bundled plugins. A new environment
    is an empty virtual environment whose site-packages has a ``.pth`` line
    pointing at the layer's: what pip installs into it goes into its own
    site-packages and its own ``bin``, comes first on its path, and pip
    uninstalls only from there (it leaves what lies outside the environment
    alone), so tests cannot change what another test sees. Installing
    hermesos-core itself, its plugins or a test's own packages is left to
    each environment.
    """

    def __init__(self, layer: Path, wheels: Path) -> None:
        self.layer = layer
        self.wheels = wheels
        self._site = _purelib(layer)

    def new(self, path: Path, *, core: bool = True) -> Path:
        """A fresh environment at *path*; with *core*, hermesos-core installed into it from its wheel."""
        venv.create(path, with_pip=False)
        (_purelib(path) / "_hermesos_shared_layer.pth").write_text(f"{self._site}\n")
        if core:
            # By file: the bare name could resolve to another project's release on the index.
            (wheel,) = self.wheels.glob("hermesos_core-*.whl")
            _pip(path, "install", "--no-deps", str(wheel))
        return path


@pytest.fixture(scope="session")
def environments(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Environments:
    """Fresh virtual environments over a layer of third-party requirements installed once for the run."""
    with _built_once(tmp_path_factory, "hermesos-layer") as (folder, build):
        layer = folder / "venv"
        if build:
            shutil.rmtree(folder, ignore_errors=True)
            venv.create(layer, with_pip=True)
            requirements = [
                requirement
                for project in (ROOT, *BUNDLED)
                for requirement in tomllib.loads((project / "pyproject.toml").read_text())["project"]["dependencies"]
                if not requirement.startswith("hermesos-")
            ]
            _pip(layer, "install", *requirements)
    return Environments(layer, wheels)


# -- servers in their own processes: none outlives its test; a real HTTP server's URL ---------------------

SERVE = [sys.executable, "-m", "hermes_core", "serve"]


def _children() -> set[int]:
    """The pids of this process's children (Linux: read from /proc; elsewhere, nothing is checked)."""
    me = str(os.getpid())
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


@pytest.fixture
def no_server_outlives_its_test() -> Iterator[None]:
    """Fail a test that leaves a child process (a server) running, and kill what it left."""
    before = _children()
    yield
    deadline = time.monotonic() + 60
    while (left := _children() - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:  # a failure, but the next tests should not pay for it
        os.killpg(pid, signal.SIGKILL)
    assert not left, f"server processes outlived the test: {sorted(left)}"


@pytest.fixture
def serving_http() -> Any:
    """``serving_http(environment)``: a context manager running a real HTTP server (see :func:`_serving_http`)."""
    return _serving_http


@contextlib.contextmanager
def _serving_http(environment: dict[str, str]) -> Iterator[str]:
    """A real ``hermesos serve --transport http --port 0`` in its own process group; the URL it printed."""
    process = subprocess.Popen(
        [*SERVE, "--transport", "http", "--port", "0"],
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = process.stderr.readline() if process.stderr else ""
        found = re.search(r"http://\S+/mcp", line)
        assert found is not None, f"the server printed no URL: {line!r}"
        yield found.group()
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate(timeout=10)
