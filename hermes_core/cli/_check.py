"""``hermesos check``: load every plugin, list every problem; with ``--timeout``, in a worker that can be stopped."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, TYPE_CHECKING, Any

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS, add_common, add_timeout

if TYPE_CHECKING:
    from hermes_core._plugins._discover import PluginSet


def _check_report(found: PluginSet) -> dict[str, Any]:
    """What ``check`` reports, as JSON data: how many plugins, how many healthy, every problem.

    The problems include those the healthy plugins' resources find when they
    are checked (:func:`_check_resources`).
    """
    problems = [
        {
            "distribution": p.origin.distribution,
            "version": p.origin.version,
            "entry_point": p.origin.entry_point,
            "error": type(p.error).__name__,
            "message": p.message,
            "fatal": p.fatal,
        }
        for p in found.problems
    ]
    return {
        "plugins": len(found.plugins),
        "healthy": sum(1 for p in found.plugins if p.ok),
        "problems": [*problems, *_check_resources(found)],
    }


def _check_resources(found: PluginSet) -> list[dict[str, Any]]:
    """Each healthy plugin's resources that can be checked (a ``check(progress)`` method), checked: their problems.

    A resource that holds servers listed from a cache starts them and
    compares (hermesos-mcp): what it finds is a problem of its plugin, which
    stays loaded. Each resource says on stderr, one line at a time, what it is
    checking. Under ``check --timeout``, the check is a step of the plugin the
    watcher times (its progress event), like the plugin's hooks.
    """
    from hermes_core._plugins._discover import PluginLoadError  # noqa: PLC0415 - only check needs it
    from hermes_core._tool._resources import raised  # noqa: PLC0415

    problems: list[dict[str, Any]] = []
    for plugin in found.plugins:
        if not plugin.ok:
            continue
        for label, resource in zip(plugin.resource_labels, plugin.resources, strict=True):
            check = getattr(resource, "check", None)
            if not callable(check):
                continue
            origin = plugin.origin
            _step(origin, "check of its resources")

            def progress(line: str, distribution: str = origin.distribution) -> None:
                print(f"hermesos check: {distribution}: {out.printable(line)}", file=sys.stderr, flush=True)

            try:
                found_problems = [str(problem) for problem in check(progress)]
            except Exception as error:  # a resource's own check failing is that plugin's problem, not check's
                found_problems = [f"{label} failed its check: {raised(error)}"]
            problems.extend(
                {
                    "distribution": origin.distribution,
                    "version": origin.version,
                    "entry_point": origin.entry_point,
                    "error": "PluginLoadError",
                    "message": str(PluginLoadError(origin, problem)),
                    "fatal": False,
                }
                for problem in found_problems
            )
    return problems


def _step(origin: Any, step: str) -> None:
    """The step's progress event for the watcher of ``check --timeout`` (as the loader logs each hook)."""
    logging = sys.modules.get("logging")  # imported by the worker, which has the handler; else nobody listens
    if logging is not None:
        logging.getLogger("hermes_core.plugins").debug("%s: %s", origin, step, extra={"plugin": origin, "step": step})


def _check(args: argparse.Namespace) -> int:
    if args.report_progress:
        return _check_worker(args)
    if args.timeout is None:
        report = _check_report(out.discover(args))
    else:
        try:
            report = _check_stopping(args)
        except _WorkerFailed as failed:
            print(f"hermesos check: error: {out.printable(str(failed))}", file=sys.stderr)
            return PROBLEMS
    problems = report["problems"]
    if args.json:
        out.print_json(report)
        return PROBLEMS if problems else OK
    style = out.Style(sys.stdout)
    for problem in problems:
        label = style.red("problem") if problem.get("fatal", True) else style.yellow("warning")
        print(f"{label}: {out.printable(problem['message'], lines=True)}")
    summary = (
        f"{out.count(report['plugins'], 'plugin')}, {report['healthy']} healthy, {out.count(len(problems), 'problem')}"
    )
    print(style.red(summary) if problems else style.green(summary))
    return PROBLEMS if problems else OK


# -- check --timeout: discovery in a worker process, which can be stopped ------------------
#
# A hung import cannot be interrupted in the process running it, so 'check --timeout' runs
# 'check --json' in a new process (the worker) and watches it. The worker reports each plugin's
# steps (its import, each hook: plugins.py logs them) on stderr as they begin; a plugin that
# has not finished within the limit is the one the worker is on. It is stopped, reported, and
# the worker runs again without that distribution, until a run finishes.

_PROGRESS = "hermesos-progress "  # the prefix of the worker's progress lines on its stderr


class _WorkerFailed(Exception):  # noqa: N818 - control flow inside this module
    """The worker stopped before any plugin, so no plugin can be blamed."""


def _check_worker(args: argparse.Namespace) -> int:
    """The worker: each plugin's steps on stderr as they begin, then the report as JSON on stdout."""
    import faulthandler  # noqa: PLC0415 - only the worker needs these
    import logging  # noqa: PLC0415
    import signal  # noqa: PLC0415

    class Progress(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            origin, step = getattr(record, "plugin", None), getattr(record, "step", None)
            if origin is None:
                return
            event = {
                "distribution": origin.distribution,
                "version": origin.version,
                "entry_point": origin.entry_point,
                "module": origin.value,
                "step": step,
            }
            os.write(2, (_PROGRESS + json.dumps(event) + "\n").encode())  # unbuffered: it may be the last

    log = logging.getLogger("hermes_core.plugins")
    log.addHandler(Progress())
    log.setLevel(logging.DEBUG)
    if hasattr(signal, "SIGUSR1"):  # with --debug, the watcher asks where a stopped plugin was stuck
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # The report gets stdout to itself: what the plugins print goes to stderr, which the watcher passes on.
    sys.stdout.flush()
    report_stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    report = _check_report(out.discover(args))
    sys.stdout.flush()
    report_stream.write(json.dumps(report, ensure_ascii=False) + "\n")
    report_stream.flush()
    sys.stderr.flush()
    # Now, not at interpreter exit: a thread a plugin left running must not keep the worker alive.
    os._exit(PROBLEMS if report["problems"] else OK)


def _progress(line: str) -> dict[str, Any] | None:
    """The worker's progress event on *line*, if any; the rest of the line, what a plugin printed, passes on."""
    at = line.find(_PROGRESS)  # not always at the start: a plugin may have printed part of a line
    if at < 0:
        sys.stderr.write(line)
        return None
    sys.stderr.write(line[:at])
    try:
        event: dict[str, Any] = json.loads(line[at + len(_PROGRESS) :])
    except ValueError:  # cut short by the worker being killed
        return None
    return event


def _duration(seconds: float) -> str:
    return "1 second" if seconds == 1 else f"{seconds:g} seconds"


def _check_stopping(args: argparse.Namespace) -> dict[str, Any]:
    """``check`` in a worker, each plugin held to ``args.timeout``; a plugin stopped is a problem."""
    from hermes_core._plugins._discover import canonicalize_name  # noqa: PLC0415 - only check needs it

    skip = list(args.disable)
    stopped: list[dict[str, Any]] = []
    while True:
        report, event, why = _run_worker(args, skip)
        if report is not None:
            break
        if event is None:
            raise _WorkerFailed(f"the process checking the plugins {why} before it reached any plugin")
        origin = out.origin(event)
        stopped.append(
            {
                "distribution": origin.distribution,
                "version": origin.version,
                "entry_point": origin.entry_point,
                "error": "PluginLoadError",
                "message": f"{origin}: {event['step']} {why}",
                "fatal": True,
            }
        )
        skip.append(origin.distribution)
    # In the order discovery reports problems: by distribution, then entry point.
    problems = sorted(
        [*report["problems"], *stopped], key=lambda p: (canonicalize_name(p["distribution"]), p["entry_point"])
    )
    return {**report, "problems": problems}


def _run_worker(args: argparse.Namespace, skip: list[str]) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str]:
    """Run the worker once: (its report, None, "") or, when it was stopped or ended, (None, its last event, why)."""
    import queue  # noqa: PLC0415 - only check --timeout runs a worker
    import subprocess  # noqa: PLC0415
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    # -P: the current directory is not put first on sys.path, as it is not for the hermesos script.
    argv = [sys.executable, "-P", "-m", "hermes_core", "check", "--json", "--report-progress"]
    argv += [f"--disable={name}" for name in skip]
    worker = subprocess.Popen(  # noqa: S603 - argv, no shell
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8", errors="replace"
    )
    lines: queue.Queue[str | None] = queue.Queue()  # the worker's stderr, line by line; None at its end
    output: list[str] = []

    def pump_stderr(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump_stderr, args=(worker.stderr,), daemon=True).start()
    # Read as it comes: a report larger than the pipe holds would otherwise block the worker.
    reading = threading.Thread(target=lambda stream: output.append(stream.read()), args=(worker.stdout,))
    reading.daemon = True
    reading.start()
    event: dict[str, Any] | None = None
    deadline = time.monotonic() + args.timeout
    try:
        while True:
            try:
                line = lines.get(timeout=max(deadline - time.monotonic(), 0))
            except queue.Empty:
                _stop(worker, lines, event if args.debug else None)
                return None, event, f"did not finish within {_duration(args.timeout)}; check stopped it"
            if line is None:
                break
            step = _progress(line)
            if step is None:
                continue
            if event is None or (step["distribution"], step["entry_point"]) != (
                event["distribution"],
                event["entry_point"],
            ):
                deadline = time.monotonic() + args.timeout  # each plugin has the whole limit
            event = step
        status = worker.wait()
        reading.join(5)  # the worker has exited: its stdout is at its end, unless a child of it holds it
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    try:
        report: dict[str, Any] = json.loads(output[0])
    except (IndexError, ValueError):
        return None, event, f"ended the process checking the plugins (exit status {status})"
    return report, None, ""


def _stop(worker: Any, lines: Any, event: dict[str, Any] | None) -> None:
    """Kill the worker; given the *event* it is stuck on (--debug), first print where its threads are."""
    import queue  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import time  # noqa: PLC0415

    if event is not None and hasattr(signal, "SIGUSR1"):
        print(f"where {out.origin(event)} was stopped ({event['step']}):", file=sys.stderr)
        sys.stderr.flush()
        worker.send_signal(signal.SIGUSR1)
        until = time.monotonic() + 1
        while time.monotonic() < until:
            try:
                line = lines.get(timeout=max(until - time.monotonic(), 0))
            except queue.Empty:
                break
            if line is None:
                break
            _progress(line)
    worker.kill()
    worker.wait()


def add_parsers(subcommands: Any) -> None:
    """``check``."""
    check = subcommands.add_parser(
        "check",
        help="load every plugin and list every problem (exit 1 if any)",
        description="Load every plugin in report mode and list every problem of every plugin. A plugin's "
        "resources that can be checked are checked too: hermesos-mcp starts each MCP server whose listing is "
        "cached and compares, with one line per server on stderr. With --timeout, "
        "the plugins are loaded in a new process, and a plugin whose import, hooks or check take longer is "
        "stopped and reported as a problem.",
        epilog="Exit statuses: 0 ok, 1 a problem (or a plugin stopped by --timeout), 2 usage.",
    )
    add_common(check)
    add_timeout(check, "the most seconds one plugin may take to import and run its hooks (default: no limit)")
    check.add_argument("--report-progress", action="store_true", help=argparse.SUPPRESS)  # the worker's
    check.set_defaults(run=_check)
