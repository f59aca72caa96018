"""The parser every command line is read with, when one is built: argparse's, with the command's habits.

Imported only where a parser is built: the command lines a command group reads
without one (:func:`hermes_core.cli._tools.shortcut`) import neither this
module nor argparse, which imports gettext and, at its first message, locale.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from hermes_core.cli._args import Usage

__all__ = ["Parser"]


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
