"""Approval: a provider's ask, the runtime's approver, the denials it makes, and the audit records of every decision."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

import pytest

from hermes_core import (
    Approval,
    ApprovalRequest,
    Ask,
    InvalidDefinitionError,
    PermissionDeniedError,
    Runtime,
    Tool,
    ToolFailedError,
    current_call,
    define_tool,
    reject,
)
from hermes_core import schema as s
from hermes_core._runtime._runtime import calls_of
from hermes_core.adapters import OpenAITools

AUDIT = "hermes_core.audit"


def write_tool(name: str = "fs.write", permissions: tuple[str, ...] = ("fs:write",), *, inline: bool = False) -> Tool:
    def write(args: dict[str, Any]) -> str:
        return f"wrote {args['path']} ({args['mode']})"

    return define_tool(
        name=name,
        description="Write a file.",
        version="1.0.0",
        input=s.object({"path": s.string(min_length=1), "mode": s.optional(s.enum(["w", "a"]), default="w")}),
        permissions=permissions,
        handler=write,
        inline=inline,
    )


class Provider:
    """A permission provider answering from a table, permission to answer."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def check(self, tool: Tool, permission: str) -> Any:
        return self.answers.get(permission)


class Person:
    """A plain approver answering from a list, remembering what it was asked."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


def asking(
    approver: Any = None, *, grants: tuple[str, ...] = (), reason: str | None = "writes need a person"
) -> Runtime:
    return Runtime([write_tool()], grants=grants, providers=[Provider({"fs:write": Ask(reason)})], approver=approver)


# -- the approver ---------------------------------------------------------------------------------


def test_approve_once_runs_the_call_and_asks_again_next_time() -> None:
    person = Person(Approval.once(), Approval.once())
    runtime = asking(person)
    assert runtime.call_sync("fs.write", {"path": "a"}) == "wrote a (w)"
    assert runtime.call_sync("fs.write", {"path": "b"}) == "wrote b (w)"
    assert len(person.requests) == 2


def test_the_request_holds_the_validated_input_with_its_default_filled_in() -> None:
    person = Person(Approval.once())
    asking(person).call_sync("fs.write", {"path": "a"})
    (request,) = person.requests
    assert request.input == {"path": "a", "mode": "w"}
    assert request.tool.name == "fs.write"
    assert request.permissions == ("fs:write",)
    assert request.reasons == ("writes need a person",)
    assert len(request.call_id) == 16


def test_input_the_schema_rejects_never_reaches_the_approver() -> None:
    person = Person()
    result = asking(person).observe_sync("fs.write", {"path": ""})
    assert result["error"]["code"] == "INPUT_INVALID"
    assert person.requests == []


def test_approve_always_is_remembered_for_the_tool_and_its_permissions() -> None:
    person = Person(Approval.always())
    runtime = asking(person)
    assert runtime.call_sync("fs.write", {"path": "a"}) == "wrote a (w)"
    assert runtime.call_sync("fs.write", {"path": "b"}) == "wrote b (w)"
    assert len(person.requests) == 1
    assert asking(Person(Approval.decline())).observe_sync("fs.write", {"path": "a"})["ok"] is False  # per runtime


def test_a_decline_with_a_message_is_passed_on_to_the_model() -> None:
    runtime = asking(Person(Approval.decline("not that file, use notes.txt")))
    with pytest.raises(PermissionDeniedError) as caught:
        runtime.call_sync("fs.write", {"path": "a"})
    error = caught.value
    assert (error.code, error.reason, error.detail, error.permission) == (
        "PERMISSION_DENIED",
        "declined",
        "not that file, use notes.txt",
        "fs:write",
    )
    assert error.message == (
        'A person declined this call of fs.write, saying: "not that file, use notes.txt".\n'
        "Do not call it again unless they ask you to."
    )


def test_a_decline_without_a_message() -> None:
    with pytest.raises(PermissionDeniedError) as caught:
        asking(Person(Approval.decline())).call_sync("fs.write", {"path": "a"})
    assert caught.value.message == (
        "A person declined this call of fs.write.\nDo not call it again unless they ask you to."
    )
    assert caught.value.to_dict()["reason"] == "declined"


def test_an_async_approver_is_awaited_in_call_and_run_in_call_sync() -> None:
    seen: list[str] = []

    async def approver(request: ApprovalRequest) -> Approval:
        await asyncio.sleep(0)
        seen.append(request.input["path"])
        return Approval.decline("no") if request.input["path"] == "no" else Approval.once()

    runtime = asking(approver)
    assert asyncio.run(runtime.call("fs.write", {"path": "a"})) == "wrote a (w)"
    assert runtime.call_sync("fs.write", {"path": "b"}) == "wrote b (w)"
    with pytest.raises(PermissionDeniedError, match="declined"):
        asyncio.run(runtime.call("fs.write", {"path": "no"}))
    assert seen == ["a", "b", "no"]


def test_a_plain_approver_runs_off_the_event_loop_in_call() -> None:
    threads: list[int] = []

    def approver(request: ApprovalRequest) -> Approval:
        threads.append(threading.get_ident())
        return Approval.always()

    assert asyncio.run(asking(approver).call("fs.write", {"path": "a"})) == "wrote a (w)"
    assert threads != [threading.get_ident()]


def test_the_calls_time_limit_applies_while_the_approver_waits() -> None:
    async def slow(request: ApprovalRequest) -> Approval:
        await asyncio.sleep(30)
        return Approval.once()

    runtime = asking(slow)
    with pytest.raises(ToolFailedError) as caught:
        asyncio.run(runtime.call("fs.write", {"path": "a"}, timeout=0.2))
    assert caught.value.reason == "timeout"
    with pytest.raises(ToolFailedError) as caught:
        runtime.call_sync("fs.write", {"path": "a"}, timeout=0.2)
    assert caught.value.reason == "timeout"


def test_an_approver_that_raises_or_answers_nonsense_fails_the_call() -> None:
    def broken(request: ApprovalRequest) -> Approval:
        raise OSError("the approval service is down")

    with pytest.raises(ToolFailedError) as caught:
        asking(broken).call_sync("fs.write", {"path": "a"})
    assert caught.value.detail == "the approver raised OSError, so the call was not made"
    with pytest.raises(ToolFailedError) as caught:
        asking(lambda request: True).call_sync("fs.write", {"path": "a"})
    assert caught.value.detail == "the approver raised TypeError, so the call was not made"


# -- what the call acts on: the tool's target -----------------------------------------------------


def targeted(target: Any) -> Tool:
    """A tool writing under a root whose target is *target* (a function of the checked input)."""

    def write(args: dict[str, Any]) -> str:
        return f"wrote {args['path']}"

    return define_tool(
        name="notes.write",
        description="Write a note.",
        version="1.0.0",
        input=s.object({"path": s.string(), "text": s.optional(s.string(), default="")}),
        permissions=["notes:write"],
        handler=write,
        target=target,
    )


def normalised(args: dict[str, Any]) -> str:
    names = [name for name in args["path"].split("/") if name not in ("", ".")]
    if ".." in names:
        raise reject("path", "contains '..'")
    return "/".join(names) or "."


def test_the_request_carries_the_target_the_tool_names_from_the_checked_input() -> None:
    person = Person(Approval.once(), Approval.once())
    runtime = Runtime(
        [targeted(normalised), write_tool()],
        providers=[Provider({"notes:write": Ask(), "fs:write": Ask()})],
        approver=person,
    )
    assert runtime.call_sync("notes.write", {"path": "notes/" + "./" * 300 + "Makefile"}) == (
        "wrote notes/" + "./" * 300 + "Makefile"
    )
    assert person.requests[0].target == "notes/Makefile"
    runtime.call_sync("fs.write", {"path": "a"})  # a tool that names no target
    assert person.requests[1].target is None


def test_a_target_the_tool_refuses_is_input_invalid_and_nobody_is_asked() -> None:
    person = Person(Approval.once())
    runtime = Runtime([targeted(normalised)], providers=[Provider({"notes:write": Ask()})], approver=person)
    result = runtime.observe_sync("notes.write", {"path": "notes/../Makefile"})
    assert result["error"]["code"] == "INPUT_INVALID"
    assert result["error"]["issues"][0]["path"] == ["path"]
    assert person.requests == []
    assert runtime.call_sync("notes.write", {"path": "notes/Makefile"}) == "wrote notes/Makefile"  # the same, taken


@pytest.mark.parametrize(
    ("target", "said"),
    [
        (lambda args: 1 / 0, "its target function raised ZeroDivisionError, so the call was not made"),
        (lambda args: 7, "its target function returned int, not a string, so the call was not made"),
    ],
)
def test_a_target_function_that_fails_fails_the_call_as_the_tools_fault(target: Any, said: str) -> None:
    person = Person()
    runtime = Runtime([targeted(target)], providers=[Provider({"notes:write": Ask()})], approver=person)
    with pytest.raises(ToolFailedError) as caught:
        asyncio.run(runtime.call("notes.write", {"path": "a"}))
    assert (caught.value.code, caught.value.reason, caught.value.tool) == ("TOOL_FAILED", "reported", "notes.write")
    assert said in caught.value.message
    assert person.requests == []


def test_a_handlers_question_carries_the_target_too() -> None:
    def tidy(args: dict[str, Any]) -> str:
        return "deleted" if current_call().confirm_sync("Delete it?") else "kept"

    tool = define_tool(
        name="notes.tidy",
        description="Tidy.",
        version="1.0.0",
        input=s.object({"path": s.string()}),
        handler=tidy,
        target=normalised,
    )
    person = Person(Approval.once())
    assert Runtime([tool], approver=person).call_sync("notes.tidy", {"path": "./a//b"}) == "deleted"
    assert (person.requests[0].message, person.requests[0].target) == ("Delete it?", "a/b")


def test_a_target_must_be_a_function() -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        targeted("path")
    assert caught.value.field == "target"
    assert "must be a function of the checked input returning a string, got 'path'" in str(caught.value)
    assert targeted(None).target is None
    assert targeted(normalised).target is normalised


# -- asks, denies and grants ----------------------------------------------------------------------


def test_an_ask_without_an_approver_is_a_denial_saying_how_to_approve() -> None:
    with pytest.raises(PermissionDeniedError) as caught:
        asking().call_sync("fs.write", {"path": "a"})
    error = caught.value
    assert (error.reason, error.detail) == ("no_approver", '"fs:write": writes need a person')
    assert error.message == (
        'fs.write needs a person\'s approval for the "fs:write" permission ("fs:write": writes need a person), '
        "and this runtime has no approver, so the call was not made.\n"
        "To allow it, pass an approver (Runtime(approver=...)), or grant the permission in the policy "
        "instead of asking. Retrying with different arguments will not help."
    )


def test_deny_beats_ask_even_on_another_permission() -> None:
    tool = write_tool(permissions=("fs:write", "fs:delete"))
    person = Person(Approval.once())
    provider = Provider({"fs:write": Ask(), "fs:delete": False})
    runtime = Runtime([tool], grants=["fs:*"], providers=[provider], approver=person)
    with pytest.raises(PermissionDeniedError) as caught:
        runtime.call_sync("fs.write", {"path": "a"})
    assert (caught.value.permission, caught.value.reason) == ("fs:delete", "not_granted")
    assert person.requests == []


def test_ask_beats_grant() -> None:
    person = Person(Approval.once())
    runtime = Runtime(
        [write_tool()],
        grants=["fs:*"],
        providers=[Provider({"fs:write": True}), Provider({"fs:write": Ask()})],
        approver=person,
    )
    assert runtime.call_sync("fs.write", {"path": "a"}) == "wrote a (w)"
    assert [r.permissions for r in person.requests] == [("fs:write",)]
    assert person.requests[0].reasons == (None,)


def test_a_tool_that_declares_no_permission_has_no_gate() -> None:
    plain = define_tool(
        name="math.add",
        description="Add.",
        version="1.0.0",
        input=s.object({"a": s.integer(), "b": s.integer()}),
        handler=lambda args: args["a"] + args["b"],
    )
    runtime = Runtime([plain], providers=[Provider({})], approver=Person())
    assert calls_of(runtime).entries["math.add"].gate is None
    assert runtime.call_sync("math.add", {"a": 1, "b": 2}) == 3


def test_an_approver_must_be_callable() -> None:
    with pytest.raises(Exception, match=r"Runtime\(\): approver must be a plain or async callable"):
        Runtime([], approver=42)  # type: ignore[arg-type]


# -- audit ----------------------------------------------------------------------------------------


def decisions(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, str, str]]:
    records = [r for r in caplog.records if r.name == AUDIT]
    for record in records:
        assert len(record.call_id) == 16  # type: ignore[attr-defined]
        assert isinstance(record.time, float)  # type: ignore[attr-defined]
        assert "path" not in record.getMessage()
    return [(r.tool, r.permission, r.decision, r.source) for r in records]  # type: ignore[attr-defined]


def test_audit_records_for_every_outcome(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT)
    granted = Runtime([write_tool()], grants=["fs:write"])
    granted.call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == [("fs.write", "fs:write", "granted", "grants")]
    caplog.clear()

    with pytest.raises(PermissionDeniedError):
        Runtime([write_tool()]).call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == [("fs.write", "fs:write", "denied", "nothing granted it")]
    caplog.clear()

    with pytest.raises(PermissionDeniedError):
        Runtime([write_tool()], grants=["*"], providers=[Provider({"fs:write": False})]).call_sync(
            "fs.write", {"path": "a"}
        )
    assert decisions(caplog) == [("fs.write", "fs:write", "denied", f"{__name__}.Provider")]
    caplog.clear()

    asking(Person(Approval.always())).call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == [
        ("fs.write", "fs:write", "asked", f"{__name__}.Provider"),
        ("fs.write", "fs:write", "approved", "approver"),
    ]
    caplog.clear()

    with pytest.raises(PermissionDeniedError):
        asking(Person(Approval.decline("no"))).call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == [
        ("fs.write", "fs:write", "asked", f"{__name__}.Provider"),
        ("fs.write", "fs:write", "declined", "approver"),
    ]
    caplog.clear()

    with pytest.raises(PermissionDeniedError):
        asking().call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == [
        ("fs.write", "fs:write", "asked", f"{__name__}.Provider"),
        ("fs.write", "fs:write", "denied", "no approver"),
    ]


def test_one_call_id_for_its_records_and_its_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT)
    person = Person(Approval.once())
    asking(person).call_sync("fs.write", {"path": "a"})
    ids = {r.call_id for r in caplog.records if r.name == AUDIT}  # type: ignore[attr-defined]
    assert ids == {person.requests[0].call_id}


def test_no_audit_record_when_nobody_listens(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=AUDIT)
    asking(Person(Approval.once())).call_sync("fs.write", {"path": "a"})
    assert [r for r in caplog.records if r.name == AUDIT] == []


def test_a_root_logger_at_info_does_not_turn_the_audit_records_on(caplog: pytest.LogCaptureFixture) -> None:
    # logging.basicConfig(level=INFO), as the MCP SDK's server does, is not a request for a record per call.
    caplog.set_level(logging.INFO)
    assert logging.getLogger(AUDIT).level == logging.NOTSET
    asking(Person(Approval.once())).call_sync("fs.write", {"path": "a"})
    assert [r for r in caplog.records if r.name == AUDIT] == []


# -- adapters -------------------------------------------------------------------------------------


def test_an_app_approves_one_call_and_declines_another_in_the_same_model_turn() -> None:
    async def approver(request: ApprovalRequest) -> Approval:
        if request.input["path"] == "notes.txt":
            return Approval.once()
        return Approval.decline("only notes.txt")

    tools = OpenAITools(asking(approver))
    calls = [
        {"id": "c1", "type": "function", "function": {"name": "fs_write", "arguments": '{"path": "notes.txt"}'}},
        {"id": "c2", "type": "function", "function": {"name": "fs_write", "arguments": '{"path": "/etc/passwd"}'}},
    ]
    messages = asyncio.run(tools.handle_all(calls))
    assert [(m["tool_call_id"], m["content"]) for m in messages] == [
        ("c1", "wrote notes.txt (w)"),
        (
            "c2",
            'PERMISSION_DENIED: A person declined this call of fs_write, saying: "only notes.txt".\n'
            "Do not call it again unless they ask you to.",
        ),
    ]


def test_await_call_writes_the_same_records(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=AUDIT)
    asyncio.run(Runtime([write_tool()], grants=["fs:write"]).call("fs.write", {"path": "a"}))
    asyncio.run(asking(Person(Approval.once())).call("fs.write", {"path": "a"}))
    assert decisions(caplog) == [
        ("fs.write", "fs:write", "granted", "grants"),
        ("fs.write", "fs:write", "asked", f"{__name__}.Provider"),
        ("fs.write", "fs:write", "approved", "approver"),
    ]


def test_records_asked_for_after_the_runtime_was_built(caplog: pytest.LogCaptureFixture) -> None:
    # A settled grant skips its gate on the straight path only while nobody listens: the level is read per call.
    caplog.set_level(logging.WARNING, logger=AUDIT)
    runtime = Runtime([write_tool(), write_tool("fs.write_inline", inline=True)], grants=["fs:write"])
    runtime.call_sync("fs.write", {"path": "a"})
    assert decisions(caplog) == []
    caplog.set_level(logging.INFO, logger=AUDIT)
    runtime.call_sync("fs.write", {"path": "a"})
    asyncio.run(runtime.call("fs.write_inline", {"path": "a"}))
    assert decisions(caplog) == [
        ("fs.write", "fs:write", "granted", "grants"),
        ("fs.write_inline", "fs:write", "granted", "grants"),
    ]


def test_a_tool_the_grants_settle_is_settled_and_asks_nobody() -> None:
    runtime = Runtime([write_tool()], grants=["fs:*"], approver=Person())
    assert calls_of(runtime).entries["fs.write"].settled
    assert runtime.call_sync("fs.write", {"path": "a"}) == "wrote a (w)"
    assert not calls_of(Runtime([write_tool()], grants=["fs:*"], providers=[Provider({})])).entries["fs.write"].settled
