"""Tests of hermesos-mcp against real MCP servers, as real subprocesses.

Two servers: ``mcp_test_server.py`` (the SDK's low-level Server, over stdio
and over Streamable HTTP on a loopback port) and the reference server
``mcp-server-time`` from PyPI. Every server started by a test records its pid
(the test server writes a file named after it; the time server is found as a
child process), and each test checks that none of them outlives it.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_mcp import Mounted, mount_servers, parse_config
from hermes_mcp._cache import cache_dir, cache_directory, refresh_asked
from hermes_mcp._config import config_path, find_config_file

from hermes_core import (
    Content,
    ErrorCode,
    Image,
    InputInvalidError,
    InvalidDefinitionError,
    OutputInvalidError,
    Runtime,
    Text,
    ToolFailedError,
    ToolHints,
)

HERE = Path(__file__).resolve().parent
SERVER = str(HERE / "mcp_test_server.py")
TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))

# -- no server outlives its test -----------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _descendants() -> set[int]:
    """The pids of this process's descendants (Linux, from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


class Env:
    """A workspace: a configuration file, a cache directory, and the pids of the test servers started."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pids = root / "pids"
        self.cache = root / "cache"
        self.config = root / "mcp.toml"
        self.calls = root / "calls.log"
        self.variant = root / "variant"
        self.pids.mkdir()
        self.vars = {
            "HERMESOS_MCP_CONFIG": str(self.config),
            "HERMESOS_MCP_CACHE_DIR": str(self.cache),
            "HERMESOS_MCP_REFRESH": "",
            "XDG_CONFIG_HOME": str(root / "config"),
            "HERMESOS_POLICY": "",
            "HERMESOS_GRANTS": "",
            "HERMESOS_DISABLE_PLUGINS": "",
        }

    def unit(self, name: str = "unit", transport: str = "stdio", **extra: str) -> str:
        """The TOML entry of the test server over stdio, with *extra* keys (TOML values, as written)."""
        env = {
            "MCP_TEST_PID_DIR": str(self.pids),
            "MCP_TEST_CALL_LOG": str(self.calls),
            "MCP_TEST_VARIANT_FILE": str(self.variant),
        }
        lines = [
            f"[servers.{name}]",
            f"command = {json.dumps(sys.executable)}",
            f'args = [{json.dumps(SERVER)}, "{transport}"]',
            f"env = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())} }}",
            *(f"{key} = {value}" for key, value in extra.items()),
        ]
        return "\n".join(lines) + "\n"

    def write(self, *entries: str, top: str = "") -> None:
        self.config.write_text(top + "\n" + "\n".join(entries))

    def started(self) -> set[int]:
        return {int(path.name) for path in self.pids.iterdir()}

    def called(self) -> list[str]:
        return self.calls.read_text().split() if self.calls.exists() else []

    def mount(self, **options: Any) -> Mounted:
        from hermes_mcp import load_config

        return mount_servers(load_config(self.config), cache_directory=self.cache, **options)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    made = Env(tmp_path)
    for key, value in made.vars.items():
        monkeypatch.setenv(key, value)
    before = _descendants()
    yield made
    deadline = time.monotonic() + 60
    while True:
        left = {pid for pid in made.started() if _alive(pid)} | (_descendants() - before)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:  # a failure, but the next tests should not pay for it
        os.kill(pid, signal.SIGKILL)
    assert not left, f"server processes outlived the test: {sorted(left)}"


def _error(call: Any) -> Any:
    with pytest.raises(Exception) as caught:  # noqa: PT011 - each caller checks the type
        call()
    return caught.value


# -- the configuration file ----------------------------------------------------------------------------


def test_a_server_entry_becomes_a_checked_config() -> None:
    config = parse_config(
        """
        cache_ttl = 60
        [servers.time]
        command = "mcp-server-time"
        args = ["--local-timezone", "UTC"]
        env = { TZ = "UTC" }
        pass_env = ["LANG"]
        [servers.search]
        url = "https://search.example.com/mcp"
        token_env = "SEARCH_TOKEN"
        permissions = []
        timeout = 5
        [servers.off]
        command = "x"
        enabled = false
        """,
        "inline",
    )
    time_server, search = config.servers
    assert (time_server.name, time_server.transport, time_server.args) == ("time", "stdio", ("--local-timezone", "UTC"))
    assert time_server.permissions == ("mcp:time",)
    assert (search.transport, search.permissions, search.timeout, search.token_env) == ("http", (), 5.0, "SEARCH_TOKEN")
    assert config.cache_ttl == 60
    assert config.problems == ()


def test_a_configuration_nested_too_deeply_is_refused_at_its_line_in_time_linear_in_its_size() -> None:
    """A dotted key of 50,000 parts (100 KB) took 23 s and 9.8 GB in tomllib; 100,000 were killed for memory."""
    for text, said in (
        ("cache_ttl = 0\n" + "a" + ".b" * 100_000 + " = 1\n", "line 2 has a dotted key of more than 32 parts"),
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", "line 1 nests arrays or inline tables more than 32 levels deep"),
    ):
        with pytest.raises(InvalidDefinitionError) as caught:
            parse_config(text, "m.toml")
        assert str(caught.value).startswith(f'MCP configuration file "m.toml", {said}; a server\'s entry needs two')


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('comand = "x"', "comand is not a known key; did you mean command?"),
        ('command = "x"\nurl = "http://h/mcp"', 'it needs exactly one of command = "..."'),
        ("args = []", 'it needs exactly one of command = "..."'),
        ('url = "ftp://h"', 'url must be an http:// or https:// URL such as http://127.0.0.1:8000/mcp, got "ftp://h"'),
        ('url = "http://h/mcp"\nargs = ["a"]', "args does not apply to a server with url"),
        ('command = "x"\ntoken_env = "T"', "token_env does not apply to a server with command"),
        ('command = "x"\npermissions = ["MCP time"]', 'permissions has "MCP time", which is not a permission'),
        ('command = "x"\ntimeout = 0', "timeout must be a positive number of seconds such as 30, got 0"),
        ('command = "x"\nstartup_timeout = 1e300', "startup_timeout must be at most 1,000,000,000 seconds, got 1e+300"),
        ('command = "x"\nargs = "a b"', 'args must be a list of strings such as args = ["--local-timezone", "UTC"]'),
    ],
)
def test_a_malformed_entry_skips_that_server_alone_with_a_problem(entry: str, problem: str) -> None:
    config = parse_config(f'[servers.good]\ncommand = "x"\n[servers.bad]\n{entry}\n', "mcp.toml")
    assert [server.name for server in config.servers] == ["good"]
    (message,) = config.problems
    assert message.startswith('server "bad" in "mcp.toml" is skipped: ')
    assert problem in message


def test_a_server_name_that_is_not_one_segment_is_skipped() -> None:
    config = parse_config('[servers."two.parts"]\ncommand = "x"\n', "mcp.toml")
    assert config.servers == ()
    assert config.problems[0].startswith('server "two.parts" in "mcp.toml" is skipped: its name must be one segment')


def test_a_malformed_file_is_an_error_at_load_naming_it() -> None:
    error = _error(lambda: parse_config("[servers\n", "mcp.toml"))
    assert isinstance(error, InvalidDefinitionError)
    assert str(error).startswith('MCP configuration file "mcp.toml" is not valid TOML: ')
    error = _error(lambda: parse_config("server = 1\n", "mcp.toml"))
    assert str(error) == (
        'MCP configuration file "mcp.toml" server is not a known key; did you mean servers?; the file has '
        "cache_ttl = SECONDS, retry_after = SECONDS and [servers.<name>] tables."
    )


def test_the_file_is_named_by_the_variable_or_found_in_the_config_directory(tmp_path: Path) -> None:
    assert find_config_file({"XDG_CONFIG_HOME": str(tmp_path)}) is None
    user = tmp_path / "hermesos" / "mcp.toml"
    user.parent.mkdir()
    user.write_text("")
    assert find_config_file({"XDG_CONFIG_HOME": str(tmp_path)}) == user
    error = _error(lambda: find_config_file({"HERMESOS_MCP_CONFIG": str(tmp_path / "none.toml")}))
    assert str(error) == (
        f'setting HERMESOS_MCP_CONFIG names "{tmp_path / "none.toml"}", which does not exist; create it, fix the '
        "path, or unset HERMESOS_MCP_CONFIG."
    )


def test_the_cache_directory_and_the_refresh_switch() -> None:
    assert cache_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/hermesos/mcp")
    assert cache_dir({"HERMESOS_MCP_CACHE_DIR": "/d"}) == Path("/d")
    assert refresh_asked({"HERMESOS_MCP_REFRESH": "1"}) is True
    assert refresh_asked({}) is False


@pytest.mark.parametrize(
    "environ",
    [{}, {"XDG_CACHE_HOME": "/c//x/"}, {"XDG_CACHE_HOME": "relative"}, {"HERMESOS_MCP_CACHE_DIR": "~/d/./e"}],
)
def test_the_hooks_find_the_files_as_text_where_the_public_functions_find_them(
    tmp_path: Path, environ: dict[str, str]
) -> None:
    # The hooks run at every start and ask config_path and cache_directory, which import no pathlib (start-up).
    assert Path(cache_directory(environ)) == cache_dir(environ)
    found = {"XDG_CONFIG_HOME": str(tmp_path)}
    assert config_path(found) is find_config_file(found) is None
    (tmp_path / "hermesos").mkdir()
    (tmp_path / "hermesos" / "mcp.toml").write_text("")
    assert config_path(found) == str(find_config_file(found)) == str(tmp_path / "hermesos" / "mcp.toml")
    named = {"HERMESOS_MCP_CONFIG": f"{tmp_path}//hermesos/./mcp.toml"}
    assert config_path(named) == str(find_config_file(named)) == str(tmp_path / "hermesos" / "mcp.toml")


# -- mounting a real server ----------------------------------------------------------------------------


def test_tools_are_mounted_with_their_schemas_titles_and_hints(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    tools = {tool.name: tool for tool in mounted.tools}
    assert list(tools) == [
        "unit.echo",
        "unit.add",
        "unit.lie",
        "unit.fail",
        "unit.crash",
        "unit.sleep",
        "unit.picture",
        "unit.odd",
    ]
    echo, add, fail = tools["unit.echo"], tools["unit.add"], tools["unit.fail"]
    assert {tool.version for tool in tools.values()} == {"1.2.3"}  # the server's own (serverInfo)
    assert echo.hints == ToolHints(title="Echo", read_only=True, idempotent=True, open_world=False)
    assert (add.hints.title, add.hints.read_only) == ("Add", True)
    assert (fail.hints.destructive, fail.hints.read_only) == (True, False)
    assert echo.permissions == ("mcp:unit",)
    assert echo.description == "Say the text back."
    assert echo.input.json_schema()["additionalProperties"] is False  # closed: a misspelt argument is refused
    assert add.output.json_schema()["required"] == ["sum"]
    skipped, unsupported = mounted.problems
    assert skipped == (
        'tool "has space" of MCP server "unit" is skipped: unit.has space is not a tool name (segments of letters, '
        "digits, _ and -, not starting with a digit or -, joined by '.', at most 64 characters)"
    )
    # The rest of the message is the core's (str of s.Unsupported).
    assert unsupported.startswith('tool "odd" of MCP server "unit": its input schema: $dynamicRef at the root')
    # Listing started the server and stopped it.
    assert len(env.started()) == 1


@pytest.mark.parametrize("frames", [0, 400, 800])
def test_a_listed_schema_nested_past_any_real_one_skips_that_tool_alone_from_any_stack(frames: int) -> None:
    """130 levels of items broke the whole plugin (RecursionError in the compiler, deep in a plugin load)."""
    from hermes_mcp._connect import Pool
    from hermes_mcp._mount import mount

    [server] = parse_config('[servers.deep]\ncommand = "deep-server"\n', "mcp.toml").servers
    listing: list[dict[str, Any]] = [{"name": "fine", "inputSchema": {"type": "object"}}]
    for levels in (130, 5000):
        inner: dict[str, Any] = {"type": "string"}
        for _ in range(levels):
            inner = {"type": "array", "items": inner}
        listing.append({"name": f"deep{levels}", "inputSchema": {"type": "object", "properties": {"x": inner}}})
    problems: list[str] = []

    def mounted(depth: int) -> list[Any]:
        return mounted(depth - 1) if depth else mount(Pool([server]), server, listing, problems)

    assert [tool.name for tool in mounted(frames)] == ["deep.fine"]
    assert len(problems) == 2
    for problem in problems:
        assert problem.startswith('tool "deep')
        assert "nests schemas more than 64 levels deep; no real schema nests so deep" in problem


def test_a_listed_input_schema_without_type_is_taken_as_the_object_mcp_requires() -> None:
    from hermes_mcp._connect import Pool
    from hermes_mcp._mount import mount

    [server] = parse_config('[servers.loose]\ncommand = "loose-server"\n', "mcp.toml").servers
    listing = [{"name": "find", "inputSchema": {"properties": {"query": {"type": "string"}}, "required": ["query"]}}]
    problems: list[str] = []
    [tool] = mount(Pool([server]), server, listing, problems)
    assert problems == []
    assert tool.version == "0.0.0"  # the listing says no server version
    assert tool.input.json_schema()["type"] == "object"
    with pytest.raises(InputInvalidError) as caught:
        Runtime([tool], grants=["mcp:loose"]).call_sync("loose.find", {"qurey": "x"})
    assert [issue.message("input") for issue in caught.value.issues] == [
        '"query" is required (a string)',
        '"qurey" is an unexpected field; did you mean "query"?',
    ]


def test_calls_through_an_opened_runtime(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    runtime = Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool])
    with runtime:
        assert runtime.call_sync("unit.add", {"a": 2, "b": 3}) == {"sum": 5}
        assert runtime.call_sync("unit.echo", {"text": "hello"}) == "hello"
        # A tool without an output schema returns content: the image stays an image (test_media.py).
        assert runtime.call_sync("unit.picture", {}) == Content(
            Text("a dot:"), Image(base64.b64decode("iVBORw0K"), "image/png")
        )

        error = _error(lambda: runtime.call_sync("unit.add", {"a": 2, "bb": 3}))
        assert isinstance(error, InputInvalidError)
        assert [(issue.path, issue.kind) for issue in error.issues] == [(("b",), "missing"), (("bb",), "unexpected")]
        assert str(error.issues[1].message("input")) == '"bb" is an unexpected field; did you mean "b"?'

        error = _error(lambda: runtime.call_sync("unit.fail", {"why": "no such account"}))
        assert isinstance(error, ToolFailedError)
        assert (error.code, error.retryable, error.reason) == (ErrorCode.TOOL_FAILED, True, "answered")
        assert str(error) == (
            'unit.fail failed: the MCP server "unit" answered: the server refused: no such account.\n'
            "These are the tool's own words: if they are about the arguments, change them and call again; "
            "if not, the same call may work later, or tell the user."
        )

        error = _error(lambda: runtime.call_sync("unit.lie", {}))
        assert isinstance(error, OutputInvalidError)
        assert str(error.issues[0].message("output")) == '"sum" must be an integer, got string'
        # One server process served every call (the other one listed the tools, and was stopped).
        assert len(env.started()) == 2
    assert env.called() == ["add", "echo", "picture", "fail", "lie"]  # invalid input never reached the server


def test_a_server_that_crashes_mid_call_fails_the_call_and_is_started_again(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    with Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool]) as runtime:
        error = _error(lambda: runtime.call_sync("unit.crash", {}))
        assert isinstance(error, ToolFailedError)
        assert error.retryable is True
        assert error.detail == (
            'the MCP server "unit" closed the connection during the call (it may have crashed); it is started again '
            "at the next call; its stderr: crashing on purpose"
        )
        assert runtime.call_sync("unit.echo", {"text": "back"}) == "back"
        assert len(env.started()) == 3  # the listing's, the one that crashed, its successor


def test_a_call_out_of_time_is_cancelled_and_the_session_goes_on(env: Env) -> None:
    env.write(env.unit(timeout="0.5"))
    mounted = env.mount()
    with Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool]) as runtime:
        mounted.pool.start()  # now: a first call's time limit would count the server's start too
        error = _error(lambda: runtime.call_sync("unit.sleep", {"seconds": 30}))
        assert isinstance(error, ToolFailedError)
        assert (error.reason, error.retryable, str(error).splitlines()[0]) == (
            "timeout",
            True,
            "unit.sleep did not finish within 0.5 seconds.",
        )
        assert runtime.call_sync("unit.echo", {"text": "still here"}) == "still here"


def test_concurrent_calls_share_one_session(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()

    async def calls() -> list[Any]:
        async with Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool]) as runtime:
            return await asyncio.gather(*(runtime.call("unit.add", {"a": i, "b": 1}) for i in range(20)))

    results = asyncio.run(calls())
    assert results == [{"sum": i + 1} for i in range(20)]
    assert len(env.started()) == 2


def test_async_with_holds_the_sessions_on_the_callers_own_loop(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    runtime = Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool])

    async def scenario() -> None:
        async with runtime:
            # aopen(): no thread of the pool's own; calls awaited here go straight to the session.
            assert not [thread for thread in threading.enumerate() if thread.name == "hermesos-mcp"]
            assert await runtime.call("unit.add", {"a": 2, "b": 3}) == {"sum": 5}
            # A call from another thread is handed to this loop, where the session lives.
            echoed = await asyncio.to_thread(runtime.call_sync, "unit.echo", {"text": "from a thread"})
            assert echoed == "from a thread"
            late = await asyncio.gather(
                runtime.call("unit.sleep", {"seconds": 30}, timeout=0.5), return_exceptions=True
            )
            assert isinstance(late[0], ToolFailedError)
            assert late[0].reason == "timeout"
            crashed = await asyncio.gather(runtime.call("unit.crash", {}), return_exceptions=True)
            assert isinstance(crashed[0], ToolFailedError)
            assert crashed[0].retryable is True
            assert await runtime.call("unit.echo", {"text": "back"}) == "back"

    asyncio.run(scenario())
    assert not mounted.pool.is_open
    assert len(env.started()) == 3  # the listing's, the one that crashed, its successor


def test_a_runtime_never_opened_connects_for_each_call(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    runtime = Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool])
    assert runtime.call_sync("unit.echo", {"text": "one"}) == "one"
    assert runtime.call_sync("unit.echo", {"text": "two"}) == "two"
    assert len(env.started()) == 3
    assert not mounted.pool.is_open


def test_a_server_that_fails_to_start_is_a_problem_and_the_others_are_mounted(env: Env) -> None:
    env.write(
        env.unit(),
        env.unit("broken").replace("env = { ", 'env = { MCP_TEST_FAIL_START = "1", '),
        '[servers.absent]\ncommand = "no-such-program-anywhere"\n',
    )
    mounted = env.mount()
    assert {tool.name.split(".")[0] for tool in mounted.tools} == {"unit"}
    broken, absent = mounted.failed  # each remembered for its retry_after (test_remembered.py)
    assert mounted.problems[:2] == (
        'MCP server "broken" closed the connection while starting (it exited, or is not an MCP server); its '
        f"stderr: this server is configured to fail; its tools are left out{_remedy(env, 'broken', broken.until)}",
        'MCP server "absent" could not be started: there is no program "no-such-program-anywhere" (check command '
        f"and PATH); its tools are left out{_remedy(env, 'absent', absent.until)}",
    )


def _remedy(env: Env, name: str, until: float) -> str:
    """What ends the problem of server *name* that failed: when it is started again, and what to do meanwhile."""
    return (
        f", and it is not started again until {time.strftime('%H:%M:%S', time.localtime(until))} (retry_after = 60 "
        f's; 0 turns this off): fix its [servers.{name}] entry in "{env.config}", which is tried at once when '
        "changed, or try it now with 'hermesos check' (or any command with HERMESOS_MCP_REFRESH=1)"
    )


def test_a_server_down_when_the_runtime_opens_fails_its_calls_retryably(env: Env) -> None:
    env.write(env.unit())
    mounted = env.mount()
    # The tools were mounted; by the time the runtime opens, the server cannot start.
    server = mounted.pool.servers["unit"]
    mounted.pool.servers["unit"] = dataclasses.replace(server, env={**server.env, "MCP_TEST_FAIL_START": "1"})
    with Runtime(mounted.tools, grants=["mcp:unit"], resources=[mounted.pool]) as runtime:
        error = _error(lambda: runtime.call_sync("unit.echo", {"text": "x"}))
    assert isinstance(error, ToolFailedError)
    assert error.retryable is True
    assert error.detail == (
        'the MCP server "unit" closed the connection while starting (it exited, or is not an MCP server); its '
        "stderr: this server is configured to fail"
    )


# -- the listing cache ---------------------------------------------------------------------------------


def test_a_cached_listing_is_used_until_the_entry_changes_or_it_expires(env: Env) -> None:
    env.write(env.unit())
    first = env.mount()
    assert len(env.started()) == 1
    second = env.mount()  # from the cache: no server started
    assert len(env.started()) == 1
    assert [t.name for t in second.tools] == [t.name for t in first.tools]
    env.write(env.unit(timeout="5"))  # another entry: another key
    env.mount()
    assert len(env.started()) == 2
    env.mount(refresh=True)  # HERMESOS_MCP_REFRESH
    assert len(env.started()) == 3
    env.write(env.unit(timeout="5"), top="cache_ttl = 0")  # never cached
    env.mount()
    env.mount()
    assert len(env.started()) == 5


@pytest.mark.parametrize("bad", ["fifo", "too large", "nested too deep", "not json"])
def test_a_cached_listing_that_is_not_one_is_no_listing_and_is_never_waited_on(env: Env, bad: str) -> None:
    env.write(env.unit())
    env.mount()
    assert len(env.started()) == 1
    env.mount()  # the control: the cached listing is used, no server started
    assert len(env.started()) == 1
    (cached,) = env.cache.glob("unit-*.json")
    cached.unlink()
    if bad == "fifo":
        os.mkfifo(cached)  # read, it would wait for a writer forever: refused by its type, never opened
    elif bad == "too large":
        cached.write_text(" " * (2 * 2 * 1024 * 1024 + 64 * 1024 + 1))
    elif bad == "nested too deep":
        cached.write_text("[" * 100_000 + "]" * 100_000)
    else:
        cached.write_text('{"format": 1, "key":')
    mounted = env.mount()  # listed live
    assert len(env.started()) == 2
    assert "unit.echo" in {tool.name for tool in mounted.tools}


def test_a_live_listing_that_differs_refreshes_the_cache_when_the_server_starts(env: Env) -> None:
    env.write(env.unit())
    env.mount()
    env.variant.write_text("2")  # the server now lists one more tool
    stale = env.mount()
    assert "unit.extra" not in {tool.name for tool in stale.tools}
    with Runtime(stale.tools, grants=["mcp:unit"], resources=[stale.pool]) as runtime:
        assert len(env.started()) == 1  # opening the runtime started no server: its listing is cached
        assert runtime.call_sync("unit.echo", {"text": "hi"}) == "hi"
    fresh = env.mount()
    assert "unit.extra" in {tool.name for tool in fresh.tools}
    assert len(env.started()) == 2  # the first listing, and the session of the call


# -- Streamable HTTP -----------------------------------------------------------------------------------


@pytest.fixture
def http_server(env: Env) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, SERVER, "http"],
        env={**os.environ, "MCP_TEST_TOKEN": "s3cret", "MCP_TEST_PID_DIR": str(env.pids)},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


def test_a_server_over_streamable_http_with_a_bearer_token(env: Env, http_server: str, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    env.write(
        f'[servers.web]\nurl = "{http_server}"\ntoken_file = "{token}"\n',
        f'[servers.nope]\nurl = "{http_server}"\ntoken_env = "NO_SUCH_TOKEN_VARIABLE"\n',
    )
    mounted = env.mount()
    assert mounted.problems[0] == (
        'MCP server "nope" has token_env = NO_SUCH_TOKEN_VARIABLE, which is not set; its tools are left out'
        + _remedy(env, "nope", mounted.failed[0].until)
    )
    with Runtime(mounted.tools, grants=["mcp:web"], resources=[mounted.pool]) as runtime:
        assert runtime.call_sync("web.add", {"a": 20, "b": 22}) == {"sum": 42}
    token.write_text("wrong")
    env.write(f'[servers.web]\nurl = "{http_server}"\ntoken_file = "{token}"\ntimeout = 9\n')
    again = env.mount()
    assert again.problems == (
        f'MCP server "web" could not be reached: HTTP 401 from {http_server} (check its token_env or token_file); '
        f"its tools are left out{_remedy(env, 'web', again.failed[0].until)}",
    )


# -- through the hermesos command ----------------------------------------------------------------------

HERMESOS = [sys.executable, "-m", "hermes_core"]


def _run(env: Env, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HERMESOS, *args], env={**os.environ, **extra}, capture_output=True, text=True, timeout=120, check=False
    )


def test_hermesos_call_and_check_with_the_reference_time_server(env: Env) -> None:
    env.write(f'[servers.time]\ncommand = "{TIME_SERVER}"\nargs = ["--local-timezone", "UTC"]\n')
    done = _run(env, "call", "--grant", "mcp:time", "time.get_current_time", '{"timezone": "Europe/Paris"}')
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["timezone"], sorted(result)) == ("Europe/Paris", ["datetime", "day_of_week", "is_dst", "timezone"])

    done = _run(env, "call", "--grant", "mcp:time", "time.get_current_time", '{"timezone": "Mars/Olympus"}')
    assert done.returncode == 10
    assert next(line for line in done.stderr.splitlines() if not line.startswith("hermesos: ")) == (
        'TOOL_FAILED: time.get_current_time failed: the MCP server "time" answered: Error executing tool '
        "get_current_time: Invalid timezone: 'No time zone found with key Mars/Olympus'."
    )
    done = _run(env, "call", "time.get_current_time", '{"timezone": "UTC"}')
    assert next(line for line in done.stderr.splitlines() if not line.startswith("hermesos: ")) == (
        'PERMISSION_DENIED: time.get_current_time requires the "mcp:time" permission, which was not granted.'
    )

    env.write(f'[servers.time]\ncommand = "{TIME_SERVER}"\n', '[servers.gone]\ncommand = "no-such-program-anywhere"\n')
    done = _run(env, "check")
    assert done.returncode == 1
    assert 'MCP server "gone" could not be started: there is no program "no-such-program-anywhere"' in done.stdout


def test_hermesos_serve_re_exports_a_servers_tools_to_an_sdk_client(env: Env) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env.write(f'[servers.time]\ncommand = "{TIME_SERVER}"\n', env.unit())
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hermes_core", "serve", "--grant", "mcp:*", "--disable", "hermesos-fs"],
        env={**os.environ, **env.vars},
    )

    async def client() -> tuple[Any, Any, Any]:
        with (env.root / "serve.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as session:
                listed = {tool.name: tool for tool in (await session.list_tools()).tools}
                now = await session.call_tool("time_get_current_time", {"timezone": "Asia/Tokyo"})
                bad = await session.call_tool("unit_add", {"a": 1, "c": 2})
                return listed, now, bad

    listed, now, bad = asyncio.run(client())
    assert {"time_get_current_time", "time_convert_time", "unit_add", "unit_echo"} <= set(listed)
    assert listed["time_get_current_time"].annotations.read_only_hint is True
    assert now.is_error is False
    assert now.structured_content["timezone"] == "Asia/Tokyo"
    assert bad.is_error is True
    assert bad.structured_content is None
    assert bad.meta["io.github.hermesos-core/error"]["code"] == "INPUT_INVALID"
    assert '"c" is an unexpected field' in bad.content[0].text
    assert env.called() == []  # the invalid call never reached the test server
