"""What an MCP client is shown and told of a runtime's tools, and the SDK's low-level server that says it.

See :mod:`hermes_core.serve` for what a client sees; the SDK is imported only by
the functions that need it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_core._base._errors import ToolError
from hermes_core._base._version import __version__
from hermes_core._door._door import Door, Repaired, mcp_content, result_text
from hermes_core._door._wire import WireNames
from hermes_core._runtime._runtime import Runtime
from hermes_core._tool._blocks import Content
from hermes_core.schema import AnySchema
from hermes_core.schema._validators import follow_refs
from hermes_core.serve._calls import Levels, serve_call

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from hermes_core._tool._call_context import Listeners

__all__ = ["ERROR_META_KEY", "mcp_server", "mcp_tools"]

#: The key of a failed call's result ``_meta`` that holds the error as data (its ``to_dict()``).
#: MCP's key rules: a reverse-DNS prefix of a namespace the project holds (its GitHub
#: organisation), then ``/``; its second label is not ``modelcontextprotocol`` or ``mcp``,
#: which are reserved.
ERROR_META_KEY: Final = "io.github.hermesos-core/error"


# -- what a client is shown and told -------------------------------------------------------------------


def _output_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """*schema* with an object at its root, and whether it had to be wrapped under ``result``.

    The named schemas a wrapped schema refers to (``#/$defs/...``) move up to
    the wrapper's root, where such a reference is resolved.
    """
    if schema.get("type") == "object":
        return schema, False
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if defs is not None:
        wrapped["$defs"] = defs
    return wrapped, True


class _Tools:
    """A runtime's tools as MCP shows them, computed once, and each call through the front door (``_door``)."""

    __slots__ = ("door", "listing", "media", "wrapped")

    def __init__(self, runtime: Runtime, timeout: float | None = None) -> None:
        names = WireNames(runtime.tools)
        refs = runtime.schemas
        listing: list[dict[str, Any]] = []
        wrapped: dict[str, bool] = {}
        media: set[str] = set()
        for tool, definition in zip(runtime.tools.values(), runtime.definitions(), strict=True):
            output, wraps = _output_schema(follow_refs(tool.output, refs).json_schema(defs=refs))
            # A media tool declaring no output schema has no structured output to describe.
            unstructured = tool.media and isinstance(tool.output, AnySchema)
            shown: dict[str, Any] = {}
            for key, value in definition.items():
                if key == "outputSchema" and unstructured:
                    continue
                if key == "name":
                    value = names.to_wire[tool.name]  # noqa: PLW2901 - the same keys, in the same order
                elif key == "description":
                    value = names.rewrite(value)  # noqa: PLW2901
                elif key == "outputSchema":
                    value = output  # noqa: PLW2901
                shown[key] = value
            listing.append(shown)
            wrapped[names.to_wire[tool.name]] = wraps
            if tool.media:
                media.add(names.to_wire[tool.name])
        self.listing = listing
        self.wrapped = wrapped  # by wire name
        self.media = media  # the wire names of the tools whose result is content
        self.door = Door(runtime, names, timeout=timeout, where="mcp_server()")

    async def call(
        self, wire: str, arguments: Mapping[str, Any] | None, listeners: Listeners | None = None
    ) -> dict[str, Any]:
        """Call the tool whose wire name is *wire*, which *listeners* hear: the ``tools/call`` result, as wire JSON."""
        try:
            value = await self.door.call(wire, arguments, listeners)
        except ToolError as error:
            return self.failure(error)
        if type(value) is Repaired:  # lenient mode: what was assumed, as a text block of its own after the result
            result = self._result(wire, value.output)
            result["content"].append({"type": "text", "text": value.note()})
            return result
        return self._result(wire, value)

    def _result(self, wire: str, value: Any) -> dict[str, Any]:
        if wire in self.media:
            return self.content(wire, value)
        return {
            "content": [{"type": "text", "text": result_text(value)}],
            "structuredContent": {"result": value} if self.wrapped[wire] else value,
            "isError": False,
            "resultType": "complete",  # required from the 2026-07-28 protocol on; dropped for older ones
        }

    def content(self, wire: str, value: Content | str) -> dict[str, Any]:
        """The ``tools/call`` result of a media tool: its blocks, and its structured data when it has some."""
        result: dict[str, Any] = {"content": mcp_content(value)}
        data = value.structured if isinstance(value, Content) else None
        if data is not None:
            result["structuredContent"] = {"result": data} if self.wrapped[wire] else data
        result["isError"] = False
        result["resultType"] = "complete"
        return result

    def failure(self, error: ToolError) -> dict[str, Any]:
        """The ``tools/call`` result for *error*: ``isError``, ``CODE: message``, and the error as data in ``_meta``.

        No ``structuredContent``: the TypeScript SDK 1.x client checks it
        against the tool's output schema even when ``isError`` is true, and
        the error would reach the model as a schema mismatch instead.
        """
        text, data = self.door.error_result(error)
        return {
            "content": [{"type": "text", "text": text}],
            "isError": True,
            "resultType": "complete",
            "_meta": {ERROR_META_KEY: data},
        }


def mcp_tools(runtime: Runtime) -> list[dict[str, Any]]:
    """The runtime's tools as MCP's ``tools/list`` gives them: plain JSON data, one dict per tool.

    Each has ``name`` (the wire name), ``title`` (when declared),
    ``description``, ``inputSchema``, ``outputSchema`` (an object at its root)
    and ``annotations`` (when declared). Needs no MCP SDK.

    Raises:
        InvalidDefinitionError: two tools have the same wire name.
    """
    return _Tools(runtime).listing


# -- the SDK's server ----------------------------------------------------------------------------------


def mcp_server(runtime: Runtime, *, name: str = "hermesos", timeout: float | None = None) -> Server[Any]:
    """An MCP server (the SDK's low-level ``Server``) of the runtime's tools, for any SDK transport.

    Args:
        runtime: the tools, their permissions and their checks.
        name: the server's name, in its ``serverInfo``.
        timeout: the most seconds a call may take, overriding the tools' own
            limits, as ``hermesos call --timeout`` does; None: each tool's own.

    Raises:
        InvalidDefinitionError: two tools have the same wire name, or *timeout*
            is not a positive number or None.
        ImportError: the MCP SDK is not installed (``pip install 'hermesos-core[mcp]'``).
    """
    import mcp_types as types  # noqa: PLC0415 - see the module docstring
    from mcp.server.lowlevel import Server  # noqa: PLC0415

    tools = _Tools(runtime, timeout)
    listing = types.ListToolsResult(tools=[types.Tool.model_validate(entry) for entry in tools.listing])
    input_schemas = {entry["name"]: entry["inputSchema"] for entry in tools.listing}
    levels = Levels()
    to_wire = {} if tools.door.names is None else tools.door.names.to_wire

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listing  # one page, whatever the cursor; the SDK writes it out afresh for every request

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await serve_call(ctx, params, tools.call, levels, to_wire)

    server: Server[Any] = Server(
        name, version=__version__, on_list_tools=list_tools, get_tool_input_schema=input_schemas.get
    )
    # A call's result is handed over as wire JSON, which the SDK checks against the protocol's
    # CallToolResult and writes out: building the model first would do that work twice (a
    # fifth of a round trip in memory, bench_mcp.py). The handler is registered as the
    # constructor's on_call_tool would be, under the same method and parameter type.
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    # Registered, not passed to the constructor (which warns that the 2026 protocol deprecates it): a
    # handler of logging/setLevel is what declares the logging capability to a client of the 2025 one.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, levels.set_level)
    return server
