"""The configuration file: where it is, and what each server entry says, checked.

A file-level fault (a ``HERMESOS_MCP_CONFIG`` naming nothing, a file that
cannot be read, is not TOML, or whose top level is malformed) is an
:class:`~hermes_core.InvalidDefinitionError` at load: the operator asked for
servers and must be told. A fault in one ``[servers.<name>]`` table is a
problem of that server alone: it is skipped, named, and the others are mounted.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any, Final, final

from hermes_core import PERMISSION_PATTERN, TIMEOUT_MAX, InvalidDefinitionError, frozen, setting, shorten
from hermes_core import schema as s
from hermes_core.config import check_toml_depth, read_config_file, user_config_path

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CACHE_TTL",
    "DEFAULT_MAX_LISTING_BYTES",
    "DEFAULT_MAX_RESULT_BYTES",
    "DEFAULT_MAX_STDERR_BYTES",
    "DEFAULT_RETRY_AFTER",
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "INHERITED_ENV",
    "RETRY_AFTER_MAX",
    "USER_FILE",
    "Config",
    "ServerConfig",
    "config_path",
    "find_config_file",
    "load_config",
    "parse_config",
]

#: The environment variable naming the configuration file; when set (and not blank), no other place is looked at.
CONFIG_ENV: Final = "HERMESOS_MCP_CONFIG"
#: The file's place in the user's configuration directory, read when ``HERMESOS_MCP_CONFIG`` is not set.
USER_FILE: Final = "hermesos/mcp.toml"
#: Seconds a call of a mounted tool may take, unless the server's ``timeout`` says otherwise.
DEFAULT_TIMEOUT: Final = 60.0
#: Seconds a server may take to start and list its tools, unless its ``startup_timeout`` says otherwise.
DEFAULT_STARTUP_TIMEOUT: Final = 30.0
#: Seconds a cached listing is used for, unless the file's ``cache_ttl`` says otherwise: one day.
DEFAULT_CACHE_TTL: Final = 86400.0
#: Seconds a server that could not be started or listed at load is not started again, unless the file's or its
#: entry's ``retry_after`` says otherwise (hermes_mcp._remembered); 0 turns this off.
DEFAULT_RETRY_AFTER: Final = 60.0
#: The most seconds ``retry_after`` may be: one day (a server that should not be started for longer is disabled).
RETRY_AFTER_MAX: Final = 86400.0
#: Bytes one message from a server (a result, a listing page) may have, unless its ``max_result_bytes`` says otherwise.
DEFAULT_MAX_RESULT_BYTES: Final = 16 * 1024 * 1024
#: Bytes of a stdio server's stderr kept (the last ones), unless its ``max_stderr_bytes`` says otherwise.
DEFAULT_MAX_STDERR_BYTES: Final = 64 * 1024
#: Bytes of JSON a server's tools may take in all (names, descriptions, schemas; each tool at least 1 KiB), unless
#: its ``max_listing_bytes`` says otherwise: a tool that would take them past it is skipped (hermes_mcp._mount).
DEFAULT_MAX_LISTING_BYTES: Final = 2 * 1024 * 1024
#: The largest value either of those two settings takes: 1 GiB.
_MAX_BYTES_SETTING: Final = 1024 * 1024 * 1024
#: The largest configuration file read, in bytes.
MAX_BYTES: Final = 1024 * 1024
#: The variables of this process a stdio server gets, as the MCP SDK passes them on
#: (``mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS``, which a test compares this with).
INHERITED_ENV: Final = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)

_CONFIG_SETTING = s.string(min_length=1, description="the path of the TOML file listing MCP servers")
# Compiled (and kept by re) where a configuration is checked, not at import: start-up (docs/performance.md).
_SEGMENT = r"[A-Za-z_][A-Za-z0-9_-]*\Z"
_VARIABLE = r"[A-Za-z_][A-Za-z0-9_]*\Z"
_TOP_KEYS = ("cache_ttl", "retry_after", "servers")
_SERVER_KEYS = (
    "command",
    "args",
    "env",
    "pass_env",
    "cwd",
    "url",
    "token_env",
    "token_file",
    "permissions",
    "tools",
    "timeout",
    "startup_timeout",
    "enabled",
    "max_result_bytes",
    "max_stderr_bytes",
    "max_listing_bytes",
    "retry_after",
)
_STDIO_ONLY = ("args", "env", "pass_env", "cwd", "max_stderr_bytes")
_HTTP_ONLY = ("token_env", "token_file")


@final
@frozen  # not dataclass, which compiles six methods as the module is imported: 8 million instructions
class ServerConfig:
    """One checked ``[servers.<name>]`` entry.

    Attributes:
        name: the server's name, the first segment of its tools' names.
        command: the program to start (stdio), or None for a server at a URL.
        args: the program's arguments.
        env: variables set for the program, over the few the SDK passes on
            (``HOME``, ``PATH``, ``USER``...).
        pass_env: names of this process's variables passed on to it as well.
        cwd: the program's working directory (None: this process's).
        url: the Streamable HTTP endpoint, or None for a stdio server.
        token_env: the variable holding the bearer token sent to *url*.
        token_file: the file holding that token.
        permissions: what a caller of each of its tools must be granted.
        tools: the remote tools to mount (None: all of them).
        timeout: the most seconds one call may take.
        startup_timeout: the most seconds starting the server and listing its tools may take.
        max_result_bytes: the most bytes one message from the server may have
            (a call's result, a page of its listing); a larger one fails the call.
        max_stderr_bytes: the most bytes of a stdio server's stderr kept, the last ones.
        max_listing_bytes: the most bytes of JSON its tools may take in all (see
            :data:`DEFAULT_MAX_LISTING_BYTES`); a tool that would pass it is skipped.
        retry_after: the seconds it is not started again after it could not be
            started or listed at load (its entry's, else the file's); 0: always started.
        entry: the entry as written (parsed TOML), from which the cache key is made.

    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    cwd: str | None = None
    url: str | None = None
    token_env: str | None = None
    token_file: str | None = None
    permissions: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    max_stderr_bytes: int = DEFAULT_MAX_STDERR_BYTES
    max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES
    retry_after: float = DEFAULT_RETRY_AFTER
    entry: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def environment(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The variables a stdio server is started with: a few of *environ*'s, then ``pass_env``'s, then ``env``.

        The few are those the MCP SDK passes on (``HOME``, ``PATH``,
        ``USER``... :data:`INHERITED_ENV`), leaving out a value that is a shell
        function, as the SDK does. *environ* is this process's by default.
        """
        environ = os.environ if environ is None else environ
        found = {name: environ[name] for name in INHERITED_ENV if not environ.get(name, "()").startswith("()")}
        found.update({name: environ[name] for name in self.pass_env if name in environ})
        found.update(self.env)
        return found

    def decisive_paths(self, environ: Mapping[str, str] | None = None, source: str | None = None) -> dict[str, str]:
        """The paths that decide the code this server runs, whether they exist or not, each with what it is.

        Its program, the paths its arguments name, the folder of its script,
        its working directory, and the paths its variables give, found as the
        programs find them (:mod:`hermes_mcp._decisive` says how); *environ*
        is the environment it inherits from (this process's by default),
        *source* the configuration file named in what each path is. A tool
        that could write one of them could change the code the server runs at
        its next start. A server at a URL has none.
        """
        from hermes_mcp._decisive import decisive_paths  # noqa: PLC0415 - only where a stdio server is configured

        return decisive_paths(self, environ, source)

    def cache_key(self) -> str:
        """The hash of the entry as written (its name included): any change to it is another key."""
        import json  # noqa: PLC0415 - a server configured only: not at import (start-up)

        text = json.dumps({"name": self.name, "entry": self.entry}, sort_keys=True, ensure_ascii=True, default=str)
        import hashlib  # noqa: PLC0415 - not at import: start-up, docs/performance.md

        return hashlib.sha256(text.encode()).hexdigest()


@final
@frozen  # as ServerConfig
class Config:
    """A checked configuration file.

    Attributes:
        source: the file it was read from (None: no file, no servers).
        servers: the servers to mount, in the file's order (disabled ones left out).
        problems: one message for each entry that was skipped, naming it and why.
        cache_ttl: seconds a cached listing is used for; 0: never.
        retry_after: the file's ``retry_after``: seconds a server that failed at
            load is not started again, unless its entry says otherwise; 0: never remembered.

    """

    source: str | None = None
    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[str, ...] = ()
    cache_ttl: float = DEFAULT_CACHE_TTL
    retry_after: float = DEFAULT_RETRY_AFTER


# -- finding the file ----------------------------------------------------------------------


def config_path(environ: Mapping[str, str] | None = None) -> str | None:
    """The configuration file to read, or None if there is none: :func:`find_config_file` as a ``str``.

    What the hooks ask at every start: without ``pathlib``, which (with
    ``urllib.parse`` and ``ipaddress`` behind it) cost every start 18 million
    instructions (hermesos-core's docs/performance.md, start-up).

    1. The path in ``HERMESOS_MCP_CONFIG``, if set and not blank (it must
       exist); nothing else is looked at.
    2. Else ``hermesos/mcp.toml`` in the user's configuration directory
       (``$XDG_CONFIG_HOME`` if absolute, else ``~/.config``; ``%APPDATA%``
       on Windows), if anything is there (:func:`load_config` refuses what is
       not a regular file).

    The working directory is never looked at: a tool that may write there
    must not choose which programs hermes starts.

    Raises:
        InvalidDefinitionError: ``HERMESOS_MCP_CONFIG`` names a file that does not exist.
    """
    environ = os.environ if environ is None else environ
    named: str | None = setting(CONFIG_ENV, _CONFIG_SETTING, default=None, environ=environ)
    if named is not None:
        from pathlib import Path  # noqa: PLC0415 - a file named only: read as Path reads a name (start-up)

        path = str(Path(named).expanduser())
        if not os.path.exists(path):
            raise InvalidDefinitionError(
                f"setting {CONFIG_ENV}",
                None,
                f'names "{path}", which does not exist; create it, fix the path, or unset {CONFIG_ENV}',
            )
        return path
    user_file = user_config_path("mcp.toml", environ)
    # Anything there is read, and refused if it is not a regular file: a FIFO or a directory made where the
    # file belongs is not taken for "no servers".
    return user_file if user_file is not None and os.path.lexists(user_file) else None


def find_config_file(environ: Mapping[str, str] | None = None) -> Path | None:
    """The configuration file to read, or None if there is none (see :func:`config_path`, the same as a ``str``).

    Raises:
        InvalidDefinitionError: as :func:`config_path`.
    """
    path = config_path(environ)
    if path is None:
        return None
    from pathlib import Path  # noqa: PLC0415 - see config_path

    return Path(path)


# -- reading and checking it ---------------------------------------------------------------


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read and check the configuration file at *path*.

    Raises:
        InvalidDefinitionError: the file cannot be read, is not a regular file
            (a FIFO is refused at once, never waited on), is larger than 1 MiB,
            is not UTF-8 TOML, or its top level is malformed; the message names the file.
    """
    source = str(path)
    declaration = f'MCP configuration file "{source}"'
    data = read_config_file(
        path,
        MAX_BYTES,
        declaration,
        what="an MCP configuration file",
        expected="the file listing MCP servers is a regular file of TOML text",
        too_big="it lists servers, so a few kilobytes are plenty",
    )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidDefinitionError(declaration, None, "is not UTF-8 text; save it as UTF-8") from None
    return parse_config(text, source)


def parse_config(text: str, source: str = "<text>") -> Config:
    """Check the TOML *text* of a configuration file; *source* names it in messages.

    Raises:
        InvalidDefinitionError: the text is not TOML, or its top level is malformed.
    """
    import tomllib  # noqa: PLC0415 - not at import: start-up, docs/performance.md

    declaration = f'MCP configuration file "{source}"'
    advice = "a server's entry needs two levels, as in [servers.time] with command and args"
    check_toml_depth(text, declaration, advice=advice)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InvalidDefinitionError(declaration, None, f"is not valid TOML: {error}; fix the syntax") from None
    except RecursionError:
        check_toml_depth(text, declaration, advice=advice, always=True)
        raise InvalidDefinitionError(declaration, None, "nests too deeply to be read") from None
    for key in document:
        if key not in _TOP_KEYS:
            raise InvalidDefinitionError(
                declaration,
                None,
                f"{_unknown(key, _TOP_KEYS)}; the file has cache_ttl = SECONDS, retry_after = SECONDS and "
                "[servers.<name>] tables",
            )
    cache_ttl = DEFAULT_CACHE_TTL
    if "cache_ttl" in document:
        ttl = _seconds(document["cache_ttl"], allow_zero=True)
        if ttl is None:
            shown = _shown(document["cache_ttl"])
            raise InvalidDefinitionError(
                declaration, None, f"cache_ttl must be a number of seconds, 0 or more, got {shown}"
            )
        cache_ttl = ttl
    retry_after = DEFAULT_RETRY_AFTER
    if "retry_after" in document:
        try:
            retry_after = _retry_after(document["retry_after"])
        except _EntryError as error:
            raise InvalidDefinitionError(declaration, None, str(error)) from None
    tables = document.get("servers", {})
    if not isinstance(tables, dict):
        raise InvalidDefinitionError(
            declaration, None, f"servers must be a table of [servers.<name>] tables, got {_kind(tables)}"
        )
    servers: list[ServerConfig] = []
    problems: list[str] = []
    for name, entry in tables.items():
        try:
            server = _server(name, entry, retry_after)
        except _EntryError as error:
            problems.append(f'server "{shorten(name)}" in "{source}" is skipped: {error}')
            continue
        if server is not None:
            servers.append(server)
    return Config(source, tuple(servers), tuple(problems), cache_ttl, retry_after)


class _EntryError(Exception):
    """What is wrong with one server's entry: a message to prefix with the server's name."""


def _server(name: str, entry: object, retry_after: float = DEFAULT_RETRY_AFTER) -> ServerConfig | None:
    """The checked entry of server *name*, or None if it is disabled (*retry_after*: the file's)."""
    if not re.match(_SEGMENT, name) or len(name) > 32:
        raise _EntryError(
            "its name must be one segment of a tool name (letters, digits, _ and -, not starting with a digit "
            "or -, at most 32 characters) such as time or github, since its tools are named <server>.<tool>"
        )
    if not isinstance(entry, dict):
        raise _EntryError(f"servers.{name} must be a table such as [servers.{name}], got {_kind(entry)}")
    for key in entry:
        if key not in _SERVER_KEYS:
            raise _EntryError(_unknown(key, _SERVER_KEYS))
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _EntryError(f"enabled must be true or false, got {_kind(enabled)}")
    if not enabled:
        return None
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        raise _EntryError(
            'it needs exactly one of command = "..." (a program started over stdio) and url = "https://..." '
            "(a Streamable HTTP endpoint)"
        )
    for key in _STDIO_ONLY if url is not None else _HTTP_ONLY:
        if key in entry:
            other = "url" if url is not None else "command"
            raise _EntryError(f"{key} does not apply to a server with {other}")
    if command is not None:
        _text(command, "command")
    if url is not None:
        _text(url, "url")
        if not re.match(r"https?://[^/\s]+", url):
            raise _EntryError(
                f"url must be an http:// or https:// URL such as http://127.0.0.1:8000/mcp, got {_shown(url)}"
            )
        if "token_env" in entry and "token_file" in entry:
            raise _EntryError("it may have token_env or token_file, not both")
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _EntryError('env must be a table of strings such as env = { TZ = "UTC" }')
    for key in env:
        if not re.match(_VARIABLE, key):
            raise _EntryError(f"env has {_shown(key)}, which is not an environment variable name")
    pass_env = _strings(entry.get("pass_env", []), "pass_env", '["GITHUB_TOKEN"]')
    for key in pass_env:
        if not re.match(_VARIABLE, key):
            raise _EntryError(f"pass_env has {_shown(key)}, which is not an environment variable name")
    permissions = _permissions(name, entry)
    tools = entry.get("tools")
    timeout = _positive(entry.get("timeout", DEFAULT_TIMEOUT), "timeout")
    startup_timeout = _positive(entry.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT), "startup_timeout")
    return ServerConfig(
        name=name,
        command=command,
        args=_strings(entry.get("args", []), "args", '["--local-timezone", "UTC"]'),
        env=dict(env),
        pass_env=pass_env,
        cwd=_text(entry["cwd"], "cwd") if "cwd" in entry else None,
        url=url,
        token_env=_text(entry["token_env"], "token_env") if "token_env" in entry else None,
        token_file=_text(entry["token_file"], "token_file") if "token_file" in entry else None,
        permissions=permissions,
        tools=None if tools is None else _strings(tools, "tools", '["get_current_time"]'),
        timeout=timeout,
        startup_timeout=startup_timeout,
        max_result_bytes=_byte_count(entry.get("max_result_bytes", DEFAULT_MAX_RESULT_BYTES), "max_result_bytes"),
        max_stderr_bytes=_byte_count(entry.get("max_stderr_bytes", DEFAULT_MAX_STDERR_BYTES), "max_stderr_bytes"),
        max_listing_bytes=_byte_count(entry.get("max_listing_bytes", DEFAULT_MAX_LISTING_BYTES), "max_listing_bytes"),
        retry_after=_retry_after(entry["retry_after"]) if "retry_after" in entry else retry_after,
        entry=entry,
    )


def _permissions(name: str, entry: Mapping[str, Any]) -> tuple[str, ...]:
    if "permissions" not in entry:
        default = f"mcp:{name.lower()}"
        if not PERMISSION_PATTERN.match(default):
            raise _EntryError(
                f'its default permission would be "{default}", which is not a permission (namespace:action, each '
                "[a-z][a-z0-9_-]*); set permissions = [...] for it"
            )
        return (default,)
    found = _strings(entry["permissions"], "permissions", '["mcp:time"]')
    for permission in found:
        if not PERMISSION_PATTERN.match(permission):
            raise _EntryError(
                f"permissions has {_shown(permission)}, which is not a permission: namespace:action, each "
                "[a-z][a-z0-9_-]* (such as mcp:time)"
            )
    return found


def _text(value: object, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _EntryError(f"{key} must be a non-blank string, got {_kind(value)}")
    return value


def _strings(value: object, key: str, example: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _EntryError(f"{key} must be a list of strings such as {key} = {example}, got {_kind(value)}")
    return tuple(value)


def _seconds(value: object, *, allow_zero: bool) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    if value < 0 or (value == 0 and not allow_zero):
        return None
    return float(value)


def _positive(value: object, key: str) -> float:
    seconds = _seconds(value, allow_zero=False)
    if seconds is None:
        raise _EntryError(f"{key} must be a positive number of seconds such as 30, got {_shown(value)}")
    if seconds > TIMEOUT_MAX:
        raise _EntryError(f"{key} must be at most {TIMEOUT_MAX:,.0f} seconds, got {_shown(value)}")
    return seconds


def _retry_after(value: object) -> float:
    seconds = _seconds(value, allow_zero=True)
    if seconds is None or seconds > RETRY_AFTER_MAX:
        raise _EntryError(
            f"retry_after must be a number of seconds from 0 to {RETRY_AFTER_MAX:.0f} such as 60 (0: a server that "
            f"failed is started again by the next command), got {_shown(value)}"
        )
    return seconds


def _byte_count(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1024 <= value <= _MAX_BYTES_SETTING:
        raise _EntryError(
            f"{key} must be a whole number of bytes from 1024 to {_MAX_BYTES_SETTING} such as 16777216 (16 MiB), "
            f"got {_shown(value)}"
        )
    return value


def _unknown(key: str, known: Sequence[str]) -> str:
    import difflib  # noqa: PLC0415 - a mistyped key only: not on every start of hermesos

    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]}?" if close else f"; the keys are {', '.join(known)}"
    return f"{shorten(key)} is not a known key{hint}"


def _kind(value: object) -> str:
    kinds = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return kinds.get(type(value), type(value).__name__)


def _shown(value: object) -> str:
    import json  # noqa: PLC0415 - a server configured only: not at import (start-up)

    return shorten(json.dumps(value, default=str)) if isinstance(value, str | int | float | bool) else _kind(value)
