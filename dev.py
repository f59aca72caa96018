#!/usr/bin/env python3
"""Set everything up and run one of the project's jobs. Needs only Python 3.11+ with pip.

    python3 dev.py demo    # the main job: the demo
    python3 dev.py test    # the quick test suite, lint, type checks and the docs build; a line per stage at the end
    python3 dev.py test --full  # the same with the slow tests too, as CI runs it (CI set in the environment)
    python3 dev.py suite   # the official JSON-Schema-Test-Suite against s.from_json_schema: a table of counts
    python3 dev.py bench   # the benchmarks: against the peer libraries, the adapters, MCP, plugin discovery, start-up
    python3 dev.py fuzz [N]  # the fuzz targets with N inputs each (default 5,000), random, with statistics
    python3 dev.py lint    # ruff, ruff format --check and mypy only; a line per stage at the end
    python3 dev.py docs    # build the documentation site (mkdocs --strict) into site/
    python3 dev.py cluster [N]  # nginx in front of N hermesos serve replicas (default 2), until Ctrl-C (deploy/)
    python3 dev.py loadtest     # serve behind nginx at load, 1, 2 and 4 replicas: calls/s and p50/p99, a table

The first run creates ``.venv`` and installs the project into it (editable,
with the extras the job needs); later runs reinstall only when a
``pyproject.toml`` changed. The test and suite jobs also fetch the official
JSON-Schema-Test-Suite, once, into ``.cache/`` (from PyPI: it ships in jsonschema's sdist).
The test, cluster and loadtest jobs need nginx (the tests of replicas behind
it): where it is missing, they install it with ``apt-get install -y nginx``
when run as root on a system that has apt-get, and say so in one line;
elsewhere the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
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
    "cluster": "mcp",
    "loadtest": "mcp",
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


# -- nginx, for the tests of replicas behind it (deploy/) -------------------------------------------

# Where Debian puts nginx, off a normal user's PATH.
_SBIN = os.pathsep.join(["/usr/sbin", "/usr/local/sbin"])


def nginx_plan(*, search: str | None = None, euid: int | None = None) -> str:
    """What to do about nginx: ``"found"``, ``"install"`` (with apt-get), or why it cannot be installed here.

    *search* is the ``PATH`` to look in (this process's and the sbin folders
    by default), *euid* the user it runs as (this process's by default).
    """
    if search is None:
        search = os.pathsep.join(filter(None, [os.environ.get("PATH"), _SBIN]))
    if shutil.which("nginx", path=search):
        return "found"
    if not hasattr(os, "geteuid") or not shutil.which("apt-get", path=search):
        return "this system has no apt-get to install it with; install nginx as the system does"
    if (os.geteuid() if euid is None else euid) != 0:
        return "installing it needs root: sudo apt-get install nginx"
    return "install"


def _nginx() -> None:
    """Install nginx with apt-get where it is missing and can be (see :func:`nginx_plan`), saying so in one line."""
    plan = nginx_plan()
    if plan == "found":
        return
    if plan != "install":
        print(f"nginx is not installed, and {plan}; the tests of replicas behind nginx will be skipped", flush=True)
        return
    print("installing nginx (apt-get install -y nginx), for the tests of replicas behind it ...", flush=True)
    apt = shutil.which("apt-get", path=os.pathsep.join(filter(None, [os.environ.get("PATH"), _SBIN]))) or "apt-get"
    # RUNLEVEL=1: the package does not start a system nginx on port 80 (invoke-rc.d); the tests run their own.
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "RUNLEVEL": "1"}
    install = [apt, "install", "-y", "-q", "--no-install-recommends", "nginx"]
    done = subprocess.run(install, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:  # a fresh machine's package lists may be empty or stale
        subprocess.run([apt, "update", "-q"], capture_output=True, text=True, env=env, check=False)
        done = subprocess.run(install, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        reason = said[-1] if said else f"exit status {done.returncode}"
        print(f"nginx could not be installed ({reason}); the tests of replicas behind nginx will be skipped")


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


# -- the stages of the test and lint jobs ------------------------------------------------------------
#
# A stage is a name and a command. Every stage runs, whichever failed before it, and the job ends with one
# line per stage and a last line naming the stages that failed: the verdict is the last thing on the screen,
# not a screen above the last tool's "Success".

_LINT_STAGES = (
    ("ruff", ("-m", "ruff", "check", ".")),
    ("format", ("-m", "ruff", "format", "--check", ".")),
    ("mypy", ("-m", "mypy")),
)
# The documentation site built with every warning an error (into site/); no notice of MkDocs 2.
_DOCS_STAGE = ("docs", ("-m", "mkdocs", "build", "--strict", "--quiet"))
_QUIET_MKDOCS = {"NO_MKDOCS_2_WARNING": "1"}
# What pytest's short summary says of each test that did not pass (-ra): shown again under the stages.
_NOT_PASSED = re.compile(r"^(FAILED|ERROR) \S")
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
# pytest's last line: "===== 3 failed, 4297 passed, 113 deselected in 71.20s (0:01:11) =====".
_COUNTS = re.compile(r"=+ (\d+ \w+(?:, \d+ \w+)*) in [0-9.]+s(?: \([0-9:]+\))? =+")
_SHOWN = 20


def stages(job: str, pytest_args: list[str]) -> list[tuple[str, list[str]]]:
    """The stages of *job* (``test`` or ``lint``): each its name and the command it runs."""
    found = [(name, [str(PYTHON), *args]) for name, args in _LINT_STAGES]
    if job == "test":
        # Two processes (the machine's cores), each taking the next test when it is free (worksteal: a few tests
        # take seconds, most milliseconds); conftest builds the wheels and the shared layer of the install tests
        # once for both, under a lock. "-n 0" after the job's name runs everything in this one; "--full" runs
        # the slow tests too, as CI does (conftest.py).
        found.insert(0, ("tests", [str(PYTHON), "-m", "pytest", "-n", "2", "--dist", "worksteal", *pytest_args]))
        found.append((_DOCS_STAGE[0], [str(PYTHON), *_DOCS_STAGE[1]]))
    return found


def run_stages(job: str, commands: list[tuple[str, list[str]]]) -> int:
    """Run every stage of *job* in turn, showing its output as it comes; then one line per stage.

    Returns:
        0 if every stage passed, else 1.
    """
    env = {**os.environ, **_QUIET_MKDOCS}
    # Bytecode is kept (in __pycache__ folders, which git ignores) even where PYTHONDONTWRITEBYTECODE is set:
    # without it, each test process rewrites every test module's assertions anew (3.5 s of CPU each), and the
    # processes the tests start compile the checkout's modules again. (A PYTHONPYCACHEPREFIX instead would
    # also hide the bytecode pip wrote for every installed package: 6,000 modules compiled again.)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if sys.stdout.isatty():  # their output goes through a pipe to be read: keep the colours a terminal would get
        env.update(FORCE_COLOR="1", PY_COLORS="1", MYPY_FORCE_COLOR="1")
    results: list[tuple[str, bool, float, list[str], list[str]]] = []
    began = time.monotonic()
    for name, command in commands:
        print(f"==> {name}: {' '.join(_shown(part) for part in command)}", flush=True)
        started = time.monotonic()
        status, lines = _tee(command, env)
        plain = [_COLOURS.sub("", line).rstrip() for line in lines]
        counts = [found.group(1) for line in plain if (found := _COUNTS.fullmatch(line))]
        not_passed = [line for line in plain if _NOT_PASSED.match(line)]
        results.append((name, status == 0, time.monotonic() - started, counts[-1:], not_passed))
    width = max(len(name) for name, *_ in results) + 2
    print(f"\n{'-' * 20} dev.py {job} {'-' * 20}")
    for name, passed, took, counts, not_passed in results:
        said = ", ".join([duration(took), *counts])  # and pytest's counts, for the tests
        print(f"{name.ljust(width)}{'passed' if passed else 'FAILED'} ({said})")
        for line in not_passed[:_SHOWN]:  # the tests that did not pass, under their stage
            print(f"  {line}")
        if len(not_passed) > _SHOWN:
            print(f"  ... and {len(not_passed) - _SHOWN} more: pytest's short summary above")
    failed = [name for name, passed, *_ in results if not passed]
    if failed:
        print(f"dev.py {job}: FAILED: {', '.join(failed)} ({duration(time.monotonic() - began)})")
        return 1
    print(f"dev.py {job}: passed, all {len(results)} stages ({duration(time.monotonic() - began)})")
    return 0


def _tee(command: list[str], env: dict[str, str]) -> tuple[int, list[str]]:
    """Run *command*, its output and errors shown as they come and kept; its exit status and its lines."""
    lines: list[str] = []
    with subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            lines.append(line)
    return process.returncode, lines


def _shown(part: str) -> str:
    """A part of a command as shown: the environment's Python by its name, not its whole path."""
    return "python" if part == str(PYTHON) else part


def duration(seconds: float) -> str:
    """*seconds* for a person: ``0.4s``, ``12s``, ``3m 41s``."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


def main(argv: list[str]) -> int:
    """Run the job named in *argv*; return its exit status."""
    if len(argv) < 1 or argv[0] not in EXTRAS:
        print(__doc__)
        return 2
    job, rest = argv[0], argv[1:]
    _setup(EXTRAS[job])
    if job in ("test", "suite"):
        _fetch_suite()
    if job in ("test", "cluster", "loadtest"):
        _nginx()
    if job == "cluster":
        return _run(PYTHON, ROOT / "deploy" / "cluster.py", *rest)
    if job == "loadtest":
        return _run(PYTHON, ROOT / "bench" / "bench_serve_load.py", *rest)
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
    if job == "docs":  # the site, into site/
        return subprocess.call([str(PYTHON), *_DOCS_STAGE[1]], cwd=ROOT, env={**os.environ, **_QUIET_MKDOCS})
    return run_stages(job, stages(job, rest))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
