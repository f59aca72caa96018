"""Loading one plugin: from its entry point to its contributions, checked.

The plugin's requirement on hermesos-core is checked first (before its code
runs), then its module is imported and registered, and each of its hooks (see
:mod:`hermes_core._plugins._hookspecs`) is called and what it returns held to the rules
a runtime holds it to (:mod:`hermes_core._runtime._checks`), in two halves: where its
tools write and what it guards (:func:`load_guards`), then, once the loader
has checked those of every plugin against each other, the rest
(:func:`load_contributions`). Every failure names the plugin; a plugin that
fails leaves nothing of itself registered.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from types import FunctionType, MappingProxyType, MethodType, ModuleType
from typing import TYPE_CHECKING, Any, Final, TypeVar

import pluggy

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import shorten
from hermes_core._base._version import __version__
from hermes_core._plugins import _hookspecs as hookspecs
from hermes_core._plugins._guard import GuardedPath, check_paths, check_write_roots, code_sources, named_by
from hermes_core._plugins._set import Plugin, PluginLoadError, PluginOrigin, PluginProblem
from hermes_core._runtime._checks import check_providers, check_schemas, check_tools
from hermes_core._tool._definition import Tool
from hermes_core._tool._resources import check_resources, raised
from hermes_core.config._settings import settings_read
from hermes_core.schema import Schema

if TYPE_CHECKING:
    from hermes_core._plugins._distributions import EntryPoint

__all__ = [
    "LOGGER",
    "canonicalize_name",
    "contributions",
    "guards",
    "load_contributions",
    "load_guards",
    "new_manager",
    "register",
]

#: The logger each step of loading is recorded on: 'hermesos check --timeout' listens to it (docs/cli.md).
LOGGER = "hermes_core.plugins"

_T = TypeVar("_T")
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


# What pluggy takes as a hook implementation: a function, plain, bound or wrapped as a static or class method.
_HOOKABLE = (FunctionType, MethodType, staticmethod, classmethod)


class _PluginManager(pluggy.PluginManager):
    """Takes every ``hermes_*`` function of a plugin as a hook implementation, marked or not."""

    def parse_hookspec_opts(self, module_or_class: Any, name: str) -> pluggy.HookspecOpts | None:
        # Every hook is named hermes_* (hermes_core._plugins._hookspecs): the specs' module's other names are not
        # looked at.
        return super().parse_hookspec_opts(module_or_class, name) if name.startswith("hermes_") else None

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> pluggy.HookimplOpts | None:
        if isinstance(plugin, ModuleType) and not name.startswith("hermes_"):
            # pluggy looks at every name of a module with inspect.getattr_static, which cost more than the rest
            # of registering the bundled plugins (docs/performance.md, start-up). Under another name only a
            # function marked as a hook implementation can be one (specname=): any other name is passed over.
            value = plugin.__dict__.get(name)
            marker = f"{self.project_name}_impl"
            if not isinstance(value, _HOOKABLE) or (
                getattr(value, marker, None) is None and getattr(getattr(value, "__func__", None), marker, None) is None
            ):
                return None
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


# The names, requirements and versions below are read with str's methods, not regular expressions: each of
# these is read at every start, and compiling the five expressions they were read with cost every 'hermesos
# tools list' 3 million instructions (docs/performance.md, start-up). tests/test_startup.py holds each to the
# expression it replaces.


def canonicalize_name(name: str) -> str:
    """A distribution name as Python packaging compares them (PEP 503): ``Hermesos_FS`` is ``hermesos-fs``.

    As ``re.sub(r"[-_.]+", "-", name).lower()``: each run of separators one hyphen.
    """
    text = name.replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text.lower()


_ALNUM: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NAME_CHARACTERS: Final = _ALNUM | frozenset("._-")
# What \s is in ASCII text, and the characters a plain requirement on the core may hold after its name.
_ASCII_SPACE: Final = frozenset(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")
_CLAUSE_CHARACTERS: Final = _ALNUM | _ASCII_SPACE | frozenset("=<>!~.*+,-")


def _leading_name(line: str) -> str | None:
    r"""A requirement's leading name (PEP 508), after any white space: ``\s*([A-Za-z0-9][A-Za-z0-9._-]*)``."""
    text = line.lstrip()
    if not text or text[0] not in _ALNUM:
        return None
    end = 1
    while end < len(text) and text[end] in _NAME_CHARACTERS:
        end += 1
    return text[:end]


def _plain_core(line: str, name: str) -> str | None:
    r"""The version clauses of a requirement on the core, named *name*, that holds nothing else; else None.

    The form every plugin's Requires-Dist takes (``hermesos-core>=0.4``,
    ``hermesos_core >=0.4, <1``): as ``\s*hermesos[-_.]core\s*([<>=!~][=<>!~=\s0-9A-Za-z.*+,-]*)``,
    case-insensitive, matched whole. *name* is the line's leading name.
    """
    if not line.isascii():  # re's \s is any white space, and its [A-Za-z] takes the long s and the Kelvin sign
        import re  # noqa: PLC0415 - rare: as the expression reads it

        found = re.fullmatch(r"\s*hermesos[-_.]core\s*([<>=!~][=<>!~=\s0-9A-Za-z.*+,-]*)", line, re.IGNORECASE)
        return None if found is None else found.group(1)
    if len(name) != len("hermesos-core") or name[8] not in "-_.":  # one separator, and nothing else in the name
        return None
    rest = line.lstrip()[len(name) :].lstrip()
    if not rest or rest[0] not in "<>=!~" or not _CLAUSE_CHARACTERS.issuperset(rest):
        return None
    return rest


def _release(text: str) -> tuple[int, ...] | None:
    r"""The numbers of a plain release number (``0.4``, ``1.2.3``: ``[0-9]+(\.[0-9]+)*``), else None."""
    parts = text.split(".")
    if not all(part.isascii() and part.isdigit() for part in parts):
        return None
    return tuple(int(part) for part in parts)


def _release_clause(clause: str) -> tuple[str, tuple[int, ...]] | None:
    r"""The operator and number of a clause, ``\s*(==|!=|<=|>=|<|>)\s*`` and a plain release number; else None."""
    text = clause.strip()
    operator = text[:2] if text[:2] in ("==", "!=", "<=", ">=") else text[:1] if text[:1] in ("<", ">") else ""
    if not operator:
        return None
    number = _release(text[len(operator) :].lstrip())
    return None if number is None else (operator, number)


def _plainly_met(clauses: str, installed: str) -> bool:
    """Whether the comma-separated version *clauses* are met by *installed*, when all are plain release numbers.

    False when they are not met, or when the clauses or the version are
    anything else (pre-releases, wildcards, ``~=``): packaging then decides. On
    plain release numbers every clause means what it says on the numbers,
    padded with zeros (``==0.4`` holds 0.4.0), as packaging reads them; and
    importing packaging costs 'hermesos tools list' about 3 ms
    (docs/performance.md, start-up).
    """
    have = _release(installed)
    if have is None:
        return False
    for clause in clauses.split(","):
        found = _release_clause(clause)
        if found is None:
            return False
        operator, want = found
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
        leading = _leading_name(line)
        if leading is None or canonicalize_name(leading) != "hermesos-core":
            continue  # another distribution's (or not a requirement: the installer accepted it, not ours to judge)
        plain = _plain_core(line, leading)
        if plain is not None and _plainly_met(plain, installed):
            continue
        if plain is not None:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet  # noqa: PLC0415

            try:
                specifier = SpecifierSet(plain)
            except InvalidSpecifier:
                continue
            text = f"{leading}{specifier}"  # as str(Requirement(line)) would be
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
        logging.getLogger(LOGGER).debug("%s: %s", origin, step, extra={"plugin": origin, "step": step})


def _attributed(origin: PluginOrigin, step: str, run: Callable[[], _T], failed: str) -> _T:
    """Run *step* of a plugin (its import, a hook), logged, with any failure attributed to the plugin.

    A definition error is prefixed with the plugin; anything else raised but
    Ctrl-C is a :class:`PluginLoadError` reading "*failed* <what was raised>".
    """
    _step(origin, step)
    try:
        return run()
    except InvalidDefinitionError as error:
        raise InvalidDefinitionError(f"{origin}: {error.declaration}", error.field, error.detail) from error
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # sys.exit(), GeneratorExit...: the plugin's failure, not the command's
        raise PluginLoadError(origin, f"{failed} {raised(error)}") from error


def _import(origin: PluginOrigin, entry_point: EntryPoint) -> object:
    step = f"importing {entry_point.value}"
    return _attributed(origin, step, entry_point.load, f"{step} failed with")


def new_manager() -> _PluginManager:
    manager = _PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    return manager


def register(origin: PluginOrigin, plugin: object, manager: _PluginManager) -> None:
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
        import difflib  # noqa: PLC0415 - a mistyped hook only: start-up (docs/performance.md)

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
        result = _attributed(origin, f"hook {hook}", impl.function, f"hook {hook} raised")
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


def guards(
    origin: PluginOrigin, plugin: object, manager: _PluginManager, sources: tuple[GuardedPath, ...] = ()
) -> Plugin:
    """The first half of a load: where *plugin*'s tools may write, and what it guards; nothing else is asked.

    *sources* are where its code lies, guarded with the paths it names
    itself. Every plugin's are checked against every plugin's roots before
    any plugin makes its tools (:func:`contributions`), so nothing a plugin
    starts to make them (an MCP server listing its tools) runs while a root
    meets what decides it.
    """
    source = str(origin)
    with settings_read() as reads:  # a root a setting named is the setting's, in every refusal of it
        roots = _items(origin, "hermes_write_roots", _call(origin, plugin, manager, "hermes_write_roots"), "paths")
    named = [named_by(root, reads) for root in roots]
    guarded = _items(
        origin, "hermes_guarded_paths", _call(origin, plugin, manager, "hermes_guarded_paths"), "paths or pairs"
    )
    write_roots = check_write_roots(source, "hermes_write_roots", roots, named)
    return Plugin(
        origin,
        write_roots=write_roots,
        root_settings=MappingProxyType(
            {root: read for root, read in zip(write_roots, named, strict=True) if read is not None}
        ),
        guarded_paths=_guarded(origin, guarded),
        sources=sources,
    )


def contributions(found: Plugin, plugin: object, manager: _PluginManager) -> Plugin:
    """*found* (from :func:`guards`) with what *plugin*'s other hooks contribute, held to a runtime's rules.

    Those rules are hermes_core._runtime._checks'.
    """
    origin = found.origin
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
    # After hermes_tools: a plugin may make its resources there, and return them here.
    resources = _items(origin, "hermes_resources", _call(origin, plugin, manager, "hermes_resources"), "resources")
    problems = _items(origin, "hermes_problems", _call(origin, plugin, manager, "hermes_problems"), "strings")
    return replace(
        found,
        tools=tuple(checked.values()),
        schemas=MappingProxyType(schemas),
        providers=check_providers(source, "hermes_permission_providers", providers),
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


def _guarded(origin: PluginOrigin, items: list[Any]) -> tuple[GuardedPath, ...]:
    """What hermes_guarded_paths returned: paths, or pairs of a path and what it is, saying so in messages."""
    source = str(origin)
    said = f"plugin {origin.distribution} guards (hermes_guarded_paths)"
    paths: list[object] = []
    whats: list[str] = []
    for index, item in enumerate(items):
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], str) or not item[1].strip():
                raise InvalidDefinitionError(
                    source,
                    f"hermes_guarded_paths[{index}]",
                    "must be a path, or a pair of a path and what it is (a phrase such as 'the script "
                    f"[servers.time] runs'), got a tuple of {len(item)} items"
                    + ("" if len(item) != 2 else f" whose second is {shorten(repr(item[1]))}"),
                )
            paths.append(item[0])
            whats.append(f"{item[1].strip()}, which {said}")
        else:
            paths.append(item)
            whats.append(f"a path {said}")
    checked = check_paths(source, "hermes_guarded_paths", paths)
    return tuple(GuardedPath(path, what) for path, what in zip(checked, whats, strict=True))


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


def load_guards(
    entry_point: EntryPoint, origin: PluginOrigin, requires: Iterable[str], manager: _PluginManager
) -> tuple[object, Plugin]:
    """The plugin object of *entry_point*, imported and registered, and :func:`guards` of it.

    Raises:
        InvalidDefinitionError, PluginLoadError: as :func:`contributions`;
            the plugin is left unregistered.
    """
    _check_requirement(origin, requires)
    plugin = _import(origin, entry_point)
    register(origin, plugin, manager)
    sources = code_sources(entry_point.dist, entry_point.module, f"plugin {origin.distribution}")
    try:
        return plugin, guards(origin, plugin, manager, sources)
    except (InvalidDefinitionError, PluginLoadError):
        manager.unregister(plugin)
        raise


def load_contributions(plugin: object, found: Plugin, manager: _PluginManager) -> Plugin:
    """:func:`contributions` of a plugin :func:`load_guards` loaded; a plugin that fails is unregistered.

    Raises:
        InvalidDefinitionError: a contribution is malformed.
        PluginLoadError: a hook raised.
    """
    try:
        return contributions(found, plugin, manager)
    except (InvalidDefinitionError, PluginLoadError):
        manager.unregister(plugin)
        raise
