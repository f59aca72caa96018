"""A third-party server's image stays an image: @modelcontextprotocol/server-everything, installed from npm.

The server (TypeScript, the MCP project's own) is installed at test time into
a temporary folder. Its ``get-tiny-image`` tool, which lists no output schema,
returns text, a PNG and text; mounted by hermesos-mcp it is a media tool, and
the PNG reaches ``hermesos serve``'s client as ``ImageContent`` with the same
bytes the server sent, and the Anthropic adapter as an ``image`` block.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hermes_mcp import mount_servers, parse_config

from hermes_core import Content, Image, Runtime, Text
from hermes_core.adapters import AnthropicTools, OpenAITools

mcp = pytest.importorskip("mcp")

import mcp_types as types  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

# `everything`, the reference server's command, is conftest's (installed from npm once per run).


def _config(command: list[str]) -> str:
    args = ", ".join(f'"{arg}"' for arg in command[1:])
    return f'[servers.everything]\ncommand = "{command[0]}"\nargs = [{args}]\n'


async def _decline(context: Any, params: Any) -> Any:
    return types.ElicitResult(action="decline")


async def _direct(command: list[str]) -> tuple[list[str], Any]:
    """The server's tool names, and get-tiny-image's result, read by the SDK's client straight from the server.

    The client declares elicitation, as hermesos-mcp's does: the server lists its question tools only to such a client.
    """
    params = StdioServerParameters(command=command[0], args=command[1:])
    connected = Client(stdio_client(params, errlog=subprocess.DEVNULL), elicitation_callback=_decline)  # type: ignore[arg-type]
    async with connected as client:
        listing = await client.list_tools()
        return [tool.name for tool in listing.tools], await client.call_tool("get-tiny-image", {})


def _png_of(result: Any) -> bytes:
    images = [block for block in result.content if block.type == "image"]
    assert len(images) == 1
    assert images[0].mime_type == "image/png"
    return base64.b64decode(images[0].data)


def test_the_image_reaches_the_runtime_and_the_adapters_as_an_image(everything: list[str], tmp_path: Path) -> None:
    names, sent = anyio.run(_direct, everything)
    png = _png_of(sent)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    mounted = mount_servers(parse_config(_config(everything)), cache_directory=tmp_path / "cache")
    assert sorted(tool.name for tool in mounted.tools) == sorted(f"everything.{name}" for name in names)
    tiny = next(tool for tool in mounted.tools if tool.name == "everything.get-tiny-image")
    assert tiny.media  # no output schema listed: its result is content
    with Runtime(mounted.tools, grants=["mcp:everything"], resources=[mounted.pool]) as runtime:
        content = runtime.call_sync("everything.get-tiny-image", {})
        assert isinstance(content, Content)
        assert [type(block) for block in content.blocks] == [Text, Image, Text]
        assert content.blocks[1] == Image(png, "image/png")

        message = AnthropicTools(runtime).handle_sync(
            {"type": "tool_use", "id": "t1", "name": "everything_get-tiny-image", "input": {}}
        )
        assert message["is_error"] is False
        image = message["content"][1]
        assert image == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png).decode()},
        }
        chat = OpenAITools(runtime).handle_sync(
            {"id": "c1", "type": "function", "function": {"name": "everything_get-tiny-image", "arguments": "{}"}}
        )
        assert (
            f"[image/png, {len(png) / 1024:.1f} KB: not shown: this API's tool messages carry text only]"
            in (chat["content"])
        )
        assert base64.b64encode(png).decode()[:16] not in chat["content"]
        # A text-only tool of the same server still returns its text.
        assert runtime.call_sync("everything.echo", {"message": "hi"}) == "Echo: hi"


def test_the_image_passes_through_hermesos_serve_to_its_client(everything: list[str], tmp_path: Path) -> None:
    _, sent = anyio.run(_direct, everything)
    config = tmp_path / "mcp.toml"
    config.write_text(_config(everything))
    (tmp_path / "config").mkdir()
    environ = {
        **os.environ,
        "HERMESOS_MCP_CONFIG": str(config),
        "HERMESOS_MCP_CACHE_DIR": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HERMESOS_GRANTS": "mcp:everything",
        "HERMESOS_DISABLE_PLUGINS": "hermesos-fs",
        "HERMESOS_POLICY": "",
    }

    async def through_serve() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "hermes_core", "serve"], env=environ)
        async with Client(stdio_client(params, errlog=subprocess.DEVNULL)) as client:  # type: ignore[arg-type]
            listing = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert listing["everything_get-tiny-image"].output_schema is None
            return await client.call_tool("everything_get-tiny-image", {})

    result = anyio.run(through_serve)
    assert result.is_error is False
    assert (
        [block.type for block in result.content]
        == [block.type for block in sent.content]
        == [
            "text",
            "image",
            "text",
        ]
    )
    assert _png_of(result) == _png_of(sent)
    assert result.structured_content is None
