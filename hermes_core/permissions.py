"""Permissions: grant patterns, and the provider protocol the runtime asks.

A tool declares permissions such as ``fs:write``. A runtime denies by
default: each permission a tool declares must be granted, by a grant pattern
or by a provider, and no provider may deny it. Any deny wins over any grant.

Grant patterns:

* ``fs:write`` — exactly that permission;
* ``fs:*`` — every action of the ``fs`` namespace;
* ``*`` — every permission.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol, final, runtime_checkable

from hermes_core.errors import InvalidDefinitionError

if TYPE_CHECKING:
    from hermes_core.tool import Tool

__all__ = ["GRANTS_ENV", "GRANT_PATTERN", "EnvGrants", "PermissionProvider", "StaticGrants", "env_grants"]

#: The environment variable of comma-separated grant patterns that ``load_runtime`` always adds.
GRANTS_ENV = "HERMESOS_GRANTS"

#: A grant: ``namespace:action``, ``namespace:*`` or ``*``.
GRANT_PATTERN = re.compile(r"\*\Z|[a-z][a-z0-9_-]*:(\*|[a-z][a-z0-9_-]*)\Z")


@runtime_checkable
class PermissionProvider(Protocol):
    """Anything with a ``check`` method; the runtime asks it about every permission of every call."""

    def check(self, tool: Tool, permission: str) -> bool | None:
        """Decide one permission for one call of *tool*.

        Returns:
            True to grant it, False to deny it (a deny wins over every grant),
            or None to have no opinion. Exceptions are not swallowed: they
            propagate from ``Runtime.call``.

        """
        ...


@final
class StaticGrants:
    """A provider granting a fixed set of patterns, and having no opinion on anything else.

    Args:
        patterns: grant patterns such as ``fs:write``, ``fs:*`` or ``*``.
        source: what to call the patterns in an error message (``grants``,
            ``HERMESOS_GRANTS``...).

    Raises:
        InvalidDefinitionError: a pattern is malformed.

    """

    __slots__ = ("_all", "_exact", "_namespaces", "patterns")

    def __init__(self, patterns: Iterable[str], *, source: str = "grants") -> None:
        if isinstance(patterns, str):
            raise InvalidDefinitionError(
                "permission grants",
                source,
                f"must be a list of grant patterns such as ['fs:write'], got the string {patterns!r}",
            )
        checked: list[str] = []
        for index, pattern in enumerate(patterns):
            if not isinstance(pattern, str) or not GRANT_PATTERN.match(pattern):
                raise InvalidDefinitionError(
                    "permission grants",
                    f"{source}[{index}]",
                    "must be a grant pattern: 'namespace:action' (such as 'fs:write'), "
                    f"'namespace:*' (such as 'fs:*') or '*', got {pattern!r}",
                )
            checked.append(pattern)
        self.patterns: tuple[str, ...] = tuple(checked)
        self._all = "*" in checked
        self._namespaces = frozenset(p[:-2] for p in checked if p.endswith(":*"))
        self._exact = frozenset(p for p in checked if not p.endswith("*"))

    def allows(self, permission: str) -> bool:
        """Whether one of the patterns grants *permission*."""
        if self._all or permission in self._exact:
            return True
        return permission.partition(":")[0] in self._namespaces

    def check(self, tool: Tool, permission: str) -> bool | None:
        """True where a pattern grants *permission*, else None (no opinion)."""
        return True if self.allows(permission) else None

    def __repr__(self) -> str:
        return f"StaticGrants({list(self.patterns)!r})"


def env_grants(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The grant patterns in ``HERMESOS_GRANTS`` (comma-separated; blanks ignored), checked.

    Raises:
        InvalidDefinitionError: a pattern is malformed, naming ``HERMESOS_GRANTS``.
    """
    value = (os.environ if environ is None else environ).get(GRANTS_ENV, "")
    patterns = [part.strip() for part in value.split(",") if part.strip()]
    return StaticGrants(patterns, source=GRANTS_ENV).patterns


@final
class EnvGrants:
    """A provider granting the patterns of ``HERMESOS_GRANTS``, read when it is made.

    ``load_runtime`` adds these patterns to its grants itself; this provider is
    for runtimes built by hand.

    Raises:
        InvalidDefinitionError: a pattern in the variable is malformed.
    """

    __slots__ = ("_grants",)

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._grants = StaticGrants(env_grants(environ), source=GRANTS_ENV)

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns read from the environment."""
        return self._grants.patterns

    def check(self, tool: Tool, permission: str) -> bool | None:
        """True where a pattern grants *permission*, else None (no opinion)."""
        return self._grants.check(tool, permission)

    def __repr__(self) -> str:
        return f"EnvGrants({list(self.patterns)!r})"
