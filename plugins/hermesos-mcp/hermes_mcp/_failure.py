"""What the other modules share about a server: its listing as data, how it failed, and how it refused a call."""

from __future__ import annotations

from typing import Any, final

from hermes_core import InputRejected, ToolFailedError, reject, shorten

__all__ = ["TEXT_MAX", "Listing", "ParamsRefused", "ServerFailure"]

# How much of a server's own error text a failure carries: enough for a model to act on, bounded.
TEXT_MAX = 2000

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
