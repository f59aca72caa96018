"""Inputs and plugins that used to get past the command's own error handling, through the real console script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from conftest import Site

HERMES = Path(sys.executable).with_name("hermesos")


def script(site: Site, *argv: str, stdin: str | bytes | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script, run as an operator runs it, with *site*'s distributions installed."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR"))}
    environment.update(PYTHONPATH=str(site.path), **env)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([str(HERMES), *argv], input=data, capture_output=True, env=environment, check=False)
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    )


def origin(distribution: str) -> str:
    """How a message names a plugin of conftest's Site."""
    serial = distribution.rsplit("-", 1)[1]
    return f'plugin {distribution} 1.0.0 (entry point "unit{serial}" = hermesos_unit_{serial})'


# -- a plugin that exits or interrupts --------------------------------------------------


EXITING_HOOK = """
import sys

@hookimpl
def hermes_tools():
    sys.exit(3)
"""


def test_a_hook_calling_sys_exit_is_a_broken_plugin_not_the_commands_exit_status(site: Site) -> None:
    exiting = site.install(site.plugin(EXITING_HOOK))
    check = script(site, "check")
    assert check.returncode == 1  # 3 would read as TOOL_NOT_FOUND
    assert f"problem: {origin(exiting)}: hook hermes_tools raised SystemExit: 3" in check.stdout.splitlines()
    listing = script(site, "tools", "list")
    assert listing.returncode == 1
    assert f"error: broken {origin(exiting)}: hook hermes_tools raised SystemExit: 3" in listing.stderr.splitlines()
    call = script(site, "call", "math.eval", '{"expression": "1"}')
    assert (call.returncode, call.stdout) == (1, "")


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("import sys\nsys.exit(4)", "importing {module} failed with SystemExit: 4"),
        ("raise SystemExit", "importing {module} failed with SystemExit"),
        (
            "import sys\n\n@hookimpl\ndef hermes_tools():\n    yield make('unit.first')\n    sys.exit(5)",
            "iterating what hermes_tools returned raised SystemExit: 5",
        ),
    ],
    ids=["import", "bare-import", "generator-hook"],
)
def test_sys_exit_at_import_or_in_a_generator_hook_is_a_broken_plugin(site: Site, source: str, what: str) -> None:
    exiting = site.install(site.plugin(source) if "hookimpl" in source else source)
    check = script(site, "check")
    module = "hermesos_unit_" + exiting.rsplit("-", 1)[1]
    assert check.returncode == 1
    assert f"problem: {origin(exiting)}: {what.format(module=module)}" in check.stdout.splitlines()


def test_a_keyboard_interrupt_in_a_hook_ends_the_command_with_one_line_and_status_130(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    raise KeyboardInterrupt"))
    for argv in (["check"], ["tools", "list"], ["call", "math.eval", "{}"], ["--debug", "plugins", "list"]):
        done = script(site, *argv)
        assert (done.returncode, done.stdout, done.stderr) == (130, "", "hermesos: interrupted\n"), argv
