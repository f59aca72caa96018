"""The loader's rules, in process: each test installs small distributions into a directory on sys.path.

A distribution here is what an installer leaves behind: a module and a
``.dist-info`` directory with ``METADATA`` and ``entry_points.txt``, found by
the same ``importlib.metadata`` discovery as any installed package. The
wheel-and-pip version of these tests is ``test_plugins_installed.py``.
"""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import hermes_core
from hermes_core import (
    EnvGrants,
    InvalidDefinitionError,
    PermissionDeniedError,
    PluginLoadError,
    Tool,
    ToolError,
    discover_plugins,
    load_runtime,
)
from hermes_core._plugins._guard import check_write_roots
from hermes_core._runtime._permissions import env_grants

if TYPE_CHECKING:
    from conftest import Site


def mine(site: Site, found: hermes_core.PluginSet) -> list[hermes_core.Plugin]:
    return [p for p in found.plugins if p.origin.distribution in site.names]


def test_a_plugin_contributes_tools_schemas_and_providers(site: Site) -> None:
    dist = site.install(
        site.plugin("""
        class Allow:
            def check(self, tool, permission):
                return True

        @hookimpl
        def hermes_tools():
            return [make("unit.a", permissions=["unit:a"]), make("unit.b")]

        @hookimpl
        def hermes_schemas():
            return {"unit.path": s.string()}

        @hookimpl
        def hermes_permission_providers():
            return [Allow()]
        """)
    )
    found = discover_plugins()
    (info,) = mine(site, found)
    assert info.ok
    assert info.origin.distribution == dist
    assert info.origin.version == "1.0.0"
    assert [t.name for t in info.tools] == ["unit.a", "unit.b"]
    assert list(info.schemas) == ["unit.path"]
    assert found.origin("unit.a") == info.origin
    assert found.origin("nope") is None
    runtime = load_runtime()
    assert runtime.call_sync("unit.a", {}) == {}


def test_unmarked_hermes_functions_are_hooks_too(site: Site) -> None:
    site.install(site.plugin('def hermes_tools():\n    return (t for t in [make("unit.gen")])'))
    assert "unit.gen" in load_runtime().tools


def test_a_hook_returning_none_contributes_nothing(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    return None"))
    (info,) = mine(site, discover_plugins())
    assert info.ok
    assert info.tools == ()


def test_a_plugin_with_one_bad_contribution_contributes_nothing(site: Site) -> None:
    dist = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.good"), "unit.bad"]'))
    found = discover_plugins(strict=False)
    (info,) = mine(site, found)
    assert not info.ok
    assert info.tools == ()
    assert "unit.good" not in found.runtime().tools
    assert dist in info.problems[0].message


def test_a_plugin_whose_schema_came_from_a_broken_plugin_is_dropped_too(site: Site) -> None:
    base = site.install(
        site.plugin('@hookimpl\ndef hermes_schemas():\n    return {"unit.shared": s.string(), 3: s.string()}')
    )
    user = site.install(
        site.plugin("""
        USER = define_tool(
            name="unit.user", description="d", version="1.0.0",
            input=s.object({"p": s.ref("unit.shared")}), handler=dict,
        )

        @hookimpl
        def hermes_tools():
            return [USER]
        """)
    )
    found = discover_plugins(strict=False)
    by_name = {p.origin.distribution: p for p in mine(site, found)}
    assert "hermes_schemas name must be segments joined by '.'" in by_name[base].problems[0].message
    assert 'refers to the schema "unit.shared"' in by_name[user].problems[0].message
    with pytest.raises(InvalidDefinitionError, match=base):
        discover_plugins()


def test_disable_skips_by_distribution_or_entry_point_and_the_environment_adds_more(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = site.install("raise RuntimeError('broken at import')")
    with pytest.raises(PluginLoadError):
        discover_plugins()
    (info,) = mine(site, discover_plugins(disable=[broken]))
    assert info.disabled
    assert not info.ok
    entry_point = info.origin.entry_point
    assert mine(site, discover_plugins(disable=[entry_point.upper()]))[0].disabled
    monkeypatch.setenv("HERMESOS_DISABLE_PLUGINS", f" , {broken} ,")
    assert mine(site, discover_plugins())[0].disabled


def test_an_import_failure_is_a_load_error_of_its_own_with_the_cause_chained(site: Site) -> None:
    dist = site.install("raise OSError('config file missing')")
    with pytest.raises(PluginLoadError) as caught:
        discover_plugins()
    error = caught.value
    assert not isinstance(error, ToolError)
    assert isinstance(error.__cause__, OSError)
    assert error.origin.distribution == dist
    assert str(error).startswith(f'plugin {dist} 1.0.0 (entry point "{error.origin.entry_point}" = ')
    assert "failed with OSError: config file missing" in str(error)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.origin) == (str(error), error.origin)


def test_a_plugin_calling_sys_exit_at_import_is_a_load_error(site: Site) -> None:
    site.install("import sys\nsys.exit(3)")
    with pytest.raises(PluginLoadError, match="SystemExit"):
        discover_plugins()


def test_a_hook_that_raises_a_tool_error_is_attributed_as_a_definition_error(site: Site) -> None:
    dist = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("Bad Name")]'))
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert caught.value.declaration.startswith(f"plugin {dist} 1.0.0")
    assert caught.value.field == "name"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("@hookimpl\ndef hermes_tools():\n    return make('unit.x')", "returned Tool; it must return an iterable"),
        ("@hookimpl\ndef hermes_tools():\n    return 'unit.x'", "returned str; it must return an iterable"),
        (
            "@hookimpl\ndef hermes_schemas():\n    return [s.string()]",
            "hermes_schemas must be a mapping of name to schema, got list",
        ),
        ("@hookimpl\ndef hermes_schemas():\n    return {'unit.x': s.optional(s.string())}", "must be a schema"),
        ("@hookimpl\ndef hermes_permission_providers():\n    return [len]", "check(tool, permission)"),
        ("@hookimpl\ndef hermes_tools(extra):\n    return []", "hooks take none"),
        ("@hookimpl\ndef hermes_schema():\n    return {}", 'did you mean "hermes_schemas"?'),
        ("def hermes_everything():\n    return {}", "the hooks are hermes_tools"),
    ],
)
def test_malformed_contributions_are_definition_errors_naming_the_plugin(site: Site, body: str, says: str) -> None:
    dist = site.install(site.plugin(body))
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert f"plugin {dist} 1.0.0" in str(caught.value)
    assert says in str(caught.value)


def test_a_failing_iterable_is_a_load_error(site: Site) -> None:
    site.install(
        site.plugin(
            "def gen():\n    yield make('unit.g')\n    raise KeyError('x')\n\ndef hermes_tools():\n    return gen()"
        )
    )
    with pytest.raises(PluginLoadError, match="iterating what hermes_tools returned raised KeyError"):
        discover_plugins()


def test_requirement_on_the_core_is_checked_with_markers_and_prereleases(site: Site) -> None:
    plugin = site.plugin("@hookimpl\ndef hermes_tools():\n    return []")
    ok = site.install(plugin, requires="hermesos-core>=0.1.0.dev0")
    other = site.install(plugin, requires='hermesos-core>=99; python_version < "3"')
    unrelated = site.install(plugin, requires="somethingelse>=99")
    assert all(p.ok for p in mine(site, discover_plugins()))
    bad = site.install(plugin, requires="HermesOS_Core<0.1")
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert caught.value.field == "Requires-Dist"
    assert f"plugin {bad} 1.0.0" in str(caught.value)
    assert f"hermesos-core {hermes_core.__version__} is installed" in str(caught.value)
    assert {ok, other, unrelated} <= set(site.names)


def test_clashing_tool_names_name_both_distributions_and_the_later_one_loses(site: Site) -> None:
    first = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.same")]'))
    second = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.same")]'))
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert first in str(caught.value)
    assert second in str(caught.value)
    found = discover_plugins(strict=False)
    assert found.origin("unit.same") is not None
    assert {p.origin.distribution: p.ok for p in mine(site, found)} == {first: True, second: False}


def test_tool_names_differing_only_in_case_clash_across_plugins(site: Site) -> None:
    first = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.getTinyImage")]'))
    second = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.gettinyimage")]'))
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert caught.value.field == 'tool "unit.gettinyimage"'
    assert caught.value.detail.startswith(
        f'differs only in case from the tool "unit.getTinyImage" contributed by plugin {first} 1.0.0 (entry point '
    )
    assert (
        "tool names must be unique across installed plugins, and differ in more than case: "
        f"uninstall or disable one of {first} and {second}" in str(caught.value)
    )
    found = discover_plugins(strict=False)
    assert found.origin("unit.getTinyImage") is not None
    assert {p.origin.distribution: p.ok for p in mine(site, found)} == {first: True, second: False}


def test_tool_names_differing_only_in_case_clash_within_a_plugin(site: Site) -> None:
    dist = site.install(
        site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.Forecast"), make("unit.forecast")]')
    )
    found = discover_plugins(strict=False)
    (plugin,) = [p for p in mine(site, found) if p.origin.distribution == dist]
    assert not plugin.ok
    assert 'tools "unit.Forecast" and "unit.forecast" have names that differ only in case' in plugin.problems[0].message


def test_hermes_grants_are_read_and_checked() -> None:
    assert env_grants({"HERMESOS_GRANTS": " fs:read, ,net:* "}) == ("fs:read", "net:*")
    assert env_grants({}) == ()
    with pytest.raises(InvalidDefinitionError) as caught:
        env_grants({"HERMESOS_GRANTS": "fs:read,fs"})
    assert caught.value.field == "HERMESOS_GRANTS[1]"


def test_env_grants_is_a_provider(site: Site) -> None:
    provider = EnvGrants({"HERMESOS_GRANTS": "unit:*"})
    tool: Tool = hermes_core.define_tool(
        name="unit.p",
        description="d",
        version="1.0.0",
        input=hermes_core.schema.object({}),
        permissions=["unit:p"],
        handler=dict,
    )
    assert provider.check(tool, "unit:p") is True
    assert provider.check(tool, "fs:read") is None
    assert hermes_core.Runtime([tool], providers=[provider]).call_sync("unit.p", {}) == {}
    with pytest.raises(PermissionDeniedError):
        hermes_core.Runtime([tool], providers=[EnvGrants({})]).call_sync("unit.p", {})


def test_load_runtime_adds_hermes_grants_and_the_callers(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.g", permissions=["unit:g"])]'))
    with pytest.raises(PermissionDeniedError):
        load_runtime().call_sync("unit.g", {})
    assert load_runtime(grants=["unit:g"]).call_sync("unit.g", {}) == {}
    monkeypatch.setenv("HERMESOS_GRANTS", "unit:*")
    assert load_runtime().call_sync("unit.g", {}) == {}
    monkeypatch.setenv("HERMESOS_GRANTS", "unit")
    with pytest.raises(InvalidDefinitionError, match="HERMESOS_GRANTS"):
        load_runtime()


def test_importing_hermes_core_discovers_nothing(site: Site) -> None:
    import subprocess
    import sys

    site.install("raise RuntimeError('imported!')")
    code = "import hermes_core, sys; print('hermesos_unit' in ' '.join(sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(site.path)},
    )
    assert done.stdout.strip() == "False"


def test_two_distributions_may_use_the_same_entry_point_name(site: Site) -> None:
    first = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.one")]'))
    second = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.two")]'))
    for dist in (first, second):
        info = next(site.path.glob(dist.replace("-", "_") + "-*.dist-info"))
        module = (info / "entry_points.txt").read_text().split("=")[1].strip()
        (info / "entry_points.txt").write_text(f"[hermesos.plugins]\nsame = {module}\n")
    assert {"unit.one", "unit.two"} <= set(load_runtime().tools)


def test_two_entry_points_naming_one_module_are_refused(site: Site) -> None:
    dist = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("unit.twice")]'))
    info = next(site.path.glob(dist.replace("-", "_") + "-*.dist-info"))
    module = (info / "entry_points.txt").read_text().split("=")[1].strip()
    (info / "entry_points.txt").write_text(f"[hermesos.plugins]\na = {module}\nb = {module}\n")
    with pytest.raises(InvalidDefinitionError, match="already loaded"):
        discover_plugins()
    found = discover_plugins(strict=False)
    assert [p.ok for p in mine(site, found)] == [True, False]
    assert "unit.twice" in found.runtime().tools


def test_a_hook_wrapper_is_refused(site: Site) -> None:
    site.install(site.plugin("@hookimpl(wrapper=True)\ndef hermes_tools():\n    return (yield)"))
    with pytest.raises(InvalidDefinitionError, match="is a hook wrapper"):
        discover_plugins()


# -- diagnostics a plugin author can act on ----------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "def get_tools():\n    return []",  # a function of its own naming, unmarked
        "from hermes_core import hookimpl\n",  # the package instead of the module with the hooks
    ],
)
def test_an_entry_point_that_implements_no_hook_is_a_problem_saying_what_a_plugin_must_implement(
    site: Site, body: str
) -> None:
    dist = site.install(body)
    (plugin,) = mine(site, discover_plugins(strict=False))
    assert not plugin.ok
    origin = plugin.origin
    assert plugin.problems[0].message == (
        f'plugin {dist} 1.0.0 (entry point "{origin.entry_point}" = {origin.value}) implements no hook: '
        f"{origin.value} defines none of hermes_tools, hermes_yielding_tools, hermes_schemas, "
        "hermes_permission_providers, hermes_write_roots, hermes_guarded_paths, hermes_resources, hermes_problems; "
        "a plugin "
        "must define at least one (marked @hermes_core.hookimpl, or named exactly so). Point the entry point "
        "at the module that defines them."
    )


def test_strict_loading_says_how_to_start_without_the_broken_plugin(site: Site) -> None:
    definition = site.install(site.plugin('@hookimpl\ndef hermes_tools():\n    return [make("Bad Name")]'))
    with pytest.raises(InvalidDefinitionError) as caught:
        load_runtime()
    assert str(caught.value).endswith(
        f".\nTo start without it, disable it: --disable {definition} or HERMESOS_DISABLE_PLUGINS={definition}; "
        "'hermesos check' lists every problem of every plugin."
    )
    crashing = site.install("raise OSError('config file missing')")
    with pytest.raises(PluginLoadError) as loading:
        load_runtime(disable=[definition])
    assert str(loading.value).endswith(
        f"failed with OSError: config file missing.\nTo start without it, disable it: --disable {crashing} or "
        f"HERMESOS_DISABLE_PLUGINS={crashing}; 'hermesos check' lists every problem of every plugin."
    )
    assert isinstance(loading.value.__cause__, OSError)
    # Report mode records the problem as found, without the remedy: the CLI says it its own way.
    problems = discover_plugins(strict=False).problems
    assert all("To start without it" not in problem.message for problem in problems)


def test_a_named_schema_from_a_plugin_follows_the_same_name_rule_as_a_runtimes(site: Site) -> None:
    long_name = "unit." + "x" * 60  # 65 characters
    dist = site.install(site.plugin(f'@hookimpl\ndef hermes_schemas():\n    return {{"{long_name}": s.string()}}'))
    (plugin,) = mine(site, discover_plugins(strict=False))
    from_plugin = plugin.problems[0].error
    with pytest.raises(InvalidDefinitionError) as from_runtime:
        hermes_core.Runtime(schemas={long_name: hermes_core.schema.string()})
    assert isinstance(from_plugin, InvalidDefinitionError)
    assert (from_plugin.declaration, from_plugin.field) == (str(plugin.origin), "hermes_schemas name")
    assert (from_runtime.value.declaration, from_runtime.value.field) == ("Runtime()", "schemas name")
    assert from_plugin.detail == from_runtime.value.detail
    assert plugin.origin.distribution == dist


def test_refs_across_plugins_are_checked_without_building_a_runtime(
    site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    site.install(site.plugin('@hookimpl\ndef hermes_schemas():\n    return {"unit.path": s.string()}'))
    for index in range(3):
        site.install(
            site.plugin(
                f'@hookimpl\ndef hermes_tools():\n    return [define_tool(name="unit.t{index}", description="d", '
                'version="1.0.0", input=s.object({"p": s.ref("unit.path")}), handler=dict)]'
            )
        )
    built: list[object] = []
    init = hermes_core.Runtime.__init__
    monkeypatch.setattr(
        hermes_core.Runtime, "__init__", lambda self, *a, **k: built.append(self) or init(self, *a, **k)
    )
    found = discover_plugins()
    assert built == []
    assert {"unit.t0", "unit.t1", "unit.t2"} <= set(found.runtime().tools)
    assert len(built) == 1


# -- a tool must never be able to change the permissions that govern it ------------------------

GUARDED = """
class FileProvider:
    files = ({files!r},)

    def check(self, tool, permission):
        return None


@hookimpl
def hermes_permission_providers():
    return [FileProvider()]
"""

WRITER = """
@hookimpl
def hermes_tools():
    return [make("unit.writes")]


@hookimpl
def hermes_write_roots():
    return [{root!r}]
"""


def test_a_provider_file_inside_a_root_a_tool_may_write_stops_the_load_naming_both(site: Site, tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    policy = root / "policy.toml"
    policy.write_text("")
    writer = site.install(site.plugin(WRITER.format(root=str(root))))
    guarded = site.install(site.plugin(GUARDED.format(files=str(policy))))
    with pytest.raises(InvalidDefinitionError) as caught:
        load_runtime()
    message = str(caught.value)
    assert caught.value.declaration.startswith(f"plugin {guarded} 1.0.0")
    assert caught.value.field == "FileProvider.files"
    assert f'decides permissions from "{policy}", which lies inside "{root}", ' in message
    assert f"a directory the tools of plugin {writer} 1.0.0" in message
    assert "a tool could rewrite the permissions that govern it" in message
    (broken,) = [p for p in mine(site, discover_plugins(strict=False)) if not p.ok]
    assert broken.origin.distribution == guarded
    assert "unit.writes" in discover_plugins(strict=False).runtime().tools  # the writer itself stays


def test_a_symlink_either_way_does_not_hide_the_file_inside_the_root(site: Site, tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "policy.toml").write_text("")
    outside_link = tmp_path / "policy-link.toml"
    outside_link.symlink_to(root / "sub" / "policy.toml")
    site.install(site.plugin(WRITER.format(root=str(root))))
    site.install(site.plugin(GUARDED.format(files=str(outside_link))))
    with pytest.raises(InvalidDefinitionError, match=r"\(that is, \""):
        load_runtime()
    # A link under the root, pointing outside it: a tool could replace the link with a file of its own.
    outside = tmp_path / "real-policy.toml"
    outside.write_text("")
    (root / "policy-link.toml").symlink_to(outside)

    class ThroughLink:
        files = (str(root / "policy-link.toml"),)

        def check(self, tool: Tool, permission: str) -> bool | None:
            return None

    found = discover_plugins(strict=False)
    with pytest.raises(InvalidDefinitionError, match="lies inside"):
        found.runtime(providers=[ThroughLink()])
    # The root given through a link is the same directory.
    linked_root = tmp_path / "root-link"
    linked_root.symlink_to(root)
    assert check_write_roots("x", "roots", [linked_root]) == (str(root.resolve()),)


def test_a_provider_file_with_another_hard_link_is_refused(site: Site, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("")
    os.link(policy, tmp_path / "elsewhere.toml")
    site.install(site.plugin(GUARDED.format(files=str(policy))))
    with pytest.raises(InvalidDefinitionError, match="which has 2 hard links: a tool could change it through another"):
        load_runtime()


def test_a_provider_file_outside_every_root_is_fine_and_extra_providers_are_checked_too(
    site: Site, tmp_path: Path
) -> None:
    root = tmp_path / "workspace"
    root.mkdir()
    policy = tmp_path / "policy.toml"
    policy.write_text("")
    site.install(site.plugin(WRITER.format(root=str(root))))
    site.install(site.plugin(GUARDED.format(files=str(policy))))
    assert "unit.writes" in load_runtime().tools

    class Inside:
        files = (str(root / "rules.toml"),)

        def check(self, tool: Tool, permission: str) -> bool | None:
            return None

    with pytest.raises(InvalidDefinitionError) as caught:
        load_runtime(providers=[Inside()])
    assert (caught.value.declaration, caught.value.field) == ("providers", "Inside.files")


def test_write_roots_must_be_paths(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_write_roots():\n    return [3]"))
    with pytest.raises(InvalidDefinitionError, match=r"hermes_write_roots\[0\] must be a directory path"):
        discover_plugins()


# -- guarded paths: no root may hold what decides what runs or what is granted -------------------------

GUARDS = """
@hookimpl
def hermes_tools():
    return [make("unit.guards")]


@hookimpl
def hermes_guarded_paths():
    return [{path!r}]
"""


def _writer_refused(site: Site, writer: str) -> str:
    """The message of the writer's one fatal problem in report mode, after strict mode raised it too."""
    with pytest.raises(InvalidDefinitionError) as caught:
        load_runtime()
    assert caught.value.declaration.startswith(f"plugin {writer} 1.0.0")
    assert caught.value.field == "hermes_write_roots"
    (broken,) = [p for p in mine(site, discover_plugins(strict=False)) if p.origin.distribution == writer]
    assert not broken.ok
    return broken.problems[0].message


def test_a_root_holding_a_path_a_plugin_guards_stops_the_load_naming_root_path_and_plugin(
    site: Site, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("root")
    listing = root / "cache" / "listings"
    guard = site.install(site.plugin(GUARDS.format(path=str(listing))))
    writer = site.install(site.plugin(WRITER.format(root=str(root))))
    message = _writer_refused(site, writer)
    assert (
        f'hermes_write_roots names "{root}" as a directory its tools may write, but it contains "{listing}", a path '
        f"plugin {guard} guards (hermes_guarded_paths), so a tool could "
        "change what runs or what is granted, or the record of it; give the tools a folder of their own"
    ) in message
    # What the guarding plugin decides from may have been changed already: nothing of it runs in this load either.
    (guarding,) = [p for p in discover_plugins(strict=False).plugins if p.origin.distribution == guard]
    assert not guarding.ok
    said = guarding.problems[0].message
    assert said.startswith(f"plugin {guard} 1.0.0 (entry point ")
    assert (
        f'hermes_guarded_paths names "{listing}", which "{root}" meets, a directory the tools of plugin {writer} '
        in said
    )
    assert "may write (hermes_write_roots): what this plugin would run or grant, or the record it keeps, may " in said
    assert "unit.guards" not in discover_plugins(strict=False).runtime().tools
    # A plugin guarding a path that no root meets loads beside them.
    other = GUARDS.format(path=str(tmp_path_factory.mktemp("elsewhere") / "listings")).replace("guards", "other")
    site.install(site.plugin(other))
    assert "unit.other" in discover_plugins(strict=False).runtime().tools


def test_a_root_inside_a_guarded_directory_or_through_a_link_to_one_is_refused(
    site: Site, tmp_path_factory: pytest.TempPathFactory
) -> None:
    guarded = tmp_path_factory.mktemp("config")
    site.install(site.plugin(GUARDS.format(path=str(guarded))))
    inside = site.install(site.plugin(WRITER.format(root=str(guarded / "sub"))))
    (guarded / "sub").mkdir()
    assert f'but it lies inside "{guarded}", a path plugin ' in _writer_refused(site, inside)


def test_a_guarded_link_is_compared_as_named_and_as_what_it_leads_to(
    site: Site, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("root")
    (root / "real.toml").write_text("")
    link = tmp_path_factory.mktemp("elsewhere") / "link.toml"
    link.symlink_to(root / "real.toml")
    site.install(site.plugin(GUARDS.format(path=str(link))))
    writer = site.install(site.plugin(WRITER.format(root=str(root))))
    assert f'contains "{link}" (that is, "{root / "real.toml"}")' in _writer_refused(site, writer)


@pytest.mark.parametrize("where", ["home", "above home", "/"])
def test_a_root_that_is_or_holds_the_home_directory_is_refused_one_inside_it_is_not(
    site: Site, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    above = tmp_path_factory.mktemp("users")
    home = above / "me"
    (home / "work").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    root = {"home": home, "above home": above, "/": Path("/")}[where]
    writer = site.install(site.plugin(WRITER.format(root=str(root))))
    message = _writer_refused(site, writer)
    if where == "home":
        assert f'names "{home}" as a directory its tools may write, but it is the home directory' in message
    elif where == "above home":
        assert f'but it contains "{home}", the home directory' in message
    else:
        assert 'names "/" as a directory its tools may write, but it is the root of the file system' in message
    monkeypatch.setenv("HOME", str(above))  # a root inside the home directory is fine
    site.install(site.plugin(WRITER.format(root=str(home / "work"))).replace("unit.writes", "unit.inside"))
    assert "unit.inside" in discover_plugins(strict=False).runtime().tools


def test_a_root_holding_a_plugins_own_source_is_refused(site: Site, tmp_path_factory: pytest.TempPathFactory) -> None:
    # An installed module: its file. The root is the site directory itself, holding every module of the site.
    writer = site.install(site.plugin(WRITER.format(root=str(site.path))))
    message = _writer_refused(site, writer)
    module = writer.replace("-", "_")
    assert f'but it contains "{site.path / module}.py", the source of plugin ' in message


def test_a_root_inside_an_editable_plugins_project_folder_is_refused(
    site: Site, tmp_path_factory: pytest.TempPathFactory
) -> None:
    project = tmp_path_factory.mktemp("project")
    (project / "scratch").mkdir()
    writer = site.install(site.plugin(WRITER.format(root=str(project / "scratch"))))
    info = next(site.path.glob(f"{writer.replace('-', '_')}-1.0.0.dist-info"))
    (info / "direct_url.json").write_text(
        json.dumps({"url": project.as_uri(), "dir_info": {"editable": True}}), encoding="utf-8"
    )
    message = _writer_refused(site, writer)
    assert f'but it lies inside "{project}", the source of plugin {writer} (installed editable)' in message


def test_guarded_paths_must_be_paths(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_guarded_paths():\n    return [None]"))
    with pytest.raises(InvalidDefinitionError, match=r"hermes_guarded_paths\[0\] must be a file or directory path"):
        discover_plugins()


@pytest.mark.parametrize("raised", ["GeneratorExit()", "SystemExit(2)", "StopIteration()", "BaseException('odd')"])
def test_any_exception_of_a_hook_but_keyboard_interrupt_is_a_load_error(site: Site, raised: str) -> None:
    dist = site.install(site.plugin(f"@hookimpl\ndef hermes_tools():\n    raise {raised}"))
    with pytest.raises(PluginLoadError) as caught:
        discover_plugins()
    assert caught.value.origin.distribution == dist
    assert f"hook hermes_tools raised {raised.partition('(')[0]}" in str(caught.value)
    (broken,) = mine(site, discover_plugins(strict=False))
    assert not broken.ok


def test_keyboard_interrupt_in_a_hook_still_stops_the_load(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef hermes_tools():\n    raise KeyboardInterrupt"))
    with pytest.raises(KeyboardInterrupt):
        discover_plugins(strict=False)


# -- tools that give way on a clash (hermes_yielding_tools) ----------------------------------------------------


def _install_named(site: Site, dist: str, body: str) -> str:
    """Install *body* as the distribution *dist* (its name decides the load order), returning the name."""
    module = dist.replace("-", "_")
    (site.path / f"{module}.py").write_text(site.plugin(body))
    info = site.path / f"{module}-1.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0.0\nRequires-Dist: hermesos-core\n"
    )
    (info / "entry_points.txt").write_text(f"[hermesos.plugins]\n{module} = {module}\n")
    site.names.append(dist)
    return dist


_YIELDING = """
@hookimpl
def hermes_tools():
    return [make("unit.same"), make("unit.Other"), make("unit.mine")]

@hookimpl
def hermes_yielding_tools():
    return {"unit.same": "rename it in mounts.toml", "unit.Other": "rename that one"}
"""
_ORDINARY = '@hookimpl\ndef hermes_tools():\n    return [make("unit.same"), make("unit.other")]'


@pytest.mark.parametrize("yielding", ["hermesos-unit-aaa", "hermesos-unit-zzz"])
def test_a_yielding_tool_that_clashes_is_left_out_alone_whichever_plugin_sorts_first(site: Site, yielding: str) -> None:
    ordinary = _install_named(site, "hermesos-unit-mmm", _ORDINARY)
    _install_named(site, yielding, _YIELDING)
    for found in (discover_plugins(), discover_plugins(strict=False)):  # not fatal: strict mode loads too
        plugins = {p.origin.distribution: p for p in mine(site, found)}
        assert plugins[ordinary].ok
        assert plugins[yielding].ok
        assert [tool.name for tool in plugins[yielding].tools] == ["unit.mine"]
        assert found.origin("unit.same") == found.origin("unit.other") == plugins[ordinary].origin
        assert found.origin("unit.mine") == plugins[yielding].origin
        origin, other = plugins[yielding].origin, plugins[ordinary].origin
        assert [(p.message, p.fatal) for p in found.problems if p.origin.distribution in site.names] == [
            (
                f'{origin}: tool "unit.same" is left out: it is also contributed by {other}, which keeps it; '
                f"the other tools of {yielding} are used. To have both: rename it in mounts.toml.",
                False,
            ),
            (
                f'{origin}: tool "unit.Other" is left out: it differs only in case from the tool "unit.other" '
                f"contributed by {other}, which keeps it; the other tools of {yielding} are used. "
                "To have both: rename that one.",
                False,
            ),
        ]
        assert found.runtime().call_sync("unit.mine", {}) == {}


def test_two_yielding_tools_that_clash_keep_the_first_plugins_and_ordinary_clashes_stay_fatal(site: Site) -> None:
    body = '@hookimpl\ndef hermes_tools():\n    return [make("unit.same")]\n\n'
    body += '@hookimpl\ndef hermes_yielding_tools():\n    return {"unit.same": "rename it"}'
    first = _install_named(site, "hermesos-unit-pair-a", body)
    second = _install_named(site, "hermesos-unit-pair-b", body)
    found = discover_plugins()
    plugins = {p.origin.distribution: p for p in mine(site, found)}
    assert ([t.name for t in plugins[first].tools], [t.name for t in plugins[second].tools]) == (["unit.same"], [])
    assert [(p.fatal, p.message.split(": ", 1)[1]) for p in plugins[second].problems] == [
        (
            False,
            f'tool "unit.same" is left out: it is also contributed by {plugins[first].origin}, which keeps it; '
            f"the other tools of {second} are used. To have both: rename it.",
        )
    ]
    # Two ordinary tools: the clash drops the later plugin, as before.
    third = _install_named(site, "hermesos-unit-pair-c", _ORDINARY)
    fourth = _install_named(site, "hermesos-unit-pair-d", _ORDINARY)
    found = discover_plugins(strict=False)
    assert {p.origin.distribution: p.ok for p in mine(site, found)} == {
        first: True,
        second: True,
        third: True,
        fourth: False,
    }
    assert found.origin("unit.same") == next(p for p in found.plugins if p.origin.distribution == third).origin


@pytest.mark.parametrize(
    ("returned", "field", "detail"),
    [
        ('["unit.a"]', "hermes_yielding_tools", "returned list; it must return a mapping of tool name to remedy"),
        (
            '{"unit.b": "x"}',
            "hermes_yielding_tools['unit.b']",
            "is not the name of one of the plugin's tools (hermes_tools)",
        ),
        ('{"unit.a": " "}', "hermes_yielding_tools['unit.a']", "must be a string saying how to keep both tools"),
    ],
)
def test_hermes_yielding_tools_must_name_the_plugins_own_tools_with_a_remedy(
    site: Site, returned: str, field: str, detail: str
) -> None:
    site.install(
        site.plugin(f"""
        @hookimpl
        def hermes_tools():
            return [make("unit.a")]

        @hookimpl
        def hermes_yielding_tools():
            return {returned}
        """)
    )
    with pytest.raises(InvalidDefinitionError) as caught:
        discover_plugins()
    assert caught.value.field == field
    assert detail in caught.value.detail


# -- which names of a module are hooks: read without pluggy's look at every name (start-up) ------------


def test_a_marked_function_of_another_name_is_the_hook_its_specname_says(site: Site) -> None:
    site.install(
        site.plugin("""
        CONSTANT = 3

        @hookimpl(specname="hermes_tools")
        def contributed():
            return [make("unit.named")]

        def helper():
            return [make("unit.not_a_hook")]
        """)
    )
    tools = load_runtime().tools
    assert "unit.named" in tools
    assert "unit.not_a_hook" not in tools


def test_a_marked_function_of_a_name_no_hook_has_is_still_refused(site: Site) -> None:
    site.install(site.plugin("@hookimpl\ndef tools():\n    return []"))
    with pytest.raises(InvalidDefinitionError, match="tools is not a hermesos hook"):
        discover_plugins()


def test_every_name_of_a_plugin_module_is_judged_as_pluggy_judges_it() -> None:
    """The loader passes over names pluggy would not take, without asking pluggy; the others it asks."""
    import types

    import pluggy

    from hermes_core._plugins._load import new_manager

    probe = types.ModuleType("probe")
    exec(  # a module of every kind of attribute, written here
        "import functools\n"
        "from hermes_core import hookimpl\n"
        "CONSTANT = 1\nNAMES = ['a']\n"
        "class Helper:\n    @hookimpl\n    def hermes_tools(self):\n        return []\n"
        "def plain():\n    return []\n"
        "@hookimpl\ndef marked():\n    return []\n"
        "@hookimpl(specname='hermes_tools')\ndef renamed():\n    return []\n"
        "def hermes_schemas():\n    return {}\n"
        "hermes_problems = 'not callable'\n"
        "bound = Helper().hermes_tools\n"
        "wrapped = functools.partial(plain)\n"
        "static = staticmethod(hookimpl(lambda: []))\n",
        probe.__dict__,
    )
    manager = new_manager()
    plain_pluggy = pluggy.PluginManager(manager.project_name)
    modules = [probe, *(__import__(name) for name in ("hermes_fs", "hermes_math", "hermes_policy", "hermes_mcp"))]
    for module in modules:
        for name in dir(module):
            expected = plain_pluggy.parse_hookimpl_opts(module, name)
            if expected is None and name.startswith("hermes_") and callable(getattr(module, name, None)):
                expected = manager.parse_hookimpl_opts(module, name)  # an unmarked hermes_* function: ours
            assert manager.parse_hookimpl_opts(module, name) == expected, (module.__name__, name)
    taken = [name for name in dir(probe) if manager.parse_hookimpl_opts(probe, name) is not None]
    assert taken == ["bound", "hermes_schemas", "marked", "renamed", "static"]  # not vacuous: each kind taken


def test_registering_a_plugin_looks_up_its_hooks_not_every_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """pluggy's static look at a name is asked for the names that can be hooks only (start-up)."""
    import inspect

    import hermes_fs

    from hermes_core._plugins._load import new_manager

    asked: list[str] = []
    static = inspect.getattr_static

    def counted(obj: object, attr: str, *default: object) -> object:
        asked.append(attr)
        return static(obj, attr, *default)

    monkeypatch.setattr(inspect, "getattr_static", counted)
    manager = new_manager()
    assert set(asked) == set(manager.hook.__dict__)  # the specs: the hooks' names only
    asked.clear()
    manager.register(hermes_fs, name="fs")
    hooks = {caller.name for caller in manager.get_hookcallers(hermes_fs) or []}
    assert "hermes_tools" in hooks  # registered, with its hooks
    assert set(asked) <= {name for name in dir(hermes_fs) if name.startswith("hermes_")}
    assert len(dir(hermes_fs)) > 5 * len(set(asked))  # the module's other names, many more, were passed over
