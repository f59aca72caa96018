"""What plugin discovery yields: a plugin, where it comes from, its problems, the set of them and its runtime.

Values only: :mod:`hermes_core._plugins._load` makes a :class:`Plugin` of one
plugin, :mod:`hermes_core._plugins._together` checks them against each other and
:mod:`hermes_core._plugins._discover` finds them. A refused plugin's message ends with
:func:`remedy`: how to start without it, or, when it was refused for a
setting's value (:func:`refused_setting`), which setting to change first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, final

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import sentence
from hermes_core._plugins._guard import GuardedPath, check_guarded_files
from hermes_core._runtime._permissions import PermissionProvider, rule_warnings
from hermes_core._tool._definition import Tool
from hermes_core._tool._resources import Resource, resource_label
from hermes_core.config._settings import SettingRead, setting, setting_declared
from hermes_core.schema import Schema

if TYPE_CHECKING:  # a listing makes no runtime: the call path is imported by runtime() (start-up)
    from hermes_core._runtime._runtime import Runtime
    from hermes_core._tool._approval import Approver

__all__ = [
    "DISABLE_ENV",
    "Plugin",
    "PluginLoadError",
    "PluginOrigin",
    "PluginProblem",
    "PluginSet",
    "failed",
    "refused_setting",
    "remedies",
    "remedy",
]

#: Comma-separated entry-point or distribution names to skip.
DISABLE_ENV = "HERMESOS_DISABLE_PLUGINS"


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
    #: The setting that named each of them, where one did (a refusal of the root is the setting's to change).
    root_settings: Mapping[str, SettingRead] = field(default_factory=lambda: MappingProxyType({}))
    disabled: bool = False
    #: What its tools hold across calls (hermes_resources), opened and closed with a runtime.
    resources: tuple[Resource, ...] = ()
    #: What no tool may write that it decides from (hermes_guarded_paths): nothing of it runs while a root meets one.
    guarded_paths: tuple[GuardedPath, ...] = ()
    #: Its tools that give way on a clash, each with the remedy (hermes_yielding_tools).
    yielding: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    #: Where its code lies, which no tool may write either.
    sources: tuple[GuardedPath, ...] = ()

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

    def runtime(
        self,
        *,
        grants: Iterable[str] = (),
        providers: Iterable[PermissionProvider] = (),
        approver: Approver | None = None,
        lenient: bool = False,
    ) -> Runtime:
        """A runtime of the healthy plugins' tools, schemas, providers (asked first) and resources, plus *providers*.

        *approver* answers the providers' asks, as ``Runtime(approver=...)``'s does (None: an ask is a denial);
        *lenient* is ``Runtime(lenient=...)``'s.

        The runtime is not opened: ``with runtime:`` (or ``runtime.open()``)
        opens the plugins' resources, and an error opening one names its plugin.

        Raises:
            InvalidDefinitionError: as :class:`~hermes_core.Runtime`, or one of
                *providers* decides from a file a plugin's tools may write, or
                refuses a rule of its own that names one of the tools wrongly
                (its ``check_tools``, whose warnings are not reported here).
        """
        from hermes_core._runtime._runtime import Runtime  # noqa: PLC0415 - see the imports above

        extra = tuple(providers)
        check_guarded_files("providers", extra, self.write_roots)
        rule_warnings("providers", extra, self.tools)
        return Runtime(
            self.tools,
            grants=grants,
            providers=(*self.providers, *extra),
            schemas=self.schemas,
            resources=self.resources,
            resource_labels=self.resource_labels,
            approver=approver,
            lenient=lenient,
        )


def remedy(*distributions: str, settings: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> str:
    """What an operator does about the refused *distributions*, and where to read about them.

    Without *settings*, they are broken: start without them. With them, the
    distributions were refused for what those settings are set to (see
    :func:`refused_setting`): the fix is to change the settings, and starting
    without the distributions that read them is the second choice. The
    variable's value keeps the names it already holds, so the line can be
    pasted into a shell as it is.
    """
    import shlex  # noqa: PLC0415 - a broken plugin only: start-up (docs/performance.md)

    them = "it" if len(distributions) == 1 else "them"
    flags = " ".join(f"--disable {shlex.quote(name)}" for name in distributions)
    held = [part.strip() for part in setting(DISABLE_ENV, default="", environ=environ).split(",")]
    value = ",".join(dict.fromkeys(name for name in (*held, *distributions) if name))
    disable = f"{flags} or {DISABLE_ENV}={shlex.quote(value)}; 'hermesos check' lists every problem of every plugin."
    named = list(dict.fromkeys(settings))
    if not named:
        return f"To start without {them}, disable {them}: {disable}"
    if len(named) == 1:
        which, it = f"the setting {named[0]}", "it"
    else:
        which, it = f"the settings {', '.join(named[:-1])} and {named[-1]}", "them"
    readers = "the plugin that reads" if len(distributions) == 1 else "the plugins that read"
    return f"Change {which} as said above, and run the command again; or start without {readers} {it}: {disable}"


def refused_setting(error: BaseException) -> tuple[str, BaseException] | None:
    """The setting a plugin was refused for, and the refusal saying so; None for a plugin at fault.

    A refusal says it is a setting's when it is declared so (``setting
    HERMESOS_FS_ROOT``, by :func:`~hermes_core.setting`, by a plugin refusing
    what a setting names, or by the loader refusing a write root a setting
    named), or when it was raised from one that is (a plugin not loaded
    because another plugin's root, a setting's value, meets what it guards).
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, InvalidDefinitionError):
            variable = setting_declared(current.declaration)
            if variable is not None:
                return variable, current
        current = current.__cause__
    return None


def remedies(problems: Iterable[PluginProblem], environ: Mapping[str, str] | None = None) -> list[str]:
    """What an operator does about the plugins refused for *problems* (fatal ones), a line each way (:func:`remedy`).

    First the settings some were refused for, to change, or else the plugins
    reading them to start without (for a plugin refused for another's
    setting, that other plugin); then the broken plugins, to start without.
    """
    problems = list(problems)
    refusers = {id(problem.error): problem.origin.distribution for problem in problems}
    settings: dict[str, None] = {}
    readers: dict[str, None] = {}
    broken: dict[str, None] = {}
    for problem in problems:
        found = refused_setting(problem.error)
        if found is None:
            broken[problem.origin.distribution] = None
            continue
        variable, refusal = found
        settings[variable] = None
        readers[refusers.get(id(refusal), problem.origin.distribution)] = None
    lines = [remedy(*readers, settings=settings, environ=environ)] if settings else []
    return lines + ([remedy(*broken, environ=environ)] if broken else [])


def failed(origin: PluginOrigin, error: InvalidDefinitionError | PluginLoadError, *, strict: bool) -> Plugin:
    """Raise *error*, with the remedy, in strict mode; in report mode, the plugin with it as its one problem."""
    if not strict:
        return Plugin(origin, problems=(PluginProblem(origin, error),))
    if isinstance(error, InvalidDefinitionError):
        detail = _with_remedy(error.detail, origin, error)
        raise InvalidDefinitionError(error.declaration, error.field, detail) from error.__cause__
    text = str(error).removeprefix(f"{origin}: ")
    raise PluginLoadError(origin, _with_remedy(text, origin, error)) from error.__cause__


def _with_remedy(text: str, origin: PluginOrigin, error: Exception) -> str:
    """*text* as a sentence, then the remedy on a line of its own."""
    return f"{sentence(text)}\n{remedies([PluginProblem(origin, error)])[0]}"
