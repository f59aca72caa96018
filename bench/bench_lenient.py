"""Lenient mode on a corpus of realistic tool calls: first-try success with and without repair, round trips saved.

Twenty tools modelled on real function-calling definitions (weather, search,
calendar, mail, flights, orders, smart home, SQL...), each a JSON Schema
document hosted as a tool's input (``define_tool(input=s.from_json_schema(doc))``,
so closed). For each, calls are drawn with a fixed seed: the call a model
meant (valid), then none, one or two of the mistakes models make, each at a
place of the call where it can happen:

* repairable: an integer or a number as a string (``"5"``, ``"2.5"``, an
  integer as ``"3.0"``), a boolean as a string (``"true"``, ``"True"``), an
  object or an array as a string of JSON, an enum member in the wrong case;
* not repairable: a misspelt optional key, a required key left out, a
  boolean as ``"yes"``, a number with its unit (``"5km"``) or in words
  (``"three"``), a thousands separator, a synonym of an enum member, an
  object as Python writes it (``{'a': 1}``), a bare item where an array is
  expected, null for a required field.

Each call goes to the tool's input validator as the runtime checks it; one it
refuses goes to lenient mode's repair (``schema._repair.repair_input``). A
call is a first-try success when the handler would be given exactly what the
model meant. A repair that gives anything else would be a wrong repair (there
must be none); a call with a mistake no rule repairs must stay refused.

For comparison, pydantic's lax mode (a model built from the same document:
the types, ``Literal`` for an enum, the defaults, extra keys ignored as
pydantic does by default; no bounds or formats, as no mistake here is about
them) is given the same calls: whether it accepts each, and whether what it
accepts is what was meant (what it makes of the call as meant).

A run exits 1 if any call was repaired into something not meant, or
repaired though one of its mistakes is not repairable.

    python bench/bench_lenient.py [--seed N] [--calls-per-tool N] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from collections import Counter
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from hermes_core import define_tool
from hermes_core import schema as s
from hermes_core.schema._repair import repair_input

SEED = 21
CALLS_PER_TOOL = 40

# -- the tools: JSON Schema documents as function-calling APIs publish them ------------------------------


def _str(*examples: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "examples": list(examples), **more}


def _int(low: int, high: int, **more: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, **more}


def _num(low: float, high: float, **more: Any) -> dict[str, Any]:
    return {"type": "number", "minimum": low, "maximum": high, **more}


def _enum(*members: str, **more: Any) -> dict[str, Any]:
    return {"type": "string", "enum": list(members), **more}


def _bool(**more: Any) -> dict[str, Any]:
    return {"type": "boolean", **more}


def _obj(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def _arr(items: dict[str, Any], low: int = 1, high: int = 4) -> dict[str, Any]:
    return {"type": "array", "items": items, "minItems": low, "maxItems": high}


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CITIES = ("Oslo", "Paris", "Lagos", "Lima", "Osaka", "Denver")

TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": _obj(
        {
            "location": _str(*CITIES),
            "unit": _enum("celsius", "fahrenheit", default="celsius"),
            "days": _int(1, 14, default=1),
            "include_hourly": _bool(default=False),
        },
        "location",
    ),
    "search_web": _obj(
        {
            "query": _str("cheap flights", "python asyncio tutorial", "best pizza near me"),
            "max_results": _int(1, 50, default=10),
            "safe_search": _enum("off", "moderate", "strict", default="moderate"),
            "site": _str("wikipedia.org", "github.com"),
            "fresh": _bool(),
        },
        "query",
    ),
    "create_calendar_event": _obj(
        {
            "title": _str("Standup", "Dentist", "Lunch with Ada"),
            "start": _str("2025-03-04T10:00:00Z", "2025-06-01T08:30:00Z", format="date-time"),
            "duration_minutes": _int(5, 1440),
            "attendees": _arr(_str("ada@example.com", "bob@example.com", format="email"), 1, 3),
            "reminder": _obj({"minutes_before": _int(0, 10080), "method": _enum("email", "popup")}, "minutes_before"),
            "all_day": _bool(default=False),
        },
        "title",
        "start",
    ),
    "send_email": _obj(
        {
            "to": _arr(_str("ada@example.com", "ops@example.org", format="email"), 1, 3),
            "subject": _str("Invoice", "Meeting notes"),
            "body": _str("Please find it attached.", "See you then."),
            "cc": _arr(_str("boss@example.com", format="email"), 1, 2),
            "priority": _enum("low", "normal", "high", default="normal"),
            "html": _bool(default=False),
        },
        "to",
        "subject",
        "body",
    ),
    "book_flight": _obj(
        {
            "origin": _str("OSL", "CDG", "LOS", pattern="^[A-Z]{3}$"),
            "destination": _str("JFK", "NRT", "LIM", pattern="^[A-Z]{3}$"),
            "date": _str("2025-07-14", "2025-12-01", format="date"),
            "passengers": _int(1, 9, default=1),
            "cabin": _enum("economy", "premium_economy", "business", "first", default="economy"),
            "max_price": _num(50, 10000),
            "nonstop": _bool(default=False),
        },
        "origin",
        "destination",
        "date",
    ),
    "convert_units": _obj(
        {
            "value": _num(-1000, 1000),
            "from_unit": _enum("meter", "foot", "mile", "kilometer"),
            "to_unit": _enum("meter", "foot", "mile", "kilometer"),
            "precision": _int(0, 10, default=2),
        },
        "value",
        "from_unit",
        "to_unit",
    ),
    "get_stock_quote": _obj(
        {
            "symbol": _str("AAPL", "NVDA", "SAP"),
            "exchange": _enum("NASDAQ", "NYSE", "XETRA"),
            "include_history": _bool(default=False),
            "days": _int(1, 365, default=30),
        },
        "symbol",
    ),
    "create_issue": _obj(
        {
            "repo": _str("acme/api", "acme/web"),
            "title": _str("Crash on start", "Typo in README"),
            "body": _str("Steps to reproduce: ...", "See the screenshot."),
            "labels": _arr(_enum("bug", "docs", "enhancement", "question"), 1, 3),
            "assignees": _arr(_str("ada", "grace", "linus"), 1, 2),
            "milestone": _int(1, 99),
        },
        "repo",
        "title",
    ),
    "run_sql_query": _obj(
        {
            "query": _str("SELECT * FROM users WHERE id = ?", "SELECT count(*) FROM orders"),
            "limit": _int(1, 10000, default=100),
            "timeout_seconds": _num(0.5, 300, default=30),
            "read_only": _bool(default=True),
        },
        "query",
    ),
    "set_thermostat": _obj(
        {
            "device_id": _str("living-room", "bedroom"),
            "target_temperature": _num(5, 35),
            "mode": _enum("heat", "cool", "auto", "off"),
            "fan": _enum("auto", "on", default="auto"),
            "schedule": _obj(
                {"start": _str("07:00", "18:30"), "end": _str("09:00", "23:00"), "days": _arr(_enum(*WEEKDAYS), 1, 3)},
                "start",
                "end",
            ),
        },
        "device_id",
        "target_temperature",
    ),
    "get_directions": _obj(
        {
            "origin": _str("Central Station", "Airport"),
            "destination": _str("City Hall", "Harbour"),
            "mode": _enum("driving", "walking", "bicycling", "transit", default="driving"),
            "avoid": _arr(_enum("tolls", "highways", "ferries"), 1, 2),
            "alternatives": _bool(default=False),
        },
        "origin",
        "destination",
    ),
    "place_order": _obj(
        {
            "items": _arr(
                _obj({"sku": _str("SKU-1001", "SKU-2002"), "quantity": _int(1, 20)}, "sku", "quantity"), 1, 3
            ),
            "shipping": _obj(
                {
                    "method": _enum("standard", "express", default="standard"),
                    "address": _obj(
                        {
                            "street": _str("1 Main St", "22 Rue Neuve"),
                            "city": _str(*CITIES),
                            "postcode": _str("0150", "75001"),
                            "country": _str("NO", "FR"),
                        },
                        "street",
                        "city",
                        "country",
                    ),
                },
                "address",
            ),
            "gift": _bool(default=False),
            "coupon": _str("SPRING10", "WELCOME"),
        },
        "items",
        "shipping",
    ),
    "translate_text": _obj(
        {
            "text": _str("Good morning", "Where is the station?"),
            "target_language": _enum("en", "fr", "de", "es", "ja"),
            "source_language": _enum("en", "fr", "de", "es", "ja"),
            "formality": _enum("default", "more", "less", default="default"),
        },
        "text",
        "target_language",
    ),
    "set_reminder": _obj(
        {
            "text": _str("Call mum", "Water the plants"),
            "at": _str("2025-03-04T18:00:00Z", format="date-time"),
            "repeat": _enum("none", "daily", "weekly", "monthly", default="none"),
            "snooze_minutes": _int(1, 120, default=10),
        },
        "text",
        "at",
    ),
    "resize_image": _obj(
        {
            "path": _str("photos/cat.png", "scans/page1.jpg"),
            "width": _int(1, 8000),
            "height": _int(1, 8000),
            "keep_aspect": _bool(default=True),
            "format": _enum("PNG", "JPEG", "WEBP", default="PNG"),
            "quality": _int(1, 100, default=85),
        },
        "path",
        "width",
    ),
    "calculate_loan": _obj(
        {
            "principal": _num(1000, 1000000),
            "annual_rate": _num(0, 25),
            "years": _int(1, 40),
            "compounding": _enum("monthly", "annually", default="monthly"),
        },
        "principal",
        "annual_rate",
        "years",
    ),
    "list_files": _obj(
        {
            "path": _str("src", "docs/api"),
            "recursive": _bool(default=False),
            "pattern": _str("*.py", "*.md"),
            "max_depth": _int(1, 20, default=5),
            "include_hidden": _bool(default=False),
        },
        "path",
    ),
    "update_profile": _obj(
        {
            "user_id": _int(1, 10**9),
            "display_name": {"type": ["string", "null"], "examples": ["Ada", None]},
            "age": {"type": ["integer", "null"], "minimum": 0, "maximum": 150},
            "newsletter": _bool(),
            "tags": _arr(_str("beta", "vip", "staff"), 1, 3),
        },
        "user_id",
    ),
    "start_timer": _obj(
        {
            "label": _str("Tea", "Pomodoro"),
            "duration": {"anyOf": [_int(1, 86400), _enum("short", "long")], "description": "seconds, or a preset"},
            "sound": _bool(default=True),
        },
        "duration",
    ),
    "query_metrics": _obj(
        {
            "metric": _enum("cpu", "memory", "latency_p99", "errors"),
            "window": _obj({"from": _str("now-1h", "now-24h"), "to": _str("now")}, "from"),
            "group_by": _arr(_enum("host", "region", "service"), 1, 2),
            "threshold": _num(0, 100),
            "alert": _bool(default=False),
        },
        "metric",
        "window",
    ),
}

# -- calls as meant ---------------------------------------------------------------------------------------

Location = tuple[tuple[str | int, ...], dict[str, Any]]


def _meant(doc: dict[str, Any], rng: random.Random, path: tuple[str | int, ...], places: list[Location]) -> Any:
    """A valid value of *doc*, each place it holds recorded with its schema (an anyOf's: the option taken)."""
    if "anyOf" in doc:
        return _meant(rng.choice(doc["anyOf"]), rng, path, places)
    places.append((path, doc))
    kind = doc["type"]
    if isinstance(kind, list):
        kind = kind[0] if rng.random() < 0.8 else "null"
        if kind == "null":
            return None
    if "enum" in doc:
        return rng.choice(doc["enum"])
    if kind == "string":
        return rng.choice(doc["examples"])
    if kind == "integer":
        return rng.randint(doc["minimum"], min(doc["maximum"], doc["minimum"] + 60))
    if kind == "number":
        return round(rng.uniform(doc["minimum"], doc["maximum"]), rng.choice((0, 1, 2)))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        count = rng.randint(doc["minItems"], doc["maxItems"])
        return [_meant(doc["items"], rng, (*path, i), places) for i in range(count)]
    out = {}
    for name, sub in doc["properties"].items():
        if name in doc["required"] or rng.random() < 0.5:
            out[name] = _meant(sub, rng, (*path, name), places)
    return out


# -- the mistakes models make -----------------------------------------------------------------------------

REPAIRABLE = (
    "integer as a string",
    "integer as a decimal string",
    "number as a string",
    "boolean as a string",
    "boolean as Python writes it",
    "object as a string of JSON",
    "array as a string of JSON",
    "enum member in another case",
)
NOT_REPAIRABLE = (
    "misspelt optional key",
    "required key left out",
    "boolean as yes or no",
    "number with its unit",
    "number in words",
    "thousands separator",
    "enum synonym",
    "object as Python writes it",
    "bare item for an array",
    "null for a required field",
)
_WORDS = {1: "one", 2: "two", 3: "three", 5: "five", 10: "ten", 12: "twelve", 30: "thirty"}
_SYNONYMS = {
    "celsius": "C",
    "fahrenheit": "F",
    "express": "fast",
    "high": "urgent",
    "driving": "car",
    "PNG": "image/png",
}


def _kind(doc: dict[str, Any]) -> str | None:
    kind = doc.get("type")
    return kind if isinstance(kind, str) else None


_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


def _fits(value: Any, doc: dict[str, Any]) -> bool:
    """Whether *value* is still of the type *doc* says (an earlier mistake may have made it a string)."""
    kind = _kind(doc)
    return kind is not None and isinstance(value, _PYTHON_TYPES[kind]) and (kind == "boolean") == (type(value) is bool)


def _mistake(kind: str, value: Any, doc: dict[str, Any], rng: random.Random) -> Any:
    """*value* (at a place of schema *doc*) as the mistake *kind* makes it; None if it cannot happen there."""
    t = _kind(doc)
    if kind == "integer as a string" and t == "integer":
        return str(value)
    if kind == "integer as a decimal string" and t == "integer":
        return f"{value}.0"
    if kind == "number as a string" and t == "number":
        return json.dumps(value)
    if kind == "boolean as a string" and t == "boolean":
        return json.dumps(value)
    if kind == "boolean as Python writes it" and t == "boolean":
        return str(value)
    if kind == "object as a string of JSON" and t == "object":
        return json.dumps(value)
    if kind == "array as a string of JSON" and t == "array":
        return json.dumps(value)
    if kind == "enum member in another case" and "enum" in doc and value.upper() != value:
        return value.upper() if rng.random() < 0.5 else value.capitalize()
    if kind == "enum member in another case" and "enum" in doc:
        return value.lower()
    if kind == "boolean as yes or no" and t == "boolean":
        return "yes" if value else "no"
    if kind == "number with its unit" and t in ("integer", "number"):
        return f"{value}{rng.choice(['km', ' minutes', '%', ' USD'])}"
    if kind == "number in words" and t == "integer" and value in _WORDS:
        return _WORDS[value]
    if kind == "thousands separator" and t in ("integer", "number") and abs(value) >= 1000:
        return f"{value:,}"
    if kind == "enum synonym" and "enum" in doc and value in _SYNONYMS:
        return _SYNONYMS[value]
    if kind == "object as Python writes it" and t == "object" and value:
        return repr(value)
    if kind == "bare item for an array" and t == "array":
        return value[0]
    return None


def _misspelt(name: str, rng: random.Random) -> str:
    at = rng.randrange(len(name))
    how = rng.choice(("drop", "double", "swap"))
    if how == "drop" and len(name) > 3:
        return name[:at] + name[at + 1 :]
    if how == "swap" and at < len(name) - 1:
        return name[:at] + name[at + 1] + name[at] + name[at + 2 :]
    return name[:at] + name[at] + name[at:]


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    found: Any = value
    for key in path:
        if not isinstance(found, dict | list):  # an earlier mistake made it a string
            raise TypeError(key)
        found = found[key]  # type: ignore[index] # a key of a dict, an index of a list
    return found


def _make(call: Any, places: list[Location], kind: str, rng: random.Random) -> Any | None:
    """*call* with one mistake of *kind* at a place it can happen (a new value); None if it can happen nowhere."""
    order = list(places)
    rng.shuffle(order)
    for path, doc in order:
        try:
            value = _at(call, path)
        except (KeyError, IndexError, TypeError):  # a place an earlier mistake changed
            continue
        if not _fits(value, doc):
            continue
        if kind in ("misspelt optional key", "required key left out", "null for a required field"):
            if _kind(doc) != "object" or not isinstance(value, dict):
                continue
            required = set(doc["required"])
            keys = [k for k in value if (k in required) == (kind != "misspelt optional key")]
            if not keys:
                continue
            key = rng.choice(keys)
            made = copy.deepcopy(call)
            target = _at(made, path)
            if kind == "misspelt optional key":
                wrong = _misspelt(key, rng)
                if wrong in doc["properties"]:
                    continue
                target[wrong] = target.pop(key)
            elif kind == "required key left out":
                del target[key]
            else:
                target[key] = None
            return made
        wrong = _mistake(kind, value, doc, rng)
        if wrong is None or wrong == value:
            continue
        if not path:
            return wrong
        made = copy.deepcopy(call)
        _at(made, path[:-1])[path[-1]] = wrong
        return made
    return None


# -- pydantic's lax mode, for comparison --------------------------------------------------------------------


class _Lax(BaseModel):
    model_config = ConfigDict(extra="ignore")  # pydantic's default, spelt out


def _pydantic(doc: dict[str, Any], name: str) -> Any:
    """The Python type pydantic validates *doc* with (the subset of JSON Schema these tools use)."""
    if "anyOf" in doc:
        options = tuple(_pydantic(option, name) for option in doc["anyOf"])
        return options[0] | options[1]
    kind = doc["type"]
    if isinstance(kind, list):
        return Optional[_pydantic({**doc, "type": kind[0]}, name)]  # noqa: UP045 - a type made at run time
    if "enum" in doc:
        return Literal[tuple(doc["enum"])]
    simple = {"string": str, "integer": int, "number": float, "boolean": bool}
    if kind in simple:
        return simple[kind]
    if kind == "array":
        return list[_pydantic(doc["items"], name)]  # type: ignore[misc]
    fields: dict[str, Any] = {}
    for prop, sub in doc["properties"].items():
        made = _pydantic(sub, f"{name}_{prop}")
        if prop in doc["required"]:
            fields[prop] = (made, ...)
        else:
            fields[prop] = (Optional[made], sub.get("default"))  # noqa: UP045
    return create_model(name, __base__=_Lax, **fields)


def _lax(model: Any, value: Any) -> Any:
    """What pydantic's lax mode makes of *value* (as plain data), or None if it refuses it."""
    try:
        return model.model_validate(value).model_dump()
    except ValidationError:
        return None


# -- the run --------------------------------------------------------------------------------------------------


def corpus(seed: int, per_tool: int) -> list[tuple[str, Any, Any, tuple[str, ...]]]:
    """(tool, the call meant, the call sent, its mistakes), *per_tool* calls for each tool, drawn with *seed*."""
    rng = random.Random(seed)
    calls = []
    for name, doc in TOOLS.items():
        made = 0
        while made < per_tool:
            places: list[Location] = []
            meant = _meant(doc, rng, (), places)
            count = rng.choices((0, 1, 2), weights=(25, 55, 20))[0]
            sent, kinds = meant, list[str]()
            for _ in range(count):
                kind = rng.choice(REPAIRABLE + NOT_REPAIRABLE)
                wrong = _make(sent, places, kind, rng)
                if wrong is not None:
                    sent, kinds = wrong, [*kinds, kind]
            if len(kinds) != count or (kinds and sent == meant):
                continue  # a mistake that cannot happen in this call, or two that undo each other: draw another
            calls.append((name, meant, sent, tuple(kinds)))
            made += 1
    return calls


def run(seed: int, per_tool: int) -> dict[str, Any]:
    tools = {
        name: define_tool(name=name, version="1.0.0", description=name, input=s.from_json_schema(doc), handler=dict)
        for name, doc in TOOLS.items()
    }
    validators = {name: tool.validators()[0] for name, tool in tools.items()}
    models = {name: _pydantic(doc, name) for name, doc in TOOLS.items()}
    calls = corpus(seed, per_tool)
    counts: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {kind: Counter() for kind in REPAIRABLE + NOT_REPAIRABLE}
    rules: Counter[str] = Counter()
    repair_seconds: list[float] = []
    for name, meant, sent, kinds in calls:
        validator = validators[name]
        repaired = None
        ok_meant, parsed_meant, _ = validator.run(meant)
        assert ok_meant, (name, meant)
        repairable = bool(kinds) and all(kind in REPAIRABLE for kind in kinds)
        counts["calls"] += 1
        counts["mistaken"] += bool(kinds)
        counts["repairable"] += repairable
        ok, parsed, _ = validator.run(sent)
        if ok:
            counts["accepted as sent"] += 1
            counts["first try, strict"] += parsed == parsed_meant
            counts["first try, lenient"] += parsed == parsed_meant
            counts["accepted, not as meant"] += parsed != parsed_meant
        else:
            started = time.perf_counter()
            repaired = repair_input(validator, sent)
            repair_seconds.append(time.perf_counter() - started)
            if repaired is None:
                counts["refused"] += 1
                counts["repairable, not repaired"] += repairable
            else:
                counts["repaired"] += 1
                rules.update(repair.rule for repair in repaired.repairs)
                if repaired.parsed == parsed_meant:
                    counts["first try, lenient"] += 1
                else:
                    counts["wrong repairs"] += 1
                counts["repaired, not repairable"] += not repairable
        for kind in kinds:
            by_kind[kind]["calls"] += 1
            by_kind[kind]["first try, lenient"] += not ok and repaired is not None and repaired.parsed == parsed_meant
        lax_meant = _lax(models[name], meant)
        lax_sent = _lax(models[name], sent)
        for kind in kinds:
            by_kind[kind]["pydantic: as meant"] += lax_sent is not None and lax_sent == lax_meant
            by_kind[kind]["pydantic: not as meant"] += lax_sent is not None and lax_sent != lax_meant
        counts["pydantic: accepted"] += lax_sent is not None
        counts["pydantic: as meant"] += lax_sent is not None and lax_sent == lax_meant
        counts["pydantic: accepted, not as meant"] += lax_sent is not None and lax_sent != lax_meant
    return {
        "seed": seed,
        "tools": len(TOOLS),
        "counts": dict(counts),
        "by_kind": {kind: dict(found) for kind, found in by_kind.items()},
        "rules": dict(rules),
        "repair_us_median": statistics.median(repair_seconds) * 1e6 if repair_seconds else 0.0,
    }


def _share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.1f}%)" if whole else "0"


def report(found: dict[str, Any]) -> str:
    c = Counter(found["counts"])
    calls, mistaken = c["calls"], c["mistaken"]
    saved = c["first try, lenient"] - c["first try, strict"]
    lines = [
        f"Corpus: {calls} calls of {found['tools']} tools (seed {found['seed']}), {mistaken} of them with mistakes "
        f"({c['repairable']} with repairable mistakes only).",
        "",
        "| | calls |",
        "|---|---|",
        f"| first-try success, lenient off | {_share(c['first try, strict'], calls)} |",
        f"| first-try success, lenient on | {_share(c['first try, lenient'], calls)} |",
        f"| round trips saved (a retry each) | {_share(saved, calls)}; {_share(saved, mistaken)} of the mistaken |",
        f"| repaired | {c['repaired']} |",
        f"| wrong repairs (not what was meant) | {c['wrong repairs']} |",
        f"| repaired though a mistake is not repairable | {c['repaired, not repairable']} |",
        f"| repairable but not repaired | {c['repairable, not repaired']} |",
        f"| refused, INPUT_INVALID as before | {c['refused']} |",
        f"| accepted as sent but not as meant | {c['accepted, not as meant']} |",
        f"| pydantic lax: accepted | {_share(c['pydantic: accepted'], calls)} |",
        f"| pydantic lax: accepted as meant | {_share(c['pydantic: as meant'], calls)} |",
        f"| pydantic lax: accepted, not as meant (silently) | {c['pydantic: accepted, not as meant']} |",
        "",
        "| mistake | calls with it | run as meant, lenient on | pydantic lax: as meant | pydantic lax: not as meant |",
        "|---|---|---|---|---|",
    ]
    for kind, counted in found["by_kind"].items():
        kept = Counter(counted)
        lines.append(
            f"| {kind} | {kept['calls']} | {_share(kept['first try, lenient'], kept['calls'])} "
            f"| {kept['pydantic: as meant']} | {kept['pydantic: not as meant']} |"
        )
    lines += ["", "Repairs by rule: " + ", ".join(f"{rule} {n}" for rule, n in sorted(found["rules"].items()))]
    lines.append(f"Repair of a refused call: median {found['repair_us_median']:.1f} µs.")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--calls-per-tool", type=int, default=CALLS_PER_TOOL)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args(argv)
    found = run(options.seed, options.calls_per_tool)
    print(json.dumps(found, indent=2) if options.json else report(found))
    bad = found["counts"].get("wrong repairs", 0) + found["counts"].get("repaired, not repairable", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
