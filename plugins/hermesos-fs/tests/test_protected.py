"""Protected names inside a root: what a write could turn into code execution, and credentials a read would leak.

The attacks through the ``hermesos`` command are in hermesos-core's
``tests/test_guard.py``; these are the rules, in process, with
:func:`hermes_fs.make_tools` and its arguments.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import hermes_fs
import pytest

from hermes_core import InputInvalidError, InvalidDefinitionError, Runtime


def runtime(root: Path, **protection: Any) -> Runtime:
    return Runtime(hermes_fs.make_tools(root, **protection), grants=["fs:*"], schemas=hermes_fs.hermes_schemas())


def refused(rt: Runtime, tool: str, **args: Any) -> str:
    """The detail of the one issue of a call refused on ``path``."""
    with pytest.raises(InputInvalidError) as caught:
        rt.call_sync(tool, args)
    [issue] = caught.value.issues
    assert issue.path == ("path",)
    return issue.detail


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("fs.write", {"path": ".git/hooks/post-checkout", "content": "id\n"}),
        ("fs.mkdir", {"path": ".git/hooks"}),
        ("fs.delete", {"path": ".git/HEAD"}),
        ("fs.write", {"path": "A.PTH", "content": "import os\n"}),
        ("fs.write", {"path": "deep/.Bashrc", "content": "id\n"}),
        ("fs.write", {"path": ".envrc", "content": "id\n"}),
        ("fs.write", {"path": "x/pyvenv.cfg", "content": "home = /tmp\n"}),
    ],
)
def test_writes_through_a_protected_name_are_refused_and_change_nothing(
    tmp_path: Path, tool: str, args: dict[str, Any]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert "which is protected: " in refused(runtime(tmp_path), tool, **args)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before


def test_a_virtual_environment_is_found_by_its_pyvenv_cfg_under_any_name_the_root_included(tmp_path: Path) -> None:
    (tmp_path / "tools" / "lib").mkdir(parents=True)
    (tmp_path / "tools" / "pyvenv.cfg").write_text("")
    rt = runtime(tmp_path)
    assert "'tools' is a virtual environment (it holds pyvenv.cfg)" in refused(
        rt, "fs.write", path="tools/lib/x.py", content=""
    )
    assert "'tools' is a virtual environment" in refused(rt, "fs.mkdir", path="tools/lib/new")
    assert rt.call_sync("fs.read", {"path": "tools/pyvenv.cfg"})["content"] == ""  # reading it is harmless
    (tmp_path / "pyvenv.cfg").write_text("")
    assert "'.' is a virtual environment" in refused(rt, "fs.write", path="notes.txt", content="")
    allowed = runtime(tmp_path, unprotect=["pyvenv.cfg"])
    assert allowed.call_sync("fs.write", {"path": "tools/lib/x.py", "content": ""})["created"]


def test_credentials_are_refused_to_every_read_tool_but_their_names_are_listed(tmp_path: Path) -> None:
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text("the key\n")
    (tmp_path / ".env").write_text("TOKEN=1\n")
    rt = runtime(tmp_path)
    for tool, path in [("fs.read", ".ssh/id_ed25519"), ("fs.list", ".ssh"), ("fs.stat", ".SSH/id_ed25519")]:
        detail = refused(rt, tool, path=path)
        assert "holds credentials; hermesos-fs does not read, list or describe anything there" in detail
        assert "adding .ssh to the setting HERMESOS_FS_UNPROTECT" in detail
    assert "'.env' is an environment file" in refused(rt, "fs.read", path=".env")
    names = [entry["name"] for entry in rt.call_sync("fs.list", {"path": "."})["entries"]]
    assert names == [".env", ".ssh"]


def test_make_tools_narrows_and_widens_the_list(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "a.txt").write_text("a\n")
    rt = runtime(tmp_path, protect=["*.key", "deploy/prod.toml"], protect_reads=["SECRETS"], unprotect=[".GIT"])
    assert rt.call_sync("fs.write", {"path": ".git/config", "content": ""})["created"]
    assert "protected by the operator" in refused(rt, "fs.write", path="id.Key", content="")
    assert "protected by the operator" in refused(rt, "fs.write", path="deploy/prod.toml", content="")
    assert rt.call_sync("fs.write", {"path": "prod.toml", "content": ""})["created"]
    assert "protected by the operator" in refused(rt, "fs.read", path="secrets/a.txt")
    assert "protected by the operator" in refused(rt, "fs.write", path="secrets/b.txt", content="")


@pytest.mark.parametrize(
    ("arguments", "field", "says"),
    [
        ({"unprotect": [".gitt"]}, "unprotect", "names '.gitt', which is not a protected name of the defaults"),
        ({"protect": ["../x"]}, "protect", "must hold names or globs such as '*.key'"),
        ({"protect_reads": "secrets"}, "protect_reads", "must be a list of names such as ['*.key'], got a string"),
        ({"max_read_bytes": 10**20}, "max_read_bytes", "at most 1073741824 (1 GiB)"),
    ],
)
def test_make_tools_refuses_malformed_protection_and_limits(
    tmp_path: Path, arguments: dict[str, Any], field: str, says: str
) -> None:
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.make_tools(tmp_path, **arguments)
    assert (caught.value.declaration, caught.value.field) == ("hermes_fs.make_tools()", field)
    assert says in str(caught.value)


def test_the_settings_are_read_by_the_hooks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    monkeypatch.setenv(hermes_fs.PROTECT_ENV, "*.key, notes/private")
    monkeypatch.setenv(hermes_fs.UNPROTECT_ENV, ".env*")
    (tmp_path / ".env").write_text("X=1\n")
    rt = Runtime(hermes_fs.hermes_tools(), grants=["fs:*"], schemas=hermes_fs.hermes_schemas())
    assert rt.call_sync("fs.read", {"path": ".env"})["content"] == "X=1\n"
    assert "protected by the operator" in refused(rt, "fs.write", path="notes/private/x.txt", content="")
    monkeypatch.setenv(hermes_fs.UNPROTECT_ENV, "nope")
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.hermes_tools()
    assert (caught.value.declaration, caught.value.field) == ("setting HERMESOS_FS_UNPROTECT", None)


# -- the root itself --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("root", "protected", "allow"),
    [
        ("repo/.git/hooks", "repo/.git", [".git"]),
        ("home/.SSH", "home/.SSH", [".ssh"]),
        ("home/.config/fish/conf.d", "home/.config/fish", [".config/fish", "fish/conf.d"]),
        ("env/lib/python3.12/site-packages", "env/lib/python3.12", ["lib/python[0-9]*", "site-packages"]),
        ("sitecustomize", "sitecustomize", ["sitecustomize*"]),
    ],
)
def test_make_tools_refuses_a_root_that_is_or_lies_inside_a_protected_name(
    tmp_path: Path, root: str, protected: str, allow: list[str]
) -> None:
    """The outermost protected name is named; allowed, the next one is, until none is left."""
    (tmp_path / root).mkdir(parents=True)
    beside = tmp_path / "beside"
    beside.mkdir()
    assert runtime(beside).call_sync("fs.write", {"path": "x.txt", "content": ""})["created"]  # the control
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.make_tools(tmp_path / root)
    assert (caught.value.declaration, caught.value.field) == ("hermes_fs.make_tools()", "root")
    assert f"is '{tmp_path / root}', which is protected: '{tmp_path / protected}' " in str(caught.value)
    assert f"or pass {allow[0]!r} in unprotect to allow the name" in str(caught.value)
    if len(allow) > 1:
        with pytest.raises(InvalidDefinitionError, match=f"or pass {re.escape(repr(allow[1]))} in unprotect"):
            hermes_fs.make_tools(tmp_path / root, unprotect=allow[:1])
    assert runtime(tmp_path / root, unprotect=allow).call_sync("fs.write", {"path": "x.txt", "content": ""})


@pytest.mark.parametrize(
    ("marker", "protected", "says"),
    [
        (["pyvenv.cfg"], "pyvenv.cfg", "is a virtual environment (it holds pyvenv.cfg)"),
        (["conda-meta/"], "conda-meta", "is a conda environment (it holds conda-meta)"),
        (["HEAD", "objects/", "refs/"], ".git", "is a git directory (it holds HEAD, objects and refs)"),
    ],
)
def test_a_root_inside_a_folder_protected_by_what_it_holds_is_refused(
    tmp_path: Path, marker: list[str], protected: str, says: str
) -> None:
    folder = tmp_path / "anything"
    (folder / "inner").mkdir(parents=True)
    for name in marker:
        if name.endswith("/"):
            (folder / name).mkdir()
        else:
            (folder / name).write_text("")
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.make_tools(folder / "inner")
    assert f"which is protected: '{folder}' {says}" in str(caught.value)
    assert f"or pass {protected!r} in unprotect" in str(caught.value)
    # The control: a folder holding only part of it is an ordinary folder.
    (folder / marker[0].rstrip("/")).rename(tmp_path / "moved")
    assert runtime(folder / "inner").call_sync("fs.write", {"path": "x.txt", "content": ""})["created"]


def test_a_protected_name_may_begin_in_the_root_s_path(tmp_path: Path) -> None:
    """Consecutive names are matched across the root's end: a root of .config refuses 'fish' and reads of 'gh'."""
    (tmp_path / ".config" / "gh").mkdir(parents=True)
    (tmp_path / ".config" / "gh" / "hosts.yml").write_text("token\n")
    rt = runtime(tmp_path / ".config")
    assert "'.config/fish' (the root ends in '.config') is a shell start-up file" in refused(
        rt, "fs.write", path="fish/conf.d/x.fish", content=""
    )
    assert "'.config/gh' (the root ends in '.config') holds credentials" in refused(rt, "fs.read", path="gh/hosts.yml")
    assert rt.call_sync("fs.write", {"path": "other/fish/x.txt", "content": ""})["created"]  # 'other/fish' is no run
    linked = tmp_path / "link"
    linked.symlink_to(tmp_path / "usr" / "lib", target_is_directory=True)
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    # The root's real path ends in 'lib' too, though the name given does not.
    assert "'lib/python3.12' (the root ends in 'lib')" in refused(
        runtime(linked), "fs.write", path="python3.12/os.py", content=""
    )


@pytest.mark.parametrize(
    "name",
    [".GIT", ".git.", ".git ", ".g\u200dit", "\uff0egit", ".gi\ufefft"],
)
def test_a_name_is_folded_as_a_file_system_may_fold_it(tmp_path: Path, name: str) -> None:
    detail = refused(runtime(tmp_path), "fs.write", path=f"{name}/hooks/pre-commit", content="")
    assert "is version-control internals" in detail
    assert runtime(tmp_path).call_sync("fs.write", {"path": "git/x", "content": ""})["created"]


def test_an_operator_s_name_is_folded_too(tmp_path: Path) -> None:
    rt = runtime(tmp_path, protect=["Caf\u00e9"])  # é written as one code point
    assert "protected by the operator" in refused(rt, "fs.write", path="cafe\u0301/x", content="")  # e and a mark
    assert rt.call_sync("fs.write", {"path": "cafe/x", "content": ""})["created"]
