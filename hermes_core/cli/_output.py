"""What the commands print: terminal styling, JSON, and the lines that say what went wrong and what to do.

Imports nothing of the core at import time: ``--version`` and ``--help`` load it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from hermes_core.cli._args import GRANTS_ENV

if TYPE_CHECKING:
    import argparse

    from hermes_core._base._errors import PermissionDeniedError, ToolError
    from hermes_core._plugins._discover import PluginOrigin, PluginProblem, PluginSet

#: What ``hermesos call`` says after a call that needed approval and had nobody to ask (no terminal).
APPROVE_HINT = (
    "hermesos call asks a person only on a terminal (stdin and stderr): run it on one to be asked, "
    "or pass --approve to approve every ask of this call."
)

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
    print(json_text(data))


def json_text(data: Any, *, indent: int | None = 2) -> str:
    r"""*data* as JSON for a person or a program: non-ASCII text as it is, what cannot be seen escaped as JSON does.

    The same value either way (``\u202e`` is U+202E to any JSON reader), but
    a tool's or a server's text cannot move the cursor or hide characters
    (:func:`printable`).
    """
    import json  # noqa: PLC0415 - --json only: the listing in text imports none (start-up)

    from hermes_core._base._issues import printable as escaped  # noqa: PLC0415 - --help and --version import nothing of the core

    return escaped(json.dumps(data, indent=indent, ensure_ascii=False), lines=True, in_json=True)


def count(number: int, noun: str) -> str:
    """*number* and *noun*, agreeing: ``1 tool``, ``0 tools``, ``2 tools``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def summary(text: str) -> str:
    """The first sentence of a description's first line, for one-line listings."""
    line = text.strip().split("\n", 1)[0]  # not splitlines(): a line separator (U+2028) is shown, escaped
    sentence, stop, _ = line.partition(". ")
    return printable(sentence + "." if stop else line)


def discover(args: argparse.Namespace) -> PluginSet:
    from hermes_core._plugins._discover import discover_plugins  # noqa: PLC0415 - --version and --help never load plugins

    with waiting("loading the plugins"):  # a plugin may start servers to list their tools
        return discover_plugins(disable=args.disable, strict=False)


#: Seconds of silence before :func:`waiting` says what the command is waiting for.
WAIT_QUIET = 1.0
#: Seconds between two of its lines on a stream that is not a terminal.
WAIT_EVERY = 5.0


@contextlib.contextmanager
def waiting(what: str, stream: IO[str] | None = None, status: StatusLine | None = None) -> Iterator[Callable[[], None]]:
    """While the block runs past :data:`WAIT_QUIET` seconds, say on stderr that *what* is under way.

    On a terminal, one live line (``hermesos: loading the plugins... 3 s``),
    rewritten as the seconds pass and erased when the block ends; elsewhere (a
    pipe, a file), a plain line, then another every :data:`WAIT_EVERY` seconds.
    A block that ends within :data:`WAIT_QUIET` seconds prints nothing. The
    clock runs on a thread of its own, so the block may wait on anything.

    The block is given a function that stops the clock early (its line
    erased), for when the block has something better to show, such as a
    progress bar. *status*: the live line to draw on, shared with what else
    the block shows (default: a new one on *stream*, else stderr).
    """
    # threading's own primitives, without importing threading: 2.5 million instructions of every listing,
    # which waits for nothing else (docs/performance.md, start-up).
    import _thread  # noqa: PLC0415 - not by --help
    import time  # noqa: PLC0415

    line = StatusLine(stream) if status is None else status
    done = _thread.allocate_lock()  # held until the block ends (a threading.Event)
    done.acquire()
    ended = _thread.allocate_lock()  # held until the clock's thread ends (what joining it waits for)
    ended.acquire()
    began = time.monotonic()
    said: list[str] = []  # the clock's last live text, to erase it and nothing else
    stopped: list[bool] = []

    def over(seconds: float) -> bool:
        """Whether the block ended within *seconds*."""
        if done.acquire(timeout=seconds):
            done.release()
            return True
        return False

    def say() -> None:
        try:
            if over(WAIT_QUIET):
                return
            while True:
                seconds = time.monotonic() - began
                if line.live:
                    said[:] = [f"hermesos: {what}... {seconds:.0f} s"]
                    line.show(said[0])
                else:
                    line.say(f"hermesos: {what}... ({seconds:.0f} s)")
                if over(0.25 if line.live else WAIT_EVERY):
                    return
        finally:
            ended.release()

    def stop() -> None:
        if not stopped:
            stopped.append(True)
            done.release()
            if _thread.get_ident() != clock:
                ended.acquire()
        if said:
            line.clear(only=said[0])

    clock = _thread.start_new_thread(say, ())
    try:
        yield stop
    finally:
        stop()


# -- a live line on a terminal, and what a tool says made safe to show there ------------------


class StatusLine:
    """The one live line a command keeps at the foot of a terminal, and the lines it prints above that.

    :meth:`show` draws the live line in place (a carriage return, the line
    erased, the text cut to the terminal's width so that it never wraps);
    :meth:`clear` erases it; :meth:`say` prints a line of its own above it;
    while :meth:`held` (a person is being asked something), the live line is
    erased and nothing draws it. Not on a terminal (``live`` is False),
    :meth:`show` draws nothing: plain lines are printed with :meth:`say`.
    Any thread may write; one write at a time. A stream that went away
    (closed, a broken pipe) makes every write do nothing.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        import _thread  # noqa: PLC0415 - see waiting

        self.stream = sys.stderr if stream is None else stream
        self.live = self.stream.isatty() and os.environ.get("TERM") != "dumb"
        self._lock = _thread.RLock()
        self._text: str | None = None  # the live line's text, shown or held
        self._drawn = False
        self._held = 0

    def show(self, text: str) -> None:
        """Make *text* (one line, already :func:`printable`) the live line, drawn now unless held."""
        if not self.live:
            return
        with self._lock:
            self._text = text
            if not self._held:
                self._write(f"\r\033[K{_fit(text, self.stream)}")
                self._drawn = True

    def clear(self, only: str | None = None) -> None:
        """Erase the live line and forget it (*only*: if it still shows that text)."""
        with self._lock:
            if only is not None and self._text != only:
                return
            self._text = None
            self._erase()

    def say(self, text: str) -> None:
        """Print *text* and a line break, above the live line (drawn again under it)."""
        with self._lock:
            self._erase()
            self._write(text + "\n")
            if self._text is not None and not self._held:
                self.show(self._text)

    @contextlib.contextmanager
    def held(self) -> Iterator[IO[str]]:
        """While the block runs, the live line is erased and not drawn; the block writes on the stream it is given."""
        with self._lock:
            self._held += 1
            self._erase()
        try:
            yield self.stream
        finally:
            with self._lock:
                self._held -= 1
                if self._text is not None and not self._held:
                    self.show(self._text)

    def _erase(self) -> None:
        if self._drawn:
            self._write("\r\033[K")
            self._drawn = False

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # the stream went away: nothing more to say
            self.stream.write(text)
            self.stream.flush()


def _fit(text: str, stream: IO[str]) -> str:
    """*text* cut to one character less than the terminal's width (a full line would wrap on some terminals)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns or 80  # 0: a terminal that never said its size
    except (OSError, ValueError, AttributeError):
        columns = 80
    from hermes_core._base._issues import shorten  # noqa: PLC0415 - --help and --version import nothing of the core

    return shorten(text, max(columns - 1, 10))


def printable(text: str, *, lines: bool = False) -> str:
    r"""*text* from a tool, a server or a file, safe to write on a terminal: what cannot be seen, escaped.

    The one escaping of what the commands show (:func:`hermes_core._base._issues.printable`):
    control, format and separator characters, every space but the ASCII one,
    private-use and unassigned code points, and the printable characters that
    show as nothing, each written as an escape (``\x1b``, ``\u200b``).
    *lines*: keep its line breaks (and tabs); else it is one line: a line
    break is shown escaped, a tab as a space.
    """
    from hermes_core._base._issues import printable as escaped  # noqa: PLC0415 - --help and --version import nothing of the core

    return escaped(text, lines=lines)


def number(value: float) -> str:
    """A number for a person: ``3``, ``2.5``, ``1e+20``; a whole number without ``.0``."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


#: The width of the progress bar's bar, in characters.
BAR_WIDTH = 24


def progress_text(done: float, total: float | None, message: str | None, *, bar: bool) -> str:
    """One progress report as a line: ``3/10 scanning foo``; with *bar*, ``[#######...] 3/10  30% scanning foo``.

    Without a *total*, only *done* and the message: there is nothing to measure it against.
    """
    said = f" {printable(message)}" if message else ""
    if total is None:
        return f"{number(done)}{said}"
    counted = f"{number(done)}/{number(total)}"
    if not bar:
        return f"{counted}{said}"
    share = min(max(done / total, 0.0), 1.0)
    filled = int(share * BAR_WIDTH)
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {counted} {share * 100:3.0f}%{said}"


# -- what an operator can do about it ---------------------------------------------------


def cause(origin: PluginOrigin, message: str) -> str:
    """The first line of a problem's *message*, without the plugin origin it starts with."""
    first = message.split("\n", 1)[0]  # as summary's
    return first.removeprefix(str(origin)).lstrip(": ")


def with_names(variable: str, names: Iterable[str]) -> str:
    """``VARIABLE=value``: *names* added to what the variable already holds, ready to paste into a shell."""
    import shlex  # noqa: PLC0415 - a hint only: not on every start (docs/performance.md, start-up)

    from hermes_core.config._settings import setting  # noqa: PLC0415 - as shlex

    held = [part.strip() for part in setting(variable, default="").split(",") if part.strip()]
    return f"{variable}={shlex.quote(','.join(dict.fromkeys([*held, *names])))}"


def broken_line(origin: PluginOrigin, message: str, *, by_setting: bool = False) -> str:
    """One line naming a plugin that was not loaded (distribution, version, entry point) and why.

    A plugin at fault is broken; one refused for what a setting is set to
    (*by_setting*) is not: the line says it was not loaded, and its message
    names the setting.
    """
    said = f"{origin} not loaded" if by_setting else f"broken {origin}"
    return f"{Style(sys.stderr).red('error')}: {said}: {printable(cause(origin, message), lines=True)}"


def skip_hint(names: Sequence[str]) -> str:
    """How to start without the broken plugins *names*, and where to read more: the loader's own remedy."""
    from hermes_core._plugins._discover import remedy  # noqa: PLC0415 - only a broken plugin needs it

    return remedy(*names)


def report_broken(problems: Sequence[PluginProblem], args: argparse.Namespace) -> None:
    """On stderr: one line for each problem, its traceback with --debug, then what to do about them.

    What to do is the loader's own remedy: change the settings some plugins
    were refused for, and start without the broken ones.
    """
    from hermes_core._plugins._set import refused_setting, remedies  # noqa: PLC0415 - only a broken plugin needs it

    for problem in problems:
        by_setting = refused_setting(problem.error) is not None
        print(broken_line(problem.origin, problem.message, by_setting=by_setting), file=sys.stderr)
        if args.debug:
            print_traceback(problem.error.__cause__ or problem.error)
    for line in remedies(problems):
        print(line, file=sys.stderr)


def warning_line(problem: PluginProblem) -> str:
    """One line for a problem a plugin reported (hermes_problems): the plugin is loaded, and something is missing."""
    return f"{Style(sys.stderr).yellow('warning')}: {printable(problem.message, lines=True)}"


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
    from hermes_core._base._errors import ToolFailedError  # noqa: PLC0415 - only an error needs it

    if args.json:
        print(json_text(error.to_dict(), indent=None), file=sys.stderr)
    else:
        style = Style(sys.stderr)
        print(f"{style.red(error.code.value)}: {printable(str(error), lines=True)}", file=sys.stderr)
        if hint:
            print(hint, file=sys.stderr)
    raised = error.__cause__
    if args.debug and isinstance(error, ToolFailedError) and error.reason != "timeout" and raised is not None:
        # What the handler raised, with its own causes: the traceback the runtime logs. (A timeout's
        # cause is the runtime's own signal, whose traceback says nothing about the tool.)
        print_traceback(raised)
    return EXIT_STATUSES[error.code.value]


def permission_hint(error: PermissionDeniedError, grants: Sequence[str]) -> str | None:
    """How to grant what was denied, or, when it was granted (*grants*), that a provider denied it.

    For a call that needed a person's approval and found nobody to ask, how
    to be asked or to approve it; for a call a person declined, nothing.
    """
    from hermes_core._runtime._permissions import StaticGrants, env_grants  # noqa: PLC0415 - only a denied call needs it

    if error.reason == "declined":
        return None
    if error.reason == "no_approver":
        return APPROVE_HINT
    if StaticGrants((*grants, *env_grants())).allows(error.permission):
        return (
            f"{error.permission} is granted, but a permission provider denied it (a deny wins over any grant); "
            "'hermesos plugins list' shows the plugins that provide permissions."
        )
    import shlex  # noqa: PLC0415 - as with_names

    return f"To grant it: --grant {shlex.quote(error.permission)} or {with_names(GRANTS_ENV, [error.permission])}"


def origin(row: dict[str, Any]) -> PluginOrigin:
    """The origin of a plugin described by a row of ``plugins list --json`` or of the check worker's progress."""
    from hermes_core._plugins._discover import PluginOrigin  # noqa: PLC0415 - only install and check --timeout need it

    return PluginOrigin(row["distribution"], row["version"], row["entry_point"], row["module"])
