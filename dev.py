#!/usr/bin/env python3
"""Set everything up and run one of the project's jobs. Needs only Python 3.11+ with pip.

    python3 dev.py demo    # the main job: the demo
    python3 dev.py test    # the whole test suite, then lint, type checks and the docs build
    python3 dev.py suite   # the official JSON-Schema-Test-Suite against s.from_json_schema: a table of counts
    python3 dev.py bench   # the benchmarks: against the peer libraries, the adapters, MCP, plugin discovery, start-up
    python3 dev.py fuzz [N]  # the fuzz targets with N inputs each (default 5,000), random, with statistics
    python3 dev.py lint    # ruff and mypy only
    python3 dev.py docs    # build the documentation site (mkdocs --strict) into site/

The first run creates ``.venv`` and installs the project into it (editable,
with the extras the job needs); later runs reinstall only when a
``pyproject.toml`` changed. The test and suite jobs also fetch the official
JSON-Schema-Test-Suite, once, into ``.cache/`` (from PyPI: it ships in jsonschema's sdist).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import venv
from pathlib import Path, PurePosixPath

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
    "suite": "test",
}

# The official JSON-Schema-Test-Suite: fetched into SUITE_CACHE/<jsonschema version>/, laid out as a
# checkout of the suite is (tests/draft2020-12/...), unless SUITE_VARIABLE names such a checkout.
SUITE_CACHE = ROOT / ".cache" / "json-schema-test-suite"
SUITE_VARIABLE = "JSON_SCHEMA_TEST_SUITE"
# What is taken from the source distribution, under its json/ folder: the draft the tests run, and the licence.
_SUITE_PARTS = (("tests", "draft2020-12"), ("LICENSE",))


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
    pip = [PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"]
    plugins = [arg for path in sorted((ROOT / "plugins").glob("*/pyproject.toml")) for arg in ("-e", path.parent)]
    # One line per step pip takes; the rest (build back ends print warnings that are not ours to show) only if
    # it fails.
    with subprocess.Popen(
        [str(a) for a in (*pip, "-e", wanted, *plugins)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        output = []
        for line in process.stdout:
            output.append(line)
            step = _step(line)
            if step:
                print(f"  {step}", flush=True)
    if process.returncode != 0:
        sys.stderr.write("".join(output))
        sys.exit("installation failed")
    stamp.write_text(digest.hexdigest())


# What pip says at each step, shortened: (start of its line, what is shown instead).
_STEPS = (
    ("Obtaining file://", "found "),
    ("Collecting ", "fetching "),
    ("Building editable for ", "building "),
    ("Installing collected packages: ", "installing "),
    ("Successfully installed ", "installed "),
)


def _step(line: str) -> str | None:
    """The line to show for a line of pip's output, or None for one that is not a step."""
    for start, shown in _STEPS:
        if line.startswith(start):
            text = line[len(start) :].strip()
            if start == "Obtaining file://":
                folder = Path(text)
                text = "hermesos-core" if folder == ROOT else folder.name
            return shown + (text if len(text) <= 100 else text[:97] + "...")
    return None


def suite_version() -> str:
    """The jsonschema release whose source distribution the suite is taken from, as pinned in pyproject.toml."""
    import tomllib  # noqa: PLC0415 - Python 3.11's: imported once the version is known to be new enough

    with (ROOT / "pyproject.toml").open("rb") as file:
        version: str = tomllib.load(file)["tool"]["hermesos"]["json-schema-test-suite"]["jsonschema"]
    return version


def _fetch_suite() -> None:
    """Fetch the JSON-Schema-Test-Suite from PyPI, once per pinned version, unless SUITE_VARIABLE names a copy.

    The suite ships in jsonschema's source distribution (``json/``), so pip
    downloads that from PyPI like any package; its draft 2020-12 tests are
    unpacked into ``.cache/json-schema-test-suite/<version>/``.
    """
    if os.environ.get(SUITE_VARIABLE):
        return
    version = suite_version()
    target = SUITE_CACHE / version
    if (target / "tests").is_dir():
        return
    print(f"fetching the JSON-Schema-Test-Suite (in jsonschema {version}'s source distribution) ...", flush=True)
    SUITE_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=SUITE_CACHE) as scratch:
        # Only jsonschema itself as source: the build back end pip prepares its metadata with may be a wheel.
        download = [PYTHON, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
        download += ["--no-binary", "jsonschema", "--dest", scratch, f"jsonschema=={version}"]
        done = subprocess.run([str(a) for a in download], cwd=ROOT, capture_output=True, text=True, check=False)
        archives = sorted(Path(scratch).glob("jsonschema-*.tar.gz"))
        if done.returncode != 0 or not archives:
            sys.stderr.write(done.stdout + done.stderr)
            sys.exit(
                f"could not download jsonschema {version}'s source distribution from PyPI, which holds the "
                "JSON-Schema-Test-Suite the tests run: check the network and run again, or set "
                f"{SUITE_VARIABLE} to a checkout of the suite"
            )
        staged = Path(scratch) / "suite"
        if not _unpack_suite(archives[0], staged):
            sys.exit(f"jsonschema {version}'s source distribution has no json/tests/draft2020-12/: pin another release")
        staged.rename(target)


def _unpack_suite(archive: Path, into: Path) -> bool:
    """Unpack the suite's parts of the sdist *archive* into *into*; whether it had the draft's tests."""
    found = False
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts  # jsonschema-<version>/json/tests/draft2020-12/...
            inner = parts[2:]
            if not member.isfile() or parts[1:2] != ("json",) or ".." in parts:
                continue
            if not any(inner[: len(part)] == part for part in _SUITE_PARTS):
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            path = into.joinpath(*inner)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(source.read())
            found = found or inner[:2] == _SUITE_PARTS[0]
    return found


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
    if job in ("test", "suite"):
        _fetch_suite()
    if job == "demo":
        return _run(PYTHON, ROOT / "examples" / "demo.py", *rest)
    if job == "bench":
        core = _run(PYTHON, ROOT / "bench" / "bench_core.py", *rest)
        adapters = _run(PYTHON, ROOT / "bench" / "bench_adapters.py")
        mcp = _run(PYTHON, ROOT / "bench" / "bench_mcp.py")
        mcp_remote = _run(PYTHON, ROOT / "bench" / "bench_mcp_remote.py")
        plugins = _run(PYTHON, ROOT / "bench" / "bench_plugins.py")
        startup = _run(PYTHON, ROOT / "bench" / "bench_startup.py")
        lazy = _run(PYTHON, ROOT / "bench" / "bench_mcp_lazy.py")
        return core or adapters or mcp or mcp_remote or plugins or startup or lazy
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
    if job == "suite":
        return _run(PYTHON, ROOT / "tests" / "test_json_schema_suite.py", *rest)
    if job == "lint":
        return _lint()
    if job == "docs":
        return _docs()
    # Two processes (the machine's cores); conftest builds the wheels and the shared layer of the install tests
    # once for both, under a lock. "-n 0" after the job's name runs everything in this one.
    status = _run(PYTHON, "-m", "pytest", "-n", "2", *rest)
    lint = _lint()
    docs = _docs()
    return status or lint or docs


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
