"""What a server's listing costs hermesos is bounded by its size, and one tool past a bound is that tool skipped.

The attack reproduced: a server listing one tool whose input schema is an enum
of 300,000 objects (a 4.4 MB listing, far under the 16 MiB message bound)
drove ``hermesos tools list`` to 8.7 GB and 65 s, then a ``MemoryError`` broke
the whole plugin, the well-behaved server beside it included. Here each shape
of the core's ``tests/schema_weights.py`` is listed by a real server
(``weighty_server.py``, the SDK's own), mounted in a fresh process, and its
bytes compared with the peak memory the process took for it (read from the
kernel); the bounds are generous, and no test times anything.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import ServerConfig, parse_config
from hermes_mcp._connect import Pool
from hermes_mcp._failure import TOOL_BYTES_MIN, listed_size
from hermes_mcp._mount import mount

HERE = Path(__file__).resolve().parent
WEIGHTY = str(HERE / "weighty_server.py")
GOOD = str(HERE / "mcp_test_server.py")
_spec = importlib.util.spec_from_file_location("schema_weights", HERE.parents[2] / "tests" / "schema_weights.py")
assert _spec is not None
assert _spec.loader is not None
weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(weights)

MIB = 1024 * 1024
RATIO_MAX = 300  # bytes of memory for each byte listed, at most
SIZE = 400_000

# Mounts the servers of the configuration on stdin, defines their tools in a runtime and writes their definitions
# out; prints the peak memory before and after (the SDK imported first: what it costs any server is not counted).
CHILD = """
import json, resource, sys
import mcp, mcp_types, pydantic, hermes_mcp._connect, hermes_mcp._session, hermes_mcp._mount
from hermes_mcp import mount_servers, parse_config
from hermes_core import Runtime
config = parse_config(sys.stdin.read())
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
mounted = mount_servers(config, cache_directory=sys.argv[1])
json.dumps(Runtime(mounted.tools).definitions())
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tools = [tool.name for tool in mounted.tools]
print(json.dumps({"grew": (after - before) * 1024, "tools": tools, "problems": mounted.problems}))
"""


def _entry(name: str, command: list[str], **extra: Any) -> str:
    lines = [f"[servers.{name}]", f"command = {json.dumps(command[0])}", f"args = {json.dumps(command[1:])}"]
    lines += [f"{key} = {value}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def _weighty(tools: str, **extra: Any) -> str:
    return _entry("w", [sys.executable, WEIGHTY], env=f'{{ WEIGHTY_TOOLS = "{tools}" }}', startup_timeout=300, **extra)


def _mounted(config: str, cache: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(cache)], input=config, capture_output=True, text=True, timeout=600, check=True
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _listed_bytes(member: str, size: int) -> int:
    """The bytes the tools of *member* take in the listing, as ``weighty_server.py`` lists them."""
    if member == "tools_many":
        return sum(listed_size(tool) for tool in weights.tools_many(size))
    schema = weights.MEMBERS[member](size)
    return listed_size({"name": member, "description": f"The member {member}.", "inputSchema": schema})


@pytest.mark.scale
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
@pytest.mark.parametrize("member", sorted([*weights.MEMBERS, "tools_many"]))
def test_each_shape_listed_by_a_server_takes_at_most_300_bytes_of_memory_for_each_of_its_bytes(
    member: str, tmp_path: Path
) -> None:
    found = _mounted("cache_ttl = 0\n" + _weighty(f"{member}:{SIZE}", max_listing_bytes=8 * MIB), tmp_path)
    listed = _listed_bytes(member, SIZE)
    assert "w.ok" in found["tools"]
    if member in weights.REFUSED:
        (problem,) = found["problems"]
        assert problem.startswith(f'tool "{member}" of MCP server "w" is skipped: from_json_schema(): document would ')
        assert "bytes of memory for each of its" in problem
    else:
        noted = [
            f'tool "{member}" of MCP server "w": its input schema: default at /properties/x is an array of more '
            "than 4,096 bytes, so it is not applied (each call leaving the field out would get a copy of it)"
        ]
        assert found["problems"] == (noted if member == "default_large" else [])
        assert member == "tools_many" or f"w.{member}" in found["tools"]
    ratio = found["grew"] / listed
    assert ratio <= RATIO_MAX, f"{member}: {listed:,} bytes listed took {found['grew']:,} ({ratio:.0f} per byte)"


@pytest.mark.scale
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
def test_many_small_listings_take_what_they_weigh_together(tmp_path: Path) -> None:
    """Eight servers of small tools: each listing within its budget, together held in proportion to their bytes."""
    entries = "".join(
        _entry(
            f"w{index}", [sys.executable, WEIGHTY], env='{ WEIGHTY_TOOLS = "tools_many:60000" }', startup_timeout=300
        )
        for index in range(8)
    )
    found = _mounted("cache_ttl = 0\n" + entries, tmp_path)
    assert not found["problems"]
    assert len(found["tools"]) == 8 * 601  # each server's ok, and its 600 small tools
    listed = 8 * (_listed_bytes("tools_many", 60_000) + TOOL_BYTES_MIN)
    ratio = found["grew"] / listed
    assert ratio <= RATIO_MAX, f"{listed:,} bytes listed took {found['grew']:,} ({ratio:.0f} per byte)"


# -- the command, with the attack's listing beside a good server -------------------------------------------------

# Runs the command, then writes the peak memory of the largest process it waited for (hermesos): on Linux, a
# process started from a large one reports that one's peak as its own, so a small wrapper starts it.
PEAK = (
    "import resource, subprocess, sys\n"
    "status = subprocess.call(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n"
)


@pytest.mark.scale
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak memory is read as Linux reports it")
def test_tools_list_with_a_hostile_4_mb_listing_beside_a_good_server_lists_the_good_tools_in_300_mb(
    tmp_path: Path,
) -> None:
    """8.7 GB and 65 s, then a MemoryError broke the plugin and the good server with it."""
    config = tmp_path / "mcp.toml"
    config.write_text(_weighty("enum_objects:4400000") + _entry("good", [sys.executable, GOOD, "stdio"]))
    environ = {key: value for key, value in os.environ.items() if not key.startswith("HERMESOS_")}
    environ.update(
        HERMESOS_MCP_CONFIG=str(config),
        HERMESOS_MCP_CACHE_DIR=str(tmp_path / "cache"),
        HERMESOS_DISABLE_PLUGINS="hermesos-fs",
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )
    peak = tmp_path / "peak"
    done = subprocess.run(
        [sys.executable, "-c", PEAK, str(peak), sys.executable, "-m", "hermes_core", "tools", "list", "--json"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr
    listed = json.loads(done.stdout)
    names = {row["name"] for row in listed["tools"]}
    assert {"good.echo", "good.add", "w.ok"} <= names
    assert "w.enum_objects" not in names
    (skipped,) = [warning["message"] for warning in listed["warnings"] if "enum_objects" in warning["message"]]
    assert skipped.startswith(
        'plugin hermesos-mcp 0.1.0 (entry point "mcp" = hermes_mcp): tool "enum_objects" of MCP server "w" is '
        "skipped: it takes "
    )
    assert skipped.endswith(
        f"and the server's tools may take {2 * MIB:,} bytes in all, its max_listing_bytes, of which the tools "
        f"mounted before it take {TOOL_BYTES_MIN:,} (raise max_listing_bytes in its [servers.w] entry if such tools "
        "are expected)"
    )
    memory = int(peak.read_text()) * 1024
    assert memory < 300 * MIB, f"peak resident memory {memory / MIB:.0f} MiB"


# -- the listing's budget ----------------------------------------------------------------------------------------


def _tool(name: str, properties: int) -> dict[str, Any]:
    schema = {"type": "object", "properties": {f"p{index}": {"type": "string"} for index in range(properties)}}
    return {"name": name, "description": f"The tool {name}.", "inputSchema": schema}


def test_a_tool_past_max_listing_bytes_is_skipped_and_those_after_it_that_fit_are_mounted() -> None:
    listing = [_tool("a", 10), _tool("b", 20_000), _tool("c", 10)]
    big = listed_size(listing[1])
    server = ServerConfig(name="s", command="unused", max_listing_bytes=100_000)
    problems: list[str] = []
    assert [tool.name for tool in mount(Pool([server]), server, listing, problems)] == ["s.a", "s.c"]
    assert problems == [
        f'tool "b" of MCP server "s" is skipped: it takes {big:,} bytes of JSON (its name, description and schemas), '
        f"and the server's tools may take 100,000 bytes in all, its max_listing_bytes, of which the tools mounted "
        f"before it take {TOOL_BYTES_MIN:,} (raise max_listing_bytes in its [servers.s] entry if such tools are "
        "expected)"
    ]
    roomy = ServerConfig(name="s", command="unused", max_listing_bytes=big + 2 * TOOL_BYTES_MIN)
    assert [tool.name for tool in mount(Pool([roomy]), roomy, listing, [])] == ["s.a", "s.b", "s.c"]


def test_tools_past_the_budget_are_one_problem_naming_the_first_and_how_many() -> None:
    listing = [_tool(f"t{index}", 1) for index in range(2100)]
    server = ServerConfig(name="s", command="unused")  # 2 MiB: 2,048 tools of at least 1 KiB
    problems: list[str] = []
    mounted = mount(Pool([server]), server, listing, problems)
    assert len(mounted) == 2048
    assert problems == [
        '52 tools of MCP server "s" are skipped ("t2048", "t2049", "t2050", "t2051", "t2052" and 47 more): each would '
        "take its tools past 2,097,152 bytes of JSON (names, descriptions and schemas; each tool at least 1,024), its "
        "max_listing_bytes (raise max_listing_bytes in its [servers.s] entry if such tools are expected)"
    ]


def test_max_listing_bytes_is_the_servers_own_setting() -> None:
    config = parse_config('[servers.s]\ncommand = "x"\nmax_listing_bytes = 65536\n[servers.t]\ncommand = "x"\n')
    assert [server.max_listing_bytes for server in config.servers] == [65536, 2 * MIB]
    refused = parse_config('[servers.s]\ncommand = "x"\nmax_listing_bytes = 10\n')
    assert refused.servers == ()
    assert "max_listing_bytes must be a whole number of bytes from 1024 to 1073741824" in refused.problems[0]


@pytest.mark.scale
def test_the_pages_of_a_listing_are_read_no_further_than_its_budget(tmp_path: Path) -> None:
    """Each page under max_result_bytes, 100 of them: the listing held was not bounded by any setting."""
    log = tmp_path / "pages"
    pages = 'WEIGHTY_PAGES = "50", WEIGHTY_PAGE_LOG = "' + str(log) + '"'

    def entry(budget: int) -> str:
        return _entry(
            "w",
            [sys.executable, WEIGHTY],
            env=f'{{ WEIGHTY_TOOLS = "tools_many:500000", {pages} }}',
            max_listing_bytes=budget,
        )

    found = _mounted("cache_ttl = 0\n" + entry(MIB), tmp_path / "cache")
    asked = log.read_text().split()
    assert len(asked) < 15  # 5,001 tools of 1 KiB, 100 a page: past 1 MiB after about 11 pages
    assert len(found["tools"]) == MIB // TOOL_BYTES_MIN
    (problem,) = found["problems"]
    assert re.match(r'[0-9,]+ tools of MCP server "w" are skipped \("t1023", ', problem), problem
    log.unlink()
    found = _mounted("cache_ttl = 0\n" + entry(8 * MIB), tmp_path / "cache")  # the same listing, room for it all
    assert len(log.read_text().split()) == 50
    assert len(found["tools"]) == 5001
    assert not found["problems"]


# -- what memory runs out on is one tool ---------------------------------------------------------------------------

OUT_OF_MEMORY = """
import json, resource, sys
from hermes_mcp import ServerConfig
from hermes_mcp._connect import Pool
from hermes_mcp._mount import mount
heavy = {"type": "object", "properties": {"x": {"enum": [{"k": index} for index in range(1_000_000)]}}}
light = {"type": "object", "properties": {"a": {"type": "string"}}}
listing = json.loads(json.dumps([
    {"name": "heavy", "description": "Heavy.", "inputSchema": heavy},
    {"name": "light", "description": "Light.", "inputSchema": light},
]))
del heavy
server = ServerConfig(name="big", command="unused", max_listing_bytes=1024**3)
if sys.argv[1] == "limited":  # 300 MB more than it has now: what importing 14 MB of enum takes is more
    held = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (held + 300 * 2**20, resource.RLIM_INFINITY))
problems = []
tools = mount(Pool([server]), server, listing, problems)
print(json.dumps({"tools": [tool.name for tool in tools], "problems": problems}))
"""


@pytest.mark.scale
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory limit is set as Linux takes it")
def test_a_tool_that_runs_out_of_memory_is_skipped_and_the_next_is_mounted() -> None:
    """A MemoryError mounting one tool broke the whole plugin, the other servers' tools with it."""

    def run(how: str) -> dict[str, Any]:
        done = subprocess.run(
            [sys.executable, "-c", OUT_OF_MEMORY, how], capture_output=True, text=True, timeout=600, check=True
        )
        found: dict[str, Any] = json.loads(done.stdout)
        return found

    assert run("limited") == {
        "tools": ["big.light"],
        "problems": ['tool "heavy" of MCP server "big" is skipped: its schemas took more memory than there was'],
    }
    assert run("unlimited") == {"tools": ["big.heavy", "big.light"], "problems": []}  # it is the memory, and only it


def test_a_mounted_enum_of_objects_is_checked_by_its_canonical_json_and_said_in_twenty_values() -> None:
    enum = [{"k": index} for index in range(50_000)]
    server = ServerConfig(name="s", command="unused")
    schema = {"type": "object", "properties": {"x": {"enum": enum}}}
    (tool,) = mount(Pool([server]), server, [{"name": "pick", "description": "Pick.", "inputSchema": schema}], [])
    check = tool.validators()[0].check
    assert check({"x": {"k": 49_999.0}}) == ({"x": {"k": 49_999}}, [])
    _, issues = check({"x": {"k": "1"}})
    assert issues[0].message() == (
        '"x" must be one of 50,000 values, such as {"k": 0}, {"k": 1}, {"k": 2}, {"k": 3}, {"k": 4}, {"k": 5}, '
        '{"k": 6}, {"k": 7}, {"k": 8}, {"k": 9}, {"k": 10}, {"k": 11}, {"k": 12}, {"k": 13}, {"k": 14}, {"k": 15}, '
        '{"k": 16}, {"k": 17}, {"k": 18}, {"k": 19}, ...'
    )
