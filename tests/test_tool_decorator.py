"""@tool: a tool from a function's type hints and docstring, the same as define_tool makes it."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pytest

from hermes_core import Approval, ApprovalRequest, Ask, InvalidDefinitionError, Runtime, Tool, define_tool, reject, tool
from hermes_core import schema as s
from hermes_core.testing import issues, raises_code


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0


@dataclasses.dataclass
class Box:
    """A box of points."""

    corners: list[Point]
    tags: list[str] = dataclasses.field(default_factory=list)


class Options(TypedDict):
    depth: int
    label: NotRequired[str]


class Loose(TypedDict, total=False):
    a: int
    b: str


def _tool(function: Callable[..., Any], **options: Any) -> Tool:
    return tool(name="demo.run", version="1.0.0", **options)(function)


# -- golden: the exported schema, and define_tool's with the same s.* schema ---------------------------


def f_scalars(text: str, count: int, ratio: float, flag: bool, nothing: None, anything: Any) -> None:
    """Scalars."""


def f_containers(
    names: list[str], pair: tuple[int, str], many: tuple[float, ...], table: dict[str, int], seq: Sequence[bool]
) -> None:
    """Containers."""


def f_choices(mode: Literal["r", "w"], color: Color, level: Level, one: Literal[3]) -> None:
    """Choices."""


def f_unions(a: int | None, b: Optional[str], c: int | str, d: Union[int, str, None]) -> None:  # noqa: UP045, UP007
    """Unions, written both ways."""


def f_defaults(limit: int = 10, mode: Literal["r", "w"] = "r", color: Color = Color.BLUE, tags: list[str] = []) -> None:  # noqa: B006
    """Defaults."""


def f_records(options: Options, loose: Loose, point: Point, box: Box) -> None:
    """Records."""


def f_annotated(
    text: Annotated[str, s.string(min_length=1, max_length=80)],
    note: Annotated[str, "What to remember"],
    both: Annotated[int, s.integer(minimum=0), "How many"],
    maybe: Annotated[int | None, "A number, or null"] = None,
) -> None:
    """Annotated."""


def f_nested(grid: list[list[int]], lookup: dict[str, list[Point]], tagged: list[tuple[str, Color]] | None) -> None:
    """Nested."""


POINT = s.object({"x": s.number(), "y": s.optional(s.number(), default=0.0)})
GOLDEN: list[tuple[Callable[..., Any], s.Schema]] = [
    (
        f_scalars,
        s.object(
            {
                "text": s.string(),
                "count": s.integer(),
                "ratio": s.number(),
                "flag": s.boolean(),
                "nothing": s.null(),
                "anything": s.any(),
            }
        ),
    ),
    (
        f_containers,
        s.object(
            {
                "names": s.array(s.string()),
                "pair": s.tuple(s.integer(), s.string()),
                "many": s.array(s.number()),
                "table": s.record(s.integer()),
                "seq": s.array(s.boolean()),
            }
        ),
    ),
    (
        f_choices,
        s.object(
            {"mode": s.enum(["r", "w"]), "color": s.enum(["red", "blue"]), "level": s.enum([1, 2]), "one": s.literal(3)}
        ),
    ),
    (
        f_unions,
        s.object(
            {
                "a": s.nullable(s.integer()),
                "b": s.nullable(s.string()),
                "c": s.union(s.integer(), s.string()),
                "d": s.nullable(s.union(s.integer(), s.string())),
            }
        ),
    ),
    (
        f_defaults,
        s.object(
            {
                "limit": s.optional(s.integer(), default=10),
                "mode": s.optional(s.enum(["r", "w"]), default="r"),
                "color": s.optional(s.enum(["red", "blue"]), default="blue"),
                "tags": s.optional(s.array(s.string()), default=[]),
            }
        ),
    ),
    (
        f_records,
        s.object(
            {
                "options": s.object({"depth": s.integer(), "label": s.optional(s.string())}),
                "loose": s.object({"a": s.optional(s.integer()), "b": s.optional(s.string())}),
                "point": POINT,
                "box": s.object(
                    {"corners": s.array(POINT), "tags": s.optional(s.array(s.string()))}, description="A box of points."
                ),
            }
        ),
    ),
    (
        f_annotated,
        s.object(
            {
                "text": s.string(min_length=1, max_length=80),
                "note": s.string(description="What to remember"),
                "both": s.integer(minimum=0, description="How many"),
                "maybe": s.optional(s.nullable(s.integer(), description="A number, or null"), default=None),
            }
        ),
    ),
    (
        f_nested,
        s.object(
            {
                "grid": s.array(s.array(s.integer())),
                "lookup": s.record(s.array(POINT)),
                "tagged": s.nullable(s.array(s.tuple(s.string(), s.enum(["red", "blue"])))),
            }
        ),
    ),
]


@pytest.mark.parametrize(("function", "equivalent"), GOLDEN, ids=[f.__name__ for f, _ in GOLDEN])
def test_the_input_schema_is_what_define_tool_makes_of_the_same_schema(
    function: Callable[..., Any], equivalent: s.Schema
) -> None:
    made = _tool(function)
    explicit = define_tool(
        name="demo.run",
        description=function.__doc__ or "",
        version="1.0.0",
        input=equivalent,
        handler=lambda args: args,
    )
    assert made.input == equivalent
    assert Runtime([made]).definitions()[0]["inputSchema"] == Runtime([explicit]).definitions()[0]["inputSchema"]


def test_golden_json_schema_of_a_documented_tool() -> None:
    @tool(name="notes.add", version="1.2.0", permissions=["notes:write"])
    def add(text: Annotated[str, s.string(max_length=200)], tags: list[str] = [], pinned: bool = False) -> int:  # noqa: B006
        """Add a note; returns its number.

        Notes are kept until deleted.

        Args:
            text: the note.
            tags: words to find it by.
        """
        return 1

    assert add.description == "Add a note; returns its number.\n\nNotes are kept until deleted."
    assert add.permissions == ("notes:write",)
    assert json.dumps(Runtime([add]).definitions()[0], indent=1) == json.dumps(
        {
            "name": "notes.add",
            "description": "Add a note; returns its number.\n\nNotes are kept until deleted.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "maxLength": 200, "description": "the note."},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "default": [],
                        "description": "words to find it by.",
                    },
                    "pinned": {"type": "boolean", "default": False},
                },
                "required": ["text"],
                "additionalProperties": False,
            },
            "outputSchema": {"type": "integer"},
        },
        indent=1,
    )


@pytest.mark.parametrize(
    "style",
    [
        """Search the notes.

        Args:
            text (str): words to look for.
            limit: the most notes to
                return.
        """,
        """Search the notes.

        Parameters
        ----------
        text : str
            words to look for.
        limit : int, optional
            the most notes to
            return.
        """,
        """Search the notes.

        :param text: words to look for.
        :param int limit: the most notes to
            return.
        :returns: the notes.
        """,
    ],
    ids=["google", "numpy", "rest"],
)
def test_parameter_descriptions_come_from_every_docstring_style(style: str) -> None:
    def search(text: str, limit: int = 5) -> list[str]:
        return []

    search.__doc__ = style
    made = _tool(search)
    exported = made.input.json_schema()["properties"]
    assert made.description == "Search the notes."
    assert exported["text"]["description"] == "words to look for."
    assert exported["limit"]["description"] == "the most notes to return."


def test_the_output_schema_comes_from_the_return_annotation() -> None:
    def none(x: int):  # type: ignore[no-untyped-def]
        """No annotation."""

    def points(x: int) -> list[Point]:
        """Points."""
        return []

    def text(x: int) -> Annotated[str, s.string(description="The text")]:
        """Text."""
        return ""

    assert _tool(none).output == s.any()
    assert _tool(points).output == s.array(POINT)
    assert _tool(text).output == s.string(description="The text")


# -- calling: keyword arguments, converted -------------------------------------------------------------


def test_the_handler_gets_its_parameters_as_keyword_arguments_converted_to_their_annotations() -> None:
    seen: dict[str, Any] = {}

    @tool(name="demo.shapes", version="1.0.0")
    def shapes(
        color: Color,
        box: Box,
        pair: tuple[int, Color],
        many: tuple[int, ...],
        maybe: Point | None,
        fav: Color = Color.RED,
    ) -> dict[str, str]:
        """Record what it was given."""
        seen.update(color=color, box=box, pair=pair, many=many, maybe=maybe, fav=fav)
        return {"ok": "yes"}

    runtime = Runtime([shapes])
    result = runtime.call_sync(
        "demo.shapes",
        {"color": "blue", "box": {"corners": [{"x": 1, "y": 2}]}, "pair": [1, "red"], "many": [1, 2], "maybe": None},
    )
    assert result == {"ok": "yes"}
    assert seen == {
        "color": Color.BLUE,
        "box": Box([Point(1, 2)], []),
        "pair": (1, Color.RED),
        "many": (1, 2),
        "maybe": None,
        "fav": Color.RED,
    }
    runtime.call_sync(
        "demo.shapes",
        {"color": "red", "box": {"corners": []}, "pair": [2, "blue"], "many": [], "maybe": {"x": 3}, "fav": "blue"},
    )
    assert seen["maybe"] == Point(3, 0.0)
    assert seen["fav"] is Color.BLUE


def test_a_union_converts_the_way_the_option_that_took_the_value_does() -> None:
    seen: list[Any] = []

    @tool(name="demo.union", version="1.0.0")
    def pick(value: Color | int | Point) -> None:
        """Pick."""
        seen.append(value)

    runtime = Runtime([pick])
    for value in ("red", 7, {"x": 1.5}):
        runtime.call_sync("demo.union", {"value": value})
    assert seen == [Color.RED, 7, Point(1.5)]


def test_a_result_holding_enums_dataclasses_and_tuples_is_checked_as_json() -> None:
    @tool(name="demo.box", version="1.0.0")
    def make_box(n: int) -> Box:
        """Make a box."""
        return Box([Point(i, i) for i in range(n)], ["t"])

    @tool(name="demo.pair", version="1.0.0")
    def make_pair(n: int) -> tuple[int, Color]:
        """Make a pair."""
        return (n, Color.BLUE)

    runtime = Runtime([make_box, make_pair])
    assert runtime.call_sync("demo.box", {"n": 2}) == {"corners": [{"x": 0, "y": 0}, {"x": 1, "y": 1}], "tags": ["t"]}
    assert runtime.call_sync("demo.pair", {"n": 2}) == [2, "blue"]


def test_an_async_function_makes_an_async_tool() -> None:
    @tool(name="demo.wait", version="1.0.0")
    async def wait(seconds: float, color: Color = Color.RED) -> Point:
        """Wait, then answer."""
        await asyncio.sleep(seconds)
        return Point(seconds, 1.0 if color is Color.RED else 2.0)

    assert wait.is_async
    runtime = Runtime([wait])
    assert runtime.call_sync("demo.wait", {"seconds": 0}) == {"x": 0, "y": 1.0}
    assert asyncio.run(runtime.call("demo.wait", {"seconds": 0, "color": "blue"})) == {"x": 0, "y": 2.0}


def test_the_model_gets_located_errors_from_the_derived_schema() -> None:
    @tool(name="notes.search", version="1.0.0")
    def search(text: Annotated[str, s.string(min_length=1)], limit: int = 10, color: Color = Color.RED) -> list[str]:
        """Search the notes."""
        return []

    runtime = Runtime([search])
    with raises_code("INPUT_INVALID") as caught:
        runtime.call_sync("notes.search", {"text": "", "limit": "ten", "colour": "red"})
    assert issues(caught.value) == [("text", "too_small"), ("limit", "type"), ("colour", "unexpected")]
    assert 'did you mean "color"' in str(caught.value)


def test_tool_keeps_what_define_tool_checks_and_offers() -> None:
    @tool(name="demo.slow", version="2.0.0-rc.1", permissions=["demo:run", "demo:run"], timeout=1.5, inline=True)
    def slow(x: int) -> int:
        """Slow."""
        return x

    assert (slow.version, slow.permissions, slow.timeout, slow.inline) == ("2.0.0-rc.1", ("demo:run",), 1.5, True)
    assert slow.handler.__name__ == "slow"
    assert slow.handler.__qualname__.endswith("slow")
    assert slow.handler({"x": 3}) == 3

    @tool(name="demo.kinds", version="1.0.0")
    def kinds(a: int, b: Color = Color.RED, *, c: int, d: Point | None = None) -> tuple[int, Color]:
        """Positional and keyword-only parameters, converted, defaults taken when a direct call leaves them out."""
        return (a + c, b)

    assert kinds.handler({"a": 1, "c": 2}) == [3, "red"]
    assert kinds.handler({"a": 1, "b": "blue", "c": 2, "d": {"x": 1}}) == [3, "blue"]
    assert Runtime([kinds]).call_sync("demo.kinds", {"a": 1, "c": 2}) == [3, "red"]
    with pytest.raises(InvalidDefinitionError, match=r'tool "demo.slow": version must be a semantic version'):
        tool(name="demo.slow", version="2")(f_scalars)


def test_the_description_is_the_docstrings_prose_unwrapped_with_lists_and_code_kept() -> None:
    def f(x: int) -> None:
        """Find notes by words, newest first, and return
        at most limit of them.

        Matching ignores case:
        - "Milk" finds "milk";
        - accents count.

        Example::

            notes.search(text="milk")
        """

    assert _tool(f).description == (
        "Find notes by words, newest first, and return at most limit of them.\n\n"
        'Matching ignores case:\n- "Milk" finds "milk";\n- accents count.\n\n'
        'Example::\n\n    notes.search(text="milk")'
    )


def test_an_explicit_description_wins_over_the_docstring() -> None:
    def undocumented(x: int) -> int:
        return x

    assert _tool(undocumented, description="Echo a number.").description == "Echo a number."


# -- what a call acts on: target=, as define_tool takes it ---------------------------------------------


class Person:
    """An approver answering yes, remembering what it was asked."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return Approval.once()


class AskForWrites:
    """A provider asking a person for every notes:write."""

    def check(self, tool: Tool, permission: str) -> Ask | None:
        return Ask("writes need a person") if permission == "notes:write" else None


def normalised(args: dict[str, Any]) -> str:
    """The path as the tool will use it, from the checked input: refuses '..'."""
    seen.append(dict(args))
    names = [name for name in args["path"].split("/") if name not in ("", ".")]
    if ".." in names:
        raise reject("path", "contains '..'")
    return "/".join(names) or "."


seen: list[dict[str, Any]] = []


def note_tools(target: Any) -> list[Tool]:
    """notes.write naming *target*, and notes.append naming none."""

    @tool(name="notes.write", version="1.0.0", permissions=["notes:write"], target=target)
    def write(path: str, color: Color = Color.RED) -> str:
        """Write a note."""
        return f"wrote {path} in {color.name}"

    @tool(name="notes.append", version="1.0.0", permissions=["notes:write"])
    def append(path: str) -> str:
        """Append to a note."""
        return f"appended to {path}"

    return [write, append]


def test_tool_names_what_a_call_acts_on_for_the_person_asked_from_the_checked_input() -> None:
    seen.clear()
    person = Person()
    runtime = Runtime(note_tools(normalised), providers=[AskForWrites()], approver=person)
    assert runtime.call_sync("notes.write", {"path": "notes/./" + "./" * 300 + "todo.txt"}) == (
        "wrote notes/./" + "./" * 300 + "todo.txt in RED"
    )
    assert person.requests[0].target == "notes/todo.txt"
    # The target reads the checked input, as define_tool's does: defaults filled in, not yet converted.
    assert seen == [{"path": "notes/./" + "./" * 300 + "todo.txt", "color": "red"}]
    # The control: a tool naming no target asks with none.
    assert runtime.call_sync("notes.append", {"path": "notes/todo.txt"}) == "appended to notes/todo.txt"
    assert person.requests[1].target is None
    assert runtime.tools["notes.write"].target is normalised
    assert runtime.tools["notes.append"].target is None


def test_a_target_the_tool_refuses_is_input_invalid_and_nobody_is_asked() -> None:
    person = Person()
    runtime = Runtime(note_tools(normalised), providers=[AskForWrites()], approver=person)
    result = runtime.observe_sync("notes.write", {"path": "notes/../Makefile"})
    assert (result["error"]["code"], result["error"]["issues"][0]["path"]) == ("INPUT_INVALID", ["path"])
    assert person.requests == []
    # The control: the same tool, a path it takes: asked, and run.
    assert runtime.call_sync("notes.write", {"path": "notes/Makefile"}) == "wrote notes/Makefile in RED"
    assert [request.target for request in person.requests] == ["notes/Makefile"]


def test_a_target_that_fails_fails_the_call_as_the_tools_fault() -> None:
    person = Person()
    runtime = Runtime(note_tools(lambda args: 7), providers=[AskForWrites()], approver=person)
    with raises_code("TOOL_FAILED") as caught:
        runtime.call_sync("notes.write", {"path": "a"})
    assert "its target function returned int, not a string, so the call was not made" in caught.value.message
    assert person.requests == []


def test_tool_checks_its_target_as_define_tool_does() -> None:
    def write(path: str) -> str:
        """Write a note."""
        return path

    with pytest.raises(InvalidDefinitionError) as caught:
        _tool(write, target="path")
    with pytest.raises(InvalidDefinitionError) as explicit:
        define_tool(name="demo.run", description="d", version="1.0.0", input=s.object({}), handler=dict, target="path")
    assert caught.value.field == explicit.value.field == "target"
    assert (
        str(caught.value)
        == str(explicit.value)
        == ("tool \"demo.run\": target must be a function of the checked input returning a string, got 'path'.")
    )
    assert _tool(write, target=normalised).target is normalised  # the control: a function is taken
    assert _tool(write).target is None


# -- what it refuses, at decoration time ---------------------------------------------------------------


def _refusal(source: str) -> str:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<test>", "exec"), namespace)
    with pytest.raises(InvalidDefinitionError) as caught:
        _tool(namespace["f"])
    assert caught.value.code == "INVALID_DEFINITION"
    return str(caught.value)


SUPPORTED = (
    "supported: str, int, float, bool, None, Any, list[T], tuple[...], dict[str, T], Literal[...], an Enum, "
    "T | None, a union, a TypedDict, a dataclass, or Annotated[T, schema or description]."
)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "def f(x):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "x" has no annotation; annotate it (such as x: str) so that '
            "the tool's input schema says what it takes.",
        ),
        (
            "def f(x: int, /):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "x" is positional-only, but a tool is given its input as '
            "keyword arguments: remove the / from the signature.",
        ),
        (
            "def f(*rest: int):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "rest" collects positional arguments (*), but a tool is given '
            "its input as keyword arguments: name each parameter the input may hold.",
        ),
        (
            "def f(**more: int):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "more" collects keyword arguments (**), but a tool\'s input '
            "schema names every field: name each parameter the input may hold.",
        ),
        (
            "import datetime\ndef f(when: datetime.datetime):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "when" is annotated datetime, which has no JSON schema here; '
            + SUPPORTED,
        ),
        (
            "def f(x: dict[int, str]):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "x" is annotated dict[int, str]; JSON object keys are strings, '
            "so a dict is dict[str, T].",
        ),
        (
            "def f(x: tuple[int, ...] | set[int]):\n '''Doc.'''",
            'tool "demo.run" (function f): parameter "x" is annotated set[int], which has no JSON schema here; '
            + SUPPORTED,
        ),
        (
            "def f(x: int) -> bytes:\n '''Doc.'''",
            'tool "demo.run" (function f): return annotation is annotated bytes, which has no JSON schema here; '
            + SUPPORTED,
        ),
        (
            "def f(x: 'Missing'):\n '''Doc.'''",
            'tool "demo.run" (function f) has annotations that do not resolve where it is defined: '
            "name 'Missing' is not defined.",
        ),
        (
            "def f(x: int = 'a'):\n '''Doc.'''",
            'tool "demo.run": field "x" has a default that does not match its schema: default must be an integer, '
            "got string.",
        ),
        (
            "def f(limit: int):\n '''Doc.\n\n Args:\n  limt: the most.\n '''",
            'tool "demo.run" (function f): docstring describes "limt", which is not a parameter; did you mean "limit"?',
        ),
        (
            "def f(x: int):\n pass",
            'tool "demo.run" (function f): description is missing: give the function a docstring saying what the '
            "tool does and when to use it (a model reads it to decide whether to call the tool), or pass "
            "description=.",
        ),
    ],
    ids=[
        "no-annotation",
        "positional-only",
        "star-args",
        "star-kwargs",
        "datetime",
        "int-keys",
        "set-in-union",
        "bytes-result",
        "unresolved",
        "bad-default",
        "stray-doc",
        "no-doc",
    ],
)
def test_what_cannot_be_a_tool_is_refused_naming_function_and_parameter(source: str, message: str) -> None:
    assert _refusal(source) == message


@dataclasses.dataclass
class Tree:
    children: list[Tree]


def test_a_recursive_type_is_refused_with_the_way_out() -> None:
    def f(tree: Tree) -> None:
        """Doc."""

    with pytest.raises(InvalidDefinitionError) as caught:
        _tool(f)
    message = str(caught.value)
    assert message == (
        'tool "demo.run" (function test_a_recursive_type_is_refused_with_the_way_out.<locals>.f): parameter "tree" '
        "refers to Tree inside itself; a recursive type needs a named schema (s.ref) declared with define_tool."
    )


def test_only_functions_are_decorated() -> None:
    with pytest.raises(InvalidDefinitionError, match=r'^tool "demo.run" decorates a function, got 42'):
        _tool(42)  # type: ignore[arg-type]
    made = _tool(f_scalars)
    with pytest.raises(InvalidDefinitionError, match=r"already a tool"):
        _tool(made)  # type: ignore[arg-type]
    with pytest.raises(InvalidDefinitionError, match=r'^tool "Bad Name": name must'):
        tool(name="Bad Name", version="1.0.0")(f_scalars)


def test_annotated_metadata_it_does_not_know_is_left_alone() -> None:
    def f(x: Annotated[int, object(), Mapping]) -> None:
        """Doc."""

    assert _tool(f).input == s.object({"x": s.integer()})
