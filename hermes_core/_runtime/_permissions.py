"""Permissions: grant patterns, and the provider protocol the runtime asks.

A tool declares permissions such as ``fs:write``. A runtime denies by
default: each permission a tool declares must be granted, by a grant pattern
or by a provider, and no provider may deny it. Any deny wins over any ask
(a provider's "have a person approve it"), and any ask over any grant.

Grant patterns:

* ``fs:write`` — exactly that permission;
* ``fs:*`` — every action of the ``fs`` namespace;
* ``*`` — every permission.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, final, runtime_checkable

from hermes_core._base._errors import InvalidDefinitionError, PermissionDeniedError
from hermes_core._base._frozen import derive, frozen
from hermes_core._tool._approval import Ask, audit

if TYPE_CHECKING:
    from hermes_core._tool._definition import Tool

__all__ = [
    "GRANTS_ENV",
    "GRANT_PATTERN",
    "EnvGrants",
    "PermissionProvider",
    "Permissions",
    "StaticGrants",
    "env_grants",
    "rule_warnings",
]

#: The environment variable of comma-separated grant patterns that ``load_runtime`` always adds.
GRANTS_ENV = "HERMESOS_GRANTS"

#: A grant: ``namespace:action``, ``namespace:*`` or ``*``.
GRANT_PATTERN = re.compile(r"\*\Z|[a-z][a-z0-9_-]*:(\*|[a-z][a-z0-9_-]*)\Z")


@runtime_checkable
class PermissionProvider(Protocol):
    """Anything with a ``check`` method; the runtime asks it about every permission of every call.

    A provider that decides from files (a policy file, say) should also have
    an attribute ``files``: the paths it read. The plugin loader refuses to
    start when one of them lies under a directory a loaded tool may write
    (see the ``hermes_write_roots`` hook), or has more than one hard link.

    A provider whose rules name tools (a policy's ``[tools."fs.write"]``)
    should also have a method ``check_tools(tools)``: given every tool a
    runtime of the loaded plugins will have, it returns a warning (a string)
    for each rule that applies to none of them, and raises
    :class:`~hermes_core.InvalidDefinitionError` for a rule that names one of
    them wrongly (``fs_write`` for ``fs.write``), whose deny would never
    apply. The plugin loader calls it once every plugin is loaded (see
    :func:`rule_warnings`): a warning is a problem of the provider's plugin,
    which stays loaded; a refusal drops the plugin, as a malformed rule does.
    """

    def check(self, tool: Tool, permission: str) -> bool | Ask | None:
        """Decide one permission for one call of *tool*.

        Returns:
            True to grant it, False to deny it (a deny wins over every ask and
            grant), an :class:`~hermes_core.Ask` to have a person approve the
            call (an ask wins over every grant; see ``Runtime(approver=...)``),
            or None to have no opinion. Exceptions are not swallowed: they
            propagate from ``Runtime.call``.

        """
        ...


@final
@frozen(init=False, repr=False)
class StaticGrants:
    """A provider granting a fixed set of patterns, and having no opinion on anything else.

    Args:
        patterns: grant patterns such as ``fs:write``, ``fs:*`` or ``*``.
        source: what to call the patterns in an error message (``grants``,
            ``HERMESOS_GRANTS``...).

    Raises:
        InvalidDefinitionError: a pattern is malformed.

    """

    patterns: tuple[str, ...]
    _all: bool
    _namespaces: frozenset[str]
    _exact: frozenset[str]

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
        derive(
            self,
            patterns=tuple(checked),
            _all="*" in checked,
            _namespaces=frozenset(p[:-2] for p in checked if p.endswith(":*")),
            _exact=frozenset(p for p in checked if not p.endswith("*")),
        )

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
    from hermes_core.config._settings import setting  # noqa: PLC0415 - runtimes built from grants alone never read it

    value: str = setting(GRANTS_ENV, default="", environ=environ)
    patterns = [part.strip() for part in value.split(",") if part.strip()]
    return StaticGrants(patterns, source=GRANTS_ENV).patterns


@final
@frozen(init=False, repr=False)
class EnvGrants:
    """A provider granting the patterns of ``HERMESOS_GRANTS``, read when it is made.

    ``load_runtime`` adds these patterns to its grants itself; this provider is
    for runtimes built by hand.

    Raises:
        InvalidDefinitionError: a pattern in the variable is malformed.
    """

    _grants: StaticGrants

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        derive(self, _grants=StaticGrants(env_grants(environ), source=GRANTS_ENV))

    @property
    def patterns(self) -> tuple[str, ...]:
        """The patterns read from the environment."""
        return self._grants.patterns

    def check(self, tool: Tool, permission: str) -> bool | None:
        """True where a pattern grants *permission*, else None (no opinion)."""
        return self._grants.check(tool, permission)

    def __repr__(self) -> str:
        return f"EnvGrants({list(self.patterns)!r})"


#: What the runtime calls the grant patterns in an audit record.
GRANTS_SOURCE = "grants"

#: The permissions that asked, and their providers' reasons, in the tool's order.
Asked = tuple[tuple[str, ...], tuple[str | None, ...]]

#: What a call must run before its input is checked, given the call's id when the audit log listens (else None):
#: raises PermissionDeniedError, or returns what asked for approval (None: nothing did).
Gate = Callable[[str | None], Asked | None]


def rule_warnings(source: str, providers: Iterable[PermissionProvider], tools: Sequence[Tool]) -> list[str]:
    """What *providers* say of their rules against *tools* (each one's ``check_tools``, if it has one): warnings.

    Args:
        source: what contributed the providers, for a message (a plugin's origin).
        providers: the providers; one without a callable ``check_tools`` says nothing.
        tools: every tool of the runtime to be.

    Raises:
        InvalidDefinitionError: a provider refused one of its rules, or its
            ``check_tools`` returned something other than an iterable of strings.
        Exception: whatever a provider's ``check_tools`` raised besides: the caller attributes it.
    """
    warnings: list[str] = []
    for provider in providers:
        check = getattr(provider, "check_tools", None)
        if not callable(check):
            continue
        said = check(tools)
        try:
            found = None if isinstance(said, str | bytes) else list(said or ())
        except TypeError:  # not iterable
            found = None
        if found is None or not all(isinstance(text, str) and text.strip() for text in found):
            raise InvalidDefinitionError(
                source,
                f"{type(provider).__name__}.check_tools()",
                "must return a list of warnings, each a non-empty string saying which rule applies to nothing",
            )
        warnings.extend(text.strip() for text in found)
    return warnings


def _source(provider: PermissionProvider) -> str:
    """What an audit record calls *provider*: its type's qualified name."""
    kind = type(provider)
    return f"{kind.__module__}.{kind.__qualname__}"


@final
@frozen(eq=False)
class Permissions:
    """The permission decisions of one runtime: its grant patterns, then its providers.

    Any deny wins; then any ask (:class:`~hermes_core.Ask`); then any grant.
    :meth:`gate` decides, once per tool, what each call of it must ask, so
    that a call of a tool that declares no permission asks nothing.

    Attributes:
        grants: the runtime's grant patterns.
        providers: the providers, asked in order on every call of a tool that
            declares permissions.

    """

    grants: StaticGrants
    providers: tuple[PermissionProvider, ...] = ()

    def gate(self, tool: Tool) -> Gate | None:
        """What a call of *tool* must run before its input is checked, or None when nothing needs asking.

        Without providers the grants decide once: the gate only writes the
        audit records (when the audit log listens) or raises for the first
        permission missing. With providers, each call asks them (:meth:`decide`).
        """
        if not tool.permissions:
            return None
        if self.providers:
            return functools.partial(self.decide, tool)
        for permission in tool.permissions:
            if not self.grants.allows(permission):
                return functools.partial(_deny, tool.name, permission)
        return functools.partial(_granted, tool.name, tool.permissions)

    def settles(self, tool: Tool) -> bool:
        """Whether the grants alone grant every permission *tool* declares (and no provider is asked)."""
        return bool(tool.permissions) and not self.providers and all(map(self.grants.allows, tool.permissions))

    def decide(self, tool: Tool, call_id: str | None = None) -> Asked | None:
        """Decide every permission of *tool* for one call, writing audit records under *call_id* if it is given.

        Returns:
            None when every permission is granted, else the permissions a
            provider answered :class:`~hermes_core.Ask` for, with their reasons.

        Raises:
            PermissionDeniedError: a provider denied a permission, or nothing granted nor asked for it.
            TypeError: a provider answered something other than True, False, None or an ``Ask``.
        """
        asked: list[str] = []
        reasons: list[str | None] = []
        asks: list[tuple[str, str]] = []  # (permission, source), audited once nothing denies
        granted: list[tuple[str, str]] = []
        for permission in tool.permissions:
            source = GRANTS_SOURCE if self.grants.allows(permission) else None
            ask: Ask | None = None
            for provider in self.providers:
                answer = provider.check(tool, permission)
                if answer is None:
                    continue
                if answer is False:
                    if call_id is not None:
                        audit(call_id, tool.name, permission, "denied", _source(provider))
                    raise PermissionDeniedError(tool.name, permission)
                if answer is True:
                    source = source or _source(provider)
                elif type(answer) is Ask:
                    if ask is None:
                        ask = answer
                        asks.append((permission, _source(provider)))
                else:
                    raise TypeError(
                        f"permission provider {provider!r} returned {answer!r} for {tool.name} / {permission}; "
                        "check() must return True, False or None, or an Ask"
                    )
            if ask is not None:
                asked.append(permission)
                reasons.append(ask.reason)
            elif source is None:
                if call_id is not None:
                    audit(call_id, tool.name, permission, "denied", "nothing granted it")
                raise PermissionDeniedError(tool.name, permission)
            else:
                granted.append((permission, source))
        if call_id is not None:
            for permission, source in granted:
                audit(call_id, tool.name, permission, "granted", source)
            for permission, source in asks:
                audit(call_id, tool.name, permission, "asked", source)
        return (tuple(asked), tuple(reasons)) if asked else None


def _granted(tool: str, permissions: tuple[str, ...], call_id: str | None) -> None:
    """The gate of a tool whose permissions the grants settle: audit records only."""
    if call_id is not None:
        for permission in permissions:
            audit(call_id, tool, permission, "granted", GRANTS_SOURCE)


def _deny(tool: str, permission: str, call_id: str | None) -> None:
    if call_id is not None:
        audit(call_id, tool, permission, "denied", "nothing granted it")
    raise PermissionDeniedError(tool, permission)
