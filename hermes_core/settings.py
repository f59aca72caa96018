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

A setting's value is never quoted in a message: it may be a secret.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any, Final

from hermes_core import schema as s
from hermes_core.errors import InvalidDefinitionError, Issue, SchemaError, shorten

__all__ = ["setting"]

# What a setting's variable name looks like: ``HERMESOS_<PLUGIN>_<NAME>``, in upper case.
_VARIABLE: Final = re.compile(r"HERMESOS_[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\Z")


class _NoDefault:
    """The type of the marker saying a setting has no default (None is a default like any other)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<no default>"


_NO_DEFAULT: Final = _NoDefault()
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
    if not _VARIABLE.match(variable):
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
    return _parse(variable, schema, text)


def _parse(variable: str, schema: s.Schema, text: str) -> Any:
    """*text* parsed with *schema*, as itself or else as JSON; an error that never quotes it."""
    try:
        return schema.parse(text)
    except SchemaError as error:
        text_issues = error.issues
    # A schema that takes text is told about the text (the pattern it missed, say), never about the JSON
    # it might also be read as; one that takes no text is told about the JSON.
    takes_text = _takes_text(schema.json_schema())
    try:
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
                return schema.parse(decoded)
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
