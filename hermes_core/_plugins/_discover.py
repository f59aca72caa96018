"""Discover installed plugins through entry points, check everything they contribute, build a runtime.

A plugin distribution declares one entry point::

    [project.entry-points."hermesos.plugins"]
    fs = "hermes_fs"

:func:`load_runtime` imports every such module once, calls its hooks (see
:mod:`hermes_core._plugins._hookspecs`), checks each contribution and returns a
:class:`~hermes_core.Runtime`. It is strict: any problem is a crash on boot,
naming the distribution, its version and the entry point. A plugin that fails
leaves nothing of itself behind. :func:`discover_plugins` with
``strict=False`` is the report mode: it loads what it can and lists every
problem of every plugin, so one broken plugin cannot hide the others.

Nothing here runs at ``import hermes_core``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._plugins._load import (
    canonicalize_name,
    contributions,
    guards,
    load_contributions,
    load_guards,
    new_manager,
    register,
)
from hermes_core._plugins._set import (
    DISABLE_ENV,
    Plugin,
    PluginLoadError,
    PluginOrigin,
    PluginProblem,
    PluginSet,
    failed,
    remedy,
)
from hermes_core._plugins._together import check_across, check_roots
from hermes_core._runtime._permissions import PermissionProvider, env_grants
from hermes_core.config._settings import setting

if TYPE_CHECKING:  # a listing makes no runtime: the call path is imported by the one that does (start-up)
    from hermes_core._runtime._runtime import Runtime
    from hermes_core._tool._approval import Approver

# Discovery only: the values are hermes_core._plugins._set's, loading one plugin is hermes_core._plugins._load's and the
# checks across plugins are hermes_core._plugins._together'. The names the command line takes from here are listed too.
__all__ = [
    "DISABLE_ENV",
    "ENTRY_POINT_GROUP",
    "Plugin",
    "PluginLoadError",
    "PluginOrigin",
    "PluginProblem",
    "PluginSet",
    "canonicalize_name",
    "discover_plugins",
    "load_module",
    "load_runtime",
    "remedy",
]

#: The entry-point group plugins declare themselves in.
ENTRY_POINT_GROUP = "hermesos.plugins"


def _entry_points(wanted: frozenset[str] | None) -> dict[tuple[str, str], tuple[Any, PluginOrigin, list[str]]]:
    """The plugins' entry points (of the *wanted* distributions, if given), by distribution and entry-point name."""
    # Not importlib.metadata, which costs more to import than the rest of 'hermesos tools list' but the
    # plugins: the same files, read the same way (hermes_core._plugins._distributions; docs/performance.md, start-up).
    from hermes_core._plugins._distributions import entry_points  # noqa: PLC0415 - discovery only

    found: dict[tuple[str, str], tuple[Any, PluginOrigin, list[str]]] = {}
    for entry_point in entry_points(ENTRY_POINT_GROUP):
        # The metadata file is parsed on every access to it: read it once.
        metadata = entry_point.dist.metadata if entry_point.dist is not None else None
        name = (metadata and metadata["Name"]) or "(unknown distribution)"
        if wanted is not None and canonicalize_name(name) not in wanted:
            continue
        version = (metadata and metadata["Version"]) or "?"
        requires = (metadata and metadata.get_all("Requires-Dist")) or []
        origin = PluginOrigin(name, version, entry_point.name, entry_point.value)
        # The same distribution on two sys.path entries is one plugin: the first found wins, as for imports.
        found.setdefault((canonicalize_name(name), entry_point.name), (entry_point, origin, list(requires)))
    if wanted is not None:
        _check_found(wanted, {dist for dist, _ in found})
    return found


def _wanted_names(only: Iterable[str]) -> frozenset[str]:
    if isinstance(only, str):
        raise InvalidDefinitionError(
            "discover_plugins()", "only", f"must be a list of distribution names such as [{only!r}], got a string"
        )
    return frozenset(canonicalize_name(name) for name in only)


def _check_found(wanted: frozenset[str], found: set[str]) -> None:
    """Raise naming the wanted distributions that have no installed plugin."""
    missing = sorted(wanted - found)
    if missing:
        names = ", ".join(missing)
        raise InvalidDefinitionError(
            "discover_plugins()",
            "only",
            f"names {names}, but no installed distribution of that name has a plugin (an entry point in the group "
            f"{ENTRY_POINT_GROUP!r}); install it (pip install -e .) or check the name",
        )


def _disabled_names(disable: Iterable[str]) -> frozenset[str]:
    names = [*disable, *setting(DISABLE_ENV, default="").split(",")]
    return frozenset(canonicalize_name(name.strip()) for name in names if name.strip())


def discover_plugins(
    *, disable: Iterable[str] = (), strict: bool = True, only: Iterable[str] | None = None
) -> PluginSet:
    """Find, import and check every installed plugin.

    Args:
        disable: entry-point or distribution names to skip (added to those in
            the ``HERMESOS_DISABLE_PLUGINS`` environment variable, comma-separated).
        strict: raise the first problem (the default), or, with False, record
            every problem of every plugin on the returned set (report mode).
        only: distribution names: load the plugins of these distributions and
            no other (the others are not imported, and not in the set). A name
            no installed plugin has is a problem of its own. None: all.

    Raises:
        InvalidDefinitionError: a plugin contributes something malformed, clashes
            with another plugin, or requires a hermesos-core other than this one.
        PluginLoadError: a plugin module failed to import, or a hook raised.
    """
    skip = _disabled_names(disable)
    found = _entry_points(None if only is None else _wanted_names(only))
    manager = new_manager()
    modules: list[object | None] = []
    plugins: list[Plugin] = []
    # Sorted, so that which of two clashing plugins loses does not depend on the file system.
    for (dist_key, ep_name), (entry_point, origin, requires) in sorted(found.items(), key=lambda item: item[0]):
        module: object | None = None
        if dist_key in skip or canonicalize_name(ep_name) in skip:
            plugin = Plugin(origin, disabled=True)
        else:
            try:
                module, plugin = load_guards(entry_point, origin, requires, manager)
            except (InvalidDefinitionError, PluginLoadError) as error:
                plugin = failed(origin, error, strict=strict)
        modules.append(module)
        plugins.append(plugin)
    # Every root against every guarded path before any plugin makes its tools: nothing a plugin starts to make
    # them (an MCP server listing its tools) runs while a directory a tool may write meets what decides it.
    check_roots(plugins, strict=strict)
    for index, module in enumerate(modules):
        if module is None:
            continue
        if not plugins[index].ok:
            manager.unregister(module)
            continue
        try:
            plugins[index] = load_contributions(module, plugins[index], manager)
        except (InvalidDefinitionError, PluginLoadError) as error:
            plugins[index] = failed(plugins[index].origin, error, strict=strict)
    return check_across(plugins, strict=strict)


def load_module(module: object) -> Plugin:
    """The contributions of *module*, checked as an installed plugin's are, without installing it.

    For tests and for applications that embed a plugin: *module* is any
    object with ``hermes_*`` hook functions (a module, a class, an instance).
    Its plugin's origin names it as the distribution ``(module)``.

    Raises:
        InvalidDefinitionError: the module contributes something malformed, or implements no hook.
        PluginLoadError: one of its hooks raised.
    """
    name = str(getattr(module, "__name__", None) or type(module).__name__)
    origin = PluginOrigin("(module)", "-", name, name)
    manager = new_manager()
    register(origin, module, manager)
    return contributions(guards(origin, module, manager), module, manager)


def load_runtime(
    *,
    grants: Iterable[str] = (),
    providers: Iterable[PermissionProvider] = (),
    disable: Iterable[str] = (),
    only: Iterable[str] | None = None,
    approver: Approver | None = None,
    lenient: bool = False,
) -> Runtime:
    """Discover the installed plugins, check all they contribute, and return a runtime of their tools.

    Strict: any problem with any (enabled) plugin raises here, at boot, never
    on a first call.

    Args:
        grants: grant patterns (``fs:write``, ``fs:*``, ``*``). The patterns in
            the ``HERMESOS_GRANTS`` environment variable (comma-separated) are
            always added.
        providers: permission providers, asked after those the plugins contribute.
        disable: entry-point or distribution names to skip, besides
            ``HERMESOS_DISABLE_PLUGINS``.
        only: load these distributions' plugins and no other, as for
            :func:`discover_plugins`.
        approver: who answers a provider's ask, as ``Runtime(approver=...)``'s
            (None: an ask is a denial); ``hermesos serve`` passes
            :func:`hermes_core.serve.elicit_approval`.
        lenient: repair an input its schema refused where that is
            unambiguous and lossless, as ``Runtime(lenient=...)`` does.

    Raises:
        InvalidDefinitionError: as :func:`discover_plugins`, or a malformed grant.
        PluginLoadError: as :func:`discover_plugins`.
    """
    found = discover_plugins(disable=disable, strict=True, only=only)
    return found.runtime(grants=(*grants, *env_grants()), providers=providers, approver=approver, lenient=lenient)
