"""Testing tools for plugin authors: contract checks, runtimes, error helpers and Hypothesis strategies.

Installed with ``pip install 'hermesos-core[testing]'``. The fixtures
``hermes_env`` and ``hermes_runtime`` are the pytest plugin
:mod:`hermes_core.testing.plugin`, which a project turns on for its tests
(``-p hermes_core.testing.plugin`` in its pytest options).

::

    from hermes_core.testing import check_plugin, issues, raises_code

    def test_the_contract():
        check_plugin("hermesos-notes")

    def test_a_bad_limit(hermes_runtime):
        runtime = hermes_runtime("hermesos-notes", grants=["notes:read"])
        with raises_code("INPUT_INVALID") as caught:
            runtime.call_sync("notes.search", {"text": "milk", "limit": 0})
        assert issues(caught.value) == [("limit", "too_small")]

Hypothesis and jsonschema are imported only by what needs them
(:func:`check_tool`, :func:`check_plugin`, :func:`strategy`, :func:`invalid_strategy`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import typing
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from hermes_core._base._errors import (
    ErrorCode,
    InputInvalidError,
    InputRejected,
    InvalidDefinitionError,
    OutputInvalidError,
    SchemaError,
    ToolError,
)
from hermes_core._base._frozen import frozen
from hermes_core._base._issues import format_path
from hermes_core._base._names import suggest
from hermes_core._plugins._discover import Plugin, discover_plugins, load_module
from hermes_core._runtime._permissions import PermissionProvider
from hermes_core._runtime._runtime import Runtime
from hermes_core._tool._definition import Handler, Tool
from hermes_core._tool._resources import Resource, ResourceError, resource_label
from hermes_core.schema import Schema

if typing.TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from hermes_core.testing.scripted import RecordedRequest, ScriptedCall, ScriptedModel, ScriptedTurn

__all__ = [
    "ENVIRONMENT_PREFIX",
    "CaughtError",
    "RecordedRequest",
    "ScriptedCall",
    "ScriptedModel",
    "ScriptedTurn",
    "ToolCheck",
    "build_runtime",
    "check_plugin",
    "check_tool",
    "invalid_strategy",
    "isolated_environment",
    "issues",
    "raises_code",
    "strategy",
]

#: Environment variables starting with this are hermesos settings; an isolated environment has none.
ENVIRONMENT_PREFIX = "HERMESOS_"
# Where a user's configuration is looked for: an isolated environment points each at a fresh folder.
_CONFIG_VARIABLES = ("HOME", "USERPROFILE", "XDG_CONFIG_HOME", "APPDATA", "LOCALAPPDATA")
_DEFAULT_EXAMPLES = 50
# The scripted model's names, imported from hermes_core.testing.scripted when first asked for.
_SCRIPTED = frozenset({"RecordedRequest", "ScriptedCall", "ScriptedModel", "ScriptedTurn"})


def __getattr__(name: str) -> Any:
    """The scripted model's names, imported only when a test uses them."""
    if name in _SCRIPTED:
        from hermes_core.testing import scripted  # noqa: PLC0415 - only tests of a model turn need it

        return getattr(scripted, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- errors as data ------------------------------------------------------------------------------


def issues(error: BaseException) -> list[tuple[str, str]]:
    """The issues of *error* as comparable data: ``[(path, kind), ...]``, in order.

    The path is written as messages write it (``files.0.path``; ``""`` for the
    whole value), the kind is the issue's :data:`~hermes_core.IssueKind`.

    Raises:
        TypeError: *error* carries no issues (it is not an input, output or schema error).
    """
    found = getattr(error, "issues", None)
    if not isinstance(error, InputInvalidError | OutputInvalidError | SchemaError | InputRejected) or found is None:
        raise TypeError(f"{type(error).__name__} carries no issues; issues() takes an input, output or schema error")
    return [(format_path(issue.path), issue.kind) for issue in found]


class CaughtError:
    """What :func:`raises_code` caught: ``value`` is the :class:`~hermes_core.ToolError`, once the block is done."""

    __slots__ = ("_value",)

    def __init__(self) -> None:
        self._value: ToolError | None = None

    @property
    def value(self) -> ToolError:
        """The error raised in the block."""
        if self._value is None:
            raise AttributeError("value: the block has not raised yet")
        return self._value


@contextlib.contextmanager
def raises_code(code: str | ErrorCode) -> Iterator[CaughtError]:
    """Assert that the block raises a :class:`~hermes_core.ToolError` with *code*.

    ::

        with raises_code("PERMISSION_DENIED") as caught:
            runtime.call_sync("fs.write", {"path": "a", "content": "b"})
        assert caught.value.to_dict()["missing"] == ["fs:write"]

    Raises:
        AssertionError: the block raised nothing, or a ToolError with another
            code (which is chained); any other exception passes through.
    """
    wanted = ErrorCode(code)  # an unknown code is a ValueError naming it, at once
    caught = CaughtError()
    try:
        yield caught
    except ToolError as error:
        if error.code is not wanted:
            raise AssertionError(f"expected {wanted.value}, got {error.code.value}: {error}") from error
        caught._value = error
    else:
        raise AssertionError(f"expected {wanted.value}, but nothing was raised")


# -- isolation and runtimes ----------------------------------------------------------------------


@contextlib.contextmanager
def isolated_environment(folder: Path) -> Iterator[Path]:
    """Run the block with no ``HERMESOS_*`` variable, no user configuration, in a fresh working directory.

    *folder* (which must not exist yet, or be empty) becomes the working
    directory, with ``home`` and ``config`` folders under it for the user's
    home and configuration variables. Everything is put back afterwards.
    The pytest fixture ``hermes_env`` is this, in ``tmp_path``.

    Yields:
        The working directory.
    """
    folder.mkdir(parents=True, exist_ok=True)
    saved = dict(os.environ)
    cwd = Path.cwd()
    home, config = folder / "home", folder / "config"
    home.mkdir(exist_ok=True)
    config.mkdir(exist_ok=True)
    try:
        for name in list(os.environ):
            if name.startswith(ENVIRONMENT_PREFIX):
                del os.environ[name]
        os.environ.update(HOME=str(home), USERPROFILE=str(home))
        os.environ.update(XDG_CONFIG_HOME=str(config), APPDATA=str(config), LOCALAPPDATA=str(config))
        os.chdir(folder)
        yield folder
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


def _plugins(sources: Iterable[Tool | str | object]) -> tuple[list[Tool], list[Plugin]]:
    tools: list[Tool] = []
    modules: list[object] = []
    distributions: list[str] = []
    for source in sources:
        if isinstance(source, Tool):
            tools.append(source)
        elif isinstance(source, str):
            distributions.append(source)
        else:
            modules.append(source)
    plugins = [load_module(module) for module in modules]
    if distributions:
        plugins.extend(discover_plugins(only=distributions, strict=True).plugins)
    return tools, plugins


def build_runtime(
    *sources: Tool | str | object,
    grants: Iterable[str] = (),
    providers: Iterable[PermissionProvider] = (),
    schemas: Mapping[str, Schema] | None = None,
    timeout: float | None = None,
    resources: Iterable[Resource] = (),
) -> Runtime:
    """A runtime of exactly the tools (and resources) of *sources*, and no other plugin; not opened.

    Args:
        sources: each a :class:`~hermes_core.Tool`, a module (or any object)
            with ``hermes_*`` hook functions, or the name of an installed
            distribution, whose plugins are loaded (only those: another broken
            plugin on the machine cannot fail the test).
        grants: the grant patterns (``notes:write``, ``notes:*``, ``*``); the
            ``HERMESOS_GRANTS`` variable is not consulted.
        providers: permission providers, asked after the plugins' own.
        schemas: named schemas, besides those the plugins contribute.
        timeout: the runtime's default time limit for a call, in seconds.
        resources: resources besides those the plugins contribute, opened
            after theirs. ``with runtime:`` opens them all (the
            ``hermes_runtime`` fixture does, for the test).

    Raises:
        InvalidDefinitionError: a source contributes something malformed, or
            names a distribution with no installed plugin.
        PluginLoadError: a plugin failed to import, or a hook raised.
    """
    tools, plugins = _plugins(sources)
    named = dict(schemas or {})
    for plugin in plugins:
        tools.extend(plugin.tools)
        named.update(plugin.schemas)
    found = [provider for plugin in plugins for provider in plugin.providers]
    extra = tuple(resources)
    held = [*(r for plugin in plugins for r in plugin.resources), *extra]
    labels = [label for plugin in plugins for label in plugin.resource_labels]
    labels += [resource_label("build_runtime()", "resources", i, resource) for i, resource in enumerate(extra)]
    return Runtime(
        tools,
        grants=grants,
        providers=(*found, *providers),
        schemas=named,
        timeout=timeout,
        resources=held,
        resource_labels=labels,
    )


# -- contract checks -----------------------------------------------------------------------------


@frozen
class ToolCheck:
    """What :func:`check_tool` found for one tool.

    Attributes:
        name: the tool's name.
        accepted: generated valid inputs the handler answered with a valid result.
        refused: generated valid inputs the handler refused with ``reject()``
            (a file that does not exist, say): allowed, but if every input is
            refused, the handler's results were never checked.
        rejected: generated invalid inputs, each rejected with ``INPUT_INVALID``.

    """

    name: str
    accepted: int
    refused: int
    rejected: int


def _check_exports(tool: Tool, runtime: Runtime) -> None:
    from jsonschema.validators import Draft202012Validator  # noqa: PLC0415 - only the checks need it

    (definition,) = [d for d in runtime.definitions() if d["name"] == tool.name]
    for key in ("inputSchema", "outputSchema"):
        errors = list(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(definition[key]))
        if errors:
            where = "/".join(str(part) for part in errors[0].absolute_path)
            raise AssertionError(
                f'tool "{tool.name}": its {key} is not valid JSON Schema 2020-12 at /{where}: {errors[0].message}'
            )


def check_tool(
    tool: Tool,
    *,
    examples: int = _DEFAULT_EXAMPLES,
    handler: Handler | None = None,
    schemas: Mapping[str, Schema] | None = None,
    inputs: Iterable[Any] = (),
) -> ToolCheck:
    """Check *tool*'s contract: valid exports, and property-based, what its handler does with any input.

    * Its input and output schemas, as exported, are valid JSON Schema 2020-12.
    * *examples* inputs generated from its input schema are accepted, and the
      handler either returns a result that matches the output schema or
      refuses the input with ``reject()``. A handler that raises (``TOOL_FAILED``)
      or returns a wrong result (``OUTPUT_INVALID``) fails the check, with the
      input Hypothesis shrank it to.
    * *examples* generated invalid inputs are each rejected with
      ``INPUT_INVALID``, before the handler, and never anything else.
    * Not every valid input is refused: if the handler refused all of them,
      its results were never checked, and that fails the check too. Give it
      *inputs* it accepts (a file that exists) or a fake *handler*.

    The tool is called with every permission it declares granted, from one
    thread with no event loop (``call_sync``).

    Args:
        tool: the tool.
        examples: how many valid and how many invalid inputs to try.
        handler: a fake to call instead of the tool's handler, for a handler
            that touches the world (the network, a database); it takes what
            the handler takes: the parsed input, a dict.
        schemas: the named schemas the tool's ``s.ref`` refer to.
        inputs: valid inputs to try before the generated ones, such as ones
            the handler accepts where generated ones would all be refused
            (the path of a file the test made), tried besides the *examples* generated.

    Returns:
        What was tried, counted.

    Raises:
        AssertionError: the contract does not hold, saying how.
    """
    from hypothesis import HealthCheck, Phase, example, given, settings  # noqa: PLC0415 - only the checks need it

    if not isinstance(tool, Tool):
        raise TypeError(f"check_tool() takes a Tool, got {type(tool).__name__}")
    if handler is not None:
        tool = dataclasses.replace(tool, handler=handler)
    named = dict(schemas or {})
    runtime = Runtime([tool], grants=tool.permissions, schemas=named)
    _check_exports(tool, runtime)
    counts = {"accepted": 0, "refused": 0, "rejected": 0}
    options = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        # Not "explain": the failing input and what the tool said are the report; source lines are noise.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )

    refusal: list[str] = []

    def valid(value: Any) -> None:
        try:
            runtime.call_sync(tool.name, value)
        except InputInvalidError as error:
            if isinstance(error.__cause__, InputRejected):
                counts["refused"] += 1
                refusal[:] = [str(error), repr(value)]
                return
            raise AssertionError(
                f'tool "{tool.name}": an input its schema accepts was rejected: {error}\ninput: {value!r}'
            ) from error
        except ToolError as error:
            raise AssertionError(_failure(f'tool "{tool.name}" failed on a valid input', error, value)) from error
        counts["accepted"] += 1

    for value in reversed(list(inputs)):
        valid = example(value)(valid)
    valid = options(given(strategy(tool.input, defs=named))(valid))

    @options
    @given(invalid_strategy(tool.input, defs=named))
    def invalid(value: Any) -> None:
        try:
            runtime.call_sync(tool.name, value)
        except InputInvalidError as error:
            if isinstance(error.__cause__, InputRejected):
                raise AssertionError(
                    f'tool "{tool.name}": its handler ran on an input its schema rejects\ninput: {value!r}'
                ) from error
            counts["rejected"] += 1
            return
        except ToolError as error:
            raise AssertionError(
                _failure(
                    f'tool "{tool.name}": an invalid input raised {error.code.value}, not INPUT_INVALID', error, value
                )
            ) from error
        raise AssertionError(f'tool "{tool.name}" accepted an input its schema rejects\ninput: {value!r}')

    valid()
    if counts["refused"] and not counts["accepted"]:
        said, value = refusal
        raise AssertionError(
            f'tool "{tool.name}": its handler refused every one of the {counts["refused"]} valid inputs tried, '
            "so its results were never checked; give check_tool inputs= it accepts (such as the path of a file "
            f"the test made) or a fake handler=\nthe last refused: {value}\nit said: {said}"
        )
    invalid()
    return ToolCheck(tool.name, counts["accepted"], counts["refused"], counts["rejected"])


def _failure(headline: str, error: ToolError, value: Any) -> str:
    """A failed check, for the author: what happened, the input, what the handler raised, what a model is told."""
    lines = [f"{headline}: {error.code.value}", f"input: {value!r}"]
    cause = error.__cause__
    if cause is not None and not isinstance(cause, ToolError):
        lines.append(f"the handler raised {type(cause).__name__}: {cause}")
    lines.append(f"a model is told: {error}")
    return "\n".join(lines)


def check_plugin(
    distribution: str,
    *,
    examples: int = _DEFAULT_EXAMPLES,
    handlers: Mapping[str, Handler] | None = None,
    inputs: Mapping[str, Iterable[Any]] | None = None,
) -> list[ToolCheck]:
    """Check an installed plugin distribution: it loads with no problem, and every tool passes :func:`check_tool`.

    Only *distribution*'s entry points are loaded: another plugin on the
    machine, broken or not, plays no part. A problem the plugin reports
    itself (``hermes_problems``) fails the check too. Its resources are open
    while its tools are checked, and closed afterwards.

    Args:
        distribution: the distribution's name (``hermesos-notes``).
        examples: as for :func:`check_tool`, per tool.
        handlers: fakes for handlers that touch the world, by tool name.
        inputs: valid inputs to try first, by tool name, as for :func:`check_tool`.

    Returns:
        What was tried, per tool, in the order the plugin contributes them.

    Raises:
        AssertionError: the plugin has a problem, a resource fails to open or
            close, or a tool's contract does not hold, saying which and how.
    """
    try:
        found = discover_plugins(only=[distribution], strict=False)
    except InvalidDefinitionError as error:
        raise AssertionError(str(error)) from error
    problems = found.problems
    if problems:
        raise AssertionError("\n".join(problem.message for problem in problems))
    fakes = dict(handlers or {})
    given_inputs = dict(inputs or {})
    names = [tool.name for tool in found.tools]
    for argument, named in (("handlers", fakes), ("inputs", given_inputs)):
        for name in named:
            if name not in names:
                close = suggest(name, names, limit=1)
                also = f'; did you mean "{close[0]}"?' if close else f"; its tools are {', '.join(names) or 'none'}"
                raise AssertionError(f'{argument} names the tool "{name}", which {distribution} does not have{also}')
    try:
        with found.runtime():
            return [
                check_tool(
                    tool,
                    examples=examples,
                    handler=fakes.get(tool.name),
                    schemas=found.schemas,
                    inputs=given_inputs.get(tool.name, ()),
                )
                for tool in found.tools
            ]
    except ResourceError as error:
        raise AssertionError(str(error)) from error


# -- strategies ----------------------------------------------------------------------------------


def strategy(schema: Schema, *, defs: Mapping[str, Schema] | None = None) -> SearchStrategy[Any]:
    """A Hypothesis strategy of values *schema* accepts (``s.ref`` names resolve through *defs*).

    Raises:
        InvalidDefinitionError: the schema names a schema *defs* does not have.
    """
    from hermes_core.testing._strategies import strategy as build  # noqa: PLC0415 - imports Hypothesis

    return build(schema, defs=defs)


def invalid_strategy(schema: Schema, *, defs: Mapping[str, Schema] | None = None) -> SearchStrategy[Any]:
    """A Hypothesis strategy of values *schema* rejects, wrong at the root or deep inside.

    Raises:
        InvalidDefinitionError: the schema names a schema *defs* does not have.
    """
    from hermes_core.testing._strategies import invalid_strategy as build  # noqa: PLC0415 - imports Hypothesis

    return build(schema, defs=defs)
