"""What every command's parser shares: the statuses, the usage error, the common options and their texts.

Importing it imports no argparse (the listing reads its command line without
it, see :func:`hermes_core.cli._tools.shortcut`): the functions that build a
parser import it, and the parser class is :mod:`hermes_core.cli._parsing`'s.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

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


def commands(parser: argparse.ArgumentParser, dest: str) -> Any:
    """The subcommands of *parser*, each of *parser*'s class (a :class:`~hermes_core.cli._parsing.Parser`)."""
    return parser.add_subparsers(dest=dest, metavar="COMMAND")  # argparse makes them of type(parser)


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
    import argparse  # noqa: PLC0415 - called by a parser: imported already

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds such as 2.5, got {text!r}")
    from hermes_core._tool._definition import TIMEOUT_MAX, too_long  # noqa: PLC0415 - --help imports nothing of the core

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
    import argparse  # noqa: PLC0415 - called by a parser: imported already

    from hermes_core._runtime._permissions import GRANT_PATTERN  # noqa: PLC0415 - only a command given --grant needs it

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
    import argparse  # noqa: PLC0415 - a parser is being built: imported already

    # --debug is accepted before the command and after it; after it, its absence must not reset it.
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)
    if json:
        parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    repeatable(parser, "--disable", metavar="NAME", help=DISABLE_HELP)


def add_timeout(parser: argparse.ArgumentParser, help: str) -> None:  # noqa: A002
    """``--timeout SECONDS``, checked as it is parsed (:func:`seconds`); *help* says what it limits."""
    parser.add_argument("--timeout", type=seconds, metavar="SECONDS", help=help)
