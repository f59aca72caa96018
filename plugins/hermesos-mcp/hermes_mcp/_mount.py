"""Mounting: one server's listed tools as hermes tools named ``<server>.<tool>``, calling it through a pool.

Each tool's input schema is imported closed, as every tool takes an imported
input (``define_tool`` would close it; ``from_json_schema(closed=True)`` does it
in the one import): a misspelt argument is an issue with a "did you mean",
never dropped, and invalid arguments never reach the server; a document that
says ``additionalProperties`` keeps what it says. Its output schema (when it
has one) checks ``structuredContent``, and its title and annotations become the
tool's title and hints. A tool that cannot be hosted (its name, its schemas)
is skipped with a problem; keywords the import cannot check are problems too,
and the tool is mounted. Each tool uses its call's context: what its server
reports and asks during a call goes to that call (:mod:`hermes_mcp._elicit`).

What a listing may cost is bounded by its size: a server's tools take at most
its ``max_listing_bytes`` of JSON in all (:func:`~hermes_mcp._failure.listed_size`),
and a tool that would take them past it is skipped, the others mounted. Below
that, importing a tool's schemas costs a bounded multiple of their size (see
:func:`hermes_core.schema.from_json_schema`); a tool whose schemas cannot be
held all the same (memory runs out, a check nests too deeply) is one tool
skipped, never the server nor the plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from hermes_core import (
    NAME_MAX,
    InvalidDefinitionError,
    Tool,
    ToolFailedError,
    ToolHints,
    case_key,
    current_call,
    define_tool,
    is_name,
    shorten,
    wire_name,
)
from hermes_core import schema as s
from hermes_mcp._config import ServerConfig
from hermes_mcp._connect import Pool
from hermes_mcp._content import content_of, mounted_handler
from hermes_mcp._failure import TEXT_MAX, TOOL_BYTES_MIN, Listing, ParamsRefused, ServerFailure, listed_size

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["clash_advice", "drop_clashes", "mount"]

_SEMVER_FALLBACK: Final = "0.0.0"
# The TypeScript SDK answers arguments it refuses (and a tool it does not have) with an isError result whose
# text is the JSON-RPC error's message: "MCP error -32602: Input validation error: ...".
_INVALID_PARAMS_TEXT: Final = "MCP error -32602:"


def _text_of(result: CallToolResult) -> str:
    """The text blocks of a result, joined by newlines."""
    return "\n".join(block.text for block in result.content if block.type == "text")


def _output(result: CallToolResult) -> Any:
    """What a successful call returns: the structured content, else the text, else every block as JSON."""
    if result.structured_content is not None:
        return result.structured_content
    if all(block.type == "text" for block in result.content):
        return _text_of(result)
    return content_of(result)  # an image stays an image (hermes_mcp._content)


def _handler(pool: Pool, server: str, remote: str) -> Callable[[dict[str, Any]], Any]:
    """The handler of the mounted tool *remote* of *server*: the call, its result or failure as hermes says it.

    The server's progress, log messages and questions during the call go to
    the call's context (:mod:`hermes_mcp._elicit`).
    """

    async def call(arguments: dict[str, Any]) -> Any:
        from hermes_mcp._caller import Caller  # noqa: PLC0415 - asyncio's, imported at the first call, not at load

        caller = Caller(current_call(), server)
        try:
            result = await pool.call(server, remote, arguments, caller)
        except ServerFailure as failure:
            raise failure.tool_failed() from None
        except ParamsRefused as refused:
            raise refused.rejected() from None
        if (
            caller.failure is not None
        ):  # the approver failed when the server asked: the call's fault, as for a local tool
            raise caller.failure
        if result.is_error:
            said = _text_of(result).strip() or "no text"
            if said.startswith(_INVALID_PARAMS_TEXT):
                raise ParamsRefused(server, said.removeprefix(_INVALID_PARAMS_TEXT)).rejected()
            # The server's own words, which may be about the arguments: neither a fault of the tool nor final.
            detail = f'the MCP server "{server}" answered: {shorten(said, TEXT_MAX)}'
            raise ToolFailedError(detail, retryable=True, reason="answered")
        return _output(result)

    call.__qualname__ = call.__name__ = f"mcp_{server}_call"
    return call


def _hints(tool: Mapping[str, Any]) -> ToolHints:
    """The tool's title and hints, read leniently from its listing (what is malformed is left unsaid)."""
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    assert isinstance(annotations, dict)
    return ToolHints.from_annotations(annotations, title=tool.get("title"))


def _where(server: ServerConfig, tool: Mapping[str, Any]) -> str:
    return f'tool "{shorten(str(tool.get("name")))}" of MCP server "{server.name}"'


def _mount_one(
    pool: Pool, server: ServerConfig, tool: Mapping[str, Any], version: str, problems: list[str]
) -> Tool | None:
    """*tool* mounted, or None with a problem saying why it is skipped (whatever its schemas make the import raise)."""
    try:
        return _mounted(pool, server, tool, version, problems)
    except MemoryError:  # what is left of the memory goes to the other tools: this one is let go at once
        problems.append(f"{_where(server, tool)} is skipped: its schemas took more memory than there was")
    except RecursionError:
        problems.append(f"{_where(server, tool)} is skipped: its schemas nest too deeply to check")
    return None


def _mounted(
    pool: Pool, server: ServerConfig, tool: Mapping[str, Any], version: str, problems: list[str]
) -> Tool | None:
    remote = tool.get("name")
    where = _where(server, tool)
    if not isinstance(remote, str):
        problems.append(f"{where} is skipped: its name is not a string")
        return None
    name = f"{server.name}.{remote}"
    if not is_name(name):
        problems.append(
            f"{where} is skipped: {shorten(name)} is not a tool name (segments of letters, digits, _ and -, "
            f"not starting with a digit or -, joined by '.', at most {NAME_MAX} characters)"
        )
        return None
    try:
        document = tool.get("inputSchema", {"type": "object"})
        if isinstance(document, Mapping) and "type" not in document and "$ref" not in document:
            document = {**document, "type": "object"}  # MCP says an object; some servers leave "type" out
        input_schema = s.from_json_schema(document, closed=True)  # what define_tool takes: closed, imported once
        output = tool.get("outputSchema")
        output_schema = None if output is None else s.from_json_schema(output)
        for imported in (input_schema, output_schema):
            for unsupported in () if imported is None else imported.unsupported:
                which = "input" if imported is input_schema else "output"
                problems.append(f"{where}: its {which} schema: {unsupported}")
        description = tool.get("description")
        if not isinstance(description, str) or not description.strip():
            description = f"The tool {remote} of the MCP server {server.name}."
        declared: dict[str, Any] = {
            "name": name,
            "description": description,
            "input": input_schema,
            "output": output_schema,
            "permissions": server.permissions,
            # Without an output schema, the tool's result is content: text, or blocks holding media.
            "media": output_schema is None,
            "handler": mounted_handler(_handler(pool, server.name, remote), media=output_schema is None),
            "timeout": server.timeout,
            "hints": _hints(tool),
            "context": True,  # the server's progress, log messages and questions go to the call's context
        }
        own = tool.get("serverVersion")
        if isinstance(own, str):  # the server's version, when it is a semantic version (define_tool says)
            try:
                return define_tool(version=own, **declared)
            except InvalidDefinitionError as error:
                if error.field != "version":
                    raise
        return define_tool(version=version, **declared)
    except InvalidDefinitionError as error:
        problems.append(f"{where} is skipped: {error}")
        return None


def mount(
    pool: Pool, server: ServerConfig, listing: Listing, problems: list[str], version: str | None = None
) -> list[Tool]:
    """The tools of *server*'s *listing* that can be hosted; a problem appended to *problems* for each one that cannot.

    The tools mounted take at most the server's ``max_listing_bytes`` in all
    (:func:`listed_size`, in the order listed): one that would take them past
    it is skipped, and those after it still mounted if they fit.

    Args:
        pool: the pool the tools' handlers call through.
        server: the server's entry (its name, permissions, time limit, tool selection, listing budget).
        listing: its ``tools/list``, as JSON data.
        problems: where problems are appended.
        version: the version of the tools whose server gave none that is a semantic version.
    """
    wanted = None if server.tools is None else set(server.tools)
    tools: list[Tool] = []
    spent = 0
    over: list[tuple[Mapping[str, Any], int, int]] = []  # each tool past the budget, its size, what was spent before
    for tool in listing:
        if wanted is not None and tool.get("name") not in wanted:
            continue
        size = listed_size(tool)
        if spent + size > server.max_listing_bytes:
            over.append((tool, size, spent))
            continue
        mounted = _mount_one(pool, server, tool, version or _SEMVER_FALLBACK, problems)
        if mounted is not None:
            tools.append(mounted)
            spent += size
    if over:
        problems.append(_over_budget(server, over))
    if wanted is not None:
        listed = {tool.get("name") for tool in listing}
        for missing in sorted(wanted - listed):
            problems.append(
                f'MCP server "{server.name}" lists no tool "{shorten(missing)}" (its tools = [...] names it)'
            )
    return tools


def _over_budget(server: ServerConfig, over: list[tuple[Mapping[str, Any], int, int]]) -> str:
    """The problem of the tools skipped for *server*'s ``max_listing_bytes``: the one, or the first few and how many."""
    budget = server.max_listing_bytes
    remedy = f"raise max_listing_bytes in its [servers.{server.name}] entry if such tools are expected"
    if len(over) == 1:
        ((tool, size, spent),) = over
        taken = f", of which the tools mounted before it take {spent:,}" if spent else ""
        return (
            f"{_where(server, tool)} is skipped: it takes {size:,} bytes of JSON (its name, description and schemas), "
            f"and the server's tools may take {budget:,} bytes in all, its max_listing_bytes{taken} ({remedy})"
        )
    named = ", ".join(f'"{shorten(str(tool.get("name")))}"' for tool, _, _ in over[:5])
    more = f" and {len(over) - 5:,} more" if len(over) > 5 else ""
    return (
        f'{len(over):,} tools of MCP server "{server.name}" are skipped ({named}{more}): each would take its tools '
        f"past {budget:,} bytes of JSON (names, descriptions and schemas; each tool at least {TOOL_BYTES_MIN:,}), "
        f"its max_listing_bytes ({remedy})"
    )


def clash_advice(name: str, config_file: str) -> str:
    """How to keep both the mounted tool *name* and another plugin's tool of that name (hermes_yielding_tools).

    Args:
        name: the mounted tool's name, ``<server>.<tool>``.
        config_file: the configuration file that names the server.
    """
    server, remote = name.split(".", 1)
    return (
        f'rename the server "{server}" in {config_file} ([servers.{server}] as [servers.<another name>]; its '
        f'tools are then named <another name>.<tool>), or leave "{shorten(remote)}" out of the tools it mounts '
        f"(its tools = [...] list)"
    )


def drop_clashes(tools: list[Tool], problems: list[str]) -> list[Tool]:
    """*tools* without those whose names clash (one problem for each clash, naming the servers and the tools).

    Two names clash when they differ only in case, or when their wire names
    (what models and clients send) are the same but for case: a runtime
    refuses both, so one server's listing (or two servers' names) would
    otherwise break every tool of every server, and the local ones too.
    """
    by_case: dict[str, list[Tool]] = {}
    by_wire: dict[str, list[Tool]] = {}
    for tool in tools:
        by_case.setdefault(case_key(tool.name), []).append(tool)
        by_wire.setdefault(wire_name(tool.name).casefold(), []).append(tool)
    dropped: set[str] = set()
    for groups, why in (
        (by_case, "their names differ only in case, which models and clients that fold case cannot tell apart"),
        (by_wire, "their wire names, which models and clients send instead of the names, are the same but for case"),
    ):
        for group in groups.values():
            names = [tool.name for tool in group]
            if len(names) < 2 or dropped.issuperset(names):  # one tool, or a clash already reported
                continue
            servers = list(dict.fromkeys(name.split(".", 1)[0] for name in names))
            which = " and ".join(f'"{shorten(name)}"' for name in names)
            owners = ", ".join(f'"{server}"' for server in servers)
            problems.append(f"tools {which} of MCP server{'s' if len(servers) > 1 else ''} {owners} are skipped: {why}")
            dropped.update(names)
    return [tool for tool in tools if tool.name not in dropped]
