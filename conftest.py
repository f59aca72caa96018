"""The suite's two sizes: the quick run, and the full run that CI makes.

``python3 dev.py test`` (or ``pytest``) runs the quick suite: every test but
the slow ones, which cost seconds each on a two-core machine and many times
that when it is busy. ``--full``, or ``CI`` set in the environment (as CI
services set it, and ``.ci/run`` does), runs every test. A test is slow when:

* it is marked ``slow`` or ``scale``;
* it uses a fixture in :data:`SLOW_FIXTURES`: a real install into fresh
  virtual environments, or clients and servers installed from npm;
* it is named in :data:`SLOW_TESTS` (real-server scenarios, Hypothesis-heavy
  properties, large inputs), or is a case past the first of a matrix named
  in :data:`SLOW_MATRICES`: the quick run keeps one case of each.

A name in either list must be a test of its module: ``tests/test_suite.py``
fails on one that is not, so that a renamed test is not silently run in the
quick suite again. See docs/testing.md (the project's own suite).
"""

from __future__ import annotations

import os
import signal

import pytest

#: Fixtures whose tests are slow: wheels built and installed into fresh environments; npm installs.
SLOW_FIXTURES = frozenset({"wheels", "environments", "typescript", "everything"})

#: Tests the quick run leaves out, every case of each: ``path::name`` as pytest names them.
SLOW_TESTS = (
    # real servers, started and stopped many times in one test
    "plugins/hermesos-mcp/tests/test_clash.py::test_a_mounted_tool_named_as_a_bundled_one_gives_way_alone",
    "plugins/hermesos-mcp/tests/test_clash.py::test_selecting_the_servers_tools_without_eval_leaves_no_problem",
    "plugins/hermesos-mcp/tests/test_hermes_mcp.py::test_hermesos_call_and_check_with_the_reference_time_server",
    "plugins/hermesos-mcp/tests/test_hermes_mcp.py::test_a_cached_listing_is_used_until_the_entry_changes_or_it_expires",
    "plugins/hermesos-mcp/tests/test_bounds.py::test_ctrl_c_while_a_server_starts_ends_the_command_at_once",
    "plugins/hermesos-mcp/tests/test_bounds.py::test_names_that_clash_in_one_listing_skip_those_tools_alone",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_check_reports_a_server_whose_tools_changed_and_caches_them",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_check_starts_each_cached_server_and_reports_one_that_cannot_start",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_a_slow_server_start_shows_progress_on_stderr",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_a_dead_server_is_started_again_for_the_next_call_of_a_long_lived_runtime",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_check_with_timeout_keeps_its_worker_protocol",
    "plugins/hermesos-mcp/tests/test_lazy.py::test_a_call_given_up_on_while_its_server_starts_leaves_the_start_to_the_next_call",
    "plugins/hermesos-mcp/tests/test_guarded.py::test_a_refused_load_never_starts_the_server_not_even_to_list_its_tools",
    "tests/test_serve_bounds.py::test_a_request_of_300000_unexpected_keys_does_not_hold_another_clients_tools_list",
    "tests/test_hardening.py::test_check_timeout_stops_a_plugin_that_hangs_names_it_and_checks_the_others",
    "tests/test_guard.py::test_names_near_the_protected_ones_are_written",
    # Hypothesis-heavy properties
    "tests/test_schema_import.py::test_an_exported_schema_imports_to_the_same_checks",
    "tests/test_schema_import.py::test_an_exported_recursive_ref_imports_to_the_same_checks",
    "tests/test_schema_properties.py::test_parse_accepts_exactly_what_json_schema_accepts",
    "tests/test_schema_properties.py::test_shaped_values_are_often_accepted",
    "plugins/hermesos-fs/tests/test_hermes_fs.py::test_random_paths_stay_inside_the_root_or_are_refused",
    # large inputs
    "tests/test_schema_bounds.py::test_null_against_an_object_of_100000_required_names_is_refused_quickly",
    "tests/test_schema_issues_max.py::test_the_16_mib_attack_runs_in_bounded_memory",
)

#: Tests over a matrix of cases, of which the quick run keeps the first case of each.
SLOW_MATRICES = (
    "plugins/hermesos-mcp/tests/test_guarded.py::test_one_fs_write_no_longer_runs_code_in_a_mounted_server",
    "tests/test_serve_stop.py::test_ctrl_c_at_any_moment_of_the_start_ends_serve_promptly_without_a_traceback",
    "tests/test_serve_stop.py::test_ctrl_c_as_serve_starts_ends_it_at_once_in_one_line",
    "tests/test_lifecycle.py::test_serve_over_stdio_leaves_no_child_behind",
)


#: The names (``path::name``) of the tests this process collected, slow or not: what :func:`unknown_names` checks.
_collected: set[str] = set()


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the commands the tests start, however this run was started.

    A shell starting a command in the background without job control (``cmd &``
    in a script) has it ignore SIGINT, and an ignored signal stays ignored in
    every process it starts: the tests that interrupt ``hermesos`` would
    interrupt nothing. A handler of this process's own is reset to the default
    in each command it starts.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--full``: the slow tests too."""
    parser.addoption(
        "--full",
        action="store_true",
        help="run every test, the slow ones too (the quick run leaves them out; CI set in the environment: --full)",
    )


def full_run(config: pytest.Config) -> bool:
    """Whether this run is the full one: ``--full``, or ``CI`` set (to anything but ``0``, ``false`` or ``no``)."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return bool(config.getoption("--full")) or ci


def pytest_report_header(config: pytest.Config) -> str:
    """Which suite runs, under pytest's first lines."""
    if full_run(config):
        return "the full suite: every test"
    return "the quick suite: the slow tests are left out (--full, or CI set, runs them; see conftest.py)"


def _name(item: pytest.Item) -> str:
    """The test's id without its case: ``path::name``."""
    return item.nodeid.split("[", 1)[0]


def unknown_names() -> list[str]:
    """The names in the lists that are no test of their module, of the modules this process collected."""
    files = {name.split("::", 1)[0] for name in _collected}
    named = (*SLOW_TESTS, *SLOW_MATRICES)
    return [name for name in named if name.split("::", 1)[0] in files and name not in _collected]


def slow_items(items: list[pytest.Item]) -> list[pytest.Item]:
    """The slow tests of *items*."""
    firsts: set[str] = set()
    slow = []
    for item in items:
        name = _name(item)
        in_matrix = name in SLOW_MATRICES and name in firsts
        firsts.add(name)
        fixtures = set(getattr(item, "fixturenames", ())) & SLOW_FIXTURES
        marked = item.get_closest_marker("slow") or item.get_closest_marker("scale")
        if marked or fixtures or name in SLOW_TESTS or in_matrix:
            slow.append(item)
    return slow


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the slow tests out of the quick run (deselected, as ``-k`` does)."""
    _collected.update(map(_name, items))
    slow = slow_items(items)
    if full_run(config) or not slow:
        return
    left_out = set(map(id, slow))
    config.hook.pytest_deselected(items=slow)
    items[:] = [item for item in items if id(item) not in left_out]
