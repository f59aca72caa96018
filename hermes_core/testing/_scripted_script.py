"""The scripted model's script: the replies it is given, and the requests it records.

A reply is a final text, one tool call (:class:`ScriptedCall`), several calls in
one turn (a list of them), or text and calls together (:class:`ScriptedTurn`);
:func:`as_turn` makes each a turn. :class:`RecordedRequest` is what the model
keeps of each request it answers. The public face is :mod:`hermes_core.testing.scripted`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, final

from hermes_core._base._frozen import derive, frozen

__all__ = ["Api", "RecordedRequest", "ScriptEntry", "ScriptedCall", "ScriptedTurn", "as_turn"]

#: The APIs a scripted model speaks, named by their paths' last part.
Api: TypeAlias = Literal["chat", "responses", "messages"]


# -- the replies --------------------------------------------------------------------------------------


@final
@frozen(init=False)
class ScriptedCall:
    """One tool call of a scripted reply.

    Args:
        name: the tool's name as the model sends it: a wire name (``fs_read``),
            or any text, to script a model that calls a tool that does not exist.
        arguments: the call's arguments, a JSON object as a dict (``{}`` when
            left out), or the exact text the model sends: text that is not JSON
            scripts that mistake (OpenAI's APIs only; Anthropic's ``input`` is
            always an object).
        id: the call's id; by default ``call_N`` (OpenAI) or ``toolu_N``
            (Anthropic), N counting the server's calls from 1.

    Attributes:
        arguments: the arguments as the JSON text sent (a dict given is written
            compactly, as OpenAI's models write it).

    Raises:
        TypeError: *name* or *id* is not a non-empty string, or *arguments* is
            neither a dict nor a string, or holds a value JSON cannot carry.
    """

    name: str
    arguments: str
    id: str | None

    def __init__(self, name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> None:  # noqa: A002 - the field is the call's id
        if not isinstance(name, str) or not name:
            raise TypeError(f"ScriptedCall(): name must be a non-empty string, got {name!r}")
        if id is not None and (not isinstance(id, str) or not id):
            raise TypeError(f"ScriptedCall({name!r}): id must be a non-empty string or None, got {id!r}")
        if arguments is None:
            text = "{}"
        elif isinstance(arguments, str):
            text = arguments
        elif isinstance(arguments, Mapping):
            try:
                text = json.dumps(dict(arguments), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            except (TypeError, ValueError) as error:
                raise TypeError(f"ScriptedCall({name!r}): arguments must be JSON: {error}") from None
        else:
            kind = type(arguments).__name__
            raise TypeError(f"ScriptedCall({name!r}): arguments must be a dict or the arguments' text, got {kind}")
        derive(self, name=name, arguments=text, id=id)


@final
@frozen(init=False)
class ScriptedTurn:
    """One scripted reply: text, tool calls, or both (text first, as models write it).

    Args:
        text: what the model says.
        calls: the tool calls it makes in this turn, in order.

    Raises:
        TypeError: *text* is not a string, or a call is not a :class:`ScriptedCall`.
        ValueError: the turn has neither text nor calls.
    """

    text: str
    calls: tuple[ScriptedCall, ...]

    def __init__(self, text: str = "", calls: Iterable[ScriptedCall] = ()) -> None:
        if not isinstance(text, str):
            raise TypeError(f"ScriptedTurn(): text must be a string, got {type(text).__name__}")
        made = tuple(calls)
        for index, call in enumerate(made):
            if not isinstance(call, ScriptedCall):
                raise TypeError(f"ScriptedTurn(): calls[{index}] must be a ScriptedCall, got {type(call).__name__}")
        if not text and not made:
            raise ValueError("ScriptedTurn(): a turn needs text, calls or both")
        derive(self, text=text, calls=made)


#: What a script holds, per reply: a final text, a call, a turn's calls, or a :class:`ScriptedTurn`.
ScriptEntry: TypeAlias = str | ScriptedCall | Sequence[ScriptedCall] | ScriptedTurn


def as_turn(entry: object, index: int) -> ScriptedTurn:
    """*entry* of a script, at *index*, as a turn."""
    if isinstance(entry, ScriptedTurn):
        return entry
    if isinstance(entry, str):
        return ScriptedTurn(entry)
    if isinstance(entry, ScriptedCall):
        return ScriptedTurn(calls=[entry])
    if isinstance(entry, Sequence) and entry and all(isinstance(call, ScriptedCall) for call in entry):
        return ScriptedTurn(calls=entry)
    raise TypeError(
        f"ScriptedModel(): script[{index}] must be a text, a ScriptedCall, a non-empty list of them or a "
        f"ScriptedTurn, got {entry!r}"
    )


@final
@frozen
class RecordedRequest:
    """One request the scripted model received, and the status it answered.

    Attributes:
        method: the HTTP method (``POST``).
        path: the path, without its query (``/v1/chat/completions``).
        api: which API the path is (``chat``, ``responses``, ``messages``), or None for another path.
        headers: the request's headers, names in lower case.
        body: the JSON body, parsed; None when there was none or it was not JSON.
        status: the HTTP status answered: 200 for a scripted reply, 4xx for a refusal.
    """

    method: str
    path: str
    api: Api | None
    headers: Mapping[str, str]
    body: Any
    status: int
