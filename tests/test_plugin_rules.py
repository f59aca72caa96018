"""A permission provider's rules against every tool loaded (its ``check_tools``): warnings, refusals, faults.

Real little plugins installed in a site directory (conftest's ``site``): one
contributing a provider whose ``check_tools`` says what it is told to, and one
contributing tools, so that the provider is shown the tools of every plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from hermes_core import InvalidDefinitionError, PluginLoadError, discover_plugins

if TYPE_CHECKING:
    from conftest import Site

TOOLS = """
@hookimpl
def hermes_tools():
    return [make("unit.write", permissions=["unit:write"]), make("unit.read")]
"""

PROVIDER = """
from hermes_core import InvalidDefinitionError, hookimpl

class Rules:
    seen = []

    def check(self, tool, permission):
        return None

    def check_tools(self, tools):
        Rules.seen = sorted(tool.name for tool in tools)
        {body}

@hookimpl
def hermes_permission_providers():
    return [Rules()]
"""


def install(site: Site, body: str) -> tuple[str, str]:
    """The tools' plugin and a provider's whose check_tools runs *body*; their distribution names."""
    return site.install(site.plugin(TOOLS)), site.install(PROVIDER.format(body=body))


def plugin_of(found: object, distribution: str) -> object:
    return next(p for p in found.plugins if p.origin.distribution == distribution)  # type: ignore[attr-defined]


def test_warnings_are_problems_of_the_providers_plugin_which_stays_loaded(site: Site) -> None:
    tools, rules = install(site, 'return ["unit_write matches no tool"] if "unit.write" in Rules.seen else []')
    found = discover_plugins(only=[tools, rules], strict=False)
    provider = plugin_of(found, rules)
    assert provider.ok  # type: ignore[attr-defined]
    [problem] = found.problems
    assert (problem.origin.distribution, problem.fatal) == (rules, False)
    assert problem.message.endswith(": unit_write matches no tool")
    strict = discover_plugins(only=[tools, rules])  # strict mode too: a warning, not an error
    assert [(p.message, p.fatal) for p in strict.problems] == [(problem.message, False)]
    # The control: shown only its own plugin's (no) tools, the provider has nothing to say.
    assert discover_plugins(only=[rules], strict=False).problems == ()


def test_the_provider_is_shown_the_tools_of_every_plugin(site: Site) -> None:
    tools, rules = install(site, 'return [", ".join(Rules.seen)]')
    [problem] = discover_plugins(only=[tools, rules], strict=False).problems
    assert problem.message.endswith(": unit.read, unit.write")


def test_a_refusal_drops_the_providers_plugin_naming_it(site: Site) -> None:
    body = 'raise InvalidDefinitionError("policy \\"p\\", line 2", "tools.unit_write", "names unit.write wrongly")'
    tools, rules = install(site, body)
    found = discover_plugins(only=[tools, rules], strict=False)
    assert not plugin_of(found, rules).ok  # type: ignore[attr-defined]
    assert plugin_of(found, tools).ok  # type: ignore[attr-defined]
    [problem] = found.problems
    assert problem.fatal
    assert problem.message.startswith(f"plugin {rules} 1.0.0 ")
    assert problem.message.endswith(': policy "p", line 2: tools.unit_write names unit.write wrongly.')
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins(only=[tools, rules])
    assert "names unit.write wrongly." in str(caught.value)
    assert f"--disable {rules}" in str(caught.value)  # the remedy, as for any broken plugin


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ('raise RuntimeError("boom")', "a permission provider's check_tools() raised RuntimeError: boom"),
        ("return [7]", "Rules.check_tools() must return a list of warnings, each a non-empty string"),
        ('return "one warning"', "Rules.check_tools() must return a list of warnings, each a non-empty string"),
        ("return 7", "Rules.check_tools() must return a list of warnings, each a non-empty string"),
    ],
)
def test_a_check_tools_that_fails_breaks_its_plugin_saying_what_it_did(site: Site, body: str, said: str) -> None:
    tools, rules = install(site, body)
    found = discover_plugins(only=[tools, rules], strict=False)
    [problem] = found.problems
    assert problem.fatal
    assert problem.origin.distribution == rules
    assert said in problem.message
    assert isinstance(problem.error, PluginLoadError | InvalidDefinitionError)


def test_a_provider_given_to_the_runtime_is_checked_against_the_plugins_tools(site: Site) -> None:
    tools = site.install(site.plugin(TOOLS))
    found = discover_plugins(only=[tools])

    class Misnamed:
        def check(self, tool: object, permission: str) -> None:
            return None

        def check_tools(self, loaded: object) -> list[str]:
            raise InvalidDefinitionError("policy", "tools.unit_write", "names unit.write wrongly")

    class Quiet(Misnamed):
        def check_tools(self, loaded: object) -> list[str]:
            return ["a warning, not reported here"]

    assert found.runtime(providers=[Quiet()]).tools  # warnings: the runtime is built
    with pytest.raises(InvalidDefinitionError, match=r"names unit\.write wrongly"):
        found.runtime(providers=[Misnamed()])
