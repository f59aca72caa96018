"""The checks of what a runtime is built from: tools, named schemas, providers, and the refs between them.

Written once and used by both :class:`~hermes_core.Runtime` and the plugin
loader, so that a plugin's contributions are held to exactly the rules a
runtime holds them to. Each check takes the *source* that messages name
(``Runtime()``, or a plugin's origin) and the *field* the values came in
(``tools``, or the hook ``hermes_tools``), and raises
:class:`~hermes_core.InvalidDefinitionError`.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import final

from hermes_core._errors import InvalidDefinitionError
from hermes_core._frozen import frozen
from hermes_core._issues import shorten
from hermes_core._names import case_key, check_name
from hermes_core._permissions import PermissionProvider
from hermes_core._settings import user_config_dir
from hermes_core._tools import Tool
from hermes_core.schema import NullableSchema, ObjectSchema, OptionalSchema, RefSchema, Schema, UnionSchema
from hermes_core.schema._validators import default_problem, follow_refs

__all__ = [
    "GuardedPath",
    "check_guarded_files",
    "check_guarded_paths",
    "check_paths",
    "check_providers",
    "check_schemas",
    "check_tools",
    "check_wiring",
    "check_write_roots",
    "core_guarded_paths",
]


def _kind(value: object) -> str:
    return type(value).__name__


def check_tools(source: str, field: str, tools: Iterable[object]) -> dict[str, Tool]:
    """The tools by name, each a :class:`Tool`, each name once, no two names differing only in case.

    Raises:
        InvalidDefinitionError: an item is not a Tool, or two share a name or differ only in its case.
    """
    checked: dict[str, Tool] = {}
    cased: dict[str, str] = {}  # case_key -> the name first given
    for index, tool in enumerate(tools):
        if not isinstance(tool, Tool):
            raise InvalidDefinitionError(
                source, f"{field}[{index}]", f"must be a Tool made by define_tool(), got {_kind(tool)}"
            )
        if tool.name in checked:
            raise InvalidDefinitionError(
                f'tool "{tool.name}"', "name", "is registered twice; each tool name must be unique in a runtime"
            )
        other = cased.setdefault(case_key(tool.name), tool.name)
        if other != tool.name:
            raise InvalidDefinitionError(
                f'tools "{other}" and "{tool.name}"',
                None,
                "have names that differ only in case, which models and clients that fold case cannot tell apart; "
                "rename one of them",
            )
        checked[tool.name] = tool
    return checked


def check_schemas(source: str, field: str, schemas: object) -> dict[str, Schema]:
    """The named schemas, each name following the name rule and each value a schema.

    Raises:
        InvalidDefinitionError: *schemas* is not a mapping, a name is malformed, or a value is not a schema.
    """
    if not isinstance(schemas, Mapping):
        raise InvalidDefinitionError(source, field, f"must be a mapping of name to schema, got {_kind(schemas)}")
    checked: dict[str, Schema] = {}
    for name, schema in schemas.items():
        check_name(source, f"{field} name", name, example="fs.path")
        if not isinstance(schema, Schema) or isinstance(schema, OptionalSchema):
            raise InvalidDefinitionError(
                source, f'{field}["{name}"]', f"must be a schema such as s.string(), got {_kind(schema)}"
            )
        checked[name] = schema
    return checked


def check_providers(source: str, field: str, providers: Iterable[object]) -> tuple[PermissionProvider, ...]:
    """The permission providers, each with a callable ``check(tool, permission)``.

    Raises:
        InvalidDefinitionError: an item has no ``check`` method.
    """
    checked: list[PermissionProvider] = []
    for index, provider in enumerate(providers):
        if not isinstance(provider, PermissionProvider) or not callable(getattr(provider, "check", None)):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must be a permission provider: an object with a method check(tool, permission) "
                f"returning True, False or None; got {_kind(provider)}",
            )
        checked.append(provider)
    return tuple(checked)


def _check_refs(decl: str, field: str | None, schema: Schema, refs: Mapping[str, Schema]) -> None:
    for ref in schema.ref_names():
        if ref not in refs:
            known = ", ".join(f'"{n}"' for n in sorted(refs)[:20]) or "none"
            raise InvalidDefinitionError(
                decl,
                field,
                f'refers to the schema "{ref}" (s.ref), which no registered schema resolves; '
                f"register it under that name (schemas known: {shorten(known, 400)})",
            )


def _check_defaults(decl: str, label: str, schema: Schema, refs: Mapping[str, Schema]) -> None:
    problem = default_problem(schema, refs)
    if problem is not None:
        where, issue = problem
        raise InvalidDefinitionError(
            decl, f'{label} "{where}"', f"has a default that does not match its schema: {issue.message('default')}"
        )


def check_wiring(tools: Iterable[Tool], schemas: Mapping[str, Schema], refs: Mapping[str, Schema]) -> None:
    """Check that *tools* and the named *schemas* resolve against *refs* (every named schema known).

    Each ``s.ref`` names a schema in *refs*; no named schema is a ref that
    leads back to itself; a tool's input resolves to an object schema; every
    default under a ref matches its schema. Nothing is compiled but the
    schemas of such defaults.

    Raises:
        InvalidDefinitionError: naming the tool or the schema, and the field.
    """
    for name, schema in schemas.items():
        decl = f'schema "{name}"'
        _check_refs(decl, None, schema, refs)
        if isinstance(follow_refs(schema, refs), RefSchema):
            raise InvalidDefinitionError(
                decl, None, "is a ref that leads back to itself; a named schema must describe a value"
            )
        if _leads_back(name, schema, refs, set()):
            raise InvalidDefinitionError(
                decl,
                None,
                "refers to itself through a union or nullable with no array or object between, so checking a "
                "value against it would never end; put the recursion inside s.array(...) or s.object(...)",
            )
        _check_defaults(decl, "field", schema, refs)
    for tool in tools:
        # A tool compiled its schemas unless they name others (has_refs): only those have anything to check here.
        decl = f'tool "{tool.name}"'
        if tool.input.has_refs:
            _check_refs(decl, "input", tool.input, refs)
            target = follow_refs(tool.input, refs)
            if not isinstance(target, ObjectSchema):
                name = tool.input.name if isinstance(tool.input, RefSchema) else "?"
                raise InvalidDefinitionError(
                    decl,
                    "input",
                    f'refers to the schema "{name}", which is {target.expected()}, not an object; '
                    "a tool's input must be an object schema",
                )
            _check_defaults(decl, "field", tool.input, refs)
        if tool.output.has_refs:
            _check_refs(decl, "output", tool.output, refs)
            _check_defaults(decl, "output field", tool.output, refs)


def _leads_back(name: str, schema: Schema, refs: Mapping[str, Schema], seen: set[str]) -> bool:
    """Whether *schema* reaches ``s.ref(name)`` through unions, nullables, optionals and refs alone."""
    if isinstance(schema, RefSchema):
        if schema.name == name:
            return True
        if schema.name in seen or schema.name not in refs:
            return False
        seen.add(schema.name)
        return _leads_back(name, refs[schema.name], refs, seen)
    if isinstance(schema, UnionSchema):
        return any(_leads_back(name, option, refs, seen) for option in schema.options)
    if isinstance(schema, NullableSchema | OptionalSchema):
        return _leads_back(name, schema.schema, refs, seen)
    return False


def check_write_roots(source: str, field: str, roots: Iterable[object]) -> tuple[str, ...]:
    """The directories a plugin's tools may write, each made absolute and real (symbolic links resolved).

    Raises:
        InvalidDefinitionError: an item is not a path (a string or path-like).
    """
    checked: list[str] = []
    for index, root in enumerate(roots):
        if not isinstance(root, str | os.PathLike) or not str(os.fspath(root)).strip():
            raise InvalidDefinitionError(
                source, f"{field}[{index}]", f"must be a directory path such as '/srv/workspace', got {_kind(root)}"
            )
        checked.append(os.path.realpath(os.fspath(root)))
    return tuple(checked)


def check_paths(source: str, field: str, paths: Iterable[object]) -> tuple[str, ...]:
    """The paths a plugin names (hermes_guarded_paths), each made absolute; symbolic links are kept as given.

    Raises:
        InvalidDefinitionError: an item is not a path (a string or path-like).
    """
    checked: list[str] = []
    for index, path in enumerate(paths):
        if not isinstance(path, str | os.PathLike) or not str(os.fspath(path)).strip():
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                f"must be a file or directory path such as '/etc/app.toml', got {_kind(path)}",
            )
        checked.append(os.path.abspath(os.fspath(path)))
    return tuple(checked)


def _inside(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives
        return False


def check_guarded_files(source: str, providers: Iterable[PermissionProvider], roots: Iterable[tuple[str, str]]) -> None:
    """Refuse a provider that decides from a file a tool could change.

    Each file in a provider's ``files`` (if it has them) must lie outside every
    directory of *roots* (pairs of who may write there and the directory, a
    real path), both as named and as the file it resolves to (a symbolic link
    either way), and must have one hard link only (another link to it could lie
    anywhere, a writable directory included).

    Raises:
        InvalidDefinitionError: naming the provider's *source*, the file and the directory.
    """
    writable = list(roots)
    for provider in providers:
        for file in getattr(provider, "files", ()) or ():
            given = os.path.abspath(os.fspath(file))
            real = os.path.realpath(given)
            shown = f'"{file}"' if real == os.fspath(file) else f'"{file}" (that is, "{real}")'
            for writer, root in writable:
                # The file itself, or the name it is read through: a tool could replace a link
                # under the root with a file of its own, whatever the link points to now.
                if _inside(real, root) or _inside(given, root) or _inside(given, os.path.abspath(root)):
                    raise InvalidDefinitionError(
                        source,
                        f"{type(provider).__name__}.files",
                        f'decides permissions from {shown}, which lies inside "{root}", a directory the tools of '
                        f"{writer} may write: a tool could rewrite the permissions that govern it; keep the file "
                        "outside every directory a tool may write, or give the tools another root",
                    )
            try:
                links = os.stat(real).st_nlink
            except OSError:
                continue  # a file that is gone is the provider's to report
            if links > 1:
                raise InvalidDefinitionError(
                    source,
                    f"{type(provider).__name__}.files",
                    f"decides permissions from {shown}, which has {links} hard links: a tool could change it "
                    "through another one; keep a single link to the file",
                )


# -- guarded paths: what decides what runs or what is granted ----------------------------------------


@final
@frozen
class GuardedPath:
    """A file or directory hermesos or a plugin reads to decide what runs or what is granted.

    No directory a tool may write may contain one, nor lie inside one (unless
    *inside_ok*): a tool must never change what runs, or what it is granted.

    Attributes:
        path: the path as given (made absolute); it need not exist.
        what: what it is, for messages: ``the Python environment running hermesos (sys.prefix)``.
        inside_ok: a root may lie inside it, only not contain it (the home directory).
    """

    path: str
    what: str
    inside_ok: bool = False


def _home_directories() -> list[str]:
    """The home directory as ``HOME`` says, and as the password database does (they may differ)."""
    homes: list[str] = []
    with contextlib.suppress(RuntimeError):  # no home directory can be determined
        homes.append(str(Path.home()))
    try:
        import pwd  # noqa: PLC0415 - POSIX only

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, AttributeError):
        pass
    return [home for home in dict.fromkeys(homes) if home]


def core_guarded_paths() -> list[GuardedPath]:
    """What the core itself guards: its configuration directory, the interpreter and its packages, the home directory.

    The hermesos user configuration directory (:func:`~hermes_core.user_config_dir`:
    the policy, ``mcp.toml``, plugins' settings files); ``sys.prefix``,
    ``sys.exec_prefix`` and ``sys.base_prefix`` (the environment running
    hermesos and its installation: a ``.pth`` file or a module there runs at
    the next start); every site-packages directory, the user's included; and
    the home directory, which a root may lie inside but never contain (shell
    start-up files, ``~/.ssh``, every configuration directory).
    """
    # The home directory first: a root holding it is refused for that, whatever else it holds.
    guarded = [GuardedPath(home, "the home directory", inside_ok=True) for home in _home_directories()]
    config = user_config_dir()
    if config is not None:
        guarded.append(
            GuardedPath(str(config), "the hermesos configuration directory (the policy, mcp.toml, plugins' settings)")
        )
    prefixes = {
        "sys.prefix": "the Python environment running hermesos (sys.prefix)",
        "sys.exec_prefix": "the Python environment running hermesos (sys.exec_prefix)",
        "sys.base_prefix": "the Python installation running hermesos (sys.base_prefix)",
        "sys.base_exec_prefix": "the Python installation running hermesos (sys.base_exec_prefix)",
    }
    seen: set[str] = set()
    for name, what in prefixes.items():
        value = getattr(sys, name.removeprefix("sys."), "")
        if value and value not in seen:
            seen.add(value)
            guarded.append(GuardedPath(value, what))
    packages = [*site.getsitepackages(), site.getusersitepackages()]
    guarded.extend(
        GuardedPath(path, "a site-packages directory (its .pth files and modules run at every Python start)")
        for path in dict.fromkeys(packages)
        if path
    )
    return guarded


def _collision(guarded: GuardedPath, root: str) -> str | None:
    """How the directory *root* (a real path) meets *guarded*, in words, or None if it does not."""
    given = os.path.abspath(guarded.path)
    real = os.path.realpath(given)
    if root == os.path.dirname(root):  # "/" or a drive's root
        return f'is the root of the file system, which holds everything: "{given}", {guarded.what}, among others'
    shown = f'"{given}"' if real == given else f'"{given}" (that is, "{real}")'
    if root in (real, given):
        return f"is {guarded.what}"
    # The path itself, or the name it is read through: a tool could replace a link under the root.
    if _inside(real, root) or _inside(given, root):
        return f"contains {shown}, {guarded.what}"
    if not guarded.inside_ok and (_inside(root, real) or _inside(root, given)):
        return f"lies inside {shown}, {guarded.what}"
    return None


def check_guarded_paths(guarded: Iterable[GuardedPath], roots: Iterable[tuple[str, str, str]]) -> None:
    """Refuse a directory a tool may write that is, contains, or lies inside a guarded path.

    Paths are compared as given and as real paths (symbolic links resolved),
    either way: a link under a root could be replaced by a tool, whatever it
    points to now.

    Args:
        guarded: the guarded paths.
        roots: triples of the plugin whose tools may write there (its origin),
            the field it said so in (``hermes_write_roots``), and the directory
            (a real path).

    Raises:
        InvalidDefinitionError: naming the plugin and field of the root, the
            root, the guarded path and what it is.
    """
    paths = list(guarded)
    for writer, field, root in roots:
        for path in paths:
            collision = _collision(path, root)
            if collision is not None:
                raise InvalidDefinitionError(
                    writer,
                    field,
                    f'names "{root}" as a directory its tools may write, but it {collision}, so a tool could '
                    "change what runs or what is granted; give the tools a folder of their own, such as a new "
                    "workspace folder, that holds none of these",
                )
