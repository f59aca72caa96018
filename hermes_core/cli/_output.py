"""What the commands print: terminal styling, JSON, and the lines that say what went wrong and what to do.

Imports nothing of the core at import time: ``--version`` and ``--help`` load it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from hermes_core.cli._args import GRANTS_ENV

if TYPE_CHECKING:
    from hermes_core._errors import PermissionDeniedError, ToolError
    from hermes_core._plugins import PluginOrigin, PluginProblem, PluginSet

#: The exit status of ``hermesos call`` for each error code (by its value: ``ErrorCode`` is a ``StrEnum``).
EXIT_STATUSES: dict[str, int] = {
    "TOOL_NOT_FOUND": 3,
    "INPUT_INVALID": 4,
    "PERMISSION_DENIED": 5,
    "OUTPUT_INVALID": 6,
    "INVALID_DEFINITION": 7,
    "SCHEMA_INVALID": 8,
    "TOOL_FAILED": 10,  # 9 is pip's
}


class Style:
    """ANSI colour, only on a terminal and never with NO_COLOR set (https://no-color.org)."""

    def __init__(self, stream: IO[str]) -> None:
        self.on = stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"

    def __call__(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    def bold(self, text: str) -> str:
        return self(text, "1")

    def dim(self, text: str) -> str:
        return self(text, "2")

    def red(self, text: str) -> str:
        return self(text, "31")

    def green(self, text: str) -> str:
        return self(text, "32")

    def yellow(self, text: str) -> str:
        return self(text, "33")


def print_traceback(error: BaseException) -> None:
    """*error*'s traceback on stderr (--debug)."""
    import traceback  # noqa: PLC0415 - slow to import (textwrap), and only --debug prints one

    traceback.print_exception(error, file=sys.stderr)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def count(number: int, noun: str) -> str:
    """*number* and *noun*, agreeing: ``1 tool``, ``0 tools``, ``2 tools``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def summary(text: str) -> str:
    """The first sentence of a description's first line, for one-line listings."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    sentence, stop, _ = line.partition(". ")
    return sentence + "." if stop else line


def discover(args: argparse.Namespace) -> PluginSet:
    from hermes_core._plugins import discover_plugins  # noqa: PLC0415 - --version and --help never load plugins

    with waiting("loading the plugins"):  # a plugin may start servers to list their tools
        return discover_plugins(disable=args.disable, strict=False)


#: Seconds of silence before :func:`waiting` says what the command is waiting for.
WAIT_QUIET = 1.0
#: Seconds between two of its lines on a stream that is not a terminal.
WAIT_EVERY = 5.0


@contextlib.contextmanager
def waiting(what: str, stream: IO[str] | None = None) -> Iterator[None]:
    """While the block runs past :data:`WAIT_QUIET` seconds, say on stderr that *what* is under way.

    On a terminal, one live line (``hermesos: loading the plugins... 3 s``),
    rewritten as the seconds pass and erased when the block ends; elsewhere (a
    pipe, a file), a plain line, then another every :data:`WAIT_EVERY` seconds.
    A block that ends within :data:`WAIT_QUIET` seconds prints nothing. The
    clock runs on a thread of its own, so the block may wait on anything.
    """
    import threading  # noqa: PLC0415 - imported already by the commands that wait; not by --help
    import time  # noqa: PLC0415

    out = sys.stderr if stream is None else stream
    live = out.isatty() and os.environ.get("TERM") != "dumb"
    done = threading.Event()
    began = time.monotonic()
    shown = False

    def say() -> None:
        nonlocal shown
        if done.wait(WAIT_QUIET):
            return
        while True:
            seconds = time.monotonic() - began
            try:
                if live:
                    out.write(f"\r\033[Khermesos: {what}... {seconds:.0f} s")
                else:
                    out.write(f"hermesos: {what}... ({seconds:.0f} s)\n")
                out.flush()
            except (OSError, ValueError):  # the stream went away: nothing more to say
                return
            shown = True
            if done.wait(0.25 if live else WAIT_EVERY):
                return

    clock = threading.Thread(target=say, name="hermesos-waiting", daemon=True)
    clock.start()
    try:
        yield
    finally:
        done.set()
        clock.join()
        if live and shown:
            with contextlib.suppress(OSError, ValueError):
                out.write("\r\033[K")
                out.flush()


# -- what an operator can do about it ---------------------------------------------------


def cause(origin: PluginOrigin, message: str) -> str:
    """The first line of a problem's *message*, without the plugin origin it starts with."""
    first = message.splitlines()[0] if message else ""
    return first.removeprefix(str(origin)).lstrip(": ")


def with_names(variable: str, names: Iterable[str]) -> str:
    """``VARIABLE=value``: *names* added to what the variable already holds, ready to paste into a shell."""
    held = [part.strip() for part in os.environ.get(variable, "").split(",") if part.strip()]
    return f"{variable}={shlex.quote(','.join(dict.fromkeys([*held, *names])))}"


def broken_line(origin: PluginOrigin, message: str) -> str:
    """One line naming a broken plugin (distribution, version, entry point) and what is wrong with it."""
    return f"{Style(sys.stderr).red('error')}: broken {origin}: {cause(origin, message)}"


def skip_hint(names: Sequence[str]) -> str:
    """How to start without the broken plugins *names*, and where to read more: the loader's own remedy."""
    from hermes_core._plugins import remedy  # noqa: PLC0415 - only a broken plugin needs it

    return remedy(*names)


def report_broken(problems: Sequence[PluginProblem], args: argparse.Namespace) -> None:
    """On stderr: one line for each problem, its traceback with --debug, then how to skip the plugins."""
    for problem in problems:
        print(broken_line(problem.origin, problem.message), file=sys.stderr)
        if args.debug:
            print_traceback(problem.error.__cause__ or problem.error)
    names = list(dict.fromkeys(problem.origin.distribution for problem in problems))
    print(skip_hint(names), file=sys.stderr)


def warning_line(problem: PluginProblem) -> str:
    """One line for a problem a plugin reported (hermes_problems): the plugin is loaded, and something is missing."""
    return f"{Style(sys.stderr).yellow('warning')}: {problem.message}"


def report_problems(problems: Sequence[PluginProblem], args: argparse.Namespace) -> None:
    """On stderr: a warning line for each problem a plugin reported, then the broken plugins (see report_broken)."""
    for problem in problems:
        if not problem.fatal:
            print(warning_line(problem), file=sys.stderr)
    broken = [problem for problem in problems if problem.fatal]
    if broken:
        report_broken(broken, args)


def fatal(found: PluginSet) -> bool:
    """Whether a plugin is broken (a fatal problem); a problem a plugin reported leaves it loaded."""
    return any(problem.fatal for problem in found.problems)


def report(error: ToolError, args: argparse.Namespace, hint: str | None = None) -> int:
    """Print a tool error on stderr (with --json, its ``to_dict()``); return its exit status."""
    from hermes_core._errors import ToolFailedError  # noqa: PLC0415 - only an error needs it

    if args.json:
        print(json.dumps(error.to_dict(), ensure_ascii=False), file=sys.stderr)
    else:
        style = Style(sys.stderr)
        print(f"{style.red(error.code.value)}: {error}", file=sys.stderr)
        if hint:
            print(hint, file=sys.stderr)
    raised = error.__cause__
    if args.debug and isinstance(error, ToolFailedError) and error.reason != "timeout" and raised is not None:
        # What the handler raised, with its own causes: the traceback the runtime logs. (A timeout's
        # cause is the runtime's own signal, whose traceback says nothing about the tool.)
        print_traceback(raised)
    return EXIT_STATUSES[error.code.value]


def permission_hint(error: PermissionDeniedError, grants: Sequence[str]) -> str:
    """How to grant what was denied, or, when it was granted (*grants*), that a provider denied it."""
    from hermes_core._permissions import StaticGrants, env_grants  # noqa: PLC0415 - only a denied call needs it

    if StaticGrants((*grants, *env_grants())).allows(error.permission):
        return (
            f"{error.permission} is granted, but a permission provider denied it (a deny wins over any grant); "
            "'hermesos plugins list' shows the plugins that provide permissions."
        )
    return f"To grant it: --grant {shlex.quote(error.permission)} or {with_names(GRANTS_ENV, [error.permission])}"


def origin(row: dict[str, Any]) -> PluginOrigin:
    """The origin of a plugin described by a row of ``plugins list --json`` or of the check worker's progress."""
    from hermes_core._plugins import PluginOrigin  # noqa: PLC0415 - only install and check --timeout need it

    return PluginOrigin(row["distribution"], row["version"], row["entry_point"], row["module"])
