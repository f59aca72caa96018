"""What no tool may write: the paths guarded, the directories tools may write, and the check between them.

A tool must never change what runs or what it is granted. The guarded paths
are what hermesos, the interpreter and each plugin read to decide that (the
core's own: :func:`core_guarded_paths` and :func:`core_sources`; a plugin's:
its code and its ``hermes_guarded_paths``). :func:`check_guarded_paths`
refuses a directory a plugin's tools may write (``hermes_write_roots``) that
meets one, and :func:`check_guarded_files` a permission provider that decides
from a file such a directory holds. Each raises
:class:`~hermes_core.InvalidDefinitionError` naming who said so and where.
"""

from __future__ import annotations

import contextlib
import os
import site
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, final

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import frozen
from hermes_core._runtime._permissions import PermissionProvider
from hermes_core.config._settings import SettingRead, config_directory, home_directory

__all__ = [
    "GuardedPath",
    "WriteRoot",
    "check_guarded_files",
    "check_guarded_paths",
    "check_paths",
    "check_write_roots",
    "code_sources",
    "core_guarded_paths",
    "core_sources",
    "named_by",
    "own_folder",
    "written_by",
]


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


@final
@frozen  # not a NamedTuple, whose string annotations are compiled one by one at import (start-up)
class WriteRoot:
    """A directory a plugin's tools may write, as a refusal of it names who said so and what to change.

    Attributes:
        writer: who said so: the plugin (``plugin hermesos-fs 0.2.0 (...)``),
            followed by ``: setting HERMESOS_FS_ROOT`` when a setting's value
            named the directory.
        field: where: ``hermes_write_roots``; None for a setting.
        path: the directory, a real path.
        setting: the setting whose value named it, if one did: what the operator changes.
    """

    writer: str
    field: str | None
    path: str
    setting: SettingRead | None = None


def named_by(root: object, reads: Sequence[SettingRead]) -> SettingRead | None:
    """The setting among *reads* whose value names the directory *root* (``~`` and links resolved), if one does."""
    if not isinstance(root, str | os.PathLike):
        return None
    try:
        real = os.path.realpath(os.path.abspath(os.fspath(root)))
        for read in reads:
            if os.path.realpath(os.path.abspath(os.path.expanduser(read.text))) == real:
                return read
    except (TypeError, ValueError, OSError):  # not a path (a NUL in it): check_write_roots refuses it, by its index
        pass
    return None


def own_folder(setting: SettingRead | None, generic: str, condition: str) -> str:
    """What a refusal of a write root advises: *generic*, or, for a root a setting named, a folder of its own for it.

    *condition* is what that folder must be (``that holds none of these``); the
    setting's description, when it has one, says what else (``such as ~/hermesos-workspace``).
    """
    if setting is None:
        return generic
    wanted = f" ({setting.description})" if setting.description else ", such as a new workspace folder"
    return f"set {setting.variable} to a folder of its own {condition}{wanted}"


def _home_directories() -> list[str]:
    """The home directory as ``HOME`` says, and as the password database does (they may differ)."""
    homes: list[str] = []
    with contextlib.suppress(RuntimeError):  # no home directory can be determined
        homes.append(home_directory())
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
    config = config_directory()
    if config is not None:
        guarded.append(
            GuardedPath(config, "the hermesos configuration directory (the policy, mcp.toml, plugins' settings)")
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


def _editable_folder(distribution: Any) -> str | None:
    """The source folder of an editable install (``pip install -e``), from its ``direct_url.json``; else None."""
    try:
        text = distribution.read_text("direct_url.json") if distribution is not None else None
    except (OSError, ValueError):
        return None
    # Read as JSON only if it can name dir_info, in plain letters or escaped (an install from a wheel or an
    # archive names archive_info): importing json costs every start 5 million instructions (performance.md).
    if not text or ("dir_info" not in text and "\\" not in text):
        return None
    import json  # noqa: PLC0415 - see above

    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("dir_info"), dict):
        return None
    url = found.get("url")
    if not found["dir_info"].get("editable") or not isinstance(url, str) or not url.startswith("file:"):
        return None
    import urllib.parse  # noqa: PLC0415 - an editable install's only (start-up)

    path = urllib.parse.urlparse(url).path
    if os.name == "nt":
        from nturl2path import url2pathname  # noqa: PLC0415 - Windows only

        return url2pathname(path) or None
    # urllib.request.url2pathname, which is unquote on POSIX: importing urllib.request costs 25 ms (http, email,
    # ssl, tempfile), on every start of an editable install (docs/performance.md, start-up).
    return urllib.parse.unquote(path) or None


def code_sources(distribution: Any, module: str, label: str) -> tuple[GuardedPath, ...]:
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


def core_sources() -> tuple[GuardedPath, ...]:
    """Where hermesos-core's own code lies."""
    from hermes_core._plugins._distributions import distribution  # noqa: PLC0415 - only discovery needs it

    return code_sources(distribution("hermesos-core"), "hermes_core", "hermesos-core")


def check_write_roots(
    source: str, field: str, roots: Iterable[object], settings: Sequence[SettingRead | None] = ()
) -> tuple[str, ...]:
    """The directories a plugin's tools may write, each made absolute and real (symbolic links resolved).

    None may be or lie inside a Python environment or installation, whoever's
    (:func:`_python_environment`), as given or as its real path: the guarded
    paths name only the one running hermesos. *settings*, in the order of
    *roots*, are the settings that named them (None for one no setting
    named): a refusal of such a root is the setting's (``<source>: setting
    HERMESOS_FS_ROOT``), and says what to set it to.

    Raises:
        InvalidDefinitionError: an item is not a path (a string or path-like),
            or is or lies inside a Python environment.
    """
    given = _checked_paths(source, field, roots, "a directory path such as '/srv/workspace'", os.path.abspath)
    real = tuple(os.path.realpath(path) for path in given)
    named = [*settings, *[None] * (len(given) - len(settings))]
    for original, root, setting in zip(given, real, named, strict=False):
        for path in dict.fromkeys((root, original)):
            found = _python_environment(path)
            if found is not None:
                folder, what = found
                where = "is" if folder == path else f'lies inside "{folder}",'
                writer = WriteRoot(source, field, root) if setting is None else written_by(source, root, setting)
                advice = own_folder(
                    setting,
                    "give the tools a folder of their own, outside every Python environment and installation, "
                    "such as a new workspace folder",
                    "outside every Python environment and installation",
                )
                raise InvalidDefinitionError(
                    writer.writer,
                    writer.field,
                    f'names "{root}" as a directory its tools may write, but it {where} {what}, so a tool could '
                    f"change what runs; {advice}",
                )
    return real


def written_by(plugin: str, root: str, setting: SettingRead | None) -> WriteRoot:
    """The directory *root* that *plugin* (its origin, as messages say) says its tools may write, named by *setting*."""
    if setting is None:
        return WriteRoot(plugin, "hermes_write_roots", root)
    return WriteRoot(f"{plugin}: setting {setting.variable}", None, root, setting)


# What a folder is, to Python, by its name; and by what it holds (any type of file, links not followed).
_PACKAGES = "a site-packages folder, whose modules and .pth files run when Python starts or imports them"
_LIBRARY = "the library of a Python installation or environment, whose modules run when Python imports them"
_MARKERS = {
    "pyvenv.cfg": "a virtual environment (it holds pyvenv.cfg), whose .pth files and modules run at the next Python "
    "start",
    "conda-meta": "a conda environment (it holds conda-meta), whose activation scripts, .pth files and modules run "
    "when it is used",
}


def _python_environment(path: str) -> tuple[str, str] | None:
    """The outermost Python environment or installation the absolute *path* is or lies inside, and what it is.

    A folder named ``site-packages`` or ``dist-packages``, a ``pythonX.Y``
    (or ``python3``) folder in a ``lib`` or ``lib64`` folder, or a folder
    holding ``pyvenv.cfg`` (a virtual environment) or ``conda-meta`` (a conda
    environment). Names compare ignoring case. None if it is in none.
    """
    found: tuple[str, str] | None = None
    folder = path
    while True:
        parent = os.path.dirname(folder)
        name = os.path.basename(folder).casefold()
        if name in {"site-packages", "dist-packages"}:
            found = folder, _PACKAGES
        elif (
            name.startswith("python")
            and name[6:].replace(".", "").isdigit()
            and (os.path.basename(parent).casefold() in {"lib", "lib64"})
        ):
            found = folder, _LIBRARY
        for marker, what in _MARKERS.items():
            with contextlib.suppress(OSError):
                os.stat(os.path.join(folder, marker), follow_symlinks=False)
                found = folder, what
        if parent == folder:
            return found
        folder = parent


def check_paths(source: str, field: str, paths: Iterable[object]) -> tuple[str, ...]:
    """The paths a plugin names (hermes_guarded_paths), each made absolute; symbolic links are kept as given.

    Raises:
        InvalidDefinitionError: an item is not a path (a string or path-like).
    """
    return _checked_paths(source, field, paths, "a file or directory path such as '/etc/app.toml'", os.path.abspath)


def _checked_paths(
    source: str, field: str, items: Iterable[object], expected: str, absolute: Callable[[str], str]
) -> tuple[str, ...]:
    """Each of *items* made *absolute*, refusing one that is not a path (not *expected*) by its index."""
    checked: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, str | os.PathLike) or not str(os.fspath(item)).strip():
            raise InvalidDefinitionError(source, f"{field}[{index}]", f"must be {expected}, got {type(item).__name__}")
        if "\0" in str(os.fspath(item)):  # no file system takes one: the path cannot be checked, nor used
            raise InvalidDefinitionError(source, f"{field}[{index}]", f"must be {expected}, got a path holding a NUL")
        checked.append(absolute(os.fspath(item)))
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


def check_guarded_paths(guarded: Iterable[GuardedPath], roots: Iterable[WriteRoot | tuple[Any, ...]]) -> None:
    """Refuse a directory a tool may write that is, contains, or lies inside a guarded path.

    Paths are compared as given and as real paths (symbolic links resolved),
    either way: a link under a root could be replaced by a tool, whatever it
    points to now.

    Args:
        guarded: the guarded paths.
        roots: each a :class:`WriteRoot`, or the triple of its first three
            fields: the plugin whose tools may write there (its origin), the
            field it said so in (``hermes_write_roots``), and the directory (a
            real path).

    Raises:
        InvalidDefinitionError: naming the plugin and field of the root (or
            the setting that named it), the root, the guarded path and what
            it is, and what to do: for a root a setting named, what to set it to.
    """
    paths = list(guarded)
    for item in roots:
        root = item if isinstance(item, WriteRoot) else WriteRoot(*item)
        for path in paths:
            collision = _collision(path, root.path)
            if collision is not None:
                advice = own_folder(
                    root.setting,
                    "give the tools a folder of their own, such as a new workspace folder, that holds none of these",
                    "that holds none of these",
                )
                raise InvalidDefinitionError(
                    root.writer,
                    root.field,
                    f'names "{root.path}" as a directory its tools may write, but it {collision}, so a tool could '
                    f"change what runs or what is granted, or the record of it; {advice}",
                )
