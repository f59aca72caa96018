"""What the other modules share about a server: its listing as data, and how it failed."""

from __future__ import annotations

from typing import Any, final

from hermes_core import ToolFailedError

__all__ = ["Listing", "ServerFailure"]

#: One server's tools as ``tools/list`` gave them, as JSON data.
Listing = list[dict[str, Any]]


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
