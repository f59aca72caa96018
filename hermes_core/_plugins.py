"""Discover installed plugins through entry points, check everything they contribute, build a runtime.

A plugin distribution declares one entry point::

    [project.entry-points."hermesos.plugins"]
    fs = "hermes_fs"

:func:`load_runtime` imports every such module once, calls its hooks (see
:mod:`hermes_core._hookspecs`), checks each contribution and returns a
:class:`~hermes_core.Runtime`. It is strict: any problem is a crash on boot,
naming the distribution, its version and the entry point. A plugin that fails
leaves nothing of itself behind. :func:`discover_plugins` with
``strict=False`` is the report mode: it loads what it can and lists every
problem of every plugin, so one broken plugin cannot hide the others.

Nothing here runs at ``import hermes_core``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, final

import pluggy

from hermes_core import _hookspecs as hookspecs
from hermes_core._checks import (
    GuardedPath,
    check_guarded_files,
    check_guarded_paths,
    check_paths,
    check_providers,
    check_schemas,
    check_tools,
    check_wiring,
    check_write_roots,
    core_guarded_paths,
)
from hermes_core._errors import InvalidDefinitionError
from hermes_core._frozen import derive, frozen
from hermes_core._issues import sentence, shorten
from hermes_core._names import case_key
from hermes_core._permissions import PermissionProvider, env_grants
from hermes_core._resources import Resource, check_resources, raised, resource_label
from hermes_core._runtime import Runtime
from hermes_core._tools import Tool
from hermes_core._version import __version__
from hermes_core.schema import Schema

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ENTRY_POINT_GROUP",
    "Plugin",
    "PluginLoadError",
    "PluginOrigin",
    "PluginProblem",
    "PluginSet",
    "discover_plugins",
    "load_module",
    "load_runtime",
    "remedy",
]

#: The entry-point group plugins declare themselves in.
ENTRY_POINT_GROUP = "hermesos.plugins"
#: Comma-separated entry-point or distribution names to skip.
DISABLE_ENV = "HERMESOS_DISABLE_PLUGINS"

_SEPARATORS = re.compile(r"[-_.]+")
_HOOKS = (
    "hermes_tools",
    "hermes_yielding_tools",
    "hermes_schemas",
    "hermes_permission_providers",
    "hermes_write_roots",
    "hermes_guarded_paths",
    "hermes_resources",
    "hermes_problems",
)


@final
@frozen
class PluginOrigin:
    """Where a plugin comes from: its distribution, version and entry point."""

    distribution: str
    version: str
    entry_point: str
    value: str

    def __str__(self) -> str:
        return f'plugin {self.distribution} {self.version} (entry point "{self.entry_point}" = {self.value})'


class PluginLoadError(Exception):
    """A plugin module failed to import, or one of its hooks raised.

    Deliberately not a :class:`~hermes_core.ToolError`: the tool framework did
    not throw it. The original exception is chained as ``__cause__``.

    Attributes:
        origin: the plugin's distribution, version and entry point.
    """

    def __init__(self, origin: PluginOrigin, message: str) -> None:
        self.origin = origin
        super().__init__(f"{origin}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_load_error, (self.origin, self.args[0]))


def _rebuild_load_error(origin: PluginOrigin, text: str) -> PluginLoadError:
    error = PluginLoadError(origin, "")
    error.args = (text,)
    return error


@final
@frozen
class PluginProblem:
    """One problem of one plugin: found in report mode, or reported by the plugin itself.

    Attributes:
        origin: the plugin at fault.
        error: the error strict mode would have raised
            (:class:`InvalidDefinitionError` or :class:`PluginLoadError`); for a
            problem the plugin reported (``hermes_problems``), a
            :class:`PluginLoadError` carrying its text.
        fatal: True when the plugin was dropped for it (nothing of it is
            used); False for a problem the plugin reported through
            ``hermes_problems``, which leaves it loaded, in strict mode too.
    """

    origin: PluginOrigin
    error: Exception
    fatal: bool = True

    @property
    def message(self) -> str:
        """What is wrong and what would be right, naming the plugin."""
        return str(self.error)


@final
@frozen
class Plugin:
    """One discovered plugin and what it contributed (nothing, if it is disabled or has a fatal problem)."""

    origin: PluginOrigin
    tools: tuple[Tool, ...] = ()
    schemas: Mapping[str, Schema] = field(default_factory=lambda: MappingProxyType({}))
    providers: tuple[PermissionProvider, ...] = ()
    #: Every problem of the plugin: fatal ones (it was dropped), and those it reported (hermes_problems).
    problems: tuple[PluginProblem, ...] = ()
    #: The directories the plugin's tools may write (hermes_write_roots), real paths.
    write_roots: tuple[str, ...] = ()
    disabled: bool = False
    #: What its tools hold across calls (hermes_resources), opened and closed with a runtime.
    resources: tuple[Resource, ...] = ()
    #: What no tool may write: its own source, and the paths it decides from (hermes_guarded_paths).
    guarded_paths: tuple[GuardedPath, ...] = ()
    #: Its tools that give way on a clash, each with the remedy (hermes_yielding_tools).
    yielding: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def ok(self) -> bool:
        """Whether the plugin loaded and its contributions are in use: not disabled, and no fatal problem."""
        return not self.disabled and not any(problem.fatal for problem in self.problems)

    @property
    def resource_labels(self) -> tuple[str, ...]:
        """What messages call each of its resources: its origin, ``hermes_resources[i]`` and the resource's type."""
        source = str(self.origin)
        return tuple(resource_label(source, "hermes_resources", i, r) for i, r in enumerate(self.resources))


@final
@frozen(init=False, eq=False)
class PluginSet:
    """The plugins found by :func:`discover_plugins`, and what the healthy ones contribute.

    Attributes:
        plugins: every plugin found, healthy, broken or disabled, in load order.

    """

    plugins: tuple[Plugin, ...]
    _origins: Mapping[str, PluginOrigin]

    def __init__(self, plugins: Iterable[Plugin]) -> None:
        found = tuple(plugins)
        derive(self, plugins=found, _origins={tool.name: p.origin for p in found if p.ok for tool in p.tools})

    @property
    def problems(self) -> tuple[PluginProblem, ...]:
        """Every problem of every plugin, in discovery order: fatal ones, and those the plugins reported."""
        return tuple(problem for plugin in self.plugins for problem in plugin.problems)

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools of the healthy plugins."""
        return tuple(tool for plugin in self.plugins if plugin.ok for tool in plugin.tools)

    @property
    def schemas(self) -> Mapping[str, Schema]:
        """The named schemas of the healthy plugins."""
        return MappingProxyType({k: v for p in self.plugins if p.ok for k, v in p.schemas.items()})

    @property
    def providers(self) -> tuple[PermissionProvider, ...]:
        """The permission providers of the healthy plugins."""
        return tuple(provider for plugin in self.plugins if plugin.ok for provider in plugin.providers)

    @property
    def resources(self) -> tuple[Resource, ...]:
        """The resources of the healthy plugins, in load order: the order a runtime of them opens them."""
        return tuple(resource for plugin in self.plugins if plugin.ok for resource in plugin.resources)

    @property
    def resource_labels(self) -> tuple[str, ...]:
        """What messages call each of :attr:`resources`, naming the plugin it came from."""
        return tuple(label for plugin in self.plugins if plugin.ok for label in plugin.resource_labels)

    def origin(self, tool: str) -> PluginOrigin | None:
        """The plugin a tool came from, or None if no healthy plugin contributed it."""
        return self._origins.get(tool)

    @property
    def write_roots(self) -> tuple[tuple[str, str], ...]:
        """The directories the healthy plugins' tools may write, each with the plugin that said so."""
        return tuple((str(p.origin), root) for p in self.plugins if p.ok for root in p.write_roots)

    def runtime(self, *, grants: Iterable[str] = (), providers: Iterable[PermissionProvider] = ()) -> Runtime:
        """A runtime of the healthy plugins' tools, schemas, providers (asked first) and resources, plus *providers*.

        The runtime is not opened: ``with runtime:`` (or ``runtime.open()``)
        opens the plugins' resources, and an error opening one names its plugin.

        Raises:
            InvalidDefinitionError: as :class:`~hermes_core.Runtime`, or one of
                *providers* decides from a file a plugin's tools may write.
        """
        extra = tuple(providers)
        check_guarded_files("providers", extra, self.write_roots)
        return Runtime(
            self.tools,
            grants=grants,
            providers=(*self.providers, *extra),
            schemas=self.schemas,
            resources=self.resources,
            resource_labels=self.resource_labels,
        )


class _PluginManager(pluggy.PluginManager):
    """Takes every ``hermes_*`` function of a plugin as a hook implementation, marked or not."""

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith("hermes_") and callable(getattr(plugin, name, None)):
            return {
                "wrapper": False,
                "hookwrapper": False,
                "optionalhook": False,
                "tryfirst": False,
                "trylast": False,
                "specname": None,
            }
        return opts


def canonicalize_name(name: str) -> str:
    """A distribution name as Python packaging compares them (PEP 503): ``Hermesos_FS`` is ``hermesos-fs``."""
    return _SEPARATORS.sub("-", name).lower()


# A requirement's leading name (PEP 508), and a requirement on the core that is only version clauses
# ("hermesos-core>=0.4", "hermesos_core >=0.4, <1"): the form every plugin's Requires-Dist takes.
_LEADING_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PLAIN_CORE = re.compile(r"\s*hermesos[-_.]core\s*([<>=!~][=<>!~=\s0-9A-Za-z.*+,-]*)", re.IGNORECASE)
# A version clause between plain release numbers ("0.4", "1.2.3"), and such a number.
_RELEASE_CLAUSE = re.compile(r"\s*(==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)\s*")
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def _plainly_met(clauses: str, installed: str) -> bool:
    """Whether the comma-separated version *clauses* are met by *installed*, when all are plain release numbers.

    False when they are not met, or when the clauses or the version are
    anything else (pre-releases, wildcards, ``~=``): packaging then decides. On
    plain release numbers every clause means what it says on the numbers,
    padded with zeros (``==0.4`` holds 0.4.0), as packaging reads them; and
    importing packaging costs 'hermesos tools list' about 3 ms
    (docs/performance.md, start-up).
    """
    if _RELEASE.fullmatch(installed) is None:
        return False
    have = tuple(int(part) for part in installed.split("."))
    for clause in clauses.split(","):
        found = _RELEASE_CLAUSE.fullmatch(clause)
        if found is None:
            return False
        operator, text = found.groups()
        want = tuple(int(part) for part in text.split("."))
        width = max(len(have), len(want))
        mine, theirs = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        met = {
            "==": mine == theirs,
            "!=": mine != theirs,
            "<=": mine <= theirs,
            ">=": mine >= theirs,
            "<": mine < theirs,
            ">": mine > theirs,
        }[operator]
        if not met:
            return False
    return True


def _check_requirement(origin: PluginOrigin, requires: Iterable[str]) -> None:
    """Raise if the plugin's own requirement on hermesos-core is not met by the installed core."""
    # Imported here, not at the top: importing hermes_core stays cheap for code that never loads plugins.
    # Release-number clauses met by this release (every bundled plugin's) need no packaging at all; other
    # plain clauses need only packaging's specifiers; the full parser (markers, extras) costs a third of
    # what 'hermesos tools list' spends importing (docs/performance.md, start-up).
    installed = __version__
    for line in requires:
        leading = _LEADING_NAME.match(line)
        if leading is None or canonicalize_name(leading.group(1)) != "hermesos-core":
            continue  # another distribution's (or not a requirement: the installer accepted it, not ours to judge)
        plain = _PLAIN_CORE.fullmatch(line)
        if plain is not None and _plainly_met(plain.group(1), installed):
            continue
        if plain is not None:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415

            try:
                specifier = SpecifierSet(plain.group(1))
            except InvalidSpecifier:
                continue
            text = f"{leading.group(1)}{specifier}"  # as str(Requirement(line)) would be
        else:
            from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue  # the installer already accepted it; not ours to judge
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            specifier, text = requirement.specifier, str(requirement)
        if not specifier.contains(installed, prereleases=True):
            raise InvalidDefinitionError(
                str(origin),
                "Requires-Dist",
                f'requires "{text}", but hermesos-core {installed} is installed; install a hermesos-core '
                f'that satisfies it (pip install "hermesos-core{specifier}") or a release of '
                f"{origin.distribution} made for hermesos-core {installed}",
            )


def _step(origin: PluginOrigin, step: str) -> None:
    """Log *step* of a plugin (its import, each hook) as a DEBUG record whose ``plugin`` and ``step`` name it.

    'hermesos check --timeout' reads them to say which plugin it had to stop.
    Only where ``logging`` is imported already: where it is not, no handler
    exists that could receive the record, and importing it would cost every
    'hermesos tools list' about 4 ms (docs/performance.md, start-up).
    """
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(__name__).debug("%s: %s", origin, step, extra={"plugin": origin, "step": step})


def _import(origin: PluginOrigin, entry_point: EntryPoint) -> object:
    step = f"importing {entry_point.value}"
    _step(origin, step)
    try:
        return entry_point.load()
    except InvalidDefinitionError as error:
        raise InvalidDefinitionError(f"{origin}: {error.declaration}", error.field, error.detail) from error
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # sys.exit(), GeneratorExit...: the module's failure, not the command's
        raise PluginLoadError(origin, f"importing {entry_point.value} failed with {raised(error)}") from error


def _new_manager() -> _PluginManager:
    manager = _PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def _register(origin: PluginOrigin, plugin: object, manager: _PluginManager) -> None:
    """Register *plugin*, or raise and leave *manager* as it was."""
    # Entry-point names are only unique within a distribution.
    name = f"{origin.distribution}:{origin.entry_point}"
    if manager.is_registered(plugin):
        other = manager.get_name(plugin)
        raise InvalidDefinitionError(
            str(origin), None, f"names the plugin object {other} already loaded; each entry point needs its own module"
        )
    try:
        manager.register(plugin, name=name)
    except pluggy.PluginValidationError as error:
        manager.unregister(name=name)
        detail = " ".join(str(error).split())
        raise InvalidDefinitionError(
            str(origin), None, f"implements a hook with arguments its spec does not have ({detail}); hooks take none"
        ) from None
    callers = manager.get_hookcallers(plugin) or []
    if not callers:
        manager.unregister(plugin)
        raise InvalidDefinitionError(
            str(origin),
            None,
            f"implements no hook: {origin.value} defines none of {', '.join(_HOOKS)}; a plugin must define at "
            "least one (marked @hermes_core.hookimpl, or named exactly so). Point the entry point at the module "
            "that defines them",
        )
    unknown = [caller.name for caller in callers if caller.name not in _HOOKS]
    wrappers = [
        caller.name
        for caller in callers
        for impl in caller.get_hookimpls()
        if impl.plugin is plugin and (impl.wrapper or impl.hookwrapper)
    ]
    if unknown or wrappers:
        manager.unregister(plugin)
    if unknown:
        close = difflib.get_close_matches(unknown[0], _HOOKS, n=1)
        hint = f'; did you mean "{close[0]}"?' if close else f"; the hooks are {', '.join(_HOOKS)}"
        raise InvalidDefinitionError(str(origin), unknown[0], f"is not a hermesos hook{hint}")
    if wrappers:
        raise InvalidDefinitionError(
            str(origin), wrappers[0], "is a hook wrapper; hermesos hooks are plain functions returning contributions"
        )


def _call(origin: PluginOrigin, plugin: object, manager: _PluginManager, hook: str) -> list[Any]:
    """Call *plugin*'s own implementation of *hook* (if any), attributing any failure to it."""
    results: list[Any] = []
    for impl in getattr(manager.hook, hook).get_hookimpls():
        if impl.plugin is not plugin:
            continue
        _step(origin, f"hook {hook}")
        try:
            result = impl.function()
        except InvalidDefinitionError as error:
            raise InvalidDefinitionError(f"{origin}: {error.declaration}", error.field, error.detail) from error
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # sys.exit(), GeneratorExit...: the hook's failure, not the command's
            raise PluginLoadError(origin, f"hook {hook} raised {raised(error)}") from error
        if result is not None:
            results.append(result)
    return results


def _items(origin: PluginOrigin, hook: str, results: list[Any], what: str) -> list[Any]:
    """Flatten a hook's results (each an iterable) into one list, refusing anything else."""
    items: list[Any] = []
    for result in results:
        if isinstance(result, str | bytes | Mapping | Tool) or not isinstance(result, Iterable):
            raise InvalidDefinitionError(
                str(origin), hook, f"returned {type(result).__name__}; it must return an iterable (a list) of {what}"
            )
        try:
            items.extend(result)  # a generator hook's body runs here
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # as in _call
            raise PluginLoadError(origin, f"iterating what {hook} returned raised {raised(error)}") from error
    return items


def _contributions(
    origin: PluginOrigin, plugin: object, manager: _PluginManager, sources: tuple[GuardedPath, ...] = ()
) -> Plugin:
    """What *plugin*'s hooks contribute, held to the rules a runtime holds them to (hermes_core._checks).

    *sources* are where its code lies, guarded with the paths it names itself.
    """
    source = str(origin)
    tools = _items(origin, "hermes_tools", _call(origin, plugin, manager, "hermes_tools"), "Tool made by define_tool()")
    checked = check_tools(source, "hermes_tools", tools)
    yielding = _yielding(origin, checked, _call(origin, plugin, manager, "hermes_yielding_tools"))
    schemas: dict[str, Schema] = {}
    for result in _call(origin, plugin, manager, "hermes_schemas"):
        schemas.update(check_schemas(source, "hermes_schemas", result))
    providers = _items(
        origin,
        "hermes_permission_providers",
        _call(origin, plugin, manager, "hermes_permission_providers"),
        "providers",
    )
    roots = _items(origin, "hermes_write_roots", _call(origin, plugin, manager, "hermes_write_roots"), "paths")
    guarded = _items(origin, "hermes_guarded_paths", _call(origin, plugin, manager, "hermes_guarded_paths"), "paths")
    # After hermes_tools: a plugin may make its resources there, and return them here.
    resources = _items(origin, "hermes_resources", _call(origin, plugin, manager, "hermes_resources"), "resources")
    problems = _items(origin, "hermes_problems", _call(origin, plugin, manager, "hermes_problems"), "strings")
    return Plugin(
        origin,
        tuple(checked.values()),
        MappingProxyType(schemas),
        check_providers(source, "hermes_permission_providers", providers),
        write_roots=check_write_roots(source, "hermes_write_roots", roots),
        guarded_paths=(*sources, *_guarded(origin, check_paths(source, "hermes_guarded_paths", guarded))),
        resources=check_resources(source, "hermes_resources", resources),
        problems=_reported(origin, problems),
        yielding=yielding,
    )


def _yielding(origin: PluginOrigin, tools: Mapping[str, Tool], results: list[Any]) -> Mapping[str, str]:
    """What hermes_yielding_tools returned, checked: names of the plugin's own tools, each with a remedy."""
    yielding: dict[str, str] = {}
    for result in results:
        if not isinstance(result, Mapping):
            raise InvalidDefinitionError(
                str(origin),
                "hermes_yielding_tools",
                f"returned {type(result).__name__}; it must return a mapping of tool name to remedy",
            )
        for name, advice in result.items():
            if not isinstance(name, str) or name not in tools:
                raise InvalidDefinitionError(
                    str(origin),
                    f"hermes_yielding_tools[{shorten(repr(name))}]",
                    "is not the name of one of the plugin's tools (hermes_tools)",
                )
            if not isinstance(advice, str) or not advice.strip():
                got = "an empty string" if isinstance(advice, str) else type(advice).__name__
                raise InvalidDefinitionError(
                    str(origin),
                    f"hermes_yielding_tools[{name!r}]",
                    f"must be a string saying how to keep both tools, got {got}",
                )
            yielding[name] = advice.strip()
    return MappingProxyType(yielding)


def _guarded(origin: PluginOrigin, paths: Iterable[str]) -> tuple[GuardedPath, ...]:
    """The paths a plugin said it decides from (hermes_guarded_paths), saying so in messages."""
    what = f"a path plugin {origin.distribution} reads to decide what runs or what is granted (hermes_guarded_paths)"
    return tuple(GuardedPath(path, what) for path in paths)


def _editable_folder(distribution: Any) -> str | None:
    """The source folder of an editable install (``pip install -e``), from its ``direct_url.json``; else None."""
    try:
        text = distribution.read_text("direct_url.json") if distribution is not None else None
        found = json.loads(text) if text else None
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not isinstance(found.get("dir_info"), dict):
        return None
    url = found.get("url")
    if not found["dir_info"].get("editable") or not isinstance(url, str) or not url.startswith("file:"):
        return None
    from urllib.request import url2pathname  # noqa: PLC0415 - slow to import (http, email, ssl); editable only

    return url2pathname(urllib.parse.urlparse(url).path) or None


def _sources(distribution: Any, module: str, label: str) -> tuple[GuardedPath, ...]:
    """Where the code of *module* (and of its distribution, if installed editable) lies: no tool may write there."""
    found: list[GuardedPath] = []
    editable = _editable_folder(distribution)
    if editable:
        found.append(GuardedPath(editable, f"the source of {label} (installed editable)"))
    top = sys.modules.get(module.partition(".")[0])
    file = getattr(top, "__file__", None)
    if isinstance(file, str) and file:
        # A package is its folder; a module its one file (its folder may be a site-packages directory, guarded anyway).
        is_package = getattr(top, "__path__", None) is not None
        found.append(GuardedPath(os.path.dirname(file) if is_package else file, f"the source of {label}"))
    return tuple(found)


def _core_sources() -> tuple[GuardedPath, ...]:
    """Where hermesos-core's own code lies."""
    import importlib.metadata  # noqa: PLC0415 - as in _entry_points

    try:
        distribution: Any = importlib.metadata.distribution("hermesos-core")
    except importlib.metadata.PackageNotFoundError:
        distribution = None
    return _sources(distribution, "hermes_core", "hermesos-core")


def _reported(origin: PluginOrigin, problems: list[Any]) -> tuple[PluginProblem, ...]:
    """The problems a plugin reported (hermes_problems), each a non-empty string, as non-fatal problems of it."""
    reported: list[PluginProblem] = []
    for index, text in enumerate(problems):
        if not isinstance(text, str) or not text.strip():
            got = "an empty string" if isinstance(text, str) else type(text).__name__
            raise InvalidDefinitionError(
                str(origin), f"hermes_problems[{index}]", f"must be a string saying what is wrong, got {got}"
            )
        reported.append(PluginProblem(origin, PluginLoadError(origin, text.strip()), fatal=False))
    return tuple(reported)


def _load_one(
    entry_point: EntryPoint, origin: PluginOrigin, requires: Iterable[str], manager: _PluginManager
) -> Plugin:
    _check_requirement(origin, requires)
    plugin = _import(origin, entry_point)
    _register(origin, plugin, manager)
    sources = _sources(entry_point.dist, entry_point.module, f"plugin {origin.distribution}")
    try:
        return _contributions(origin, plugin, manager, sources)
    except (InvalidDefinitionError, PluginLoadError):
        manager.unregister(plugin)
        raise


def _entry_points(wanted: frozenset[str] | None) -> dict[tuple[str, str], tuple[Any, PluginOrigin, list[str]]]:
    """The plugins' entry points (of the *wanted* distributions, if given), by distribution and entry-point name."""
    # Only discovery needs it. The standard library's, not the importlib-metadata backport: on every
    # Python this package supports (3.11+) it has entry_points(group=...) and EntryPoint.dist, and it scans
    # and reads metadata several times faster (docs/performance.md, start-up).
    from importlib.metadata import entry_points  # noqa: PLC0415

    found: dict[tuple[str, str], tuple[Any, PluginOrigin, list[str]]] = {}
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
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
    names = [*disable, *os.environ.get(DISABLE_ENV, "").split(",")]
    return frozenset(canonicalize_name(name.strip()) for name in names if name.strip())


def _conflicts(plugin: Plugin, tools: dict[str, tuple[str, PluginOrigin]], schemas: dict[str, PluginOrigin]) -> None:
    """Raise if *plugin* contributes a tool or schema name an earlier plugin already did.

    A tool name clashes with one differing only in case too (``getTinyImage``,
    ``gettinyimage``), as in a runtime: *tools* is keyed by :func:`case_key`,
    holding the name as given and the plugin that gave it. The tools that
    yield (hermes_yielding_tools) are left to :func:`_give_way`, after every
    other tool is known.
    """
    for tool in plugin.tools:
        if tool.name not in plugin.yielding and case_key(tool.name) in tools:
            name, other = tools[case_key(tool.name)]
            same = "is also" if name == tool.name else f'differs only in case from the tool "{name}"'
            raise InvalidDefinitionError(
                str(plugin.origin),
                f'tool "{tool.name}"',
                f"{same} contributed by {other}; tool names must be unique across installed plugins, and differ "
                f"in more than case: uninstall or disable one of {other.distribution} and "
                f"{plugin.origin.distribution}",
            )
    for name in plugin.schemas:
        if name in schemas:
            other = schemas[name]
            raise InvalidDefinitionError(
                str(plugin.origin),
                f'schema "{name}"',
                f"is also contributed by {other}; schema names must be unique across installed plugins: "
                f"uninstall or disable one of {other.distribution} and {plugin.origin.distribution}",
            )


def _give_way(plugin: Plugin, tools: dict[str, tuple[str, PluginOrigin]]) -> Plugin:
    """*plugin* without its yielding tools that clash with one in *tools*: a non-fatal problem for each.

    The others are added to *tools*, so that of two yielding tools that clash
    the first (in plugin order) stays.
    """
    kept: list[Tool] = []
    problems: list[PluginProblem] = []
    for tool in plugin.tools:
        if tool.name in plugin.yielding:
            clash = tools.get(case_key(tool.name))
            if clash is not None:
                name, other = clash
                same = "is also" if name == tool.name else f'differs only in case from the tool "{name}"'
                text = (
                    f'tool "{tool.name}" is left out: it {same} contributed by {other}, which keeps it; '
                    f"the other tools of {plugin.origin.distribution} are used. "
                    f"To have both: {sentence(plugin.yielding[tool.name])}"
                )
                problems.append(PluginProblem(plugin.origin, PluginLoadError(plugin.origin, text), fatal=False))
                continue
            tools[case_key(tool.name)] = (tool.name, plugin.origin)
        kept.append(tool)
    if not problems:
        return plugin
    return replace(plugin, tools=tuple(kept), problems=(*plugin.problems, *problems))


def _check_wiring(plugin: Plugin, schemas: Mapping[str, Schema]) -> None:
    """Raise, naming the plugin, if its tools or schemas do not resolve against every plugin's schemas."""
    try:
        check_wiring(plugin.tools, plugin.schemas, schemas)
    except InvalidDefinitionError as error:
        raise InvalidDefinitionError(f"{plugin.origin}: {error.declaration}", error.field, error.detail) from error


def remedy(*distributions: str, environ: Mapping[str, str] | None = None) -> str:
    """How an operator starts without the broken *distributions*, and where to read about them.

    The variable's value keeps the names it already holds, so the line can be
    pasted into a shell as it is.
    """
    them = "it" if len(distributions) == 1 else "them"
    flags = " ".join(f"--disable {shlex.quote(name)}" for name in distributions)
    held = [part.strip() for part in (os.environ if environ is None else environ).get(DISABLE_ENV, "").split(",")]
    value = ",".join(dict.fromkeys(name for name in (*held, *distributions) if name))
    return (
        f"To start without {them}, disable {them}: {flags} or {DISABLE_ENV}={shlex.quote(value)}; "
        "'hermesos check' lists every problem of every plugin."
    )


def _failed(origin: PluginOrigin, error: InvalidDefinitionError | PluginLoadError, *, strict: bool) -> Plugin:
    """Raise *error*, with the remedy, in strict mode; in report mode, the plugin with it as its one problem."""
    if not strict:
        return Plugin(origin, problems=(PluginProblem(origin, error),))
    if isinstance(error, InvalidDefinitionError):
        detail = _with_remedy(error.detail, origin)
        raise InvalidDefinitionError(error.declaration, error.field, detail) from error.__cause__
    text = str(error).removeprefix(f"{origin}: ")
    raise PluginLoadError(origin, _with_remedy(text, origin)) from error.__cause__


def _with_remedy(text: str, origin: PluginOrigin) -> str:
    """*text* as a sentence, then the remedy on a line of its own."""
    return f"{sentence(text)}\n{remedy(origin.distribution)}"


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
    manager = _new_manager()
    plugins: list[Plugin] = []
    # Sorted, so that which of two clashing plugins loses does not depend on the file system.
    for (dist_key, ep_name), (entry_point, origin, requires) in sorted(found.items(), key=lambda item: item[0]):
        if dist_key in skip or canonicalize_name(ep_name) in skip:
            plugins.append(Plugin(origin, disabled=True))
            continue
        try:
            plugins.append(_load_one(entry_point, origin, requires, manager))
        except (InvalidDefinitionError, PluginLoadError) as error:
            plugins.append(_failed(origin, error, strict=strict))

    # What no tool may write, taken before any plugin is dropped by the checks across plugins: the source of a
    # plugin dropped for a clash still runs at the next start.
    guarded = [*core_guarded_paths(), *_core_sources(), *(path for p in plugins for path in p.guarded_paths)]

    # Checks across plugins, in order of distribution name: of two that clash, the later loses.
    tools: dict[str, tuple[str, PluginOrigin]] = {}  # case_key -> the tool's name and its plugin
    schemas: dict[str, PluginOrigin] = {}
    for index, plugin in enumerate(plugins):
        if not plugin.ok:
            continue
        try:
            _conflicts(plugin, tools, schemas)
        except InvalidDefinitionError as error:
            plugins[index] = _failed(plugin.origin, error, strict=strict)
            continue
        tools.update((case_key(t.name), (t.name, plugin.origin)) for t in plugin.tools if t.name not in plugin.yielding)
        schemas.update((name, plugin.origin) for name in plugin.schemas)
    # A yielding tool that clashes with any other is left out alone, whichever plugin's name sorts first.
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.yielding:
            plugins[index] = _give_way(plugin, tools)

    # A plugin whose refs do not resolve is dropped; dropping it may unresolve another's, so repeat.
    changed = True
    while changed:
        changed = False
        named = PluginSet(plugins).schemas
        for index, plugin in enumerate(plugins):
            if not plugin.ok:
                continue
            try:
                _check_wiring(plugin, named)
            except InvalidDefinitionError as error:
                plugins[index] = _failed(plugin.origin, error, strict=strict)
                changed = True

    # No provider may decide from a file that any plugin's tools may write.
    roots = PluginSet(plugins).write_roots
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.providers:
            try:
                check_guarded_files(str(plugin.origin), plugin.providers, roots)
            except InvalidDefinitionError as error:
                plugins[index] = _failed(plugin.origin, error, strict=strict)

    # No plugin's tools may write where hermesos, the interpreter or a plugin decides what runs or is granted.
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.write_roots:
            writable = [(str(plugin.origin), "hermes_write_roots", root) for root in plugin.write_roots]
            try:
                check_guarded_paths(guarded, writable)
            except InvalidDefinitionError as error:
                plugins[index] = _failed(plugin.origin, error, strict=strict)
    return PluginSet(plugins)


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
    manager = _new_manager()
    _register(origin, module, manager)
    return _contributions(origin, module, manager)


def load_runtime(
    *,
    grants: Iterable[str] = (),
    providers: Iterable[PermissionProvider] = (),
    disable: Iterable[str] = (),
    only: Iterable[str] | None = None,
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

    Raises:
        InvalidDefinitionError: as :func:`discover_plugins`, or a malformed grant.
        PluginLoadError: as :func:`discover_plugins`.
    """
    found = discover_plugins(disable=disable, strict=True, only=only)
    return found.runtime(grants=(*grants, *env_grants()), providers=providers)
