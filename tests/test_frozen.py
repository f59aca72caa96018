"""``@frozen`` makes the class ``dataclass(frozen=True, slots=True)`` would, without ``dataclass``'s costs.

Each shape of class below is declared twice, once with ``@frozen`` and once
with ``dataclass(frozen=True, slots=True)``, and the two are held to the same
fields, signature, slots, ``__match_args__``, instances (repr, equality, hash,
copies, pickles, ``dataclasses.replace``) and errors. What ``@frozen`` does on
purpose otherwise is tested apart: any attribute is refused with
``FrozenInstanceError``, and ``__init__`` comes from a template compiled once
for each shape of fields.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import re
import sys
import typing
from collections.abc import Callable
from dataclasses import field
from typing import Any, ClassVar

import pytest

from hermes_core._base import _frozen
from hermes_core._base._frozen import derive, frozen

# Class bodies, each a shape of fields: defaults, factories, fields left out of __init__, keyword-only ones,
# ClassVars, a field called self, fields named as the template's own names, __post_init__, methods of its own.
BODIES = {
    "plain": "a: int\nb: str",
    "defaults": "a: int\nb: str = 'x'\nc: Any = None",
    "factory": "a: int\nb: list = field(default_factory=list)\nc: int = 3",
    "not in __init__": "a: int\nb: int = field(init=False, default=7)\n"
    "c: list = field(init=False, default_factory=list)",
    "ClassVars": "k: ClassVar[str] = 'kind'\nt: typing.ClassVar[int] = 1\na: int = 0",
    "a field called self": "self: int\nother: int = 2",
    "the template's names": "_1: int\n_0: int\n_10: int = 5",
    "compared, hashed, shown": "a: int\nb: int = field(compare=False)\nc: int = field(hash=False, default=0)\n"
    "d: int = field(repr=False, default=1)",
    "a keyword-only field": "a: int\nb: int = field(kw_only=True)\nc: int = 4",
    "__post_init__": "a: int\nb: int = 0\ndef __post_init__(self):\n    object.__setattr__(self, 'b', self.a * 2)",
    "its own __eq__": "a: int\ndef __eq__(self, other):\n    return True",
    "its own __hash__": "a: int\ndef __hash__(self):\n    return 7",
    "no fields": "pass",
}
OPTIONS: list[dict[str, bool]] = [{}, {"kw_only": True}, {"eq": False}, {"repr": False}, {"init": False}]
# Arguments to make an instance with: most of them fail for most shapes, with the same TypeError either way.
CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((), {}),
    ((1,), {}),
    ((1, "y"), {}),
    ((1, 2, 3), {}),
    ((), {"a": 1}),
    ((), {"a": 1, "b": 2}),
    ((1,), {"b": 2}),
    ((), {"self": 1}),
    ((), {"_0": 1, "_1": 2}),
]
NAMESPACE = {"field": field, "Any": Any, "ClassVar": ClassVar, "typing": typing}


def _declare(decorate: Callable[[type], type], body: str, name: str, bases: tuple[type, ...] = ()) -> type:
    """A class *name* with *body*, documented, declared in this module and decorated by *decorate*."""
    namespace: dict[str, Any] = {**NAMESPACE, "__name__": __name__, **{base.__name__: base for base in bases}}
    indented = "\n".join(f"    {line}" for line in body.splitlines())
    exec(f"class {name}({', '.join(base.__name__ for base in bases)}):\n    'A class.'\n{indented}", namespace)
    cls = decorate(namespace[name])
    globals()[name] = cls  # where pickle finds it
    return cls


def _outcome(run: Callable[[], object]) -> object:
    """What *run* returns, or the error it raises, as text."""
    try:
        return run()
    except (TypeError, AttributeError) as error:
        return f"{type(error).__name__}: {error}"


def _shown(value: object) -> str:
    try:
        return re.sub(r" at 0x[0-9a-f]+", "", repr(value))
    except Exception as error:  # a class whose repr reads a field left unset
        return f"{type(error).__name__}: {error}"


def _described(cls: type, calls: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, Any]:
    """What a user of *cls* can see of it, and of instances made with each of *calls*."""
    fields = dataclasses.fields(cls)
    seen: dict[str, Any] = {
        "fields": [
            (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash, f.kw_only) for f in fields
        ],
        "records": sorted(cls.__dataclass_fields__),  # type: ignore[attr-defined]
        "match_args": cls.__dict__.get("__match_args__"),
        "slots": cls.__dict__.get("__slots__"),
        "signature": str(inspect.signature(cls)),
        "doc": cls.__doc__,
        "is_dataclass": dataclasses.is_dataclass(cls),
        "options": [getattr(cls.__dataclass_params__, o) for o in ("init", "repr", "eq", "order")],  # type: ignore[attr-defined]
        "unhashable": cls.__hash__ is None,  # type: ignore[comparison-overlap]
    }
    for args, kwargs in calls:
        try:
            made = cls(*args, **kwargs)
        except TypeError as error:
            seen[f"{args} {kwargs}"] = str(error)
            continue
        seen[f"{args} {kwargs}"] = {
            "repr": _shown(made),
            "values": [getattr(made, f.name, "unset") for f in fields],
            "equal to its copy": _outcome(lambda: made == copy.copy(made)),  # noqa: B023 - called at once
            "hash": _outcome(lambda: hash(made) == hash(copy.deepcopy(made))),  # noqa: B023 - called at once
            "pickled": _outcome(lambda: _shown(pickle.loads(pickle.dumps(made))) == _shown(made)),  # noqa: B023 - called at once
            "replaced": _outcome(lambda: _shown(dataclasses.replace(made))),  # noqa: B023 - called at once
            "has a __dict__": hasattr(made, "__dict__"),
        }
    return seen


@pytest.mark.parametrize("options", OPTIONS, ids=lambda options: ",".join(options) or "default")
@pytest.mark.parametrize("shape", BODIES)
def test_a_frozen_class_is_the_frozen_slotted_dataclass_of_its_body(shape: str, options: dict[str, bool]) -> None:
    ours = _declare(frozen(**options), BODIES[shape], "Ours")
    theirs = _declare(dataclasses.dataclass(frozen=True, slots=True, **options), BODIES[shape], "Theirs")
    calls = CALLS if options.get("init", True) else []  # an instance of init=False has no fields set
    mine, expected = _described(ours, calls), _described(theirs, calls)
    assert mine.keys() == expected.keys()
    for key in expected:
        assert str(mine[key]).replace("Ours", "Theirs") == str(expected[key]), key
    if calls:  # not vacuous: some instances were made and compared
        assert any(isinstance(value, dict) for value in mine.values())


def test_a_subclass_adds_its_fields_after_its_bases_as_dataclass_does() -> None:
    body = "e: int = 5\na: int = 10"
    ours = _declare(frozen, body, "OursSub", (_declare(frozen, BODIES["defaults"], "OursBase"),))
    theirs = _declare(
        dataclasses.dataclass(frozen=True, slots=True),
        body,
        "TheirsSub",
        (_declare(dataclasses.dataclass(frozen=True, slots=True), BODIES["defaults"], "TheirsBase"),),
    )
    assert [f.name for f in dataclasses.fields(ours)] == ["a", "b", "c", "e"]
    mine, expected = _described(ours, CALLS), _described(theirs, CALLS)
    for key in expected:
        assert str(mine[key]).replace("Ours", "Theirs") == str(expected[key]), key


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("a: list = []", "mutable default <class 'list'> for field a is not allowed: use default_factory"),
        ("a: int = 1\nb: int", "non-default argument 'b' follows default argument"),
        ("x = field()", "'x' is a field but has no type annotation"),
        ("k: ClassVar[list] = field(default_factory=list)", "field k cannot have a default factory"),
        ("a: dataclasses.InitVar[int]", "@frozen does not take InitVar fields"),
    ],
)
def test_a_class_dataclass_refuses_is_refused(body: str, error: str) -> None:
    NAMESPACE["dataclasses"] = dataclasses
    with pytest.raises((TypeError, ValueError), match=re.escape(error)):
        _declare(frozen, body, "Refused")
    _declare(frozen, "a: int = 1", "Accepted")  # the same declaration, well formed, is taken


def test_every_attribute_is_refused_naming_the_class_and_the_attribute() -> None:
    cls = _declare(frozen, "a: int", "Point")
    point = cls(1)
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"a Point is immutable once built; .* setting 'a'"):
        point.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="setting 'other'"):  # dataclass's own: a TypeError
        point.other = 2
    with pytest.raises(dataclasses.FrozenInstanceError, match="nothing to delete"):
        del point.a
    assert point.a == 1


def test_derive_sets_a_field_while_the_object_is_made() -> None:
    NAMESPACE["derive"] = derive
    body = "a: int\nb: int = field(init=False, default=0)\ndef __post_init__(self):\n    derive(self, b=self.a + 1)"
    cls = _declare(frozen, body, "Derived")
    assert (cls(1).b, cls(a=2).b) == (2, 3)


def test_classes_of_one_shape_share_one_template_compiled_at_the_first_instance() -> None:
    before = dict(_frozen._TEMPLATES)
    shape = "left: int\nright: str = 'r'\nextra: Any = None"
    first = _declare(frozen, shape, "First")
    second = _declare(frozen, "up: bytes\ndown: float = 0.5\nside: Any = 1", "Second")
    assert str(inspect.signature(first)) == "(left: 'int', right: 'str' = 'r', extra: 'Any' = None) -> None"
    assert len(_frozen._TEMPLATES) - len(before) in (0, 1)  # made for the signature, if its shape is new
    assert (first(1).right, second(b"x").down, second(b"x", side=3).side) == ("r", 0.5, 3)
    added = {key: code for key, code in _frozen._TEMPLATES.items() if key not in before}
    assert len(added) <= 1  # the shape's template: none if another class of this shape came first
    assert first.__init__.__code__.co_code == second.__init__.__code__.co_code  # type: ignore[misc]
    assert first.__init__.__code__.co_varnames == ("self", "left", "right", "extra")  # type: ignore[misc]
    other = _declare(frozen, "left: int = 0\nright: list = field(default_factory=list)", "Other")
    assert other().right == []
    assert other().right is not other().right
    assert other.__init__.__code__.co_code != first.__init__.__code__.co_code  # type: ignore[misc]


def test_a_class_makes_its_init_at_its_first_instance_only() -> None:
    before = dict(_frozen._TEMPLATES)
    shape = "q1: int\nq2: int = 1\nq3: int = 2\nq4: list = field(default_factory=list)\nq5: int = 3\nq6: int = 4"
    never = _declare(frozen, shape, "Never")
    assert len(_frozen._TEMPLATES) == len(before)  # declared, never made: nothing compiled
    assert never.__init__.__qualname__ == "Never.__init__"  # type: ignore[misc]
    deferred = never.__init__  # type: ignore[misc]
    made = never(0)
    assert never.__init__ is not deferred  # type: ignore[misc] # put in its place
    assert (made.q1, made.q4, made.q6) == (0, [], 4)
    assert len(_frozen._TEMPLATES) == len(before) + 1
    with pytest.raises(TypeError, match=re.escape("Never.__init__() missing 1 required positional argument: 'q1'")):
        never()
    with pytest.raises(TypeError, match=re.escape("Again.__init__() missing 1 required positional argument: 'q1'")):
        _declare(frozen, shape, "Again")()  # the first call of a class refused as any later one


def test_the_template_names_no_field_of_the_class() -> None:
    cls = _declare(frozen, "_1: int\n_0: int = 0", "Swapped")
    made = cls(5, 6)
    assert (made._1, made._0) == (5, 6)  # placeholders renamed in one pass: _0 is not read as the field _0
    with pytest.raises(TypeError, match=re.escape("Swapped.__init__() missing 1 required positional argument: '_1'")):
        cls()


@pytest.mark.skipif(sys.flags.optimize > 1, reason="docstrings stripped")
def test_an_undocumented_class_is_named_by_its_signature_as_dataclass_names_it() -> None:
    namespace: dict[str, Any] = {}
    exec("class Bare:\n    a: int\n    b: str = 'x'\n", namespace)
    assert frozen(namespace["Bare"]).__doc__ == "Bare(a: 'int', b: 'str' = 'x')"
