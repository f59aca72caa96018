"""The installed distributions' entry points and metadata, read as importlib.metadata reads them, in every case.

Each test builds ``sys.path`` entries of real ``*.dist-info`` and ``*.egg-info``
folders (and files), then compares what this module finds with what
``importlib.metadata`` finds on the same path: the reference is the standard
library itself, not a copy of its expected output.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_core._plugins import _distributions as distributions

GROUP = "hermesos.plugins"


@pytest.fixture
def path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """sys.path replaced by a list the test fills with folders of its own (the standard library stays importable)."""
    entries: list[str] = []
    monkeypatch.setattr(sys, "path", entries)
    monkeypatch.chdir(tmp_path)  # the empty entry is the current directory
    return entries


def dist_info(root: Path, folder: str, metadata: str, entry_points: str | None = None) -> Path:
    info = root / folder
    info.mkdir(parents=True)
    (info / ("PKG-INFO" if folder.endswith(".egg-info") else "METADATA")).write_text(metadata, encoding="utf-8")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return info


def seen(found: list[Any]) -> list[tuple[Any, ...]]:
    """What discovery reads of each entry point: its name, value and module, its distribution's metadata."""
    rows = []
    for entry_point in found:
        metadata = entry_point.dist.metadata
        rows.append(
            (
                entry_point.name,
                entry_point.value,
                entry_point.module,
                metadata["Name"],
                metadata["Version"],
                metadata.get_all("Requires-Dist"),
                metadata["Summary"],
            )
        )
    return rows


def standard(group: str = GROUP) -> list[tuple[Any, ...]]:
    return seen(list(importlib.metadata.entry_points(group=group)))


def ours(group: str = GROUP) -> list[tuple[Any, ...]]:
    return seen(distributions.entry_points(group))


def test_entry_points_and_metadata_read_as_the_standard_library_reads_them(tmp_path: Path, path: list[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    dist_info(
        first,
        "Alpha_Plugin-1.0.dist-info",
        "Metadata-Version: 2.1\nName: Alpha_Plugin\nVersion: 1.0\nSummary: first line\n  continued here\n"
        "Requires-Dist: hermesos-core>=0.4\nRequires-Dist: pytest; extra == 'test'\n\nName: not-a-header\n",
        "# a comment\n[console_scripts]\nalpha = alpha:main\n\n[hermesos.plugins]\n  # another comment\n"
        "alpha   =   alpha_plugin.hooks : plugin [extra]\nsecond = alpha_plugin\n",
    )
    dist_info(first, "beta.egg-info", "Name: beta\nVersion: 2\n", "[hermesos.plugins]\nbeta = beta_mod\n")
    dist_info(first, "gamma-3.dist-info", "Name: gamma\nVersion: 3\n")  # no entry points
    (first / "delta-1.0.egg-info").write_text("Name: delta\nVersion: 1.0\n")  # a distutils file, not a folder
    # The same distributions again, later on the path: the first of a name wins, whatever its spelling.
    dist_info(second, "alpha.plugin-9.dist-info", "Name: alpha.plugin\nVersion: 9\n", "[hermesos.plugins]\nz = z\n")
    dist_info(second, "delta-2.dist-info", "Name: delta\nVersion: 2\n", "[hermesos.plugins]\ndelta = delta_mod\n")
    dist_info(second, "epsilon-1.dist-info", "Name: epsilon\nVersion: 1\n", "[hermesos.plugins]\ne = e:f.g\n")
    dist_info(tmp_path, "here-1.dist-info", "Name: here\nVersion: 1\n", "[hermesos.plugins]\nhere = here\n")
    path.extend([str(first), "", str(tmp_path / "missing"), str(second)])
    assert ours() == standard()
    assert {row[0] for row in ours()} == {"alpha", "second", "beta", "here", "e"}
    assert ours("console_scripts") == standard("console_scripts")
    assert ours("no.such.group") == standard("no.such.group") == []


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_headers_end_at_the_first_empty_line_whatever_the_line_breaks(
    tmp_path: Path, path: list[str], newline: str
) -> None:
    """Only the headers are split into lines (start-up); what follows the empty line is never a header."""
    lines = ["Name: early", "Version: 1", "Summary: one", "  folded", "", "Requires-Dist: not-a-header", "", "x"]
    info = tmp_path / "early-1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(newline.join(lines), encoding="utf-8", newline="")
    (info / "entry_points.txt").write_text("[hermesos.plugins]\nearly = early\n", encoding="utf-8")
    # The group named only in another section's values, or in a section name that is not quite it: no entry point.
    dist_info(tmp_path, "late-1.dist-info", "Name: late\nVersion: 1\n", "[other]\nx = hermesos.plugins\n")
    dist_info(tmp_path, "spaced-1.dist-info", "Name: spaced\nVersion: 1\n", "[ hermesos.plugins ]\ns = s\n")
    # Brackets doubled: importlib.metadata strips them all.
    dist_info(tmp_path, "doubled-1.dist-info", "Name: doubled\nVersion: 1\n", "[[hermesos.plugins]]\nd = d\n")
    path.append(str(tmp_path))
    assert ours() == standard()
    # Not vacuous: found, and without the line after the empty one (the summary is the standard library's own).
    assert sorted(row[:6] for row in ours()) == [("d", "d", "d", "doubled", "1", None), ("early",) * 4 + ("1", None)]


def test_this_environment_is_read_alike_in_every_group() -> None:
    groups = {entry_point.group for dist in importlib.metadata.distributions() for entry_point in dist.entry_points}
    assert GROUP in groups  # the bundled plugins are installed where the tests run
    for group in sorted(groups):
        assert sorted(ours(group)) == sorted(standard(group)), group


def test_a_distribution_by_name(tmp_path: Path, path: list[str]) -> None:
    info = dist_info(tmp_path / "site", "Some_Thing-1.0.dist-info", "Name: Some_Thing\nVersion: 1.0\n")
    (info / "direct_url.json").write_text('{"url": "file:///src", "dir_info": {"editable": true}}')
    path.append(str(tmp_path / "site"))
    for name in ("some-thing", "Some_Thing", "some.thing"):
        found = distributions.distribution(name)
        assert found is not None
        assert found.read_text("direct_url.json") == importlib.metadata.distribution(name).read_text("direct_url.json")
        assert found.read_text("RECORD") is None
    assert distributions.distribution("other") is None


def test_an_entry_point_loads_its_module_or_its_attribute(tmp_path: Path, path: list[str]) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "hermesos_dist_probe.py").write_text("class Outer:\n    class Inner:\n        pass\n")
    dist_info(
        tmp_path / "site",
        "probe-1.dist-info",
        "Name: probe\nVersion: 1\n",
        "[hermesos.plugins]\nmodule = hermesos_dist_probe\nnested = hermesos_dist_probe:Outer.Inner\n",
    )
    path.append(str(tmp_path / "site"))
    try:
        loaded = {entry_point.name: entry_point.load() for entry_point in distributions.entry_points(GROUP)}
        assert loaded["module"] is sys.modules["hermesos_dist_probe"]
        assert loaded["nested"] is sys.modules["hermesos_dist_probe"].Outer.Inner
    finally:
        sys.modules.pop("hermesos_dist_probe", None)


def test_a_zip_on_the_path_is_left_to_the_standard_library(tmp_path: Path, path: list[str]) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.dist-info/METADATA", "Name: zipped\nVersion: 1\n")
        zipped.writestr("zipped-1.dist-info/entry_points.txt", "[hermesos.plugins]\nzipped = zipped\n")
    path.append(str(archive))
    assert [row[:5] for row in ours()] == [("zipped", "zipped", "zipped", "zipped", "1")]
    assert ours() == standard()
    assert distributions.distribution("zipped") is not None


# -- read with str's methods where the expressions of importlib.metadata and email are not needed (start-up) --

_VALUES = st.text(alphabet="ab_.:9 []x\u00e9\u0663\n", max_size=20) | st.sampled_from(
    ["hermes_fs", "hermes_mcp:plugin", "a.b:c.d", "a:b:c", ":a", "a:", "a :b", "a:b [x]", "\u00e9t\u00e9:x", "a\n"]
)


@given(_VALUES)
def test_an_entry_points_value_is_read_as_importlib_metadata_reads_it(value: str) -> None:
    match = re.match(distributions._VALUE, value)
    assert distributions._parts(value) == (None if match is None else (match.group("module"), match.group("attr")))


@given(st.text(alphabet="Ab-_ :\t\x7f\x00\u00e9~!", max_size=12))
def test_a_header_name_is_read_as_email_reads_it(name: str) -> None:
    assert distributions._header_name(name) == (re.fullmatch(r"[\041-\071\073-\176]*", name) is not None)


@given(st.text(alphabet="aB9-_.\u00e9\u0130 ", max_size=12))
def test_a_distribution_name_is_normalized_as_importlib_metadata_normalizes_it(name: str) -> None:
    assert distributions._normalized(name) == re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")
