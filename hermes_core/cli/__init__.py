"""The ``hermesos`` command: list, inspect, call, serve and export the tools; install, write, diagnose plugins.

``main(argv) -> int`` is a plain function: the console script and
``python -m hermes_core`` call it, and so do the tests. It holds no business
logic: each command asks :mod:`hermes_core._plugins._discover`, the runtime or pip, and
formats the answer. Each command group is a module of this package holding its
handler and its parser (``_tools``, ``_call``, ``_check``, ``_serve``,
``_export``, ``_install``, ``_new``); ``_output`` prints and styles, ``_args``
holds what the parsers share and ``_parsing`` the parser class. A command
imports what it needs when it runs: ``--version`` and ``--help`` import
neither the schema compiler nor pluggy, and ``tools list`` is read without
argparse (its group's ``shortcut``).

Exit statuses (stable; see ``EXIT_CODES`` for 3 to 8 and 10):

====  ============================================================
0     success
1     a plugin is broken: ``check`` found problems, ``call``, ``serve`` or
      ``export`` refused to start, ``tools list`` could not list every tool
      (or a plugin reported a problem), ``install`` installed a broken plugin,
      a plugin's resource failed to open (``call``, ``serve``) or to close
      after a call that succeeded
2     usage error: unknown command or option, a malformed ``--grant``,
      ``call`` without the tool's name, input that is not a JSON
      value (or more than 16 MiB of it on stdin), ``uninstall hermesos-core``,
      ``new plugin`` with a bad name or a directory in use, ``serve`` without
      the MCP SDK, without a token off loopback, or on a port in use
3     ``TOOL_NOT_FOUND``
4     ``INPUT_INVALID``
5     ``PERMISSION_DENIED``
6     ``OUTPUT_INVALID``
7     ``INVALID_DEFINITION``
8     ``SCHEMA_INVALID``
9     ``install`` or ``uninstall``: pip failed, or is missing
10    ``TOOL_FAILED``: the tool's handler raised or ran out of time
130   interrupted (Ctrl-C, or a plugin raised ``KeyboardInterrupt``):
      one line on stderr, no traceback
143   ``call`` terminated (SIGTERM), its runtime closed first; ``serve``
      stops on SIGTERM with 0
====  ============================================================

``call`` and ``serve`` open the runtime (its plugins' resources) before the
first call and close it on every way out: the call's end, a tool error,
Ctrl-C, SIGTERM, a stdio client going away.
"""

from __future__ import annotations

import sys

from hermes_core._base._version import __version__

TYPE_CHECKING = False  # not typing's: --version imports nothing it does not need (see main)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

    from hermes_core._base._errors import ErrorCode
    from hermes_core.cli._call import STDIN_LIMIT

    #: The exit status of ``hermesos call`` for each error code.
    EXIT_CODES: dict[ErrorCode, int]

__all__ = ["EXIT_CODES", "STDIN_LIMIT", "main"]


def __getattr__(name: str) -> Any:
    # Built when asked for: --version and --help import neither the error codes nor the call command.
    if name == "EXIT_CODES":
        from hermes_core._base._errors import ErrorCode  # noqa: PLC0415
        from hermes_core.cli._output import EXIT_STATUSES  # noqa: PLC0415

        return {ErrorCode(code): status for code, status in EXIT_STATUSES.items()}
    if name == "STDIN_LIMIT":
        from hermes_core.cli import _call  # noqa: PLC0415

        return _call.STDIN_LIMIT
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# The module of each command group, by the commands it adds (in the order 'hermesos --help' lists them).
_GROUPS = {
    "tools": "_tools",
    "plugins": "_tools",
    "call": "_call",
    "check": "_check",
    "serve": "_serve",
    "export": "_export",
    "install": "_install",
    "uninstall": "_install",
    "new": "_new",
}


def _groups(arguments: Sequence[str]) -> list[str]:
    """The modules whose parsers *arguments* need: the named command's only, or all for the top level's help."""
    for argument in arguments:
        if argument in ("-h", "--help", "--"):
            break
        if not argument.startswith("-"):  # the top level's options take no value: this is the command
            if argument in _GROUPS:
                return [_GROUPS[argument]]
            break
    return list(dict.fromkeys(_GROUPS.values()))


def _parser(arguments: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of the command line *arguments*: only the command group they name is imported and added.

    Building every command's parser (and importing its module) costs more than
    running ``hermesos tools list`` needs (docs/performance.md, start-up).
    """
    import importlib  # noqa: PLC0415

    from hermes_core.cli._args import CORE, DEBUG_HELP, commands, show_help  # noqa: PLC0415
    from hermes_core.cli._parsing import Parser  # noqa: PLC0415

    parser = Parser(
        prog="hermesos",
        description="List, inspect and call the installed hermesos tools; install plugins, start new ones "
        "(new plugin); diagnose broken ones.",
        epilog="Exit statuses: 0 ok, 1 a broken plugin or output that could not be written, 2 usage, 3-8 and 10 the "
        "error codes of 'hermesos call' "
        "(see 'hermesos call -h'), 9 pip failed (install, uninstall), 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"{CORE} {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    subcommands = commands(parser, "command")
    for name in _groups(arguments):
        importlib.import_module(f"{__name__}.{name}").add_parsers(subcommands)
    parser.set_defaults(run=show_help(parser))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``hermesos`` command with *argv* (default: ``sys.argv[1:]``); return the exit status.

    Output that cannot be written ends the command with one line on stderr,
    never a traceback: a reader that went away (``| head -1``) quietly, with
    status 0; a full disk or any other failed write with status 1. A standard
    stream that is closed (``>&-``, ``<&-``) is the null device.
    """
    _open_standard_streams()
    try:
        status = _main(sys.argv[1:] if argv is None else list(argv))
        sys.stdout.flush()  # here, not at exit, where a failure would be Python's "Exception ignored" report
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        _discard_output()
        return 0
    except OSError as error:
        import errno  # noqa: PLC0415 - only when something failed

        # A full disk, a quota, a file too large, an I/O error: nothing else the command does writes a file
        # outside its own handling, so one of these reaching here is the output's.
        written = {errno.ENOSPC, errno.EFBIG, errno.EIO, getattr(errno, "EDQUOT", errno.ENOSPC)}
        if error.errno not in written and not _output_failed():
            raise
        _discard_output()
        print(f"hermesos: cannot write the output: {error.strerror or error}", file=sys.stderr)
        return 1
    except BaseException:
        interrupts = sys.modules.get("hermes_core.cli._interrupts")
        if interrupts is None or not interrupts.came():
            raise
        return _interrupted()  # Ctrl-C, which the code it landed in made into another error (see _interrupts)
    finally:
        _stop_watching()
        if argv is None:  # the process's own command, which ends when this returns
            _exiting()
    return status


def _interrupted() -> int:
    """Ctrl-C, or a plugin raising it, wherever it landed (importing a command too): one line, no traceback."""
    from hermes_core.cli._args import INTERRUPTED  # noqa: PLC0415 - imported again if Ctrl-C cut its import short

    print("hermesos: interrupted", file=sys.stderr)
    return INTERRUPTED  # the shell's status for SIGINT


def _stop_watching() -> None:
    interrupts = sys.modules.get("hermes_core.cli._interrupts")
    if interrupts is not None:
        interrupts.stop()


def _exiting() -> None:
    """Spare the process's exit a last walk over everything the command made.

    Python's collector goes through every object still alive when the
    interpreter shuts down: after ``serve``, the SDK's and uvicorn's, 0.8 s
    of work that Ctrl-C and SIGTERM waited for. Objects frozen here are freed
    with the process instead; exit handlers and stream flushes still run.
    """
    import gc  # noqa: PLC0415 - only as the process ends

    gc.freeze()


def _main(arguments: list[str]) -> int:
    if arguments == ["--version"]:
        # Answered before argparse is imported and the parser built, which would take longer than the
        # interpreter's own start (docs/performance.md, start-up: hermesos --version).
        print(f"hermesos-core {__version__}")
        return 0
    from hermes_core.cli import _interrupts  # noqa: PLC0415
    from hermes_core.cli._args import OK, USAGE, Usage  # noqa: PLC0415

    _interrupts.watch()  # Ctrl-C recorded, whatever it becomes (main asks)
    args = _shortcut(arguments)
    try:
        if args is None:
            try:
                args = _parser(arguments).parse_args(arguments)
            except SystemExit as done:  # --help and --version: argparse exits, main returns
                return done.code if isinstance(done.code, int) else OK
        run: Callable[[argparse.Namespace], int] = args.run
        try:
            return run(args)
        except Exception as error:
            status = _reported(error, args)
            if status is None:
                raise
            return status
    except Usage as error:
        print(error, file=sys.stderr)
        return USAGE


def _shortcut(arguments: Sequence[str]) -> Any:
    """The namespace of a command line its command group reads without a parser (its ``shortcut``), or None.

    ``tools list`` is read so, without argparse (docs/performance.md, start-up); every other line is parsed.
    """
    import importlib  # noqa: PLC0415

    names = _groups(arguments)
    if len(names) != 1:
        return None
    shortcut = getattr(importlib.import_module(f"{__name__}.{names[0]}"), "shortcut", None)
    return None if shortcut is None else shortcut(arguments)


def _reported(error: Exception, args: argparse.Namespace) -> int | None:
    """The exit status of a tool error no command caught, printed as the commands print theirs; None for the rest.

    Such as a malformed ``HERMESOS_DISABLE_PLUGINS``, which the plugin loader reads before any plugin loads
    (``INVALID_DEFINITION``, 7): one line, never a traceback.
    """
    errors = sys.modules.get("hermes_core._base._errors")  # not loaded: nothing could have raised a tool error
    if errors is None or not isinstance(error, errors.ToolError):
        return None
    from hermes_core.cli._output import report  # noqa: PLC0415 - only after a failure

    vars(args).setdefault("json", False)  # export and serve print no JSON of their own
    return report(error, args)


def _open_standard_streams() -> None:
    """A standard stream the command was started without (its descriptor closed) made the null device."""
    if sys.stdin is not None and sys.stdout is not None and sys.stderr is not None:
        return
    import os  # noqa: PLC0415 - only when a stream is missing

    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115 - for the process's life


def _output_failed() -> bool:
    """Whether stdout cannot be written: what it still holds cannot be flushed."""
    try:
        sys.stdout.flush()
    except OSError:
        return True
    return False


def _discard_output() -> None:
    """Point stdout at the null device, so that what it still holds is not written again at exit and fails."""
    import os  # noqa: PLC0415 - only when the output failed

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a file with a descriptor: nothing is flushed at exit
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
