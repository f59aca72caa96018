"""The string formats ``s.string(format=...)`` checks, with the standard library only.

Each checked format is a function ``text -> bool`` and a description of the
format, for the message (which says what the text must be, never what it was).
Any other format name is an annotation: exported, not checked, as JSON Schema
2020-12 treats ``format`` by default.
"""

from __future__ import annotations

import calendar
import ipaddress
import re
from collections.abc import Callable

__all__ = ["FORMATS"]

_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
# RFC 3339 full-time: partial-time, then an offset; "T" and "Z" in either case (RFC 3339, 5.6 note).
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?([Zz]|([+-])([0-9]{2}):([0-9]{2}))")
_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
# RFC 5322 dot-atom and quoted-string local parts, and a host name or an address literal after the "@".
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = re.compile(rf'{_ATOM}(?:\.{_ATOM})*|"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"')
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
# RFC 3986 characters: unreserved, sub-delims, and percent-encoded octets.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
_URI = re.compile(
    r"[A-Za-z][A-Za-z0-9+.\-]*:"  # scheme
    r"(?://(?P<userinfo>(?:[A-Za-z0-9\-._~!$&'()*+,;=:]|%[0-9A-Fa-f]{2})*@)?"
    r"(?P<host>\[[^\]/?#@]*\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)"
    rf"(?::[0-9]*)?(?:/{_PCHAR}*)*"  # authority, then a path that begins with "/" or is empty
    rf"|/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"  # or a path without an authority
    rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
)
_IP_FUTURE = re.compile(r"\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+\]")


def _date(text: str) -> bool:
    found = _DATE.fullmatch(text)
    if found is None:
        return False
    year, month, day = (int(part) for part in found.groups())
    if year == 0 or not 1 <= month <= 12:  # year 0 is no date Python (or jsonschema's check) can hold
        return False
    return 1 <= day <= calendar.monthrange(year, month)[1]


def _time(text: str) -> bool:
    found = _TIME.fullmatch(text)
    if found is None:
        return False
    hour, minute, second = int(found[1]), int(found[2]), int(found[3])
    offset = 0
    if found[6] is not None:
        off_hour, off_minute = int(found[7]), int(found[8])
        if off_hour > 23 or off_minute > 59:
            return False
        offset = (off_hour * 60 + off_minute) * (1 if found[6] == "+" else -1)
    if hour > 23 or minute > 59 or second > 60:
        return False
    # A leap second is the last second of a UTC day: 23:59:60 once the offset is taken off.
    return second < 60 or (hour * 60 + minute - offset) % (24 * 60) == 23 * 60 + 59


def _date_time(text: str) -> bool:
    if len(text) < 11 or text[10] not in "Tt":
        return False
    return _date(text[:10]) and _time(text[11:])


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _ipv6(text: str) -> bool:
    if "%" in text:  # a zone index is not part of the format
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _email(text: str) -> bool:
    local, at, domain = text.rpartition("@")
    if not at or _LOCAL.fullmatch(local) is None or len(local) > 64:
        return False
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        if literal[:5].lower() == "ipv6:":
            return _ipv6(literal[5:])
        return _ipv4(literal)
    labels = domain.split(".")
    return len(domain) <= 253 and all(_LABEL.fullmatch(label) for label in labels)


def _uri(text: str) -> bool:
    found = _URI.fullmatch(text)
    if found is None:
        return False
    host = found["host"]
    if host and host.startswith("["):
        return _IP_FUTURE.fullmatch(host) is not None or _ipv6(host[1:-1])
    return True


def _uuid(text: str) -> bool:
    return _UUID.fullmatch(text) is not None


#: Format name to (check, what a matching string is, for "must be ...").
FORMATS: dict[str, tuple[Callable[[str], bool], str]] = {
    "date-time": (_date_time, "a date-time (RFC 3339) such as 2024-05-01T12:00:00Z"),
    "date": (_date, "a date (RFC 3339) such as 2024-05-01"),
    "time": (_time, "a time with an offset (RFC 3339) such as 12:00:00Z"),
    "email": (_email, "an email address such as name@example.com"),
    "uri": (_uri, "an absolute URI such as https://example.com/page"),
    "uuid": (_uuid, "a UUID such as 123e4567-e89b-12d3-a456-426614174000"),
    "ipv4": (_ipv4, "an IPv4 address such as 192.0.2.1"),
    "ipv6": (_ipv6, "an IPv6 address such as 2001:db8::1"),
}
