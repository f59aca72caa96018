"""Media stays media: content blocks made and checked, declared by media tools, and sent as each edge carries them.

The edges are the real ones: ``hermesos serve`` in a subprocess read by the MCP
SDK's own client, the adapters' messages, and ``hermesos call`` in a
subprocess, each calling a small fixture plugin installed into a temporary
site directory.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from hermes_core import (
    MEDIA_MAX,
    Audio,
    Content,
    EmbeddedResource,
    Image,
    InvalidDefinitionError,
    OutputInvalidError,
    ResourceLink,
    Runtime,
    Text,
    define_tool,
    tool,
)
from hermes_core import schema as s
from hermes_core._door._door import content_text, mcp_content
from hermes_core.adapters import AnthropicTools, OpenAITools
from hermes_core.serve import mcp_tools


def _png() -> bytes:
    """A real 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\0\xff\0\0"))
        + chunk(b"IEND", b"")
    )


PNG = _png()
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)


def _media_tools() -> list:  # type: ignore[type-arg]
    shot = define_tool(
        name="screen.shot",
        description="Take a screenshot.",
        version="1.0.0",
        input=s.object({}),
        media=True,
        handler=lambda args: Image(PNG, "image/png"),
    )
    chart = define_tool(
        name="chart.draw",
        description="Draw a chart.",
        version="1.0.0",
        input=s.object({}),
        output=s.object({"total": s.integer()}),
        media=True,
        handler=lambda args: Content(Text("Sales by month"), Image(PNG), structured={"total": 12}),
    )
    return [shot, chart]


# -- the blocks ----------------------------------------------------------------------------------------


def test_blocks_check_their_fields_and_say_what_would_be_right() -> None:
    with pytest.raises(ValueError, match=r'Image.mime_type must be an image/\* media type such as "image/png", got'):
        Image(PNG, "text/plain")
    with pytest.raises(TypeError, match=r"Image.data must be bytes \(base64 text: use Image.from_base64"):
        Image(base64.b64encode(PNG).decode(), "image/png")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Audio\.mime_type must be an audio/"):
        Audio(WAV, "image/png")
    with pytest.raises(ValueError, match="not base64"):
        Image.from_base64("not base64!", "image/png")
    with pytest.raises(ValueError, match="exactly one of text"):
        EmbeddedResource(uri="file:///a", text="a", blob=b"a")
    with pytest.raises(ValueError, match=r"ResourceLink\.size must be a number of bytes"):
        ResourceLink(uri="file:///a", name="a", size=-1)
    with pytest.raises(TypeError, match="Content's block 1 must be a Text, Image"):
        Content(Text("a"), {"type": "image"})  # type: ignore[arg-type]
    assert Image.from_base64(base64.b64encode(PNG), "IMAGE/PNG") == Image(PNG, "image/png")
    assert Image(bytearray(PNG)).data == PNG


def test_a_block_larger_than_media_max_is_refused_and_its_repr_never_holds_the_bytes() -> None:
    with pytest.raises(ValueError, match=r"Image.data is 16.0 MB; at most 16.0 MB are sent"):
        Image(bytes(MEDIA_MAX + 1))
    assert repr(Image(bytes(2048))) == "Image(<2.0 KB>, 'image/png')"
    assert "blob=<3 bytes>" in repr(EmbeddedResource(uri="file:///a.bin", blob=b"abc"))


# -- declaring media -------------------------------------------------------------------------------------


def test_a_media_tool_returns_content_and_the_runtime_checks_it() -> None:
    runtime = Runtime(_media_tools())
    assert runtime.call_sync("screen.shot", {}) == Content(Image(PNG))  # a block alone is one block of content
    assert runtime.call_sync("chart.draw", {}).structured == {"total": 12}

    def wrong(value: object, output: s.Schema | None = None) -> str:
        bad = define_tool(
            name="bad",
            description="d",
            version="1.0.0",
            input=s.object({}),
            output=output,
            media=True,
            handler=lambda args: value,
        )
        with pytest.raises(OutputInvalidError) as caught:
            Runtime([bad]).call_sync("bad", {})
        return str(caught.value).splitlines()[0]

    assert wrong({"image": "iVBOR..."}) == (
        "bad returned invalid output: output must be content, as the tool declares media: a Content, a block "
        "(Text, Image, Audio, EmbeddedResource, ResourceLink), a list of blocks or a string, got dict."
    )
    assert wrong(Content(Text("x")), s.object({"total": s.integer()})).startswith(
        'bad returned invalid output: "structured" is required: the tool declares an output schema'
    )
    assert "structured.total" in wrong(Content(structured={"total": "12"}), s.object({"total": s.integer()}))


def test_a_tool_that_does_not_declare_media_cannot_return_content() -> None:
    plain = define_tool(
        name="plain", description="d", version="1.0.0", input=s.object({}), handler=lambda args: Image(PNG)
    )
    with pytest.raises(OutputInvalidError):
        Runtime([plain]).call_sync("plain", {})


def test_at_tool_annotated_with_content_declares_media() -> None:
    @tool(name="chart.pie", version="1.0.0")
    def pie() -> Content:
        """Draw a pie chart."""
        return Content(Image(PNG))

    @tool(name="chart.count", version="1.0.0")
    def count() -> int:
        """Count."""
        return 1

    assert pie.media
    assert not count.media
    assert Runtime([pie]).call_sync("chart.pie", {}) == Content(Image(PNG))
    with pytest.raises(InvalidDefinitionError, match="media must be True or False, got 'yes'"):
        define_tool(name="x", description="d", version="1.0.0", input=s.object({}), media="yes", handler=dict)  # type: ignore[arg-type]


# -- the edges -----------------------------------------------------------------------------------------


def test_mcp_lists_a_media_tool_without_structured_output_with_no_output_schema() -> None:
    listing = {entry["name"]: entry for entry in mcp_tools(Runtime(_media_tools()))}
    assert "outputSchema" not in listing["screen_shot"]
    assert listing["chart_draw"]["outputSchema"]["required"] == ["total"]


def test_every_block_as_mcp_content_and_as_text() -> None:
    content = Content(
        Text("hello"),
        Image(PNG),
        Audio(WAV, "audio/wav"),
        EmbeddedResource(uri="file:///notes.txt", text="buy milk", mime_type="text/plain"),
        EmbeddedResource(uri="file:///a.pdf", blob=b"%PDF-1.4", mime_type="application/pdf"),
        ResourceLink(uri="file:///big.csv", name="big.csv", mime_type="text/csv", size=10),
    )
    assert mcp_content(content) == [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        {"type": "audio", "data": base64.b64encode(WAV).decode(), "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "buy milk"}},
        {
            "type": "resource",
            "resource": {"uri": "file:///a.pdf", "mimeType": "application/pdf", "blob": "JVBERi0xLjQ="},
        },
        {"type": "resource_link", "uri": "file:///big.csv", "name": "big.csv", "mimeType": "text/csv", "size": 10},
    ]
    assert content_text(content, "not shown") == (
        f"hello\n[image/png, {len(PNG)} bytes: not shown]\n[audio/wav, 44 bytes: not shown]\nbuy milk\n"
        "[resource file:///a.pdf, application/pdf, 8 bytes: not shown]\n[resource link: file:///big.csv (big.csv)]"
    )


def test_anthropic_gets_an_image_block() -> None:
    tools = AnthropicTools(Runtime(_media_tools()))
    message = tools.handle_sync({"type": "tool_use", "id": "t1", "name": "chart_draw", "input": {}})
    assert message == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [
            {"type": "text", "text": "Sales by month"},
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(PNG).decode()},
            },
        ],
        "is_error": False,
    }


def test_anthropic_gets_a_note_for_audio_and_a_document_for_a_pdf() -> None:
    from hermes_core._door._door import anthropic_content

    blocks = anthropic_content(
        Content(
            Audio(WAV, "audio/wav"), EmbeddedResource(uri="file:///a.pdf", blob=b"%PDF", mime_type="application/pdf")
        )
    )
    assert blocks == [
        {
            "type": "text",
            "text": "[audio/wav, 44 bytes: not heard: Anthropic's Messages API takes no audio in a tool's result]",
        },
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="}},
    ]


def test_openai_chat_says_the_image_is_not_shown_and_sends_no_base64() -> None:
    tools = OpenAITools(Runtime(_media_tools()))
    call = {"id": "c1", "type": "function", "function": {"name": "chart_draw", "arguments": "{}"}}
    message = tools.handle_sync(call)
    assert message == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": f"Sales by month\n[image/png, {len(PNG)} bytes: not shown: this API's tool messages carry text "
        "only]",
    }
    assert base64.b64encode(PNG).decode()[:12] not in message["content"]


def test_openai_responses_gets_an_input_image() -> None:
    tools = OpenAITools(Runtime(_media_tools()), api="responses")
    message = tools.handle_sync({"type": "function_call", "call_id": "c1", "name": "chart_draw", "arguments": "{}"})
    assert message == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [
            {"type": "input_text", "text": "Sales by month"},
            {"type": "input_image", "image_url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
        ],
    }


# -- real processes: hermesos serve and hermesos call ----------------------------------------------------

PLUGIN = f"""
from hermes_core import Content, Image, Text, define_tool, hookimpl, schema as s

PNG = {PNG!r}

@hookimpl
def hermes_tools():
    return [
        define_tool(name="screen.shot", description="Take a screenshot.", version="1.0.0", input=s.object({{}}),
                    media=True, handler=lambda args: Content(Text("the screen:"), Image(PNG, "image/png"))),
        define_tool(name="chart.draw", description="Draw a chart.", version="1.0.0", input=s.object({{}}),
                    output=s.object({{"total": s.integer()}}), media=True,
                    handler=lambda args: Content(Image(PNG), structured={{"total": 12}})),
        define_tool(name="chart.count", description="Count the charts.", version="1.0.0", input=s.object({{}}),
                    output=s.integer(), handler=lambda args: 3),
    ]
"""


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "hermesos_unit_media.py").write_text(PLUGIN)
    info = site / "hermesos_unit_media-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hermesos-unit-media\nVersion: 1.0.0\nRequires-Dist: hermesos-core>=0.1\n"
    )
    (info / "entry_points.txt").write_text("[hermesos.plugins]\nunitmedia = hermesos_unit_media\n")
    (tmp_path / "config").mkdir()
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HERMESOS_DISABLE_PLUGINS": "hermesos-mcp,hermesos-fs",
        "HERMESOS_GRANTS": "",
        "HERMESOS_POLICY": "",
    }


def test_serve_sends_an_image_the_sdk_client_reads_as_image_content(environ: dict[str, str]) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> tuple[object, object]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "hermes_core", "serve"], env=environ)
        async with Client(stdio_client(params)) as client:
            return await client.call_tool("screen_shot", {}), await client.call_tool("chart_draw", {})

    shot, chart = anyio.run(main)
    assert [block.type for block in shot.content] == ["text", "image"]  # type: ignore[attr-defined]
    image = shot.content[1]  # type: ignore[attr-defined]
    assert (image.mime_type, base64.b64decode(image.data)) == ("image/png", PNG)
    assert shot.structured_content is None  # type: ignore[attr-defined]
    assert chart.structured_content == {"total": 12}  # type: ignore[attr-defined]
    assert base64.b64decode(chart.content[0].data) == PNG  # type: ignore[attr-defined]


def test_hermesos_call_summarises_media_and_saves_the_exact_bytes(environ: dict[str, str], tmp_path: Path) -> None:
    command = [sys.executable, "-m", "hermes_core", "call", "screen.shot"]
    done = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "content": [
            {"type": "text", "text": "the screen:"},
            {"type": "image", "mimeType": "image/png", "size": len(PNG)},
        ]
    }
    saved = tmp_path / "media"
    for _ in range(2):  # a second run never overwrites the first's file
        done = subprocess.run(
            [*command, "--save-media", str(saved)], env=environ, capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode == 0, done.stderr
    first, second = (saved / "screen.shot-2.png"), (saved / "screen.shot-2.2.png")
    assert json.loads(done.stdout)["content"][1]["saved"] == str(second)
    assert first.read_bytes() == PNG
    assert second.read_bytes() == PNG
    assert sorted(path.name for path in saved.iterdir()) == ["screen.shot-2.2.png", "screen.shot-2.png"]


def test_tools_show_says_a_media_tool_returns_content_and_what_structured_data_it_has(
    environ: dict[str, str],
) -> None:
    """Before, a media tool's output was shown as the schema ``{}``: any JSON, and no word of media."""

    def show(name: str, *options: str) -> str:
        command = [sys.executable, "-m", "hermes_core", "tools", "show", name, *options]
        done = subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    content = "content (text, images, sound, embedded files and links to resources)"
    assert show("screen.shot").endswith(f"\noutput: {content}, with no structured data\n")
    shown = show("chart.draw")
    assert f"\noutput: {content}, with structured data of this schema:\n" in shown
    assert shown.endswith('"required": [\n    "total"\n  ],\n  "additionalProperties": false\n}\n')
    plain = show("chart.count")  # a tool returning JSON: its output schema, as before
    assert plain.endswith('\noutput schema:\n{\n  "type": "integer"\n}\n')
    assert "content" not in plain

    shot, chart, count = (json.loads(show(name, "--json")) for name in ("screen.shot", "chart.draw", "chart.count"))
    assert (shot["media"], shot["output_schema"]) == (True, None)
    assert (chart["media"], chart["output_schema"]["properties"]) == (True, {"total": {"type": "integer"}})
    assert (count["media"], count["output_schema"]) == (False, {"type": "integer"})
