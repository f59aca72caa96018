"""The tool errors: one base class, seven codes, and a refusal a handler raises.

Every error the framework raises on purpose is a :class:`ToolError` carrying a
stable machine-readable :attr:`~ToolError.code`. Branch on the code, never on
the wording: messages are written for two readers (an operator reading a log
and a model reading a failed tool call) and stay free to change.

An error class declares its fields once, in :attr:`ToolError.fields`; the base
derives :meth:`~ToolError.to_dict` and pickling from that declaration.

Messages have one shape, and paths one quoting rule: both are written by
``_issues``, below this module, which also holds the issues the errors carry.
"""

from __future__ import annotations

import enum
import inspect
import math
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, Literal, final

from hermes_core._base._issues import ISSUE_KINDS, ISSUES_MAX, Issue, IssueKind, format_message, shorten

__all__ = [
    "ErrorCode",
    "InputInvalidError",
    "InputRejected",
    "InvalidDefinitionError",
    "OutputInvalidError",
    "PermissionDeniedError",
    "SchemaError",
    "ToolError",
    "ToolFailedError",
    "ToolNotFoundError",
    "exception_type_name",
    "reject",
    "seconds_text",
]


class ErrorCode(enum.StrEnum):
    """The stable codes. Each member is also the plain string, so ``code == "INPUT_INVALID"``."""

    SCHEMA_INVALID = "SCHEMA_INVALID"
    INPUT_INVALID = "INPUT_INVALID"
    OUTPUT_INVALID = "OUTPUT_INVALID"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    INVALID_DEFINITION = "INVALID_DEFINITION"
    TOOL_FAILED = "TOOL_FAILED"


def _alternatives(names: Sequence[str]) -> str:
    """``"a"``, ``"a" or "b"``, ``"a", "b" or "c"``: names quoted, for a message."""
    quoted = [f'"{name}"' for name in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _quote(text: str, limit: int = 80) -> str:
    """*text* in double quotes, escaped as JSON, and at most *limit* characters with the quotes."""
    import json  # noqa: PLC0415 - for messages: not at import (start-up)

    quoted = json.dumps(text, ensure_ascii=False)
    if not quoted.isascii():
        try:
            quoted.encode()
        except UnicodeEncodeError:  # a lone surrogate, which no UTF-8 text can carry: escaped, as JSON writes it
            quoted = json.dumps(text)
    return quoted if len(quoted) <= limit else shorten(quoted[:-1], limit - 1) + '"'


# -- the declarative base -------------------------------------------------------------------


def _rebuild(cls: type[ToolError], fields: dict[str, Any]) -> ToolError:
    """Unpickle an error: errors take keyword arguments, which ``Exception`` pickling cannot pass."""
    return cls(**fields)


def _data(value: Any, subject: str) -> Any:
    """A field's value as JSON data: issues as dicts, other tuples as lists."""
    if type(value) is tuple:
        if value and isinstance(value[0], Issue):
            return [issue.to_dict(subject) for issue in value]
        return list(value)
    return value


class ToolError(Exception):
    """The base of every error the tool framework raises on purpose.

    Not raised itself: catch it, then branch on :attr:`code`.

    A subclass declares its fields once, as :attr:`fields`: the names of its
    constructor's arguments, each kept as an attribute of the same name. The
    base derives from them :meth:`to_dict` and pickling (an error is rebuilt by
    calling its class with those arguments). Adding a code is an
    :class:`ErrorCode` member and a class setting :attr:`code` and
    :attr:`fields`, whose ``__init__`` stores the fields and builds its message.

    Attributes:
        code: the stable :class:`ErrorCode` of the subclass.
        retryable: True only where calling again can help: a rewritten call
            (``INPUT_INVALID``, ``TOOL_NOT_FOUND``) or the same call later
            (``TOOL_FAILED``, per instance). A class default; a class that
            lists ``retryable`` in its fields sets it per instance.
        fields: the error's own fields, in the order :meth:`to_dict` gives them.
        dict_fields: what :meth:`to_dict` adds after ``code``, ``message`` and
            ``retryable``: the class's :attr:`fields` (without ``retryable``,
            which is always there), unless the class sets it too.

    """

    code: ClassVar[ErrorCode]
    retryable: bool = False
    fields: ClassVar[tuple[str, ...]] = ()
    dict_fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = cls.fields
        if not isinstance(fields, tuple) or not all(isinstance(name, str) and name.isidentifier() for name in fields):
            raise TypeError(f"{cls.__name__}.fields must be a tuple of attribute names, got {fields!r}")
        if "fields" in vars(cls) and "dict_fields" not in vars(cls):
            cls.dict_fields = tuple(name for name in fields if name != "retryable")
        if hasattr(cls, "code"):  # a concrete error: pickling calls it with its fields
            parameters = inspect.signature(cls.__init__).parameters
            missing = [name for name in fields if name not in parameters]
            if missing:
                raise TypeError(f"{cls.__name__}.__init__ does not take the fields {missing}")

    def __init__(self, message: str) -> None:
        if type(self) is ToolError:
            raise TypeError("ToolError is abstract; raise one of its subclasses")
        super().__init__(message)

    @property
    def message(self) -> str:
        """The formatted message, the same as ``str(error)``."""
        return str(self.args[0])

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON-serialisable data.

        Returns:
            A new dict: ``code``, ``message`` and ``retryable``, then each of
            :attr:`dict_fields`, with tuples as lists and issues as
            :meth:`Issue.to_dict` dicts.
        """
        data: dict[str, Any] = {"code": self.code.value, "message": self.message, "retryable": self.retryable}
        subject = getattr(self, "subject", "value")
        for name in self.dict_fields:
            data[name] = _data(getattr(self, name), subject)
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), {name: getattr(self, name) for name in self.fields}))


def _capped(issues: Iterable[Issue]) -> tuple[Issue, ...]:
    """*issues* as a tuple of at most ``ISSUES_MAX + 1``: more than :data:`ISSUES_MAX` say checking stopped."""
    found = tuple(issues)
    return found if len(found) <= ISSUES_MAX else found[: ISSUES_MAX + 1]


def _no_issues(error: str) -> ValueError:
    return ValueError(f"{error} needs at least one issue")


class _IssuesError(ToolError):
    """Shared by the errors that carry a list of :class:`Issue`.

    They are raised on every failed call, so each sets its attributes and
    calls ``Exception.__init__`` directly: ``ToolError.__init__`` only guards
    against instantiating the abstract base.
    """

    # Slots for what every failed call reads: faster to set and to read than the instance dict an
    # exception keeps for everything else (bench_adapters, row 1e).
    __slots__ = ("issues",)
    issues: tuple[Issue, ...]
    subject: str


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
    fields = ("issues", "subject")
    # The first issue's path and detail are shown for convenience; the subject is
    # already in each issue's message.
    dict_fields = ("path", "detail", "issues")

    def __init__(self, issues: Iterable[Issue], *, subject: str = "value") -> None:
        self.issues = found = _capped(issues)
        if not found:
            raise _no_issues("SchemaError")
        self.subject = subject
        self.path, _, self.detail = found[0]
        Exception.__init__(self, format_message(f"{subject} is invalid", "", found, subject))


# The advice lines: what the reader of a failed call should do next.
_OUTPUT_ADVICE = "This is a fault in the tool, not in how it was called. Calling it again will not help."
_PERMISSION_ADVICE = "Retrying with different arguments will not help."


class _ToolIssuesError(_IssuesError):
    """Shared by the input and output errors: a tool's name, and the issues of one of its values."""

    __slots__ = ("tool",)
    fields = ("tool", "issues")
    tool: str


@final
class InputInvalidError(_ToolIssuesError):
    """A tool was called with input it rejected. Rewriting the arguments can help.

    The runtime raises it when the input does not match the tool's input
    schema, and when the handler refuses a well-typed value by raising
    :class:`InputRejected` (see :func:`reject`).

    Attributes:
        tool: the name of the tool that was called.
        issues: every problem found in the input, in order.

    """

    code = ErrorCode.INPUT_INVALID
    retryable = True
    subject = "input"

    def __init__(self, tool: str, issues: Iterable[Issue]) -> None:
        self.tool = tool
        self.issues = found = _capped(issues)
        if not found:
            raise _no_issues("InputInvalidError")
        advice = f"Fix the arguments and call {tool} again."
        Exception.__init__(self, format_message(f"{tool} was called with invalid input", advice, found, "input"))


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
        self.issues = found = _capped(issues)
        if not found:
            raise _no_issues("OutputInvalidError")
        Exception.__init__(self, format_message(f"{tool} returned invalid output", _OUTPUT_ADVICE, found, "output"))


@final
class PermissionDeniedError(ToolError):
    """A tool was called without a permission it declares. A wiring fact, not an argument fault.

    Attributes:
        tool: the name of the tool that was called.
        permission: the permission that was not granted, e.g. ``fs:write``
            (the first of those a provider asked approval for, when it was not given).
        reason: ``"not_granted"`` (nothing granted it, or a provider denied
            it), ``"no_approver"`` (a provider asked for a person's approval
            and the runtime has no approver), ``"unreachable"`` (the approver
            could ask no person: an MCP client that cannot ask its user, say)
            or ``"declined"`` (the approver declined this call).
        detail: for ``"declined"``, the person's message to the model; for
            ``"no_approver"``, what the providers said about why approval is
            needed; for ``"unreachable"``, why no person could be asked; else None.

    Raises:
        ValueError: *reason* is not one of the three.

    """

    code = ErrorCode.PERMISSION_DENIED
    fields = ("tool", "permission", "reason", "detail")

    def __init__(
        self,
        tool: str,
        permission: str,
        *,
        reason: Literal["not_granted", "no_approver", "unreachable", "declined"] = "not_granted",
        detail: str | None = None,
    ) -> None:
        if reason not in _DENIALS:
            raise ValueError(f"reason must be one of {_alternatives(_DENIALS)}, got {reason!r}")
        self.tool = tool
        self.permission = permission
        self.reason = reason
        self.detail = detail
        if reason == "declined":
            said = f", saying: {_quote(detail, 500)}" if detail else ""
            text = format_message(f"A person declined this call of {tool}{said}", _DECLINED_ADVICE)
        elif reason == "no_approver":
            why = f" ({detail})" if detail else ""
            text = format_message(
                f'{tool} needs a person\'s approval for the "{permission}" permission{why}, '
                "and this runtime has no approver, so the call was not made",
                _NO_APPROVER_ADVICE,
            )
        elif reason == "unreachable":
            why = f" ({detail})" if detail else ""
            text = format_message(
                f'{tool} needs a person\'s approval for the "{permission}" permission, and no person could be '
                f"asked{why}, so the call was not made",
                _UNREACHABLE_ADVICE,
            )
        else:
            text = format_message(
                f'{tool} requires the "{permission}" permission, which was not granted', _PERMISSION_ADVICE
            )
        super().__init__(text)


_DENIALS = ("not_granted", "no_approver", "unreachable", "declined")
_DECLINED_ADVICE = "Do not call it again unless they ask you to."
_UNREACHABLE_ADVICE = (
    "To allow it, call it from a client that can ask its user, or grant the permission in the policy "
    "instead of asking. Retrying with different arguments will not help."
)
_NO_APPROVER_ADVICE = (
    "To allow it, pass an approver (Runtime(approver=...)), or grant the permission in the policy "
    "instead of asking. Retrying with different arguments will not help."
)


@final
class ToolNotFoundError(ToolError):
    """No tool with that name is registered. Calling a registered name can help.

    Attributes:
        name: the name that was asked for; None when the call named none (no
            name, or one that is not a string).
        suggestions: the closest registered names, best first (may be empty).

    """

    code = ErrorCode.TOOL_NOT_FOUND
    retryable = True
    fields = ("name", "suggestions")

    def __init__(self, name: str | None, suggestions: Iterable[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        such = f", such as {_alternatives(self.suggestions)}" if self.suggestions else ""
        if name:
            said = f"{_quote(name)} is not a registered tool name"
        else:  # a call that named no tool is not one that named a tool "None"
            said = f"the call names no tool: its name is {'empty' if name == '' else 'missing or not a string'}"
        super().__init__(format_message(said, f"Call a registered tool instead{such}."))


@final
class InvalidDefinitionError(ToolError):
    """A tool, schema or runtime declaration is malformed. Raised where it is declared.

    Attributes:
        declaration: which declaration, e.g. ``tool "fs.write"`` or ``string()``.
        field: which of its fields is wrong (None when the whole declaration is).
        detail: what was wrong and what would have been right, as the caller
            wrote it; the message closes it with a period if it has none.

    """

    code = ErrorCode.INVALID_DEFINITION
    fields = ("declaration", "field", "detail")

    def __init__(self, declaration: str, field: str | None, detail: str) -> None:
        self.declaration = declaration
        self.field = field
        self.detail = detail
        where = f"{declaration}: {field}" if field else declaration
        super().__init__(format_message(f"{where} {detail}"))


# What a failed tool tells the model to do: never to rewrite its arguments.
_FAILED_RETRY_ADVICE = (
    "This is a fault in the tool, not in how it was called. The same call may work if it is made again later."
)
_FAILED_FINAL_ADVICE = (
    "This is a fault in the tool, not in how it was called. Calling it again will not help: "
    "use another tool, or tell the user."
)
# A tool's own answer (another program's words, passed on): neither the call's nor the tool's fault, as far as we know.
_ANSWERED_ADVICE = (
    "These are the tool's own words: if they are about the arguments, change them and call again; "
    "if not, the same call may work later, or tell the user."
)
_REASONS = ("raised", "timeout", "reported", "answered")


def exception_type_name(error: BaseException) -> str:
    """The exception's type, qualified by its module unless it is a built-in: ``json.decoder.JSONDecodeError``."""
    kind = type(error)
    module = getattr(kind, "__module__", None)
    return kind.__qualname__ if module in (None, "builtins") else f"{module}.{kind.__qualname__}"


def seconds_text(seconds: float) -> str:
    """A duration for a message, to the millisecond: ``2.5 seconds``, ``1 second``, ``0.25 seconds``."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    if text == "0":  # under half a millisecond: its significant digits rather than nothing
        text = f"{seconds:.3g}"
    return f"{text} second" if text == "1" else f"{text} seconds"


@final
class ToolFailedError(ToolError):
    """A tool's handler failed: it raised, ran out of time, or reported a failure of its own.

    Like ``OUTPUT_INVALID``, a fault in the tool, not in how it was called:
    the message never asks for other arguments. Unlike it, some failures pass
    (a service that is down, a disk that is full), so :attr:`retryable` is set
    per instance: True means the *same* call may work if it is made again
    later; False means calling again will not help.

    The runtime makes the first two kinds itself, with :meth:`from_exception`
    and :meth:`timed_out`. A handler raises one itself to tell the model
    something specific, ``raise ToolFailedError("the weather service is down",
    retryable=True)``; it does not know its tool's name, so the runtime fills
    in the name and the call's id with :meth:`with_context`.

    The text of an exception is never part of the message, nor of any field:
    it can carry paths, queries or tokens. Only its type is named; the
    runtime logs the exception itself, with its traceback, for the operator.

    Args:
        detail: what went wrong, in words for the model, without quoting
            secrets (``reason="reported"``); for a timeout, how long was waited.
            Empty or blank is no detail.
        retryable: whether the same call may work if it is made again later.
        tool: the name of the tool that failed (``""`` until a runtime names it).
        reason: ``"raised"`` (the handler raised an exception that is not a
            tool error), ``"timeout"`` (it did not finish in time) or
            ``"reported"`` (the handler raised this error itself) or
            ``"answered"`` (the handler passes on the error another program
            answered, in that program's words, which may be about the
            arguments: the message then neither blames the tool nor says
            that calling again will not help).
        exception: for ``"raised"``, the exception's type name, qualified by
            its module unless it is a built-in (``OSError``,
            ``json.decoder.JSONDecodeError``).
        call_id: the runtime's id of the call, the same as in its log record;
            in :meth:`to_dict`, not in the message.

    Raises:
        TypeError: *detail* is not a string or None, or *retryable* not a bool.
        ValueError: *reason* is not one of the three.

    """

    code = ErrorCode.TOOL_FAILED
    fields = ("tool", "reason", "detail", "exception", "call_id", "retryable")

    def __init__(
        self,
        detail: str | None = None,
        *,
        retryable: bool = False,
        tool: str = "",
        reason: Literal["raised", "timeout", "reported", "answered"] = "reported",
        exception: str | None = None,
        call_id: str | None = None,
    ) -> None:
        if detail is not None and not isinstance(detail, str):
            raise TypeError(f"ToolFailedError detail must be a str or None, got {type(detail).__name__}")
        if not isinstance(retryable, bool):
            raise TypeError(f"ToolFailedError retryable must be a bool, got {type(retryable).__name__}")
        if reason not in _REASONS:
            raise ValueError(
                f"ToolFailedError reason must be raised, timeout, reported or answered; got {shorten(repr(reason))}"
            )
        self.tool = tool
        self.reason = reason
        self.detail = detail = detail if detail and detail.strip() else None
        self.exception = exception
        self.call_id = call_id
        self.retryable = retryable
        subject = tool or "the tool"
        if reason == "timeout":
            head = f"{subject} {detail or 'did not finish in time'}"
        else:
            why = f"its handler raised {exception or 'an exception'}" if reason == "raised" else ""
            why = f"{why}; {detail}" if why and detail else why or detail or ""
            head = f"{subject} failed: {why}" if why else f"{subject} failed"
        advice = _FAILED_RETRY_ADVICE if retryable else _FAILED_FINAL_ADVICE
        super().__init__(format_message(head, _ANSWERED_ADVICE if reason == "answered" else advice))

    @classmethod
    def from_exception(
        cls, tool: str, error: BaseException, *, call_id: str, retryable: bool = False
    ) -> ToolFailedError:
        """The failure of *tool* whose handler raised *error*: ``reason="raised"``, naming only the type.

        Args:
            tool: the name of the tool.
            error: what the handler raised; its text is never shown.
            call_id: the runtime's id of the call.
            retryable: whether the same call may work later.

        Returns:
            The error, its ``__cause__`` set to *error*, to be raised by the caller.
        """
        failed = cls(
            retryable=retryable, tool=tool, reason="raised", exception=exception_type_name(error), call_id=call_id
        )
        failed.__cause__ = error
        return failed

    @classmethod
    def timed_out(cls, tool: str, seconds: float, *, call_id: str) -> ToolFailedError:
        """The failure of *tool*, which did not finish within *seconds*: ``reason="timeout"``, retryable.

        Args:
            tool: the name of the tool.
            seconds: how long the call was given, a positive number.
            call_id: the runtime's id of the call.

        Returns:
            The error, whose message says how long was waited: ``fs.read did not finish within 2.5 seconds.``

        Raises:
            TypeError: *seconds* is not a number.
            ValueError: *seconds* is not positive and finite.
        """
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise TypeError(f"ToolFailedError.timed_out() seconds must be a number, got {type(seconds).__name__}")
        if not (seconds > 0 and math.isfinite(seconds)):
            raise ValueError(f"ToolFailedError.timed_out() seconds must be positive and finite, got {seconds!r}")
        detail = f"did not finish within {seconds_text(seconds)}"
        return cls(detail, retryable=True, tool=tool, reason="timeout", call_id=call_id)

    def with_context(self, tool: str, call_id: str) -> ToolFailedError:
        """A copy naming *tool* and *call_id*, for an error a handler raised without knowing them.

        Args:
            tool: the name of the tool whose handler raised this error.
            call_id: the runtime's id of the call.

        Returns:
            A new error with the same detail, retryable, reason and exception,
            and this error as its ``__cause__`` (so its traceback, and what it
            was raised from, are kept).
        """
        named = ToolFailedError(
            self.detail,
            retryable=self.retryable,
            tool=tool,
            reason=self.reason,
            exception=self.exception,
            call_id=call_id,
        )
        named.__cause__ = self
        return named


# -- a handler refusing its input ---------------------------------------------------------


@final
class InputRejected(Exception):  # noqa: N818 -- a refusal raised on purpose, named for what it says
    """Raised by a handler to refuse a well-typed input it cannot use: a file that does not exist, say.

    Deliberately not a :class:`ToolError`: a handler does not know the name it
    was registered under, so the runtime catches this around the handler and
    raises ``InputInvalidError(tool, error.issues)`` from it. Usually made by
    :func:`reject`.

    Attributes:
        issues: what was wrong with the input, in order (at least one).

    Raises:
        ValueError: *issues* is empty.
        TypeError: an item of *issues* is not an :class:`Issue`.

    """

    issues: tuple[Issue, ...]

    def __init__(self, issues: Iterable[Issue]) -> None:
        found = _capped(issues)
        if not found:
            raise _no_issues("InputRejected")
        for issue in found:
            if not isinstance(issue, Issue):
                raise TypeError(f"InputRejected takes Issue items, got {type(issue).__name__}")
        self.issues = found
        super().__init__(format_message("input was rejected", "", found, "input"))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.issues,))


def reject(path: str | int | Sequence[str | int], detail: str, *, kind: IssueKind = "invalid") -> InputRejected:
    """An :class:`InputRejected` with one issue: how a handler refuses its input, for ``raise``.

    ``raise reject("path", "does not exist under the root; list the directory with fs.list")``

    Args:
        path: where in the input the problem is: a key (``"path"``) or an index
            (``0``) for one segment, a sequence of them (``("files", 0, "path")``)
            for a nested value, or ``()`` for the input as a whole.
        detail: what was wrong and what would do instead, without the path and
            without quoting the value (it may be a secret).
        kind: one of :data:`IssueKind`; ``invalid`` unless the problem is of
            a kind a schema would name (``too_big``, say).

    Returns:
        The error, to be raised by the caller.

    Raises:
        TypeError: *path*, *detail* or *kind* has the wrong type.
        ValueError: *detail* is empty, *kind* is not an :data:`IssueKind`, or
            an index in *path* is negative.
    """
    segments: tuple[Any, ...]
    if isinstance(path, str | int):
        segments = (path,)
    elif isinstance(path, Sequence) and not isinstance(path, bytes | bytearray):
        segments = tuple(path)
    else:
        raise TypeError(f"reject() path must be a key, an index or a sequence of them, got {type(path).__name__}")
    for segment in segments:
        if isinstance(segment, bool) or not isinstance(segment, str | int):
            raise TypeError(f"reject() path segments must be str keys or int indices, got {type(segment).__name__}")
        if isinstance(segment, int) and segment < 0:
            raise ValueError(f"reject() path indices must not be negative, got {segment}")
    if not isinstance(detail, str):
        raise TypeError(f"reject() detail must be a str, got {type(detail).__name__}")
    if not detail.strip():
        raise ValueError("reject() detail must say what was wrong; it is empty")
    if not isinstance(kind, str):
        raise TypeError(f"reject() kind must be a str, got {type(kind).__name__}")
    if kind not in ISSUE_KINDS:
        raise ValueError(f"reject() kind must be one of {', '.join(sorted(ISSUE_KINDS))}; got {shorten(repr(kind))}")
    return InputRejected([Issue(segments, kind, detail)])
