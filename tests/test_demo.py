"""The main job, ``python3 dev.py demo``: examples/demo.py run for real, as a subprocess.

It drives the installed ``hermesos`` command, the OpenAI, Anthropic and MCP
SDK clients against local servers, and an MCP server of its own mounted by
hermesos-mcp; these assertions pin what each part shows.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.cli._output import APPROVE_HINT

DEMO = Path(__file__).parent.parent / "examples" / "demo.py"


@pytest.fixture(scope="module")
def shown() -> str:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    pytest.importorskip("mcp")
    env = {key: value for key, value in os.environ.items() if not key.startswith("HERMESOS_")}
    done = subprocess.run(
        [sys.executable, str(DEMO)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # the errors of failing calls are on stderr, as a terminal shows them
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:]
    return done.stdout


def test_the_demo_calls_the_bundled_tools_and_shows_located_errors(shown: str) -> None:
    assert '$ hermesos call math.eval \'{"expression": "(2 + 3) * 4"}\'\n20' in shown
    assert "To grant it: --grant fs:read or HERMESOS_GRANTS=fs:read" in shown


def test_the_demo_gives_the_file_tools_a_root_of_their_own_and_refuses_a_git_hook(shown: str) -> None:
    assert "# The file tools work in a folder of their own: HERMESOS_FS_ROOT=files/" in shown
    assert "HERMESOS_FS_ROOT is not set" not in shown  # no warning: every plugin loads clean
    assert (
        "\"path\" names '.git/hooks/pre-commit', which is protected: '.git' is version-control internals, where a "
        "hook runs at the next commit"
    ) in shown
    assert "4 plugins, 4 healthy, 0 problems" in shown


def test_the_demo_gives_the_tools_to_each_sdk_and_an_mcp_client(shown: str) -> None:
    assert "# The tools given to a model through the OpenAI adapter" in shown
    assert "# The same through the Anthropic adapter" in shown
    assert "tools/list:" in shown


def test_the_demo_mounts_an_mcp_server_and_refuses_a_misspelt_argument_before_the_call(shown: str) -> None:
    assert "weather.forecast  0.0.0  hermesos-mcp   [mcp:weather]" in shown
    assert '"result": "Oslo: sunny for 2 days"' in shown
    assert (
        'INPUT_INVALID: weather.forecast was called with invalid input: "dayz" is an unexpected field; '
        'did you mean "days"?'
    ) in shown


def test_the_demo_shows_an_approval_refused_without_a_terminal_and_given_with_approve(shown: str) -> None:
    assert (
        "# A person in the loop: a policy asking a person to approve each write, HERMESOS_POLICY=policy.toml" in shown
    )
    assert 'PERMISSION_DENIED: fs.write needs a person\'s approval for the "fs:write" permission' in shown
    assert APPROVE_HINT in shown
    assert "hermesos: approved with --approve: fs.write (fs:write) on notes/done.txt\n" in shown
    assert '"path": "notes/done.txt",\n  "size": 9,\n  "created": true' in shown


def test_the_demo_shows_a_long_listings_progress(shown: str) -> None:
    # As a pipe gets it: plain lines, the one that completes the total always among them.
    assert re.search(r"^progress: 2500/2500 .*'photos'", shown, re.MULTILINE)
    assert '"total": 2500,\n  "next_offset": 2' in shown
