r"""The tool errors: one base class, six codes, and the one place messages are formatted.

Every error the framework raises on purpose is a :class:`ToolError` carrying a
stable machine-readable :attr:`~ToolError.code`. Branch on the code, never on
the wording: messages are written for two readers (an operator reading a log
and a model reading a failed tool call) and stay free to change.

Paths are written with one quoting rule, so that a path is never ambiguous:

* an array index is a bare decimal number: ``files.0``;
* an object key matching ``[A-Za-z_][A-Za-z0-9_-]*`` is written bare: ``path``;
* any other key (empty, all digits, containing ``.``, spaces, quotes, brackets or
  non-ASCII) is written as ``['key']``, with ``\\`` and ``'`` escaped by a
  backslash: ``headers['Content.Type']``, ``['']``, ``['0']``.

Segments are joined by ``.``, except that a ``[...]`` segment follows its
parent directly. A whole path is shown in double quotes: ``"files.0.path"``.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal, NamedTuple, final

__all__ = [
    "ErrorCode",
    "InputInvalidError",
    "InvalidDefinitionError",
    "Issue",
    "IssueKind",
    "OutputInvalidError",
    "PermissionDeniedError",
    "SchemaError",
    "ToolError",
    "ToolNotFoundError",
    "format_path",
    "shorten",
]

#: How many issues a message lists before it says how many more there are.
MAX_LISTED_ISSUES = 20


class ErrorCode(enum.StrEnum):
    """The stable codes. Each member is also the plain string, so ``code == "INPUT_INVALID"``."""

    SCHEMA_INVALID = "SCHEMA_INVALID"
    INPUT_INVALID = "INPUT_INVALID"
    OUTPUT_INVALID = "OUTPUT_INVALID"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    INVALID_DEFINITION = "INVALID_DEFINITION"


#: What went wrong with one value, as a closed set:
#:
#: ``type`` — the value has the wrong JSON type (or is not a JSON value at all);
#: ``missing`` — a required object field is absent;
#: ``unexpected`` — an object has a field its schema does not allow;
#: ``too_small`` / ``too_big`` — a length, count or number is out of bounds;
#: ``pattern`` — a string does not match the schema's regular expression;
#: ``enum`` — a value is not one of the allowed values (``enum`` and ``literal``);
#: ``union`` — a value matches none of a union's options;
#: ``encoding`` — a string is not valid Unicode (it holds a lone surrogate);
#: ``too_deep`` — a value is nested too deeply, or contains a reference cycle;
#: ``invalid`` — a tool rejected a well-typed value (a file that does not exist, say).
IssueKind = Literal[
    "type",
    "missing",
    "unexpected",
    "too_small",
    "too_big",
    "pattern",
    "enum",
    "union",
    "encoding",
    "too_deep",
    "invalid",
]

def shorten(text: str, limit: int = 60) -> str:
    """*text* if it has at most *limit* characters, else its start and ``...``: for quoting in messages.

    Examples:
        >>> shorten("fs.write")
        'fs.write'
        >>> shorten("x" * 100, 10)
        'xxxxxxx...'
    """
    return text if len(text) <= limit else text[: max(limit - 3, 0)] + "..."


_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
_MAX_KEY_SHOWN = 80


def _escape_key(key: str) -> str:
    """Escape a key for ``['...']``: backslash and quote, control characters and lone surrogates."""
    if len(key) > _MAX_KEY_SHOWN:
        key = key[: _MAX_KEY_SHOWN - 3] + "..."
    key = key.replace("\\", "\\\\").replace("'", "\\'")
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)


# Keys repeat from call to call (field names), so their written form is remembered.
_written_keys: dict[str, str] = {}
_WRITTEN_KEYS_MAX = 4096


def _write_key(key: str) -> str:
    written = _written_keys.get(key)
    if written is None:
        written = key if _BARE_KEY.match(key) else f"['{_escape_key(key)}']"
        if len(key) <= _MAX_KEY_SHOWN and len(_written_keys) < _WRITTEN_KEYS_MAX:
            _written_keys[key] = written
    return written


def format_path(path: Sequence[str | int]) -> str:
    """Write *path* with the module's quoting rule, without the surrounding quotes.

    Examples:
        >>> format_path(("files", 0, "path"))
        'files.0.path'
        >>> format_path(("headers", "a.b", ""))
        "headers['a.b']['']"
    """
    if len(path) == 1:  # the most common path: one field
        segment = path[0]
        return str(segment) if isinstance(segment, int) else _write_key(segment)
    parts: list[str] = []
    for segment in path:
        written = str(segment) if isinstance(segment, int) else _write_key(segment)
        if parts and written[0] != "[":
            parts.append(".")
        parts.append(written)
    return "".join(parts)


class Issue(NamedTuple):
    """One problem found in one value: immutable data, cheap to make, compared by value.

    Attributes:
        path: where the problem is, from the root: ``str`` keys and ``int`` indices.
        kind: what sort of problem it is, one of :data:`IssueKind`.
        detail: what was wrong and what would have been right, without the
            path, e.g. ``must be a string, got integer``. It never quotes the
            value itself, which may be a secret.

    """

    path: tuple[str | int, ...]
    kind: IssueKind
    detail: str

    def message(self, subject: str = "value") -> str:
        """The issue as one sentence: its quoted path (or *subject* at the root), then the detail."""
        where = f'"{format_path(self.path)}"' if self.path else subject
        return f"{where} {self.detail}"

    def to_dict(self, subject: str = "value") -> dict[str, Any]:
        """A JSON-serialisable dict: ``path`` (a list), ``kind``, ``detail`` and the formatted ``message``."""
        return {
            "path": list(self.path),
            "kind": self.kind,
            "detail": self.detail,
            "message": self.message(subject),
        }


def _list_issues(header: str, issues: Sequence[Issue], subject: str) -> str:
    """The one format for a message made of issues: inline for one, a bounded list for several."""
    if len(issues) == 1:
        return f"{header}: {issues[0].message(subject)}"
    lines = [f"{header} ({len(issues)} problems):"]
    lines.extend(f"- {issue.message(subject)}" for issue in issues[:MAX_LISTED_ISSUES])
    if len(issues) > MAX_LISTED_ISSUES:
        lines.append(f"- ... and {len(issues) - MAX_LISTED_ISSUES} more")
    return "\n".join(lines)


def _rebuild(cls: type[ToolError], fields: dict[str, Any]) -> ToolError:
    """Unpickle an error: errors take keyword arguments, which ``Exception`` pickling cannot pass."""
    return cls(**fields)


class ToolError(Exception):
    """The base of every error the tool framework raises on purpose.

    Not raised itself: catch it, then branch on :attr:`code`.

    Attributes:
        code: the stable :class:`ErrorCode` of the subclass.
        retryable: True only where the caller rewriting its arguments can help.

    """

    code: ClassVar[ErrorCode]
    retryable: ClassVar[bool] = False

    def __init__(self, message: str) -> None:
        if type(self) is ToolError:
            raise TypeError("ToolError is abstract; raise one of its subclasses")
        super().__init__(message)

    @property
    def message(self) -> str:
        """The formatted message, the same as ``str(error)``."""
        return str(self.args[0])

    def _fields(self) -> dict[str, Any]:
        """The constructor's keyword arguments, which rebuild an equal error."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON-serialisable data: ``code``, ``message``, ``retryable`` and its own fields."""
        return {"code": self.code.value, "message": self.message, "retryable": self.retryable}

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self._fields()))


class _IssuesError(ToolError):
    """Shared by the errors that carry a list of :class:`Issue`."""

    issues: tuple[Issue, ...]
    subject: str

    def _issue_dicts(self) -> list[dict[str, Any]]:
        return [issue.to_dict(self.subject) for issue in self.issues]


@final
class SchemaError(_IssuesError):
    """A value did not match its schema (raised by ``Schema.parse``).

    Attributes:
        issues: every problem found, in order.
        path: the path of the first issue.
        detail: the detail of the first issue.
        subject: what the value is called at the root (``value``, ``input``, ``output``).

    """

    code = ErrorCode.SCHEMA_INVALID

    def __init__(self, issues: Iterable[Issue], *, subject: str = "value") -> None:
        self.issues = _nonempty(issues, "SchemaError")
        self.subject = subject
        self.path = self.issues[0].path
        self.detail = self.issues[0].detail
        # Exception.__init__ directly: these three are raised on every failed call, and
        # ToolError.__init__ only guards against instantiating the abstract base.
        Exception.__init__(self, _list_issues(f"{subject} is invalid", self.issues, subject))

    def _fields(self) -> dict[str, Any]:
        return {"issues": self.issues, "subject": self.subject}

    def to_dict(self) -> dict[str, Any]:
        """Adds ``path``, ``detail`` and ``issues`` to the common fields."""
        return {
            **super().to_dict(),
            "path": list(self.path),
            "detail": self.detail,
            "issues": self._issue_dicts(),
        }


class _ToolIssuesError(_IssuesError):
    """Shared by the input and output errors: a tool's name, and the issues of one of its values.

    Each subclass builds its own message in ``__init__``: they are raised on every
    failed call, so the message is one f-string, and ``Exception.__init__`` is
    called directly (``ToolError.__init__`` only guards the abstract base).
    """

    tool: str

    def _fields(self) -> dict[str, Any]:
        return {"tool": self.tool, "issues": self.issues}

    def to_dict(self) -> dict[str, Any]:
        """Adds ``tool`` and ``issues`` to the common fields."""
        return {**super().to_dict(), "tool": self.tool, "issues": self._issue_dicts()}


def _nonempty(issues: Iterable[Issue], error: str) -> tuple[Issue, ...]:
    found = tuple(issues)
    if not found:
        raise ValueError(f"{error} needs at least one issue")
    return found


@final
class InputInvalidError(_ToolIssuesError):
    """A tool was called with input its schema rejected. Rewriting the arguments can help.

    Handlers raise it too, for a well-typed argument they cannot use (a file
    that does not exist): ``InputInvalidError(tool, [Issue(("path",), "invalid", ...)])``.

    Attributes:
        tool: the name of the tool that was called.
        issues: every problem found in the input, in order.

    """

    code = ErrorCode.INPUT_INVALID
    retryable = True
    subject = "input"

    def __init__(self, tool: str, issues: Iterable[Issue]) -> None:
        self.tool = tool
        self.issues = _nonempty(issues, "InputInvalidError")
        message = _list_issues(f"{tool} was called with invalid input", self.issues, "input")
        Exception.__init__(self, f"{message}\nFix the arguments and call {tool} again.")


@final
class OutputInvalidError(_ToolIssuesError):
    """A tool returned something its own output schema rejected: the tool is broken.

    Retrying cannot fix it, and the message says so rather than blaming the call.

    Attributes:
        tool: the name of the tool whose output was rejected.
        issues: every problem found in the output, in order.

    """

    code = ErrorCode.OUTPUT_INVALID
    subject = "output"

    def __init__(self, tool: str, issues: Iterable[Issue]) -> None:
        self.tool = tool
        self.issues = _nonempty(issues, "OutputInvalidError")
        message = _list_issues(f"{tool} returned invalid output", self.issues, "output")
        Exception.__init__(self, f"{message}\nThis is a fault in the tool, not in how it was called.")


@final
class PermissionDeniedError(ToolError):
    """A tool was called without a permission it declares. A wiring fact, not an argument fault.

    Attributes:
        tool: the name of the tool that was called.
        permission: the permission that was not granted, e.g. ``fs:write``.

    """

    code = ErrorCode.PERMISSION_DENIED

    def __init__(self, tool: str, permission: str) -> None:
        self.tool = tool
        self.permission = permission
        super().__init__(
            f'{tool} requires the "{permission}" permission, which was not granted.\n'
            "Retrying with different arguments will not help"
        )

    def _fields(self) -> dict[str, Any]:
        return {"tool": self.tool, "permission": self.permission}

    def to_dict(self) -> dict[str, Any]:
        """Adds ``tool`` and ``permission`` to the common fields."""
        return {**super().to_dict(), "tool": self.tool, "permission": self.permission}


@final
class ToolNotFoundError(ToolError):
    """No tool with that name is registered. Calling a registered name can help.

    Attributes:
        name: the name that was asked for.
        suggestions: the closest registered names, best first (may be empty).

    """

    code = ErrorCode.TOOL_NOT_FOUND
    retryable = True

    def __init__(self, name: str, suggestions: Iterable[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        shown = json.dumps(name, ensure_ascii=False) if isinstance(name, str) else repr(name)
        if len(shown) > 80:
            shown = shown[:76] + '..."'
        message = f"No tool named {shown} is registered"
        if self.suggestions:
            message += "; did you mean " + " or ".join(f'"{s}"' for s in self.suggestions) + "?"
        super().__init__(message)

    def _fields(self) -> dict[str, Any]:
        return {"name": self.name, "suggestions": self.suggestions}

    def to_dict(self) -> dict[str, Any]:
        """Adds ``name`` and ``suggestions`` to the common fields."""
        return {**super().to_dict(), "name": self.name, "suggestions": list(self.suggestions)}


@final
class InvalidDefinitionError(ToolError):
    """A tool, schema or runtime declaration is malformed. Raised where it is declared.

    Attributes:
        declaration: which declaration, e.g. ``tool "fs.write"`` or ``string()``.
        field: which of its fields is wrong (None when the whole declaration is).
        detail: what was wrong and what would have been right.

    """

    code = ErrorCode.INVALID_DEFINITION

    def __init__(self, declaration: str, field: str | None, detail: str) -> None:
        self.declaration = declaration
        self.field = field
        self.detail = detail
        where = f"{declaration}: {field}" if field else declaration
        super().__init__(f"{where} {detail}")

    def _fields(self) -> dict[str, Any]:
        return {"declaration": self.declaration, "field": self.field, "detail": self.detail}

    def to_dict(self) -> dict[str, Any]:
        """Adds ``declaration``, ``field`` and ``detail`` to the common fields."""
        return {
            **super().to_dict(),
            "declaration": self.declaration,
            "field": self.field,
            "detail": self.detail,
        }
