"""``hermesos install`` and ``uninstall``: pip, run by the Python that runs hermesos, and what it changed."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from typing import Any

from hermes_core.cli import _output as out
from hermes_core.cli._args import CORE, DISABLE_ENV, OK, PIP_FAILED, PROBLEMS, Usage, repeatable

# A requirement as pip takes it starts with the distribution's name (PEP 508).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _shorten(text: str) -> str:
    from hermes_core._base._issues import shorten  # noqa: PLC0415 - only a refused name needs it

    return shorten(text)


def _pip(command: str, *arguments: str) -> int:
    """Run ``pip COMMAND ARGUMENTS`` with this interpreter, its output passing through; the exit status."""
    import subprocess  # noqa: PLC0415 - only install and uninstall run anything

    sys.stdout.flush()
    done = subprocess.run([sys.executable, "-m", "pip", command, *arguments], check=False)  # noqa: S603 - argv, no shell
    if done.returncode != 0:
        print(
            f"hermesos {command}: error: pip {command} failed with exit status {done.returncode}; "
            "its output above says why",
            file=sys.stderr,
        )
        return PIP_FAILED
    return OK


def _require_pip(command: str) -> bool:
    """Whether pip is importable here; if not, say how to add it (a ``uv tool`` environment has none)."""
    import importlib.util  # noqa: PLC0415 - only install and uninstall need it

    if importlib.util.find_spec("pip") is not None:
        return True
    print(
        f"hermesos {command}: error: pip is not installed in the environment hermesos runs in; "
        f"add it with: {shlex.quote(sys.executable)} -m ensurepip",
        file=sys.stderr,
    )
    return False


def _installed_plugins() -> list[dict[str, Any]] | None:
    """The rows of ``plugins list --json``, as a new process sees the environment (None if it cannot say)."""
    import subprocess  # noqa: PLC0415 - only install and uninstall run anything

    # A new process: this one has imported the old plugins and never read the .pth files pip just wrote.
    # -P: the current directory is not put first on sys.path, as it is not for the hermesos script; run in
    # a plugin's folder, its *.egg-info would otherwise read as installed, before pip installs it and after
    # pip uninstalls it.
    done = subprocess.run(
        [sys.executable, "-P", "-m", "hermes_core", "plugins", "list", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        rows: list[dict[str, Any]] = json.loads(done.stdout)["plugins"]
    except (ValueError, KeyError, TypeError):
        return None
    return rows


def _key(row: dict[str, Any]) -> tuple[str, str]:
    from hermes_core._plugins._discover import canonicalize_name  # noqa: PLC0415 - only install and uninstall compare names

    return canonicalize_name(row["distribution"]), row["entry_point"]


def _contributions(row: dict[str, Any]) -> str:
    """What a plugin contributes, for one line: its tools by name, then how many schemas and providers."""
    parts = [", ".join(row["tools"])] if row["tools"] else []
    if row["schemas"]:
        parts.append(out.count(len(row["schemas"]), "schema"))
    if row["providers"]:
        parts.append(out.count(len(row["providers"]), "permission provider"))
    return "; ".join(parts)


def _report_installed(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> int:
    """Say what pip added or changed among the plugins; 1 if that broke a plugin."""
    previous = {_key(row): row for row in before}
    changed = [row for row in after if _key(row) not in previous or previous[_key(row)]["version"] != row["version"]]
    # A new plugin may break an old one (two tools of one name: the later in name order loses).
    broken = [
        row
        for row in after
        if row["state"] == "broken" and (row in changed or previous[_key(row)]["state"] != "broken")
    ]
    if not changed:
        print("no hermesos plugin was added or changed; 'hermesos plugins list' lists the installed ones")
    for row in changed:
        was = previous.get(_key(row))
        name = out.printable(
            f"{row['distribution']} {row['version']}" + (f" (replacing {was['version']})" if was else "")
        )
        if row["state"] == "ok":
            print(
                f"installed {name}: {out.printable(_contributions(row)) or 'no tools, schemas or permission providers'}"
            )
        elif row["state"] == "disabled":
            print(f"installed {name}, disabled by {DISABLE_ENV}")
        else:
            print(f"installed {name}, which is broken")
    if changed:
        print("'hermesos tools list' lists every installed tool")
    if not broken:
        return OK
    sys.stdout.flush()
    for row in broken:
        for message in row["problems"]:
            print(out.broken_line(out.origin(row), message), file=sys.stderr)
    print(out.skip_hint(list(dict.fromkeys(row["distribution"] for row in broken))), file=sys.stderr)
    return PROBLEMS


# The options of pip install that 'hermesos install' passes through, in the order it passes them:
# (flags, metavar or None for a switch, repeatable, help). The parser and the pip call both read it.
_PIP_INSTALL_OPTIONS: tuple[tuple[tuple[str, ...], str | None, bool, str], ...] = (
    (("-U", "--upgrade"), None, False, "upgrade what is already installed"),
    (("--pre",), None, False, "allow pre-releases"),
    (("--no-index",), None, False, "use no index: only --find-links"),
    (("--no-cache-dir",), None, False, "do not use pip's cache"),
    (("--index-url",), "URL", False, "the package index to use instead of PyPI"),
    (("--extra-index-url",), "URL", True, "another index (repeatable)"),
    (("-f", "--find-links"), "URL", True, "a directory or page of distributions to install from (repeatable)"),
    (
        ("-e", "--editable"),
        "PATH",
        True,
        "install the project at PATH in editable mode (repeatable), as when writing a plugin",
    ),
)


def _pip_options(args: argparse.Namespace) -> list[str]:
    """The pass-through options given to ``hermesos install``, as pip's own arguments."""
    options: list[str] = []
    for flags, metavar, _, _ in _PIP_INSTALL_OPTIONS:
        flag = flags[-1]
        given = getattr(args, flag.removeprefix("--").replace("-", "_"))
        if metavar is None:
            options.extend([flag] if given else [])
        else:
            for value in given if isinstance(given, list) else [given] if given else []:
                options += [flag, value]
    return options


def _only_names(command: str, names: list[str], allowed: str, options: str) -> None:
    """Refuse a name that pip would read as an option (``hermesos install -- -r file``): only *allowed* pass.

    Only the options the command declares reach pip; anything after ``--``
    that starts with ``-`` (``-r``, ``--target``, ``--user``, ``-e``...)
    would be one of pip's own, so it is refused, whatever pip would make of it.
    """
    # pip strips a name's surrounding white space: so is it here, first (' hermesos-core', ' -r file').
    names[:] = [name.strip() for name in names]
    for name in names:
        if not name:
            raise Usage(f"hermesos {command}: error: a blank name was given: give only {allowed}")
        if name.startswith("-"):
            raise Usage(
                f"hermesos {command}: error: {_shorten(repr(name))} is an option, not something to {command}: "
                f"give only {allowed}; {options}"
            )


def _install(args: argparse.Namespace) -> int:
    if not args.names and not args.editable:
        raise Usage("hermesos install: error: name a distribution to install, or give -e PATH")
    _only_names(
        "install",
        args.names,
        "requirements (such as hermesos-fs or 'hermesos-fs>=0.4'), paths (./-x for one starting with '-') and URLs",
        "'hermesos install --help' lists the options it passes to pip",
    )
    if not _require_pip("install"):
        return PIP_FAILED
    options = _pip_options(args)
    before = _installed_plugins()
    status = _pip("install", *options, *args.names)
    if status != OK:
        return status
    after = _installed_plugins()
    if before is None or after is None:
        print("'hermesos tools list' lists every installed tool")
        return OK
    return _report_installed(before, after)


def _uninstall(args: argparse.Namespace) -> int:
    from hermes_core._plugins._discover import canonicalize_name  # noqa: PLC0415 - only uninstall compares names

    _only_names(
        "uninstall", args.names, "the names of installed distributions (such as hermesos-fs)", "no option goes to pip"
    )
    for name in args.names:
        match = _NAME.match(name)
        if match and canonicalize_name(match.group()) == CORE:
            raise Usage(
                f"hermesos uninstall: error: {CORE} runs this command and cannot uninstall itself; "
                "uninstall it with the installer that installed it"
            )
    if not _require_pip("uninstall"):
        return PIP_FAILED
    before = _installed_plugins()
    status = _pip("uninstall", "--yes", *args.names)
    after = _installed_plugins() if status == OK else None
    if before is None or after is None:
        return status
    remaining = {_key(row) for row in after}
    gone = [row for row in before if _key(row) not in remaining]
    for row in gone:
        contributed = _contributions(row)
        print(
            out.printable(
                f"uninstalled {row['distribution']} {row['version']}" + (f": {contributed}" if contributed else "")
            )
        )
    if not gone:
        print("no hermesos plugin was uninstalled")
    return OK


def add_parsers(subcommands: Any) -> None:
    """``install`` and ``uninstall``."""
    install = subcommands.add_parser(
        "install",
        help="install plugins with pip, into the environment hermesos runs in",
        description="Install plugins (any pip requirement) with pip, run by the Python that runs hermesos, so "
        "that a hermesos installed with pipx or uv gets its plugins in its own environment. pip's output "
        "passes through; then hermesos says what each new plugin contributes.",
        epilog="Exit statuses: 0 ok, 1 an installed plugin is broken, 2 usage, 9 pip failed or is missing.",
    )
    install.add_argument("names", nargs="*", metavar="NAME", help="what to install, such as hermesos-fs")
    for flags, metavar, many, text in _PIP_INSTALL_OPTIONS:
        if metavar is None:
            install.add_argument(*flags, action="store_true", help=text)
        elif many:
            repeatable(install, *flags, metavar=metavar, help=text)
        else:
            install.add_argument(*flags, metavar=metavar, help=text)
    install.set_defaults(run=_install)

    uninstall = subcommands.add_parser(
        "uninstall",
        help="uninstall plugins with pip, from the environment hermesos runs in",
        description=f"Uninstall distributions with pip uninstall --yes, run by the Python that runs hermesos. "
        f"{CORE} itself is refused.",
        epilog="Exit statuses: 0 ok, 2 usage (such as uninstalling hermesos-core), 9 pip failed or is missing.",
    )
    uninstall.add_argument("names", nargs="+", metavar="NAME", help="a distribution to uninstall")
    uninstall.set_defaults(run=_uninstall)
