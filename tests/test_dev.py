"""dev.py's test and lint jobs: every stage runs, and the job ends with one line per stage and the verdict.

Before, ``python3 dev.py test`` ended on mypy's "Success", 25 lines below the
one test that had failed. The stages here are real commands run by the real
:func:`run_stages`: small Python programs that pass, fail, or print what
pytest prints for a failing test.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dev() -> ModuleType:
    """dev.py, imported (it has no side effect when imported)."""
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def summary(printed: str) -> list[str]:
    """The lines after the job's rule, durations made ``(T)``."""
    tail = printed[printed.index("---- dev.py ") :].splitlines()[1:]
    return [re.sub(r"\((?:\d+m \d\ds|\d+s|\d+\.\ds)", "(T", line) for line in tail]


def test_a_failing_stage_is_named_last_and_the_others_still_run(
    dev: ModuleType, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest_failing = (
        "print('FAILED tests/test_x.py::test_y - AssertionError: boom')\n"
        "print('========= 1 failed, 3 passed, 2 deselected in 1.20s =========')\n"
        "raise SystemExit(1)"
    )
    status = dev.run_stages(
        "test",
        [
            ("tests", python(pytest_failing)),
            ("ruff", python("print('All checks passed!')")),
            ("format", python("raise SystemExit(1)")),
            ("mypy", python("print('Success: no issues found')")),
        ],
    )
    printed = capfd.readouterr().out
    assert status == 1
    assert "All checks passed!\n" in printed  # each stage's own output, as it came
    assert summary(printed) == [
        "tests   FAILED (T, 1 failed, 3 passed, 2 deselected)",
        "  FAILED tests/test_x.py::test_y - AssertionError: boom",
        "ruff    passed (T)",
        "format  FAILED (T)",
        "mypy    passed (T)",
        "dev.py test: FAILED: tests, format (T)",
    ]


def test_when_every_stage_passes_the_last_line_says_so(dev: ModuleType, capfd: pytest.CaptureFixture[str]) -> None:
    status = dev.run_stages("lint", [("ruff", python("pass")), ("format", python("pass")), ("mypy", python("pass"))])
    assert status == 0
    assert summary(capfd.readouterr().out) == [
        "ruff    passed (T)",
        "format  passed (T)",
        "mypy    passed (T)",
        "dev.py lint: passed, all 3 stages (T)",
    ]


def test_many_failed_tests_are_listed_twenty_at_most(dev: ModuleType, capfd: pytest.CaptureFixture[str]) -> None:
    code = "for i in range(25): print(f'FAILED tests/test_x.py::test_{i}')\nraise SystemExit(1)"
    assert dev.run_stages("test", [("tests", python(code))]) == 1
    lines = summary(capfd.readouterr().out)
    assert lines[1:3] == ["  FAILED tests/test_x.py::test_0", "  FAILED tests/test_x.py::test_1"]
    assert lines[-2:] == ["  ... and 5 more: pytest's short summary above", "dev.py test: FAILED: tests (T)"]


def test_the_test_job_is_pytest_then_lint_then_the_docs_and_lint_is_the_middle(dev: ModuleType) -> None:
    test = dev.stages("test", ["-k", "schema"])
    assert [name for name, _ in test] == ["tests", "ruff", "format", "mypy", "docs"]
    assert test[0][1][-2:] == ["-k", "schema"]  # what follows the job's name goes to pytest
    assert [name for name, _ in dev.stages("lint", [])] == ["ruff", "format", "mypy"]
    assert dev.stages("lint", [])[2][1][1:] == ["-m", "mypy"]


@pytest.mark.parametrize(
    ("seconds", "shown"), [(0.42, "0.4s"), (9.94, "9.9s"), (12.4, "12s"), (59.6, "1m 00s"), (221, "3m 41s")]
)
def test_durations_read_as_a_person_says_them(dev: ModuleType, seconds: float, shown: str) -> None:
    assert dev.duration(seconds) == shown


def test_bytecode_is_kept_even_where_the_environment_says_not_to_write_it(
    dev: ModuleType, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With PYTHONDONTWRITEBYTECODE, every test process compiled and rewrote every test module again: seconds each."""
    show = "import sys; print('writes bytecode:', not sys.dont_write_bytecode)"
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    assert dev.run_stages("test", [("tests", python(show))]) == 0
    assert "writes bytecode: True\n" in capfd.readouterr().out
    # The control: the variable reaches a process started otherwise.
    done = subprocess.run(python(show), capture_output=True, text=True, check=True)
    assert done.stdout == "writes bytecode: False\n"
