"""The checks of plugins against each other: what no tool may write, then clashes, wiring and providers.

First, before any plugin makes its tools (:func:`check_roots`): no plugin's
tools may write a guarded path (:mod:`hermes_core._plugins._guard`). Then, once each is
loaded (:func:`check_across`), in order of distribution name, so that of two
plugins that clash the later loses, whatever the file system's order: a tool
or schema name contributed twice drops the later plugin, and a yielding tool
(``hermes_yielding_tools``) that clashes is left out alone; a plugin whose
refs do not resolve against every plugin's schemas is dropped; then no
provider may decide from a file a plugin's tools may write. Last, with every
tool known, each provider checks its rules against the tools
(``check_tools``): a rule that applies to no tool is a warning of its plugin,
and one that names a tool wrongly (a deny that would never apply) drops the
plugin.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import sentence
from hermes_core._base._names import case_key
from hermes_core._plugins._guard import (
    GuardedPath,
    WriteRoot,
    check_guarded_files,
    check_guarded_paths,
    core_guarded_paths,
    core_sources,
    written_by,
)
from hermes_core._plugins._set import Plugin, PluginLoadError, PluginOrigin, PluginProblem, PluginSet, failed
from hermes_core._runtime._checks import check_wiring
from hermes_core._runtime._permissions import rule_warnings
from hermes_core._tool._definition import Tool
from hermes_core._tool._resources import raised
from hermes_core.schema import Schema

__all__ = ["check_across", "check_roots"]


def check_roots(plugins: list[Plugin], *, strict: bool) -> None:
    """Drop each plugin whose tools may write where hermesos, the interpreter or any plugin decides what runs.

    *plugins* hold what their ``hermes_write_roots`` and
    ``hermes_guarded_paths`` returned, and nothing else yet: this runs before
    any plugin makes its tools. A plugin that fails is dropped: in strict mode
    the first raises (with the remedy), in report mode it becomes its one
    problem, and each plugin one of whose ``hermes_guarded_paths`` its roots
    meet is dropped as well: what that plugin would run or grant, or its
    record, may have been changed there already, so nothing of it runs (no MCP
    server is started to list its tools). *plugins* is updated in place.

    Raises:
        InvalidDefinitionError: in strict mode, the first plugin whose root meets a guarded path.
    """
    # Every plugin's, whatever becomes of it later: the source of a plugin dropped for a clash still runs at the
    # next start.
    guarded = [
        *core_guarded_paths(),
        *core_sources(),
        *(path for p in plugins for path in (*p.sources, *p.guarded_paths)),
    ]
    refused: list[tuple[PluginOrigin, WriteRoot, InvalidDefinitionError]] = []
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.write_roots:
            origin = str(plugin.origin)
            writable = [written_by(origin, root, plugin.root_settings.get(root)) for root in plugin.write_roots]
            try:
                check_guarded_paths(guarded, writable)
            except InvalidDefinitionError as error:
                plugins[index] = failed(plugin.origin, error, strict=strict)
                refused.extend((plugin.origin, root, error) for root in writable)
    for index, plugin in enumerate(plugins):
        meeting = [(path, root) for path in plugin.guarded_paths for root in refused if _meets(path, root[1])]
        if plugin.ok and meeting:
            path, (writer, root, refusal) = meeting[0]
            said = "hermes_write_roots" if root.setting is None else f"its setting {root.setting.variable} names it"
            fix = (
                "give those tools a folder of their own"
                if root.setting is None
                else f"set {root.setting.variable} to a folder of its own"
            )
            problem = InvalidDefinitionError(
                str(plugin.origin),
                "hermes_guarded_paths",
                f'names "{path.path}", which "{root.path}" meets, a directory the tools of {writer} may write '
                f"({said}): what this plugin would run or grant, or the record it keeps, may have been changed "
                f"there already, so it is not loaded either; {fix}",
            )
            # Refused for the writer's refusal: what that came from (a setting) is this one's remedy too.
            problem.__cause__ = refusal
            plugins[index] = failed(plugin.origin, problem, strict=strict)


def _meets(path: GuardedPath, root: WriteRoot) -> bool:
    """Whether the directory of *root* is, holds or lies inside *path*."""
    try:
        check_guarded_paths([path], [root])
    except InvalidDefinitionError:
        return True
    return False


def check_across(plugins: list[Plugin], *, strict: bool) -> PluginSet:
    """The set of *plugins*, each loaded (in order of distribution name), checked against the others.

    A plugin that fails a check is dropped: in strict mode the first such
    failure raises (with the remedy), in report mode it becomes the plugin's
    one problem. *plugins* is updated in place.

    Raises:
        InvalidDefinitionError: in strict mode, the first plugin to fail a check.
    """
    # Checks across plugins, in order of distribution name: of two that clash, the later loses.
    tools: dict[str, tuple[str, PluginOrigin]] = {}  # case_key -> the tool's name and its plugin
    schemas: dict[str, PluginOrigin] = {}
    for index, plugin in enumerate(plugins):
        if not plugin.ok:
            continue
        try:
            _conflicts(plugin, tools, schemas)
        except InvalidDefinitionError as error:
            plugins[index] = failed(plugin.origin, error, strict=strict)
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
                plugins[index] = failed(plugin.origin, error, strict=strict)
                changed = True

    # No provider may decide from a file that any plugin's tools may write.
    roots = PluginSet(plugins).write_roots
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.providers:
            try:
                check_guarded_files(str(plugin.origin), plugin.providers, roots)
            except InvalidDefinitionError as error:
                plugins[index] = failed(plugin.origin, error, strict=strict)

    # Each provider's rules against every tool a runtime of these plugins will have.
    loaded = PluginSet(plugins).tools
    for index, plugin in enumerate(plugins):
        if plugin.ok and plugin.providers:
            plugins[index] = _check_rules(plugin, loaded, strict=strict)
    return PluginSet(plugins)


def _check_rules(plugin: Plugin, tools: tuple[Tool, ...], *, strict: bool) -> Plugin:
    """*plugin* with a warning for each rule of its providers that applies to none of *tools*; failed for a refusal."""
    origin = plugin.origin
    try:
        warnings = rule_warnings(str(origin), plugin.providers, tools)
    except InvalidDefinitionError as error:
        named = InvalidDefinitionError(f"{origin}: {error.declaration}", error.field, error.detail)
        named.__cause__ = error
        return failed(origin, named, strict=strict)
    except Exception as error:  # a provider's own check failing is its plugin's fault
        failure = PluginLoadError(origin, f"a permission provider's check_tools() raised {raised(error)}")
        failure.__cause__ = error
        return failed(origin, failure, strict=strict)
    if not warnings:
        return plugin
    problems = tuple(PluginProblem(origin, PluginLoadError(origin, text), fatal=False) for text in warnings)
    return replace(plugin, problems=(*plugin.problems, *problems))


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
