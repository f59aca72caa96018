"""The bridge between synchronous callers and ``async`` handlers, for ``Runtime.call_sync``.

``asyncio`` is imported only when an async handler is run synchronously: it
adds some 30 ms to importing ``hermes_core``, which code that only ever
calls plain handlers should not pay.
"""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from typing import Any

__all__ = ["loop_running", "require_no_loop", "run_coroutine"]


def loop_running() -> bool:
    """Whether this thread runs an event loop (none can while asyncio was never imported)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def require_no_loop(tool: str) -> None:
    """Raise before an async handler runs if this thread's event loop would make running it impossible.

    Raises:
        RuntimeError: this thread runs an event loop.
    """
    if loop_running():
        raise RuntimeError(
            f"{tool} has an async handler and call_sync() was called inside a running event loop; "
            "use 'await runtime.call(...)' there"
        )


def run_coroutine(tool: str, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run *coroutine* (a plain handler's result) to completion in a new event loop; return its result.

    Raises:
        RuntimeError: this thread already runs an event loop (the coroutine is closed, never run).
    """
    if loop_running():
        coroutine.close()
        raise RuntimeError(
            f"{tool}'s handler returned a coroutine and call_sync() was called inside a running event loop; "
            "use 'await runtime.call(...)' there"
        )
    import asyncio  # noqa: PLC0415 - see the module docstring

    return asyncio.run(coroutine)
