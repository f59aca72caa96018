"""hermesos-math: the ``math.eval`` tool, arithmetic evaluated safely.

An expression is never given to ``eval`` or ``exec``. It goes through three
checks, each bounded, and is refused whole (``INPUT_INVALID``, saying what was
wrong, where, and what would be right) before anything is computed if one fails:

1. a scan of its characters and words: numbers, ``+ - * / // % **``,
   parentheses, commas and the whitelisted names, nothing else, with
   parentheses nested at most :data:`MAX_DEPTH` deep;
2. Python's own parser (``ast.parse``), for the structure, and a count of the
   tree's nodes (at most :data:`MAX_NODES`);
3. a walk of the tree allowing only numbers, the operators above, unary ``+``
   and ``-``, the constants, and calls of the whitelisted functions, with
   operators nested at most :data:`MAX_DEPTH` deep.

Evaluation checks every intermediate value: an integer power whose result
would have more than :data:`MAX_DIGITS` digits is refused before it is
computed, every integer is kept below that many digits, and a float that
overflows, or a result that is not a real number, is refused rather than
returned as ``inf``, NaN or a complex number.
"""

from __future__ import annotations

import ast
import functools
import keyword
import math
import re
from collections.abc import Callable
from typing import Annotated, Any, NoReturn

from hermes_core import IssueKind, Tool, ToolHints, hookimpl, reject, shorten, tool
from hermes_core import schema as s

__all__ = [
    "CONSTANTS",
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_LENGTH",
    "MAX_NODES",
    "evaluate",
    "hermes_tools",
    "math_eval",
]

#: The longest expression accepted, in characters.
MAX_LENGTH = 1000
#: The most numbers, names, operations and calls one expression may hold.
MAX_NODES = 500
#: How deeply parentheses, and operators inside operators, may nest.
MAX_DEPTH = 32
#: The most digits an integer (the result or any intermediate value) may have.
MAX_DIGITS = 1000

#: What an expression evaluates to.
Number = int | float

_TOOL = "math.eval"
_LIMIT = 10**MAX_DIGITS  # every integer stays strictly between -_LIMIT and _LIMIT


class _Function:
    """A whitelisted function: how to call it, how many arguments it takes, and how to write a call."""

    __slots__ = ("call", "fewest", "most", "usage")

    def __init__(self, call: Callable[..., Any], fewest: int, most: int | None, usage: str) -> None:
        self.call = call
        self.fewest = fewest
        self.most = most
        self.usage = usage


#: The functions an expression may call, by name.
FUNCTIONS: dict[str, _Function] = {
    "abs": _Function(abs, 1, 1, "abs(x)"),
    "round": _Function(round, 1, 2, "round(x) or round(x, digits)"),
    "min": _Function(lambda *xs: min(xs), 1, None, "min(x, y, ...)"),
    "max": _Function(lambda *xs: max(xs), 1, None, "max(x, y, ...)"),
    "sqrt": _Function(math.sqrt, 1, 1, "sqrt(x)"),
    "floor": _Function(math.floor, 1, 1, "floor(x)"),
    "ceil": _Function(math.ceil, 1, 1, "ceil(x)"),
    "exp": _Function(math.exp, 1, 1, "exp(x)"),
    "log": _Function(math.log, 1, 2, "log(x) for the natural logarithm, or log(x, base)"),
    "sin": _Function(math.sin, 1, 1, "sin(x), x in radians"),
    "cos": _Function(math.cos, 1, 1, "cos(x), x in radians"),
    "tan": _Function(math.tan, 1, 1, "tan(x), x in radians"),
}

#: The named constants an expression may use.
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

# What every refusal of the grammar ends with: what would have been right.
_HINT = (
    "use numbers, + - * / // % ** and parentheses, the functions "
    + ", ".join(f"{name}()" for name in FUNCTIONS)
    + " and the constants "
    + " and ".join(CONSTANTS)
)
_OVERFLOW = f"integers are limited to {MAX_DIGITS:,} digits and decimals to about 1.8e308; scale the numbers down"

# A number as Python writes one (without the imaginary suffix). The quantifiers are possessive: a digit
# run never has to be given back, and backtracking into it would make a long malformed number slow.
_NUMBER = (
    r"(?:0[xX](?:_?[0-9a-fA-F])++|0[bB](?:_?[01])++|0[oO](?:_?[0-7])++"
    r"|(?:[0-9](?:_?[0-9])*+\.?(?:[0-9](?:_?[0-9])*+)?|\.[0-9](?:_?[0-9])*+)(?:[eE][-+]?[0-9](?:_?[0-9])*+)?)"
)


# Compiled at the first expression, not at import: compiling them cost every 'hermesos tools list' that loads
# this plugin about 1 ms (hermesos-core's docs/performance.md, start-up).
@functools.cache
def _whole_number() -> re.Pattern[str]:
    return re.compile(_NUMBER + r"\Z")


# One token of the scan. A number swallows any letters, digits and dots stuck to it, so "1if" or "1.2.3"
# is one malformed number rather than a number followed by something else.
@functools.cache
def _token() -> re.Pattern[str]:
    return re.compile(
        r"(?P<space>[ \t\r\n]+)"
        rf"|(?P<number>{_NUMBER}[A-Za-z0-9_.]*)"
        r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
        r"|(?P<operator>\*\*|//|[-+*/%(),])"
        r"|(?P<other>.)",
        re.DOTALL,
    )


# Why each character a model might try is refused.
_CHARACTERS = {
    "'": "strings are not supported",
    '"': "strings are not supported",
    "[": "lists, indexing and comprehensions are not supported",
    "]": "lists, indexing and comprehensions are not supported",
    "{": "sets and dictionaries are not supported",
    "}": "sets and dictionaries are not supported",
    ".": "attribute access is not supported",
    "=": "comparisons, assignments and keyword arguments are not supported",
    "<": "comparisons and bit shifts are not supported",
    ">": "comparisons and bit shifts are not supported",
    "!": "comparisons are not supported",
    "&": "bitwise operators are not supported",
    "|": "bitwise operators are not supported",
    "^": "bitwise operators are not supported (the power operator is **)",
    "~": "bitwise operators are not supported",
    "@": "matrix multiplication is not supported",
    ":": "lambdas, slices and assignments are not supported",
    ";": "only one expression is evaluated per call",
    "#": "comments are not supported",
    "\\": "backslashes are not supported",
}
_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}


def _refuse(kind: IssueKind, detail: str) -> NoReturn:
    """Refuse the expression: the runtime reports it as ``INPUT_INVALID`` of ``math.eval``."""
    raise reject("expression", detail, kind=kind)


def _quote(text: str) -> str:
    """*text* shortened to 40 characters, in double quotes."""
    return f'"{shorten(text, 40)}"'


def _show(value: Number) -> str:
    """A number for a message: in full if short, else its size."""
    if isinstance(value, int) and abs(value) >= 10**20:
        return f"a {len(str(abs(value)))}-digit number"
    return repr(value)


class _Expression:
    """One expression being checked and evaluated; made per call, so calls share nothing."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.multiline = "\n" in source.rstrip()
        # The parser refuses leading whitespace ("unexpected indent"), so it is given the text without it;
        # positions in that text are mapped back to the original.
        self.parsed = source.lstrip()
        self.skip = len(source) - len(self.parsed)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", self.parsed)]

    # -- positions -----------------------------------------------------------------------

    def index_at(self, index: int) -> str:
        """Where the character at *index* of the source is: ``at column 5`` or ``at line 2, column 5``."""
        line = self.source.count("\n", 0, index) + 1
        column = index - (self.source.rfind("\n", 0, index) + 1) + 1
        return f"at line {line}, column {column}" if self.multiline else f"at column {column}"

    def parsed_at(self, line: int, offset: int) -> str:
        """Where the parser's (1-based line, 0-based column) is; the text is ASCII, so bytes are characters."""
        return self.index_at(self.skip + self.line_starts[min(line, len(self.line_starts)) - 1] + offset)

    def node_at(self, node: ast.AST) -> str:
        """Where *node* starts."""
        return self.parsed_at(getattr(node, "lineno", 1), getattr(node, "col_offset", 0))

    def where(self, node: ast.AST) -> str:
        """*node*'s source, shortened, and where it starts: ``in "2 ** 9999" at column 5``."""
        text = " ".join((ast.get_source_segment(self.parsed, node) or "").split())
        return f"in {_quote(text)} {self.node_at(node)}"

    # -- step 1: characters and words ----------------------------------------------------

    def scan(self) -> None:
        """Refuse any character, word or number the grammar does not have, and parentheses nested too deeply."""
        depth = 0
        whole_number = _whole_number()
        for match in _token().finditer(self.source):
            kind, text = match.lastgroup, match.group()
            if kind == "number" and not whole_number.match(text):
                at = self.index_at(match.start())
                if text[-1] in "jJ" and whole_number.match(text[:-1]):
                    _refuse("invalid", f"has the imaginary number {text} {at}; complex numbers are not supported")
                _refuse(
                    "invalid",
                    f"has a malformed number {_quote(text)} {at}; write numbers such as 42, 3.5, 1_000 or 1e-3, "
                    "with a space or an operator after them",
                )
            elif kind == "word" and text not in FUNCTIONS and text not in CONSTANTS:
                at = self.index_at(match.start())
                if keyword.iskeyword(text) or keyword.issoftkeyword(text):
                    _refuse("invalid", f"has the Python keyword {_quote(text)} {at}, which is not supported; {_HINT}")
                _refuse("invalid", f"has an unsupported name {_quote(text)} {at} (there are no variables); {_HINT}")
            elif kind == "other":
                at = self.index_at(match.start())
                reason = _CHARACTERS.get(text)
                if reason is None:
                    shown = text if " " <= text <= "~" else f"U+{ord(text):04X}"
                    _refuse("invalid", f"has an unsupported character {shown} {at}; {_HINT}")
                _refuse("invalid", f"has {text} {at}: {reason}; {_HINT}")
            elif text == "(":
                depth += 1
                if depth > MAX_DEPTH:
                    _refuse(
                        "too_deep",
                        f"nests parentheses more than {MAX_DEPTH} deep ({self.index_at(match.start())}); "
                        "simplify it or split it into several calls",
                    )
            elif text == ")":
                depth -= 1

    # -- step 2: the parser --------------------------------------------------------------

    def parse(self) -> ast.expr:
        """The expression's tree, or a refusal saying where the syntax is wrong or that it is too big."""
        try:
            tree = ast.parse(self.parsed, mode="eval")
        except SyntaxError as error:
            at = f" ({self.parsed_at(error.lineno or 1, error.offset - 1)})" if error.offset else ""
            _refuse(
                "invalid",
                f"is not a valid expression: {error.msg}{at}; write arithmetic as Python does, "
                "such as (2 + 3) * 4 or sqrt(2) / 2",
            )
        except (ValueError, MemoryError, RecursionError):  # the scan leaves no known way here; refuse all the same
            _refuse("invalid", "is not a valid expression; write arithmetic as Python does, such as (2 + 3) * 4")
        count = 0
        for node in ast.walk(tree.body):
            if isinstance(node, ast.expr):
                count += 1
                if count > MAX_NODES:
                    _refuse(
                        "too_big",
                        f"has more than {MAX_NODES} numbers, names and operations; split it into several calls",
                    )
        return tree.body

    # -- step 3: the tree ----------------------------------------------------------------

    def check(self, node: ast.expr, depth: int = 0) -> None:
        """Refuse any node the grammar does not have, and operators nested more than MAX_DEPTH deep."""
        if depth > MAX_DEPTH:
            _refuse(
                "too_deep",
                f"nests operators more than {MAX_DEPTH} deep ({self.node_at(node)}); simplify it or split it "
                "into several calls",
            )
        # A chain such as 1 + 2 + 3 + ... nests on the left: following that spine costs no depth.
        while isinstance(node, ast.BinOp):
            if type(node.op) not in _OPERATORS:
                _refuse("invalid", f"has an unsupported operator {self.node_at(node)}; {_HINT}")
            self.check(node.right, depth + 1)
            node = node.left
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                _refuse("invalid", f"has something that is not a number {self.node_at(node)}; {_HINT}")
            self.checked(node.value, node)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.UAdd | ast.USub):
                _refuse("invalid", f"has an unsupported operator {self.node_at(node)}; {_HINT}")
            self.check(node.operand, depth + 1)
        elif isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                _refuse(
                    "invalid",
                    f"uses the function {node.id} without calling it {self.node_at(node)}; "
                    f"call it as {FUNCTIONS[node.id].usage}",
                )
            if node.id not in CONSTANTS:
                _refuse("invalid", f"has an unsupported name {_quote(node.id)} {self.node_at(node)}; {_HINT}")
        elif isinstance(node, ast.Call):
            self.check_call(node, depth)
        elif isinstance(node, ast.Tuple):
            _refuse(
                "invalid",
                f"has several values separated by commas {self.node_at(node)}; commas only separate the "
                "arguments of a function such as max(1, 2); send one expression per call",
            )
        elif isinstance(node, ast.Starred):
            _refuse("invalid", f"unpacks with * {self.node_at(node)}, which is not supported; {_HINT}")
        else:
            _refuse("invalid", f"has an unsupported {type(node).__name__} {self.node_at(node)}; {_HINT}")

    def check_call(self, node: ast.Call, depth: int) -> None:
        """A call must name a whitelisted function and pass it the right number of positional arguments."""
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is None or name not in FUNCTIONS:
            what = f"the constant {name}" if name in CONSTANTS else "something"
            _refuse("invalid", f"calls {what} {self.node_at(node)}, which is not a function; {_HINT}")
        function = FUNCTIONS[name]
        count = len(node.args)
        if node.keywords:
            _refuse(
                "invalid",
                f"passes a keyword argument to {name}() {self.node_at(node)}; pass arguments by position: "
                f"{function.usage}",
            )
        if count < function.fewest or (function.most is not None and count > function.most):
            _refuse(
                "invalid",
                f"calls {name}() with {count} argument{'' if count == 1 else 's'} {self.node_at(node)}; "
                f"call it as {function.usage}",
            )
        for argument in node.args:
            self.check(argument, depth + 1)

    # -- evaluation ----------------------------------------------------------------------

    def evaluate(self, node: ast.expr) -> Number:
        """The value of a checked *node*."""
        spine: list[ast.BinOp] = []
        while isinstance(node, ast.BinOp):
            spine.append(node)
            node = node.left
        value = self.leaf(node)
        for binop in reversed(spine):
            value = self.binary(binop, value, self.evaluate(binop.right))
        return value

    def leaf(self, node: ast.expr) -> Number:
        """The value of a checked node that is not a binary operation."""
        if isinstance(node, ast.Constant):
            return self.checked(node.value, node)
        if isinstance(node, ast.Name):
            return CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self.evaluate(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):  # check() let nothing else by
            raise TypeError(f"unchecked node {type(node).__name__}")
        name = node.func.id
        arguments = [self.evaluate(argument) for argument in node.args]
        if name == "round" and len(arguments) == 2:
            digits = arguments[1]
            if not isinstance(digits, int) or abs(digits) > MAX_DIGITS:
                _refuse(
                    "invalid",
                    f"calls round() with {_show(digits)} digits {self.node_at(node)}; the digits must be a whole "
                    f"number from -{MAX_DIGITS} to {MAX_DIGITS}, such as round(x, 2)",
                )
        try:
            result = FUNCTIONS[name].call(*arguments)
        except ZeroDivisionError:
            _refuse("invalid", f"divides by zero {self.where(node)}")
        except OverflowError:
            _refuse("too_big", f"overflows {self.where(node)}: {_OVERFLOW}")
        except ValueError:
            shown = ", ".join(_show(argument) for argument in arguments)
            _refuse("invalid", f"calls {name}({shown}) {self.node_at(node)}, which has no real result")
        return self.checked(result, node)

    def binary(self, node: ast.BinOp, left: Number, right: Number) -> Number:
        """Apply *node*'s operator, refusing an integer power too large to compute before computing it."""
        if isinstance(node.op, ast.Pow) and isinstance(left, int) and isinstance(right, int):
            self.check_power(node, left, right)
        try:
            result = _OPERATORS[type(node.op)](left, right)
        except ZeroDivisionError:
            _refuse("invalid", f"divides by zero {self.where(node)}")
        except OverflowError:
            _refuse("too_big", f"overflows {self.where(node)}: {_OVERFLOW}")
        return self.checked(result, node)

    def check_power(self, node: ast.BinOp, base: int, exponent: int) -> None:
        """Refuse ``base ** exponent`` if its result would have more than MAX_DIGITS digits, without computing it."""
        if exponent <= 0 or abs(base) <= 1:
            return  # a negative power is a float, which overflows cheaply; 0, 1 and -1 do not grow
        try:
            digits = float(exponent) * math.log10(abs(base))
        except OverflowError:  # an exponent beyond 1.8e308
            digits = math.inf
        if digits >= MAX_DIGITS + 1:
            about = f"about {digits:,.0f}" if digits < 1e15 else "more than 10**15"
            _refuse(
                "too_big",
                f"raises to a power {self.where(node)} whose result would have {about} digits; "
                f"integers are limited to {MAX_DIGITS:,} digits; scale the numbers down",
            )

    def checked(self, value: object, node: ast.AST) -> Number:
        """*value* if it is a real number of bounded size; otherwise a refusal saying which."""
        if isinstance(value, complex):
            _refuse("invalid", f"has no real result {self.where(node)} (a negative number to a fractional power)")
        if isinstance(value, float) and not math.isfinite(value):
            _refuse("too_big", f"overflows {self.where(node)}: {_OVERFLOW}")
        if isinstance(value, int) and not -_LIMIT < value < _LIMIT:
            _refuse("too_big", f"makes an integer of more than {MAX_DIGITS:,} digits {self.where(node)}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"an operation returned {type(value).__name__}")  # the whitelist returns nothing else
        return value


def evaluate(expression: str) -> Number:
    """Evaluate an arithmetic *expression* safely.

    Args:
        expression: arithmetic as Python writes it, such as ``(2 + 3) * 4`` or
            ``sqrt(2) / 2``, at most :data:`MAX_LENGTH` characters.

    Returns:
        An ``int`` when every step is exact integer arithmetic (``/``,
        ``sqrt``, ``exp``, ``log`` and the trigonometric functions always give a
        ``float``), else a finite ``float``.

    Raises:
        InputRejected: with one issue at ``expression`` saying what was wrong,
            where, and what would be right; through a runtime, ``math.eval``
            reports it as ``InputInvalidError``.

    """
    if len(expression) > MAX_LENGTH:
        _refuse("too_big", f"is {len(expression):,} characters long; at most {MAX_LENGTH:,} are allowed")
    if not expression.strip():
        _refuse("invalid", "is blank; send an arithmetic expression such as (2 + 3) * 4")
    parsed = _Expression(expression)
    parsed.scan()
    tree = parsed.parse()
    parsed.check(tree)
    return parsed.evaluate(tree)


@tool(
    name=_TOOL,
    version="1.0.0",
    inline=True,
    hints=ToolHints(title="Evaluate arithmetic", read_only=True, idempotent=True, open_world=False),
)  # bounded arithmetic that never blocks: on the loop's thread
def math_eval(
    expression: Annotated[str, s.string(min_length=1, max_length=MAX_LENGTH)],
) -> Annotated[
    Number, s.number(description="The value: an integer if every step was exact integer arithmetic, else a decimal")
]:
    """Evaluate an arithmetic expression and return its value as a number.

    Supports integers and decimals, + - * / // % ** (power) and parentheses, the functions abs, round, min, max,
    sqrt, floor, ceil, exp, log (natural, or log(x, base)), sin, cos, tan (radians), and the constants pi and e.
    Integer arithmetic is exact (up to 1,000 digits); / always gives a decimal. No variables, strings or other Python.

    Args:
        expression: Arithmetic as Python writes it, such as (2 + 3) * 4 or sqrt(2) / 2
    """
    return evaluate(expression)


@hookimpl
def hermes_tools() -> list[Tool]:
    """Contribute ``math.eval``."""
    return [math_eval]
