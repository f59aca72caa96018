"""Lenient mode, as a call carries it: which tools it repairs, where the repairs go, and the repaired result.

Whoever chose lenient mode (the runtime, a front door) gives a call a
:class:`Repairing`; a call without one repairs nothing and pays nothing. The
call's order (:mod:`hermes_core._runtime._calls`) comes here only where an input check
raised: :func:`repaired_input` repairs the input by lenient mode's rules
(:mod:`hermes_core.schema._repair`), or raises the refusal as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, final

from hermes_core._base import _tracing as tracing
from hermes_core._base._errors import InputInvalidError
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import format_path
from hermes_core._runtime._entries import Entry
from hermes_core._tool._definition import Tool
from hermes_core._tool._resources import logger

if TYPE_CHECKING:
    from hermes_core.schema._repair import Repair

__all__ = ["NO_REPAIR", "RepairedOutput", "Repairing", "observed", "repaired_input", "repairs_tool", "with_repairs"]


def repairs_tool(tool: Tool, lenient: bool) -> bool:
    """Whether lenient mode repairs *tool*'s calls for a caller choosing *lenient*: the tool's own choice wins."""
    return lenient if tool.lenient is None else tool.lenient


@final
class Repairing:
    """One call's lenient mode: which tools it repairs, and where their repairs go.

    Given to a call by whoever chose lenient mode (the runtime, a door); a call
    without it repairs nothing and pays nothing. *repairs* None: the repairs
    are logged and traced only (``call()``), else collected for the caller,
    and the call returns a :class:`RepairedOutput` when there are any.
    """

    __slots__ = ("repairable", "repairs")

    def __init__(self, repairable: frozenset[str], repairs: list[Repair] | None) -> None:
        self.repairable = repairable
        self.repairs = repairs


@final
@frozen
class RepairedOutput:
    """What a call given a collecting :class:`Repairing` returns when it repaired its input.

    Attributes:
        output: the tool's result, as a call that needed no repair returns it.
        repairs: the repairs made to the input, at least one.
    """

    output: Any
    repairs: tuple[Repair, ...]

    def note(self) -> str:
        """The one short line appended to the result a model reads: what was assumed."""
        from hermes_core.schema._repair import repairs_note  # noqa: PLC0415 - only a repaired call needs it

        return repairs_note(self.repairs)


#: A call's lenient mode that repairs nothing: what a caller gives a call it does not want repaired, where the
#: runtime would (a door whose lenient=False wins over a lenient runtime's).
NO_REPAIR: Final = Repairing(frozenset(), None)


def repaired_input(entry: Entry, value: Any, refused: InputInvalidError, repairing: Repairing) -> Any:
    """The parsed input of *value*, which the schema refused (*refused*), repaired; else raise *refused*.

    Called where a call's input check raised, for a call given *repairing*:
    the input is repaired by lenient mode's rules and checked again with the
    same validator (:func:`hermes_core.schema._repair.repair_input`). Each
    repair is logged on the ``hermes_core`` logger, an event of the call's
    span, and collected for the caller when it asked.
    """
    if entry.name not in repairing.repairable:
        raise refused
    from hermes_core.schema._repair import repair_input  # noqa: PLC0415 - only a refused input needs it

    fixed = repair_input(entry.validator, value)
    if fixed is None:
        raise refused
    logger().info("%s: input repaired: %s", entry.name, "; ".join(str(repair) for repair in fixed.repairs))
    if tracing.TRACER is not None:
        _trace_repairs(fixed.repairs)
    if repairing.repairs is not None:
        repairing.repairs.extend(fixed.repairs)
    return fixed.parsed


def with_repairs(result: Any, repairing: Repairing) -> Any:
    """*result*, as a :class:`RepairedOutput` when *repairing* collected repairs."""
    repairs = repairing.repairs
    return RepairedOutput(result, tuple(repairs)) if repairs else result


def observed(result: Any) -> dict[str, Any]:
    """What :meth:`Runtime.observe` returns for a call that succeeded (a repaired one: with its ``repairs``)."""
    if type(result) is not RepairedOutput:
        return {"ok": True, "output": result}
    return {"ok": True, "output": result.output, "repairs": [repair.to_dict() for repair in result.repairs]}


def _trace_repairs(repairs: tuple[Repair, ...]) -> None:
    """Each of *repairs* an event of the current span (the repaired call's)."""
    for repair in repairs:
        tracing.event(
            "hermesos.repair",
            {
                "hermesos.repair.path": format_path(repair.path),
                "hermesos.repair.rule": repair.rule,
                "hermesos.repair.message": str(repair),
            },
        )
