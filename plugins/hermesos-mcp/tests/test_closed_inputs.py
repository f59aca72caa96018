"""A mounted tool's input refuses a key it does not name: a real server's misspelt optional argument never leaves.

``circle_server.py`` lists ``area`` (``radius``, an optional ``unit``, nothing
said of ``additionalProperties``, as most function-calling definitions) and
``tag`` (``additionalProperties: true``). Mounted, ``area`` is closed as every
tool's imported input is; ``tag`` keeps what its document says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hermes_mcp import Mounted, load_config, mount_servers

from hermes_core import InputInvalidError, Runtime
from hermes_core.adapters import OpenAITools
from hermes_core.serve import mcp_tools

HERE = Path(__file__).resolve().parent


@pytest.fixture
def mounted(tmp_path: Path) -> Mounted:
    config = tmp_path / "mcp.toml"
    config.write_text(
        f"[servers.circle]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HERE / 'circle_server.py'))}]\n"
        f"env = {{ CIRCLE_CALL_LOG = {json.dumps(str(tmp_path / 'calls.log'))} }}\n"
    )
    return mount_servers(load_config(config), cache_directory=tmp_path / "cache")


def _calls(tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_a_misspelt_optional_argument_is_refused_before_the_call_leaves(mounted: Mounted, tmp_path: Path) -> None:
    assert mounted.problems == ()
    runtime = Runtime(mounted.tools, grants=["mcp:circle"], resources=[mounted.pool])
    with runtime:
        with pytest.raises(InputInvalidError) as caught:
            runtime.call_sync("circle.area", {"radius": 3, "unitz": "m"})
        assert str(caught.value) == (
            'circle.area was called with invalid input: "unitz" is an unexpected field; did you mean "unit"?\n'
            "Fix the arguments and call circle.area again."
        )
        assert runtime.call_sync("circle.area", {"radius": 1, "unit": "cm"}) == "3.1 cm2"
        # A document that says additionalProperties: true keeps it.
        assert runtime.call_sync("circle.tag", {"name": "c", "colour": "red"}) == "colour, name"
    assert _calls(tmp_path) == [
        {"tool": "area", "arguments": {"radius": 1, "unit": "cm"}},
        {"tool": "tag", "arguments": {"name": "c", "colour": "red"}},
    ]


def test_the_definitions_a_model_reads_say_the_input_is_closed(mounted: Mounted) -> None:
    runtime = Runtime(mounted.tools, grants=["mcp:circle"])
    area, tag = runtime.definitions()
    assert area["inputSchema"]["additionalProperties"] is False
    assert tag["inputSchema"]["additionalProperties"] is True
    parameters = [d["function"]["parameters"] for d in OpenAITools(runtime).definitions()]
    assert [p["additionalProperties"] for p in parameters] == [False, True]
    assert [t["inputSchema"]["additionalProperties"] for t in mcp_tools(runtime)] == [False, True]
