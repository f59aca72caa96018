"""What the other modules share about a server: its listing as data and its weight, how it failed or refused a call.

And its words made safe to show a person (:func:`plain`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, final

from hermes_core import InputRejected, ToolFailedError, reject, shorten

__all__ = ["TEXT_MAX", "TOOL_BYTES_MIN", "Listing", "ParamsRefused", "ServerFailure", "listed_size", "plain"]

# How much of a server's own error text a failure carries: enough for a model to act on, bounded.
TEXT_MAX = 2000

#: One server's tools as ``tools/list`` gave them, as JSON data.
Listing = list[dict[str, Any]]

#: What one tool counts for in its server's ``max_listing_bytes``, however small its JSON: holding a tool (its
#: definition, its compiled checks) takes some 10 KB whatever its schemas, so a listing of 100,000 tiny tools
#: is 100,000 KiB of the budget, not the 6 MB it is written in.
TOOL_BYTES_MIN: Final = 1024


def listed_size(tool: Mapping[str, Any]) -> int:
    """What *tool*, one entry of a listing, counts for in its server's ``max_listing_bytes``.

    The bytes of its JSON (name, description, schemas, annotations: all that is
    kept of it), at least :data:`TOOL_BYTES_MIN`. A tool that cannot be written
    as JSON (nested past what the writer takes: no reader of a server's
    listing gives one) counts as that least: mounting it fails, saying why.
    """
    try:
        written = json.dumps(tool, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return TOOL_BYTES_MIN
    return max(TOOL_BYTES_MIN, len(written.encode("utf-8", "surrogatepass")))


def plain(text: str, *, lines: bool = False) -> str:
    """*text* with every character that is not printable as a space: a server's words shown to a person.

    Escape sequences and control characters (a terminal's colours, a carriage
    return that rewrites the line, a right-to-left override) could make a
    question or a log line read as something hermesos said. With *lines*, line
    breaks and tabs are kept (a log message of several lines).
    """
    if text.isprintable():
        return text
    kept = "\n\t" if lines else ""
    return "".join(char if char.isprintable() or char in kept else " " for char in text)


@final
class ServerFailure(Exception):  # noqa: N818 - a fact about a server, reported as a problem or TOOL_FAILED
    """A server could not be started, listed or reached; the message says why, in words for an operator.

    Attributes:
        server: the server's name.
        retryable: whether the same call may work later (a server that is
            down may come back; one that answered with an error will not).

    """

    def __init__(self, server: str, detail: str, *, retryable: bool = True) -> None:
        self.server = server
        self.retryable = retryable
        super().__init__(detail)

    def tool_failed(self) -> ToolFailedError:
        """This failure as the error a call of one of the server's tools raises."""
        return ToolFailedError(f'the MCP server "{self.server}" {self}', retryable=self.retryable)


@final
class ParamsRefused(Exception):  # noqa: N818 - a fact about a call, reported as INPUT_INVALID
    """A server refused a call's arguments: a JSON-RPC "invalid params" error (-32602), in the server's words.

    Attributes:
        server: the server's name.
        said: the server's message, bounded.

    """

    def __init__(self, server: str, said: str) -> None:
        self.server = server
        self.said = said = shorten(said.strip() or "no message", TEXT_MAX)
        super().__init__(said)

    def rejected(self) -> InputRejected:
        """This refusal as the input refusal a call of one of the server's tools raises (``INPUT_INVALID``)."""
        return reject((), f'was refused by the MCP server "{self.server}": {self.said}')
