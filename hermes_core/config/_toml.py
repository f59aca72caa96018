"""TOML configuration read within bounds: its tokens with their lines, and a check of how deep it nests.

``tomllib`` recurses into each array and inline table, and spends time and
memory growing with the square of a dotted key's length: a key of 10,000
parts takes hundreds of megabytes, one of 100,000 (200 KB of text) tens of
gigabytes. A configuration file a plugin reads (a policy, ``mcp.toml``) is
checked with :func:`check_toml_depth` before ``tomllib.loads`` sees it;
:func:`toml_tokens` also lets a plugin find the line of a key it refuses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Final

from hermes_core._base._errors import InvalidDefinitionError

__all__ = ["TOML_DEPTH_MAX", "check_toml_depth", "toml_tokens"]

#: How deep :func:`check_toml_depth` lets keys, arrays and inline tables nest by default.
TOML_DEPTH_MAX: Final = 32


# Compiled with the first file read, not at import: a 'hermesos tools list' that reads no TOML file does not
# pay for it (docs/performance.md, start-up).
@functools.cache
def _token() -> re.Pattern[str]:
    return re.compile(
        r"(?P<space>[ \t]+)"
        r"|(?P<comment>#[^\n]*)"
        r"|(?P<newline>\r?\n)"
        r'|(?P<string>"""(?:[^\\]|\\.)*?"{3,5}'
        r"|'''.*?'{3,5}"
        r'|"(?:[^"\\\n]|\\.)*"'
        r"|'[^'\n]*')"
        r"|(?P<punct>[\[\]{}=,.])"
        r"|(?P<bare>[^\s\[\]{}=,.#\"']+)"
        r"|(?P<other>.)",
        re.DOTALL,
    )


def toml_tokens(text: str) -> Iterator[tuple[str, str, int]]:
    """The tokens of a TOML *text* as ``(kind, text, line)``, without spaces and comments.

    A kind is ``newline``, ``string`` (quoted, its quotes kept), ``punct``
    (one of ``[]{}=,.``), ``bare`` (a bare key or a value such as ``true``
    or ``30``) or ``other``. The walk needs no valid TOML: it is what finds
    where a text that is not goes wrong.
    """
    line = 1
    for match in _token().finditer(text):
        kind, value = match.lastgroup or "other", match.group()
        if kind not in ("space", "comment"):
            yield kind, value, line
        line += value.count("\n")


def check_toml_depth(
    text: str, declaration: str, *, most: int = TOML_DEPTH_MAX, advice: str = "", always: bool = False
) -> None:
    """Refuse a TOML *text* holding a dotted key of more than *most* parts, or arrays and tables nested deeper.

    Call it before ``tomllib.loads``, which it keeps from a dotted key's
    quadratic cost, and again with *always* if that raised ``RecursionError``,
    to say where. Cheap on the way in: a dotted key lies on one line, so a
    text without a line of *most* dots is not walked (``tomllib`` stops at the
    recursion limit on deep brackets by itself, in time linear in the text).

    Args:
        text: the file's text.
        declaration: what messages call the file, such as ``policy file "/etc/p.toml"``.
        most: how deep keys, arrays and inline tables may nest.
        advice: what to do instead, ending the message (``a policy needs three levels at most...``).
        always: walk the text whatever its lines hold.

    Raises:
        InvalidDefinitionError: naming the file and the line, and saying what nests too deeply.
    """
    if not always and (text.count(".") < most or all(line.count(".") < most for line in text.split("\n"))):
        return
    depth = parts = 0
    after_dot = False
    for kind, value, line in toml_tokens(text):
        detail = None
        if kind in ("bare", "string"):
            parts = parts + 1 if after_dot else 1
            after_dot = False
            if parts > most:
                detail = f"has a dotted key of more than {most} parts"
        elif kind == "punct" and value == "." and parts:
            after_dot = True
        else:
            parts, after_dot = 0, False
            if value in ("[", "{") and kind == "punct":
                depth += 1
                if depth > most:
                    detail = f"nests arrays or inline tables more than {most} levels deep"
            elif value in ("]", "}") and kind == "punct":
                depth -= 1
        if detail:
            raise InvalidDefinitionError(
                f"{declaration}, line {line}", None, f"{detail}; {advice}" if advice else detail
            )
