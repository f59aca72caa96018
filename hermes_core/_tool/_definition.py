"""Tool definitions, checked where they are declared.

:func:`define_tool` runs at module load, so a malformed tool is a crash on
boot with a message saying which tool, which field, what was wrong and what
would have been right, never a failure on the first call.
"""

from __future__ import annotations

import _thread
import contextlib
import inspect
import math
import re
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import field
from typing import Any, final

from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._frozen import derive, frozen
from hermes_core._base._issues import json_string, shorten
from hermes_core._base._names import check_name
from hermes_core._tool._behaviour import ToolHints, check_hints, given_hints
from hermes_core._tool._context_use import uses_context
from hermes_core.schema import AnySchema, ImportedSchema, ObjectSchema, OptionalSchema, RefSchema, Schema
from hermes_core.schema._inputs import input_schemas, shape_of, tool_input
from hermes_core.schema._validators import Validator, closed_validator, compile_schema, default_problem

if typing.TYPE_CHECKING:
    from typing import Unpack

    from hermes_core._tool._behaviour import HintKeywords

__all__ = [
    "PERMISSION_PATTERN",
    "TIMEOUT_MAX",
    "Handler",
    "Tool",
    "ToolHints",
    "check_timeout",
    "define_tool",
    "too_long",
]

#: What a handler is: a plain or ``async`` function of the parsed input.
Handler = Callable[[Any], Any] | Callable[[Any], Awaitable[Any]]

#: The longest time limit, in seconds, that a tool, a runtime, a call or the command takes: a billion
#: seconds (about 31 years), or less where the platform's waits cannot wait that long. A longer one used to
#: be taken, then fail the call as the tool's fault (``OverflowError`` from the wait); None is no limit.
TIMEOUT_MAX: typing.Final = min(_thread.TIMEOUT_MAX, 1e9)  # threading.TIMEOUT_MAX, without importing threading

#: A permission a tool declares: ``namespace:action``, each part ``[a-z][a-z0-9_-]*``.
PERMISSION_PATTERN = re.compile(r"[a-z][a-z0-9_-]*:[a-z][a-z0-9_-]*\Z")

# semver.org's own expression: no leading zeros, optional pre-release and build. Compiled (by re, once) for a
# version that is not a plain X.Y.Z only: compiling it was 2.3 million instructions of every start (start-up).
_SEMVER = (
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\Z"
)


def _is_semver(version: str) -> bool:
    """Whether *version* matches semver.org's expression (``_SEMVER``), a plain ``1.0.0`` told without it."""
    parts = version.split(".")
    if len(parts) == 3 and all(part == "0" or (part.isascii() and part.isdigit() and part[0] != "0") for part in parts):
        return True
    return re.match(_SEMVER, version) is not None


@final
@frozen(kw_only=True)
class Tool:
    """A checked, immutable tool declaration. Build it with :func:`define_tool`.

    Every field is checked when the tool is made, however it is made
    (``define_tool``, ``Tool(...)`` or ``dataclasses.replace``), and a
    malformed one raises :class:`~hermes_core.InvalidDefinitionError`.

    Attributes:
        name: the tool's name, e.g. ``fs.write`` or ``getTinyImage`` (see :mod:`hermes_core._base._names`).
        description: what the tool does; the model reads it to decide whether to call it.
        version: semantic version of the tool.
        input: the object schema (or ``s.ref``) its input must match. An
            imported schema in it (``s.from_json_schema``) is taken closed:
            its objects that list properties and leave
            ``additionalProperties`` unsaid refuse other keys, and say so
            when exported (see :mod:`hermes_core.schema._inputs`).
        output: the schema its result must match.
        permissions: the permissions a caller must be granted, e.g. ``("fs:write",)``.
        handler: the function called with the parsed input.
        timeout: the most seconds a call may take, or None for the runtime's default.
        inline: run a plain handler on the event loop's own thread under
            ``await runtime.call(...)`` rather than in a worker thread: for a
            handler that is cheap and never blocks.
        hints: its title and hints for clients (MCP's tool annotations), one
            :class:`ToolHints`; every one unsaid by default.
        media: the handler returns content (a :class:`~hermes_core.Content`,
            a block, a list of blocks, or a string), not JSON data; *output*
            then checks the content's structured data (see :mod:`hermes_core._tool._blocks`).
        context: the handler uses its call's context (:func:`~hermes_core.current_call`):
            progress, log messages, cancellation, a person's confirmation. True
            when given, and found by itself when the handler reaches
            ``current_call()`` in code its definition shows (its own, its
            closure's, the helpers it names: :mod:`hermes_core._tool._context_use`);
            a call of a tool without it sets no context.
        lenient: whether an input that fails its check is repaired where that
            is unambiguous and lossless (``"5"`` for an integer, see
            :mod:`hermes_core.schema._repair`) before ``INPUT_INVALID`` is
            reported: True, False, or None (the default) for the choice of
            whatever calls it (an adapter's, else the runtime's). The tool's
            own choice wins.
        target: what a call acts on, named from its checked input as the
            handler will use it (hermesos-fs: the path, normalised, relative to the
            workspace root), for a person asked to approve the call: a function of
            the input returning a string, or None. See :func:`define_tool`.
        is_async: whether the handler is an ``async def`` function (derived).

    """

    name: str
    description: str
    version: str
    input: Schema
    output: Schema = field(default_factory=AnySchema)
    permissions: tuple[str, ...] = ()
    handler: Handler
    timeout: float | None = None
    inline: bool = False
    hints: ToolHints = field(default_factory=ToolHints)
    media: bool = False
    context: bool = False
    lenient: bool | None = None
    target: Callable[[Any], str] | None = None
    is_async: bool = field(init=False, default=False)
    # Written here, at definition time, unless the schema holds a ref (the runtime resolves those).
    _input_validator: Validator | None = field(init=False, default=None, repr=False, compare=False)
    _output_validator: Validator | None = field(init=False, default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        decl = _check_fields(self)
        if self.output is None:
            derive(self, output=AnySchema())
        validators = []
        for label in ("field", "output field"):
            # Written now unless the schema names others, which only a runtime can resolve (byte-compiled
            # at the first call: see schema._compile._deferred).
            try:
                if label == "field":
                    derive(self, input=tool_input(self.input))
                schema = self.input if label == "field" else self.output
                _check_defaults(decl, label, schema)
                validators.append(None if schema.has_refs else closed_validator(schema))
            except RecursionError:  # how deep the passes may go depends on the caller's stack: never past it
                raise InvalidDefinitionError(
                    decl,
                    "input" if label == "field" else "output",
                    "nests schemas too deeply to compile; no real schema nests so deep",
                ) from None
        if not isinstance(self.media, bool):
            raise InvalidDefinitionError(decl, "media", f"must be True or False, got {_describe(self.media)}")
        if self.media and validators[1] is not None:
            validators[1] = _media_output(self, validators[1])
        derive(
            self,
            permissions=_check_permissions(decl, self.permissions),
            is_async=_check_handler(decl, self.handler, self.input),
            _input_validator=validators[0],
            _output_validator=validators[1],
        )
        check_timeout(decl, "timeout", self.timeout)
        if not isinstance(self.inline, bool):
            raise InvalidDefinitionError(decl, "inline", f"must be True or False, got {_describe(self.inline)}")
        if not isinstance(self.context, bool):
            raise InvalidDefinitionError(decl, "context", f"must be True or False, got {_describe(self.context)}")
        if not self.context and uses_context(self.handler):
            derive(self, context=True)
        if self.lenient is not None and not isinstance(self.lenient, bool):
            raise InvalidDefinitionError(
                decl, "lenient", f"must be True, False or None (the caller's choice), got {_describe(self.lenient)}"
            )
        if not isinstance(self.hints, ToolHints):
            raise InvalidDefinitionError(
                decl, "hints", f"must be a ToolHints such as ToolHints(read_only=True), got {_describe(self.hints)}"
            )
        check_hints(decl, self.hints)
        if self.target is not None and not callable(self.target):
            got = _describe(self.target)
            raise InvalidDefinitionError(
                decl, "target", f"must be a function of the checked input returning a string, got {got}"
            )

    def validators(self, schemas: Mapping[str, Schema] | None = None) -> tuple[Validator, Validator]:
        """The compiled validators of the tool's input and of its output, in that order.

        Each is compiled when the tool is made (its code written then, and
        byte-compiled at its first call), unless its schema holds an
        ``s.ref``: that one is compiled now, resolving the names through
        *schemas* (a runtime's named schemas), every time this is called.
        ``validator.run(value)`` gives ``(True, parsed, ())`` or
        ``(False, None, issues)``; ``validator.check(value)`` gives ``(parsed, issues)``.

        Args:
            schemas: the named schemas an ``s.ref`` of the tool's resolves to; None: none.

        Raises:
            InvalidDefinitionError: an ``s.ref`` names a schema *schemas* does not have.
        """
        named: Mapping[str, Schema] = {} if schemas is None else schemas
        output = self._output_validator
        if output is None:
            output = compile_schema(self.output, named)
            if self.media:
                output = _media_output(self, output)
        # A ref of the input reaches the named schemas closed as the input is (tool_input).
        return self._input_validator or compile_schema(self.input, input_schemas(named)), output


def _media_output(tool: Tool, structured: Validator) -> Validator:
    """The output check of a media tool: content, its structured data checked by *structured*."""
    from hermes_core._tool._blocks import content_validator  # noqa: PLC0415 - only media tools need it

    return content_validator(structured, declared=not isinstance(tool.output, AnySchema))


def _describe(value: object) -> str:
    if isinstance(value, Schema):
        return type(value).__name__  # its dataclass repr lists every field: too much for a message
    return shorten(repr(value))


# What a handler is called with: a dict. A parameter annotated with one of these cannot take it;
# one annotated with one of the others can, and the name alone says so (resolving a string
# annotation costs more than the rest of define_tool: bench set-up, define_tool x10,000).
_NOT_A_DICT = frozenset({"str", "int", "float", "bool", "bytes", "list", "tuple", "set", "frozenset", "None"})
_A_DICT = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "Any", "object", "typing.Any", "JSON"})
# Names an author gives the whole input; a field may be called so too without the handler being wrong.
_WHOLE_INPUT_NAMES = frozenset({"args", "arguments", "input", "inputs", "params", "parameters", "data", "payload"})


def _takes_a_dict(annotation: object) -> bool:
    """Whether a parameter annotated *annotation* can be given a dict (when in doubt, yes)."""
    if isinstance(annotation, str):
        return annotation.split("[")[0].strip() not in _NOT_A_DICT
    if annotation is Any or annotation is object:
        return True
    if annotation is None or annotation is type(None):
        return False
    origin = typing.get_origin(annotation) or annotation
    if not isinstance(origin, type) or typing.is_typeddict(annotation):
        return True
    try:
        return issubclass(dict, origin)
    except TypeError:
        return True


def _check_handler(decl: str, handler: object, input_schema: Schema) -> bool:
    """Check *handler* can take the parsed input as its one positional argument; return whether it is async."""
    if not callable(handler):
        raise InvalidDefinitionError(
            decl, "handler", f"must be a function taking the parsed input, got {type(handler).__name__}"
        )
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        signature = None  # some builtins have no signature: trust them
    if signature is not None:
        problem = _signature_problem(handler, signature, input_schema)
        if problem is not None:
            fields = list(input_schema.fields) if isinstance(input_schema, ObjectSchema) else []
            example = f'def handler(args): return args["{fields[0] if fields else "path"}"]'
            raise InvalidDefinitionError(
                decl,
                "handler",
                f"{shorten(_handler_name(handler) + _written(signature), 100)} {problem}; a handler is called with "
                f"the parsed input (a dict) as its one positional argument, such as {example}; or declare the "
                "function with @tool, which passes each field as a keyword argument",
            )
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - an async __call__ makes an async handler
    )


def _annotation_text(annotation: object) -> str:
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))


class _Written:
    """An annotation shown as its author wrote it: ``str``, not ``'str'`` or ``builtins.str``."""

    __slots__ = ("text",)

    def __init__(self, annotation: object) -> None:
        self.text = _annotation_text(annotation)

    def __repr__(self) -> str:
        return self.text


def _written(signature: inspect.Signature) -> str:
    """The parameters as an author writes them (``(text: str)``), without the return annotation."""
    parameters = [
        p if p.annotation is p.empty else p.replace(annotation=_Written(p.annotation))
        for p in signature.parameters.values()
    ]
    return str(signature.replace(parameters=parameters, return_annotation=signature.empty))


def _handler_name(handler: object) -> str:
    """How messages name a handler: its qualified name, or its type's."""
    return str(getattr(handler, "__qualname__", None) or type(handler).__name__)


def _signature_problem(handler: object, signature: inspect.Signature, input_schema: Schema) -> str | None:
    """What is wrong with *handler*'s signature for a tool's handler, or None."""
    try:
        bound = signature.bind(object())
    except TypeError:
        required = [
            p.name
            for p in signature.parameters.values()
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if len(required) > 1:
            return f"needs {len(required)} arguments ({', '.join(required)}), but it is called with one"
        return "cannot be called with one positional argument"
    name = next(iter(bound.arguments))
    parameter = signature.parameters[name]
    if parameter.kind is parameter.VAR_POSITIONAL:
        return None
    annotation = parameter.annotation
    if annotation is not parameter.empty:
        head = annotation.split("[")[0].strip() if isinstance(annotation, str) else None
        if head is not None and head not in _NOT_A_DICT and head not in _A_DICT:
            # An annotation that does not resolve (a name only imported for type checking) is judged by its text.
            with contextlib.suppress(Exception):
                annotation = typing.get_type_hints(handler).get(name, annotation)
        if not _takes_a_dict(annotation):
            return f'annotates "{name}" as {shorten(_annotation_text(annotation), 40)}, not a dict'
        return None
    if (
        isinstance(input_schema, ObjectSchema)
        and name in input_schema.fields
        and name not in _WHOLE_INPUT_NAMES
        and len(signature.parameters) == 1
    ):
        return (
            f'names its parameter after the input field "{name}", but it is given the whole input, '
            f'not the field: read args["{name}"], or name the parameter args'
        )
    return None


def _check_defaults(decl: str, label: str, schema: Schema) -> None:
    """Raise, naming the tool and the field, for a default that does not match its field's schema."""
    problem = default_problem(schema, None)
    if problem is not None:
        where, issue = problem
        raise InvalidDefinitionError(
            decl, f'{label} "{where}"', f"has a default that does not match its schema: {issue.message('default')}"
        )


def define_tool(
    *,
    name: str,
    description: str,
    version: str,
    input: Schema,  # noqa: A002 - the field is called input everywhere a tool is described
    output: Schema | None = None,
    permissions: Iterable[str] = (),
    handler: Handler,
    timeout: float | None = None,
    inline: bool = False,
    hints: ToolHints | None = None,
    media: bool = False,
    context: bool = False,
    lenient: bool | None = None,
    target: Callable[[Any], str] | None = None,
    **deprecated_hints: Unpack[HintKeywords],
) -> Tool:
    """Declare a tool, checking every field now.

    Args:
        name: segments joined by ``.``, each ``[A-Za-z_][A-Za-z0-9_-]*``, at
            most 64 characters (``fs.write``, ``getTinyImage``,
            ``api.Users.get_user``); case-sensitive, but no two tools of a
            runtime may differ only in case.
        description: what the tool does and when to use it; must not be blank,
            because it is what a model reads to decide whether to call the tool.
        version: a semantic version such as ``1.0.0`` or ``2.1.0-rc.1+build.5``.
        input: an ``s.object(...)`` schema, or an ``s.ref(...)`` to one.
        output: the schema the handler's result must match; default ``s.any()``.
        permissions: what the caller must be granted, each ``namespace:action``
            with parts ``[a-z][a-z0-9_-]*`` (``fs:write``).
        handler: a plain or ``async`` function taking the parsed input as its one
            positional argument, returning the output.
        timeout: the most seconds a call of the tool may take (a positive
            number), overriding the runtime's default; a call's own ``timeout=``
            overrides both. None: the runtime's default.
        inline: for a plain handler that is cheap and never blocks: run it on
            the event loop's thread under ``await runtime.call(...)`` instead of
            a worker thread (which keeps a blocking handler from stalling every
            other call, for some 20 microseconds a call).
        hints: the title and hints for clients, as one :class:`ToolHints`
            (``hints=ToolHints(title="Read a file", read_only=True)``); None:
            none said. Clients such as MCP hosts use them to decide what to
            confirm with the user. They are hints: a runtime enforces
            permissions, not hints.
        media: the handler returns content: a :class:`~hermes_core.Content`
            of text, images, audio and resources, a single block, a list of
            blocks, or a string; anything else is ``OUTPUT_INVALID``. *output*,
            when given, is the schema of the content's structured data, which
            every result must then carry.
        context: the handler uses its call's context
            (:func:`~hermes_core.current_call`) in a way no definition shows
            (a method of an object made at call time, a name built at run
            time); a handler that calls ``current_call()`` in its own code,
            its closure's or a helper it names is found without it.
        lenient: repair an input that fails its check where that is
            unambiguous and lossless, reporting each repair (True), never
            (False), or as the adapter or the runtime calling it says (None,
            the default). The tool's own choice wins.
        target: a function of the checked input (what the handler gets)
            returning what the call acts on, as the handler will use it: the
            path normalised, the record's key, the address. A person asked to
            approve a call reads it first and in full
            (:attr:`ApprovalRequest.target <hermes_core.ApprovalRequest.target>`),
            however long or odd the input; the input itself may be cut. The
            input's schema should bound it. It may refuse the input as the
            handler would (:func:`~hermes_core.reject`): the call is then
            ``INPUT_INVALID`` and nobody is asked. None: the tool names no target.

    Returns:
        The immutable :class:`Tool`, with its schemas compiled.

    Raises:
        InvalidDefinitionError: naming the tool and the field at fault.

    """
    return Tool(
        name=name,
        description=description,
        version=version,
        input=input,
        output=AnySchema() if output is None else output,
        permissions=permissions,  # type: ignore[arg-type] # any iterable: Tool makes it a checked tuple
        handler=handler,
        timeout=timeout,
        inline=inline,
        hints=given_hints("define_tool", name, hints, deprecated_hints),
        media=media,
        context=context,
        lenient=lenient,
        target=target,
    )


def check_timeout(declaration: str, field: str, seconds: object) -> float | None:
    """Return *seconds* if it is None or a positive, finite number of seconds.

    Raises:
        InvalidDefinitionError: naming *declaration* and *field*.
    """
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 < seconds < math.inf:
        raise InvalidDefinitionError(
            declaration, field, f"must be a positive number of seconds such as 2.5, or None, got {_describe(seconds)}"
        )
    if seconds > TIMEOUT_MAX:
        raise InvalidDefinitionError(declaration, field, too_long(seconds))
    return seconds


def too_long(seconds: float, unlimited: str = "None") -> str:
    """Why a time limit past :data:`TIMEOUT_MAX` is refused, wherever one is read; *unlimited*: how to set none."""
    shown = "a larger number" if isinstance(seconds, int) and seconds.bit_length() > 1000 else f"{float(seconds):g}"
    return f"must be at most {TIMEOUT_MAX:,.0f} seconds ({unlimited} for no limit), got {shown}"


def _check_fields(tool: Tool) -> str:
    """Check the fields a tool holds as given; return how messages name it (``tool "fs.write"``)."""
    name, description, version = tool.name, tool.description, tool.version
    decl = f"tool {json_string(name)}" if isinstance(name, str) else "tool"
    check_name(decl, "name", name, example="fs.write")
    decl = f'tool "{name}"'
    if not isinstance(description, str) or not description.strip():
        raise InvalidDefinitionError(
            decl,
            "description",
            f"must be a non-blank string saying what the tool does (a model reads it to decide "
            f"whether to call the tool), got {_describe(description)}",
        )
    if not isinstance(version, str) or not _is_semver(version):
        raise InvalidDefinitionError(
            decl,
            "version",
            f"must be a semantic version MAJOR.MINOR.PATCH such as '1.0.0' or '2.1.0-rc.1', got {_describe(version)}",
        )
    shape = shape_of(tool.input.root) if isinstance(tool.input, ImportedSchema) else tool.input
    if not isinstance(shape, ObjectSchema | RefSchema):
        raise InvalidDefinitionError(
            decl,
            "input",
            "must be an object schema such as s.object({'path': s.string()}) (or an s.ref to one, or an "
            f"imported JSON Schema whose root is an object), got {_describe(tool.input)}",
        )
    output: object = tool.output
    if output is not None and (not isinstance(output, Schema) or isinstance(output, OptionalSchema)):
        raise InvalidDefinitionError(
            decl, "output", f"must be a schema such as s.string(), or None for any JSON value, got {_describe(output)}"
        )
    return decl


def _check_permissions(decl: str, permissions: Iterable[str]) -> tuple[str, ...]:
    """The permissions, checked, each kept once, in order."""
    if isinstance(permissions, str):
        raise InvalidDefinitionError(
            decl, "permissions", f"must be a list of permissions such as ['fs:write'], got the string {permissions!r}"
        )
    checked: list[str] = []
    for index, permission in enumerate(permissions):
        if not isinstance(permission, str) or not PERMISSION_PATTERN.match(permission):
            raise InvalidDefinitionError(
                decl,
                f"permissions[{index}]",
                "must be 'namespace:action', each part a lowercase letter then letters, digits, "
                f"'_' or '-' (such as 'fs:write'), got {_describe(permission)}",
            )
        if permission not in checked:
            checked.append(permission)
    return tuple(checked)
