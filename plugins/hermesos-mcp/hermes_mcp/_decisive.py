"""What decides the code a stdio server runs: every path its entry names, found as the programs find them.

hermesos-mcp guards these paths (``hermes_guarded_paths``), and the loader
refuses a directory a tool may write that is, holds or lies inside one before
any server starts. A path is guarded where it would be created, not only
where a file is now: a tool that creates the script an argument names, the
folder a search path names or the file ``NODE_OPTIONS`` requires runs its code
at the server's next start, as surely as one that rewrites it.

For one entry, with the variables the server gets (those the SDK passes on
from this process, then ``pass_env``, then ``env``):

- the program, as it will be found (on that ``PATH``, or at its path from the
  working directory), and its folder (a Python program puts it first on
  ``sys.path``);
- every argument that looks like a path (absolute, with a separator, starting
  with ``~``, ending in a code or configuration extension, or naming an
  existing file), and the value after ``=`` in ``--option=value``, whether it
  exists or not; an argument naming an existing folder is taken for the data
  the server serves and left out, unless it is what an interpreter runs;
- the folder of the script it runs (the first argument that is a path), which
  Python puts first on ``sys.path`` and where Node looks for ``node_modules``;
  and each ``node_modules`` above it and above the working directory;
- the working directory: the entry's ``cwd`` (a root may not lie inside it),
  or this process's (a root may not be or hold it; with ``python -m`` or
  ``-c``, which put it first on ``sys.path``, not lie inside it either);
- in the variables: each part of a search path (a name ending in ``PATH``,
  ``PYTHONHOME``, ``PERL5LIB``...), split on ``os.pathsep``, existing or not; the
  files ``BASH_ENV``, ``ENV``, ``PYTHONSTARTUP`` name; the paths an
  option-carrying variable (``NODE_OPTIONS``, ``PERL5OPT``, ``RUBYOPT``,
  ``JAVA_TOOL_OPTIONS``) gives, split as a shell would (``--require hook.js``,
  ``--import=./x.mjs``, ``-I/opt/lib``); and any other value that is an
  absolute path, unless it names an existing folder.

Left out: paths a program reads from a file of its own that the entry does
not name (a server's configuration, npm's or uv's caches), and code an
argument holds inline (``python -c "..."``) beyond the paths that look like paths.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from hermes_mcp._config import ServerConfig

__all__ = ["decisive_paths"]

# An argument ending in one of these names a file whose content runs or configures what runs, created or not.
_CODE_SUFFIXES: Final = frozenset(
    {
        *(".py", ".pyw", ".pyc", ".pyz", ".pth", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"),
        *(".json", ".json5", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".env"),
        *(".sh", ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".rb", ".pl", ".pm", ".php", ".lua"),
        *(".jar", ".node", ".so", ".dylib", ".dll", ".wasm"),
    }
)
# Programs whose first argument that is not an option is what they run: a folder too (Python runs its
# __main__.py, Node its index.js or package.json's main).
_INTERPRETER: Final = re.compile(
    r"(python|pypy|node|nodejs|bun|deno|ruby|perl|php|lua|luajit|bash|sh|zsh|dash|ksh|fish)[0-9.]*(\.exe)?\Z",
    re.IGNORECASE,
)
# Python's -m and -c, alone or after flags that take no value (-um, -Bc): both put the working directory first
# on sys.path (unless -I or -P, left out here, keep it off).
_CWD_FIRST: Final = re.compile(r"-[bBdEiOqsSuvx]*[mc]\Z")
_PYTHON: Final = re.compile(r"(python|pypy)[0-9.]*(\.exe)?\Z", re.IGNORECASE)
# Options whose value is a file the program loads, whatever the value looks like (Node's, in its arguments or
# in NODE_OPTIONS; a bare name is a module found in node_modules, which is guarded apart).
_LOADS: Final = frozenset(
    {
        "--require",
        "-r",
        "--import",
        "--loader",
        "--experimental-loader",
        "--env-file",
        "--env-file-if-exists",
        "--experimental-config-file",
        "--openssl-config",
        "--snapshot-blob",
        "--icu-data-dir",
        "--experimental-policy",
    }
)
# Variables naming a file a program runs when it starts (a non-interactive bash, a POSIX sh, Python).
_FILE_VARIABLES: Final = frozenset({"BASH_ENV", "ENV", "PYTHONSTARTUP"})
# Search paths whose name does not end in PATH, and lists of libraries loaded into every program started.
_SEARCH_VARIABLES: Final = frozenset(
    {"PYTHONHOME", "PYTHONUSERBASE", "PERL5LIB", "PERLLIB", "RUBYLIB", "GEM_HOME", "ZDOTDIR"}
)
_PRELOAD_VARIABLES: Final = frozenset({"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"})
# Variables holding a command line of options: NODE_OPTIONS, PERL5OPT, RUBYOPT, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS.
_OPTION_VARIABLE: Final = re.compile(r".*(OPTIONS|OPTS|OPT)\Z")


def decisive_paths(
    server: ServerConfig, environ: Mapping[str, str] | None = None, source: str | None = None
) -> dict[str, str]:
    """Each path that decides the code stdio *server* runs, with what it is, for messages.

    Args:
        server: the entry; a server at a URL has none.
        environ: this process's environment, as the server will inherit from it (default: ``os.environ``).
        source: the configuration file the entry is in, named in what each path is.

    Returns:
        Absolute paths (they need not exist), each with a phrase saying what
        it decides, such as ``the program [servers.time] in "mcp.toml" runs``.
    """
    if server.command is None:
        return {}
    entry = f"[servers.{server.name}]" + (f' in "{source}"' if source else "")
    found: dict[str, str] = {}
    for path, what in _walk(server, os.environ if environ is None else environ, entry):
        if "\x00" not in path:  # no program is started with one (the server fails to start, saying so)
            found.setdefault(os.path.abspath(path), what)
    return found


def _walk(server: ServerConfig, environ: Mapping[str, str], entry: str) -> Iterator[tuple[str, str]]:
    assert server.command is not None
    variables = server.environment(environ)
    # The home directory ~ stands for, to the server: the HOME it gets.
    start = _Start(entry, os.path.abspath(server.cwd) if server.cwd else os.getcwd(), variables.get("HOME") or "")
    yield from start.program(server.command, variables.get("PATH", os.defpath))
    yield from start.arguments(server.command, server.args)
    if server.cwd:
        yield start.base, f"the working directory of {entry} (cwd)"
    elif start.cwd_first:
        yield (
            start.base,
            f"the working directory {entry} gets, that of hermesos (python -m and -c put it first on sys.path)",
        )
    for folder in dict.fromkeys([*start.folders, start.base]):
        for above in _ancestors(folder):
            yield os.path.join(above, "node_modules"), f"a folder where Node and npx look for the modules of {entry}"
    for name, value in variables.items():
        label = name if name in server.env else f"{name} (from the environment of hermesos)"
        yield from _variable(name, value, f"{label} of {entry}", start.base, start.home)


class _Start:
    """How one server is started, as far as paths go: what its program and arguments name, from where."""

    def __init__(self, entry: str, base: str, home: str) -> None:
        self.entry = entry
        self.base = base  # its working directory
        self.home = home or os.path.expanduser("~")
        self.folders: list[str] = []  # those of its program and its script, where Node starts looking for modules
        self.cwd_first = False  # python -m or -c: the working directory is first on sys.path

    def places(self, path: str) -> list[str]:
        return _places(path, self.base, self.home)

    def program(self, command: str, path: str) -> Iterator[tuple[str, str]]:
        """The program, as it will be found, and its folder; not found, the PATH folders it would be made in are."""
        found = shutil.which(command, path=path) if not _has_separator(command) else None
        for program in self.places(command) if _has_separator(command) else [found] if found else []:
            yield program, f"the program {self.entry} runs"
            for folder in _folders(program):
                self.folders.append(folder)
                yield (
                    folder,
                    f"the folder of the program {self.entry} runs (a Python program puts it first on sys.path)",
                )

    def arguments(self, command: str, args: tuple[str, ...]) -> Iterator[tuple[str, str]]:
        """What the arguments name: the script (and its folder), the files options load, other paths."""
        interpreter = _INTERPRETER.match(os.path.basename(command)) is not None
        pythonic = _PYTHON.match(os.path.basename(command)) is not None
        script: str | None = None
        for index, argument in enumerate(args):
            if index > 0 and args[index - 1] in _LOADS:
                for place in self.places(argument):
                    yield place, f"a file the program of {self.entry} loads ({args[index - 1]}, args[{index}])"
                continue
            pythonic = pythonic or _PYTHON.match(os.path.basename(argument)) is not None  # uv run python -m ...
            if script is None and pythonic and _CWD_FIRST.match(argument):
                self.cwd_first = True
            spaced = any(character.isspace() for character in argument)
            for candidate, attached in _candidates(argument):
                if not _looks_like_path(candidate, self.base):
                    continue
                places = self.places(candidate)
                directory = any(os.path.isdir(place) for place in places)
                # A whole argument with spaces that names nothing is a command line or code, not a script's path.
                whole = candidate == argument and not (spaced and not any(os.path.exists(place) for place in places))
                if script is None and whole and (interpreter or not directory):
                    # The script: what an interpreter runs (a folder too), else the first file an argument names.
                    script = argument
                    yield from self.script(places, index, directory=directory)
                elif attached or not directory:  # a folder is most often the data the server serves
                    for place in places:
                        yield place, f"a path args[{index}] of {self.entry} names"
            if spaced and script != argument:
                # A command line or code given whole (sh -c "exec python3 /srv/server.py"): the paths in it.
                for token in _split(argument):
                    for candidate, _ in _candidates(token):
                        if candidate != argument and _looks_like_path(candidate, self.base):
                            for place in self.places(candidate):
                                yield place, f"a path in args[{index}] of {self.entry}"

    def script(self, places: list[str], index: int, *, directory: bool) -> Iterator[tuple[str, str]]:
        """The script args[*index*] names (a folder an interpreter runs), and the folder it lies in."""
        for place in places:
            if directory:
                what = f"args[{index}]; Python runs its __main__.py, Node its index.js"
                yield place, f"the folder {self.entry} runs ({what})"
                continue
            yield place, f"the script {self.entry} runs (args[{index}])"
            for folder in _folders(place):
                self.folders.append(folder)
                what = f"args[{index}]; Python puts it first on sys.path, Node looks for node_modules there"
                yield folder, f"the folder of the script {self.entry} runs ({what})"


def _variable(name: str, value: str, label: str, base: str, home: str) -> Iterator[tuple[str, str]]:
    """The paths variable *name* gives a program: search folders, files it runs, paths among its options."""
    if name.endswith("PATH") or name in _SEARCH_VARIABLES:
        for part in value.split(os.pathsep):
            # An empty part is the working directory, for PATH and PYTHONPATH alike.
            for place in _places(part or ".", base, home):
                yield place, f"a folder of the search path {label}"
    elif name in _PRELOAD_VARIABLES:
        for part in re.split(rf"[\s{re.escape(os.pathsep)}]+", value):
            for place in _places(part, base, home) if part else ():
                yield place, f"a library {label} loads into the program"
    elif name in _FILE_VARIABLES:
        for place in _places(value, base, home) if value else ():
            yield place, f"the file {label} names (run when the program starts)"
    elif _OPTION_VARIABLE.match(name):
        tokens = _split(value)
        for index, token in enumerate(tokens):
            option, equals, given = token.partition("=")
            if index > 0 and tokens[index - 1] in _LOADS:
                loaded, via = token, tokens[index - 1]
            elif equals and option in _LOADS:
                loaded, via = given, option
            else:
                loaded, via = "", ""
            for place in _places(loaded, base, home) if loaded else ():
                yield place, f"a file {label} has the program load ({via})"
            for candidate, _ in _candidates(token):
                if candidate != loaded and _looks_like_path(candidate, base):
                    for place in _places(candidate, base, home):
                        yield place, f"a path {label} gives the program"
    else:
        for part in value.split(os.pathsep):
            if not (os.path.isabs(part) or part.startswith("~")):
                continue
            places = _places(part, base, home)
            if not any(os.path.isdir(place) for place in places):  # a folder: the data, as for an argument
                for place in places:
                    yield place, f"the path {label} names"


def _split(value: str) -> list[str]:
    """*value* split as a shell splits a command line (as Node splits NODE_OPTIONS); on spaces if it cannot be."""
    import shlex  # noqa: PLC0415 - only for an entry with such a variable: start-up, docs/performance.md

    try:
        return shlex.split(value)
    except ValueError:  # an unbalanced quote
        return value.split()


def _candidates(token: str) -> list[tuple[str, bool]]:
    """What in one argument or option may be a path, each with whether it is attached to a short option.

    A plain argument is itself; an option gives its value after ``=``
    (``--config=app.toml``), after ``:`` (``-javaagent:/opt/agent.jar``) and,
    for a short one, what follows its letter (``-I/opt/lib``, ``-r./hook.rb``).
    """
    if not token.startswith("-"):
        return [(token, False)]
    found = [(token.partition("=")[2], False), (token.partition(":")[2], False)]
    if not token.startswith("--") and len(token) > 2:
        found.append((token[2:], True))
    return [(candidate, attached) for candidate, attached in found if candidate]


def _looks_like_path(candidate: str, base: str) -> bool:
    if "://" in candidate or "\x00" in candidate:
        return False
    if os.path.isabs(candidate) or _has_separator(candidate) or candidate.startswith("~"):
        return True
    if os.path.splitext(candidate)[1].lower() in _CODE_SUFFIXES:
        return True
    return os.path.isfile(os.path.join(base, candidate))


def _has_separator(text: str) -> bool:
    return "/" in text or os.sep in text or (os.altsep is not None and os.altsep in text)


def _places(path: str, base: str, home: str) -> list[str]:
    """Where *path* is, from the working directory *base*: as written, and with ``~`` as *home* (both, if they differ).

    A program given ``~/x`` in an argument reads a folder named ``~``, one that
    expands it reads the home directory's: either may be where the file is made.
    """
    if "\x00" in path:
        return []
    expanded = path
    if path == "~" or path.startswith(("~/", f"~{os.sep}")):
        expanded = home + path[1:]
    elif path.startswith("~"):
        expanded = os.path.expanduser(path)  # ~user
    written = os.path.abspath(os.path.join(base, path))
    return list(dict.fromkeys([written, os.path.abspath(os.path.join(base, expanded))]))


def _folders(path: str) -> list[str]:
    """The folder of *path*, and that of the file it leads to (Python and Node resolve a script's links)."""
    return list(dict.fromkeys([os.path.dirname(path), os.path.dirname(os.path.realpath(path))]))


def _ancestors(folder: str) -> Iterator[str]:
    """*folder* and each folder above it, up to the root."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
