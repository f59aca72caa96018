"""The public API: the names each public module exports, pinned; each exported once; the facade's lists agreeing.

``tests/api.txt`` lists every name in the ``__all__`` of every public module
(every module of the package whose dotted name has no part starting with
``_``). A name that joins or leaves the API fails the test until the list is
rewritten on purpose::

    python tests/test_api.py      # rewrites tests/api.txt from the modules as they are

and the change is committed with it (and a line in CHANGELOG.md). The tests
below also hold the facade's three lists (its ``TYPE_CHECKING`` imports, its
``__all__`` and the table of where each name lives) to each other, the names
that moved to their deprecation warning, and ``docs/reference.md`` to the
public modules: it renders them and nothing private, and every name they export.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hermes_core"
SNAPSHOT = ROOT / "tests" / "api.txt"
FACADE = PACKAGE / "__init__.py"
REFERENCE = ROOT / "docs" / "reference.md"
UPDATE = "python tests/test_api.py"

# Names a package exports from one of its own public modules, as well as that module: the testing kit lends the
# scripted model's names, so that a test imports one module (hermes_core.testing.scripted is where they live).
LENT = {("hermes_core.testing", "hermes_core.testing.scripted"): {"RecordedRequest", "ScriptedCall", "ScriptedModel",
                                                                   "ScriptedTurn"}}  # fmt: skip


def public_modules() -> list[str]:
    """Every public module of the package, by its dotted name: no part of it starts with ``_``."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(part.startswith("_") for part in parts):
            found.append(".".join(parts))
    return found


def exported() -> dict[str, list[str]]:
    """The ``__all__`` of each public module, imported as a user imports it."""
    names: dict[str, list[str]] = {}
    for name in public_modules():
        module = importlib.import_module(name)
        assert hasattr(module, "__all__"), f"{name} is public (no part of its name starts with _) but has no __all__"
        names[name] = sorted(module.__all__)
    return names


def render(names: dict[str, list[str]]) -> str:
    """The snapshot's text: a line per module, then a line per name it exports."""
    lines = [
        "# The public API: every name in the __all__ of every public module. Rewritten by: " + UPDATE,
        "# A change here is a change of the API: say so in CHANGELOG.md.",
    ]
    for module, members in sorted(names.items()):
        lines += ["", f"{module}:", *(f"    {member}" for member in members)]
    return "\n".join(lines) + "\n"


def test_the_public_api_is_the_snapshot() -> None:
    now = exported()
    pinned: dict[str, set[str]] = defaultdict(set)
    module = ""
    for line in SNAPSHOT.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        if line.endswith(":"):
            module = line[:-1]
            pinned[module] = set()  # a module exporting nothing is pinned as such
        else:
            pinned[module].add(line.strip())
    joined = sorted(f"{m}.{n}" for m, names in now.items() for n in names if n not in pinned.get(m, set()))
    left = sorted(f"{m}.{n}" for m, names in pinned.items() for n in names if n not in now.get(m, []))
    modules = sorted(set(now) ^ set(pinned))
    changed = {"joined": joined, "left": left, "modules added or removed": modules}
    assert not any(changed.values()), (
        f"the public API changed: {changed}. "
        f"If that is meant, run '{UPDATE}' to rewrite tests/api.txt, and say so in CHANGELOG.md"
    )
    assert len(now) >= 8  # every public module was found


def test_no_name_is_exported_by_two_public_modules() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for module, names in exported().items():
        for name in names:
            where[name].append(module)
    for (lender, owner), names in LENT.items():
        for name in names:
            assert where[name] == sorted([lender, owner]), f"{name} is no longer lent by {lender}: update LENT"
            where[name].remove(lender)
    twice = {name: modules for name, modules in where.items() if len(modules) > 1}
    assert not twice, f"exported by more than one public module (export each name once, where it lives): {twice}"


# -- the facade's three lists -------------------------------------------------------------------------


def _facade() -> tuple[dict[str, str], list[str], dict[str, str], dict[str, str]]:
    """The facade's TYPE_CHECKING imports (name: module), ``__all__``, ``_PLACES`` and ``_MOVED``, as written."""
    tree = ast.parse(FACADE.read_text(encoding="utf-8"))
    imports: dict[str, str] = {}
    literals: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom), "only imports under TYPE_CHECKING"
                for alias in statement.names:
                    module = str(statement.module)
                    # "from hermes_core import schema": the module hermes_core.schema.
                    place = f"{module}.{alias.name}" if module == "hermes_core" else module
                    imports[alias.asname or alias.name] = place
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            if isinstance(target, ast.Name) and target.id in ("__all__", "_PLACES", "_MOVED") and node.value:
                literals[target.id] = ast.literal_eval(node.value)
    imports.pop("Any")  # the annotation of __getattr__
    return imports, literals["__all__"], literals["_PLACES"], literals["_MOVED"]  # type: ignore[return-value]


def _places_text(imports: dict[str, str]) -> str:
    """The ``_PLACES`` table the TYPE_CHECKING imports make, to paste into the facade."""
    rows = sorted({**imports, "__version__": "hermes_core._base._version"}.items(), key=lambda row: (row[1], row[0]))
    return "_PLACES: dict[str, str] = {\n" + "".join(f'    "{n}": "{m}",\n' for n, m in rows) + "}"


def test_the_facades_lists_name_the_same_names_in_the_same_places() -> None:
    imports, listed, places, moved = _facade()
    assert len(listed) > 50  # the facade was read
    # The names that moved are imported too, from where they went, for type checkers until they are removed.
    typed_moved = {name: imports.pop(name, None) for name in moved}
    assert typed_moved == moved, "import each name that moved from where it went (_MOVED), as 'name as name'"
    assert len(set(listed)) == len(listed), "__all__ lists a name twice"
    assert set(listed) == set(imports) | {"__version__"}, (
        f"__all__ and the TYPE_CHECKING imports differ: only in __all__ {sorted(set(listed) - set(imports))}, "
        f"only imported {sorted(set(imports) - set(listed))}"
    )
    expected = {**imports, "__version__": "hermes_core._base._version"}
    assert places == expected, "_PLACES does not match the TYPE_CHECKING imports; it should be:\n" + _places_text(
        imports
    )


def test_each_place_holds_its_name() -> None:
    _, _, places, moved = _facade()
    for name, place in {**places, **moved}.items():
        module = importlib.import_module(place)
        assert place == f"hermes_core.{name}" or hasattr(module, name), f"{place} has no {name}"


def test_a_name_that_moved_is_not_in_the_facades_api_but_is_where_it_went() -> None:
    _, listed, places, moved = _facade()
    assert moved  # until 0.6
    for name, place in moved.items():
        assert name not in listed
        assert name not in places
        assert name in importlib.import_module(place).__all__


# -- the names that moved: importable from the facade until 0.6, with a warning ------------------------


@pytest.mark.parametrize("name", sorted(_facade()[3]))
def test_a_moved_name_warns_once_saying_where_it_lives_now(name: str) -> None:
    place = _facade()[3][name]
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from hermes_core import setting\n"  # the control: a name that did not move warns of nothing
        "    assert not caught, caught\n"
        f"    from hermes_core import {name}\n"
        f"    from hermes_core import {name} as again\n"
        f"import {place}\n"
        f"assert {name} is again is {place}.{name}\n"
        "print(len(caught), caught[0].category.__name__, caught[0].filename == '<string>')\n"
        "print(caught[0].message)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "1 DeprecationWarning True",
        f"hermes_core.{name} has moved to {place}: import it with 'from {place} import {name}'; "
        f"hermes_core.{name} will be removed in 0.6",
    ]


def test_a_moved_name_is_an_error_where_warnings_are() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", "import hermes_core; hermes_core.read_config_file"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("DeprecationWarning: hermes_core.read_config_file has moved")
    unknown = subprocess.run(
        [sys.executable, "-c", "import hermes_core; hermes_core.read_conifg_file"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert "AttributeError: module 'hermes_core' has no attribute 'read_conifg_file'" in unknown.stderr


# -- the reference renders the public modules, all of them, and nothing private --------------------------

_DIRECTIVE = re.compile(r"^::: (\S+)\n((?:    .*\n|\n(?=    ))*)", re.MULTILINE)
_MEMBER = re.compile(r'^        - "?([\w]+)"?$', re.MULTILINE)


def _directives() -> list[tuple[str, list[str] | None]]:
    """Each ``:::`` directive of docs/reference.md: what it renders, and its members list if it has one."""
    text = REFERENCE.read_text(encoding="utf-8")
    found = []
    for match in _DIRECTIVE.finditer(text):
        members = _MEMBER.findall(match.group(2)) if "members:" in match.group(2) else None
        found.append((match.group(1), members))
    assert len(found) == text.count("\n::: "), "a directive the test cannot read"
    return found


def test_the_reference_renders_public_modules_only() -> None:
    private = [target for target, _ in _directives() if any(p.startswith("_") for p in target.split("."))]
    assert not private, f"docs/reference.md renders private modules or names: {private}"


def test_the_reference_renders_every_public_name_and_only_those() -> None:
    names = exported()
    covered: dict[str, set[str]] = defaultdict(set)
    for target, members in _directives():
        if target in names:  # a module: its members list names what is rendered
            assert members is not None, f"::: {target} needs its members listed, so the test knows what it renders"
            stale = sorted(set(members) - set(names[target]))
            assert not stale, f"docs/reference.md renders {stale} of {target}, which it does not export"
            covered[target].update(members)
        else:  # one name, through its module
            module, _, name = target.rpartition(".")
            assert name in names.get(module, []), f"::: {target}: {module} does not export {name}"
            covered[module].add(name)
    for (lender, _), lent in LENT.items():
        covered[lender] |= lent
    covered["hermes_core"] |= {"__version__", "schema"}  # the version is on the first page; schema is rendered whole
    missing = sorted(f"{m}.{n}" for m, members in names.items() for n in members if n not in covered[m])
    assert not missing, f"docs/reference.md does not render {missing}"


# A private module: a part of a dotted name after hermes_core that starts with an underscore.
_PRIVATE_IMPORT = re.compile(r"\b(?:from|import)\s+hermes_core(?:\.\w+)*\._\w+")


def test_no_page_imports_a_private_module() -> None:
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md", *sorted((ROOT / "plugins").glob("*/README.md"))]
    found = [
        f"{page.relative_to(ROOT).as_posix()}: {match.group()}"
        for page in pages
        for match in _PRIVATE_IMPORT.finditer(page.read_text(encoding="utf-8"))
    ]
    assert not found, f"pages import private modules; use the public names: {found}"
    assert _PRIVATE_IMPORT.search("from hermes_core._base._issues import format_path")  # the search is real


if __name__ == "__main__":
    SNAPSHOT.write_text(render(exported()), encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
