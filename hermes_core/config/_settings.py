"""Plugin settings: one environment variable, parsed with a schema, read when a hook is called.

A plugin reads its settings inside its hooks (when plugins are loaded), never
when its module is imported, so importing a plugin costs nothing and a bad
value is reported by the loader naming the plugin and the variable::

    from hermes_core import hookimpl, setting
    from hermes_core import schema as s


    @hookimpl
    def hermes_tools():
        key = setting("HERMESOS_WEATHER_API_KEY", s.string(min_length=1, description="your weather API key"))
        return make_tools(api_key=key)

A setting's value is never quoted in a message: it may be a secret. An integer
setting larger than any size or count this machine can use is refused at load,
whatever its schema says, so no setting can overflow later.

Configuration files live in one place, :func:`user_config_dir`, and each is
read through :func:`read_config_file`, which refuses what is not a regular
file (a FIFO would hang the load, ``/dev/zero`` would never end) and what is
larger than its limit, before a byte of it is read.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError, SchemaError
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import Issue, shorten
from hermes_core.schema._validators import closed_validator

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "MAX_SETTING_INTEGER",
    "SettingRead",
    "config_directory",
    "home_directory",
    "path_text",
    "read_config_file",
    "read_token_file",
    "setting",
    "setting_declared",
    "settings_read",
    "user_config_dir",
    "user_config_file",
    "user_config_path",
]

# What a setting's variable name looks like: ``HERMESOS_<PLUGIN>_<NAME>``, in upper case.
# Read with str's methods (_is_variable): the expression, compiled at import, was half a million instructions of
# every start (docs/performance.md, start-up). tests/test_settings.py holds the two to each other.
_VARIABLE: Final = r"HERMESOS_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\Z"
_UPPER: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_UPPER_DIGITS: Final = _UPPER | frozenset("0123456789")


def _is_variable(name: str) -> bool:
    """Whether *name* is ``HERMESOS_<PLUGIN>_<NAME>`` as :data:`_VARIABLE` says."""
    if not name.startswith("HERMESOS_"):
        return False
    parts = name[len("HERMESOS_") :].split("_")
    return parts[0][:1] in _UPPER and all(part and _UPPER_DIGITS.issuperset(part) for part in parts)


# What a refusal of a setting's value is declared as: ``setting HERMESOS_FS_ROOT``, after the plugin a loader
# puts first (``plugin hermesos-fs 0.2.0 (entry point "fs" = hermes_fs): setting HERMESOS_FS_ROOT``).
_DECLARED: Final = r"(?:\A|: )setting (HERMESOS_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)\Z"  # compiled where first used


def setting_declared(declaration: str) -> str | None:
    """The variable a refusal's *declaration* names as what it refused: ``setting HERMESOS_FS_ROOT``; else None.

    A refusal of a setting's value is declared so by :func:`setting`, and by a
    plugin refusing what a setting names (a root that is not a directory);
    the loader's prefix naming the plugin may come first. What an operator
    does about it is change the setting, not the plugin.

    Examples:
        >>> setting_declared("setting HERMESOS_FS_ROOT")
        'HERMESOS_FS_ROOT'
        >>> setting_declared('plugin hermesos-fs 0.2.0 (entry point "fs" = hermes_fs): hook hermes_tools') is None
        True

    """
    found = re.search(_DECLARED, declaration)
    return None if found is None else found.group(1)


@final
@frozen  # not a NamedTuple, whose string annotations are compiled one by one at import (start-up)
class SettingRead:
    """One setting :func:`setting` read while :func:`settings_read` recorded: its variable, text and description."""

    variable: str
    text: str  # as set, without the white space around it; never in a message (it may be a secret)
    description: str | None  # the schema's: what to set it to


_reads: ContextVar[list[SettingRead] | None] = ContextVar("hermes_core_settings_read", default=None)


@contextlib.contextmanager
def settings_read() -> Iterator[list[SettingRead]]:
    """Record the settings that are set and read with :func:`setting` while the block runs, in the order read.

    The loader records a hook's reads to say which setting a value it
    returned came from: a write root refused is the setting's to change.
    """
    reads: list[SettingRead] = []
    token = _reads.set(reads)
    try:
        yield reads
    finally:
        _reads.reset(token)


class _NoDefault:
    """The type of the marker saying a setting has no default (None is a default like any other)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT: Final = _NoDefault()
#: The largest integer a setting may be, whatever its schema allows: the largest size a C ``ssize_t`` holds
#: on a 64-bit machine. Larger ones would overflow where they are used (``os.read``, ``os.pread``).
MAX_SETTING_INTEGER: Final = 2**63 - 1
_TEXT: Final = s.string(min_length=1)


def setting(
    variable: str,
    schema: s.Schema | None = None,
    *,
    default: Any = _NO_DEFAULT,
    environ: Mapping[str, str] | None = None,
) -> Any:
    """The value of the environment variable *variable*, parsed with *schema*: a plugin's setting.

    Surrounding whitespace is ignored. If *schema* takes a string and the text
    matches it, the text is the value. Otherwise the text is read as JSON (so
    ``1048576``, ``true`` or ``["a", "b"]``) and the result is parsed with
    *schema*. Call it from a hook, not at import.

    Args:
        variable: the name, ``HERMESOS_<PLUGIN>_<NAME>`` such as ``HERMESOS_FS_ROOT``.
        schema: what the value must be (default: a non-empty string). Its
            description, if any, is what messages say to set the variable to.
        default: returned, as it is, when the variable is unset or blank; if it
            is callable, it is called and its result returned (``default=os.getcwd``).
            Without a default, an unset variable is an error.
        environ: the variables to read instead of ``os.environ`` (for tests).

    Returns:
        The parsed value, or the default.

    Raises:
        InvalidDefinitionError: the variable is unset and has no default, or its
            value does not match *schema*; the declaration is ``setting <variable>``
            and the detail says what to set it to, never quoting the value.
        ValueError: *variable* does not look like ``HERMESOS_<PLUGIN>_<NAME>``.
        TypeError: *variable* is not a string, or *schema* not a schema.

    Examples:
        >>> setting("HERMESOS_FS_MAX_READ_BYTES", s.integer(minimum=1), environ={"HERMESOS_FS_MAX_READ_BYTES": "65536"})
        65536
        >>> setting("HERMESOS_FS_ROOT", default="/srv/workspace", environ={})
        '/srv/workspace'

    """
    if not isinstance(variable, str):
        raise TypeError(f"setting() variable must be a str, got {type(variable).__name__}")
    if not _is_variable(variable):
        raise ValueError(
            "setting() variable must look like HERMESOS_<PLUGIN>_<NAME> (upper-case letters, digits and single "
            f"underscores, such as HERMESOS_FS_ROOT), got {shorten(repr(variable))}"
        )
    if schema is None:
        schema = _TEXT
    elif not isinstance(schema, s.Schema):
        raise TypeError(f"setting() schema must be a schema such as s.integer(), got {type(schema).__name__}")
    text = (os.environ if environ is None else environ).get(variable, "").strip()
    if not text:
        if isinstance(default, _NoDefault):
            raise InvalidDefinitionError(f"setting {variable}", None, f"is not set; set it to {_wanted(schema)}")
        return default() if callable(default) else default
    reads = _reads.get()
    if reads is not None:
        reads.append(SettingRead(variable, text, schema.description))
    value = _parse(variable, schema, text)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_SETTING_INTEGER:
        raise InvalidDefinitionError(
            f"setting {variable}",
            None,
            f"is a number of {len(str(abs(value)))} digits, larger than any this machine can use "
            f"(at most {MAX_SETTING_INTEGER}); set it to {_wanted(schema)}",
        )
    return value


def _parsed(schema: s.Schema, value: Any) -> Any:
    """``schema.parse(value)``, by the walk, which finds what the compiled check finds.

    A setting is read once or twice a process: compiling its check cost every
    start a compile() (docs/performance.md, start-up).
    """
    ok, parsed, issues = closed_validator(schema).walk(value)
    if not ok:
        raise SchemaError(issues, subject="value")
    return parsed


def _parse(variable: str, schema: s.Schema, text: str) -> Any:
    """*text* parsed with *schema*, as itself or else as JSON; an error that never quotes it."""
    try:
        return _parsed(schema, text)
    except SchemaError as error:
        text_issues = error.issues
    # A schema that takes text is told about the text (the pattern it missed, say), never about the JSON
    # it might also be read as; one that takes no text is told about the JSON.
    takes_text = _takes_text(schema.json_schema())
    try:
        import json  # noqa: PLC0415 - a setting that is not text only: not at import (start-up)

        decoded = json.loads(text)
    except (ValueError, RecursionError):
        if takes_text:
            detail = _problems(text_issues)
        else:
            detail = f"must be {schema.expected()} written in JSON, got text that is not JSON"
    else:
        if takes_text and isinstance(decoded, str):
            detail = _problems(text_issues)
        else:
            try:
                return _parsed(schema, decoded)
            except SchemaError as error:
                detail = _problems(text_issues if takes_text else error.issues)
    if schema.description:
        detail += f"; set it to {_wanted(schema)}"
    # Raised from nothing: the SchemaError holds the value, which may be a secret.
    raise InvalidDefinitionError(f"setting {variable}", None, detail) from None


def _takes_text(document: Mapping[str, Any]) -> bool:
    """Whether a JSON Schema accepts some strings: its type, a string constant, or one option that does."""
    if "anyOf" in document:
        return any(_takes_text(option) for option in document["anyOf"])
    if "const" in document:
        return isinstance(document["const"], str)
    if "enum" in document:
        return any(isinstance(value, str) for value in document["enum"])
    if "$ref" in document:
        return False
    kind = document.get("type")
    return kind is None or kind == "string" or (isinstance(kind, list) and "string" in kind)


def _problems(issues: tuple[Issue, ...]) -> str:
    """The issues as one detail: ``must be at least 1``, or ``is invalid: "0" must be a string, got integer``."""
    if all(not issue.path for issue in issues):
        return "; ".join(issue.detail for issue in issues)
    return "is invalid: " + "; ".join(issue.message("the value") for issue in issues)


def _wanted(schema: s.Schema) -> str:
    """What to set a variable to: what the schema expects, then its description if it has one."""
    description = schema.description
    return f"{schema.expected()}: {description}" if description else schema.expected()


# -- configuration files -------------------------------------------------------------------


# The directories below are worked out as text: the public functions give them as Path, and importing pathlib
# (with urllib.parse and ipaddress behind it) cost every start 18 million instructions, where the core and the
# bundled plugins' hooks need only the text (docs/performance.md, start-up).


def path_text(*parts: str) -> str:
    """``str(pathlib.Path(*parts))``: the parts joined, a later absolute one starting again, ``.`` and ``//`` gone.

    Without importing pathlib on POSIX (as pathlib's PurePosixPath parses it:
    two leading slashes are kept, three or more are one); with it elsewhere.
    """
    if os.name == "nt":
        from pathlib import Path  # noqa: PLC0415 - Windows' paths: pathlib's own parsing

        return str(Path(*parts))
    root = ""
    names: list[str] = []
    for part in parts:
        if part.startswith("/"):
            root = "//" if part.startswith("//") and not part.startswith("///") else "/"
            names = []
        names.extend(name for name in part.split("/") if name and name != ".")
    return root + "/".join(names) or "."


def home_directory() -> str:
    """``str(pathlib.Path.home())``, without importing pathlib.

    Raises:
        RuntimeError: no home directory can be determined (as ``Path.home()`` raises).
    """
    home = os.path.expanduser("~")
    if home.startswith("~"):
        raise RuntimeError("Could not determine home directory.")
    return path_text(home)


def config_directory(environ: Mapping[str, str] | None = None) -> str | None:
    """:func:`user_config_dir` as text (``str(user_config_dir())``), or None."""
    environ = os.environ if environ is None else environ
    if os.name == "nt":
        base = environ.get("APPDATA")
        return path_text(base, "hermesos") if base else None
    xdg = environ.get("XDG_CONFIG_HOME", "")
    if xdg.startswith("/"):  # absolute
        return path_text(xdg, "hermesos")
    try:
        return path_text(home_directory(), ".config", "hermesos")
    except RuntimeError:  # no home directory can be determined
        return None


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    r"""The hermesos user configuration directory: where the policy, ``mcp.toml`` and plugins' settings files live.

    ``$XDG_CONFIG_HOME/hermesos`` if that variable is an absolute path (the XDG
    specification: a relative value is invalid and ignored), else
    ``~/.config/hermesos``; ``%APPDATA%\hermesos`` on Windows. It is never the
    working directory. The plugin loader refuses to start when a directory a
    tool may write contains it or lies inside it.

    Args:
        environ: the variables to read instead of ``os.environ`` (for tests).

    Returns:
        The directory (it need not exist), or None if no home directory can be determined.
    """
    text = config_directory(environ)
    if text is None:
        return None
    from pathlib import Path  # noqa: PLC0415 - see path_text

    return Path(text)


def user_config_file(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The file *name* (such as ``policy.toml``) in :func:`user_config_dir`, or None if there is no such directory.

    Examples:
        >>> str(user_config_file("mcp.toml", {"XDG_CONFIG_HOME": "/etc/xdg"}))
        '/etc/xdg/hermesos/mcp.toml'

    """
    directory = user_config_dir(environ)
    return None if directory is None else directory / name


def user_config_path(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """:func:`user_config_file` as a ``str`` (``str(user_config_file(name))``), or None.

    For what runs at every start, a plugin's hooks among them: it imports
    no ``pathlib``, which (with ``urllib.parse`` and ``ipaddress`` behind it)
    cost every ``hermesos`` command about 18 million instructions, 4 ms
    (docs/performance.md, start-up).

    Examples:
        >>> user_config_path("mcp.toml", {"XDG_CONFIG_HOME": "/etc/xdg"})
        '/etc/xdg/hermesos/mcp.toml'

    """
    directory = config_directory(environ)
    return None if directory is None else path_text(directory, name)


# A special file is refused by its type before the open (following links: the operator may name one),
# since opening a FIFO waits for a writer and a device such as /dev/zero never ends. O_NONBLOCK is for one
# swapped in after that check: the open does not wait, and fstat then refuses it.
_READ_FLAGS: Final = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


@final
@frozen  # as SettingRead
class _ConfigRead:
    """One configuration file being read: where it is, its limit, and what messages say of it."""

    source: str
    real: str
    max_bytes: int
    declaration: str
    what: str
    expected: str
    too_big: str

    def require_file(self, info: os.stat_result) -> None:
        """Refuse what is not a regular file, or is larger than the limit, before a byte of it is read."""
        if stat.S_ISREG(info.st_mode):
            if info.st_size > self.max_bytes:
                self.refuse_size()
            return
        kind = next((name for is_kind, name in _KINDS if is_kind(info.st_mode)), "something else")
        if self.real != os.path.abspath(self.source):
            kind = f'a link to "{self.real}", {kind}'
        raise InvalidDefinitionError(
            self.declaration, None, f"could not be read: it is {kind}, not a regular file; {self.expected}"
        )

    def refuse_size(self) -> NoReturn:
        """Refuse the file for its size."""
        raise InvalidDefinitionError(
            self.declaration,
            None,
            f"is larger than {self.max_bytes} bytes, the limit for {self.what}; {self.too_big}",
        )


def read_config_file(
    path: str | os.PathLike[str],
    max_bytes: int,
    declaration: str,
    *,
    what: str = "a configuration file",
    expected: str = "a configuration file is a regular file of text",
    too_big: str = "shorten it",
) -> bytes:
    """The bytes of the configuration file at *path*, checked before a byte is read.

    What *path* leads to (links followed) must be a regular file: a FIFO, a
    socket, a device or a directory is refused by its type without being
    opened, and one swapped in after that check is opened without waiting and
    refused by ``fstat``. The file must hold at most *max_bytes* bytes; a file
    whose size says less (a ``/proc`` file) is read up to the limit and one
    byte more, then refused.

    Args:
        path: the file, as the operator named it.
        max_bytes: the most bytes to read.
        declaration: what messages call the file, such as ``policy file "/etc/p.toml"``.
        what: what kind of file it is, for the limit: ``a policy file``.
        expected: what the file should be, said when it is not a regular file.
        too_big: what to do about a file over the limit, said when it is.

    Returns:
        The file's bytes.

    Raises:
        InvalidDefinitionError: the file cannot be read, is not a regular file,
            or is larger than *max_bytes*; the declaration is *declaration*.
    """
    source = os.fspath(path)
    read = _ConfigRead(source, os.path.realpath(source), max_bytes, declaration, what, expected, too_big)
    try:
        read.require_file(os.stat(read.real))
        fd = os.open(read.real, _READ_FLAGS)
        try:
            read.require_file(os.fstat(fd))
            data = _read_at_most(fd, max_bytes + 1)  # one byte more tells a file that grew since the stat
        finally:
            os.close(fd)
    except OSError as error:
        reason = error.strerror or errno.errorcode.get(error.errno or 0, type(error).__name__)
        raise InvalidDefinitionError(declaration, None, f"could not be read ({reason}); check the path") from None
    if len(data) > max_bytes:
        read.refuse_size()
    return data


# A bearer token as a header carries it (RFC 6750's b64token, and any other visible ASCII), at most 4 KiB.
_TOKEN: Final = r"[\x21-\x7e]+"  # noqa: S105 - what a token may hold, not one; compiled where first used
_TOKEN_MAX: Final = 4096


def read_token_file(path: str | os.PathLike[str], declaration: str) -> str:
    """The bearer token held by the file at *path*, read as :func:`read_config_file` reads a file.

    A regular file of at most 4 KiB (a FIFO or a device is refused without
    being read), holding one word of visible ASCII, as a header carries it;
    white space around it is left out.

    Raises:
        InvalidDefinitionError: the file cannot be read, is not a regular file
            or is too large, is empty, or holds characters a token cannot
            have; the message names it as *declaration* says.
    """
    data = read_config_file(
        path,
        _TOKEN_MAX,
        declaration,
        what="a token file",
        expected="a token file is a regular file holding the token",
        too_big="a bearer token is a line of text",
    )
    token = data.decode("ascii", errors="replace").strip()
    if not token:
        raise InvalidDefinitionError(declaration, None, "is empty")
    if not re.fullmatch(_TOKEN, token):
        raise InvalidDefinitionError(
            declaration,
            None,
            "holds characters a bearer token cannot have: a token is one word of visible ASCII (letters, digits "
            "and -._~+/=), which is sent in a header",
        )
    return token


def _read_at_most(fd: int, limit: int) -> bytes:
    """The bytes of *fd* up to its end or *limit*, whichever comes first."""
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
