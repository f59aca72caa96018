"""Lenient mode's repairs: a tool's input that failed its check, repaired where that is unambiguous and lossless.

Models, small ones especially, send ``"5"`` for an integer, ``"true"`` for a
boolean, an object as a JSON-encoded string, ``"Celsius"`` for the enum member
``"celsius"``. :func:`repair_input` takes the input validator of a tool and
an input it refused, walks the value beside the schema, and repairs only
these, each where the schema expects what the repair makes and the value as
sent is not accepted there:

* ``numeric_string``: a string that is exactly a JSON number (``"5"``,
  ``"-2.5"``, ``"1e3"``; not ``" 5"``, ``"+5"``, ``"05"``, ``"5."``,
  ``"0x10"``, ``"5_000"``, ``"NaN"``, ``"Infinity"``, nor digits other than
  ASCII's, full-width or Arabic-Indic, which ``int()`` reads) where a number
  or an integer is expected, read as the exact decimal it names and
  repaired only into a value equal to it: where an integer is expected, an
  ``int`` when that decimal is integral (``"5.0"`` and ``"5e0"`` are 5,
  ``"1e25"`` is ``10**25``; ``"5.5"`` is never repaired); where a number is
  expected, what the JSON reader makes of the same text (an ``int`` for
  digits alone, else a ``float``) when that is exactly the value
  (``"2.5"``, ``"1e3"``), else the ``int`` for an integral value no float
  holds (``"1e25"``), else the float whose shortest form is that decimal
  (``"0.1"``, ``"59.9"``: the float the JSON number ``0.1`` reads as), else
  nothing (``"0.1000000000000000000001"`` names a decimal no float's
  shortest form is).
  An integer longer than Python converts (``sys.get_int_max_str_digits()``
  digits) is not made: ``"1e1000000000"`` is refused before any digit is.
  ``"-0"`` becomes 0, as the JSON number ``-0`` reads.
* ``boolean_string``: ``"true"`` or ``"false"`` in any case (``"True"`` is
  how Python writes it) and nothing else (``" true"``, ``"yes"``, ``"on"``,
  ``"1"`` are not), where a boolean is expected.
* ``json_string``: a string holding JSON text of an object where an object is
  expected, or of an array where an array is expected, read with the bounds
  of a call's arguments (:mod:`hermes_core._base._arguments`); what it holds is
  then repaired in turn.
* ``enum_case``: a string that is no member of an enum (or a ``const``) but
  equals exactly one member when case is ignored (``str.lower`` on both
  sides: ``"Celsius"`` is ``"celsius"``; ``"MASSE"`` is not ``"maße"``). A
  numeric or boolean string equal to exactly one member of an enum of numbers
  or booleans is repaired by the first two rules.

Repairs go into objects (fields, and the schema of other keys), arrays,
tuples, records, optional and nullable fields, refs and imported links; in a
union, only when every alternative that accepts the value once repaired
makes the same value of it (an alternative that accepts it as sent: nothing
is repaired there). The repaired input is then checked with the same
validator; if it still fails, nothing is repaired and the caller reports the
original ``INPUT_INVALID``. Every repair is reported, as a :class:`Repair`.

The schema package's API for the layers above (documented, not re-exported by
``hermes_core``; it may change between releases):

* :func:`repair_input` — ``Repaired`` (the input, the parsed value, the
  repairs) or None.
* :class:`Repair`, :class:`Repaired` — the repairs as data.
* :func:`repairs_note` — the one short line a model is shown after its result.
* :data:`REPAIR_RULES` — the rules' names.

Bounded: the work spent on alternatives (trying a union's options) stops at
:data:`REPAIR_STEPS_MAX` steps, and nothing is repaired then.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, final

from hermes_core._base._arguments import JsonTextError, read_json
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import Issue, TooManyIssues, format_path, shorten
from hermes_core.schema._alternatives import (
    AllOfSchema,
    ImportedSchema,
    LinkSchema,
    NullableSchema,
    OneOfSchema,
    OptionalSchema,
    RefSchema,
    UnionSchema,
)
from hermes_core.schema._conditions import AppliedSchema
from hermes_core.schema._containers import (
    ArraySchema,
    ObjectSchema,
    PatternPropertiesSchema,
    PrefixArraySchema,
    RecordSchema,
    TupleSchema,
)
from hermes_core.schema._evaluation import UnevaluatedSchema
from hermes_core.schema._nodes import (
    BooleanSchema,
    ConstSchema,
    EnumSchema,
    IntegerSchema,
    NumberSchema,
    Schema,
)
from hermes_core.schema._shared import BAD, Context, Path, as_json, json_equal, json_key
from hermes_core.schema._validators import Validator

__all__ = ["REPAIR_RULES", "REPAIR_STEPS_MAX", "Repair", "RepairRule", "Repaired", "repair_input", "repairs_note"]

#: The name of a repair's rule.
RepairRule = Literal["numeric_string", "boolean_string", "json_string", "enum_case"]
#: The rules, in the order the module describes them.
REPAIR_RULES: Final = ("numeric_string", "boolean_string", "json_string", "enum_case")
#: The most steps spent trying alternatives (a union's options, each a walk and a check) in one repair.
REPAIR_STEPS_MAX: Final = 100_000
# How many repairs the note a model reads names, and how long each value it quotes may be.
_NOTE_LISTED = 5
_NOTE_VALUE = 40

# A JSON number, exactly: no sign but "-", no leading zero, digits on both sides of ".", ASCII digits only.
# Groups: the sign, the digits before the point, after it, and the exponent.
_JSON_NUMBER = re.compile(r"(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?\Z", re.ASCII)
# Past this many digits an exponent names no integer Python converts and no float but 0 or infinity.
_EXPONENT_DIGITS = 20
# No float has more than 1074 digits after the point (2**-1074 is the smallest); one with more is no float.
_FLOAT_PLACES = 1074
_BOOLEANS: Final = {"true": True, "false": False}


def _boolean(text: str) -> bool | None:
    """The boolean *text* names (``true`` or ``false``, in any case), or None."""
    return _BOOLEANS.get(text.lower()) if len(text) <= 5 else None  # no lowering of a long text: "false" is 5


@final
@frozen
class Repair:
    """One repair of a tool's input: where, what was sent, what it became, by which rule.

    Attributes:
        path: where, from the input's root, as issues give it (``str`` keys, ``int`` indices).
        sent: the value the model sent there.
        became: the value it was read as.
        rule: the rule that repaired it, one of :data:`REPAIR_RULES`.
    """

    path: Path
    sent: Any
    became: Any
    rule: RepairRule

    def __str__(self) -> str:
        """The repair in words: ``"radius": "5" read as 5``, ``"where": an object sent as a string of JSON, ...``."""
        where = f'"{format_path(self.path)}"' if self.path else "the input"
        if self.rule == "json_string":
            held = "an object" if isinstance(self.became, dict) else "an array"
            return f"{where}: {held} sent as a string of JSON, read as {held}"
        return f"{where}: {_quoted(self.sent)} read as {_quoted(self.became)}"

    def to_dict(self) -> dict[str, Any]:
        """The repair as JSON data, as an issue is in an error's ``to_dict()``: the path a list, and the words."""
        return {
            "path": list(self.path),
            "sent": self.sent,
            "became": self.became,
            "rule": self.rule,
            "message": str(self),
        }


@final
@frozen
class Repaired:
    """An input that failed its check, repaired, and checked again with the same validator.

    Attributes:
        input: the input with the repairs made: what the model should have sent.
        parsed: what the validator made of it (defaults filled in): what the handler is given.
        repairs: every repair, in the order the walk met them (at least one).
    """

    input: Any
    parsed: Any
    repairs: tuple[Repair, ...]


def repairs_note(repairs: Sequence[Repair]) -> str:
    """The one short line a model is shown after a repaired call's result: what was assumed.

    At most five repairs are named, each value shortened; the line ends by
    asking for the values as read next time, so that the next call needs no repair.
    """
    listed = "; ".join(str(repair) for repair in repairs[:_NOTE_LISTED])
    more = len(repairs) - _NOTE_LISTED
    if more > 0:
        listed += f"; and {more} more"
    return f"Note: the arguments were repaired before the call: {listed}. Next time, send them as read."


def repair_input(validator: Validator, value: Any) -> Repaired | None:
    """*value*, which *validator* refused, repaired by the rules of the module and checked again; or None.

    Args:
        validator: the tool's input validator (``Tool.validators(schemas)[0]``):
            its schema is walked beside the value, its named schemas resolve
            ``s.ref``, and it checks the repaired input.
        value: the input as the model sent it (arguments already read from
            JSON text); never changed: a repaired input is a new value.

    Returns:
        The repaired input, its parsed value and the repairs, when at least
        one rule applied and the repaired input passes the validator; None
        when no rule applies, or the input still fails once repaired (the
        caller then reports the original issues), or the work on
        alternatives passed :data:`REPAIR_STEPS_MAX`.
    """
    walk = _Walk(validator.refs)
    try:
        repaired = walk.fix(validator.schema, value, ())  # type: ignore[arg-type] # the validator's schema is a node
    # _GiveUp, RecursionError, and anything a rule meets in a hostile value: a repair is only ever an offer,
    # and a call it cannot repair gets the error it would have had without lenient mode, never a worse one.
    except Exception:
        return None
    if not walk.repairs:
        return None
    ok, parsed, _ = validator.run(repaired)
    if not ok:
        return None
    return Repaired(repaired, parsed, tuple(walk.repairs))


# -- the walk ---------------------------------------------------------------------------------------


class _GiveUp(Exception):  # noqa: N818 - control flow inside the walk, never raised to a caller
    """The work on alternatives passed REPAIR_STEPS_MAX: nothing is repaired."""


class _Walk:
    """One repair: the named schemas, the repairs found, the steps left, the JSON texts already read."""

    __slots__ = ("active", "parsed_texts", "refs", "repairs", "steps")

    def __init__(self, refs: Mapping[str, Any]) -> None:
        self.refs = refs
        self.repairs: list[Repair] = []
        self.steps = REPAIR_STEPS_MAX
        self.active: set[tuple[int, int]] = set()  # (link, value) pairs being walked: a union may reach itself
        self.parsed_texts: dict[int, tuple[str, Any]] = {}  # id of a string -> (it, what it holds, or BAD)

    def spend(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _GiveUp

    def note(self, path: Path, sent: Any, became: Any, rule: RepairRule) -> Any:
        self.repairs.append(Repair(path, sent, became, rule))
        return became

    def accepts(self, node: Schema, value: Any) -> bool:
        """Whether *node* accepts *value* as it is (the reference walk, as a union tries an option)."""
        self.spend()
        issues: list[Issue] = []
        try:
            return node._collect(value, (), issues, Context(self.refs)) is not BAD and not issues
        except TooManyIssues:
            return False

    def fix(self, node: Schema, value: Any, path: Path) -> Any:
        """*value* with what *node* expects there repaired, each repair noted; *value* itself if none applies."""
        if isinstance(node, OptionalSchema | ImportedSchema):
            return self.fix(node.schema if isinstance(node, OptionalSchema) else node.root, value, path)
        if isinstance(node, LinkSchema | RefSchema):
            return self.followed(node, value, path)
        if isinstance(node, NullableSchema):
            return value if value is None else self.fix(node.schema, value, path)
        if isinstance(node, UnionSchema | OneOfSchema):
            return self.choice(node.options, value, path)
        if isinstance(node, AllOfSchema):
            for part in node.parts:
                value = self.fix(part, value, path)
            return value
        if isinstance(node, AppliedSchema | UnevaluatedSchema):  # the shape is its base's: the checks repair nothing
            return self.fix(node.base, value, path)
        if isinstance(node, IntegerSchema | NumberSchema):
            return self.number(isinstance(node, IntegerSchema), value, path)
        if isinstance(node, BooleanSchema):
            said = _boolean(value) if type(value) is str else None
            return value if said is None else self.note(path, value, said, "boolean_string")
        if isinstance(node, EnumSchema | ConstSchema):
            members = node.values if isinstance(node, EnumSchema) else (node.value,)
            return self.member(members, value, path)
        if isinstance(node, ObjectSchema | RecordSchema | PatternPropertiesSchema):
            return self.object(node, self.decoded(value, dict, path), path)
        if isinstance(node, ArraySchema | TupleSchema | PrefixArraySchema):
            return self.array(node, self.decoded(value, list, path), path)
        return value  # a string, null, any, never: no rule makes one of those

    def followed(self, node: LinkSchema | RefSchema, value: Any, path: Path) -> Any:
        if isinstance(node, RefSchema):
            target = self.refs.get(node.name)
            return value if target is None else self.fix(target, value, path)
        key = (id(node), id(value))
        if key in self.active:  # reached again without going into the value: nothing more to find here
            return value
        self.active.add(key)
        try:
            return self.fix(node.follow(), value, path)
        finally:
            self.active.discard(key)

    # -- scalars ------------------------------------------------------------------------------------

    def number(self, integer: bool, value: Any, path: Path) -> Any:
        if type(value) is not str:
            return value
        number = _number(value, integer)
        return value if number is None else self.note(path, value, number, "numeric_string")

    def member(self, members: tuple[Any, ...], value: Any, path: Path) -> Any:
        if type(value) is not str or any(json_equal(value, member) for member in members):
            return value
        lowered = value.lower()
        same = [member for member in members if type(member) is str and member.lower() == lowered]
        if len(same) == 1:
            return self.note(path, value, same[0], "enum_case")
        said = _boolean(value)
        if said is not None and any(type(member) is bool and member is said for member in members):
            return self.note(path, value, said, "boolean_string")
        number = _number(value, integer=False)
        if number is not None:
            equal = [m for m in members if type(m) in (int, float) and json_equal(m, number)]
            if len(equal) == 1:
                return self.note(path, value, equal[0], "numeric_string")
        return value

    # -- containers ---------------------------------------------------------------------------------

    def decoded(self, value: Any, kind: type, path: Path) -> Any:
        """*value*, or, if it is a string holding JSON text of a *kind* (dict or list), what it holds."""
        if type(value) is not str:
            return value
        seen = self.parsed_texts.get(id(value))
        if seen is None or seen[0] is not value:
            try:
                held = read_json(value)
            except JsonTextError:
                held = BAD
            seen = (value, held)
            self.parsed_texts[id(value)] = seen
        held = seen[1]
        if type(held) is not kind:
            return value
        return self.note(path, value, held, "json_string")

    def object(self, node: ObjectSchema | RecordSchema | PatternPropertiesSchema, value: Any, path: Path) -> Any:
        if type(value) is not dict:
            return value
        fields: Mapping[str, Schema] = {}
        other: Schema | None = None
        if isinstance(node, ObjectSchema):
            fields = dict(node.field_items)
            other = node.extra if isinstance(node.extra, Schema) else None
        elif isinstance(node, RecordSchema):
            other = node.values
        elif isinstance(node.base, ObjectSchema):
            # A key a pattern matches is checked by every schema that matches it: only named fields are repaired.
            fields = dict(node.base.field_items)
        out: dict[Any, Any] | None = None
        for key, item in value.items():
            sub = fields.get(key, other) if type(key) is str else None
            if sub is None:
                continue
            new = self.fix(sub, item, (*path, key))
            if new is not item:
                if out is None:
                    out = dict(value)
                out[key] = new
        return value if out is None else out

    def array(self, node: ArraySchema | TupleSchema | PrefixArraySchema, value: Any, path: Path) -> Any:
        if type(value) is not list:
            return value
        out: list[Any] | None = None
        for index, item in enumerate(value):
            if isinstance(node, ArraySchema):
                sub: Schema | None = node.items
            elif isinstance(node, TupleSchema):
                sub = node.items[index] if index < len(node.items) else None
            else:
                sub = node.prefix[index] if index < len(node.prefix) else node.rest
            if sub is None:
                break
            new = self.fix(sub, item, (*path, index))
            if new is not item:
                if out is None:
                    out = list(value)
                out[index] = new
        return value if out is None else out

    # -- alternatives -------------------------------------------------------------------------------

    def choice(self, options: tuple[Schema, ...], value: Any, path: Path) -> Any:
        """*value* repaired for the one outcome the options agree on; as it is if one accepts it, or none agree."""
        if any(self.accepts(option, value) for option in options):
            return value
        outcomes: dict[Any, tuple[Any, list[Repair]]] = {}
        for option in options:
            kept = self.repairs
            self.repairs = []
            try:
                new = self.fix(option, value, path)
                found = self.repairs
            finally:
                self.repairs = kept
            if found and self.accepts(option, new):
                outcomes.setdefault(json_key(new), (new, found))
        if len(outcomes) != 1:
            return value
        ((new, found),) = outcomes.values()
        self.repairs.extend(found)
        return new


def _number(text: str, integer: bool) -> int | float | None:
    """The number *text* names, exactly, for an integer or a number; None if it is no JSON number, or no such value.

    The value the text names is its exact decimal; the repair is a value
    equal to it (see the module), never one rounded to a float, and never an
    integer of more digits than Python converts, decided before one is made.
    """
    match = _JSON_NUMBER.match(text)
    if match is None:
        return None
    sign, whole, fraction, exponent = match.groups()
    if fraction is None and exponent is None:  # digits alone: an int, as the JSON reader reads them
        try:
            return int(text)
        except ValueError:  # longer than Python converts: as the arguments' reader, not read
            return None
    fraction = fraction or ""
    digits = whole + fraction
    significant = digits.strip("0")
    if not significant:  # zero, whatever the exponent: 0 for an integer, the float (0.0 or -0.0) for a number
        return 0 if integer else float(text)
    if len(significant) > _digits_max():
        return None  # a longer integer is not converted, and no float has this many significant digits
    power = exponent.lstrip("+-").lstrip("0") if exponent else ""
    if len(power) > _EXPONENT_DIGITS:
        return None
    scale = (-1 if exponent and exponent[0] == "-" else 1) * int(power or "0") - len(fraction)
    scale += len(digits) - len(digits.rstrip("0"))  # the value is ±significant * 10**scale, ending in 1-9
    if scale >= 0:
        if len(significant) + scale > _digits_max():
            return None
        exact: int = int(significant) * 10**scale
        exact = -exact if sign else exact
        if integer:
            return exact
        number = float(text)
        return number if number == exact else exact  # an int and a float compare exactly
    if integer or -scale > _FLOAT_PLACES:
        return None
    number = float(text)
    if not math.isfinite(number):
        return None
    numerator, denominator = number.as_integer_ratio()
    said = -int(significant) if sign else int(significant)
    if numerator * 10**-scale == said * denominator:
        return number  # the float is that decimal, exactly ("0.5", "59.75")
    # The float's shortest form is the text's decimal ("0.1", "59.9"): the JSON number of the same text, which the
    # model would have sent unquoted, reads as this very float. More digits than it keeps ("0.1000000000000000000001")
    # name another decimal, and are not repaired.
    return number if _decimal(repr(number)) == (bool(sign), significant, scale) else None


def _decimal(text: str) -> tuple[bool, str, int] | None:
    """A JSON number's text as (negative, significant digits without end zeros, power of ten), or None."""
    match = _JSON_NUMBER.match(text)
    if match is None:
        return None
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or ""
    digits = whole + fraction
    power = int(exponent) if exponent else 0
    return bool(sign), digits.strip("0"), power - len(fraction) + len(digits) - len(digits.rstrip("0"))


def _digits_max() -> int:
    """The most digits Python converts between an integer and text (its default if the limit is off)."""
    return sys.get_int_max_str_digits() or sys.int_info.default_max_str_digits


def _quoted(value: Any) -> str:
    """*value* as JSON, shortened for the note."""
    try:
        written = as_json(value)
    except (TypeError, ValueError):
        written = repr(value)
    return shorten(written, _NOTE_VALUE)
