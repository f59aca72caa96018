"""``hermesos new plugin``: a new plugin distribution, written from templates."""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any

from hermes_core.cli._args import OK, Usage, add_group


def _new_plugin(args: argparse.Namespace) -> int:
    from hermes_core.cli import _scaffold  # noqa: PLC0415 - only new plugin needs the templates

    try:
        names = _scaffold.plugin_names(args.name)
        directory = args.directory or names.distribution
        written = _scaffold.write_plugin(names, directory)
    except _scaffold.ScaffoldError as error:
        raise Usage(f"hermesos new plugin: error: {error}") from None
    print(f"wrote {names.distribution}, a plugin with one tool, {names.name}.greet:")
    for file in written:
        print(f"  {os.path.join(directory, file)}")
    print("next steps:")
    for step in (f"cd {shlex.quote(directory)}", "pip install -e '.[test]'", "pytest", "hermesos tools list"):
        print(f"  {step}")
    return OK


def add_parsers(subcommands: Any) -> None:
    """``new`` (``plugin``)."""
    new_commands = add_group(subcommands, "new", "write a new project from a template: a plugin", "new_command")
    plugin = new_commands.add_parser(
        "plugin",
        help="write a new plugin distribution, with one tool and its tests, ready to install",
        description="Write a new plugin distribution into ./hermesos-NAME (or DIR): pyproject.toml with the "
        "entry point, the module hermes_NAME.py with one tool (NAME.greet), its tests, a README and a "
        ".gitignore. Nothing is overwritten: DIR must not exist, or be empty.",
        epilog="Exit statuses: 0 ok, 2 usage (a bad NAME, a directory that exists and is not empty, or one "
        "that cannot be written).",
    )
    plugin.add_argument(
        "name",
        metavar="NAME",
        help="a short lowercase name such as notes or word-count: the distribution is hermesos-NAME, the "
        "module hermes_NAME (hyphens become underscores); a hermesos- prefix is dropped",
    )
    plugin.add_argument("--directory", metavar="DIR", help="where to write it (default: ./hermesos-NAME)")
    plugin.set_defaults(run=_new_plugin)
