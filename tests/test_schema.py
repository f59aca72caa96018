"""The schema combinators: declarations, parsing, issues and their messages, JSON Schema export."""

from __future__ import annotations

import collections
import copy
import dataclasses
import enum
import json
import math
from collections.abc import Callable
from typing import Any, get_args

import jsonschema
import pytest

from hermes_core import schema as s
from hermes_core._base._errors import InvalidDefinitionError, SchemaError
from hermes_core._base._issues import IssueKind, format_path
from hermes_core.schema._compile import compile_schema

KINDS = frozenset(get_args(IssueKind))
SECRET = "sk-live-4f9c2e7a1b3d5e6f8a0b"


def parse_error(schema: s.Schema, value: Any) -> SchemaError:
    """Parse *value*, which must fail, and return the error."""
    with pytest.raises(SchemaError) as caught:
        schema.parse(value)
    return caught.value


def issues(schema: s.Schema, value: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """The ``(path, kind)`` of every issue *value* has under *schema*."""
    return [(issue.path, issue.kind) for issue in parse_error(schema, value).issues]


def attempt(schema: s.Schema, value: Any) -> SchemaError | None:
    """The error parsing *value* raises, or None if it parses."""
    try:
        schema.parse(value)
    except SchemaError as error:
        return error
    return None


def message(schema: s.Schema, value: Any) -> str:
    """The one-issue message of parsing *value*, without the ``value is invalid:`` header."""
    error = parse_error(schema, value)
    assert len(error.issues) == 1, error.issues
    return error.issues[0].message()


def nested(depth: int, leaf: Any = None) -> list[Any]:
    """A list nested *depth* levels deep, built without recursion."""
    root: list[Any] = []
    current = root
    for _ in range(depth - 1):
        inner: list[Any] = []
        current.append(inner)
        current = inner
    if leaf is not None:
        current.append(leaf)
    return root


WRITE = s.object(
    {
        "path": s.string(min_length=1, description="Where to write"),
        "mode": s.optional(s.enum(["w", "a"]), default="w"),
        "tags": s.optional(s.array(s.string()), default=[]),
        "size": s.optional(s.integer(minimum=0)),
    },
    description="What to write",
)


# -- combinators build immutable, inspectable nodes ----------------------------------------------


EVERY_COMBINATOR: list[Callable[..., s.Schema]] = [
    lambda **kw: s.string(min_length=1, max_length=5, pattern="^a", **kw),
    lambda **kw: s.string(format="email", **kw),
    lambda **kw: s.integer(minimum=0, maximum=9, **kw),
    lambda **kw: s.number(minimum=-1.5, maximum=2.5, **kw),
    lambda **kw: s.number(exclusive_minimum=0, exclusive_maximum=1, multiple_of=0.25, **kw),
    s.boolean,
    s.null,
    lambda **kw: s.literal("x", **kw),
    lambda **kw: s.enum(["w", 1, True, None], **kw),
    lambda **kw: s.array(s.string(), min_items=1, max_items=3, **kw),
    lambda **kw: s.array(s.integer(), unique_items=True, **kw),
    lambda **kw: s.const({"a": [1, True]}, **kw),
    lambda **kw: s.object({"a": s.string(), "b": s.optional(s.integer(), default=1)}, **kw),
    lambda **kw: s.record(s.integer(), **kw),
    lambda **kw: s.union(s.string(), s.integer(), **kw),
    lambda **kw: s.nullable(s.string(), **kw),
    s.any,
    lambda **kw: s.ref("fs.path", **kw),
]


@pytest.mark.parametrize("build", EVERY_COMBINATOR)
def test_every_combinator_takes_a_description_and_exports_it(build: Callable[..., s.Schema]) -> None:
    node = build(description="Read by the model")
    assert node.description == "Read by the model"
    exported = node.json_schema()
    assert exported["description"] == "Read by the model"
    jsonschema.Draft202012Validator.check_schema(exported)
    assert "description" not in build().json_schema()


@pytest.mark.parametrize("build", EVERY_COMBINATOR)
def test_nodes_are_frozen(build: Callable[..., s.Schema]) -> None:
    node = build()
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.description = "changed"  # type: ignore[misc]


def test_optional_field_description_is_exported_on_the_field() -> None:
    node = s.object({"n": s.optional(s.integer(), default=2, description="How many")})
    assert node.json_schema()["properties"]["n"] == {"type": "integer", "default": 2, "description": "How many"}


def test_nodes_are_inspectable() -> None:
    text = s.string(min_length=1, max_length=5, pattern="^a")
    assert (text.min_length, text.max_length, text.pattern) == (1, 5, "^a")
    number = s.integer(minimum=0, maximum=9)
    assert (number.minimum, number.maximum) == (0, 9)
    assert s.enum(["w", "a"]).values == ("w", "a")
    assert s.literal(3).values == (3,)
    items = s.array(s.string(), min_items=1, max_items=2)
    assert (items.items, items.min_items, items.max_items) == (s.string(), 1, 2)
    assert s.record(s.integer()).values == s.integer()
    assert s.union(s.string(), s.null()).options == (s.string(), s.null())
    assert s.nullable(s.boolean()).schema == s.boolean()
    assert s.ref("fs.path").name == "fs.path"
    assert list(WRITE.fields) == ["path", "mode", "tags", "size"]
    assert WRITE.required == ("path",)
    assert WRITE.extra == "forbid"
    mode = WRITE.fields["mode"]
    assert isinstance(mode, s.OptionalSchema)
    assert (mode.schema, mode.default) == (s.enum(["w", "a"]), "w")


def test_object_fields_mapping_is_read_only() -> None:
    with pytest.raises(TypeError):
        WRITE.fields["path"] = s.integer()  # type: ignore[index]


def test_equal_declarations_are_equal_nodes() -> None:
    assert s.string(min_length=1, pattern="a") == s.string(min_length=1, pattern="a")
    assert s.object({"a": s.integer()}) == s.object({"a": s.integer()})
    assert s.object({"a": s.integer()}) != s.object({"a": s.integer()}, extra="ignore")


# -- parse: the parsed value ---------------------------------------------------------------------


def test_parse_fills_defaults_into_a_new_dict_and_leaves_the_input_alone() -> None:
    given = {"path": "notes.txt"}
    parsed = WRITE.parse(given)
    assert parsed == {"path": "notes.txt", "mode": "w", "tags": []}
    assert given == {"path": "notes.txt"}
    assert parsed is not given


def test_absent_optional_field_without_default_stays_absent() -> None:
    assert "size" not in WRITE.parse({"path": "p"})
    assert WRITE.parse({"path": "p", "size": 3})["size"] == 3


def test_mutating_a_parsed_default_never_changes_the_next_result() -> None:
    schema = s.object({"tags": s.optional(s.array(s.string()), default=["a"])})
    first = schema.parse({})
    first["tags"].append("changed")
    assert schema.parse({}) == {"tags": ["a"]}
    nested_default = s.object({"meta": s.optional(s.record(s.array(s.integer())), default={"k": [1]})})
    first = nested_default.parse({})
    first["meta"]["k"].append(2)
    assert nested_default.parse({}) == {"meta": {"k": [1]}}


def test_mutating_the_declared_default_after_the_fact_changes_nothing() -> None:
    default = {"k": [1]}
    schema = s.object({"meta": s.optional(s.any(), default=default)})
    default["k"].append(2)
    assert schema.parse({}) == {"meta": {"k": [1]}}


def test_mutating_an_exported_default_changes_nothing() -> None:
    schema = s.object({"tags": s.optional(s.array(s.string()), default=["a"])})
    schema.json_schema()["properties"]["tags"]["default"].append("changed")
    assert schema.parse({}) == {"tags": ["a"]}
    assert schema.json_schema()["properties"]["tags"]["default"] == ["a"]


def test_parsed_containers_are_new_and_the_input_is_never_mutated() -> None:
    schema = s.object({"items": s.array(s.object({"n": s.integer(), "d": s.optional(s.integer(), default=0)}))})
    given = {"items": [{"n": 1.0}, {"n": 2}]}
    before = copy.deepcopy(given)
    parsed = schema.parse(given)
    assert parsed == {"items": [{"n": 1, "d": 0}, {"n": 2, "d": 0}]}
    assert given == before
    assert type(given["items"][0]["n"]) is float
    assert parsed["items"] is not given["items"]


def test_parse_returns_a_new_list_for_arrays() -> None:
    given = ["a", "b"]
    parsed = s.array(s.string()).parse(given)
    assert parsed == given
    assert parsed is not given


def test_integral_float_is_an_integer_and_parses_to_int() -> None:
    parsed = s.integer().parse(1.0)
    assert parsed == 1
    assert type(parsed) is int
    assert type(s.array(s.integer()).parse([2.0])[0]) is int
    assert issues(s.integer(), 1.5) == [((), "type")]


def test_number_keeps_ints_and_floats() -> None:
    assert type(s.number().parse(1)) is int
    assert type(s.number().parse(1.0)) is float


def test_enum_and_literal_compare_as_json() -> None:
    assert s.literal(1).parse(1.0) == 1
    assert s.literal(1.0).parse(1) == 1
    assert issues(s.literal(1), True) == [((), "enum")]
    assert issues(s.literal(True), 1) == [((), "enum")]
    assert issues(s.literal(0), False) == [((), "enum")]
    assert issues(s.literal(None), 0) == [((), "enum")]
    assert issues(s.literal("1"), 1) == [((), "enum")]
    mixed = s.enum([1, True, "1", None])
    assert [type(mixed.parse(v)) for v in (1, 1.0, True, "1")] == [int, int, bool, str]
    assert mixed.parse(None) is None


def test_extra_forbid_is_the_default() -> None:
    assert issues(s.object({"a": s.integer()}), {"a": 1, "b": 2}) == [(("b",), "unexpected")]


def test_extra_ignore_drops_unknown_fields() -> None:
    schema = s.object({"a": s.integer()}, extra="ignore")
    assert schema.parse({"a": 1, "b": object(), "c": [1]}) == {"a": 1}


def test_extra_allow_keeps_unknown_json_fields() -> None:
    schema = s.object({"a": s.integer()}, extra="allow")
    assert schema.parse({"a": 1.0, "b": {"x": [1, None]}}) == {"a": 1, "b": {"x": [1, None]}}
    assert issues(schema, {"a": 1, "b": {1, 2}}) == [(("b",), "type")]
    assert issues(schema, {"a": 1, "b": [math.nan]}) == [(("b", 0), "type")]


def test_unknown_keys_must_still_be_strings_whatever_extra_says() -> None:
    for extra in ("forbid", "ignore", "allow"):
        schema = s.object({"a": s.integer()}, extra=extra)  # type: ignore[arg-type]
        error = parse_error(schema, {"a": 1, 2: "x"})
        assert [(i.path, i.kind, i.detail) for i in error.issues] == [
            ((), "type", "must have string keys, got a key of type integer")
        ]


def test_record_takes_any_string_keys() -> None:
    schema = s.record(s.integer())
    assert schema.parse({"a": 1, "": 2.0, "x.y": 3}) == {"a": 1, "": 2, "x.y": 3}
    assert issues(schema, {"a": "x", "b": True}) == [(("a",), "type"), (("b",), "type")]
    assert issues(schema, {None: 1}) == [((), "type")]


def test_nullable_accepts_null_or_the_inner_schema() -> None:
    schema = s.nullable(s.integer(minimum=1))
    assert schema.parse(None) is None
    assert schema.parse(2.0) == 2
    assert issues(schema, 0) == [((), "too_small")]
    assert issues(schema, "x") == [((), "type")]


def test_union_takes_the_first_option_that_matches() -> None:
    schema = s.union(s.integer(), s.number(), s.string())
    assert type(schema.parse(1.0)) is int
    assert type(schema.parse(1.5)) is float
    assert schema.parse("x") == "x"
    first = s.union(s.object({"a": s.integer()}, extra="ignore"), s.object({"a": s.integer(), "b": s.integer()}))
    assert first.parse({"a": 1, "b": 2}) == {"a": 1}


def test_any_returns_json_values_as_they_are() -> None:
    value = {"a": [1, 2.5, None, True, "x", {"b": []}]}
    assert s.any().parse(value) is value


def test_pattern_is_searched_not_anchored() -> None:
    schema = s.string(pattern="b+")
    assert schema.parse("abbc") == "abbc"
    assert issues(schema, "ac") == [((), "pattern")]
    anchored = s.string(pattern="^b+$")
    assert issues(anchored, "abbc") == [((), "pattern")]
    assert anchored.parse("bb") == "bb"


def test_string_length_counts_code_points() -> None:
    schema = s.string(min_length=2, max_length=2)
    assert schema.parse("é😀") == "é😀"
    assert issues(schema, "😀") == [((), "too_small")]


def test_bounds_are_inclusive() -> None:
    assert s.integer(minimum=1, maximum=3).parse(1) == 1
    assert s.integer(minimum=1, maximum=3).parse(3) == 3
    assert s.number(minimum=0.5, maximum=0.5).parse(0.5) == 0.5
    assert s.integer(minimum=0.5).parse(1) == 1
    assert issues(s.integer(maximum=0.5), 1) == [((), "too_big")]
    assert s.string(min_length=1, max_length=1).parse("a") == "a"
    assert s.array(s.null(), min_items=1, max_items=1).parse([None]) == [None]


def test_big_integers_and_floats_compare_exactly_with_bounds() -> None:
    assert s.integer(maximum=2**63).parse(2**63) == 2**63
    assert issues(s.integer(maximum=2**63), 2**63 + 1) == [((), "too_big")]
    assert s.integer().parse(1e300) == int(1e300)


# -- issues: every one, with its path and kind ---------------------------------------------------


def test_parse_collects_every_issue_with_its_path() -> None:
    error = parse_error(WRITE, {"mode": "x", "tags": ["a", 1, None], "size": -1, "pth": 1})
    assert [(i.path, i.kind) for i in error.issues] == [
        (("path",), "missing"),
        (("mode",), "enum"),
        (("tags", 1), "type"),
        (("tags", 2), "type"),
        (("size",), "too_small"),
        (("pth",), "unexpected"),
    ]
    assert error.code == "SCHEMA_INVALID"
    assert error.path == ("path",)
    assert error.detail == "is required (a string)"


def test_containers_prefix_keys_and_indices_onto_nested_issues() -> None:
    inner = s.object({"path": s.string()})
    schema = s.object({"files": s.array(inner), "by_name": s.record(inner)})
    error = parse_error(schema, {"files": [{"path": "a"}, {"path": 2}], "by_name": {"x.y": {"path": None}}})
    assert [issue.path for issue in error.issues] == [("files", 1, "path"), ("by_name", "x.y", "path")]
    assert all(isinstance(segment, str | int) for issue in error.issues for segment in issue.path)


def test_a_string_can_have_both_a_length_and_a_pattern_issue() -> None:
    assert issues(s.string(min_length=3, pattern="^[a-z]+$"), "A") == [((), "too_small"), ((), "pattern")]


def test_an_array_reports_its_length_and_its_items() -> None:
    assert issues(s.array(s.integer(), min_items=3), ["x"]) == [((), "too_small"), ((0,), "type")]


def test_the_kinds_are_the_closed_set() -> None:
    assert {
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
    } == KINDS


@pytest.mark.parametrize(
    ("schema", "value", "kind"),
    [
        (s.string(), 1, "type"),
        (s.object({"a": s.null()}), {}, "missing"),
        (s.object({}), {"a": 1}, "unexpected"),
        (s.string(min_length=1), "", "too_small"),
        (s.array(s.any(), max_items=0), [1], "too_big"),
        (s.string(pattern="x"), "y", "pattern"),
        (s.enum(["a", "b"]), "c", "enum"),
        (s.union(s.string(), s.integer()), None, "union"),
        (s.string(), "\udc00", "encoding"),
        (s.any(), nested(100_000), "too_deep"),
    ],
)
def test_each_kind_is_reported(schema: s.Schema, value: Any, kind: str) -> None:
    assert parse_error(schema, value).issues[0].kind == kind


# -- golden messages, one per format -------------------------------------------------------------


def test_message_type_names_the_path_and_both_types() -> None:
    schema = s.object({"files": s.array(s.object({"path": s.string()}))})
    error = parse_error(schema, {"files": [{"path": 1}]})
    assert error.issues[0].message() == '"files.0.path" must be a string, got integer'
    assert str(error) == 'value is invalid: "files.0.path" must be a string, got integer.'


def test_message_at_the_root_names_the_subject() -> None:
    assert message(s.integer(), True) == "value must be an integer, got boolean"
    assert message(s.object({}), []) == "value must be an object, got array"
    assert message(s.number(), math.inf) == (
        "value must be a finite number, got infinity (a number past about 1.8e308, such as 1e400, is read as one)"
    )
    assert message(s.null(), math.nan) == "value must be null, got NaN"
    assert message(s.any(), b"x") == "value must be a JSON value, got bytes"
    error = parse_error(s.string(), 1)
    assert error.issues[0].message("input") == "input must be a string, got integer"
    assert error.to_dict()["issues"][0]["message"] == "value must be a string, got integer"


def test_message_missing_says_what_is_required() -> None:
    assert message(s.object({"path": s.string()}), {}) == '"path" is required (a string)'
    assert message(s.object({"mode": s.enum(["w", "a"])}), {}) == '"mode" is required (one of "w", "a")'


def test_unknown_field_suggests_closest_key() -> None:
    schema = s.object({"path": s.string(), "mode": s.string()})
    assert message(schema, {"path": "p", "mode": "w", "pth": 1}) == (
        '"pth" is an unexpected field; did you mean "path"?'
    )


def test_unknown_field_without_close_match_lists_allowed_fields() -> None:
    schema = s.object({"path": s.string(), "mode": s.string()})
    assert message(schema, {"path": "p", "mode": "w", "zzz": 1}) == (
        '"zzz" is an unexpected field; allowed fields are "path", "mode"'
    )
    assert message(s.object({}), {"zzz": 1}) == '"zzz" is an unexpected field; this object takes no fields'


def test_unknown_field_listing_is_bounded() -> None:
    schema = s.object({f"field{i:02}": s.null() for i in range(25)})
    detail = parse_error(schema, {**dict.fromkeys(schema.fields), "zzz": 1}).detail
    assert detail.startswith('is an unexpected field; allowed fields are "field00", "field01"')
    assert detail.endswith('"field19", ...')


def test_message_enum_lists_the_allowed_values_as_json() -> None:
    assert message(s.enum(["w", "a"]), "x") == 'value must be one of "w", "a"'
    assert message(s.enum(["w", "a"]), 3) == 'value must be one of "w", "a", got integer'
    assert message(s.enum([1, True, None, 2.5]), "x") == "value must be one of 1, true, null, 2.5, got string"
    assert message(s.literal("w"), "x") == 'value must be "w"'


def test_message_bounds() -> None:
    assert message(s.string(min_length=1), "") == "value must have at least 1 character, got 0"
    assert message(s.string(max_length=2), "abc") == "value must have at most 2 characters, got 3"
    assert message(s.array(s.any(), min_items=2), [1]) == "value must have at least 2 items, got 1"
    assert message(s.array(s.any(), max_items=1), [1, 2]) == "value must have at most 1 item, got 2"
    assert message(s.integer(minimum=1), 0) == "value must be at least 1"
    assert message(s.number(maximum=1.5), 2) == "value must be at most 1.5"


def test_message_exclusive_bounds_and_steps() -> None:
    assert message(s.integer(exclusive_minimum=0), 0) == "value must be greater than 0"
    assert message(s.number(exclusive_maximum=1.5), 1.5) == "value must be less than 1.5"
    assert message(s.number(multiple_of=0.5), 0.7) == "value must be a multiple of 0.5"
    assert parse_error(s.number(multiple_of=0.5), 0.7).issues[0].kind == "invalid"
    # A bound and the step are each reported: every issue, not the first.
    assert issues(s.integer(exclusive_maximum=10, multiple_of=3), 10) == [((), "too_big"), ((), "invalid")]


@pytest.mark.parametrize(
    ("schema", "accepted", "rejected"),
    [
        (s.integer(exclusive_minimum=0, exclusive_maximum=3), [1, 2, 2.0], [0, 3, -1]),
        (s.number(minimum=0, exclusive_minimum=0), [1e-300, 0.5], [0, -0.0]),
        (s.integer(multiple_of=3), [0, -3, 9.0, 3 * 10**30], [1, 10]),
        # The float rule of JSON Schema's reference validator and its test suite:
        (s.number(multiple_of=0.0001), [0.0075, 1, 0], [0.00751]),
        (s.integer(multiple_of=1e-8), [12391239123], []),
        (s.number(multiple_of=0.123456789), [], [1e308]),
        (s.number(multiple_of=1.5), [4.5, 0, -3], [4, 35]),
        (s.number(multiple_of=0.1), [0.2], [0.3]),  # 0.3 / 0.1 == 2.9999999999999996, as jsonschema says
    ],
)
def test_exclusive_bounds_and_multiple_of(schema: s.Schema, accepted: list[Any], rejected: list[Any]) -> None:
    reference = jsonschema.Draft202012Validator(schema.json_schema())
    for value in accepted:
        assert attempt(schema, value) is None, value
        assert reference.is_valid(value)
    for value in rejected:
        assert attempt(schema, value) is not None, value
        assert not reference.is_valid(value)


FORMAT_CASES = {
    "date-time": (
        ["1963-06-19T08:30:06.283185Z", "1963-06-19t08:30:06z", "1998-12-31T23:59:60Z", "1998-12-31T15:59:60-08:00"],
        ["1998-12-31T23:59:61Z", "1998-12-31T22:59:60Z", "1990-02-31T15:59:59-08:00", "1963-06-19 08:30:06Z",
         "1963-06-19T08:30:06", "1990-12-31T15:59:59-24:00"],
    ),
    "date": (["1963-06-19", "2020-02-29"], ["2021-02-29", "2020-13-01", "1963-6-19", "2020-01-32", "0000-01-01"]),
    "time": (["08:30:06Z", "23:59:60Z", "15:59:60-08:00", "08:30:06.5+01:00"], ["08:30:06", "22:59:60Z", "24:00:00Z"]),
    "email": (
        ["joe.bloggs@example.com", "te~st@example.com", '"joe bloggs"@example.com', "joe@[127.0.0.1]",
         "joe@[IPv6:::1]"],
        ["2962", ".test@example.com", "test.@example.com", "te..st@example.com", "joe@invalid=domain.com",
         "joe@[127.0.0.300]", "a b@example.com"],
    ),
    "uri": (
        ["http://foo.bar/?baz=qux#quux", "ldap://[2001:db8::7]/c=GB?objectClass?one", "mailto:John.Doe@example.com",
         "urn:oasis:names:specification:docbook:dtd:xml:4.1.2", "file:///etc/hosts", "tel:+1-816-555-1212"],
        ["//foo.bar/?baz=qux#quux", "/abc", "abc", "http:// shouldfail.com", "bar,baz:foo", "http://example.com/é",
         "http://[::1", "http://a/%zz"],
    ),
    "uuid": (
        ["2EB8AA08-AA98-11EA-B4AA-73B441D16380", "2eb8aa08-aa98-11ea-b4aa-73b441d16380"],
        ["2eb8aa08aa9811eab4aa73b441d16380", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}", "2eb8aa08-aa98-11ea-b4aa"],
    ),
    "ipv4": (["192.168.0.1", "0.0.0.0"], ["127.0.0.0.1", "256.256.256.256", "127.0", "0x7f000001", "087.10.0.1"]),
    "ipv6": (["::1", "::ffff:1.2.3.4", "2001:db8::1"], ["12345::", "::laptop", "fe80::a%eth1", "1:1:1:1:1:1:1:1:1"]),
}  # fmt: skip


@pytest.mark.parametrize("name", FORMAT_CASES)
def test_checked_formats_accept_and_reject_as_the_rfcs_say(name: str) -> None:
    schema = s.string(format=name)
    accepted, rejected = FORMAT_CASES[name]
    for text in accepted:
        assert attempt(schema, text) is None, text
    for text in rejected:
        assert issues(schema, text) == [((), "pattern")], text


def test_message_formats_say_what_the_string_must_be_never_what_it_was() -> None:
    assert message(s.string(format="date-time"), "soon") == (
        "value must be a date-time (RFC 3339) such as 2024-05-01T12:00:00Z"
    )
    assert message(s.string(format="date"), "x") == "value must be a date (RFC 3339) such as 2024-05-01"
    assert message(s.string(format="time"), "x") == "value must be a time with an offset (RFC 3339) such as 12:00:00Z"
    assert message(s.string(format="email"), "x") == "value must be an email address such as name@example.com"
    assert message(s.string(format="uri"), "x") == "value must be an absolute URI such as https://example.com/page"
    assert message(s.string(format="uuid"), "x") == "value must be a UUID such as 123e4567-e89b-12d3-a456-426614174000"
    assert message(s.string(format="ipv4"), "x") == "value must be an IPv4 address such as 192.0.2.1"
    assert message(s.string(format="ipv6"), "x") == "value must be an IPv6 address such as 2001:db8::1"


def test_an_unknown_format_is_an_annotation() -> None:
    schema = s.string(format="hostname", max_length=3)
    assert schema.parse("!!") == "!!"
    assert schema.json_schema() == {"type": "string", "maxLength": 3, "format": "hostname"}


def test_unique_items_compare_as_json_and_name_the_repeat() -> None:
    tags = s.array(s.any(), unique_items=True)
    assert tags.parse([1, True, "1", [1], {"a": 1}, None, 0, False]) == [1, True, "1", [1], {"a": 1}, None, 0, False]
    error = parse_error(tags, [1, 2, 1.0, {"a": 1, "b": [2]}, {"b": [2.0], "a": 1}, 2])
    assert [(issue.path, issue.kind) for issue in error.issues] == [
        ((2,), "invalid"),
        ((4,), "invalid"),
        ((5,), "invalid"),
    ]
    assert error.issues[0].message() == '"2" must differ from item 0; the items must be unique'
    assert error.issues[2].message() == '"5" must differ from item 1; the items must be unique'


def test_unique_items_are_checked_as_given_once_every_item_matches() -> None:
    # JSON Schema compares the items as given: {} and {"n": 0} differ, though both parse to {"n": 0}.
    points = s.array(s.object({"n": s.optional(s.integer(), default=0)}), unique_items=True)
    assert points.parse([{}, {"n": 0}]) == [{"n": 0}, {"n": 0}]
    assert issues(s.array(s.integer(), unique_items=True), [1, "x", 1]) == [((1,), "type")]


def test_const_compares_any_json_value_as_json() -> None:
    pinned = s.const({"kind": "point", "at": [1, 2]})
    parsed = pinned.parse({"at": [1.0, 2], "kind": "point"})
    assert parsed == {"kind": "point", "at": [1, 2]}
    assert type(parsed["at"][0]) is int  # a copy of the declared value
    assert parsed is not pinned.parse({"at": [1, 2], "kind": "point"})
    assert message(pinned, {"kind": "point"}) == 'value must be {"kind": "point", "at": [1, 2]}'
    assert message(pinned, [1]) == 'value must be {"kind": "point", "at": [1, 2]}, got array'
    assert message(s.const(1), True) == "value must be 1, got boolean"
    assert s.const(1).parse(1.0) == 1
    assert parse_error(s.const([]), [None]).issues[0].kind == "enum"


def test_const_keeps_its_own_copy_of_the_declared_value() -> None:
    declared = {"a": [1]}
    pinned = s.const(declared)
    declared["a"].append(2)
    assert pinned.parse({"a": [1]}) == {"a": [1]}
    exported = pinned.json_schema()
    exported["const"]["a"].append(3)
    assert pinned.json_schema() == {"const": {"a": [1]}}


def test_message_pattern_quotes_the_pattern_as_json() -> None:
    assert message(s.string(pattern='^[a-z]+"$'), "A") == 'value must match the pattern "^[a-z]+\\"$"'


def test_message_union_lists_every_option_when_none_fits_the_type() -> None:
    schema = s.union(s.string(), s.integer(), s.nullable(s.boolean()))
    assert message(schema, [1]) == "value must be a string or an integer or a boolean or null, got array"
    assert message(s.nullable(s.string()), 1) == "value must be a string or null, got integer"


def test_message_union_explains_the_option_that_fits_the_type() -> None:
    schema = s.union(s.string(min_length=3), s.integer())
    assert message(schema, "ab") == "value must have at least 3 characters, got 2"
    objects = s.union(s.array(s.string()), s.object({"path": s.string(), "mode": s.string()}))
    error = parse_error(objects, {"path": 1})
    assert [(i.path, i.kind) for i in error.issues] == [(("path",), "type"), (("mode",), "missing")]


def test_message_lists_every_issue_when_there_are_several() -> None:
    error = parse_error(s.object({"a": s.string(), "b": s.integer()}), {"a": 1, "b": "x"})
    assert str(error) == (
        'value is invalid (2 problems):\n- "a" must be a string, got integer.\n- "b" must be an integer, got string.'
    )


def test_message_lists_at_most_twenty_issues() -> None:
    error = parse_error(s.array(s.integer()), ["x"] * 25)
    assert len(error.issues) == 25
    lines = str(error).splitlines()
    assert lines[0] == "value is invalid (25 problems):"
    assert lines[1] == '- "0" must be an integer, got string.'
    assert lines[20] == '- "19" must be an integer, got string.'
    assert lines[21:] == ["- ... and 5 more."]
    assert len(error.to_dict()["issues"]) == 25


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("path", "files.0.path"),
        ("with-dash_9", "files.0.with-dash_9"),
        ("a.b", "files.0['a.b']"),
        ("", "files.0['']"),
        ("0", "files.0['0']"),
        ("9lives", "files.0['9lives']"),
        ("it's", "files.0['it\\'s']"),
        ('say "hi"', "files.0['say \"hi\"']"),
        ("back\\slash", "files.0['back\\\\slash']"),
        ("new\nline", "files.0['new\\u000aline']"),
        ("tab\t", "files.0['tab\\u0009']"),
        ("né", "files.0['né']"),
    ],
)
def test_paths_quote_keys_that_are_not_plain_names(key: str, shown: str) -> None:
    schema = s.object({"files": s.array(s.record(s.string()))})
    assert message(schema, {"files": [{key: 1}]}) == f'"{shown}" must be a string, got integer'


def test_a_key_with_a_lone_surrogate_is_reported_at_its_object_not_in_a_path() -> None:
    error = parse_error(s.object({"a": s.record(s.integer())}), {"a": {"ok": 1, "k\udc00": 1}})
    assert [(i.path, i.kind) for i in error.issues] == [(("a",), "encoding")]
    assert error.detail == "must have valid Unicode keys, got a key with a lone surrogate"
    json.dumps(error.to_dict(), ensure_ascii=False).encode()


SECRET_CASES = [
    s.integer(),
    s.union(s.integer(exclusive_minimum=0), s.string(max_length=1)),
    s.string(min_length=100),
    s.string(max_length=3),
    s.string(pattern="^[0-9]+$"),
    s.string(format="date-time"),
    s.string(format="email"),
    s.enum(["w", "a"]),
    s.literal("w"),
    s.union(s.integer(), s.boolean()),
    s.union(s.string(max_length=3), s.integer()),
    s.nullable(s.integer()),
    s.object({"token": s.string(max_length=1)}),
    s.array(s.integer()),
    s.const({"token": "other"}),
    s.record(s.null()),
    s.object({"a": s.integer()}, extra="allow"),
]


@pytest.mark.parametrize("schema", SECRET_CASES)
def test_messages_never_contain_the_received_value(schema: s.Schema) -> None:
    for value in (SECRET, [SECRET], {"token": SECRET}, {"b": {SECRET}}):
        error = attempt(schema, value)
        assert error is not None, value
        text = str(error) + json.dumps(error.to_dict())
        assert SECRET not in text
        assert SECRET[:12] not in text


# -- strict JSON semantics -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        s.integer(),
        s.number(),
        s.integer(minimum=0, maximum=1),
        s.union(s.integer(), s.number()),
        s.union(s.string(), s.integer()),
        s.nullable(s.number()),
        s.enum([0, 1]),
        s.literal(1),
    ],
)
def test_bool_is_never_a_number(schema: s.Schema) -> None:
    for value in (True, False):
        assert parse_error(schema, value).issues[0].kind in ("type", "union", "enum")
    assert parse_error(s.array(schema), [1, True]).path == (1,)


def test_bool_accepts_only_bools() -> None:
    assert s.boolean().parse(True) is True
    assert issues(s.boolean(), 1) == [((), "type")]
    assert issues(s.boolean(), 0.0) == [((), "type")]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("schema", [s.number(), s.integer(), s.any(), s.union(s.number(), s.string())])
def test_nan_and_infinity_are_not_numbers(schema: s.Schema, value: float) -> None:
    assert parse_error(schema, value).issues[0].kind in ("type", "union")
    assert parse_error(s.array(schema), [value]).path == (0,)


@pytest.mark.parametrize(
    "schema", [s.string(), s.any(), s.enum(["a"]), s.union(s.integer(), s.string()), s.nullable(s.string())]
)
@pytest.mark.parametrize("text", ["\ud800", "ok\udfff", "\udc80abc"])
def test_lone_surrogates_are_rejected_in_strings(schema: s.Schema, text: str) -> None:
    error = parse_error(schema, text)
    assert error.issues[0].kind in ("encoding", "enum")
    assert "\\u" not in str(error)
    assert text not in str(error)


@pytest.mark.parametrize(
    "schema",
    [s.record(s.integer()), s.any(), s.object({}, extra="allow"), s.object({}, extra="ignore"), s.object({})],
)
def test_lone_surrogates_are_rejected_in_keys(schema: s.Schema) -> None:
    error = parse_error(schema, {"ok": 1, "k\ud800": 1} if schema != s.object({}) else {"k\ud800": 1})
    assert "encoding" in [issue.kind for issue in error.issues]
    assert all("\ud800" not in str(segment) for issue in error.issues for segment in issue.path)


def test_valid_astral_text_is_fine_everywhere() -> None:
    value = {"😀": ["é", "\U0010ffff"]}
    assert s.any().parse(value) == value
    assert s.record(s.array(s.string())).parse(value) == value


@pytest.mark.parametrize(
    "value",
    [
        {1, 2},
        frozenset(),
        (1, 2),
        b"bytes",
        bytearray(b"x"),
        math.nan,
        1j,
        object(),
        range(3),
        {"a": (1,)},
        [1, {"b": {2}}],
        {(1, 2): "tuple key"},
        {None: 1},
    ],
    # The same ids in every process (pytest -n runs several): a bare object's repr holds its address.
    ids=lambda value: "object()" if type(value) is object else repr(value),
)
def test_any_rejects_values_that_are_not_json(value: Any) -> None:
    error = parse_error(s.any(), value)
    assert {issue.kind for issue in error.issues} == {"type"}


def test_any_rejects_reference_cycles() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    error = parse_error(s.any(), loop)
    assert [(i.path, i.kind) for i in error.issues] == [((1,), "too_deep")]
    assert error.detail == "must not contain itself (a reference cycle)"
    table: dict[str, Any] = {}
    table["self"] = {"again": table}
    assert issues(s.any(), table) == [(("self", "again"), "too_deep")]
    # Under a container schema the walk starts below the root, so the cycle is seen one turn later.
    assert issues(s.object({}, extra="allow"), table) == [(("self", "again", "self"), "too_deep")]
    assert issues(s.record(s.any()), table) == [(("self", "again", "self"), "too_deep")]


def test_any_accepts_the_same_container_twice_without_a_cycle() -> None:
    shared = [1, 2]
    value = {"a": shared, "b": [shared, shared]}
    assert s.any().parse(value) == value


def test_object_keys_must_be_strings() -> None:
    for key in (1, None, True, 1.5, (1,)):
        error = parse_error(s.record(s.any()), {key: 1})
        assert [(i.path, i.kind) for i in error.issues] == [((), "type")]


# -- no input makes parse raise anything but SchemaError -----------------------------------------


SCHEMAS_FOR_ODD_INPUT = [
    s.any(),
    s.string(min_length=1, pattern="a"),
    s.integer(minimum=0, maximum=10),
    s.number(minimum=0),
    s.boolean(),
    s.null(),
    s.enum(["a", 1, True, None]),
    s.literal(1),
    s.array(s.integer(), min_items=1),
    s.array(s.any()),
    WRITE,
    s.object({"path": s.string()}, extra="allow"),
    s.object({"path": s.string()}, extra="ignore"),
    s.record(s.integer()),
    s.union(s.integer(), s.string(), s.array(s.any())),
    s.nullable(s.object({"a": s.integer()})),
]


class Colour(enum.Enum):
    RED = "red"


class Text(str):
    pass


class Count(int):
    pass


class Table(dict):  # type: ignore[type-arg]
    pass


class Items(list):  # type: ignore[type-arg]
    pass


class RaisingEq(int):
    def __eq__(self, other: object) -> bool:
        raise ValueError("compared")

    __hash__ = int.__hash__


class RaisingCompare(int):
    def __lt__(self, other: object) -> bool:
        raise ValueError("compared")

    __gt__ = __lt__


class CollidingKey:
    """A key that hashes like "path" and, once armed, refuses to be compared."""

    def __init__(self) -> None:
        self.armed = False

    def __hash__(self) -> int:
        return hash("path")

    def __eq__(self, other: object) -> bool:
        if self.armed:
            raise ValueError("compared")
        return self is other


def colliding(table: dict[Any, Any]) -> dict[Any, Any]:
    """*table* with an armed :class:`CollidingKey` added."""
    key = CollidingKey()
    table = {**table, key: 1}
    key.armed = True
    return table


class LyingContains(dict):  # type: ignore[type-arg]
    def __contains__(self, key: object) -> bool:
        return True


class RaisingItems(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        raise ValueError("items")

    def __iter__(self) -> Any:
        raise ValueError("iter")


class RaisingIter(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise ValueError("iter")

    def __len__(self) -> int:
        raise ValueError("len")


class RaisingText(str):
    def isascii(self) -> bool:
        raise ValueError("isascii")

    def __len__(self) -> int:
        raise ValueError("len")


class RaisingFloat(float):
    def is_integer(self) -> bool:
        raise ValueError("is_integer")


class ClassRaises:
    @property
    def __class__(self) -> type:  # type: ignore[override]
        raise ValueError("no class")


ODD_INPUTS: list[Any] = [
    object(),
    ClassRaises(),
    Colour.RED,
    print,
    type,
    1j,
    b"x",
    {1, 2},
    (1, "a"),
    {"path": ("tuple",)},
    {1: "int key"},
    {None: None, "path": "p"},
    {("a",): 1},
    colliding({}),
    colliding({"path": "p"}),
    [CollidingKey()],
    RaisingEq(1),
    RaisingCompare(3),
    RaisingFloat(2.0),
    RaisingText("a"),
    {"path": RaisingText("p")},
    LyingContains(),
    RaisingItems(path="p"),
    RaisingIter([1]),
    Text("a"),
    Count(3),
    Table(path="p"),
    Items([1]),
    collections.OrderedDict(path="p"),
    collections.defaultdict(int, path="p"),
    nested(100_000),
    nested(100_000, {"a": 1}),
    "\ud800",
    {"\udfff": 1},
    math.nan,
]


def _cyclic_inputs() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    table: dict[str, Any] = {"path": "p"}
    table["more"] = table
    return [loop, table, [loop], {"path": "p", "x": loop}]


@pytest.mark.parametrize("schema", SCHEMAS_FOR_ODD_INPUT, ids=lambda node: type(node).__name__)
def test_odd_input_raises_only_schema_error(schema: s.Schema) -> None:
    for value in [*ODD_INPUTS, *_cyclic_inputs()]:
        error = attempt(schema, value)
        if error is not None:
            assert error.issues
            assert {issue.kind for issue in error.issues} <= KINDS
            json.dumps(error.to_dict())
            assert str(error).startswith("value is invalid")


class ArmedKey(str):
    """A key that hashes and compares as its text until armed; then its comparison, hash and methods raise."""

    armed = False

    def _check(self) -> None:
        if self.armed:
            raise RuntimeError("the key's own code ran")

    def __hash__(self) -> int:
        self._check()
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        self._check()
        return str.__eq__(self, other)

    def strip(self, *args: Any) -> str:  # type: ignore[override]
        self._check()
        return str.strip(self, *args)

    def lower(self) -> str:
        self._check()
        return str.lower(self)


class EqRaises(str):
    """A key whose hash is its text's but whose comparison always raises: it meets a cached key of equal text."""

    __hash__ = str.__hash__

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")


def armed(table: dict[str, Any]) -> dict[str, Any]:
    """*table*, whose ArmedKey keys are armed once it is built."""
    for key in table:
        if isinstance(key, ArmedKey):
            key.armed = True
    return table


KEYED_SCHEMAS = [
    s.object({"a": s.integer()}),
    s.object({"a": s.integer()}, extra="ignore"),
    s.object({"a": s.integer()}, extra="allow"),
    s.object({"beta": s.integer()}),  # an unknown key "bet" is close to "beta": the suggestion runs
    s.record(s.integer()),
    s.object({"x": s.record(s.string())}),
    s.any(),
    s.array(s.record(s.any())),
]


@pytest.mark.parametrize("schema", KEYED_SCHEMAS, ids=lambda node: repr(node)[:40])
@pytest.mark.parametrize("make", [ArmedKey, EqRaises], ids=["armed", "eq-raises"])
def test_a_key_whose_own_code_raises_makes_parse_raise_only_schema_error(
    schema: s.Schema, make: Callable[[str], str]
) -> None:
    format_path(("bet",))  # a key of the same text is in the formatter's cache
    for build in (
        lambda: {make("bet"): "x"},
        lambda: {make("bet"): math.nan, "a": 1},
        lambda: {"x": {make("bet"): 1}},
        lambda: [{make("bet"): math.nan}],
        lambda: {make("bet"): [math.nan]},
    ):
        error = attempt(schema, armed(build()))
        if error is None:
            continue
        assert str(error).startswith("value is invalid")
        json.dumps(error.to_dict())
        for issue in error.issues:
            assert all(type(segment) in (str, int) for segment in issue.path), issue.path


def test_a_field_named_by_a_str_subclass_is_named_by_its_text() -> None:
    class Field(enum.StrEnum):
        PATH = "path"

    schema = s.object({Field.PATH: s.string(), EqRaises("mode"): s.optional(s.string(), default="w")})
    assert [type(name) for name in schema.fields] == [str, str]
    assert schema.parse({"path": "p"}) == {"path": "p", "mode": "w"}
    assert str(parse_error(schema, {"path": 1})) == 'value is invalid: "path" must be a string, got integer.'


def test_a_subclassed_key_is_reported_by_its_text() -> None:
    format_path(("bet",))
    error = parse_error(s.object({"beta": s.integer()}), {EqRaises("bet"): 1, "beta": 1})
    assert str(error) == 'value is invalid: "bet" is an unexpected field; did you mean "beta"?'
    assert type(error.issues[0].path[0]) is str
    error = parse_error(s.record(s.integer()), {EqRaises("k"): "x"})
    assert [(issue.path, issue.kind) for issue in error.issues] == [(("k",), "type")]
    assert type(error.issues[0].path[0]) is str
    error = parse_error(s.object({}, extra="allow"), {EqRaises("n"): math.inf})
    assert str(error) == (
        'value is invalid: "n" must be a finite number, got infinity (a number past about 1.8e308, such as 1e400, '
        "is read as one)."
    )
    # A key whose hash raises cannot even be put in the parsed dict: the value is refused at its root.
    error = parse_error(s.record(s.integer()), armed({ArmedKey("k"): 1}))
    assert str(error) == "value is invalid: value must be a JSON value; checking it raised RuntimeError."


def test_deeply_nested_lists_are_too_deep() -> None:
    # Said where the value's shape stops being declared: what the caller is to send again.
    for schema, where in (
        (s.any(), ()),
        (s.array(s.any()), (0,)),
        (s.union(s.array(s.any()), s.string()), (0,)),
        (s.nullable(s.any()), ()),
        (s.object({"a": s.any()}, extra="allow"), ("b",)),
    ):
        value = {"a": 1, "b": nested(100_000)} if isinstance(schema, s.ObjectSchema) else nested(100_000)
        error = parse_error(schema, value)
        assert [(i.path, i.kind) for i in error.issues] == [(where, "too_deep")]
        assert error.issues[0].detail == "must nest arrays and objects at most 100 levels deep, got more"


def test_nesting_is_bounded_at_a_hundred_levels_whatever_the_stack() -> None:
    """Accepted up to NESTING_MAX, refused past it, the same at any depth of the caller's stack."""
    assert s.any().parse(nested(100, 1)) == nested(100, 1)
    assert issues(s.any(), nested(101, 1)) == [((), "too_deep")]
    assert issues(s.any(), {"a": nested(100, 1)}) == [((), "too_deep")]  # the object is a level too

    def at_depth(frames: int, value: Any) -> SchemaError | None:
        return at_depth(frames - 1, value) if frames else attempt(s.any(), value)

    for frames in (0, 300, 800):
        assert at_depth(frames, nested(100, 1)) is None
        refused = at_depth(frames, nested(101, 1))
        assert refused is not None
        assert [(i.path, i.kind) for i in refused.issues] == [((), "too_deep")]


def test_subclasses_of_json_types_are_accepted() -> None:
    class Shade(enum.StrEnum):
        DARK = "dark"

    class Level(enum.IntEnum):
        HIGH = 3

    assert s.string().parse(Text("a")) == "a"
    assert s.enum(["dark"]).parse(Shade.DARK) == "dark"
    assert s.integer(maximum=3).parse(Level.HIGH) == 3
    assert s.integer().parse(Count(3)) == 3
    assert type(s.integer().parse(Count(3))) is int
    assert s.object({"path": s.string()}).parse(Table(path="p")) == {"path": "p"}
    assert s.object({"path": s.string()}).parse(collections.OrderedDict(path="p")) == {"path": "p"}
    assert s.record(s.integer()).parse(collections.defaultdict(int, a=1)) == {"a": 1}
    assert s.array(s.integer()).parse(Items([1.0])) == [1]
    assert s.any().parse({Text("k"): [Count(1)]}) == {"k": [1]}
    assert issues(s.integer(maximum=2), Level.HIGH) == [((), "too_big")]


class SneakyInt(int):
    """An int that converts to another number and compares as if it were small."""

    def __int__(self) -> int:
        return 1000

    def __gt__(self, other: object) -> bool:
        return False


def test_an_int_subclass_is_checked_as_the_plain_int_it_parses_to() -> None:
    assert issues(s.integer(maximum=10), SneakyInt(5)) == [((), "too_big")]
    assert s.integer(maximum=1000).parse(SneakyInt(5)) == 1000
    assert s.integer(minimum=0).parse(RaisingCompare(3)) == 3


def test_a_value_whose_checks_raise_is_reported_at_the_root() -> None:
    error = parse_error(s.object({"path": s.string()}), colliding({"path": "p"}))
    assert [(i.path, i.kind) for i in error.issues] == [((), "type")]
    assert error.detail == "must be a JSON value; checking it raised ValueError"


def test_deeply_nested_schemas_compile_and_report_full_paths() -> None:
    # Deeper than the compiler inlines, so nested containers get functions of their own.
    depth = 30
    schema: s.Schema = s.integer()
    for level in range(depth):
        schema = s.array(schema) if level % 2 else s.object({"k": schema, "o": s.optional(s.string(), default="d")})
    good: Any = 1.0
    bad: Any = "x"
    for level in range(depth):
        good = [good] if level % 2 else {"k": good}
        bad = [bad] if level % 2 else {"k": bad}
    validator = compile_schema(schema, {})
    ran = validator.run(good)
    assert ran[0]
    assert ran == validator.walk(good)
    error = parse_error(schema, bad)
    assert [(len(i.path), i.path[-1], i.kind) for i in error.issues] == [(depth, "k", "type")]
    assert validator.run(bad)[2] == validator.walk(bad)[2] == error.issues


# -- malformed declarations fail when built ------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "declaration", "field"),
    [
        (lambda: s.array("x"), "s.array()", "items"),
        (lambda: s.array(s.string(), min_items=3, max_items=1), "s.array()", "min_items"),
        (lambda: s.array(s.string(), min_items=-1), "s.array()", "min_items"),
        (lambda: s.array(s.string(), max_items=1.5), "s.array()", "max_items"),
        (lambda: s.array(s.optional(s.string())), "s.array()", "items"),
        (lambda: s.integer(minimum=5, maximum=1), "s.integer()", "minimum"),
        (lambda: s.integer(minimum=True), "s.integer()", "minimum"),
        (lambda: s.number(maximum=False), "s.number()", "maximum"),
        (lambda: s.number(maximum=math.inf), "s.number()", "maximum"),
        (lambda: s.number(minimum=math.nan), "s.number()", "minimum"),
        (lambda: s.number(minimum="1"), "s.number()", "minimum"),
        (lambda: s.integer(exclusive_minimum=1, maximum=1), "s.integer()", "exclusive_minimum"),
        (lambda: s.number(minimum=2, exclusive_maximum=2), "s.number()", "minimum"),
        (lambda: s.number(exclusive_minimum=3, exclusive_maximum=2), "s.number()", "exclusive_minimum"),
        (lambda: s.number(exclusive_maximum=math.nan), "s.number()", "exclusive_maximum"),
        (lambda: s.number(exclusive_minimum=10**400), "s.number()", "exclusive_minimum"),
        (lambda: s.integer(multiple_of=0), "s.integer()", "multiple_of"),
        (lambda: s.number(multiple_of=-0.5), "s.number()", "multiple_of"),
        (lambda: s.number(multiple_of=True), "s.number()", "multiple_of"),
        (lambda: s.number(multiple_of=math.inf), "s.number()", "multiple_of"),
        (lambda: s.array(s.string(), unique_items=1), "s.array()", "unique_items"),
        (lambda: s.const((1, 2)), "s.const()", "value"),
        (lambda: s.const({"a": {1}}), "s.const()", "value"),
        (lambda: s.const(math.nan), "s.const()", "value"),
        (lambda: s.const([10**400]), "s.const()", "value"),
        (lambda: s.string(format=1), "s.string()", "format"),
        (lambda: s.string(format=""), "s.string()", "format"),
        (lambda: s.string(pattern="("), "s.string()", "pattern"),
        (lambda: s.string(pattern=b"x"), "s.string()", "pattern"),
        (lambda: s.string(min_length=True), "s.string()", "min_length"),
        (lambda: s.string(min_length=3, max_length=2), "s.string()", "min_length"),
        (lambda: s.string(description=1), "s.string()", "description"),
        (lambda: s.object({1: s.string()}), "s.object()", "fields"),
        (lambda: s.object({"a\ud800": s.string()}), "s.object()", "fields"),
        (lambda: s.object({"a": "string"}), "s.object()", "fields['a']"),
        (lambda: s.object([("a", s.string())]), "s.object()", "fields"),
        (lambda: s.object({}, extra="keep"), "s.object()", "extra"),
        (lambda: s.enum([]), "s.enum()", "values"),
        (lambda: s.enum("wa"), "s.enum()", "values"),
        (lambda: s.enum(["a", "a"]), "s.enum()", "values[1]"),
        (lambda: s.enum([1, 1.0]), "s.enum()", "values[1]"),
        (lambda: s.enum([0, -0.0]), "s.enum()", "values[1]"),
        (lambda: s.enum(["a", ["b"]]), "s.enum()", "values[1]"),
        (lambda: s.enum([math.nan]), "s.enum()", "values[0]"),
        (lambda: s.literal([1]), "s.literal()", "value"),
        (lambda: s.literal({"a": 1}), "s.literal()", "value"),
        (lambda: s.literal(math.inf), "s.literal()", "value"),
        (lambda: s.literal("\ud800"), "s.literal()", "value"),
        (lambda: s.literal(b"x"), "s.literal()", "value"),
        (s.union, "s.union()", "options"),
        (lambda: s.union(s.string(), int), "s.union()", "options[1]"),
        (lambda: s.union(s.optional(s.string())), "s.union()", "options[0]"),
        (lambda: s.nullable(s.optional(s.string())), "s.nullable()", "schema"),
        (lambda: s.record(s.optional(s.string())), "s.record()", "values"),
        (lambda: s.record(str), "s.record()", "values"),
        (lambda: s.optional(s.optional(s.string())), "s.optional()", "schema"),
        (lambda: s.optional(s.array(s.string()), default=("a",)), "s.optional()", "default"),
        (lambda: s.optional(s.ref("fs.path"), default={1, 2}), "s.optional()", "default"),
        (lambda: s.ref("Bad name"), "s.ref()", "name"),
        (lambda: s.ref(""), "s.ref()", "name"),
        (lambda: s.ref("fs..path"), "s.ref()", "name"),
        (lambda: s.ref("a" * 65), "s.ref()", "name"),
        (lambda: s.ref(1), "s.ref()", "name"),
    ],
)
def test_malformed_declarations_fail_when_built(build: Callable[[], s.Schema], declaration: str, field: str) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        build()
    error = caught.value
    assert error.code == "INVALID_DEFINITION"
    assert (error.declaration, error.field) == (declaration, field)
    assert str(error).startswith(f"{declaration}: {field} ")


def test_golden_definition_messages() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.integer(minimum=5, maximum=1)
    assert str(caught.value) == "s.integer(): minimum is 5, greater than maximum 1; it must be at most maximum."
    with pytest.raises(InvalidDefinitionError) as caught:
        s.number(exclusive_minimum=1, maximum=1)
    assert str(caught.value) == (
        "s.number(): exclusive_minimum is 1, not less than maximum 1; it must be less than maximum."
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        s.number(multiple_of=0)
    assert str(caught.value) == "s.number(): multiple_of must be a positive number or None, got 0."
    with pytest.raises(InvalidDefinitionError) as caught:
        s.array(s.optional(s.string()))
    assert str(caught.value) == (
        "s.array(): items is s.optional(...), which only marks a field of s.object({...}); pass the inner schema."
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        s.optional(s.integer(), default=(1, 2))
    assert str(caught.value) == "s.optional(): default must be a JSON value: default must be a JSON value, got tuple."


@pytest.mark.parametrize(
    ("inner", "default", "detail"),
    [
        (s.integer(), "x", "default must be an integer, got string"),
        (s.integer(), None, "default must be an integer, got null"),
        (s.integer(minimum=1), 0, "default must be at least 1"),
    ],
)
def test_a_default_that_does_not_match_is_reported_where_the_schema_is_first_used(
    inner: s.Schema, default: object, detail: str
) -> None:
    # s.optional() cannot know which tool and field it is for, so it records the problem;
    # define_tool names both (tests/test_tool.py), and a bare parse names the field.
    field = s.optional(inner, default=default)
    assert field.default_issue is not None
    schema = s.object({"options": s.object({"limit": field})})
    with pytest.raises(InvalidDefinitionError) as caught:
        schema.parse({"options": {}})
    assert str(caught.value) == f's.optional(): default of field "options.limit" does not match its schema: {detail}.'
    with pytest.raises(InvalidDefinitionError):
        s.array(schema).parse([])  # the first use raises, whatever the value


def test_a_default_that_matches_is_stored_parsed() -> None:
    field = s.optional(s.integer(), default=2.0)
    assert field.default == 2
    assert type(field.default) is int
    assert s.optional(s.nullable(s.integer()), default=None).default is None


# -- numbers too large for a float, defaults too deep: refused when built, never an OverflowError ---


FLOAT_MAX = 1.7976931348623157e308


@pytest.mark.parametrize(
    ("build", "declaration", "field", "shown"),
    [
        (lambda: s.integer(maximum=10**400), "s.integer()", "maximum", "an integer of 401 digits"),
        (lambda: s.number(minimum=-(10**309)), "s.number()", "minimum", "an integer of 310 digits"),
        (lambda: s.integer(minimum=10**5000), "s.integer()", "minimum", "an integer of more than 4300 digits"),
        (lambda: s.literal(10**400), "s.literal()", "value", "an integer of 401 digits"),
        (lambda: s.enum([1, -(10**400)]), "s.enum()", "values[1]", "an integer of 401 digits"),
    ],
)
def test_a_declared_number_too_large_for_a_float_is_an_invalid_definition(
    build: Callable[[], s.Schema], declaration: str, field: str, shown: str
) -> None:
    # A JSON Schema reader holds numbers as 64-bit floats: such a bound would read as infinity there.
    with pytest.raises(InvalidDefinitionError) as caught:
        build()
    assert (caught.value.declaration, caught.value.field) == (declaration, field)
    assert caught.value.detail == f"must be a number within a 64-bit float's range (about 1.8e308), got {shown}"


@pytest.mark.parametrize(
    ("build", "low", "high"),
    [(s.string, "min_length", "max_length"), (lambda **bounds: s.array(s.any(), **bounds), "min_items", "max_items")],
    ids=["string", "array"],
)
def test_a_length_bound_longer_than_any_length_is_an_invalid_definition(
    build: Callable[..., s.Schema], low: str, high: str
) -> None:
    for bound in (2**63, 10**5000):
        for bounds in ({high: bound}, {low: bound, high: 1}):
            with pytest.raises(InvalidDefinitionError) as caught:
                build(**bounds)
            assert "must be at most 9223372036854775807, the longest a length can be, got " in caught.value.detail


def test_the_largest_bounds_a_float_holds_are_accepted_and_export_as_json() -> None:
    biggest = int(FLOAT_MAX)  # 309 digits
    schema = s.integer(minimum=-biggest, maximum=biggest)
    assert json.loads(json.dumps(schema.json_schema())) == {"type": "integer", "minimum": -biggest, "maximum": biggest}
    assert s.number(maximum=FLOAT_MAX).json_schema() == {"type": "number", "maximum": FLOAT_MAX}
    assert s.literal(biggest).parse(float(biggest)) == biggest
    with pytest.raises(InvalidDefinitionError):
        s.integer(maximum=biggest + 2**971)  # the next float would be infinity


@pytest.mark.parametrize("huge", [10**400, -(10**400), 10**5000], ids=["1e400", "-1e400", "1e5000"])
def test_huge_integers_parse_against_float_bounds_without_overflow(huge: int) -> None:
    word, sign = ("most", "") if huge > 0 else ("least", "-")
    for schema, bound in (
        (s.number(minimum=-1.5, maximum=1.5), "1.5"),
        (s.integer(minimum=-1e308, maximum=1e308), "1e+308"),
    ):
        error = parse_error(schema, huge)
        assert [(issue.path, issue.kind) for issue in error.issues] == [((), f"too_{'big' if huge > 0 else 'small'}")]
        assert str(error) == f"value is invalid: value must be at {word} {sign}{bound}."
    assert s.number().parse(huge) == huge  # an integer is a JSON number, however long


def nested_list(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [101, 500, 990, 5_000, 100_000])
def test_a_default_nested_too_deep_is_an_invalid_definition_not_a_recursion_error(depth: int) -> None:
    for inner in (s.any(), s.array(s.any()), s.record(s.any())):
        default: Any = nested_list(depth) if not isinstance(inner, s.RecordSchema) else {"a": nested_list(depth)}
        with pytest.raises(InvalidDefinitionError) as caught:
            s.optional(inner, default=default)
        assert (caught.value.declaration, caught.value.field) == ("s.optional()", "default")
        assert caught.value.detail in (
            "must nest arrays and objects at most 100 levels deep, got more",
            "must be a JSON value: default is nested too deeply to check",
        )


def test_a_default_of_a_hundred_levels_is_copied_exported_and_parsed() -> None:
    field = s.optional(s.any(), default=nested_list(100))
    schema = s.object({"tree": field})
    assert schema.parse({}) == {"tree": nested_list(100)}
    assert json.dumps(schema.json_schema(), indent=2).count("[") == 100
    with pytest.raises(InvalidDefinitionError) as caught:
        s.optional(s.any(), default={"a": [1, {"b": 10**309}]})
    assert caught.value.detail == (
        "must hold numbers within a 64-bit float's range (about 1.8e308), got an integer of 310 digits"
    )


def test_bounds_may_be_equal_and_zero() -> None:
    assert s.string(min_length=0, max_length=0).parse("") == ""
    assert s.integer(minimum=-1, maximum=-1).parse(-1) == -1


# -- JSON Schema export --------------------------------------------------------------------------


def test_json_schema_of_an_object() -> None:
    exported = WRITE.json_schema()
    assert exported == {
        "type": "object",
        "description": "What to write",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "Where to write"},
            "mode": {"enum": ["w", "a"], "default": "w"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "size": {"type": "integer", "minimum": 0},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    assert list(exported["properties"]) == ["path", "mode", "tags", "size"]


@pytest.mark.parametrize(
    ("schema", "exported"),
    [
        (s.string(max_length=3, pattern="^a"), {"type": "string", "maxLength": 3, "pattern": "^a"}),
        (s.string(format="date-time"), {"type": "string", "format": "date-time"}),
        (s.integer(minimum=0, maximum=5), {"type": "integer", "minimum": 0, "maximum": 5}),
        (s.number(minimum=0.5), {"type": "number", "minimum": 0.5}),
        (
            s.integer(minimum=0, exclusive_minimum=0, exclusive_maximum=9, multiple_of=3),
            {"type": "integer", "minimum": 0, "exclusiveMinimum": 0, "exclusiveMaximum": 9, "multipleOf": 3},
        ),
        (s.number(multiple_of=0.25), {"type": "number", "multipleOf": 0.25}),
        (s.boolean(), {"type": "boolean"}),
        (s.null(), {"type": "null"}),
        (s.literal(1), {"const": 1}),
        (s.const({"a": [1, None]}), {"const": {"a": [1, None]}}),
        (
            s.array(s.string(), unique_items=True),
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        ),
        (s.enum([1, "a", None]), {"enum": [1, "a", None]}),
        (
            s.array(s.integer(), min_items=1, max_items=2),
            {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
        ),
        (s.object({}), {"type": "object", "properties": {}, "additionalProperties": False}),
        (
            s.object({"a": s.null()}, extra="allow"),
            {"type": "object", "properties": {"a": {"type": "null"}}, "required": ["a"]},
        ),
        (s.object({}, extra="ignore"), {"type": "object", "properties": {}}),
        (s.record(s.string()), {"type": "object", "additionalProperties": {"type": "string"}}),
        (s.union(s.string(), s.null()), {"anyOf": [{"type": "string"}, {"type": "null"}]}),
        (s.nullable(s.integer()), {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (s.any(), {}),
        (s.ref("fs.path"), {"$ref": "#/$defs/fs.path"}),
    ],
)
def test_json_schema_of_each_combinator(schema: s.Schema, exported: dict[str, Any]) -> None:
    assert schema.json_schema() == exported
    jsonschema.Draft202012Validator.check_schema(exported)


def test_json_schema_is_a_new_dict_each_time() -> None:
    first = WRITE.json_schema()
    first["properties"]["path"]["type"] = "integer"
    assert WRITE.json_schema()["properties"]["path"]["type"] == "string"


def test_exported_schema_agrees_with_parse_on_examples() -> None:
    validator = jsonschema.Draft202012Validator(WRITE.json_schema())
    for value in ({"path": "p"}, {"path": ""}, {"path": "p", "pth": 1}, {"path": "p", "size": 1.0}, {"mode": "w"}):
        try:
            WRITE.parse(value)
        except SchemaError:
            accepted = False
        else:
            accepted = True
        assert validator.is_valid(value) is accepted


# -- named schemas: s.ref ------------------------------------------------------------------------


TREE = s.object(
    {
        "name": s.string(min_length=1),
        "children": s.optional(s.array(s.ref("test.tree")), default=[]),
    }
)
REFS = {"test.tree": TREE, "fs.path": s.string(min_length=1, pattern="^[^/]")}


def deep_tree(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {"name": "n"}
    current = root
    for _ in range(depth):
        child: dict[str, Any] = {"name": "n"}
        current["children"] = [child]
        current = child
    return root


def test_a_ref_resolves_through_the_given_schemas() -> None:
    validator = compile_schema(s.object({"path": s.ref("fs.path")}), REFS)
    assert validator.run({"path": "a.txt"}) == (True, {"path": "a.txt"}, ())
    ok, _, found = validator.run({"path": "/etc"})
    assert not ok
    assert [(i.path, i.kind) for i in found] == [(("path",), "pattern")]
    ok, _, found = validator.run({})
    assert [issue.message() for issue in found] == ['"path" is required (a string)']


def test_a_recursive_named_schema_parses_a_tree() -> None:
    validator = compile_schema(s.ref("test.tree"), REFS)
    ok, parsed, _ = validator.run({"name": "root", "children": [{"name": "a"}, {"name": "b", "children": []}]})
    assert ok
    assert parsed == {
        "name": "root",
        "children": [{"name": "a", "children": []}, {"name": "b", "children": []}],
    }
    ok, _, found = validator.run({"name": "root", "children": [{"name": "a", "children": [{"name": ""}]}]})
    assert not ok
    assert [(i.path, i.kind) for i in found] == [(("children", 0, "children", 0, "name"), "too_small")]


def test_a_deep_input_to_a_recursive_schema_is_too_deep_not_a_recursion_error() -> None:
    validator = compile_schema(s.ref("test.tree"), REFS)
    assert validator.run(deep_tree(50))[0]
    ok, _, found = validator.run(deep_tree(100_000))
    assert not ok
    assert [(i.path, i.kind) for i in found] == [((), "too_deep")]


def test_a_ref_to_an_unregistered_name_fails_when_compiled() -> None:
    with pytest.raises(InvalidDefinitionError, match="not registered"):
        compile_schema(s.array(s.ref("no.such")), REFS)


def test_a_bare_schema_with_a_ref_cannot_parse() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        s.object({"path": s.ref("fs.path")}).parse({"path": "p"})
    assert caught.value.declaration == "s.ref('fs.path')"


def test_ref_names_lists_every_reference() -> None:
    schema = s.object({"a": s.ref("a.one"), "b": s.array(s.union(s.ref("b.two"), s.nullable(s.ref("a.one"))))})
    assert list(schema.ref_names()) == ["a.one", "b.two", "a.one"]
    assert list(s.string().ref_names()) == []


def test_json_schema_with_defs_stands_alone() -> None:
    schema = s.object({"root": s.ref("test.tree"), "path": s.ref("fs.path")})
    exported = schema.json_schema(defs=REFS)
    assert exported["properties"]["root"] == {"$ref": "#/$defs/test.tree"}
    assert exported["$defs"] == {"fs.path": REFS["fs.path"].json_schema(), "test.tree": TREE.json_schema()}
    jsonschema.Draft202012Validator.check_schema(exported)
    validator = jsonschema.Draft202012Validator(exported)
    assert validator.is_valid({"root": deep_tree(5), "path": "a"})
    assert not validator.is_valid({"root": {"name": "a", "children": [{"name": ""}]}, "path": "a"})
    assert "$defs" not in schema.json_schema()
    assert "$defs" not in s.string().json_schema(defs=REFS)
