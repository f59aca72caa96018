"""Property tests for ``s.from_json_schema``: what the combinators export imports to the same checks.

For every schema the random generator of ``tests/test_schema_properties.py``
builds, ``from_json_schema(schema.json_schema())`` accepts exactly the values
``schema`` accepts, and parses them to the same values. Values are drawn valid
and invalid by :mod:`hermes_core.testing`'s strategies, shaped by the schema,
and at random (JSON or not). The default mode suffices: the combinators'
objects say ``additionalProperties: false`` where they refuse unknown keys.

One part of the combinators does not survive the export, by design:
``extra="ignore"`` (dropping unknown keys, whatever they hold) exports as an
open object, which keeps them and so checks that they are JSON. A schema with
such an object is compared on JSON values only, and on acceptance only.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hermes_core import schema as s
from hermes_core.schema._validators import compile_schema
from hermes_core.testing import invalid_strategy, strategy


def _load(name: str) -> ModuleType:
    """The test module *name* beside this one, under a private name (pytest imports test modules by path)."""
    spec = importlib.util.spec_from_file_location(f"_hermes_tests_{name}", Path(__file__).with_name(f"{name}.py"))
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# The random schemas and values, and the comparisons, of the parse-versus-jsonschema properties.
_properties = _load("test_schema_properties")
SCHEMAS: st.SearchStrategy[s.Schema] = _properties.SCHEMAS
outcome = _properties.outcome
same = _properties.same

EXAMPLES = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _drops_unknown_keys(schema: s.Schema) -> bool:
    """Whether an object in *schema* drops the keys it does not know (``extra="ignore"``), which no export says."""
    if isinstance(schema, s.ObjectSchema) and schema.extra == "ignore":
        return True
    return any(_drops_unknown_keys(child) for child in schema.children())


def _values(schema: s.Schema) -> st.SearchStrategy[Any]:
    """Values for *schema*: valid, invalid, shaped by it, any JSON, and values that are not JSON."""
    return st.one_of(
        strategy(schema),
        invalid_strategy(schema),
        _properties.values_for(schema),
        _properties.JSON_VALUES,
        _properties.ODD_VALUES,
    )


def _agree(schema: s.Schema, imported: s.Schema, value: Any) -> None:
    drops = _drops_unknown_keys(schema)
    if drops and not _properties._is_json(value):
        return
    ours, parsed = outcome(schema, value)
    theirs, reparsed = outcome(imported, value)
    event("accepted" if ours else "rejected")
    assert theirs is ours, (value, parsed, reparsed)
    if ours and not drops:
        assert same(reparsed, parsed), (value, parsed, reparsed)


@EXAMPLES
@given(SCHEMAS, st.data())
def test_an_exported_schema_imports_to_the_same_checks(schema: s.Schema, data: st.DataObject) -> None:
    exported = schema.json_schema()
    imported = s.from_json_schema(exported)
    assert imported.unsupported == (), imported.unsupported
    assert imported.json_schema() == exported
    values = _values(schema)
    for _ in range(3):
        _agree(schema, imported, data.draw(values))


@EXAMPLES
@given(st.data())
def test_an_exported_recursive_ref_imports_to_the_same_checks(data: st.DataObject) -> None:
    root = s.ref("test.tree")
    exported = root.json_schema(defs=_properties.REFS)
    imported = s.from_json_schema(exported)
    assert imported.unsupported == (), imported.unsupported
    valid, invalid = strategy(root, defs=_properties.REFS), invalid_strategy(root, defs=_properties.REFS)
    value = data.draw(st.one_of(_properties.TREES, valid, invalid, _properties.JSON_VALUES, _properties.ODD_VALUES))
    ours, parsed, _ = compile_schema(root, _properties.REFS).run(value)
    theirs, reparsed = outcome(imported, value)
    assert theirs is ours, (value, parsed, reparsed)
    if ours:
        assert same(reparsed, parsed), (value, parsed, reparsed)
