"""The suite's own rule on time: no test asserts a bound on wall time that a busy machine can break.

On a loaded machine of two cores, a test that passed alone failed in the whole
run: it measured a check's duration on the wall clock, which load stretches,
and built its expectation on that. Each kind of measurement has its clock:

* work (a check, a parse, a hostile input's cost) is measured in CPU time,
  ``time.process_time()`` (or ``thread_time()``), which waiting for a core
  does not add to;
* waiting for what should happen (a server's start, a process's exit) is a
  deadline on ``time.monotonic()`` far beyond any load, since it ends as soon
  as the thing happens;
* the order of two events (a call ended while its handler ran on) is shown
  with events (``threading.Event``, a barrier), not with a clock.

This test reads every test module and fails on ``time.perf_counter()`` or
``time.time()`` (a wall clock, for work), and on an assertion that a
``time.monotonic()`` difference, directly or through a function of the module
returning one, is below a bound shorter than :data:`GENEROUS`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(
    path
    for path in [*(ROOT / "tests").rglob("*.py"), *(ROOT / "plugins").glob("*/tests/*.py")]
    if path.name.startswith("test_") or path.name == "conftest.py"  # not the servers and catalogues they use
)
#: The shortest bound on elapsed wall time an assertion may set, in seconds: waiting out what a working run
#: does in well under a second, under any load.
GENEROUS = 15
_WALL_CLOCKS = {"perf_counter", "perf_counter_ns", "time", "time_ns"}


def _clock(node: ast.AST, names: set[str]) -> str | None:
    """The clock *node* reads, if it is a call of ``time.<one of names>()`` or of a bare ``<one of names>()``."""
    if not isinstance(node, ast.Call):
        return None
    function = node.func
    if isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) and function.value.id == "time":
        return function.attr if function.attr in names else None
    # A bare time() may be anything; a bare perf_counter() or monotonic() is time's.
    return function.id if isinstance(function, ast.Name) and function.id in names - {"time"} else None


def _is_elapsed(node: ast.AST, helpers: set[str]) -> bool:
    """Whether *node* is ``monotonic() - x`` or a call of a function of the module that returns one."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return _clock(node.left, {"monotonic"}) is not None
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers


def wall_clock_bounds(source: str) -> list[tuple[int, str]]:
    """Where *source* measures work on a wall clock or asserts a short bound on elapsed wall time: (line, what)."""
    tree = ast.parse(source)
    helpers = {
        function.name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Return) and node.value is not None and _is_elapsed(node.value, set())
    }
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if wall := _clock(node, _WALL_CLOCKS):
            found.append((node.lineno, f"time.{wall}(), a wall clock: measure work with time.process_time()"))
        if not isinstance(node, ast.Assert):
            continue
        for compare in ast.walk(node.test):
            if not isinstance(compare, ast.Compare) or not _is_elapsed(compare.left, helpers):
                continue
            for operator, bound in zip(compare.ops, compare.comparators, strict=True):
                short = (
                    isinstance(bound, ast.Constant) and isinstance(bound.value, int | float) and bound.value < GENEROUS
                )
                if isinstance(operator, ast.Lt | ast.LtE) and short:
                    found.append((node.lineno, f"elapsed wall time under {bound.value} s: a busy machine breaks it"))
    return sorted(found)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_no_test_bounds_wall_time_where_load_can_break_it(path: Path) -> None:
    assert wall_clock_bounds(path.read_text(encoding="utf-8")) == []


def test_the_rule_finds_each_kind_of_bound_and_lets_the_right_clocks_be() -> None:
    source = """
import time
from time import monotonic

def took(check):
    started = time.monotonic()
    check()
    return time.monotonic() - started

def test():
    started = time.perf_counter()                       # 11: work on a wall clock
    assert time.monotonic() - started < 2                # 12: a short bound
    assert monotonic() - started <= 0.25                 # 13: a short bound
    assert took(print) < 5                               # 14: through a function returning elapsed time
    assert time.time() > 0                               # 15: a wall clock
    assert time.monotonic() - started < 60               # a generous bound: allowed
    assert took(print) < 30
    assert time.process_time() - started < 2             # CPU time: allowed
    while time.monotonic() - started < 1.5:              # not an assertion
        pass
"""
    assert [line for line, _ in wall_clock_bounds(source)] == [11, 12, 13, 14, 15]


# -- the two sizes: the quick run and the full run (conftest.py at the project's root) ------------------

_SIZED = """
import pytest

@pytest.fixture
def environments():
    return "a fresh environment"

def test_quick():
    pass

@pytest.mark.slow
def test_marked():
    pass

def test_installs(environments):
    pass

@pytest.mark.parametrize("case", [1, 2, 3])
def test_cases(case):
    pass

def test_named():
    pass

def test_the_slow_tests_named_are_tests(request):
    (top,) = [p for p in request.config.pluginmanager.get_plugins() if hasattr(p, "unknown_names")]
    assert top.unknown_names() == []
"""


def _sized_run(tmp_path: Path, *args: str, ci: str | None = None, lists: str = "") -> tuple[int, str]:
    """pytest in a project of :data:`_SIZED` under the root conftest, its lists extended by *lists*."""
    import os
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text() + lists)
    (tmp_path / "test_sized.py").write_text(_SIZED)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: as in pyproject.toml\n")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stdout.strip().splitlines()[-1]


LISTS = """
SLOW_TESTS = (*SLOW_TESTS, "test_sized.py::test_named")
SLOW_MATRICES = (*SLOW_MATRICES, "test_sized.py::test_cases")
"""


def test_the_quick_run_leaves_the_slow_tests_out_and_the_full_run_or_ci_runs_them(tmp_path: Path) -> None:
    status, last = _sized_run(tmp_path, lists=LISTS)
    assert (status, last.split(" in ")[0]) == (0, "3 passed, 5 deselected")  # quick, cases[1], the names' check
    for args, ci in [(("--full",), None), ((), "true"), ((), "1")]:
        status, last = _sized_run(tmp_path, *args, ci=ci, lists=LISTS)
        assert (status, last.split(" in ")[0]) == (0, "8 passed"), (args, ci)
    status, last = _sized_run(tmp_path, ci="false", lists=LISTS)  # CI=false is no CI
    assert last.split(" in ")[0] == "3 passed, 5 deselected"


def test_a_slow_test_named_that_is_no_test_fails_the_run(tmp_path: Path) -> None:
    """A renamed test would otherwise be run in the quick suite again, without a word."""
    status, last = _sized_run(tmp_path, lists='SLOW_TESTS = (*SLOW_TESTS, "test_sized.py::test_renamed")\n')
    assert (status, last.split(" in ")[0]) == (1, "1 failed, 5 passed, 2 deselected")
    status, _ = _sized_run(tmp_path, "-n", "2", lists='SLOW_TESTS = (*SLOW_TESTS, "test_sized.py::test_renamed")\n')
    assert status == 1  # in two processes too: once, a name that is no test stopped both without a word
    status, _ = _sized_run(tmp_path, lists=LISTS)  # the positive control: names of tests that are there
    assert status == 0


def test_every_test_named_slow_is_a_test_of_its_module(request: pytest.FixtureRequest) -> None:
    """Of the modules this run collected (the whole suite, in a whole run)."""
    (top,) = [plugin for plugin in request.config.pluginmanager.get_plugins() if hasattr(plugin, "unknown_names")]
    assert top.unknown_names() == []
