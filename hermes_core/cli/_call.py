"""``hermesos call``: one tool call through the runtime, its output as JSON, its error on stderr.

A media tool's content is printed as a summary (each image, sound or file:
its type and size, not its bytes), and written to files with ``--save-media DIR``.

A person is in the loop on stderr: a call that needs approval (a policy's
``ask``, a tool's own question) is asked about on a terminal (yes, no,
always), approved with ``--approve``, and otherwise refused (a tool's own
question answered no, saying so); the call's progress is a live bar on a
terminal and plain lines elsewhere, and its log messages are lines.

``--lenient`` is ``serve --lenient`` for one call: an input repaired where
that is unambiguous and lossless, and the note a model would read after the
result on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from hermes_core.cli import _output as out
from hermes_core.cli._args import OK, PROBLEMS, TERMINATED, Usage, add_common, add_grant, add_timeout
from hermes_core.cli._running import Terminated, while_open

if TYPE_CHECKING:
    from collections.abc import Callable

    from hermes_core._plugins._discover import PluginProblem, PluginSet
    from hermes_core._tool._approval import Approval, ApprovalRequest, Approver
    from hermes_core._tool._call_context import LogMessage, Progress

#: The most ``call -`` reads from stdin: 16 MiB, far above any tool input, far below a machine's memory.
STDIN_LIMIT = 16 * 1024 * 1024


def _not_json(problem: str) -> Usage:
    return Usage(f"hermesos call: error: the input is not valid JSON: {problem}")


def _bytes(size: int) -> str:
    """A size for a message: ``16 MiB``, or ``100 bytes`` when it is not a whole number of MiB."""
    mib, rest = divmod(size, 1024 * 1024)
    return f"{mib} MiB" if mib and not rest else f"{size} bytes"


def _read_stdin() -> str:
    """The input from stdin: at most :data:`STDIN_LIMIT` bytes of UTF-8, or a usage error."""
    stream = getattr(sys.stdin, "buffer", None)  # a text stream without one (a test's StringIO) is read as text
    data: bytes | str = sys.stdin.read(STDIN_LIMIT + 1) if stream is None else stream.read(STDIN_LIMIT + 1)
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > STDIN_LIMIT:
        raise Usage(
            f"hermesos call: error: the input on stdin is larger than {_bytes(STDIN_LIMIT)}, "
            "the most 'hermesos call -' reads"
        )
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _not_json(f"it is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})") from None


def _constant(name: str) -> NoReturn:
    """Refuse the ``NaN``, ``Infinity`` and ``-Infinity`` that Python's json module accepts: JSON has none."""
    raise _not_json(f"{name} is not a JSON value (JSON numbers are finite)")


def _integer(text: str) -> int:
    """An integer of the input; one with more digits than Python converts is a usage error, not a traceback."""
    try:
        return int(text)
    except ValueError:
        raise Usage(
            f"hermesos call: error: the input holds an integer of {len(text.lstrip('-'))} digits, "
            f"more than the {sys.get_int_max_str_digits()} this Python reads"
        ) from None


def _float(text: str) -> float:
    """A number of the input with a fraction or exponent; one too large for a float is a usage error."""
    number = float(text)
    if math.isinf(number):
        raise Usage(
            f"hermesos call: error: the input holds the number {_shorten(text, 40)}, too large for a 64-bit float"
        )
    return number


def _read_input(text: str) -> Any:
    """Parse the call's input, or raise a usage error of one line (naming the line and column where it can)."""
    try:
        return json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as error:
        raise _not_json(f"{error.msg.removesuffix(' at')} at line {error.lineno}, column {error.colno}") from None
    except RecursionError:
        raise Usage("hermesos call: error: the input nests arrays and objects too deeply to read") from None


def _shorten(text: str, limit: int) -> str:
    from hermes_core._base._issues import shorten  # noqa: PLC0415 - only a bad input needs it

    return shorten(text, limit)


def _missing_name(args: argparse.Namespace) -> None:
    """Refuse ``hermesos call '{"a": 1}'``: a JSON input where the tool's name goes says the name is missing."""
    if args.input is None and args.tool.lstrip()[:1] in ("{", "[", '"', "-"):
        raise Usage(
            f"hermesos call: error: the tool's name is missing: {_shorten(repr(args.tool), 60)} is the input; "
            "give the name first, as in hermesos call NAME INPUT ('hermesos tools list' lists the names)"
        )


def _call(args: argparse.Namespace) -> int:
    from hermes_core._base._errors import PermissionDeniedError, ToolError, ToolNotFoundError  # noqa: PLC0415
    from hermes_core._door._door import Door, Repaired  # noqa: PLC0415
    from hermes_core._runtime._permissions import env_grants  # noqa: PLC0415 - only commands that need plugins load them
    from hermes_core._tool._call_context import Listeners  # noqa: PLC0415 - only commands that call a tool need it

    _missing_name(args)

    if args.input == "-":
        source = _read_stdin()
    elif args.input is None:
        source = "{}"
    else:
        source = args.input
    value = _read_input(source)
    # Strict as load_runtime is, but every broken plugin is reported, each on one line.
    found = out.discover(args)
    if out.fatal(found):
        out.report_problems(found.problems, args)
        return PROBLEMS
    said = _warn_of_permissions(found, args)
    line = out.StatusLine()  # stderr's live line: the clock, the bar; held while a person is asked
    try:
        runtime = found.runtime(
            grants=(*args.grant, *env_grants()), approver=_approver(args.approve, line), lenient=args.lenient
        )
    except ToolError as error:
        return out.report(error, args)
    # The front door every edge calls through, here by the tools' own names: a person typed the name, and
    # reads the error as the runtime wrote it (the input was read above, with this command's own messages).
    door = Door(runtime, None, timeout=args.timeout, where="hermesos call --timeout")

    def call() -> int:
        try:
            # Its server, if it has one, may be starting; a progress report takes over from the clock.
            with out.waiting(f"calling {args.tool}", status=line) as quiet:
                shown = _Shown(args.tool, line, quiet, debug=args.debug)
                try:
                    output = door.call_sync(args.tool, value, Listeners(shown.progress, shown.log))
                finally:
                    line.clear()  # the bar, once the call is over, before what it printed
        except PermissionDeniedError as error:
            return out.report(error, args, None if args.json else out.permission_hint(error, args.grant))
        except ToolNotFoundError as error:
            status = out.report(error, args)
            unsaid = [problem for problem in found.problems if problem not in said]
            if unsaid and not args.json:
                out.report_problems(unsaid, args)  # a plugin said what it could not load: the tool, maybe
            return status
        except ToolError as error:
            return out.report(error, args)
        if isinstance(output, Repaired):  # --lenient, or the tool's own lenient=True: what was assumed
            print(f"hermesos: {out.printable(output.note(), lines=True)}", file=sys.stderr)
            output = output.output
        if _is_content(output):
            try:
                out.print_json(_content_summary(output, args.tool, args.save_media))
            except OSError as error:
                print(
                    out.printable(f"hermesos call: error: could not save the media in {args.save_media}: {error}"),
                    file=sys.stderr,
                )
                return PROBLEMS
            return OK
        out.print_json(output)
        return OK

    try:
        return while_open(runtime, args, call)
    except Terminated:
        print("hermesos: terminated", file=sys.stderr)
        return TERMINATED


# -- a person in the loop: approval, progress and log messages, on stderr ---------------------------

#: The most characters of a call's input the approval prompt shows; the rest is counted, never the target.
INPUT_SHOWN = 500
#: Seconds between two progress lines on a stream that is not a terminal (the line that completes the total
#: is always printed): a long call's log stays readable.
PROGRESS_EVERY = 1.0
PROMPT = "Allow? [y]es / [n]o / [a]lways: "
_ANSWERS = {"y": "once", "yes": "once", "n": "decline", "no": "decline", "a": "always", "always": "always"}


def _warn_of_permissions(found: PluginSet, args: argparse.Namespace) -> list[PluginProblem]:
    """Say, before the call, what the plugins deciding permissions warn of (a policy's rule for no tool); return it.

    It changes what the call may do: a deny written for a tool that is not there denies nothing.
    """
    deciding = {plugin.origin for plugin in found.plugins if plugin.ok and plugin.providers}
    said = [problem for problem in found.problems if problem.origin in deciding]
    if not args.json:
        out.report_problems(said, args)
    return said


def _approver(approve: bool, status: out.StatusLine) -> Approver:
    """Who answers the asks of this call: --approve, else the person at the terminal, else nobody (a no, said)."""
    if approve:
        return _Approve(status)
    if _is_terminal(sys.stdin) and _is_terminal(status.stream):
        return _Ask(status)
    return _Nobody(status)


def _is_terminal(stream: Any) -> bool:
    try:
        return stream is not None and bool(stream.isatty())
    except (OSError, ValueError):  # closed
        return False


def _asked_about(request: ApprovalRequest) -> str:
    """What a request asks, in a few words: ``fs.write (fs:write) on notes/todo.txt``, or the tool's question."""
    on = "" if request.target is None else f" on {_target(request.target)}"
    if request.message is not None:
        return f"{request.tool.name}{on}: {out.printable(request.message)}"
    return f"{request.tool.name} ({', '.join(request.permissions)}){on}"


def _target(target: str) -> str:
    """The target as shown: whole, escaped, and in ASCII too when it is not all ASCII (a Cyrillic a, U+0430)."""
    from hermes_core._base._issues import unmistakable  # noqa: PLC0415 - only a call that asks needs it

    return unmistakable(target)


def _input_shown(value: Any) -> str:
    """The input as JSON, escaped, its first :data:`INPUT_SHOWN` characters, saying how many more there are."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    if len(text) <= INPUT_SHOWN:
        return out.printable(text)
    return f"{out.printable(text[:INPUT_SHOWN])}... ({len(text) - INPUT_SHOWN:,} more characters not shown)"


class _Approve:
    """``--approve``: every ask of this call approved, each said on stderr as it happens."""

    def __init__(self, status: out.StatusLine) -> None:
        self.status = status

    def __call__(self, request: ApprovalRequest) -> Approval:
        from hermes_core._tool._approval import Approval  # noqa: PLC0415 - only a call that asks needs it

        self.status.say(f"hermesos: approved with --approve: {_asked_about(request)}")
        return Approval.once()


class _Nobody:
    """No terminal and no ``--approve``: nobody to ask, and the command says so.

    A permission's ask is refused as a runtime without an approver refuses it
    (``PERMISSION_DENIED``, reason ``no_approver``; the command then says how
    to approve). A tool's own question is answered no, which the handler acts
    on, and a line on stderr says it was asked, answered no and why: the
    call's outcome alone would not show that a question was ever put.
    """

    def __init__(self, status: out.StatusLine) -> None:
        self.status = status

    def __call__(self, request: ApprovalRequest) -> Approval:
        from hermes_core._tool._approval import Approval, no_approver  # noqa: PLC0415 - only a call that asks needs it

        if request.message is None:
            raise no_approver(request.tool.name, request.permissions, request.reasons, request.call_id)
        said = f"hermesos: answered no, with no terminal to ask a person on: {_asked_about(request)} ({_UNASKED})"
        self.status.say(said)
        return Approval.decline()


#: How to be asked, after a tool's question answered no without a terminal (as out.APPROVE_HINT after a refusal).
_UNASKED = (
    "run hermesos call on a terminal, stdin and stderr, to be asked, or pass --approve to approve every ask "
    "of this call"
)


class _Ask:
    """The person at the terminal, asked on stderr and answering on stdin: yes, no or always.

    ``n`` declines; whatever follows it on the line (``n not that file``) is
    the decline's message, passed on in the error. The end of the input
    (Ctrl-D) declines.
    """

    def __init__(self, status: out.StatusLine) -> None:
        self.status = status

    def __call__(self, request: ApprovalRequest) -> Approval:
        from hermes_core._tool._approval import Approval  # noqa: PLC0415 - only a call that asks needs it

        with self.status.held() as stream:
            style = out.Style(stream)
            _write(stream, _request_text(request, style))
            while True:
                _write(stream, style.bold(PROMPT))
                line = sys.stdin.readline()
                if not line:  # the end of the input: nobody to say yes
                    _write(stream, "\n")
                    return Approval.decline()
                word, _, rest = line.strip().partition(" ")
                decision = _ANSWERS.get(word.lower().rstrip(":,.;"))
                if decision == "once":
                    return Approval.once()
                if decision == "always":
                    return Approval.always()
                if decision == "decline":
                    return Approval.decline(rest.strip() or None)
                _write(
                    stream,
                    "Answer y to allow this call, n to decline it (n and a message: the message is passed on), "
                    "or a to allow it and the same ask again within this command.\n",
                )


def _request_text(request: ApprovalRequest, style: out.Style) -> str:
    """The request as the person reads it: the tool, what it acts on (in full), what asks and why, the input.

    What decides the call's effect comes first and is never cut: the tool, the
    target it names (hermesos-fs: the path, normalised) and the permissions.
    The input may be cut, saying how much was left out. Everything is escaped
    (:func:`~hermes_core.cli._output.printable`).
    """
    tool = style.bold(request.tool.name)
    if request.message is not None:
        lines = [f"hermesos: {tool} asks: {out.printable(request.message)}"]
    else:
        lines = [f"hermesos: {tool} needs your approval"]
    if request.target is not None:
        lines.append(f"  target: {style.bold(_target(request.target))}")
    for permission, reason in zip(request.permissions, request.reasons, strict=True):
        why = f" ({out.printable(reason)})" if reason else ""
        lines.append(f"  permission: {permission}{why}")
    lines.append(f"  input: {_input_shown(request.input)}")
    return "\n".join(lines) + "\n"


def _write(stream: Any, text: str) -> None:
    stream.write(text)
    stream.flush()


class _Shown:
    """One call's progress and log messages on stderr: a live bar on a terminal, plain lines elsewhere.

    The first report stops the "calling..." clock: the bar says the call is
    alive. Log messages are lines (``fs.list: warning: ...``); debug ones only
    with --debug.
    """

    def __init__(self, tool: str, status: out.StatusLine, quiet: Callable[[], None], *, debug: bool) -> None:
        self.tool = tool
        self.status = status
        self.quiet = quiet
        self.debug = debug
        self.last = -math.inf  # when the last plain line was printed

    def progress(self, report: Progress) -> None:
        import time  # noqa: PLC0415 - imported already: the clock of waiting()

        self.quiet()
        if self.status.live:
            self.status.show(out.progress_text(report.done, report.total, report.message, bar=True))
            return
        now = time.monotonic()
        complete = report.total is not None and report.done >= report.total
        if now - self.last < PROGRESS_EVERY and not complete:
            return
        self.last = now
        self.status.say(f"progress: {out.progress_text(report.done, report.total, report.message, bar=False)}")

    def log(self, message: LogMessage) -> None:
        if message.level == "debug" and not self.debug:
            return
        style = out.Style(self.status.stream)
        level = message.level
        shown = style.red(level) if level in ("error", "critical", "alert", "emergency") else level
        shown = style.yellow(level) if level == "warning" else shown
        self.status.say(f"{self.tool}: {shown}: {out.printable(message.message, lines=True)}")


def _is_content(output: Any) -> bool:
    from hermes_core._tool._blocks import Content  # noqa: PLC0415 - only a call's output needs it

    return type(output) is Content


def _content_summary(content: Any, tool: str, save: str | None) -> dict[str, Any]:
    """A media tool's content as JSON to print: text as it is, every other block its type and size, not its bytes.

    With *save*, each image, sound and embedded file is written to a new file
    in that folder (made if missing; an existing file is never overwritten),
    named after the tool and the block's place (``chart.draw-2.png``), and
    its entry says where (``saved``).

    Raises:
        OSError: the folder or a file could not be written.
    """
    from hermes_core._door._door import mcp_content  # noqa: PLC0415
    from hermes_core._tool._blocks import Audio, Content, EmbeddedResource, Image, Text  # noqa: PLC0415 - see _is_content

    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(content.blocks, 1):
        data: bytes | None = None
        shown: dict[str, Any]
        if isinstance(block, Text):
            shown = {"type": "text", "text": block.text}
        elif isinstance(block, Image | Audio):
            data = block.data
            shown = {"type": type(block).__name__.lower(), "mimeType": block.mime_type, "size": len(data)}
        elif isinstance(block, EmbeddedResource):
            entry = {"type": "resource", "uri": block.uri, "mimeType": block.mime_type, "size": block.size}
            if block.blob is None:
                entry["text"] = block.text
            data = block.blob
            shown = {key: value for key, value in entry.items() if value is not None}
        else:  # a link: nothing to save, nothing long
            shown = mcp_content(Content(block))[0]
        if data is not None and save is not None:
            shown["saved"] = _save(Path(save), f"{tool}-{index}", _extension(shown.get("mimeType")), data)
        blocks.append(shown)
    summary: dict[str, Any] = {"content": blocks}
    if content.structured is not None:
        summary["structured"] = content.structured
    return summary


def _extension(mime_type: str | None) -> str:
    """The usual file extension of a media type (``.png``), else ``.bin``."""
    import mimetypes  # noqa: PLC0415 - only --save-media needs it

    known = {"image/jpeg": ".jpg", "audio/mpeg": ".mp3", "audio/wav": ".wav"}  # mimetypes' own picks are odd
    return known.get(mime_type or "") or (mimetypes.guess_extension(mime_type or "") or ".bin")


def _save(folder: Path, stem: str, extension: str, data: bytes) -> str:
    """Write *data* to a new file in *folder* named *stem* + *extension* (a number added if it exists); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 10_000):
        path = folder / (f"{stem}{extension}" if attempt == 1 else f"{stem}.{attempt}{extension}")
        try:
            with path.open("xb") as file:
                file.write(data)
        except FileExistsError:
            continue
        return str(path)
    raise FileExistsError(f"{folder} already holds {stem}{extension} and 9,999 more of its name")


def add_parsers(subcommands: Any) -> None:
    """``call``."""
    codes = ", ".join(f"{code} {status}" for code, status in out.EXIT_STATUSES.items())
    call = subcommands.add_parser(
        "call",
        help="call a tool through the runtime and print its output as JSON",
        description="Call a tool through the runtime (permissions, input and output checked) and print its "
        "output as JSON. On a tool error, print the error on stderr (with --json, its to_dict() JSON); "
        "a handler that raised is the error TOOL_FAILED, and --debug adds the traceback of what it raised. "
        "The progress a tool reports is shown on stderr (a live bar on a terminal, plain lines elsewhere), and "
        "its log messages as lines. Options may come before or after the name and the input.",
        epilog=f"Exit statuses: 0 ok, 1 a plugin is broken, 2 usage (the input is not a JSON value, the tool's "
        f"name is missing, a malformed --grant), {codes}.",
    )
    add_common(call)
    call.add_argument("tool", help="the tool's name, such as fs.read")
    call.add_argument("input", nargs="?", help="the input as JSON, or - to read it from stdin (default: {})")
    add_grant(call)
    add_timeout(call, "the most seconds the tool may take (default: the tool's own limit, if any)")
    call.add_argument(
        "--approve",
        action="store_true",
        help="approve every ask of this call (a policy's ask list, the tool's own question), each said on stderr; "
        "without it, a call that asks is asked about on a terminal (stdin and stderr) and refused elsewhere",
    )
    call.add_argument(
        "--lenient",
        action="store_true",
        help="repair a call's input where that is unambiguous and lossless ('5' for an integer, 'true' for a "
        "boolean...), saying on stderr what was assumed, in the line a model would read after the result; "
        "a tool's own choice wins",
    )
    call.add_argument(
        "--save-media",
        metavar="DIR",
        help="write each image, sound and file the tool returns to a new file in DIR (made if missing); the "
        "printed summary says where",
    )
    call.set_defaults(run=_call)
