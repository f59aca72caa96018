"""Run every Python example in the documentation and check the output it shows.

The convention, for ``docs/*.md`` and ``README.md``:

* Every fenced block whose info string is ``python`` runs. The blocks of one
  page run in order in one namespace, shared by that page only, so a block may
  use what an earlier block on the same page defined. Each page runs in an
  empty temporary directory.
* A top-level expression statement whose last line ends with ``# -> TEXT``
  is evaluated, and ``repr()`` of its value must equal ``TEXT``.
  ``# -> raises Name: message`` expects the statement to raise an exception
  whose class is called ``Name`` and whose ``str()`` is ``message``;
  ``# -> raises Name`` checks the class only. A ``# ->`` comment anywhere else
  is an error.
* What a block prints is captured. When the block is followed, with only blank
  lines between, by a fenced ``text`` or ``json`` block, the printed output must
  equal that block (trailing whitespace on each line and at the end is
  ignored). A block that prints without such a block after it fails, so a page
  cannot hide what its example prints.
* A block whose info string carries ``title="PATH"`` is a file of the
  plugin tutorial (``docs/tutorial.md`` only): it does not run as an example;
  ``test_the_tutorial_works_from_an_empty_folder`` runs the tutorial's
  commands in a fresh virtual environment, comparing what they print, and
  writes every such file over the plugin ``hermesos new plugin`` made.
* Examples that are not Python use another language (``console``, ``text``,
  ``json``). An info string that starts with ``py`` but is not ``python``
  (``py``, ``python3``, ``pycon``...) is an error: a Python example runs.

The tests below also check that the reference pages cover every error code,
issue kind and combinator, and that relative links between pages resolve.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import tokenize
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_core import ErrorCode
from hermes_core import schema as s
from hermes_core._base._issues import IssueKind

if typing.TYPE_CHECKING:
    from conftest import Environments

ROOT = Path(__file__).resolve().parent.parent
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)")
_TITLE = re.compile(r'title="([^"]+)"')
TUTORIAL = "docs/tutorial.md"
_OUTPUT_LANGUAGES = ("text", "json")
_EXPECT = re.compile(r"#\s*->\s?(.*)\Z")
_RAISES = re.compile(r"raises\s+(\w+)(?::\s?(.*))?\Z")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, its text, and where it is."""

    language: str
    text: str
    first_line: int  # the 1-based line of the first line of text, after the fence
    follows_previous: bool  # only blank lines separate it from the block before
    title: str | None = None  # title="PATH": a file of the tutorial


def read_blocks(path: Path) -> list[Block]:
    """Every fenced block of *path*, in order."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    last_close = -2
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence, language = len(opening.group(1)), opening.group(2), opening.group(3)
        title = _TITLE.search(opening.group(4))
        start = index + 1
        index = start
        body: list[str] = []
        while index < len(lines):
            stripped = lines[index].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            line = lines[index]
            body.append(line[indent:] if line[:indent].isspace() else line.lstrip() if indent else line)
            index += 1
        else:
            pytest.fail(f"{path.name}:{start}: the fenced block opened here is never closed")
        between = lines[last_close + 1 : start - 1] if last_close >= 0 else ["x"]
        follows = all(not line.strip() for line in between)
        blocks.append(Block(language, "\n".join(body) + "\n", start + 1, follows, title and title.group(1)))
        last_close = index
        index += 1
    return blocks


def expectations(source: str) -> dict[int, str]:
    """The ``# ->`` comments of *source*: line number (1-based, in the block) to expected text."""
    found: dict[int, str] = {}
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type == tokenize.COMMENT:
            match = _EXPECT.match(token.string)
            if match:
                found[token.start[0]] = match.group(1).rstrip()
    return found


def run_block(block: Block, namespace: dict[str, typing.Any], filename: str) -> str:
    """Run one Python block in *namespace*, checking its ``# ->`` comments; return what it printed."""
    tree = ast.parse(block.text, filename)
    ast.increment_lineno(tree, block.first_line - 1)
    wanted = {line + block.first_line - 1: text for line, text in expectations(block.text).items()}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for statement in tree.body:
            expected = wanted.pop(statement.end_lineno or statement.lineno, None)
            if expected is None:
                module = ast.Module(body=[statement], type_ignores=[])
                exec(compile(module, filename, "exec"), namespace)
            elif not isinstance(statement, ast.Expr):
                pytest.fail(f"{filename}:{statement.lineno}: '# ->' must end an expression, not a statement")
            else:
                check_expression(statement, expected, namespace, filename)
    if wanted:
        line = min(wanted)
        pytest.fail(f"{filename}:{line}: '# ->' must end a top-level expression statement")
    return printed.getvalue()


def check_expression(statement: ast.Expr, expected: str, namespace: dict[str, typing.Any], filename: str) -> None:
    """Evaluate one ``expression  # -> expected`` line and compare."""
    where = f"{filename}:{statement.end_lineno}"
    code = compile(ast.Expression(body=statement.value), filename, "eval")
    raises = _RAISES.match(expected)
    if raises is None:
        actual = repr(eval(code, namespace))
        assert actual == expected, f"{where}: the expression's repr differs from its '# ->' comment"
        return
    name, message = raises.group(1), raises.group(2)
    raised: Exception | None = None
    try:
        value = eval(code, namespace)
    except Exception as error:
        raised = error
    if raised is None:
        pytest.fail(f"{where}: expected {name} to be raised, got {value!r}")
    assert type(raised).__name__ == name, f"{where}: raised {type(raised).__name__}: {raised}"
    if message is not None:
        assert str(raised) == message, f"{where}: the exception's message differs from its '# ->' comment"


def normalize(text: str) -> str:
    """*text* without trailing whitespace on each line or at the end."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def check_page(page: Path, name: str) -> None:
    """Run the Python blocks of *page* (called *name* in messages) and check what they show."""
    # A module of its own, registered while the page runs: what a dataclass or type hint looks up.
    module = types.ModuleType("__docs__")
    sys.modules["__docs__"] = module
    try:
        _run_page(page, name, module.__dict__)
    finally:
        del sys.modules["__docs__"]


def _run_page(page: Path, name: str, namespace: dict[str, typing.Any]) -> None:
    blocks = read_blocks(page)
    for index, block in enumerate(blocks):
        where = f"{name}:{block.first_line - 1}"
        if block.language.startswith("py") and block.language != "python":
            pytest.fail(f"{where}: fence a Python example as 'python' so that it runs, not {block.language!r}")
        if block.title is not None:
            assert name == TUTORIAL, f"{where}: title= marks a file of {TUTORIAL} only"
            continue
        if block.language != "python":
            continue
        printed = run_block(block, namespace, name)
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if following is not None and following.follows_previous and following.language in _OUTPUT_LANGUAGES:
            shown = normalize(following.text)
            assert normalize(printed) == shown, f"{where}: the output differs from the block after it"
        else:
            assert not printed, f"{where}: the block prints, but no text block after it shows what:\n{printed}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_examples_run_and_show_their_output(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    check_page(page, page.relative_to(ROOT).as_posix())


# Pages whose every example runs alone, as a reader copies it: each imports what it uses. (On the other pages a
# block may use what an earlier one defined.) people.md's second and third examples once failed copied alone.
STANDALONE = ["docs/index.md", "docs/quickstart.md", "docs/people.md", "docs/mcp-servers.md"]


@pytest.mark.parametrize("name", STANDALONE)
def test_each_example_of_these_pages_runs_alone(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = [block for block in read_blocks(ROOT / name) if block.language == "python"]
    assert examples
    for index, block in enumerate(examples):
        page = tmp_path / f"example-{index}.md"  # the block alone, and the output it shows
        blocks = read_blocks(ROOT / name)
        after = blocks[blocks.index(block) + 1] if blocks.index(block) + 1 < len(blocks) else None
        shown = f"\n```{after.language}\n{after.text}```\n" if after and after.follows_previous else ""
        page.write_text(f"```python\n{block.text}```\n{shown}", encoding="utf-8")
        folder = tmp_path / f"run-{index}"
        folder.mkdir()
        monkeypatch.chdir(folder)
        check_page(page, f"{name}:{block.first_line - 1}")


# -- the convention itself ------------------------------------------------------------------

_GOOD = """\
Text.

```python
x = 1 + 1
x  # -> 2
int("x")  # -> raises ValueError: invalid literal for int() with base 10: 'x'
[].pop()  # -> raises IndexError
print("a  ")
print("b")
```

```text
a
b
```

A later block sees `x`; a `text` block after prose is not output.

```python
assert x == 2
```

Prose.

```text
anything
```

```console
$ not run
```
"""

_BAD = {
    "wrong_value": "```python\n1 + 1  # -> 3\n```\n",
    "wrong_message": "```python\nint('x')  # -> raises ValueError: no\n```\n",
    "wrong_class": "```python\nint('x')  # -> raises TypeError\n```\n",
    "nothing_raised": "```python\nint('1')  # -> raises ValueError\n```\n",
    "expectation_on_assignment": "```python\nx = 1  # -> 1\n```\n",
    "expectation_inside_block": "```python\nif True:\n    1  # -> 1\n```\n",
    "wrong_output": "```python\nprint('a')\n```\n\n```text\nb\n```\n",
    "hidden_output": "```python\nprint('a')\n```\n\nProse.\n\n```text\na\n```\n",
    "skipped_python": "```py\nprint('a')\n```\n",
    "unclosed_fence": "```python\n1\n",
    "error_in_example": "```python\n1 / 0\n```\n",
}


def test_the_convention_accepts_a_correct_page(tmp_path: Path) -> None:
    page = tmp_path / "good.md"
    page.write_text(_GOOD, encoding="utf-8")
    check_page(page, page.name)


@pytest.mark.parametrize("text", _BAD.values(), ids=_BAD.keys())
def test_the_convention_rejects_a_wrong_page(tmp_path: Path, text: str) -> None:
    page = tmp_path / "bad.md"
    page.write_text(text, encoding="utf-8")
    with pytest.raises((AssertionError, pytest.fail.Exception, ZeroDivisionError)):
        check_page(page, page.name)


# -- coverage of the reference pages --------------------------------------------------------


def _page(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_error_reference_covers_every_code_and_issue_kind() -> None:
    text = _page("errors.md")
    for code in ErrorCode:
        assert f"`{code.value}`" in text, code
    for kind in typing.get_args(IssueKind):
        assert f"`{kind}`" in text, kind


def test_schema_reference_covers_every_combinator() -> None:
    text = _page("schemas.md")
    combinators = [name for name in s.__all__ if name.islower()]
    assert combinators
    for name in combinators:
        assert f"s.{name}(" in text, name


_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*$", re.MULTILINE)


def _prose(path: Path) -> str:
    """The text of *path* without its fenced blocks."""
    return re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)


def _anchors(path: Path) -> set[str]:
    """The anchors of *path*'s headings, made as GitHub makes them."""
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in _HEADING.findall(_prose(path))}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path) if path else page
        assert linked.exists(), f"{page.name} links to {target}, which does not exist"
        if anchor and linked.suffix == ".md":
            assert anchor in _anchors(linked), f"{page.name} links to {target}, which has no such heading"


# -- what the docs say, and how they are found --------------------------------------------------

# What the docs once said that stopped being true, each with what is true now: no page says it again.
RETIRED = {
    "lenient mode's second call": "lenient mode repairs an input within its one check, before INPUT_INVALID",
    "the servers are started when it starts": "hermesos serve starts a server at the first call of one of its tools",
}


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(ROOT).as_posix())
def test_no_page_says_what_stopped_being_true(page: Path) -> None:
    text = " ".join(page.read_text(encoding="utf-8").lower().split())  # one line: a phrase may wrap anywhere
    assert [f"{said!r}: {now}" for said, now in RETIRED.items() if said in text] == []


def test_the_navigation_is_five_groups_holding_every_page_once() -> None:
    """The navigation once listed 21 pages flat; grouped, a reader finds where to start and where to look things up."""
    yaml = pytest.importorskip("yaml")
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert [next(iter(group)) for group in nav] == ["Start", "Guides", "Integrations", "Reference", "Project"]
    pages = [page for group in nav for entries in group.values() for entry in entries for page in entry.values()]
    assert sorted(pages) == sorted(path.name for path in (ROOT / "docs").glob("*.md"))
    assert pages[:2] == ["index.md", "quickstart.md"]


# -- the quick starts, for real -------------------------------------------------------------

# Commands of a quick start that make what the test runs in already: a virtual environment holding
# hermesos-core and the bundled plugins from this checkout (this one's).
_SET_UP = ("python3 -m venv ", "pip install . plugins/")


def _matches(shown: list[str], printed: list[str]) -> bool:
    """Whether *printed* is what *shown* shows: a line ``...`` stands for any lines, ``...`` in a line for any text."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else ".*?".join(map(re.escape, line.rstrip().split("..."))) + r"\n"
        for line in shown
    )
    return re.fullmatch(pattern, "".join(f"{line.rstrip()}\n" for line in printed)) is not None


def _run_commands(steps: list[tuple[str, list[str]]], home: Path) -> None:
    """Run *steps* as a new user's shell would, in *home*, their home; each must print what it shows."""
    import os
    import shlex
    import subprocess

    bin_dir = Path(sys.executable).parent  # this environment's hermesos
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR", "XDG_"))}
    env.update(HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    for command, shown in steps:
        if command.startswith(_SET_UP):
            continue
        argv = [part.replace("~/", f"{home}/") for part in shlex.split(command, comments=True)]
        if argv[:2] == ["mkdir", "-p"]:
            Path(argv[2]).mkdir(parents=True, exist_ok=True)
        elif argv[0] == "export":
            name, _, value = argv[1].partition("=")
            env[name] = value
        else:
            assert argv[0] == "hermesos", f"the quick start runs {command!r}: test it"
            done = subprocess.run(
                [str(bin_dir / "hermesos"), *argv[1:]], cwd=home, env=env, capture_output=True, text=True, check=False
            )
            printed = (done.stdout + done.stderr).rstrip().splitlines()
            assert _matches(shown, printed), "\n".join([f"$ {command}", *printed, "where the page shows:", *shown])


@pytest.mark.parametrize("page", ["docs/quickstart.md", "README.md"])
def test_the_quick_start_runs_as_shown_for_a_new_user(page: str, tmp_path: Path) -> None:
    """Every command of the quick start, in a fresh home: tools list used to warn (no HERMESOS_FS_ROOT) and exit 1."""
    text = (ROOT / page).read_text(encoding="utf-8")
    section = tmp_path / "section.md"
    section.write_text(_section(text, "## Quick start") if page == "README.md" else text, encoding="utf-8")
    steps = _console(read_blocks(section))
    assert any(command.startswith("hermesos tools list") for command, _ in steps)
    home = tmp_path / "home"
    home.mkdir()
    _run_commands(steps, home)


def test_a_quick_start_that_leaves_out_the_file_tools_root_fails_its_check(tmp_path: Path) -> None:
    """The control: without the root, tools list prints a warning the quick start does not show."""
    shown = ["fs.read  1.0.0  Read...", "...", "math.eval  ..."]
    assert _matches(shown, ["fs.read  1.0.0  Read a file.", "fs.write", "math.eval  1.0.0"])
    assert not _matches(shown, ["fs.read  1.0.0  Read a file.", "math.eval  1.0.0", "warning: ..."])
    with pytest.raises(AssertionError, match="HERMESOS_FS_ROOT is not set"):
        _run_commands([("hermesos tools list", ["...", "math.eval  ..."])], tmp_path)


# -- the tutorial, for real ----------------------------------------------------------------

# Commands of the tutorial that set up what the test sets up itself (a virtual
# environment, hermesos-core from this checkout) or does itself (cd).
_HARNESS = ("python3 -m venv ", ". .venv/bin/activate", "pip install path/to/hermesos-core")


def _console(blocks: list[Block]) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of the console blocks, each with the output lines shown after it."""
    steps: list[tuple[str, list[str]]] = []
    for block in blocks:
        if block.language != "console":
            continue
        for line in block.text.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def test_the_tutorial_works_from_an_empty_folder(tmp_path: Path, environments: Environments) -> None:
    """Every command of the tutorial, in order, in a fresh venv; its files replace the scaffold's once it is written."""
    import os
    import shlex
    import subprocess

    blocks = read_blocks(ROOT / TUTORIAL)
    files = [block for block in blocks if block.title]
    assert {block.title for block in files} == {"hermes_wordcount.py", "tests/test_hermes_wordcount.py"}

    folder = tmp_path / "work"
    folder.mkdir()
    # A fresh environment with hermesos-core installed, as the tutorial's first commands make (conftest's environments).
    bin_dir = environments.new(tmp_path / ".venv") / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "NO_COLOR", "PYTHON"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(tmp_path / ".venv"))
    python = str(bin_dir / "python")

    steps = _console(blocks)
    assert any(command.startswith("hermesos new plugin") for command, _ in steps)
    assert any(command.startswith("hermesos call") for command, _ in steps)
    assert any(command.startswith("pip wheel") for command, _ in steps)  # how to make the file to share
    cwd = folder
    for command, shown in steps:
        if command.startswith(_HARNESS):
            continue
        argv = shlex.split(command)
        if argv[0] == "cd":
            cwd = cwd / argv[1]
            continue
        if argv[0] == "pip":  # pip install, pip wheel: quietly, with the environment's Python
            argv = [python, "-m", "pip", argv[1], "-q", "--disable-pip-version-check", *argv[2:]]
        assert argv[0] in ("hermesos", "pytest", "ls", python), f"the tutorial runs {command!r}: test it"
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
        printed = (done.stdout + done.stderr).rstrip().splitlines()
        if argv[0] == "pytest":
            assert done.returncode == 0, done.stdout + done.stderr
            assert printed[-1].startswith(shown[-1]), (command, printed)
        elif argv[0] in ("hermesos", "ls"):
            assert printed == shown, (command, printed)
        else:
            assert done.returncode == 0, done.stderr
        if argv[:3] == ["hermesos", "new", "plugin"]:
            # The tutorial's files replace the example the scaffold wrote.
            project = cwd / f"hermesos-{argv[3]}"
            for block in files:
                assert block.title is not None
                (project / block.title).write_text(block.text)


# -- the bundled plugins, as the README and the docs list them -----------------------------------

BUNDLED = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())


def _section(text: str, heading: str) -> str:
    """The text from *heading* (a line of its own) to the next heading of any level."""
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.search(r"^#{1,6} ", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


# An install command of the docs: a console line, or code in the prose (which may wrap onto the next line).
_INSTALLS = re.compile(r"^\$ ((?:pip|hermesos) install\b[^\n]*)|`((?:pip|hermesos) install\b[^`]*)`", re.MULTILINE)


def test_install_commands_name_hermesos_distributions_by_a_path_while_no_index_has_them() -> None:
    """Nothing is on a package index yet: ``pip install hermesos-core`` or ``hermesos install hermesos-fs`` failed.

    Every install command of the docs that names hermesos-core or a bundled plugin names its folder in a
    checkout, a wheel, or a local folder of wheels (``--find-links``). When they are published, this test goes.
    """
    published: list[str] = []
    for page in PAGES:
        for found in _INSTALLS.finditer(page.read_text(encoding="utf-8")):
            command = (found.group(1) or found.group(2)).split("#")[0].split()
            if {"--find-links", "-f", "--no-index"} & set(command):
                continue
            for argument in command[2:]:
                name = re.split(r"[\[<>=!~]", argument.strip("'\""))[0]
                if name in ("hermesos-core", *BUNDLED):
                    published.append(f"{page.relative_to(ROOT)}: {' '.join(command)}")
    assert published == []


def test_the_readme_and_the_docs_list_every_bundled_plugin_and_only_those() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^- \[`(hermesos-[a-z]+)`\]\(plugins/", _section(readme, "## Plugins"), re.MULTILINE)
    assert sorted(listed) == BUNDLED
    (identity,) = re.findall(r"the bundled\s+plugins (`hermesos-[a-z]+`(?:, `-[a-z]+`)*)\)", readme)
    assert (
        sorted(f"hermesos{name}" if name.startswith("-") else name for name in re.findall(r"`([-a-z]+)`", identity))
        == BUNDLED
    )
    plugins_page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    section = _section(plugins_page, "## The bundled plugins")
    assert sorted(re.findall(r"^- `(hermesos-[a-z]+)`:", section, re.MULTILINE)) == BUNDLED
    count = ["One", "Two", "Three", "Four", "Five", "Six"][len(BUNDLED) - 1]
    assert section.lstrip().startswith(f"{count} plugins are developed in this repository")
    quickstart = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    (install,) = [line for line in quickstart.splitlines() if line.startswith("$ pip install . plugins/")]
    assert sorted(re.findall(r"plugins/(hermesos-[a-z]+)", install)) == BUNDLED
    tox = (ROOT / "tox.ini").read_text(encoding="utf-8")
    (commands,) = [line for line in tox.splitlines() if line.startswith("commands_pre") and "-e plugins/" in line]
    assert sorted(re.findall(r"-e plugins/(hermesos-[a-z]+)", commands)) == BUNDLED
