"""Compiled validators and the checks that need them: the schema package's API for the layers above.

The tool and runtime layers use these; they are documented but not part of
the public API (``hermes_core`` does not re-export them) and may change
between releases. Everything else in the package's underscored modules is
private to it.

* :class:`Validator` — a compiled schema: ``entry(value, path, issues)`` is
  the straight-line check, :meth:`~Validator.check` the guarded call.
* :func:`closed_validator` — the validator of a schema that names no other,
  compiled once and cached (the package's one cache).
* :func:`compile_schema` — a schema compiled against named schemas.
* :func:`default_problem` — the first optional field whose default does not
  match its schema.
* :func:`follow_refs` — the schema a chain of refs finally names.
* :func:`raised_issue` — the issue for a check that raised (what ``parse``
  reports instead of raising anything but ``SchemaError``).
* :func:`json_key` — a hashable key equal for JSON-equal values (``uniqueItems``).
* :func:`copy_json` — a deep copy of a JSON value.
"""

from __future__ import annotations

from collections.abc import Mapping

from hermes_core.schema._alternatives import RefSchema
from hermes_core.schema._compile import Validator, closed_validator, compile_schema, default_problem
from hermes_core.schema._nodes import Schema
from hermes_core.schema._shared import copy_json, json_key, raised_issue

__all__ = [
    "Validator",
    "closed_validator",
    "compile_schema",
    "copy_json",
    "default_problem",
    "follow_refs",
    "json_key",
    "raised_issue",
]


def follow_refs(schema: Schema, refs: Mapping[str, Schema]) -> Schema:
    """The schema *schema* finally names through refs; a ref that is unresolved, or in a cycle, itself."""
    seen: set[str] = set()
    while isinstance(schema, RefSchema) and schema.name in refs and schema.name not in seen:
        seen.add(schema.name)
        schema = refs[schema.name]
    return schema
