"""Progress from the file tools: fs.list of a large directory and fs.read of a large file, through a real Runtime.

Each test works on real files under ``tmp_path``. A listener is the caller's
``on_progress``; without one the same calls return the same results.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_fs
import pytest
from hermes_fs import LIST_PROGRESS_STEP, READ_PROGRESS_STEP

from hermes_core import Progress, Runtime

ENTRIES = 5 * LIST_PROGRESS_STEP + 37  # a directory of several steps, not a multiple of one


def runtime(root: Path, **options: Any) -> Runtime:
    """The six tools confined to *root*, granted everything they ask for."""
    return Runtime(hermes_fs.make_tools(root, **options), grants=["fs:*"], schemas=hermes_fs.hermes_schemas())


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root holding ``big/`` (ENTRIES empty files), ``small/`` (three) and ``large.txt`` (three steps and a bit).

    Made once for the module (5,000 files and 12 MB took seconds for each test): no test changes it.
    """
    root = tmp_path_factory.mktemp("progress") / "root"
    (root / "big").mkdir(parents=True)
    for index in range(ENTRIES):
        (root / "big" / f"f{index:05d}").touch()
    (root / "small").mkdir()
    for name in "abc":
        (root / "small" / name).touch()
    (root / "large.txt").write_bytes(b"0123456789abcdef" * ((3 * READ_PROGRESS_STEP + 4096) // 16))
    return root


def assert_increasing_to_the_total(reports: list[Progress], total: int) -> None:
    """*reports* move forward, the last completes *total*, and only the last says the total."""
    assert len(reports) >= 2, reports
    dones = [report.done for report in reports]
    assert dones == sorted(set(dones)), dones
    assert (reports[-1].done, reports[-1].total) == (total, total)
    assert all(report.total is None or report.total == total for report in reports)
    assert all(0 < report.done < total for report in reports[:-1])
    assert all(isinstance(report.message, str) and report.message for report in reports)


def test_listing_a_large_directory_reports_increasing_progress_ending_at_the_total(root: Path) -> None:
    reports: list[Progress] = []
    listed = runtime(root).call_sync("fs.list", {"path": "big"}, on_progress=reports.append)
    assert listed["total"] == ENTRIES
    assert len(listed["entries"]) == hermes_fs.MAX_LIST_ENTRIES
    assert_increasing_to_the_total(reports, ENTRIES)
    # Reports in the scan fall on whole steps, said as far as it got; the total is known only at the end.
    assert all(report.done % LIST_PROGRESS_STEP == 0 and report.total is None for report in reports[:-1])
    assert reports[0].message == f"listing 'big': {LIST_PROGRESS_STEP} entries so far"
    assert reports[-1].message == f"listed 'big': {ENTRIES} entries"


def test_an_awaited_listing_reports_from_the_worker_thread_to_the_listener(root: Path) -> None:
    reports: list[tuple[Progress, str]] = []

    async def main() -> dict[str, Any]:
        listen = lambda report: reports.append((report, threading.current_thread().name))  # noqa: E731
        result: dict[str, Any] = await runtime(root).call("fs.list", {"path": "big"}, on_progress=listen)
        return result

    assert asyncio.run(main())["total"] == ENTRIES
    assert_increasing_to_the_total([report for report, _ in reports], ENTRIES)
    # A plain handler runs on a worker thread, and its listener is called there: the caller hops if it must.
    assert {thread for _, thread in reports} != {threading.main_thread().name}


def test_the_same_calls_without_a_listener_return_the_same_and_small_work_reports_nothing(root: Path) -> None:
    rt = runtime(root, max_read_bytes=8 * READ_PROGRESS_STEP)
    heard: list[Progress] = []
    for tool, args in (("fs.list", {"path": "big"}), ("fs.list", {"path": "big", "offset": 4990})):
        assert rt.call_sync(tool, args) == rt.call_sync(tool, args, on_progress=heard.append)
    read = {"path": "large.txt"}
    assert rt.call_sync("fs.read", read) == rt.call_sync("fs.read", read, on_progress=heard.append)
    heard.clear()
    rt.call_sync("fs.list", {"path": "small"}, on_progress=heard.append)
    # A read of one step's bytes (with the 7 a read takes beyond its limit, to finish a character) is one step.
    rt.call_sync("fs.read", {"path": "large.txt", "limit": READ_PROGRESS_STEP - 7}, on_progress=heard.append)
    assert heard == []  # a listing of three names, a read of one step: nothing to show


def test_only_the_tools_that_report_set_a_context(root: Path) -> None:
    """A call of fs.stat, fs.write, fs.mkdir or fs.delete sets no call context, so costs nothing more."""
    contextual = {tool.name: tool.context for tool in hermes_fs.make_tools(root)}
    assert contextual == {
        "fs.read": True,
        "fs.write": False,
        "fs.list": True,
        "fs.stat": False,
        "fs.mkdir": False,
        "fs.delete": False,
    }


def test_reading_a_large_file_reports_the_bytes_read_ending_at_the_total(root: Path) -> None:
    size = (root / "large.txt").stat().st_size
    reports: list[Progress] = []
    rt = runtime(root, max_read_bytes=8 * READ_PROGRESS_STEP)
    read = rt.call_sync("fs.read", {"path": "large.txt"}, on_progress=reports.append)
    assert (read["size"], read["eof"], len(read["content"])) == (size, True, size)
    assert_increasing_to_the_total(reports, size)
    assert all(report.done % READ_PROGRESS_STEP == 0 and report.total == size for report in reports[:-1])
    assert reports[0].message == f"reading 'large.txt': {READ_PROGRESS_STEP} of {size} bytes"
    assert reports[-1].message == f"read 'large.txt': {size} bytes"
    # A part of the file from an offset: the total is what that part holds.
    reports.clear()
    part = rt.call_sync("fs.read", {"path": "large.txt", "offset": 16, "limit": size}, on_progress=reports.append)
    assert part["content"] == read["content"][16:]
    assert_increasing_to_the_total(reports, size - 16)


class _Entries:
    """os.scandir's iterator, counting what it yields and saying when it is closed."""

    def __init__(self, real: Any, closed: threading.Event) -> None:
        self.real, self.closed, self.yielded = real, closed, 0

    def __enter__(self) -> _Entries:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()
        self.closed.set()

    def __iter__(self) -> Iterator[os.DirEntry[str]]:
        for entry in self.real:
            self.yielded += 1
            yield entry


def test_a_listing_given_up_on_stops_reading_at_the_next_step(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller cancels the awaited call at the first report: the worker thread reads one step more, no further."""
    closed = threading.Event()
    made: list[_Entries] = []
    real_scandir = os.scandir

    def scandir(path: Any) -> _Entries:
        made.append(_Entries(real_scandir(path), closed))
        return made[-1]

    monkeypatch.setattr(hermes_fs.os, "scandir", scandir)
    cancelled = threading.Event()
    reports: list[Progress] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        task: asyncio.Task[Any] | None = None

        def listen(report: Progress) -> None:  # on the worker thread: cancel, then wait until the caller has gone
            reports.append(report)
            assert task is not None
            loop.call_soon_threadsafe(task.cancel)
            assert cancelled.wait(60)

        task = asyncio.ensure_future(runtime(root).call("fs.list", {"path": "big"}, on_progress=listen))
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled.set()

    asyncio.run(main())
    assert closed.wait(60)  # the stranded handler has finished reading
    [entries] = made
    # The first report came before entry STEP + 1; the next, before entry 2 * STEP + 1, found the call given up on.
    assert entries.yielded == 2 * LIST_PROGRESS_STEP + 1
    assert [report.done for report in reports] == [LIST_PROGRESS_STEP]


def test_a_handler_called_outside_a_call_reports_nothing_and_works(root: Path) -> None:
    """A tool's handler called directly (no runtime, no context) lists and reads as through one."""
    tools = {tool.name: tool for tool in hermes_fs.make_tools(root, max_read_bytes=8 * READ_PROGRESS_STEP)}
    listed = tools["fs.list"].handler({"path": "big", "offset": 0, "limit": 10})
    assert listed["total"] == ENTRIES
    read = tools["fs.read"].handler({"path": "large.txt", "offset": 0})
    assert read["eof"] is True


def test_the_hermesos_command_shows_a_long_listing_move_on_stderr(root: Path, tmp_path: Path) -> None:
    """Not on a terminal, ``hermesos call`` writes each report as a line; the result is on stdout as ever."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME"))}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home), "HERMESOS_FS_ROOT": str(root)})
    hermesos = str(Path(sys.executable).with_name("hermesos"))
    done = subprocess.run(
        [hermesos, "call", "fs.list", '{"path": "big", "limit": 1}', "--grant", "fs:read"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entries"] == [{"name": "f00000", "type": "file", "size": 0}]
    lines = done.stderr.splitlines()
    assert len(lines) >= 2, done.stderr
    assert f"{LIST_PROGRESS_STEP} listing 'big': {LIST_PROGRESS_STEP} entries so far" in lines[0]
    assert f"{ENTRIES}/{ENTRIES} listed 'big': {ENTRIES} entries" in lines[-1]
