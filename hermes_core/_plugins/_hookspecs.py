"""The hooks a plugin implements, and the markers to implement them with.

A plugin is a module (or any object) named by an entry point in the
``hermesos.plugins`` group. It implements any of the hooks below, each a
function taking no arguments::

    from hermes_core import define_tool, hookimpl
    from hermes_core import schema as s

    @hookimpl
    def hermes_tools():
        return [my_tool]

Functions whose names start with ``hermes_`` are taken as hook
implementations even without ``@hookimpl`` (as pytest does with
``pytest_``), so a misspelt hook name is an error at load rather than a
function that is silently never called.

Every contribution is checked when plugins are loaded, and each error names
the distribution, its version and the entry point it came from.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from hermes_core._runtime._permissions import PermissionProvider
    from hermes_core._tool._definition import Tool
    from hermes_core._tool._resources import Resource
    from hermes_core.schema import Schema

__all__ = [
    "PROJECT",
    "hermes_guarded_paths",
    "hermes_permission_providers",
    "hermes_problems",
    "hermes_resources",
    "hermes_schemas",
    "hermes_tools",
    "hermes_write_roots",
    "hermes_yielding_tools",
    "hookimpl",
    "hookspec",
]

#: The pluggy project name: markers and the plugin manager share it.
PROJECT = "hermesos"

#: Marks a hook specification (used by this module only).
hookspec = pluggy.HookspecMarker(PROJECT)

#: Marks a hook implementation in a plugin: ``@hermes_core.hookimpl``.
hookimpl = pluggy.HookimplMarker(PROJECT)


# -- contributions ---------------------------------------------------------------------


@hookspec
def hermes_tools() -> Iterable[Tool]:  # type: ignore[empty-body]
    """Contribute tools.

    Called once per load, after every plugin is imported and every plugin's
    ``hermes_write_roots`` has been checked against every plugin's
    ``hermes_guarded_paths``: a plugin may start what it needs to make its
    tools here (a server, to list them), never before.

    Returns:
        An iterable of :class:`~hermes_core.Tool`, each made by
        :func:`~hermes_core.define_tool`. Tool names must be unique across all
        installed plugins.
    """


@hookspec
def hermes_yielding_tools() -> Mapping[str, str]:  # type: ignore[empty-body]
    """Name the plugin's tools that give way when another plugin's tool has the same name, each with a remedy.

    Called once per load, right after ``hermes_tools``. For a plugin whose
    tools are named by its user rather than by itself (the tools of a
    configured MCP server, say): when such a tool clashes with a tool of any
    other plugin (the same name, or one differing only in case), the yielding
    tool alone is left out, whichever plugin's name sorts first, and the
    plugin gets a non-fatal :class:`~hermes_core.PluginProblem` naming both
    tools' plugins and the remedy; its other tools keep working. Without
    this hook, a clash drops the whole of the later plugin (in name order).
    Two yielding tools that clash: the one of the plugin whose name sorts
    first stays.

    Returns:
        A mapping of tool name (one of this plugin's ``hermes_tools``) to the
        remedy, a sentence telling the operator how to keep both, such as
        ``'rename the server "math" in mcp.toml'``.
    """


@hookspec
def hermes_schemas() -> Mapping[str, Schema]:  # type: ignore[empty-body]
    """Contribute named schemas, which the tools of any plugin use through ``s.ref(name)``.

    Called once per load, after every plugin is imported.

    Returns:
        A mapping of name (the grammar of tool names, e.g. ``fs.path``)
        to schema. Names must be unique across all installed plugins.
    """


@hookspec
def hermes_permission_providers() -> Iterable[PermissionProvider]:  # type: ignore[empty-body]
    """Contribute permission providers, asked on every call of a tool that declares permissions.

    Called once per load, after every plugin is imported.

    Returns:
        An iterable of objects with ``check(tool, permission) -> bool | None``:
        True grants, False denies (any deny wins), None has no opinion.
    """


# -- what the tools may change ---------------------------------------------------------


@hookspec
def hermes_write_roots() -> Iterable[str | os.PathLike[str]]:  # type: ignore[empty-body]
    """Say under which directories this plugin's tools create, change or delete files.

    Called once per load, after every plugin is imported and before any
    plugin's ``hermes_tools`` (or other contribution hook). The loader refuses
    to start when one of these directories is, contains or lies inside a
    guarded path (see :func:`hermes_guarded_paths`): the hermesos
    configuration directory, the interpreter's prefix and site-packages, the
    source of hermesos-core or of any plugin, what a plugin registered, or
    contains the home directory; and when a file a permission provider decides
    from (its ``files``) lies under one. A tool must never be able to change
    what runs or the permissions that govern it.

    Returns:
        An iterable of directory paths (strings or path-like). A plugin whose
        tools write no files does not implement this hook.
    """


@hookspec
def hermes_guarded_paths() -> Iterable[str | os.PathLike[str] | tuple[str | os.PathLike[str], str]]:  # type: ignore[empty-body]
    """Say which files and directories decide what runs or what is granted here, or keep the record of it.

    Called once per load, right after this plugin's ``hermes_write_roots``
    and before any plugin's ``hermes_tools``: what it returns comes from the
    plugin's configuration, never from what its tools made, and nothing the
    plugin would start to make them has started yet. A configuration file
    naming programs to start, a cache of tool listings, a policy, an audit
    file, the files a configured program runs: whoever may write one of these
    chooses what the plugin does, or what it is seen to have done. The loader
    refuses to start when any plugin's write root (``hermes_write_roots``) is,
    contains or lies inside one of them, naming the root, the path and this
    plugin, before any plugin's tools are made; in report mode it drops the
    writing plugin and this one (what this one would run may have been
    changed there already). The core guards its own list besides (its
    configuration directory, the interpreter, every plugin's source, the home
    directory); a plugin lists only what is its own.

    Returns:
        An iterable of file or directory paths (strings or path-like), or of
        pairs of a path and what it is, a phrase the refusal quotes (``the
        script [servers.calc] runs``); they need not exist yet. A symbolic
        link is guarded both as named and as what it leads to.
    """


# -- what the tools hold across calls, and what went wrong while loading -----------------


@hookspec
def hermes_resources() -> Iterable[Resource]:  # type: ignore[empty-body]
    """Contribute resources the tools hold across calls: connection pools, server subprocesses.

    Called once per load, after this plugin's ``hermes_tools``,
    ``hermes_schemas``, ``hermes_permission_providers``,
    ``hermes_write_roots`` and ``hermes_guarded_paths``: a plugin may make a resource in ``hermes_tools``
    (its tools' handlers close over it) and return it here. Making one must
    start nothing: the runtime opens the resources of the healthy plugins
    (``runtime.open()``, ``with runtime:``; ``hermesos call`` and ``serve`` do)
    and closes them, and a plugin dropped after its hooks ran (two plugins
    contribute one tool name, say) never has its resources opened.

    Returns:
        An iterable of :class:`~hermes_core.Resource`: objects with plain
        (not ``async``) methods ``open()`` and ``close()``; ``close()`` must be
        safe to call after an ``open()`` that raised.
    """


@hookspec
def hermes_problems() -> Iterable[str]:  # type: ignore[empty-body]
    """Report problems found while loading that leave the plugin usable (one server of several would not start).

    Called once per load, last of this plugin's hooks (after
    ``hermes_resources``). The plugin stays loaded and its tools are used;
    each problem is a non-fatal :class:`~hermes_core.PluginProblem` of the
    plugin, which ``hermesos check`` lists (exiting 1) and ``hermesos tools
    list`` warns of. For a problem that leaves nothing usable, raise instead.

    Returns:
        An iterable of strings, each one problem in a sentence or two, such as
        ``"server weather: failed to start: no such command: wthr"``.
    """
