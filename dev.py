#!/usr/bin/env python3
"""Set everything up and run one of the project's jobs. Needs only Python 3.11+ with pip.

    python3 dev.py demo    # the main job: the demo
    python3 dev.py test    # the whole test suite, then lint, type checks and the docs build
    python3 dev.py bench   # the benchmarks: against the peer libraries, the adapters, MCP, plugin discovery, start-up
    python3 dev.py fuzz [N]  # the fuzz targets with N inputs each (default 5,000), random, with statistics
    python3 dev.py lint    # ruff and mypy only
    python3 dev.py docs    # build the documentation site (mkdocs --strict) into site/

The first run creates ``.venv`` and installs the project into it (editable,
with the extras the job needs); later runs reinstall only when a
``pyproject.toml`` changed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")

EXTRAS = {
    "demo": "examples",
    "test": "test,lint,docs",
    "lint": "lint",
    "docs": "docs",
    "bench": "bench",
    "fuzz": "test",
}


def _run(*args: str | Path) -> int:
    return subprocess.call([str(a) for a in args], cwd=ROOT)


def _setup(extras: str) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py may be started by an older python3
        sys.exit(f"hermesos-core needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print("creating .venv ...", flush=True)
        venv.create(VENV, with_pip=True)
    wanted = ".[" + extras + "]" if extras else "."
    digest = hashlib.sha256(wanted.encode())
    for pyproject in sorted(ROOT.glob("**/pyproject.toml")):
        if ".venv" not in pyproject.parts:
            digest.update(pyproject.read_bytes())
    stamp = VENV / f".installed-{extras or 'core'}"
    if stamp.exists() and stamp.read_text() == digest.hexdigest():
        return
    print(f"installing hermesos-core{wanted[1:]} and the bundled plugins into .venv ...", flush=True)
    pip = [PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    plugins = [arg for path in sorted((ROOT / "plugins").glob("*/pyproject.toml")) for arg in ("-e", path.parent)]
    # Quiet unless it fails: build back ends print warnings that are not ours to show.
    done = subprocess.run(
        [str(a) for a in (*pip, "-e", wanted, *plugins)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit("installation failed")
    stamp.write_text(digest.hexdigest())


def _docs() -> int:
    """Build the documentation site with every warning an error, into site/."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.call([str(PYTHON), "-m", "mkdocs", "build", "--strict", "--quiet"], cwd=ROOT, env=env)


def _lint() -> int:
    failures = 0
    failures += _run(PYTHON, "-m", "ruff", "check", ".") != 0
    failures += _run(PYTHON, "-m", "ruff", "format", "--check", ".") != 0
    failures += _run(PYTHON, "-m", "mypy") != 0
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    """Run the job named in *argv*; return its exit status."""
    if len(argv) < 1 or argv[0] not in EXTRAS:
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    _setup(EXTRAS[job])
    if job == "demo":
        return _run(PYTHON, ROOT / "examples" / "demo.py", *rest)
    if job == "bench":
        core = _run(PYTHON, ROOT / "bench" / "bench_core.py", *rest)
        adapters = _run(PYTHON, ROOT / "bench" / "bench_adapters.py")
        mcp = _run(PYTHON, ROOT / "bench" / "bench_mcp.py")
        plugins = _run(PYTHON, ROOT / "bench" / "bench_plugins.py")
        startup = _run(PYTHON, ROOT / "bench" / "bench_startup.py")
        return core or adapters or mcp or plugins or startup
    if job == "fuzz":
        examples = rest[0] if rest else "5000"
        env = {**os.environ, "HERMESOS_FUZZ_EXAMPLES": examples, "HERMESOS_FUZZ_RANDOM": "1"}
        command = [
            PYTHON,
            "-m",
            "pytest",
            "tests/test_fuzz.py",
            "-q",
            "-s",
            "-p",
            "no:cacheprovider",
        ]
        return subprocess.call([str(a) for a in command], cwd=ROOT, env=env)
    if job == "lint":
        return _lint()
    if job == "docs":
        return _docs()
    status = _run(PYTHON, "-m", "pytest", *rest)
    lint = _lint()
    docs = _docs()
    return status or lint or docs


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
