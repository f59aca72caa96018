"""hermesos-fs: text-file tools for hermesos-core, confined to one workspace root directory.

Tools ``fs.read``, ``fs.list`` and ``fs.stat`` need the ``fs:read`` permission;
``fs.write``, ``fs.mkdir`` and ``fs.delete`` need ``fs:write``. Every path is
relative to the workspace root, and the named schema ``fs.path`` describes it.

Confinement does not compare strings. The root is opened once, when the hooks
are called, as a directory descriptor; every path is split into names, and each
name is opened relative to the descriptor of its parent with ``O_NOFOLLOW``
(``O_DIRECTORY`` for the directories on the way). ``..`` and absolute paths are
refused before anything is opened, and a symbolic link is refused wherever it
appears, by the kernel, at the moment of use, so a directory swapped for a link
after a check is refused too. Writes go to a temporary file in the same
directory, are flushed to disk, then renamed over the target.

The tools also refuse what would be dangerous even inside the root: a rewrite
drops the setuid and setgid bits, as the kernel does on a write; a file this
process could not open for writing is not replaced, nor deleted (a file written
in its place next would replace it all the same), and neither is a directory it
could not write into or another user's link; a named pipe, socket or device is
refused by its type before it is opened; and a path ending in ``/`` names a
directory, never a file.

Long work reports progress to the running call (:func:`hermes_core.current_call`):
``fs.list`` of a directory of more than :data:`LIST_PROGRESS_STEP` entries,
every that many entries read, and ``fs.read`` of more than
:data:`READ_PROGRESS_STEP` bytes, every that many bytes. Either stops early
when the caller has given up on the call. Smaller work reports nothing.

Some names are protected inside any root (:data:`DEFAULT_PROTECTED`): what a
program run for another purpose reads by itself and may run (version control
internals and configuration, any Python environment and the folders Python
imports from, ``*.pth`` and ``sitecustomize`` as a file or a package, the
start-up files of shells, editors, IPython and the login session, the
configuration of tools such as npm and pip) and credentials (``.ssh``,
``.aws``, ``.netrc``, ``.env*``...). ``fs.write``, ``fs.mkdir`` and
``fs.delete`` refuse a path that goes through or names one; ``fs.read``,
``fs.list`` and ``fs.stat`` refuse the credentials
(:data:`DEFAULT_READ_PROTECTED`). Names compare as a case-insensitive,
normalising file system would compare them, and a virtual or conda environment
or a git directory is also found by what it holds, under any name. The root
itself may neither be nor lie inside a protected name (its own path is matched
too), and a protected name may begin in the root's path: a root of
``~/.config`` refuses ``fish/config.fish``.

Settings, read with :func:`hermes_core.setting` when the hooks are called (at
load, never at import):

* ``HERMESOS_FS_ROOT``: the workspace root. It has no default: unset, the
  plugin contributes no tools and reports one problem saying what to set. The
  loader refuses a root that holds what decides what runs (the interpreter, the
  configuration of hermesos, a plugin's source) or the home directory, or lies
  inside any Python environment; the plugin, one that is or lies inside a
  protected name;
* ``HERMESOS_FS_MAX_READ_BYTES``: the most bytes one ``fs.read`` returns (default 1 MiB, at most 1 GiB);
* ``HERMESOS_FS_MAX_WRITE_BYTES``: the most bytes one ``fs.write`` writes (default 1 MiB, at most 1 GiB);
* ``HERMESOS_FS_PROTECT``: more protected names (globs, comma-separated), refused for writing;
* ``HERMESOS_FS_PROTECT_READS``: more protected names, refused for reading and writing;
* ``HERMESOS_FS_UNPROTECT``: names of the default lists to allow after all (comma-separated).

An application can also build the tools itself with :func:`make_tools`, which
takes the same settings as arguments. A handler refuses its input with
:func:`hermes_core.reject`, naming the field (``path``, ``offset`` or ``content``),
when the arguments are at fault; a failure of the system that is not (a full
disk, a read-only file system, an I/O error) is a
:class:`hermes_core.ToolFailedError`, retryable where it may pass.
POSIX only: the directory-descriptor calls it relies on do not exist on Windows.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import functools
import os
import stat
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, final

from hermes_core import (
    CallContext,
    InputRejected,
    InvalidDefinitionError,
    Tool,
    ToolFailedError,
    ToolHints,
    current_call,
    define_tool,
    hookimpl,
    reject,
    setting,
    shorten,
)
from hermes_core import schema as s
from hermes_core.schema import Schema

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PROTECTED",
    "DEFAULT_READ_PROTECTED",
    "LIST_PROGRESS_STEP",
    "MAX_BYTES_LIMIT",
    "MAX_LIST_ENTRIES",
    "MAX_READ_ENV",
    "MAX_WRITE_ENV",
    "PATH_SCHEMA",
    "PROTECT_ENV",
    "PROTECT_READS_ENV",
    "READ_PROGRESS_STEP",
    "ROOT_ENV",
    "UNPROTECT_ENV",
    "__version__",
    "hermes_problems",
    "hermes_schemas",
    "hermes_tools",
    "hermes_write_roots",
    "make_tools",
]

#: The environment variable naming the workspace root.
ROOT_ENV: Final = "HERMESOS_FS_ROOT"
#: The environment variable bounding the bytes one ``fs.read`` returns.
MAX_READ_ENV: Final = "HERMESOS_FS_MAX_READ_BYTES"
#: The environment variable bounding the bytes one ``fs.write`` writes.
MAX_WRITE_ENV: Final = "HERMESOS_FS_MAX_WRITE_BYTES"
#: The environment variable naming more protected names, refused for writing.
PROTECT_ENV: Final = "HERMESOS_FS_PROTECT"
#: The environment variable naming more protected names, refused for reading and writing.
PROTECT_READS_ENV: Final = "HERMESOS_FS_PROTECT_READS"
#: The environment variable naming default protected names to allow after all.
UNPROTECT_ENV: Final = "HERMESOS_FS_UNPROTECT"
#: The default of both size limits: 1 MiB.
DEFAULT_MAX_BYTES: Final = 1024 * 1024
#: The largest either size limit may be: 1 GiB.
MAX_BYTES_LIMIT: Final = 1024 * 1024 * 1024

# The protected names, and why, as the refusal says it after the name ("'.git' is version-control internals...").
#
# The reasoning of the list (docs/security.md, "What the file tools refuse"): a name is protected when a program
# run for another purpose (a shell, Python, git, a package manager, ssh, an editor, IPython, the login session)
# reads it by itself and may run what it says, or when it holds credentials. Each is listed in every form its
# program reads: a module as a file or a package ("sitecustomize*"), a start-up file with its ".d" folder
# (".bash*"), a configuration file with its folder (".gitconfig", ".config/git"). The project's own files are not
# protected, though a tool runs them when someone builds, installs or tests the project (a Makefile,
# package.json, setup.py, conftest.py, a CI or pre-commit configuration, .vscode): writing the project is what the
# tools are for, and a review of the changes shows them. An operator protects more with HERMESOS_FS_PROTECT.
#
# A name matches one name of a path (a glob), or, with a "/", as many consecutive names, the root's own names
# included: a root of ~/.config refuses "fish/...". Names are compared folded (_fold): ignoring case, normalised.
_VCS = "is version-control internals, where a hook runs at the next commit"
_VCS_CONFIG = "is the configuration of version control, which names programs it runs (hooks, filters, a pager)"
_PYTHON_PATH = "is a folder Python imports from, whose modules and .pth files run when Python starts or imports them"
_STARTUP = "is run by Python at start-up (a .pth file, or a start-up module as a file or a package)"
_SHELL = "is a shell start-up file, which runs in every new shell"
_SESSION = "is read at login, where it runs programs or sets the environment of every program"
_PATH = "is a folder on the PATH by convention, whose programs run by name"
_EDITOR = "is an editor's start-up file, which runs when the editor starts"
_IPYTHON = "is IPython's or Jupyter's start-up or configuration, which runs when they start"
_TOOL = "is the configuration of a tool, which names programs it runs or where it installs from"
_TOOL_CREDENTIALS = "is the configuration of a tool, which names programs it runs and holds its credentials"
_CREDENTIALS = "holds credentials"
# The names a folder is protected by what it holds, under any name of its own: what it must hold (every one, found
# with fstatat, following nothing), and why.
_MARKED: Final[Mapping[str, tuple[tuple[str, ...], str]]] = {
    "pyvenv.cfg": (
        ("pyvenv.cfg",),
        "is a virtual environment (it holds pyvenv.cfg), whose .pth files and modules run at the next Python start",
    ),
    "conda-meta": (
        ("conda-meta",),
        "is a conda environment (it holds conda-meta), whose activation scripts, .pth files and modules run when "
        "it is used",
    ),
    ".git": (
        ("HEAD", "objects", "refs"),
        "is a git directory (it holds HEAD, objects and refs), where a hook runs at the next commit or push",
    ),
}
_CREDENTIAL_NAMES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".pypirc",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
)
_PROTECTED_WHY: Final[Mapping[str, str]] = {
    # Version control: a hook runs at the next commit; its configuration names the programs it runs.
    **dict.fromkeys([".git", ".hg", ".svn", ".bzr", ".jj"], _VCS),
    **dict.fromkeys([".gitconfig", ".config/git", ".hgrc", ".hgrc.d"], _VCS_CONFIG),
    # Python: any environment, the folders it imports from, and what it runs at start-up.
    "pyvenv.cfg": _MARKED["pyvenv.cfg"][1],
    "conda-meta": _MARKED["conda-meta"][1],
    **dict.fromkeys(["site-packages", "dist-packages", "lib/python[0-9]*", "lib64/python[0-9]*"], _PYTHON_PATH),
    **dict.fromkeys(["*.pth", "sitecustomize*", "usercustomize*", ".pythonrc*"], _STARTUP),
    # Shells (bash, zsh, sh, ksh, csh, fish), with the folders their start-up files source.
    **dict.fromkeys(
        [
            ".bash*",
            ".zsh*",
            ".zprofile*",
            ".zlog*",
            ".profile*",
            ".shrc",
            ".kshrc",
            ".mkshrc",
            ".cshrc",
            ".tcshrc",
            ".login",
            ".logout",
            ".oh-my-zsh",
            ".config/fish",
            "fish/config.fish",
            "fish/conf.d",
        ],
        _SHELL,
    ),
    # The login session: the environment of every program, and the programs it starts.
    **dict.fromkeys(
        [
            ".pam_environment",
            ".xprofile",
            ".xinitrc",
            ".xsession*",
            ".config/autostart",
            ".config/environment.d",
            ".config/systemd",
            ".forward",
        ],
        _SESSION,
    ),
    ".local/bin": _PATH,
    **dict.fromkeys([".vimrc", ".gvimrc", ".exrc", ".vim", ".emacs*", ".config/nvim", ".config/emacs"], _EDITOR),
    **dict.fromkeys([".ipython", ".jupyter", "profile_*/startup", "ipython_*config.py", "jupyter_*config.*"], _IPYTHON),
    # Tools that run programs their configuration names (npm's script-shell and node-options, yarn's yarnPath,
    # pip's index, cargo's wrappers, gdb's commands), wherever they read it from.
    **dict.fromkeys(
        [
            ".yarnrc*",
            "pip.conf",
            ".pip",
            ".config/pip",
            ".condarc",
            ".cargo",
            ".gemrc",
            ".Rprofile",
            ".Renviron",
            ".gdbinit",
            ".lldbinit",
            ".irbrc",
            ".pryrc",
            ".psqlrc",
            ".curlrc",
            ".wgetrc",
            ".direnv",
            ".config/direnv",
        ],
        _TOOL,
    ),
    **dict.fromkeys([".npmrc", ".docker", ".kube"], _TOOL_CREDENTIALS),
    **dict.fromkeys(_CREDENTIAL_NAMES, _CREDENTIALS),
    ".env*": "is an environment file, which usually holds credentials (and .envrc runs in the shell)",
}
#: The names fs.write, fs.mkdir and fs.delete refuse anywhere on a path, and a root may not be nor lie inside
#: (globs; ``a/b`` for consecutive names; compared ignoring case and Unicode normalisation). ``pyvenv.cfg``,
#: ``conda-meta`` and ``.git`` also protect a folder holding a virtual environment's, a conda environment's or a
#: git directory's files, under any name.
DEFAULT_PROTECTED: Final = tuple(_PROTECTED_WHY)
#: Of those, the names fs.read, fs.list and fs.stat refuse too: credentials.
DEFAULT_READ_PROTECTED: Final = (*_CREDENTIAL_NAMES, ".npmrc", ".docker", ".kube", ".env*")
#: The most entries one ``fs.list`` returns; ``offset`` pages through the rest.
MAX_LIST_ENTRIES: Final = 1000
#: ``fs.list`` reports progress on a directory of more entries than this, once per this many read.
LIST_PROGRESS_STEP: Final = 1000
#: ``fs.read`` reports progress on a read of more bytes than this, once per this many read.
READ_PROGRESS_STEP: Final = 4 * 1024 * 1024

_DECL = "hermes_fs.make_tools()"
_VERSION = "1.0.0"
_O_DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
# A special file is refused by its type before the open; O_NONBLOCK is for one swapped in after
# that check: opening it must not hang waiting for a writer, and fstat then refuses it.
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
# O_EXCL with O_CREAT never follows a symbolic link, and never opens a file someone else made.
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
_SHOWN_MAX = 120  # the most characters of a path a message quotes, "..." included
# The permission bits a rewrite keeps: not setuid and setgid, which the kernel clears on an
# ordinary write (kept, they would run or group-own the new text with the old file's rights,
# and the new file belongs to this process), nor the sticky bit, which means nothing on a file.
_KEPT_MODE = 0o7777 & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)

#: The named schema of a workspace path, contributed as ``fs.path``.
PATH_SCHEMA: Final = s.string(
    min_length=1,
    max_length=4096,
    description=(
        "A path relative to the workspace root, with '/' between names, such as 'notes/todo.txt'; "
        "'.' is the root itself. Absolute paths, '..' and a leading '~' are refused, "
        "and symbolic links are never followed."
    ),
)


# -- messages --------------------------------------------------------------------------------------


def _show(parts: tuple[str, ...]) -> str:
    """A relative path as messages quote it; never an absolute path of the machine."""
    return repr(shorten("/".join(parts) or ".", _SHOWN_MAX))


_LINK_ADVICE = (
    "hermesos-fs never follows symbolic links, even ones pointing inside the workspace root; "
    "name the real file or directory instead"
)

# What a file of each type is called in a message.
_TYPE_WORDS: Final[Mapping[int, str]] = {
    stat.S_IFREG: "a file",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
}


def _what(mode: int) -> str:
    """What a file of *mode* is, in words: ``"a file"``, ``"a named pipe (FIFO)"``, ``"a device"``..."""
    return _TYPE_WORDS.get(stat.S_IFMT(mode), "a special file")


def _special(shown: str, mode: int) -> InputRejected:
    """The refusal of a named pipe, socket or device: never opened, read or replaced."""
    return reject(
        "path",
        f"names {shown}, which is {_what(mode)}, not a regular file; hermesos-fs reads and writes only regular "
        "files and never opens anything else (that could block, or act on a device or on another program)",
    )


def _read_only(shown: str) -> InputRejected:
    """The refusal of an existing file this process could not open for writing."""
    return reject(
        "path",
        f"names {shown}, which is read-only for this tool: the operating system would not let this process "
        "open it for writing, and no change to the arguments makes it writable; write the text to another "
        "path instead, or ask the user to make the file writable",
    )


def _directory_suffix(path: str) -> str:
    """What ends *path* and makes it the path of a directory (``"/"`` or ``"/."``), or ``""``.

    As in POSIX, ``notes/`` names a directory: never a file called ``notes``.
    """
    if path.endswith("/"):
        return "/"
    if path.endswith("/."):
        return "/."
    return ""


def _not_a_directory(suffix: str, parts: tuple[str, ...], mode: int) -> InputRejected:
    """The refusal of a path ending in *suffix*, which names a directory, when what is there is not one."""
    return reject(
        "path",
        f"ends in {suffix!r}, which makes it the path of a directory, but {_show(parts)} is {_what(mode)}; "
        f"drop the {suffix!r} to name {_show(parts)} itself",
    )


def _not_a_file_path(suffix: str, parts: tuple[str, ...], advice: str) -> InputRejected:
    """The refusal of a path ending in *suffix* where a file is needed."""
    return reject(
        "path",
        f"ends in {suffix!r}, which makes it the path of a directory: a file path cannot end in {suffix!r}; "
        f"drop it and write {_show(parts)} ({advice})",
    )


# Failures of the system that the arguments did not cause, by errno: what happened, and whether
# it may pass (space freed, files closed, memory released, a lock or a device let go).
_SYSTEM_FAILURES: Final[Mapping[int, tuple[str, bool]]] = {
    code: (words, retryable)
    for name, words, retryable in (
        ("ENOSPC", "no space is left on the device", True),
        ("EDQUOT", "the disk quota is used up", True),
        ("EMFILE", "this process has too many files open", True),
        ("ENFILE", "the system has too many files open", True),
        ("ENOMEM", "the system is out of memory", True),
        ("EAGAIN", "the file system is temporarily unavailable", True),
        ("EBUSY", "the file or directory is in use by the system or another program", True),
        ("ETIMEDOUT", "the file system did not answer in time", True),
        ("EROFS", "the file system is read-only", False),
        ("EIO", "the storage device reported an input/output error", False),
    )
    if (code := getattr(errno, name, None)) is not None
}


# The errors a caller fixes by naming another path: what the refusal of "path" says.
_REFUSALS: dict[int, str] = {
    errno.EACCES: "names {shown}, which the operating system does not allow to be {verb} (permission denied)",
    errno.EPERM: "names {shown}, which the operating system does not allow to be {verb} (permission denied)",
    errno.ENAMETOOLONG: "is longer than the file system allows (usually 255 bytes per name); use shorter names",
    errno.ENOENT: (
        "names {shown}, which does not exist under the workspace root; "
        "list its directory with fs.list to see what exists"
    ),
    errno.EEXIST: "names {shown}, which already exists",
    errno.EISDIR: "names {shown}, which is a directory, not a file",
    errno.ENOTDIR: "names {shown}, which goes through something that is not a directory",
    errno.ELOOP: "names {shown}, which holds a symbolic link; {link_advice}",
    errno.ENOTEMPTY: "names {shown}, a directory that is not empty",
    errno.EILSEQ: "names {shown}, which the file system cannot store as a name; use another name",
}


def _os_failure(error: OSError, shown: str, verb: str) -> InputRejected | ToolFailedError:
    """What an error of the operating system means for the call, to be raised ``from`` it.

    A refusal of the path (:func:`~hermes_core.reject`) when the caller can fix
    it by naming another path: it does not exist, or exists, or is of the wrong
    kind, is a link, is not allowed, or is too long. Anything else is a failure
    of the system the arguments did not cause: a
    :class:`~hermes_core.ToolFailedError`, retryable where it may pass (see
    ``_SYSTEM_FAILURES``); one not listed there is named by its errno and not
    retryable.
    """
    code = error.errno
    refusal = _REFUSALS.get(code) if code is not None else None
    if refusal is not None:
        return reject("path", refusal.format(shown=shown, verb=verb, link_advice=_LINK_ADVICE))
    found = _SYSTEM_FAILURES.get(code) if code is not None else None
    if found is None:
        name = errno.errorcode.get(code, str(code)) if code is not None else "an error"
        found = (f"the operating system reported {name} ({error.strerror})", False)
    words, retryable = found
    return ToolFailedError(f"{words}, so {shown} could not be {verb}", retryable=retryable)


# -- paths ----------------------------------------------------------------------------------------


def _split(path: str) -> tuple[str, ...]:
    """The names of a workspace path, checked lexically: ``()`` is the root itself.

    Empty names and ``.`` are dropped, as POSIX does; everything else is a
    literal name (``..test``, ``a..b``, spaces, non-ASCII, backslashes).

    Raises:
        InputRejected: the path holds a NUL, is absolute, starts with ``~`` or holds ``..``.

    """
    if "\x00" in path:
        raise reject("path", "contains a NUL character, which no file name can hold; remove it")
    if path.startswith("/"):
        raise reject(
            "path",
            "is an absolute path; paths are relative to the workspace root, so write 'notes/todo.txt' "
            "rather than '/notes/todo.txt' ('.' is the root itself)",
        )
    names = path.split("/")
    if names[0].startswith("~"):
        raise reject(
            "path",
            "starts with '~', which is not expanded to a home directory: paths are relative to the "
            "workspace root, so drop the '~/' (a name that really begins with '~' is written './~name')",
        )
    if ".." in names:
        raise reject(
            "path",
            "contains '..'; hermesos-fs never steps up out of a directory, so write the path from the "
            "workspace root down, such as 'src/app.py' rather than 'docs/../src/app.py'",
        )
    return tuple(name for name in names if name not in ("", "."))


def _target(args: dict[str, Any]) -> str:
    """What a call acts on, for a person asked to approve it: its path as the tool uses it (``.``: the root).

    ``notes/./././Makefile`` is ``notes/Makefile``; a path the tools refuse is refused here too.
    """
    return "/".join(_split(args["path"])) or "."


# -- protected names ------------------------------------------------------------------------------

_GLOB_CHARACTERS = frozenset("*?[")


@functools.lru_cache(maxsize=256)
def _literal_start(glob: str) -> str:
    """What every name *glob* matches begins with: its characters before the first wildcard."""
    for index, character in enumerate(glob):
        if character in _GLOB_CHARACTERS:
            return glob[:index]
    return glob


def _matches(name: str, glob: str) -> bool:
    """``fnmatch.fnmatchcase(name, glob)``, without compiling *glob* for a name that does not begin as it does.

    fnmatch compiles each glob to a regular expression at its first use: for the protected names of a
    workspace, a million instructions of every start, where no name of the root begins as they do.
    """
    return name.startswith(_literal_start(glob)) and fnmatch.fnmatchcase(name, glob)


# The code points HFS+ ignores when it compares names (git's is_hfs_dotgit skips the same): '.g\u200cit' is '.git'.
_IGNORABLE: Final = dict.fromkeys(map(ord, "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b"
                                           "\u206c\u206d\u206e\u206f\ufeff"))  # fmt: skip


def _fold(name: str) -> str:
    """*name* as a file system that opens it might compare it: the form protected names are matched in.

    Case is ignored (as on macOS and Windows); Unicode is normalised by
    compatibility, a wider form than the canonical one macOS uses, so the
    KELVIN SIGN of ``.\u212aube`` is ``k`` and FULLWIDTH FULL STOP ``\uff0egit`` is
    ``.git``; the code points HFS+ ignores are dropped; and trailing dots and
    spaces, which Windows file systems drop, are dropped (``.git.`` is ``.git``).
    Folding more than a file system does refuses more, never less.
    """
    if name.isascii():
        folded = name.lower()
    else:
        import unicodedata  # noqa: PLC0415 - only for a name that is not ASCII: not on every start of hermesos

        folded = unicodedata.normalize("NFKD", name.translate(_IGNORABLE)).casefold()
        folded = unicodedata.normalize("NFKD", folded)
    return folded.rstrip(". ")


def _why(pattern: str) -> str:
    """Why *pattern* is protected, as the refusal says it after the name."""
    return _PROTECTED_WHY.get(pattern, f"is protected by the operator ({PROTECT_ENV} or {PROTECT_READS_ENV})")


def _hint(pattern: str) -> str:
    """What the operator would change to allow a name (the model passes it on, it cannot change it)."""
    if pattern in _PROTECTED_WHY:
        return f"the operator can allow it by adding {pattern} to the setting {UNPROTECT_ENV}"
    return f"the operator protected it with {PROTECT_ENV} or {PROTECT_READS_ENV}"


# A root's names, the last few, that a protected name of consecutive names may begin in: as written, and folded.
_Tail = tuple[tuple[str, ...], tuple[str, ...]]


@final
class _Names:
    """Protected names: each matches one name of a path (a glob), or, written with "/", consecutive names.

    Names compare folded (:func:`_fold`). A name costs a few lookups whatever
    the list holds: literal names are keys of a dict, globs ``x*`` and ``*x``
    are tried at once with ``str.startswith`` and ``str.endswith`` over a
    tuple, only other globs one by one; consecutive names are found by their
    last name.
    """

    __slots__ = ("globs", "literal", "longest", "prefixes", "run_globs", "runs", "suffixes")

    def __init__(self, patterns: Iterable[str]) -> None:
        self.literal: dict[str, str] = {}
        self.prefixes: dict[str, str] = {}  # "x*", keyed by "x"
        self.suffixes: dict[str, str] = {}  # "*x", keyed by "x"
        self.globs: list[tuple[str, str]] = []
        self.runs: dict[str, list[tuple[tuple[str, ...], str]]] = {}  # keyed by the last name, when it is literal
        self.run_globs: list[tuple[tuple[str, ...], str]] = []
        self.longest = 1  # the most names one protected name spans
        for pattern in dict.fromkeys(patterns):
            names = tuple(_fold(name) for name in pattern.split("/"))
            if len(names) > 1:
                self.longest = max(self.longest, len(names))
                if _GLOB_CHARACTERS.isdisjoint(names[-1]):
                    self.runs.setdefault(names[-1], []).append((names, pattern))
                else:
                    self.run_globs.append((names, pattern))
                continue
            [name] = names
            if _GLOB_CHARACTERS.isdisjoint(name):
                self.literal.setdefault(name, pattern)
            elif name.endswith("*") and _GLOB_CHARACTERS.isdisjoint(name[:-1]):
                self.prefixes.setdefault(name[:-1], pattern)
            elif name.startswith("*") and _GLOB_CHARACTERS.isdisjoint(name[1:]):
                self.suffixes.setdefault(name[1:], pattern)
            else:
                self.globs.append((name, pattern))

    def _one(self, name: str) -> str | None:
        """The pattern of one name that *name* (folded) matches, or None."""
        found = self.literal.get(name)
        if found is None and name.startswith(tuple(self.prefixes)):
            found = next(p for key, p in self.prefixes.items() if name.startswith(key))
        if found is None and name.endswith(tuple(self.suffixes)):
            found = next(p for key, p in self.suffixes.items() if name.endswith(key))
        if found is None:
            found = next((p for glob, p in self.globs if _matches(name, glob)), None)
        return found

    def match(self, parts: tuple[str, ...], tails: Iterable[_Tail] = ()) -> tuple[int, str, tuple[str, ...]] | None:
        """The first name of *parts* that ends a protected name: its index, the pattern, the root's names in it.

        A protected name of consecutive names may begin in one of *tails* (the
        root's last names); the names of the root it begins with come back,
        as written, so a refusal can show them (``()`` when it lies in *parts*).
        """
        folded = [_fold(name) for name in parts]
        spans = list(tails) or [((), ())]
        for index, name in enumerate(folded):
            pattern = self._one(name)
            if pattern is not None:
                return index, pattern, ()
            runs = self.runs.get(name, [])
            if self.run_globs:
                runs = [*runs, *(run for run in self.run_globs if _matches(name, run[0][-1]))]
            for run, pattern in runs:
                before = len(run) - 1 - index  # how many of its names lie in the root's path
                for written, tail in spans:
                    names = [*tail, *folded[: index + 1]][-len(run) :]
                    if len(names) == len(run) and all(
                        _matches(have, glob) for have, glob in zip(names, run, strict=True)
                    ):
                        return index, pattern, written[len(written) - before :] if before > 0 else ()
        return None


@functools.lru_cache(maxsize=8)
def _matcher(patterns: tuple[str, ...]) -> _Names:
    """The matcher of *patterns*, made once per list: both hooks build the protection at every load."""
    return _Names(patterns)


@final
class _Protection:
    """What a workspace refuses: names for writing, names for reading, and folders by what they hold."""

    __slots__ = ("marked", "read", "write")

    def __init__(self, write: Iterable[str], read: Iterable[str], marked: Mapping[str, tuple[str, ...]]) -> None:
        self.write = _matcher(tuple(write))
        self.read = _matcher(tuple(read))
        self.marked = marked  # the protected name of a folder holding every one of the names

    def check(self, parts: tuple[str, ...], tails: tuple[_Tail, ...], *, writing: bool) -> None:
        """Refuse *parts* if it goes through or names a protected name (for writing, or for reading).

        Raises:
            InputRejected: naming ``path``, the protected name, why, and the setting that allows it.
        """
        found = (self.write if writing else self.read).match(parts, tails)
        if found is not None:
            index, pattern, before = found
            raise _protected(parts, index, _why(pattern), _hint(pattern), writing=writing, before=before)

    def marker(self, folder: int | str) -> str | None:
        """The protected name the folder (a descriptor, or a path) is by what it holds; None if none."""
        for pattern, names in self.marked.items():
            if all(_holds(folder, name) for name in names):
                return pattern
        return None

    def tails(self, root: str, declaration: str, field: str | None, allow: Callable[[str], str]) -> tuple[_Tail, ...]:
        """Refuse a *root* that is or lies inside a protected name; its last names, for names that begin in it.

        The root is checked as given (made absolute) and as its real path: a
        link named ``.git`` to a folder elsewhere is a git directory to git,
        and a link elsewhere to ``~/.ssh`` is ``~/.ssh``. Each folder from
        ``/`` down to the root is checked for what it holds too, and the
        outermost protected one is named.

        Raises:
            InvalidDefinitionError: naming *declaration* and *field*, the
                protected folder, why, and (*allow*) how to allow the name.
        """
        given, real = os.path.abspath(root), os.path.realpath(root)
        shown = repr(given) if given == real else f"{given!r} (that is, {real!r})"
        tails: list[_Tail] = []
        for path in dict.fromkeys((given, real)):
            names = tuple(name for name in path.split("/") if name)
            found = self.write.match(names)
            depth = len(names) if found is None else found[0] + 1
            why, pattern = "", ""
            for count in range(1, depth + 1):  # the outermost first
                marked = self.marker("/" + "/".join(names[:count])) if self.marked else None
                if marked is not None:
                    depth, why, pattern = count, _MARKED[marked][1], marked
                    break
            else:
                if found is not None:
                    why, pattern = _why(found[1]), found[1]
            if pattern:
                raise InvalidDefinitionError(
                    declaration,
                    field,
                    f"is {shown}, which is protected: {'/' + '/'.join(names[:depth])!r} {why}; hermesos-fs protects "
                    "that name inside every root, so a root cannot be or lie inside it either: set it to a folder "
                    f"of its own, such as ~/hermesos-workspace, {allow(pattern)}",
                )
            keep = names[len(names) - self.write.longest + 1 :] if self.write.longest > 1 else ()
            tails.append((keep, tuple(_fold(name) for name in keep)))
        return tuple(dict.fromkeys(tails))


def _marked(parts: tuple[str, ...], index: int, pattern: str) -> InputRejected:
    """The refusal of a write through a folder protected by what it holds (*index*: that folder; -1: the root)."""
    return _protected(parts, index, _MARKED[pattern][1], _hint(pattern), writing=True)


def _holds(folder: int | str, name: str) -> bool:
    """Whether the folder (a descriptor, or a path) holds *name*, of any type (``fstatat``, following nothing)."""
    try:
        if isinstance(folder, int):
            os.stat(name, dir_fd=folder, follow_symlinks=False)
        else:
            os.stat(os.path.join(folder, name), follow_symlinks=False)
    except OSError:
        return False
    return True


def _protected(
    parts: tuple[str, ...], index: int, why: str, hint: str, *, writing: bool, before: tuple[str, ...] = ()
) -> InputRejected:
    """The refusal of a path through a protected name.

    *index* is the name of *parts* that ends it (-1: the root itself);
    *before*, the names of the root's own path it begins with.
    """
    what = "write, create or delete anything there" if writing else "read, list or describe anything there"
    name = _show(parts[: index + 1])
    if before:
        name = f"{'/'.join((*before, *parts[: index + 1]))!r} (the root ends in {'/'.join(before)!r})"
    return reject(
        "path",
        f"names {_show(parts)}, which is protected: {name} {why}; hermesos-fs does not "
        f"{what}, whatever the arguments, so choose another path ({hint})",
    )


def _protection(
    protect: Iterable[str], protect_reads: Iterable[str], unprotect: Iterable[str], where: tuple[str, ...]
) -> _Protection:
    """The protection of the defaults, less *unprotect*, plus *protect* (writes) and *protect_reads* (both).

    *where* is what a refusal names: the declaration, then the field of each
    argument (``protect``, ``protect_reads``, ``unprotect``) or nothing (the
    settings, whose names are in the declarations).

    Raises:
        InvalidDefinitionError: a name to unprotect is not a default one, or a name is malformed.
    """
    declarations = where if len(where) == 3 else ((where[0],) * 3)
    fields: tuple[str | None, ...] = ("protect", "protect_reads", "unprotect") if len(where) == 1 else (None,) * 3
    lists = []
    for declaration, field, names in zip(declarations, fields, (protect, protect_reads, unprotect), strict=True):
        if isinstance(names, str):
            raise InvalidDefinitionError(declaration, field, "must be a list of names such as ['*.key'], got a string")
        checked = []
        for name in names:
            text = name.strip().strip("/") if isinstance(name, str) else ""
            parts = text.split("/")
            if not text or "\x00" in text or "" in parts or ".." in parts or "." in parts:
                raise InvalidDefinitionError(
                    declaration,
                    field,
                    "must hold names or globs such as '*.key' or 'secrets', or consecutive names with '/' between "
                    "such as 'config/app.toml'; never empty, '.' or '..'",
                )
            checked.append(text)
        lists.append(checked)
    protect_list, reads_list, unprotect_list = lists
    defaults = {name.casefold(): name for name in DEFAULT_PROTECTED}
    allowed: set[str] = set()
    for name in unprotect_list:
        if name.casefold() not in defaults:
            raise InvalidDefinitionError(
                declarations[2],
                fields[2],
                f"names {name!r}, which is not a protected name of the defaults; it takes names of the defaults "
                f"exactly as written: {', '.join(DEFAULT_PROTECTED)}",
            )
        allowed.add(defaults[name.casefold()])
    write = [n for n in DEFAULT_PROTECTED if n not in allowed]
    read = [n for n in DEFAULT_READ_PROTECTED if n not in allowed]
    marked = {pattern: names for pattern, (names, _) in _MARKED.items() if pattern not in allowed}
    return _Protection([*write, *protect_list, *reads_list], [*read, *reads_list], marked)


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def _lstat(name: str, dir_fd: int) -> os.stat_result | None:
    """The status of *name* in *dir_fd* itself (a link is not followed), or None if it does not exist."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _modified(st: os.stat_result) -> str | None:
    import datetime as dt  # noqa: PLC0415 - fs.stat only: not on every start of hermesos (its docs/performance.md)

    try:
        when = dt.datetime.fromtimestamp(st.st_mtime, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _size(count: int) -> str:
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB ({count} bytes)"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB ({count} bytes)"
    return f"{count} bytes"


def _is_continuation(byte: int) -> bool:
    return 0x80 <= byte < 0xC0


def _pread(fd: int, count: int, offset: int) -> bytes:
    """Up to *count* bytes from *offset*: fewer only at the end of the file."""
    chunks: list[bytes] = []
    while count > 0:
        chunk = os.pread(fd, count, offset)
        if not chunk:
            break
        chunks.append(chunk)
        count -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _pread_reporting(fd: int, count: int, offset: int, *, expected: int, call: CallContext, shown: str) -> bytes:
    """:func:`_pread` in steps of :data:`READ_PROGRESS_STEP` bytes, each reported to *call* as read of *expected*.

    Stops if the call was given up on: its result would be dropped.
    """
    chunks: list[bytes] = []
    done = 0
    while done < count:
        if done and done < expected:
            _report(call, done, expected, f"reading {shown}: {done} of {expected} bytes")
        step = min(count - done, READ_PROGRESS_STEP)
        chunk = _pread(fd, step, offset + done)
        chunks.append(chunk)
        done += len(chunk)
        if len(chunk) < step:  # the end of the file
            break
    return b"".join(chunks)


def _running_call() -> CallContext | None:
    """The running call's context (the tool is defined with ``context=True``), or None for a handler called alone."""
    try:
        return current_call()
    except LookupError:
        return None


def _report(call: CallContext, done: int, total: int | None, message: str) -> None:
    """Report progress to *call*, first stopping if its caller has given up on it (its result would be dropped)."""
    if call.cancelled:
        raise ToolFailedError("the call was given up on before it finished", retryable=True)
    call.progress(done, total, message)


def _span(data: bytes, want: int, *, inside: bool) -> tuple[int, int]:
    """Where the text of a part starts and ends in *data*, on character boundaries.

    With *inside* (a read not at the start of the file), continuation bytes at
    the start belong to a character begun before the offset and are skipped.
    The part is cut back to the last character boundary within *want* bytes,
    or, if one character is longer than that, forward to the end of it, so
    every part not at the end of the file holds at least one character.
    """
    start = 0
    if inside:
        while start < min(3, len(data)) and _is_continuation(data[start]):
            start += 1
    cap = start + want
    if len(data) <= cap:
        return start, len(data)
    end = cap
    while end > start and cap - end < 3 and _is_continuation(data[end]):
        end -= 1
    if end == start:
        end = cap
        while end < len(data) and _is_continuation(data[end]):
            end += 1
    return start, end


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


# -- the workspace --------------------------------------------------------------------------------


@final
class _Workspace:
    """The root directory, held open as a descriptor, and the operations the tools perform in it."""

    __slots__ = ("__weakref__", "fd", "max_read", "max_write", "protection", "tails")

    def __init__(
        self, fd: int, max_read: int, max_write: int, protection: _Protection, tails: tuple[_Tail, ...]
    ) -> None:
        self.fd = fd
        weakref.finalize(self, os.close, fd)
        self.max_read = max_read
        self.max_write = max_write
        self.protection = protection
        self.tails = tails  # the root's last names, in which a protected name of consecutive names may begin

    def writable(self, path: str) -> tuple[str, ...]:
        """The names of *path*, for a write (fs.write, fs.mkdir, fs.delete): refused if a protected name is on it."""
        parts = _split(path)
        self.protection.check(parts, self.tails, writing=True)
        return parts

    def readable(self, path: str) -> tuple[str, ...]:
        """The names of *path*, for a read (fs.read, fs.list, fs.stat): refused if a credential name is on it."""
        parts = _split(path)
        self.protection.check(parts, self.tails, writing=False)
        return parts

    # -- resolution

    def _refuse_step(
        self, parts: tuple[str, ...], index: int, dir_fd: int, error: OSError
    ) -> InputRejected | ToolFailedError:
        """Explain why opening ``parts[index]`` as a directory failed, asking ``lstat`` only for the words."""
        shown = _show(parts[: index + 1])
        verb = "names" if index == len(parts) - 1 else "goes through"
        if isinstance(error, FileNotFoundError):
            return reject(
                "path",
                f"{verb} {shown}, which does not exist under the workspace root; "
                "list its parent directory with fs.list to see what exists",
            )
        if error.errno not in (errno.ENOTDIR, errno.ELOOP):
            return _os_failure(error, shown, "opened")
        try:
            found = _lstat(parts[index], dir_fd)
        except OSError:
            found = None
        if found is not None and stat.S_ISLNK(found.st_mode):
            return reject("path", f"{verb} {shown}, a symbolic link; {_LINK_ADVICE}")
        if found is not None and not stat.S_ISDIR(found.st_mode):
            advice = "; read it with fs.read" if verb == "names" else ""
            return reject("path", f"{verb} {shown}, which is {_what(found.st_mode)}, not a directory{advice}")
        return reject("path", f"{verb} {shown}, which changed while it was being opened; try again")

    @contextlib.contextmanager
    def directory(
        self, parts: tuple[str, ...], count: int, *, create: bool = False, writing: bool = False
    ) -> Iterator[int]:
        """Open the directory named by the first *count* of *parts*, one name at a time.

        Each name is opened relative to its parent's descriptor with
        ``O_DIRECTORY | O_NOFOLLOW``, so nothing outside the root is reached
        and a symbolic link is refused at use, whenever it appeared. With
        *create*, a missing directory is made (and then opened the same way).
        With *writing*, each directory on the way, the root included, is
        refused if it is a protected name by what it holds (a virtual or conda
        environment, a git directory), unless that name is unprotected.

        Yields:
            a descriptor of the directory, closed on exit.

        Raises:
            InputRejected: a name is missing (its ``__cause__`` is then the ``FileNotFoundError``),
                not a directory, or a link.
            ToolFailedError: the system failed to open a directory (see ``_os_failure``).

        """
        fd, index = os.dup(self.fd), 0
        marked = writing and bool(self.protection.marked)
        if marked and (found := self.protection.marker(fd)) is not None:
            os.close(fd)
            raise _marked(parts, -1, found)
        try:
            for index in range(count):
                name = parts[index]
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):  # made meanwhile: the open below decides
                        os.mkdir(name, 0o777, dir_fd=fd)
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                if marked and (found := self.protection.marker(fd)) is not None:
                    os.close(fd)
                    raise _marked(parts, index, found)
        except OSError as error:
            refusal = self._refuse_step(parts, index, fd, error)
            os.close(fd)
            raise refusal from error
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def regular_file(self, parts: tuple[str, ...]) -> Iterator[tuple[int, os.stat_result]]:
        """Open the regular file *parts* names for reading, refusing links, directories and special files.

        The type is read with ``fstatat`` (which opens nothing) before the
        open, so a named pipe, socket or device is refused without being
        opened: opening a FIFO wakes a writer waiting on it, and opening a
        device can act on it. One swapped in after that check is still never
        followed (``O_NOFOLLOW``) nor waited on (``O_NONBLOCK``), and the
        ``fstat`` of what was opened refuses it.
        """
        shown = _show(parts)
        missing = (
            f"names {shown}, which does not exist under the workspace root; "
            "list its directory with fs.list to see what exists"
        )
        directory = f"names {shown}, which is a directory, not a file; list it with fs.list"
        if not parts:
            raise reject(
                "path", "is the workspace root '.', a directory; list it with fs.list or name a file inside it"
            )
        with self.directory(parts, len(parts) - 1) as parent:
            found = _lstat(parts[-1], parent)
            if found is None:
                raise reject("path", missing)
            if stat.S_ISLNK(found.st_mode):
                raise reject("path", f"names {shown}, a symbolic link; {_LINK_ADVICE}")
            if stat.S_ISDIR(found.st_mode):
                raise reject("path", directory)
            if not stat.S_ISREG(found.st_mode):
                raise _special(shown, found.st_mode)
            try:
                fd = os.open(parts[-1], _READ_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                raise reject("path", missing) from None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise reject("path", f"names {shown}, a symbolic link; {_LINK_ADVICE}") from None
                if error.errno == errno.ENXIO:  # a socket, or a FIFO opened without a peer
                    raise reject(
                        "path", f"names {shown}, which is not a regular file; hermesos-fs reads only files"
                    ) from None
                raise _os_failure(error, shown, "read") from error
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise reject("path", directory)
            if not stat.S_ISREG(st.st_mode):
                raise _special(shown, st.st_mode)
            yield fd, st
        finally:
            os.close(fd)

    # -- the operations

    def read_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.read``: a part of a UTF-8 text file, never splitting a character."""
        parts = self.readable(args["path"])
        if parts and (suffix := _directory_suffix(args["path"])):
            raise _not_a_file_path(suffix, parts, "fs.list lists a directory")
        offset: int = args["offset"]
        limit: int | None = args.get("limit")
        shown = _show(parts)
        call = _running_call()
        with self.regular_file(parts) as (fd, st):
            if offset > st.st_size:
                raise reject(
                    "offset",
                    f"is {offset}, past the end of {shown}, which is {st.st_size} bytes; "
                    f"use an offset from 0 to {st.st_size}",
                    kind="too_big",
                )
            if limit is None and st.st_size - offset > self.max_read:
                raise reject(
                    "path",
                    f"names {shown}, which is {_size(st.st_size)}; more than the {_size(self.max_read)} "
                    f"fs.read returns at once. Read it in parts: pass limit (at most {self.max_read}), then call "
                    "again with offset set to the next_offset returned, until eof is true",
                    kind="too_big",
                )
            want = self.max_read if limit is None else limit
            # 3 more bytes to step over the rest of a character the offset falls inside, 4 to finish the
            # last character and to see whether anything follows.
            expected = min(want + 7, st.st_size - offset)  # what the file holds from the offset on, as of now
            if call is not None and expected > READ_PROGRESS_STEP:
                data = _pread_reporting(fd, want + 7, offset, expected=expected, call=call, shown=shown)
            else:
                data = _pread(fd, want + 7, offset)
        start, end = _span(data, want, inside=offset > 0)
        try:
            content = data[start:end].decode("utf-8")
        except UnicodeDecodeError as error:
            bad = offset + start + error.start
            before = f" (the text before it can be read with offset {offset + start}, limit {bad - offset - start})"
            raise reject(
                "path",
                f"names {shown}, which is not UTF-8 text: the byte at offset {bad} does not decode; "
                f"hermesos-fs reads text files only{before if bad > offset + start else ''}",
            ) from None
        if call is not None and len(data) > READ_PROGRESS_STEP:  # the last step, once the text is decoded
            call.progress(len(data), len(data), f"read {shown}: {len(data)} bytes")
        return {
            "path": "/".join(parts),
            "content": content,
            "size": st.st_size,
            "offset": offset + start,
            "next_offset": offset + end,
            "eof": end == len(data),
        }

    def write_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.write``: replace (or create) a file atomically through a temporary file and a rename."""
        parts = self.writable(args["path"])
        if not parts:
            raise reject("path", "is the workspace root '.', a directory; name a file inside it, such as 'notes.txt'")
        if suffix := _directory_suffix(args["path"]):
            raise _not_a_file_path(suffix, parts, "fs.mkdir creates a directory")
        data = args["content"].encode("utf-8")
        if len(data) > self.max_write:
            raise reject(
                "content",
                f"is {_size(len(data))} in UTF-8, more than the {_size(self.max_write)} fs.write accepts; "
                "write less text",
                kind="too_big",
            )
        shown, name, create_only = _show(parts), parts[-1], args["mode"] == "create"
        exists = (
            f"names {shown}, which already exists, and mode is 'create'; choose another name, "
            "or pass mode 'overwrite' to replace it"
        )
        with self.directory(parts, len(parts) - 1, create=args["create_parents"], writing=True) as parent:
            old = _lstat(name, parent)
            if old is not None:
                if stat.S_ISLNK(old.st_mode):
                    raise reject("path", f"names {shown}, a symbolic link; {_LINK_ADVICE}")
                if stat.S_ISDIR(old.st_mode):
                    raise reject("path", f"names {shown}, which is a directory; name a file inside it")
                if not stat.S_ISREG(old.st_mode):
                    raise _special(shown, old.st_mode)
                if create_only:
                    raise reject("path", exists)
                # The rename needs only the directory's write permission, so the file's own is asked
                # here. faccessat rather than an open for writing: it opens nothing, so a FIFO or a
                # device swapped in since the lstat is not woken or acted on, a running script does
                # not fail with ETXTBSY, and no watcher sees the file opened for writing; it answers
                # for the effective ids, as an open would. A check, not a lock: a file made read-only
                # after it is replaced anyway, but only by someone who can already change this
                # directory, who could replace the file themselves.
                if not os.access(name, os.W_OK, dir_fd=parent, effective_ids=True, follow_symlinks=False):
                    raise _read_only(shown)
            import secrets  # noqa: PLC0415 - not at import: start-up, docs/performance.md

            temp = f".hermesos-fs-{secrets.token_hex(8)}.tmp"
            fd = os.open(temp, _TEMP_FLAGS, 0o666, dir_fd=parent)
            try:
                try:
                    if old is not None:
                        os.fchmod(fd, stat.S_IMODE(old.st_mode) & _KEPT_MODE)
                    _write_all(fd, data)
                    os.fsync(fd)
                finally:
                    os.close(fd)
                if create_only:
                    _link_new(temp, name, parent, exists)
                else:
                    # rename() replaces a link or file that appeared meanwhile; it never writes through a link.
                    os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
            with contextlib.suppress(OSError):  # durability of the rename; some file systems cannot
                os.fsync(parent)
        return {"path": "/".join(parts), "size": len(data), "created": old is None}

    def list_dir(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.list``: one page of a directory's entries, sorted by name."""
        parts = self.readable(args["path"])
        offset: int = args["offset"]
        call = _running_call()
        shown = _show(parts)
        with self.directory(parts, len(parts)) as fd:
            names, read = _directory_names(fd, call, shown)
            names.sort()
            entries: list[dict[str, Any]] = []
            page = names[offset : offset + args["limit"]]
            for name in page:
                found = _lstat(name, fd)
                if found is not None:  # deleted since it was listed
                    kind = _kind(found.st_mode)
                    entries.append({"name": name, "type": kind, "size": found.st_size if kind == "file" else None})
        if call is not None and read > LIST_PROGRESS_STEP:  # the last step, once the page is made
            call.progress(read, read, f"listed {shown}: {read} entries")
        following = offset + len(page)
        return {
            "path": "/".join(parts) or ".",
            "entries": entries,
            "total": len(names),
            "next_offset": following if following < len(names) else None,
        }

    def stat_path(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.stat``: what one path is, without following a link; a missing path is ``exists: false``."""
        parts = self.readable(args["path"])
        path = "/".join(parts) or "."
        suffix = _directory_suffix(args["path"])
        try:
            if parts:
                with self.directory(parts, len(parts) - 1) as parent:
                    found = _lstat(parts[-1], parent)
            else:
                found = os.fstat(self.fd)
        except InputRejected as refusal:
            if not isinstance(refusal.__cause__, FileNotFoundError):  # a name on the way is missing: no error
                raise
            found = None
        if found is None:
            return {"path": path, "exists": False, "type": None, "size": None, "modified": None}
        if suffix and not stat.S_ISDIR(found.st_mode):
            raise _not_a_directory(suffix, parts, found.st_mode)
        kind = _kind(found.st_mode)
        return {
            "path": path,
            "exists": True,
            "type": kind,
            "size": found.st_size if kind == "file" else None,
            "modified": _modified(found),
        }

    def make_dir(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.mkdir``: make a directory (and, by default, its parents); an existing one is fine."""
        parts = self.writable(args["path"])
        if not parts:
            return {"path": ".", "created": False}
        shown = _show(parts)
        with self.directory(parts, len(parts) - 1, create=args["parents"], writing=True) as parent:
            try:
                os.mkdir(parts[-1], 0o777, dir_fd=parent)
            except FileExistsError:
                found = _lstat(parts[-1], parent)
                if found is not None and stat.S_ISLNK(found.st_mode):
                    raise reject("path", f"names {shown}, a symbolic link; {_LINK_ADVICE}") from None
                if found is None or not stat.S_ISDIR(found.st_mode):
                    raise reject("path", f"names {shown}, which already exists and is not a directory") from None
                return {"path": "/".join(parts), "created": False}
        return {"path": "/".join(parts), "created": True}

    def delete_path(self, args: dict[str, Any]) -> dict[str, Any]:
        """``fs.delete``: remove a file, a link (not its target) or an empty directory."""
        parts = self.writable(args["path"])
        if not parts:
            raise reject(
                "path", "is the workspace root '.', which cannot be deleted; name a file or directory inside it"
            )
        shown = _show(parts)
        suffix = _directory_suffix(args["path"])
        with self.directory(parts, len(parts) - 1, writing=True) as parent:
            found = _lstat(parts[-1], parent)
            if found is None:
                raise reject(
                    "path",
                    f"names {shown}, which does not exist under the workspace root; "
                    "list its directory with fs.list to see what exists",
                )
            if suffix and not stat.S_ISDIR(found.st_mode):
                # "x/" is the directory x: a file or link called x is not what was asked to go.
                raise _not_a_directory(suffix, parts, found.st_mode)
            # Removing needs only the directory's write permission, but a file written in its place next would
            # replace what this process could not change: the promise fs.write keeps holds across calls.
            refusal = _unchangeable(parts[-1], parent, found, shown)
            if refusal is not None:
                raise refusal
            kind = _kind(found.st_mode)
            try:
                # Neither call follows a link: rmdir refuses one, unlink removes the link itself.
                if kind == "directory":
                    os.rmdir(parts[-1], dir_fd=parent)
                else:
                    os.unlink(parts[-1], dir_fd=parent)
            except OSError as error:
                if error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise reject(
                        "path",
                        f"names {shown}, a directory that is not empty; fs.delete removes only files, links "
                        "and empty directories, so delete what it contains first (see fs.list)",
                    ) from None
                raise
        return {"path": "/".join(parts), "type": kind}


def _unchangeable(name: str, parent: int, found: os.stat_result, shown: str) -> InputRejected | None:
    """The refusal of deleting *name* when this process could not change it in place; None when it could.

    A file it could not open for writing (read-only, or another user's), a
    directory it could not write into, a link of another user (a link's own
    permission bits mean nothing, so its owner decides): each is what fs.write
    and fs.mkdir would never replace, so fs.delete does not remove it for them
    to make anew. Asked as an open would answer, for the effective ids, and
    opening nothing (``faccessat``, as fs.write does); root may change anything.
    """
    if stat.S_ISLNK(found.st_mode):
        if os.geteuid() in (found.st_uid, 0):
            return None
        return reject(
            "path",
            f"names {shown}, a symbolic link that belongs to another user: fs.delete does not remove it, since "
            "a file written in its place would replace what this process could not change; no change to the "
            "arguments makes it removable, so ask the user to delete it",
        )
    if os.access(name, os.W_OK, dir_fd=parent, effective_ids=True, follow_symlinks=False):
        return None
    what = "write into it" if stat.S_ISDIR(found.st_mode) else "open it for writing"
    return reject(
        "path",
        f"names {shown}, which is read-only for this tool: the operating system would not let this process {what}, "
        "so fs.delete does not remove it either, since what was written in its place would replace what this "
        "process could not change; no change to the arguments makes it removable, so ask the user to delete it "
        "or make it writable",
    )


def _directory_names(fd: int, call: CallContext | None, shown: str) -> tuple[list[str], int]:
    """The names in the directory *fd* that JSON can carry, and how many entries were read.

    A name that is not valid UTF-8 cannot be written in JSON, nor named in a
    later call, so it is left out. Given the running *call*, every
    :data:`LIST_PROGRESS_STEP` entries read are reported as progress (the
    total is not known until the end), and reading stops if the call was
    given up on.
    """
    names: list[str] = []
    read = 0
    with os.scandir(fd) as entries:
        for entry in entries:
            # Before the entry is counted: a report says more are coming, so the last one always moves forward.
            if read and call is not None and not read % LIST_PROGRESS_STEP:
                _report(call, read, None, f"listing {shown}: {read} entries so far")
            read += 1
            if _encodable(name := entry.name):
                names.append(name)
    return names, read


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _link_new(temp: str, name: str, parent: int, exists: str) -> None:
    """Give the finished temporary file the name *name* only if nothing has it (``mode: create``).

    ``link()`` fails if the name exists, atomically; where the file system has
    no hard links, a check then a rename is the fallback (a race remains there).
    """
    try:
        os.link(temp, name, src_dir_fd=parent, dst_dir_fd=parent, follow_symlinks=False)
    except FileExistsError:
        raise reject("path", exists) from None
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        if _lstat(name, parent) is not None:
            raise reject("path", exists) from None
        os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        return
    os.unlink(temp, dir_fd=parent)


# -- the tools ------------------------------------------------------------------------------------

_VERBS = {
    "fs.read": "read",
    "fs.write": "written",
    "fs.list": "listed",
    "fs.stat": "examined",
    "fs.mkdir": "created",
    "fs.delete": "deleted",
}


def _handler(name: str, operation: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Any], Any]:
    """Wrap *operation* so an unexpected OS error says what it means for the call (see ``_os_failure``).

    A refusal of the path if the caller can fix it, else a ``ToolFailedError``
    saying what the system reported and whether it may pass, in words for the
    model; the ``OSError`` stays its ``__cause__``, for the operator's log.
    """
    verb = _VERBS[name]

    def handler(args: dict[str, Any]) -> dict[str, Any]:
        try:
            return operation(args)
        except OSError as error:
            raise _os_failure(error, repr(shorten(args["path"], _SHOWN_MAX)), verb) from error

    handler.__name__ = handler.__qualname__ = name.replace(".", "_")
    handler.__doc__ = operation.__doc__
    return handler


def _path(description: str) -> Schema:
    return s.ref("fs.path", description=description)


def _offset(description: str) -> Schema:
    return s.optional(s.integer(minimum=0), default=0, description=description)


_KIND = s.enum(["file", "directory", "symlink", "other"], description="What the path is; links are not followed")
_PATH_OUT = s.string(description="The path, normalised: relative to the workspace root, '/' between names")


def make_tools(
    root: str | os.PathLike[str],
    *,
    max_read_bytes: int = DEFAULT_MAX_BYTES,
    max_write_bytes: int = DEFAULT_MAX_BYTES,
    protect: Iterable[str] = (),
    protect_reads: Iterable[str] = (),
    unprotect: Iterable[str] = (),
) -> list[Tool]:
    """The six tools, confined to *root*, which is opened now and held open while the tools exist.

    Built this way, no plugin loader checks *root*: the application chooses it,
    and must not choose one holding what decides what runs (its interpreter,
    its configuration) or the home directory. The protected names are checked
    here as for the setting: *root* may not be nor lie inside one.

    Args:
        root: the workspace root, an existing directory (a link to one is followed, once, here).
        max_read_bytes: the most bytes one ``fs.read`` returns (at most 1 GiB).
        max_write_bytes: the most bytes (of UTF-8) one ``fs.write`` writes (at most 1 GiB).
        protect: more protected names (globs, compared ignoring case), refused for writing.
        protect_reads: more protected names, refused for reading and writing.
        unprotect: names of :data:`DEFAULT_PROTECTED` to allow after all.

    Returns:
        ``fs.read``, ``fs.write``, ``fs.list``, ``fs.stat``, ``fs.mkdir``, ``fs.delete``;
        they refer to the named schema ``fs.path`` (see :func:`hermes_schemas`).

    Raises:
        InvalidDefinitionError: *root* is not a directory or is or lies inside a
            protected name, a limit is not a positive integer of at most 1 GiB,
            a name is malformed or not one to unprotect, or the platform lacks
            the descriptor-relative calls.

    """
    for field, value in (("max_read_bytes", max_read_bytes), ("max_write_bytes", max_write_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BYTES_LIMIT:
            shown = value if isinstance(value, int) and len(str(value)) <= 30 else type(value).__name__
            raise InvalidDefinitionError(
                _DECL, field, f"must be a positive number of bytes, at most {MAX_BYTES_LIMIT} (1 GiB), got {shown!r}"
            )
    protection = _protection(protect, protect_reads, unprotect, (_DECL,))
    where = (_DECL, "root", "pass an existing directory")
    allow = lambda name: f"or pass {name!r} in unprotect to allow the name"  # noqa: E731 - one line, used once
    return _tools(_workspace(os.fspath(root), where, allow, protection, max_read_bytes, max_write_bytes))


def _workspace(
    root: str, where: tuple[str, str | None, str], allow: Callable[[str], str], protection: _Protection, *limits: int
) -> _Workspace:
    """The workspace of the directory *root*, once checked (:meth:`_Protection.tails`), opened and held open.

    *where* is what a refusal names (the declaration and the field) and what
    it advises for a root that is not a directory; *allow*, given a protected
    name, says how to allow it.

    Raises:
        InvalidDefinitionError: the platform lacks the descriptor-relative
            calls, the root is or lies inside a protected name, or it cannot be
            opened as a directory.
    """
    if not (_O_DIRECTORY and _O_NOFOLLOW and os.open in os.supports_dir_fd):
        raise InvalidDefinitionError(
            "hermesos-fs", None, "needs a POSIX system (openat with O_DIRECTORY and O_NOFOLLOW); this platform has none"
        )
    declaration, field, advice = where
    tails = protection.tails(root, declaration, field, allow)
    try:
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except OSError as error:
        raise InvalidDefinitionError(
            declaration, field, f"is {root!r}, which cannot be opened as a directory ({error.strerror}); {advice}"
        ) from None
    max_read, max_write = limits
    return _Workspace(fd, max_read, max_write, protection, tails)


# The tools that report progress on long work: their calls set a context (current_call()), the others' do not.
_REPORTING: Final = frozenset({"fs.read", "fs.list"})
# What each tool tells clients (MCP hosts) about itself. Every one stays inside the workspace: none is open-world.
# A repeated write, mkdir or delete with the same input has no further effect: all are idempotent.
_HINTS: Final[dict[str, ToolHints]] = {
    "fs.read": ToolHints(title="Read a text file", read_only=True, idempotent=True, open_world=False),
    "fs.write": ToolHints(
        title="Write a text file", read_only=False, destructive=True, idempotent=True, open_world=False
    ),
    "fs.list": ToolHints(title="List a directory", read_only=True, idempotent=True, open_world=False),
    "fs.stat": ToolHints(title="Describe a path", read_only=True, idempotent=True, open_world=False),
    "fs.mkdir": ToolHints(
        title="Create a directory", read_only=False, destructive=False, idempotent=True, open_world=False
    ),
    "fs.delete": ToolHints(title="Delete a path", read_only=False, destructive=True, idempotent=True, open_world=False),
}


def _tools(ws: _Workspace) -> list[Tool]:
    """The six tools, working in *ws*."""
    max_read_bytes, max_write_bytes = ws.max_read, ws.max_write
    read_max, write_max = _size(max_read_bytes), _size(max_write_bytes)
    operations: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "fs.read": ws.read_file,
        "fs.write": ws.write_file,
        "fs.list": ws.list_dir,
        "fs.stat": ws.stat_path,
        "fs.mkdir": ws.make_dir,
        "fs.delete": ws.delete_path,
    }

    def tool(name: str, description: str, permission: str, fields: dict[str, Schema], output: Schema) -> Tool:
        operation = operations[name]
        return define_tool(
            name=name,
            description=description,
            version=_VERSION,
            input=s.object(fields),
            output=output,
            permissions=[permission],
            handler=_handler(name, operation),
            context=name in _REPORTING,
            target=_target,
            hints=_HINTS[name],
        )

    return [
        tool(
            "fs.read",
            "Read a UTF-8 text file under the workspace root and return its text. A file of at most "
            f"{read_max} comes back whole; a larger one is refused unless you pass limit, to read it in parts: "
            "call again with offset set to the next_offset returned until eof is true. Offsets and sizes count "
            "bytes, not characters, and a part never splits a character. Files that are not valid UTF-8 "
            "(binary files) are refused, as are named pipes, sockets and devices. Symbolic links are not followed.",
            "fs:read",
            {
                "path": _path("The file to read, relative to the workspace root, such as 'src/app.py'"),
                "offset": _offset("The byte to start at (0, the default, is the start of the file)"),
                "limit": s.optional(
                    s.integer(minimum=1, maximum=max_read_bytes),
                    description=f"The most bytes to return (at most {max_read_bytes}); pass it to read in parts",
                ),
            },
            s.object(
                {
                    "path": _PATH_OUT,
                    "content": s.string(description="The text read"),
                    "size": s.integer(minimum=0, description="The whole file's size in bytes"),
                    "offset": s.integer(minimum=0, description="The byte the text starts at"),
                    "next_offset": s.integer(minimum=0, description="The byte after the text: the next part's offset"),
                    "eof": s.boolean(description="True when the text reaches the end of the file"),
                }
            ),
        ),
        tool(
            "fs.write",
            "Write a UTF-8 text file under the workspace root: replace it if it exists (mode 'overwrite', the "
            "default), or create it only if it does not (mode 'create'). The write is atomic: a reader sees the "
            "old file or the new one, never a mix. Missing parent directories are created unless create_parents "
            f"is false. At most {write_max} of UTF-8 per file. To change part of a file, read it with fs.read "
            "and write the whole new text. A file this process may not write (read-only) is refused: write "
            "another path. A path ending in '/' names a directory and is refused; fs.mkdir creates directories.",
            "fs:write",
            {
                "path": _path("The file to write, relative to the workspace root, such as 'notes/todo.txt'"),
                "content": s.string(
                    max_length=max_write_bytes, description="The file's whole new text, written as UTF-8"
                ),
                "mode": s.optional(
                    s.enum(["overwrite", "create"]),
                    default="overwrite",
                    description="'overwrite' replaces an existing file; 'create' fails if the file exists",
                ),
                "create_parents": s.optional(
                    s.boolean(), default=True, description="Create missing parent directories (default true)"
                ),
            },
            s.object(
                {
                    "path": _PATH_OUT,
                    "size": s.integer(minimum=0, description="The bytes written"),
                    "created": s.boolean(description="True if the file did not exist before"),
                }
            ),
        ),
        tool(
            "fs.list",
            "List the entries of a directory under the workspace root (not recursively), sorted by name: each "
            "entry's name, type (file, directory, symlink or other) and, for files, size in bytes. At most "
            f"{MAX_LIST_ENTRIES} entries come back per call; when next_offset is not null, call again with "
            "offset set to it for the rest.",
            "fs:read",
            {
                "path": s.optional(
                    s.ref("fs.path"),
                    default=".",
                    description="The directory to list, relative to the workspace root; '.' (the default) is the root",
                ),
                "offset": _offset("How many entries to skip, for the next page (default 0)"),
                "limit": s.optional(
                    s.integer(minimum=1, maximum=MAX_LIST_ENTRIES),
                    default=MAX_LIST_ENTRIES,
                    description=f"The most entries to return (at most {MAX_LIST_ENTRIES}, the default)",
                ),
            },
            s.object(
                {
                    "path": _PATH_OUT,
                    "entries": s.array(
                        s.object(
                            {
                                "name": s.string(description="The entry's name, without its directory"),
                                "type": _KIND,
                                "size": s.nullable(
                                    s.integer(minimum=0), description="Size in bytes for a file, else null"
                                ),
                            }
                        ),
                        description="The entries of this page, sorted by name",
                    ),
                    "total": s.integer(minimum=0, description="How many entries the directory has"),
                    "next_offset": s.nullable(
                        s.integer(minimum=0), description="The offset of the next page, or null if this is the last"
                    ),
                }
            ),
        ),
        tool(
            "fs.stat",
            "Describe one path under the workspace root without reading it: whether it exists, its type "
            "(file, directory, symlink or other), its size in bytes if it is a file, and when it was last "
            "modified (UTC). A path that does not exist is not an error: exists is false. Symbolic links are "
            "described, not followed.",
            "fs:read",
            {"path": _path("The path to describe, relative to the workspace root; '.' is the root")},
            s.object(
                {
                    "path": _PATH_OUT,
                    "exists": s.boolean(description="Whether the path exists"),
                    "type": s.nullable(_KIND, description="What the path is, or null if it does not exist"),
                    "size": s.nullable(s.integer(minimum=0), description="Size in bytes for a file, else null"),
                    "modified": s.nullable(
                        s.string(), description="Last modification, UTC, like 2024-05-01T12:00:00Z; or null"
                    ),
                }
            ),
        ),
        tool(
            "fs.mkdir",
            "Create a directory under the workspace root, and its missing parents unless parents is false. "
            "A directory that already exists is not an error: created is false.",
            "fs:write",
            {
                "path": _path("The directory to create, relative to the workspace root, such as 'notes/2024'"),
                "parents": s.optional(
                    s.boolean(), default=True, description="Create missing parent directories (default true)"
                ),
            },
            s.object({"path": _PATH_OUT, "created": s.boolean(description="False if it already existed")}),
        ),
        tool(
            "fs.delete",
            "Delete a file, a symbolic link (the link itself, never what it points to) or an empty directory "
            "under the workspace root. A directory that is not empty is refused: delete what it contains first. "
            "The workspace root itself cannot be deleted, nor what this process may not write (a read-only file "
            "or directory, another user's link). There is no undo.",
            "fs:write",
            {"path": _path("The file, link or empty directory to delete, relative to the workspace root")},
            s.object({"path": _PATH_OUT, "type": _KIND}),
        ),
    ]


# -- hooks ----------------------------------------------------------------------------------------


_ROOT_SETTING = s.string(
    min_length=1, description="the workspace root: an existing directory of its own, such as ~/hermesos-workspace"
)
_MAX_READ_SETTING = s.integer(
    minimum=1, maximum=MAX_BYTES_LIMIT, description="the most bytes one fs.read returns, such as 1048576"
)
_MAX_WRITE_SETTING = s.integer(
    minimum=1, maximum=MAX_BYTES_LIMIT, description="the most bytes one fs.write writes, such as 1048576"
)
_NAMES_SETTING = s.string(min_length=1, description="names or globs, comma-separated, such as .env*,*.key")


def _names(variable: str) -> list[str]:
    """The comma-separated names of the setting *variable* (none when it is unset)."""
    text: str = setting(variable, _NAMES_SETTING, default="")
    return [name.strip() for name in text.split(",") if name.strip()]


@hookimpl
def hermes_tools() -> list[Tool]:
    """The tools, confined to ``HERMESOS_FS_ROOT``, with the configured limits and protected names.

    Without ``HERMESOS_FS_ROOT`` there are none: the plugin has no default root
    (:func:`hermes_problems` says what to set).

    Raises:
        InvalidDefinitionError: a setting is malformed, or the root is not a
            directory, or is or lies inside a protected name; the declaration
            names the variable (``setting HERMESOS_FS_ROOT``).

    """
    configured = _configured()
    if configured is None:
        return []
    root, protection = configured
    max_read = setting(MAX_READ_ENV, _MAX_READ_SETTING, default=DEFAULT_MAX_BYTES)
    max_write = setting(MAX_WRITE_ENV, _MAX_WRITE_SETTING, default=DEFAULT_MAX_BYTES)
    return _tools(_workspace(root, _ROOT_WHERE, _allow_setting, protection, max_read, max_write))


_ROOT_WHERE = (f"setting {ROOT_ENV}", None, "set it to an existing directory")


def _allow_setting(name: str) -> str:
    """How the operator allows the protected *name* for a root, at the end of the refusal."""
    return f"or allow the name by adding {name} to the setting {UNPROTECT_ENV}"


def _root() -> str | None:
    """The configured workspace root, as the hooks read it; None when it is not set (there is no default)."""
    root: str | None = setting(ROOT_ENV, _ROOT_SETTING, default=None)
    return None if root is None else os.path.expanduser(root)


def _configured() -> tuple[str, _Protection] | None:
    """The configured root and protected names, as the hooks read them; None when the root is not set."""
    root = _root()
    if root is None:
        return None
    protection = _protection(
        _names(PROTECT_ENV),
        _names(PROTECT_READS_ENV),
        _names(UNPROTECT_ENV),
        tuple(f"setting {name}" for name in (PROTECT_ENV, PROTECT_READS_ENV, UNPROTECT_ENV)),
    )
    return root, protection


@hookimpl
def hermes_write_roots() -> list[str]:
    """The workspace root (none when it is not set): fs.write, fs.mkdir and fs.delete change files under it.

    The loader refuses to start when it is, holds or lies inside what decides
    what runs or what is granted (a policy file, the configuration directory of
    hermesos, any Python environment, a plugin's source) or holds the home
    directory: a tool must never be able to change what runs, or the
    permissions that govern it.

    Raises:
        InvalidDefinitionError: the root is or lies inside a protected name
            (:data:`DEFAULT_PROTECTED`), naming the setting: refused here too,
            since the loader may ask for the roots before it makes the tools.
    """
    configured = _configured()
    if configured is None:
        return []
    root, protection = configured
    protection.tails(root, *_ROOT_WHERE[:2], _allow_setting)
    return [root]


@hookimpl
def hermes_problems() -> list[str]:
    """One problem when ``HERMESOS_FS_ROOT`` is not set: the tools are left out, and what to set it to."""
    if _root() is not None:
        return []
    return [
        f"{ROOT_ENV} is not set, so the file tools (fs.read, fs.write, fs.list, fs.stat, fs.mkdir, fs.delete) "
        "are left out: hermesos-fs has no default root. Set it to a folder of their own, such as "
        f"{ROOT_ENV}=~/hermesos-workspace; never the home directory, /, a folder holding a virtual "
        "environment or the configuration of hermesos, nor one inside a Python environment, .git, .ssh or "
        "another protected name"
    ]


@hookimpl
def hermes_schemas() -> Mapping[str, Schema]:
    """The named schema ``fs.path``: a path relative to the workspace root."""
    return {"fs.path": PATH_SCHEMA}
