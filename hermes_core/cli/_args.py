"""What every command's parser shares: the parser class, the usage error, the common options and their texts.

Imported for ``--help``: nothing here imports more than argparse.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

# The statuses every command may return (see the table in hermes_core.cli).
OK, PROBLEMS, USAGE, PIP_FAILED, INTERRUPTED, TERMINATED = 0, 1, 2, 9, 130, 143
CORE = "hermesos-core"
# The variables are named here rather than imported: --help and --version import nothing heavy.
GRANTS_ENV, DISABLE_ENV = "HERMESOS_GRANTS", "HERMESOS_DISABLE_PLUGINS"
DEBUG_HELP = "with a broken plugin or a tool that failed, also print the traceback of what went wrong"
DISABLE_HELP = f"skip a plugin by entry-point or distribution name (repeatable; {DISABLE_ENV} adds more)"
GRANT_HELP = f"grant a permission pattern: fs:read, fs:*, * (repeatable; {GRANTS_ENV} adds more)"


class Usage(Exception):  # noqa: N818 - control flow inside this package
    """A usage error found after parsing, such as input that is not a JSON value."""


class Parser(argparse.ArgumentParser):
    """A parser whose errors are :class:`Usage`, and whose commands take their options anywhere on the line.

    A command without subcommands parses its options and positionals
    intermixed: ``hermesos call fs.read --grant fs:read '{"path": "x"}'``
    reads as ``hermesos call --grant fs:read fs.read '{"path": "x"}'``.
    (Plain argparse takes the positionals it sees first as all it will get.)
    """

    _intermixing = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every argument it adds, and one without a width imports shutil (with
        # bz2, lzma and zlib) to ask the terminal's: 3 ms of every start (docs/performance.md, start-up).
        return self.formatter_class(prog=self.prog, width=_width())  # type: ignore[call-arg] # every HelpFormatter takes it

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise Usage(f"{self.prog}: {message}")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # argparse refuses to intermix around subcommands; their parsers are intermixed themselves. After
        # "--", everything is an argument, which intermixed parsing forgets (it reads "-- -r x" as "-r x").
        if self._subparsers is not None or self._intermixing or (args is not None and "--" in args):
            return super().parse_known_args(args, namespace)
        self._intermixing = True  # parse_known_intermixed_args calls back here (on Python 3.11)
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _width() -> int:
    """The width argparse would format for: ``shutil.get_terminal_size().columns - 2``, done as shutil does it."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


def commands(parser: argparse.ArgumentParser, dest: str) -> Any:
    """The subcommands of *parser*, each a :class:`Parser`."""
    return parser.add_subparsers(dest=dest, metavar="COMMAND", parser_class=Parser)


def add_group(subcommands: Any, name: str, help: str, dest: str) -> Any:  # noqa: A002
    """A command of subcommands (``tools``, ``new``): alone it prints its help; returns its subcommands."""
    parser = subcommands.add_parser(name, help=help)
    parser.set_defaults(run=show_help(parser))
    return commands(parser, dest)


def show_help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """A command that prints *parser*'s help: 'hermesos' or 'hermesos tools' alone, as git does."""

    def show(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return USAGE

    return show


def seconds(text: str) -> float:
    """A ``--timeout`` value: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds such as 2.5, got {text!r}")
    from hermes_core._tools import TIMEOUT_MAX, too_long  # noqa: PLC0415 - --help imports nothing of the core

    if value > TIMEOUT_MAX:
        raise argparse.ArgumentTypeError(too_long(value, "leave the option out"))
    return value


def repeatable(
    parser: argparse.ArgumentParser,
    *flags: str,
    metavar: str,
    help: str,  # noqa: A002
    type: Callable[[str], str] = str,  # noqa: A002
) -> None:
    """An option that may be given several times, collected into a list (empty when never given)."""
    parser.add_argument(*flags, action="append", default=[], metavar=metavar, help=help, type=type)


def grant(text: str) -> str:
    """A ``--grant`` value: a permission pattern (``fs:read``, ``fs:*``, ``*``); a likely slip is named."""
    from hermes_core._permissions import GRANT_PATTERN  # noqa: PLC0415 - only a command given --grant needs it

    if GRANT_PATTERN.match(text):
        return text
    fixed = text.strip().lower().replace(".", ":", 1) if ":" not in text else text.strip().lower()
    hint = f"; did you mean {fixed}?" if GRANT_PATTERN.match(fixed) else ""
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a permission pattern: give scope:action, scope:* or * (such as fs:read){hint}"
    )


def add_grant(parser: argparse.ArgumentParser) -> None:
    """``--grant PERMISSION``, repeatable, checked as it is parsed."""
    repeatable(parser, "--grant", metavar="PERMISSION", help=GRANT_HELP, type=grant)


def add_common(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    """The options of the commands that load the plugins: --debug (also before the command), --json, --disable.

    *json*: False for a command that prints no text but its own (``export``, ``serve``): no ``--json``.
    """
    # --debug is accepted before the command and after it; after it, its absence must not reset it.
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    if json:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    repeatable(parser, "--disable", metavar="NAME", help=DISABLE_HELP)


def add_timeout(parser: argparse.ArgumentParser, help: str) -> None:  # noqa: A002
    """``--timeout SECONDS``, checked as it is parsed (:func:`seconds`); *help* says what it limits."""
    parser.add_argument("--timeout", type=seconds, metavar="SECONDS", help=help)
