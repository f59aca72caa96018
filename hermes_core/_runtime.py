"""The runtime: calls tools in a fixed order, lookup → permission → input → handler → output.

A :class:`Runtime` is checked when it is built (by :mod:`hermes_core._checks`,
the same checks the plugin loader applies) and immutable afterwards, so it is
safe to share across threads and tasks. The one thing about it that changes is
whether its :class:`Resource` objects are open: ``open()``/``close()``, ``with``
and ``async with``, under a lock, in one slot beside the frozen fields. Everything that can be computed once
(compiled validators, each tool's permission gate, the name index) is
computed in the constructor; a call is a dict lookup and straight-line code.
Permission decisions live in :mod:`hermes_core._permissions`, name suggestions
in :mod:`hermes_core._names`, where a handler runs (a worker thread, a time
limit, a new event loop) in ``_aio``, and spans in :mod:`hermes_core._tracing`.

A call raises nothing but a :class:`~hermes_core.ToolError` for any
``Exception`` of a handler: it becomes ``TOOL_FAILED``, its traceback logged
on the ``hermes_core`` logger with the tool's name and the call's id.
``BaseException`` that is not an ``Exception`` (cancellation,
``KeyboardInterrupt``, ``SystemExit``) passes through untouched.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from time import monotonic
from types import MappingProxyType, TracebackType
from typing import Any, Final, Literal, NoReturn, Protocol, final, runtime_checkable

from hermes_core import _tracing as tracing
from hermes_core._aio import (
    Expired,
    Stranded,
    await_within,
    require_no_loop,
    run_coroutine,
    run_in_thread,
    to_thread,
)
from hermes_core._checks import check_providers, check_schemas, check_tools, check_wiring
from hermes_core._errors import (
    InputInvalidError,
    InputRejected,
    InvalidDefinitionError,
    Issue,
    OutputInvalidError,
    ToolError,
    ToolFailedError,
    ToolNotFoundError,
    _seconds,
    exception_type_name,
)
from hermes_core._frozen import derive, frozen
from hermes_core._names import suggest
from hermes_core._permissions import Gate, PermissionProvider, Permissions, StaticGrants
from hermes_core._tools import Tool, check_timeout, tool_annotations
from hermes_core.schema import Schema
from hermes_core.schema._validators import compile_schema, follow_refs, raised_issue

__all__ = ["Resource", "ResourceError", "Runtime", "check_resources", "raised", "resource_label"]


class _Unset:
    """The marker for "no timeout given for this call": the tool's, then the runtime's, apply."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<the tool's or the runtime's>"


UNSET: Final[Any] = _Unset()

# Results of these types are never awaitable; skipping the check saves a costly call per await.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


_Check = Callable[[Any, tuple[str | int, ...], list[Issue]], Any]


@final
@frozen
class _Entry:
    """Everything a call of one tool needs, resolved at construction."""

    tool: Tool
    name: str
    handler: Callable[[Any], Any]
    is_async: bool
    input: _Check
    output: _Check
    gate: Gate | None  # None when no permission needs asking at call time
    timeout: float | None  # the tool's, else the runtime's
    inline: bool  # a plain handler that runs on the event loop's thread under await call()

    @classmethod
    def make(cls, tool: Tool, schemas: Mapping[str, Schema], permissions: Permissions, timeout: float | None) -> _Entry:
        """The entry of *tool*, its validators compiled against *schemas* where it names them."""
        return cls(
            tool,
            tool.name,
            tool.handler,
            tool.is_async,
            (tool._input_validator or compile_schema(tool.input, schemas)).entry,
            (tool._output_validator or compile_schema(tool.output, schemas)).entry,
            permissions.gate(tool),
            tool.timeout if tool.timeout is not None else timeout,
            tool.inline,
        )


def _checked(
    validate: _Check,
    value: Any,
    error: type[InputInvalidError | OutputInvalidError],
    tool: str,
) -> Any:
    """Validator.check, inlined, raising *error* for the tool: it runs twice on every call."""
    issues: list[Issue] = []
    try:
        result = validate(value, (), issues)
    except Exception as exc:  # only the value's own code can raise here
        issues = [raised_issue(exc)]
    if issues:
        raise error(tool, issues)
    return result


# -- resources held across calls ---------------------------------------------------------


@runtime_checkable
class Resource(Protocol):
    """Something a runtime holds across calls (a connection pool, a server subprocess), opened and closed with it.

    ``open()`` is called when the runtime opens (``runtime.open()``, ``with
    runtime:``, ``async with runtime:``; ``hermesos call`` and ``hermesos serve``
    open theirs), ``close()`` when it closes. Both are plain functions on
    purpose: ``call_sync`` runs each ``async`` handler in a new event loop, so
    nothing bound to one event loop can outlive a call. A resource that needs
    an event loop runs its own, on a thread of its own, started by ``open()``
    and stopped by ``close()``.

    ``close()`` must be safe to call after an ``open()`` that raised half-way:
    the runtime calls it then too, to release whatever was acquired. Neither
    is called twice in a row by the runtime. Tools must still work when the
    runtime was never opened (a runtime built in a test, say): connect per
    call, or raise a :class:`~hermes_core.ToolFailedError` saying so.

    A resource may also define coroutine methods ``aopen()`` and ``aclose()``.
    When every resource of a runtime has them, ``async with runtime:`` awaits
    them on its own event loop instead of calling ``open()`` and ``close()``
    on a worker thread: the resource may then hold what is bound to that loop,
    and calls made on it need no hop to a thread of the resource's own.
    ``aclose()`` is awaited after an ``aopen()`` that raised, or was cancelled,
    half-way.
    """

    def open(self) -> None:
        """Acquire what the resource holds: start the subprocess, connect the pool."""

    def close(self) -> None:
        """Release it; safe after an ``open()`` that raised, or that was never made."""


class ResourceError(Exception):
    """A runtime's resource failed to open, or some failed to close.

    Deliberately not a :class:`~hermes_core.ToolError`: no tool call went
    wrong. What the first failing resource raised is chained as ``__cause__``;
    each failure to close is also logged, with its traceback, on the
    ``hermes_core`` logger.

    Attributes:
        action: ``"open"`` or ``"close"``.
        failed: the resources that failed, as messages name them (see
            :func:`resource_label`), in the order they failed.
    """

    def __init__(self, action: Literal["open", "close"], failed: tuple[str, ...], message: str) -> None:
        self.action = action
        self.failed = failed
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.action, self.failed, self.args[0]))


def raised(error: BaseException) -> str:
    """What code raised, for a message: ``RuntimeError: boom``, ``SystemExit: 3``, or the bare type."""
    try:
        text = str(error)
    except Exception:  # the error's own __str__ failing must not hide what was raised
        text = ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def resource_label(source: str, field: str, index: int, resource: object) -> str:
    """How messages name a resource: ``Runtime(): resources[0] (Database)``, or a plugin's origin and hook."""
    return f"{source}: {field}[{index}] ({type(resource).__name__})"


def check_resources(source: str, field: str, resources: Iterable[object]) -> tuple[Resource, ...]:
    """The resources, each with callable ``open()`` and ``close()``.

    Raises:
        InvalidDefinitionError: an item lacks one of them.
    """
    checked: list[Resource] = []
    for index, resource in enumerate(resources):
        if not (callable(getattr(resource, "open", None)) and callable(getattr(resource, "close", None))):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must be a resource: an object with methods open() and close(), called when the runtime opens "
                f"and closes; got {type(resource).__name__}",
            )
        aopen, aclose = getattr(resource, "aopen", None), getattr(resource, "aclose", None)
        if (aopen is not None or aclose is not None) and not (
            inspect.iscoroutinefunction(aopen) and inspect.iscoroutinefunction(aclose)
        ):
            raise InvalidDefinitionError(
                source,
                f"{field}[{index}]",
                "must define both aopen() and aclose() as coroutine methods (async def), or neither; "
                f"got {type(resource).__name__}",
            )
        checked.append(resource)  # type: ignore[arg-type]  # both methods checked just above
    return tuple(checked)


def _is_async(resource: object) -> bool:
    return inspect.iscoroutinefunction(getattr(resource, "aopen", None))


@final
class _Lifecycle:
    """Whether a runtime's resources are open, and how many ``with`` blocks hold them: its one mutable part."""

    __slots__ = ("_depth", "_labels", "_lock", "_open", "_owned", "_resources", "all_async")

    def __init__(self, resources: tuple[Resource, ...], labels: tuple[str, ...]) -> None:
        self._resources = resources
        self._labels = labels
        self._lock = threading.Lock()
        self._open = False
        self._depth = 0  # the with blocks inside one another
        self._owned = False  # whether the outermost with block opened the resources (and so closes them)
        #: Every resource has aopen() and aclose(): ``async with`` awaits them on its loop.
        self.all_async = bool(resources) and all(_is_async(resource) for resource in resources)

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self) -> None:
        with self._lock:
            self._open_all()

    def close(self) -> None:
        with self._lock:
            self._close_all()

    def enter(self) -> None:
        with self._lock:
            if self._depth == 0:
                owned = not self._open
                self._open_all()
                self._owned = owned
            self._depth += 1

    def leave(self) -> None:
        with self._lock:
            self._depth = max(self._depth - 1, 0)
            if self._depth == 0 and self._owned:
                self._owned = False
                self._close_all()

    async def aenter(self) -> None:
        """``async with``'s opening when every resource is async: on the caller's loop, no thread."""
        with self._lock:
            first = self._depth == 0 and not self._open
            self._depth += 1
            if not first:
                return
            self._open = self._owned = True  # claimed now: another block entering meanwhile only counts
        for index, resource in enumerate(self._resources):
            try:
                await resource.aopen()  # type: ignore[attr-defined]  # all_async: checked at construction
            except BaseException as error:
                await self._arelease(index + 1)
                with self._lock:
                    self._open = self._owned = False
                    self._depth = max(self._depth - 1, 0)
                if not isinstance(error, Exception):
                    raise  # cancelled or interrupted while opening: closed again, and it goes on as it is
                raise self._open_failed(index, error) from error

    async def aleave(self) -> None:
        with self._lock:
            self._depth = max(self._depth - 1, 0)
            if self._depth or not self._owned:
                return
            self._owned = self._open = False
        self._raise_failures(await self._arelease(len(self._resources)))

    async def _arelease(self, count: int) -> list[tuple[str, BaseException]]:
        """As :meth:`_release`, awaiting each ``aclose()``; a cancellation meanwhile waits for the closing."""
        failures: list[tuple[str, BaseException]] = []
        for index in reversed(range(count)):
            try:
                await self._resources[index].aclose()  # type: ignore[attr-defined]  # all_async
            except BaseException as error:
                label = self._labels[index]
                _logger().error("%s failed to close: %s", label, raised(error), exc_info=error)
                failures.append((label, error))
        return failures

    def _open_all(self) -> None:
        if self._open:
            return
        for index, resource in enumerate(self._resources):
            try:
                resource.open()
            except BaseException as error:
                # It may have acquired part of what it holds: it is closed too, then those before it.
                self._release(index + 1)
                if not isinstance(error, Exception):
                    raise  # Ctrl-C while opening: everything is closed again, and it goes on as it is
                raise self._open_failed(index, error) from error
        self._open = True

    def _open_failed(self, index: int, error: Exception) -> ResourceError:
        label = self._labels[index]
        return ResourceError("open", (label,), f"{label} failed to open: {raised(error)}; the runtime stays closed")

    def _close_all(self) -> None:
        if not self._open:
            return
        self._open = False  # closed, whatever each close says: a resource is never closed twice
        self._raise_failures(self._release(len(self._resources)))

    def _raise_failures(self, failures: list[tuple[str, BaseException]]) -> None:
        interrupt = next((error for _, error in failures if not isinstance(error, Exception)), None)
        if interrupt is not None:
            raise interrupt  # every resource had its close() called first
        if failures:
            failed = tuple(label for label, _ in failures)
            if len(failures) == 1:
                message = f"{failed[0]} failed to close: {raised(failures[0][1])}"
            else:
                each = "; ".join(f"{label}: {raised(error)}" for label, error in failures)
                message = f"{len(failures)} resources failed to close: {each}"
            raise ResourceError("close", failed, message) from failures[0][1]

    def _release(self, count: int) -> list[tuple[str, BaseException]]:
        """Close the first *count* resources, last first; each failure is logged, and none stops the others."""
        failures: list[tuple[str, BaseException]] = []
        for index in reversed(range(count)):
            try:
                self._resources[index].close()
            except BaseException as error:  # Ctrl-C too: every resource has its close() called
                label = self._labels[index]
                _logger().error("%s failed to close: %s", label, raised(error), exc_info=error)
                failures.append((label, error))
        return failures


@final
@frozen(init=False, eq=False, repr=False)
class Runtime:
    """Calls registered tools, checking permissions, input and output on every call.

    Args:
        tools: the tools, each made by :func:`~hermes_core.define_tool`.
        grants: grant patterns: ``fs:write``, ``fs:*`` (a whole namespace) or ``*``.
        providers: permission providers, objects with
            ``check(tool, permission) -> bool | None``, asked on every call of a
            tool that declares permissions. Any False denies, whatever else grants.
        schemas: named schemas, name to schema, that tools use through ``s.ref(name)``.
        timeout: the most seconds a call may take, for the tools that set none
            themselves (None: no limit).
        resources: :class:`Resource` objects the tools hold across calls,
            opened in this order by :meth:`open` (or ``with runtime:``) and
            closed in the reverse order by :meth:`close`. A runtime that is
            never opened still calls its tools.
        resource_labels: what messages call each resource, in the same order
            (the plugin loader gives each its plugin's origin); None: by its
            place and type, ``Runtime(): resources[0] (Database)``.

    Raises:
        InvalidDefinitionError: two tools share a name, an ``s.ref`` names a
            schema *schemas* does not have, a grant, provider or schema name is
            malformed, or a resource lacks ``open()`` or ``close()``; the
            message names the tool and the field.

    """

    _tools: Mapping[str, Tool]
    _schemas: Mapping[str, Schema]
    _permissions: Permissions
    _entries: dict[str, _Entry]
    _resources: tuple[Resource, ...]
    _life: _Lifecycle

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        grants: Iterable[str] = (),
        providers: Iterable[PermissionProvider] = (),
        schemas: Mapping[str, Schema] | None = None,
        timeout: float | None = None,
        resources: Iterable[Resource] = (),
        resource_labels: Iterable[str] | None = None,
    ) -> None:
        default_timeout = check_timeout("Runtime()", "timeout", timeout)
        permissions = Permissions(StaticGrants(grants), check_providers("Runtime()", "providers", providers))
        named = MappingProxyType(check_schemas("Runtime()", "schemas", {} if schemas is None else schemas))
        registered = check_tools("Runtime()", "tools", tools)
        check_wiring(registered.values(), named, named)
        held = check_resources("Runtime()", "resources", resources)
        labels = _labels(held, resource_labels)
        entries = {name: _Entry.make(tool, named, permissions, default_timeout) for name, tool in registered.items()}
        derive(self, _tools=MappingProxyType(registered), _schemas=named, _permissions=permissions, _entries=entries)
        derive(self, _resources=held, _life=_Lifecycle(held, labels))

    # -- inspection ------------------------------------------------------------------------

    @property
    def tools(self) -> Mapping[str, Tool]:
        """The registered tools, name to :class:`Tool`, in registration order (read-only)."""
        return self._tools

    @property
    def schemas(self) -> Mapping[str, Schema]:
        """The named schemas ``s.ref`` resolves to (read-only)."""
        return self._schemas

    @property
    def grants(self) -> tuple[str, ...]:
        """The grant patterns this runtime was built with."""
        return self._permissions.grants.patterns

    @property
    def providers(self) -> tuple[PermissionProvider, ...]:
        """The permission providers, in the order they are asked."""
        return self._permissions.providers

    @property
    def resources(self) -> tuple[Resource, ...]:
        """The resources the runtime opens and closes, in the order it opens them."""
        return self._resources

    @property
    def is_open(self) -> bool:
        """Whether the resources are open (a runtime without resources opens and closes all the same)."""
        return self._life.is_open

    # -- opening and closing ---------------------------------------------------------------

    def open(self) -> None:
        """Open the resources, in order; nothing happens if they are open already.

        If one raises, it and those opened before it are closed again (last
        first) and the runtime stays closed. Calls do not wait for this: a
        runtime that is never opened calls its tools all the same.

        Raises:
            ResourceError: a resource's ``open()`` raised (chained), naming it.
        """
        self._life.open()

    def close(self) -> None:
        """Close the resources, last opened first; nothing happens if they are not open.

        Every resource has its ``close()`` called, even after one raises: each
        failure is logged, and one error is raised at the end. The runtime is
        closed either way.

        Raises:
            ResourceError: one or more ``close()`` raised, naming each (the first chained).
        """
        self._life.close()

    def __enter__(self) -> Runtime:
        """Open the runtime for the block (see :meth:`open`); blocks inside one another are counted.

        The outermost block opens the runtime and closes it when it ends; a
        runtime already opened by :meth:`open` is left open.
        """
        self._life.enter()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._life.leave()

    async def __aenter__(self) -> Runtime:
        """``with runtime:`` for async code: the resources open on a worker thread, never blocking the loop.

        When every resource has ``aopen()`` and ``aclose()`` (see
        :class:`Resource`), those are awaited on this loop instead.
        """
        if self._life.all_async:
            await self._life.aenter()
            return self
        if not self._resources:  # nothing to open: no thread either
            self._life.enter()
            return self
        opening = _Opening(self._life)
        try:
            await to_thread(opening.run, None, None)
        except BaseException:
            opening.abandon()  # cancelled while the thread opens on: nothing may outlive the block
            raise
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._life.all_async:
            await self._life.aleave()
            return
        if not self._resources:
            self._life.leave()
            return
        # A cancelled wait leaves the thread closing all the same: nothing is left open.
        await to_thread(_leave, self._life, None)

    def definitions(self) -> list[dict[str, Any]]:
        """What a model is shown of each tool: ``name``, ``description``, ``inputSchema``, ``outputSchema``.

        The schemas are JSON Schema (draft 2020-12), each standing alone (named
        schemas are included under ``$defs``). A tool that declares a title or
        hints has ``title`` and ``annotations`` (MCP's ``readOnlyHint``...) too.
        The names are the tools' own and the output schema is the declared one;
        :mod:`hermes_core.adapters` and ``hermesos serve`` give each API's and
        MCP's own shapes (wire names, an object at the output's root).
        """
        # The input is written as the object itself even when the tool names it by ref:
        # tool-calling clients expect "type": "object" at the top.
        out = []
        for tool in self._tools.values():
            definition: dict[str, Any] = {"name": tool.name}
            if tool.title is not None:
                definition["title"] = tool.title
            definition["description"] = tool.description
            definition["inputSchema"] = follow_refs(tool.input, self._schemas).json_schema(defs=self._schemas)
            definition["outputSchema"] = tool.output.json_schema(defs=self._schemas)
            annotations = tool_annotations(tool)
            if annotations:
                definition["annotations"] = annotations
            out.append(definition)
        return out

    # -- calling ---------------------------------------------------------------------------

    def _lookup(self, name: Any) -> _Entry:
        # A name's own __hash__ or __eq__ may raise: that name is not found, all the same.
        with contextlib.suppress(Exception):
            return self._entries[name]
        if not isinstance(name, str):
            raise ToolNotFoundError(_shown(name))
        plain = str.__str__(name)  # a str subclass's own methods are never run
        found = self._entries.get(plain) if type(name) is not str else None
        if found is not None:
            return found
        raise ToolNotFoundError(plain, suggest(plain, self._entries)) from None

    def _admit(self, entry: _Entry, value: Any) -> Any:
        """Permissions and input: everything between the lookup and the handler."""
        if entry.gate is not None:
            try:
                entry.gate()
            except ToolError:
                raise
            except Exception as error:  # a permission provider's own failure: the call is not made
                raise _provider_failure(entry, error) from error
        return _checked(entry.input, value, InputInvalidError, entry.name)

    def call(self, name: str, input: Any, *, timeout: float | None = UNSET) -> Awaitable[Any]:  # noqa: A002
        """Call the tool *name* with *input*; ``await`` it for the parsed output.

        Steps, in order; the handler runs only if every earlier step passed:
        lookup, permissions, input validation, the handler, output validation.
        An ``async`` handler is awaited; a plain one runs on a worker thread
        (so that one blocking tool cannot stall every other call), unless the
        tool is ``inline``. If the task awaiting the call is cancelled, the
        handler is cancelled too and ``CancelledError`` propagates.

        Args:
            name: the tool's name.
            input: the arguments, a JSON object as a dict.
            timeout: the most seconds the call may take, overriding the
                tool's and the runtime's; None for no limit. One deadline from
                the call's start: the checks of permissions, input and output
                spend it too, and the handler gets what they leave. When it is
                up, an ``async`` handler is cancelled; a plain one on a worker
                thread cannot be stopped, runs on, and its result is dropped.

        Raises:
            ToolNotFoundError: no tool is registered under *name*.
            PermissionDeniedError: a permission the tool declares is not granted.
            InputInvalidError: *input* does not match the tool's input schema, or
                the handler refused it by raising :class:`~hermes_core.InputRejected`.
            ToolFailedError: the handler raised, or the call ran out of time, or
                it was refused because too many calls are still running past
                their time limit (``reason="timeout"``, retryable).
            OutputInvalidError: the handler's result does not match the output schema.
            InvalidDefinitionError: *timeout* is not a positive number or None.

        """
        # A plain method returning the coroutine: the untraced path adds no coroutine frame.
        if tracing.TRACER is None:
            return self._call(name, input, timeout, None)
        return self._traced(name, input, timeout)

    async def _traced(self, name: Any, value: Any, timeout: Any) -> Any:
        call_id = _call_id()
        with tracing.tool_span(name if isinstance(name, str) else repr(name), call_id):
            return await self._call(name, value, timeout, call_id)

    async def _call(self, name: Any, value: Any, timeout: Any, call_id: str | None) -> Any:
        entry = self._lookup(name)
        seconds = entry.timeout if timeout is UNSET else check_timeout("call()", "timeout", timeout)
        if seconds is None:  # no clock read at all on the untimed path
            deadline, left = 0.0, None
            parsed = self._admit(entry, value)
        else:  # one deadline from here: the checks spend the handler's time
            deadline = monotonic() + seconds
            parsed = self._admit(entry, value)
            left = _left(entry, deadline, seconds, "input", call_id)
        try:
            if entry.is_async:
                # No limit: the handler's coroutine awaited directly, without a frame around it.
                awaitable = entry.handler(parsed)
                result = await (awaitable if left is None else await_within(awaitable, left))
            elif entry.inline:
                result = entry.handler(parsed)
            else:
                result = await to_thread(entry.handler, parsed, left, entry, entry.name)
            if not entry.is_async and type(result) not in _PLAIN and inspect.isawaitable(result):
                result = await await_within(result, None if left is None else deadline - monotonic())
        except Exception as error:
            _fail(entry, error, seconds, call_id)
        result = _checked(entry.output, result, OutputInvalidError, entry.name)
        if seconds is not None:
            _left(entry, deadline, seconds, "output", call_id)
        return result

    def call_sync(self, name: str, input: Any, *, timeout: float | None = UNSET) -> Any:  # noqa: A002
        """Call the tool *name* from code without an event loop; as :meth:`call` otherwise.

        A plain handler runs inline, with no event loop and no thread, unless a
        time limit applies: then it runs on a worker thread, waited for at most
        that long. An ``async`` handler is run to completion in a new event loop
        (``asyncio.run``); if this thread already runs an event loop that is
        impossible, and a ``RuntimeError`` is raised before the handler runs:
        use ``await runtime.call(...)`` there.
        """
        if tracing.TRACER is None:
            return self._call_sync(name, input, timeout, None)
        call_id = _call_id()
        with tracing.tool_span(name if isinstance(name, str) else repr(name), call_id):
            return self._call_sync(name, input, timeout, call_id)

    def _call_sync(self, name: Any, value: Any, timeout: Any, call_id: str | None) -> Any:
        entry = self._lookup(name)
        seconds = entry.timeout if timeout is UNSET else check_timeout("call()", "timeout", timeout)
        if seconds is None:
            deadline, left = 0.0, None
            parsed = self._admit(entry, value)
        else:
            deadline = monotonic() + seconds
            parsed = self._admit(entry, value)
            left = _left(entry, deadline, seconds, "input", call_id)
        if entry.is_async:
            require_no_loop(entry.name)
        try:
            if entry.is_async:
                result = run_coroutine(entry.handler(parsed), left)
            elif left is None:
                result = entry.handler(parsed)
            else:
                result = run_in_thread(entry.handler, parsed, left, entry, entry.name)
        except Exception as error:
            _fail(entry, error, seconds, call_id)
        if inspect.iscoroutine(result):  # a plain handler that returned one: run it as an async handler's
            require_no_loop(entry.name, result)
            try:
                result = run_coroutine(result, None if left is None else deadline - monotonic())
            except Exception as error:
                _fail(entry, error, seconds, call_id)
        result = _checked(entry.output, result, OutputInvalidError, entry.name)
        if seconds is not None:
            _left(entry, deadline, seconds, "output", call_id)
        return result

    async def observe(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """Call the tool and return what an agent loop sends back to the model.

        Returns:
            ``{"ok": True, "output": ...}``, or ``{"ok": False, "error": error.to_dict()}``
            for any :class:`~hermes_core.ToolError`, which is what a call raises
            for any ``Exception``. Cancellation and other ``BaseException`` propagate.

        """
        try:
            return {"ok": True, "output": await self.call(name, input)}
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def observe_sync(self, name: str, input: Any) -> dict[str, Any]:  # noqa: A002 - mirrors Tool.input
        """:meth:`observe` for code without an event loop, with :meth:`call_sync`'s rules."""
        try:
            return {"ok": True, "output": self.call_sync(name, input)}
        except ToolError as error:
            return {"ok": False, "error": error.to_dict()}

    def __repr__(self) -> str:
        return f"<Runtime tools={list(self._tools)!r}>"


def _labels(resources: tuple[Resource, ...], given: Iterable[str] | None) -> tuple[str, ...]:
    """What messages call each resource: *given*, checked one for one, else its place and type."""
    if given is None:
        return tuple(resource_label("Runtime()", "resources", i, resource) for i, resource in enumerate(resources))
    labels = tuple(given)
    if len(labels) != len(resources) or not all(isinstance(label, str) for label in labels):
        raise InvalidDefinitionError(
            "Runtime()",
            "resource_labels",
            f"must be one string per resource, in order; got {len(labels)} for {len(resources)} resources",
        )
    return labels


@final
class _Opening:
    """``async with``'s opening, on a worker thread, which a block cancelled meanwhile undoes once it is done."""

    __slots__ = ("_abandoned", "_entered", "_life", "_lock")

    def __init__(self, life: _Lifecycle) -> None:
        self._life = life
        self._lock = threading.Lock()
        self._abandoned = False
        self._entered = False

    def run(self, _: object) -> None:
        """On the worker thread: enter; and leave again at once if the block was abandoned meanwhile."""
        self._life.enter()
        with self._lock:
            self._entered = not self._abandoned
        if not self._entered:
            _leave_logged(self._life)

    def abandon(self) -> None:
        """On the event loop, when the block will not run: leave, now or once the thread has entered."""
        with self._lock:
            self._abandoned = True
            entered, self._entered = self._entered, False
        if entered:
            threading.Thread(target=_leave_logged, args=(self._life,), name="hermesos-close").start()


def _leave(life: _Lifecycle) -> None:
    life.leave()


def _leave_logged(life: _Lifecycle) -> None:
    """Leave a block that never ran: nobody awaits this, so a failure to close is only logged."""
    with contextlib.suppress(ResourceError):  # each failure to close is logged already
        life.leave()


def _shown(name: object) -> str:
    """How a name that is not a string is shown: its repr, unless its repr raises."""
    try:
        return repr(name)
    except Exception:  # the name's own code
        return object.__repr__(name)


def _call_id() -> str:
    """A new call's id: 16 hex digits, for matching a span, a log record and an error."""
    return os.urandom(8).hex()


def _logger() -> Any:
    """The ``hermes_core`` logger, made on the first failure (importing logging costs every start-up).

    As a library's logger should, it has a ``NullHandler``: its records reach
    the application's handlers, and without any, Python's last-resort handler
    does not print them on stderr.
    """
    import logging  # noqa: PLC0415 - see the docstring

    logger = logging.getLogger("hermes_core")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
    return logger


def _provider_failure(entry: _Entry, error: Exception) -> ToolFailedError:
    """TOOL_FAILED for a permission provider that raised (or answered neither True, False nor None), logged."""
    call_id = _call_id()
    _logger().error(
        "%s (call %s): a permission provider raised %s", entry.name, call_id, type(error).__name__, exc_info=error
    )
    detail = f"a permission provider raised {exception_type_name(error)}, so the call was not made"
    return ToolFailedError(detail, tool=entry.name, reason="reported", call_id=call_id)


def _fail(entry: _Entry, error: Exception, seconds: float | None, call_id: str | None) -> NoReturn:
    """Raise what a call raises for *error*, raised by or around *entry*'s handler, with *error* as its cause."""
    failure = _failure(entry, error, seconds, call_id)
    if failure is error:
        raise error
    if isinstance(error, Expired | Stranded):
        raise failure from None  # the runtime's own signal: nothing of the tool's to show
    raise failure from error


def _failure(entry: _Entry, error: Exception, seconds: float | None, call_id: str | None) -> Exception:
    """What a call raises for *error* (*error* itself, to re-raise it as it is)."""
    if isinstance(error, InputRejected):
        return InputInvalidError(entry.name, error.issues)
    if isinstance(error, ToolFailedError):
        return error.with_context(entry.name, call_id or _call_id()) if not error.tool else error
    if isinstance(error, ToolError):
        return error  # a tool error of its own (one of another runtime's calls, say) passes as it is
    logger = _logger()
    call_id = call_id or _call_id()
    if isinstance(error, Stranded):
        logger.warning("%s (call %s) was refused: %s", entry.name, call_id, error.detail)
        return ToolFailedError(error.detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
    if isinstance(error, Expired) and seconds is not None:
        logger.warning("%s (call %s) did not finish within %g seconds", entry.name, call_id, seconds)
        return ToolFailedError.timed_out(entry.name, seconds, call_id=call_id)
    logger.error(
        "%s (call %s) failed: its handler raised %s", entry.name, call_id, type(error).__name__, exc_info=error
    )
    return ToolFailedError.from_exception(entry.name, error, call_id=call_id)


def _left(
    entry: _Entry, deadline: float, seconds: float, step: Literal["input", "output"], call_id: str | None
) -> float:
    """The seconds left of a call's limit once its *step* is checked; raise if none are.

    A check that holds the interpreter (a regular expression, say) cannot be
    stopped at the deadline: it is charged to the call when it ends, and a
    check that ended past the deadline ends the call as a timeout. A check
    that rejected the value has raised before this: its verdict stands.

    Raises:
        ToolFailedError: ``reason="timeout"``, retryable, naming the check that took the time.
    """
    now = monotonic()
    left = deadline - now
    if left > 0:
        return left
    call_id = call_id or _call_id()
    limit, spent = _seconds(seconds), _seconds(seconds - left)
    if step == "input":
        detail = f"did not finish within {limit}: checking its permissions and input took {spent}"
        detail += ", so its handler was not run"
    else:
        detail = f"did not finish within {limit}: with the check of its output it took {spent}"
        detail += ", so its result was dropped"
    _logger().warning("%s (call %s) %s", entry.name, call_id, detail)
    raise ToolFailedError(detail, retryable=True, tool=entry.name, reason="timeout", call_id=call_id)
