"""``@tool``: a tool declared from a plain or ``async`` function, its schemas read from its signature.

The input schema is one field per parameter (from its annotation, see
:mod:`hermes_core._tool._from_types`), the description the docstring's prose, each field's
description the docstring's entry for it; the handler is compiled for the
function's own parameters. The tool itself is made and checked by
:mod:`hermes_core._tool._definition`, exactly as ``define_tool`` makes it.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError
from hermes_core._base._issues import json_string, shorten
from hermes_core._base._names import check_name, suggest
from hermes_core._tool._behaviour import ToolHints, given_hints
from hermes_core._tool._call_context import CallContext, current_call
from hermes_core._tool._definition import Handler, Tool
from hermes_core._tool._from_types import needs_to_json, schema_from_hint, to_json
from hermes_core.schema import Schema

if typing.TYPE_CHECKING:
    from typing import Unpack

    from hermes_core._tool._behaviour import HintKeywords

__all__ = ["tool"]


def tool(
    *,
    name: str,
    version: str,
    description: str | None = None,
    permissions: Iterable[str] = (),
    timeout: float | None = None,
    inline: bool = False,
    hints: ToolHints | None = None,
    lenient: bool | None = None,
    target: Callable[[Any], str] | None = None,
    **deprecated_hints: Unpack[HintKeywords],
) -> Callable[[Callable[..., Any]], Tool]:
    """Declare a tool from a plain or ``async`` function: its schemas come from its type hints.

    The input schema is an object with a field per parameter, its schema from
    the parameter's annotation (see :mod:`hermes_core._tool._from_types` for what each
    annotation becomes); a parameter with a default is optional, with that
    default. The output schema comes from the return annotation (none: any JSON
    value). The description is the docstring's summary and body, and each
    field's description comes from the docstring's ``Args:`` (Google),
    ``Parameters`` (NumPy) or ``:param x:`` (reST) entries.

    The handler is called with the parsed input as keyword arguments, each
    converted to what its annotation promises (an ``Enum`` member, a dataclass
    instance, a tuple); a result holding those is turned back into JSON data
    before the output is checked.

    ::

        @tool(name="notes.add", version="1.0.0", permissions=["notes:write"])
        def add(text: Annotated[str, s.string(max_length=200)], tags: list[str] = []) -> int:
            \"\"\"Add a note; returns its number.\"\"\"
            return notes.add(text, tags)

        @tool(name="notes.read", version="1.0.0", hints=ToolHints(read_only=True), target=lambda args: args["title"])
        def read(title: str) -> str:
            \"\"\"Read a note.\"\"\"
            return notes.read(title)

    Args:
        name: as for :func:`define_tool`.
        version: as for :func:`define_tool`.
        description: what the tool does, instead of the docstring's.
        permissions: as for :func:`define_tool`.
        timeout: as for :func:`define_tool`.
        inline: as for :func:`define_tool`.
        hints: as for :func:`define_tool`: ``hints=ToolHints(read_only=True)``.
        lenient: as for :func:`define_tool`.
        target: as for :func:`define_tool`: a function of the checked input,
            the dict of the parameters' values as the input's schema checked
            them, defaults filled in (before they are converted to what the
            annotations promise), returning what the call acts on, for a
            person asked to approve it (:attr:`ApprovalRequest.target
            <hermes_core.ApprovalRequest.target>`). It may refuse the input
            with :func:`~hermes_core.reject`.

    Returns:
        A decorator turning the function into a :class:`Tool`, exactly as
        :func:`define_tool` makes them.

    Raises:
        InvalidDefinitionError: when the function is decorated, naming the tool,
            the function and the parameter at fault: an annotation with no
            schema, a missing annotation, ``*args`` or ``**kwargs``, a
            positional-only parameter, a default that does not match, or a
            docstring entry for a parameter the function does not have.

    """
    client_hints = given_hints("@tool", name, hints, deprecated_hints)

    def decorate(function: Callable[..., Any]) -> Tool:
        return _from_function(
            function,
            name=name,
            version=version,
            description=description,
            permissions=permissions,
            timeout=timeout,
            inline=inline,
            client_hints=client_hints,
            lenient=lenient,
            target=target,
        )

    return decorate


def _from_function(
    function: Callable[..., Any],
    *,
    name: str,
    version: str,
    description: str | None,
    permissions: Iterable[str],
    timeout: float | None,
    inline: bool,
    client_hints: ToolHints,
    lenient: bool | None = None,
    target: Callable[[Any], str] | None = None,
) -> Tool:
    from hermes_core._tool._docstrings import parse_docstring  # noqa: PLC0415 - only @tool needs it

    decl = f"tool {json_string(name)}" if isinstance(name, str) else "tool"
    check_name(decl, "name", name, example="fs.write")
    if isinstance(function, Tool):
        raise InvalidDefinitionError(f'tool "{name}"', None, f"decorates {function!r}, already a tool; @tool once")
    if not inspect.isfunction(function) and not inspect.ismethod(function):
        raise InvalidDefinitionError(
            f'tool "{name}"', None, f"decorates a function, got {shorten(repr(function), 60)}; write def ... under it"
        )
    decl = f'tool "{name}" (function {function.__qualname__})'
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except Exception as error:
        raise InvalidDefinitionError(
            decl, None, f"has annotations that do not resolve where it is defined: {shorten(str(error), 120)}"
        ) from None
    documented = parse_docstring(function.__doc__)
    fields: dict[str, Schema] = {}
    converters: dict[str, Callable[[Any], Any]] = {}
    parameters = list(inspect.signature(function).parameters.values())
    # True for a CallContext parameter; else the tool's definition looks, through the handler written here.
    contextual = False
    for parameter in parameters:
        label = f'parameter "{parameter.name}"'
        _check_parameter(decl, label, parameter, hints)
        if hints[parameter.name] is CallContext:  # the call's context, passed in: not part of the input
            contextual = True
            continue
        schema, convert = schema_from_hint(hints[parameter.name], declaration=decl, field=label)
        text = documented.params.get(parameter.name)
        if parameter.default is not parameter.empty:
            fields[parameter.name] = s.optional(schema, default=to_json(parameter.default), description=text)
        elif text is not None:
            # The parameter's own text wins over its type's (a TypedDict's or a dataclass's docstring).
            fields[parameter.name] = dataclasses.replace(schema, description=text)  # type: ignore[type-var]
        else:
            fields[parameter.name] = schema
        if convert is not None:
            converters[parameter.name] = convert
    for stray in documented.params:
        if stray not in fields and hints.get(stray) is not CallContext:
            close = suggest(stray, fields, limit=1)
            raise InvalidDefinitionError(
                decl,
                "docstring",
                f'describes "{stray}", which is not a parameter'
                + (f'; did you mean "{close[0]}"?' if close else f"; the parameters are {', '.join(fields) or 'none'}"),
            )
    returns = hints.get("return", _EMPTY)
    output: Schema = s.any()
    media = _returns_content(returns)
    if media:
        returns = _EMPTY  # content is returned as it is: no schema, no conversion
    elif returns is not _EMPTY:
        output, _ = schema_from_hint(returns, declaration=decl, field="return annotation")
    text = description if description is not None else _unwrapped(documented.description)
    if text is None:
        raise InvalidDefinitionError(
            decl,
            "description",
            "is missing: give the function a docstring saying what the tool does and when to use it "
            "(a model reads it to decide whether to call the tool), or pass description=",
        )
    return Tool(
        name=name,
        description=text,
        version=version,
        input=s.object(fields),
        output=output,
        permissions=permissions,  # type: ignore[arg-type] # any iterable: Tool makes it a checked tuple
        handler=_keyword_handler(
            function, parameters, converters, returns is not _EMPTY and needs_to_json(returns), hints
        ),
        timeout=timeout,
        inline=inline,
        hints=client_hints,
        media=media,
        context=contextual,
        lenient=lenient,
        target=target,
    )


def _returns_content(annotation: object) -> bool:
    """Whether a return annotation is content (``Content``, a block, or a union of them and ``str``): a media tool."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    if not union and not isinstance(annotation, type):
        return False
    from hermes_core._tool import _blocks  # noqa: PLC0415 - only a function annotated with content needs it

    kinds = {_blocks.Content, *_blocks.BLOCK_TYPES}
    members = typing.get_args(annotation) if union else (annotation,)
    return any(member in kinds for member in members) and all(member in kinds or member is str for member in members)


_EMPTY = inspect.Signature.empty
# A paragraph with a line like these is a list or code: its line breaks are meant.
_KEPT_LINE = re.compile(r"\s|[-*+] |\d+[.)] |```|>")


def _unwrapped(text: str | None) -> str | None:
    """A docstring's prose without its hard wraps: each paragraph's lines joined by spaces.

    A paragraph holding a list item, an indented line, a quote or a code fence
    keeps its lines; paragraphs stay apart by one blank line.
    """
    if text is None:
        return None
    paragraphs = text.split("\n\n")
    return "\n\n".join(
        p if any(_KEPT_LINE.match(line) for line in p.splitlines()) else " ".join(p.split("\n")) for p in paragraphs
    )


def _check_parameter(decl: str, label: str, parameter: inspect.Parameter, hints: dict[str, Any]) -> None:
    kinds: dict[Any, str] = {
        parameter.POSITIONAL_ONLY: "is positional-only, but a tool is given its input as keyword arguments: "
        "remove the / from the signature",
        parameter.VAR_POSITIONAL: "collects positional arguments (*), but a tool is given its input as keyword "
        "arguments: name each parameter the input may hold",
        parameter.VAR_KEYWORD: "collects keyword arguments (**), but a tool's input schema names every field: "
        "name each parameter the input may hold",
    }
    problem = kinds.get(parameter.kind)
    if problem is not None:
        raise InvalidDefinitionError(decl, label, problem)
    if parameter.name not in hints:
        raise InvalidDefinitionError(
            decl,
            label,
            f"has no annotation; annotate it (such as {parameter.name}: str) so that the tool's input schema "
            "says what it takes",
        )


def _keyword_handler(
    function: Callable[..., Any],
    parameters: list[inspect.Parameter],
    converters: Mapping[str, Callable[[Any], Any]],
    convert_result: bool,
    hints: Mapping[str, Any],
) -> Handler:
    """A handler of the parsed input (a dict) calling *function* with its fields as arguments.

    Written out for the function's own parameters, so a call binds them as
    the function declares them, positionally where it can: binding a dict as
    ``**kwargs`` costs more than the rest of the call (bench case 2, @tool).
    The parsed input holds every parameter (defaults are filled in); a missing
    one, in a direct call of the handler, takes the function's own default.
    A parameter annotated :class:`~hermes_core.CallContext` is given the running call's.
    """
    namespace: dict[str, Any] = {"_fn": function, "_to_json": to_json, "_context": current_call}
    arguments: list[str] = []
    for index, parameter in enumerate(parameters):
        key = repr(parameter.name)
        value = f"args[{key}]"
        if hints[parameter.name] is CallContext:
            arguments.append(
                "_context()" if parameter.kind is parameter.POSITIONAL_OR_KEYWORD else f"{parameter.name}=_context()"
            )
            continue
        if parameter.name in converters:
            namespace[f"_c{index}"] = converters[parameter.name]
            value = f"_c{index}({value})"
        if parameter.default is not parameter.empty:
            namespace[f"_d{index}"] = parameter.default
            value = f"({value} if {key} in args else _d{index})"
        arguments.append(value if parameter.kind is parameter.POSITIONAL_OR_KEYWORD else f"{parameter.name}={value}")
    is_async = inspect.iscoroutinefunction(function)
    call = f"{'await ' if is_async else ''}_fn({', '.join(arguments)})"
    result = f"_to_json({call})" if convert_result else call
    source = f"{'async ' if is_async else ''}def handler(args):\n    return {result}\n"
    exec(compile(source, f"<@tool {function.__qualname__}>", "exec"), namespace)  # noqa: S102 - our own source
    handler: Handler = namespace["handler"]
    # Named as the function, for logs and messages; not wrapped (inspect would see the function's signature).
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(handler, attribute, getattr(function, attribute, None))
    return handler
