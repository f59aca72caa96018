"""Tests of hermesos-fs, on real files: every tool through a real Runtime, confinement, races and atomicity.

The layout every test starts from (``tmp_path`` is *base*)::

    base/root/            the workspace root
        notes.txt         "inside"
        sub/inner.txt     "inner"
        link_dir  -> base/outside        (absolute link to a directory outside)
        link_rel  -> ../outside          (relative link to the same)
        link_file -> base/outside/canary.txt
        dangling  -> base/outside/new.txt (does not exist)
        link_sibling -> ../root2
        link_inside  -> sub               (a link that stays inside: refused too)
        sub/up -> ..                      (a link up to the root itself)
        link_loop -> link_loop
    base/outside/canary.txt, base/outside/d/deep.txt, base/outside/only_outside.txt
    base/root2/canary.txt                 (the root's sibling: same prefix)
    base/home/canary.txt                  (HOME points here, so a '~' that were expanded lands on a canary)

Everything outside ``base/root`` is a canary: after every attack its content,
modification times and the set of names in it must be unchanged.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import socket
import stat
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import hermes_fs
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import (
    ErrorCode,
    InputInvalidError,
    InputRejected,
    InvalidDefinitionError,
    PermissionDeniedError,
    Runtime,
    ToolError,
    ToolFailedError,
    discover_plugins,
)
from hermes_core.testing import check_plugin

CANARY = "CANARY: this text lives outside the workspace root"
TOOLS = ("fs.read", "fs.write", "fs.list", "fs.stat", "fs.mkdir", "fs.delete")
Snapshot = dict[str, tuple[str, bytes | str | None, int]]


# -- the sandbox ----------------------------------------------------------------------------------


def populate(base: Path) -> None:
    """(Re)create the workspace's contents (not the root directory itself, whose descriptor is held open)."""
    root = base / "root"
    for child in root.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    (root / "notes.txt").write_text("inside", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "inner.txt").write_text("inner", encoding="utf-8")
    (root / "link_dir").symlink_to(base / "outside")
    (root / "link_rel").symlink_to(Path("..") / "outside")
    (root / "link_file").symlink_to(base / "outside" / "canary.txt")
    (root / "dangling").symlink_to(base / "outside" / "new.txt")
    (root / "link_sibling").symlink_to(Path("..") / "root2")
    (root / "link_inside").symlink_to("sub")
    (root / "sub" / "up").symlink_to("..")
    (root / "link_loop").symlink_to("link_loop")


def make_base(base: Path) -> None:
    """Create the canaries outside the root, and the root with its contents."""
    for where in ("outside", "outside/d", "root2", "home", "root"):
        (base / where).mkdir(parents=True)
    for where in ("outside/canary.txt", "outside/d/deep.txt", "outside/only_outside.txt", "root2/canary.txt"):
        (base / where).write_text(CANARY, encoding="utf-8")
    (base / "home" / "canary.txt").write_text(CANARY, encoding="utf-8")
    populate(base)


def snapshot(base: Path) -> Snapshot:
    """Everything under *base* except the root's contents: kind, content (or link target) and mtime, by path."""
    root = base / "root"
    found: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        dirnames[:] = [name for name in dirnames if here / name != root]
        for name in [*dirnames, *filenames]:
            path = here / name
            info = path.lstat()
            key = str(path.relative_to(base))
            if stat.S_ISLNK(info.st_mode):
                found[key] = ("link", os.readlink(path), info.st_mtime_ns)
            elif stat.S_ISREG(info.st_mode):
                found[key] = ("file", path.read_bytes(), info.st_mtime_ns)
            else:
                found[key] = ("dir", None, info.st_mtime_ns)
    return found


def build_runtime(monkeypatch: pytest.MonkeyPatch, root: Path, grants: tuple[str, ...] = ("fs:*",)) -> Runtime:
    """A runtime built from the plugin's own hooks, as the plugin loader would, with *root* as HERMESOS_FS_ROOT."""
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(root))
    return Runtime(hermes_fs.hermes_tools(), grants=list(grants), schemas=hermes_fs.hermes_schemas())


@dataclass
class Box:
    """A sandbox: the base directory, its root, and a runtime confined to the root."""

    base: Path
    root: Path
    outside: Path
    runtime: Runtime

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        """Call *tool* and return its output."""
        result: dict[str, Any] = self.runtime.call_sync(tool, args)
        return result

    def refused(self, tool: str, **args: Any) -> InputInvalidError:
        """Call *tool*, expecting an InputInvalidError, and return it."""
        with pytest.raises(InputInvalidError) as caught:
            self.runtime.call_sync(tool, args)
        error = caught.value
        assert error.code == ErrorCode.INPUT_INVALID
        assert error.tool == tool
        assert len(error.issues) == 1
        assert str(self.base) not in error.message, "a message must not show the machine's paths"
        return error


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Box:
    """A fresh sandbox, with HOME pointing at a canary directory."""
    make_base(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "root"
    return Box(tmp_path, root, tmp_path / "outside", build_runtime(monkeypatch, root))


def detail(error: InputInvalidError) -> str:
    """The detail of the error's only issue."""
    return error.issues[0].detail


# -- fs.read --------------------------------------------------------------------------------------


def test_read_returns_a_whole_small_file(box: Box) -> None:
    """A small file comes back whole, with its size and eof."""
    (box.root / "sub" / "poem.txt").write_text("dès l'aube ☀\n", encoding="utf-8")
    assert box.call("fs.read", path="sub/poem.txt") == {
        "path": "sub/poem.txt",
        "content": "dès l'aube ☀\n",
        "size": 16,
        "offset": 0,
        "next_offset": 16,
        "eof": True,
    }


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 7])
def test_read_in_parts_reassembles_the_file_without_splitting_characters(box: Box, limit: int) -> None:
    """Reading with a small limit and following next_offset gives back exactly the file, part by part."""
    text = "a é 中 😀 z\n" * 3
    (box.root / "mixed.txt").write_text(text, encoding="utf-8")
    parts: list[str] = []
    offset = 0
    for _ in range(200):
        out = box.call("fs.read", path="mixed.txt", offset=offset, limit=limit)
        assert out["offset"] == offset
        assert out["content"] or out["eof"], "a part not at the end holds at least one character"
        parts.append(out["content"])
        offset = out["next_offset"]
        if out["eof"]:
            break
    assert "".join(parts) == text
    assert offset == len(text.encode("utf-8"))


def test_read_at_an_offset_inside_a_character_starts_at_the_next_one(box: Box) -> None:
    """An offset that falls inside a multi-byte character moves forward to the next character."""
    (box.root / "e.txt").write_text("héllo", encoding="utf-8")
    out = box.call("fs.read", path="e.txt", offset=2, limit=2)
    assert (out["content"], out["offset"], out["next_offset"], out["eof"]) == ("ll", 3, 5, False)


def test_read_of_a_file_over_the_limit_asks_for_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file larger than the read limit is refused without limit, with the way to read it in parts."""
    monkeypatch.setenv(hermes_fs.MAX_READ_ENV, "16")
    (tmp_path / "big.txt").write_text("x" * 40, encoding="utf-8")
    runtime = build_runtime(monkeypatch, tmp_path)
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.read", {"path": "big.txt"})
    assert caught.value.issues[0].path == ("path",)
    assert caught.value.issues[0].kind == "too_big"
    assert str(caught.value) == (
        "fs.read was called with invalid input: \"path\" names 'big.txt', which is 40 bytes; more than the "
        "16 bytes fs.read returns at once. Read it in parts: pass limit (at most 16), then call again with "
        "offset set to the next_offset returned, until eof is true.\n"
        "Fix the arguments and call fs.read again."
    )
    assert runtime.call_sync("fs.read", {"path": "big.txt", "limit": 16})["content"] == "x" * 16
    assert runtime.call_sync("fs.read", {"path": "big.txt", "offset": 30})["content"] == "x" * 10
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.read", {"path": "big.txt", "limit": 17})
    assert caught.value.issues[0].path == ("limit",)
    assert caught.value.issues[0].kind == "too_big"


def test_read_past_the_end_is_refused_on_offset(box: Box) -> None:
    """An offset past the end names the field and the file's size; the end itself is an empty last part."""
    error = box.refused("fs.read", path="notes.txt", offset=7)
    assert error.issues[0][:2] == (("offset",), "too_big")
    assert detail(error) == "is 7, past the end of 'notes.txt', which is 6 bytes; use an offset from 0 to 6"
    assert box.call("fs.read", path="notes.txt", offset=6)["content"] == ""


def test_read_of_a_binary_file_is_refused_with_where_the_text_stops(box: Box) -> None:
    """Bytes that are not UTF-8 are refused (never replaced), naming the first bad offset."""
    (box.root / "blob.bin").write_bytes(b"text\xff\xfe")
    error = box.refused("fs.read", path="blob.bin")
    assert detail(error) == (
        "names 'blob.bin', which is not UTF-8 text: the byte at offset 4 does not decode; hermesos-fs reads "
        "text files only (the text before it can be read with offset 0, limit 4)"
    )
    assert box.call("fs.read", path="blob.bin", limit=4)["content"] == "text"


def test_read_of_a_missing_file_says_so_and_what_to_do(box: Box) -> None:
    """A missing file, and a missing directory on the way, are named with the way forward."""
    error = box.refused("fs.read", path="sub/nope.txt")
    assert error.issues[0][:2] == (("path",), "invalid")
    assert str(error) == (
        "fs.read was called with invalid input: \"path\" names 'sub/nope.txt', which does not exist under the "
        "workspace root; list its directory with fs.list to see what exists.\n"
        "Fix the arguments and call fs.read again."
    )
    error = box.refused("fs.read", path="nope/inner.txt")
    assert detail(error).startswith("goes through 'nope', which does not exist under the workspace root")


def test_read_of_a_directory_or_through_a_file_is_refused(box: Box) -> None:
    """A directory is not a file, and a file is not a directory."""
    assert "is a directory, not a file; list it with fs.list" in detail(box.refused("fs.read", path="sub"))
    assert "is the workspace root '.', a directory" in detail(box.refused("fs.read", path="."))
    error = box.refused("fs.read", path="notes.txt/more")
    assert detail(error) == "goes through 'notes.txt', which is a file, not a directory"


# -- fs.write -------------------------------------------------------------------------------------


def test_write_creates_then_overwrites(box: Box) -> None:
    """A new file is created (with its parents); writing again replaces it."""
    assert box.call("fs.write", path="new/deep/a.txt", content="héllo") == {
        "path": "new/deep/a.txt",
        "size": 6,
        "created": True,
    }
    assert (box.root / "new" / "deep" / "a.txt").read_text(encoding="utf-8") == "héllo"
    assert box.call("fs.write", path="new/deep/a.txt", content="") == {
        "path": "new/deep/a.txt",
        "size": 0,
        "created": False,
    }
    assert (box.root / "new" / "deep" / "a.txt").read_bytes() == b""


def test_write_in_create_mode_refuses_an_existing_file(box: Box) -> None:
    """Mode 'create' never replaces, and leaves no temporary file behind."""
    assert box.call("fs.write", path="fresh.txt", content="1", mode="create")["created"] is True
    error = box.refused("fs.write", path="fresh.txt", content="2", mode="create")
    assert detail(error) == (
        "names 'fresh.txt', which already exists, and mode is 'create'; choose another name, "
        "or pass mode 'overwrite' to replace it"
    )
    assert (box.root / "fresh.txt").read_text(encoding="utf-8") == "1"
    assert not [p for p in box.root.iterdir() if p.name.startswith(".hermesos-fs-")]


def test_write_without_create_parents_needs_the_directory(box: Box) -> None:
    """With create_parents false, a missing directory is an error and nothing is created."""
    error = box.refused("fs.write", path="absent/a.txt", content="x", create_parents=False)
    assert detail(error).startswith("goes through 'absent', which does not exist")
    assert not (box.root / "absent").exists()


def test_write_keeps_the_permissions_of_the_file_it_replaces(box: Box) -> None:
    """Overwriting keeps the file's mode (an executable script stays executable)."""
    script = box.root / "run.sh"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o750)
    box.call("fs.write", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


def test_write_refuses_a_directory_the_root_and_too_much_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory, the root and content over the limit (counted in UTF-8 bytes) are refused."""
    monkeypatch.setenv(hermes_fs.MAX_WRITE_ENV, "4")
    (tmp_path / "dir").mkdir()
    runtime = build_runtime(monkeypatch, tmp_path)
    for path, expected in [("dir", "which is a directory"), (".", "is the workspace root '.'")]:
        with pytest.raises(InputInvalidError) as caught:
            runtime.call_sync("fs.write", {"path": path, "content": "x"})
        assert expected in caught.value.issues[0].detail
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.write", {"path": "a.txt", "content": "ééé"})
    assert caught.value.issues[0][:2] == (("content",), "too_big")
    assert caught.value.issues[0].detail == (
        "is 6 bytes in UTF-8, more than the 4 bytes fs.write accepts; write less text"
    )
    with pytest.raises(InputInvalidError) as caught:
        runtime.call_sync("fs.write", {"path": "a.txt", "content": "xxxxx"})
    assert caught.value.issues[0][:2] == (("content",), "too_big")  # the schema's own bound, in characters
    assert not (tmp_path / "a.txt").exists()


# -- fs.list, fs.stat, fs.mkdir, fs.delete --------------------------------------------------------


def test_list_shows_entries_sorted_with_types_and_sizes(box: Box) -> None:
    """The root's entries, sorted, links shown as links (not followed)."""
    out = box.call("fs.list")
    assert out["path"] == "."
    assert out["total"] == len(out["entries"]) == 9
    assert out["next_offset"] is None
    by_name = {entry["name"]: entry for entry in out["entries"]}
    assert [entry["name"] for entry in out["entries"]] == sorted(by_name)
    assert by_name["notes.txt"] == {"name": "notes.txt", "type": "file", "size": 6}
    assert by_name["sub"] == {"name": "sub", "type": "directory", "size": None}
    assert by_name["link_dir"] == {"name": "link_dir", "type": "symlink", "size": None}
    assert box.call("fs.list", path="sub")["entries"] == [
        {"name": "inner.txt", "type": "file", "size": 5},
        {"name": "up", "type": "symlink", "size": None},
    ]


def test_list_pages_through_a_large_directory(box: Box) -> None:
    """Limit and offset page through the entries; next_offset is null on the last page."""
    (box.root / "many").mkdir()
    for index in range(7):
        (box.root / "many" / f"f{index}").touch()
    first = box.call("fs.list", path="many", limit=3)
    assert [e["name"] for e in first["entries"]] == ["f0", "f1", "f2"]
    assert (first["total"], first["next_offset"]) == (7, 3)
    last = box.call("fs.list", path="many", offset=6, limit=3)
    assert ([e["name"] for e in last["entries"]], last["next_offset"]) == (["f6"], None)


def test_list_leaves_out_names_that_are_not_utf8(box: Box) -> None:
    """A name that is not UTF-8 cannot be written in JSON or named back, so it is not listed."""
    fd = os.open(os.fsencode(box.root / "sub") + b"/bad-\xff.txt", os.O_CREAT | os.O_WRONLY, 0o644)
    os.close(fd)
    assert [e["name"] for e in box.call("fs.list", path="sub")["entries"]] == ["inner.txt", "up"]


def test_list_of_a_file_is_refused(box: Box) -> None:
    """Listing a file says to read it."""
    error = box.refused("fs.list", path="notes.txt")
    assert detail(error) == "names 'notes.txt', which is a file, not a directory; read it with fs.read"


def test_stat_describes_files_directories_links_and_absence(box: Box) -> None:
    """Stat describes without following links, and a missing path is exists false, not an error."""
    out = box.call("fs.stat", path="notes.txt")
    assert (out["exists"], out["type"], out["size"]) == (True, "file", 6)
    assert out["modified"].endswith("Z")
    assert box.call("fs.stat", path="sub")["type"] == "directory"
    assert box.call("fs.stat", path=".")["type"] == "directory"
    assert box.call("fs.stat", path="link_file")["type"] == "symlink"
    assert box.call("fs.stat", path="dangling")["type"] == "symlink"
    assert box.call("fs.stat", path="nope/deeper") == {
        "path": "nope/deeper",
        "exists": False,
        "type": None,
        "size": None,
        "modified": None,
    }


def test_mkdir_creates_parents_and_accepts_an_existing_directory(box: Box) -> None:
    """Mkdir makes parents by default and is idempotent; an existing file is refused."""
    assert box.call("fs.mkdir", path="a/b/c") == {"path": "a/b/c", "created": True}
    assert (box.root / "a" / "b" / "c").is_dir()
    assert box.call("fs.mkdir", path="a/b/c") == {"path": "a/b/c", "created": False}
    assert box.call("fs.mkdir", path=".") == {"path": ".", "created": False}
    assert "already exists and is not a directory" in detail(box.refused("fs.mkdir", path="notes.txt"))
    assert "does not exist" in detail(box.refused("fs.mkdir", path="x/y", parents=False))
    assert not (box.root / "x").exists()


def test_delete_removes_files_links_and_empty_directories_only(box: Box) -> None:
    """Delete removes a file, a link (never its target), an empty directory; refuses the rest."""
    assert box.call("fs.delete", path="sub/inner.txt") == {"path": "sub/inner.txt", "type": "file"}
    assert box.call("fs.delete", path="link_file") == {"path": "link_file", "type": "symlink"}
    assert (box.outside / "canary.txt").read_text(encoding="utf-8") == CANARY
    (box.root / "empty").mkdir()
    assert box.call("fs.delete", path="empty") == {"path": "empty", "type": "directory"}
    assert "not empty" in detail(box.refused("fs.delete", path="sub"))
    assert "cannot be deleted" in detail(box.refused("fs.delete", path="."))
    assert "does not exist" in detail(box.refused("fs.delete", path="sub/inner.txt"))
    assert (box.root / "sub").is_dir()


def test_os_refusals_become_clear_input_errors(box: Box) -> None:
    """An error from the operating system is an InputInvalidError saying what happened, never an OSError."""
    long_name = "n" * 300
    for tool, args in [("fs.read", {"path": long_name}), ("fs.write", {"path": long_name, "content": "x"})]:
        error = box.refused(tool, **args)
        assert detail(error) == "is longer than the file system allows (usually 255 bytes per name); use shorter names"


@pytest.mark.skipif(os.geteuid() == 0, reason="root is not refused by file permissions")
def test_permission_denied_by_the_os_is_reported(box: Box) -> None:
    """A file the OS will not let us read is named, with the reason."""
    secret = box.root / "secret.txt"
    secret.write_text("x", encoding="utf-8")
    secret.chmod(0)
    error = box.refused("fs.read", path="secret.txt")
    assert (
        detail(error) == "names 'secret.txt', which the operating system does not allow to be read (permission denied)"
    )


# -- failures of the system: not the caller's fault -----------------------------------------------

LATER = "This is a fault in the tool, not in how it was called. The same call may work if it is made again later."
FINAL = (
    "This is a fault in the tool, not in how it was called. Calling it again will not help: "
    "use another tool, or tell the user."
)


def patch_os(monkeypatch: pytest.MonkeyPatch, function: str, replacement: Callable[..., Any]) -> None:
    """Make the plugin call *replacement* for its *function* of ``os``; everything else keeps the real one."""
    # A namespace standing in for the os module, for hermes_fs only: pytest and the runtime keep the real one.
    fake = types.SimpleNamespace(**{name: getattr(os, name) for name in dir(os) if not name.startswith("__")})
    setattr(fake, function, replacement)
    monkeypatch.setattr(hermes_fs, "os", fake)


def fail_os(monkeypatch: pytest.MonkeyPatch, function: str, code: int, when: Callable[..., bool] | None = None) -> None:
    """Make the plugin's *function* of ``os`` raise ``OSError(code)`` (when *when* says so), as the kernel would."""
    real = getattr(os, function)

    def failing(*args: Any, **kwargs: Any) -> Any:
        if when is None or when(*args, **kwargs):
            raise OSError(code, os.strerror(code))
        return real(*args, **kwargs)

    patch_os(monkeypatch, function, failing)


def creating(path: Any, flags: int, *args: Any, **kwargs: Any) -> bool:
    return bool(flags & os.O_CREAT)


def walking(path: Any, flags: int, *args: Any, **kwargs: Any) -> bool:
    return bool(flags & os.O_DIRECTORY) and path == "sub"


def reading(path: Any, flags: int, *args: Any, **kwargs: Any) -> bool:
    return not flags & (os.O_DIRECTORY | os.O_CREAT)


class Failure(NamedTuple):
    """A call, the os function that fails under it and how, and what the model is told."""

    tool: str
    args: dict[str, Any]
    function: str
    code: int
    when: Callable[..., bool] | None
    retryable: bool
    detail: str

    @property
    def id(self) -> str:
        return f"{self.tool}-{self.function}-{errno.errorcode[self.code]}-{self.args['path']}"


SYSTEM_FAILURES = [
    Failure(
        "fs.write",
        {"path": "notes.txt", "content": "x"},
        "write",
        errno.ENOSPC,
        None,
        True,
        "no space is left on the device, so 'notes.txt' could not be written",
    ),
    Failure(
        "fs.write",
        {"path": "notes.txt", "content": "x"},
        "write",
        errno.EDQUOT,
        None,
        True,
        "the disk quota is used up, so 'notes.txt' could not be written",
    ),
    Failure(
        "fs.write",
        {"path": "new.txt", "content": "x"},
        "open",
        errno.EROFS,
        creating,
        False,
        "the file system is read-only, so 'new.txt' could not be written",
    ),
    Failure(
        "fs.write",
        {"path": "notes.txt", "content": "x"},
        "fsync",
        errno.EIO,
        None,
        False,
        "the storage device reported an input/output error, so 'notes.txt' could not be written",
    ),
    Failure(
        "fs.write",
        {"path": "notes.txt", "content": "x"},
        "write",
        errno.EFBIG,
        None,
        False,
        "the operating system reported EFBIG (File too large), so 'notes.txt' could not be written",
    ),
    Failure(
        "fs.read",
        {"path": "notes.txt"},
        "open",
        errno.EMFILE,
        reading,
        True,
        "this process has too many files open, so 'notes.txt' could not be read",
    ),
    Failure(
        "fs.read",
        {"path": "notes.txt"},
        "open",
        errno.ENFILE,
        reading,
        True,
        "the system has too many files open, so 'notes.txt' could not be read",
    ),
    Failure(
        "fs.read",
        {"path": "sub/inner.txt"},
        "open",
        errno.EMFILE,
        walking,
        True,
        "this process has too many files open, so 'sub' could not be opened",
    ),
    Failure(
        "fs.read",
        {"path": "notes.txt"},
        "pread",
        errno.EIO,
        None,
        False,
        "the storage device reported an input/output error, so 'notes.txt' could not be read",
    ),
    Failure(
        "fs.read",
        {"path": "notes.txt"},
        "pread",
        errno.EAGAIN,
        None,
        True,
        "the file system is temporarily unavailable, so 'notes.txt' could not be read",
    ),
    Failure(
        "fs.list",
        {"path": "sub"},
        "scandir",
        errno.ENOMEM,
        None,
        True,
        "the system is out of memory, so 'sub' could not be listed",
    ),
    Failure(
        "fs.stat",
        {"path": "notes.txt"},
        "stat",
        errno.EIO,
        None,
        False,
        "the storage device reported an input/output error, so 'notes.txt' could not be examined",
    ),
    Failure(
        "fs.mkdir",
        {"path": "made"},
        "mkdir",
        errno.ENOSPC,
        None,
        True,
        "no space is left on the device, so 'made' could not be created",
    ),
    Failure(
        "fs.delete",
        {"path": "notes.txt"},
        "unlink",
        errno.EBUSY,
        None,
        True,
        "the file or directory is in use by the system or another program, so 'notes.txt' could not be deleted",
    ),
    Failure(
        "fs.delete",
        {"path": "notes.txt"},
        "unlink",
        errno.EROFS,
        None,
        False,
        "the file system is read-only, so 'notes.txt' could not be deleted",
    ),
]


@pytest.mark.parametrize("case", SYSTEM_FAILURES, ids=lambda case: case.id)
def test_a_failure_of_the_system_is_a_tool_failure_not_a_refusal(
    box: Box, monkeypatch: pytest.MonkeyPatch, case: Failure
) -> None:
    """A full disk, a read-only file system, an I/O error...: TOOL_FAILED, retryable where it may pass."""
    tool, args, function, code, when, retryable, expected = case
    before = snapshot(box.base)
    fail_os(monkeypatch, function, code, when)
    with pytest.raises(ToolFailedError) as caught:
        box.runtime.call_sync(tool, args)
    error = caught.value
    assert (error.code, error.tool, error.reason, error.retryable) == (
        ErrorCode.TOOL_FAILED,
        tool,
        "reported",
        retryable,
    )
    assert error.detail == expected
    assert error.message == f"{tool} failed: {expected}.\n{LATER if retryable else FINAL}"
    assert str(box.base) not in error.message, "a message must not show the machine's paths"
    data = error.to_dict()
    assert (data["code"], data["retryable"], data["detail"]) == ("TOOL_FAILED", retryable, expected)
    assert isinstance(data["call_id"], str)
    # The OSError is kept for the operator, under the handler's own error.
    reported = error.__cause__
    assert isinstance(reported, ToolFailedError)
    assert isinstance(reported.__cause__, OSError)
    assert reported.__cause__.errno == code
    # Nothing outside changed, and a failed write leaves no temporary file behind.
    assert snapshot(box.base) == before
    assert not [p for p in box.root.iterdir() if p.name.startswith(".hermesos-fs-")]


def test_a_failure_of_the_system_is_observed_as_tool_failed(box: Box, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a model receives: TOOL_FAILED, retryable, and no advice to rewrite the arguments."""
    fail_os(monkeypatch, "write", errno.ENOSPC)
    observation = box.runtime.observe_sync("fs.write", {"path": "notes.txt", "content": "changed"})
    assert observation["ok"] is False
    error = observation["error"]
    assert (error["code"], error["retryable"], error["tool"]) == ("TOOL_FAILED", True, "fs.write")
    assert error["message"] == (
        "fs.write failed: no space is left on the device, so 'notes.txt' could not be written.\n" + LATER
    )
    assert "Fix the arguments" not in error["message"]
    assert (box.root / "notes.txt").read_text(encoding="utf-8") == "inside"


def refusal(tool: str, args: dict[str, Any], function: str, code: int, expected: str) -> Failure:
    """A case of an OS error the caller can fix: INPUT_INVALID, whose retryable is the class's (True)."""
    return Failure(tool, args, function, code, None, True, expected)


@pytest.mark.parametrize(
    "case",
    [
        refusal(
            "fs.mkdir",
            {"path": "made"},
            "mkdir",
            errno.EACCES,
            "names 'made', which the operating system does not allow to be created (permission denied)",
        ),
        refusal(
            "fs.delete",
            {"path": "notes.txt"},
            "unlink",
            errno.EPERM,
            "names 'notes.txt', which the operating system does not allow to be deleted (permission denied)",
        ),
        refusal(
            "fs.delete",
            {"path": "notes.txt"},
            "unlink",
            errno.ENOENT,
            "names 'notes.txt', which does not exist under the workspace root; "
            "list its directory with fs.list to see what exists",
        ),
        refusal(
            "fs.write",
            {"path": "notes.txt", "content": "x"},
            "replace",
            errno.EISDIR,
            "names 'notes.txt', which is a directory, not a file",
        ),
        refusal(
            "fs.write",
            {"path": "notes.txt", "content": "x"},
            "replace",
            errno.ENAMETOOLONG,
            "is longer than the file system allows (usually 255 bytes per name); use shorter names",
        ),
        refusal(
            "fs.write",
            {"path": "notes.txt", "content": "x"},
            "replace",
            errno.EILSEQ,
            "names 'notes.txt', which the file system cannot store as a name; use another name",
        ),
    ],
    ids=lambda case: case.id,
)
def test_an_os_error_the_caller_can_fix_stays_a_refusal_of_the_path(
    box: Box, monkeypatch: pytest.MonkeyPatch, case: Failure
) -> None:
    """Permission denied, a name that vanished or is of the wrong kind: INPUT_INVALID on "path", retryable."""
    tool, args, function, code, _, _, expected = case
    fail_os(monkeypatch, function, code)
    error = box.refused(tool, **args)
    assert error.retryable is True
    assert error.issues[0][:2] == (("path",), "invalid")
    assert detail(error) == expected
    assert isinstance(error.__cause__, InputRejected)


# -- what the tools refuse even inside the root ---------------------------------------------------


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """Run *call* in a thread and return its result (or raise its error); fail if it has not returned in time.

    A call that hangs (opening a FIFO, say) then fails its test after *seconds* instead of hanging the suite:
    a time no busy machine needs for a call that does not hang (a minute), as it costs nothing when it returns.
    """
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as error:  # raised again in the calling thread
            outcome.append((False, error))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call had not returned after {seconds} seconds"
    returned, value = outcome[0]
    if not returned:
        raise value
    return value


@pytest.mark.parametrize(
    ("before", "after"), [(0o6755, 0o755), (0o4750, 0o750), (0o2775, 0o775), (0o1644, 0o644)], ids=oct
)
def test_write_drops_the_setuid_setgid_and_sticky_bits_of_the_file_it_replaces(
    box: Box, before: int, after: int
) -> None:
    """A rewrite is a write: like the kernel, it clears setuid and setgid (and the sticky bit, idle on a file).

    The kernel's own clearing on write() does not save a copy of the old mode:
    it spares a writer that may keep the bits (root), and an empty text makes
    no write() at all, so both are tried.
    """
    target = box.root / "tool"
    for content in ("#!/bin/sh\nid\n", ""):
        target.write_text("#!/bin/sh\necho old\n", encoding="utf-8")
        if os.geteuid() == 0:
            # The attack at its worst: root rewrites another user's setuid program, and the new file is root's.
            os.chown(target, 65534, 65534)
        target.chmod(before)  # after the chown, which clears the bits itself
        assert stat.S_IMODE(target.stat().st_mode) == before
        assert box.call("fs.write", path="tool", content=content)["created"] is False
        info = target.stat()
        assert stat.S_IMODE(info.st_mode) == after, (content, oct(info.st_mode))
        assert info.st_uid == os.geteuid()
        assert target.read_text(encoding="utf-8") == content


READ_ONLY = (
    "names 'locked.txt', which is read-only for this tool: the operating system would not let this process "
    "open it for writing, and no change to the arguments makes it writable; write the text to another path "
    "instead, or ask the user to make the file writable"
)


def access_of(uid: int) -> Callable[..., bool]:
    """``os.access`` as the kernel answers it for a process of *uid* that is not root (groups left out)."""

    def access(
        path: str, mode: int, *, dir_fd: int | None = None, effective_ids: bool = False, follow_symlinks: bool = True
    ) -> bool:
        info = os.stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        granted = (info.st_mode >> (6 if info.st_uid == uid else 0)) & 0o7  # the owner's rwx, else the others'
        return mode & granted == mode  # R_OK, W_OK and X_OK are 4, 2 and 1, as r, w and x are

    return access


@pytest.mark.parametrize(
    ("mode", "owner", "refused"),
    [
        (0o444, "this process", True),
        (0o644, "another user", True),
        (0o644, "this process", False),
        (0o646, "another user", False),
    ],
    ids=lambda value: oct(value) if isinstance(value, int) and not isinstance(value, bool) else None,
)
def test_write_refuses_a_file_this_process_could_not_open_for_writing(
    box: Box, monkeypatch: pytest.MonkeyPatch, mode: int, owner: str, refused: bool
) -> None:
    """A read-only file, or another user's that others may not write, is not replaced, though the rename could.

    Root may write any file, so the kernel's answer for a process that is not
    root stands in for ``os.access`` here; the test below asks the real kernel
    when it is not run as root.
    """
    target = box.root / "locked.txt"
    target.write_text("keep", encoding="utf-8")
    target.chmod(mode)
    patch_os(monkeypatch, "access", access_of(os.geteuid() + (owner != "this process")))
    if refused:
        error = box.refused("fs.write", path="locked.txt", content="changed")
        assert (error.issues[0][:2], error.retryable) == ((("path",), "invalid"), True)
        assert detail(error) == READ_ONLY
        assert target.read_text(encoding="utf-8") == "keep"
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert box.call("fs.write", path="unlocked.txt", content="changed")["created"] is True
    else:
        assert box.call("fs.write", path="locked.txt", content="changed")["created"] is False
        assert target.read_text(encoding="utf-8") == "changed"
    assert not [p for p in box.root.iterdir() if p.name.startswith(".hermesos-fs-")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_write_refuses_a_read_only_file(box: Box) -> None:
    """A file of mode 0444 in a writable directory is not replaced (the rename alone would replace it)."""
    target = box.root / "locked.txt"
    target.write_text("keep", encoding="utf-8")
    target.chmod(0o444)
    assert detail(box.refused("fs.write", path="locked.txt", content="changed")) == READ_ONLY
    assert target.read_text(encoding="utf-8") == "keep"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert not [p for p in box.root.iterdir() if p.name.startswith(".hermesos-fs-")]


def special_refusal(what: str) -> str:
    """What the refusal of a named pipe, socket or device called 'special' says."""
    return (
        f"names 'special', which is {what}, not a regular file; hermesos-fs reads and writes only regular files "
        "and never opens anything else (that could block, or act on a device or on another program)"
    )


def test_read_of_a_fifo_is_refused_before_it_is_opened(box: Box) -> None:
    """A FIFO is refused by its type: the call returns at once, and a writer waiting on the FIFO is not woken."""
    fifo = box.root / "special"
    os.mkfifo(fifo)
    woken = threading.Event()

    def writer() -> None:  # blocks in open() until a reader opens the FIFO
        fd = os.open(fifo, os.O_WRONLY)
        woken.set()
        os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    time.sleep(0.1)  # time for the writer to reach its open()
    try:
        error = within(60, functools.partial(box.refused, "fs.read", path="special"))
        assert detail(error) == special_refusal("a named pipe (FIFO)")
        assert not woken.wait(0.3), "fs.read opened the FIFO: the writer waiting on it woke up"
    finally:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader the writer waits for, so it ends
        thread.join(5)
        os.close(reader)
    assert woken.is_set()
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.parametrize(
    ("kind", "what"), [("fifo", "a named pipe (FIFO)"), ("socket", "a socket"), ("device", "a device")]
)
def test_special_files_are_refused_by_type_and_never_opened(
    box: Box, monkeypatch: pytest.MonkeyPatch, kind: str, what: str
) -> None:
    """fs.read and fs.write refuse a named pipe, a socket or a device, naming its type, without opening it."""
    special = box.root / "special"
    with contextlib.ExitStack() as cleanup:
        if kind == "fifo":
            os.mkfifo(special)
        elif kind == "socket":
            server = cleanup.enter_context(socket.socket(socket.AF_UNIX))
            monkeypatch.chdir(box.root)  # bound by its relative name: the full path may be too long for a socket
            server.bind("special")
        else:
            try:  # the device /dev/null is, made under the root
                os.mknod(special, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            except PermissionError:
                pytest.skip("making a device needs the privilege to, which this process lacks")
        kind_before = stat.S_IFMT(special.lstat().st_mode)
        opened: list[str] = []
        real_open = os.open

        def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            opened.append(os.fsdecode(path))
            return real_open(path, flags, *args, **kwargs)

        patch_os(monkeypatch, "open", recording_open)
        for tool, args in [("fs.read", {}), ("fs.write", {"content": "x"})]:
            error = within(60, functools.partial(box.refused, tool, path="special", **args))
            assert error.issues[0][:2] == (("path",), "invalid")
            assert detail(error) == special_refusal(what)
        assert "special" not in opened
        assert stat.S_IFMT(special.lstat().st_mode) == kind_before


def test_a_device_behind_a_link_stays_refused_by_the_link_rules(box: Box) -> None:
    """/dev/null reached through a link inside the root is refused as a link, before its type matters."""
    (box.root / "null").symlink_to(os.devnull)
    for tool, args in [("fs.read", {}), ("fs.write", {"content": "x"}), ("fs.list", {})]:
        error = within(60, functools.partial(box.refused, tool, path="null", **args))
        assert NOT_FOLLOWED in detail(error)
    assert (box.root / "null").is_symlink()
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_a_path_ending_in_a_slash_is_never_written_or_read_as_a_file(box: Box) -> None:
    """'dir/' names a directory: fs.write refuses it, before creating anything, and so does fs.read."""
    before = snapshot(box.base)
    error = box.refused("fs.write", path="dir/", content="x")
    assert error.issues[0][:2] == (("path",), "invalid")
    assert str(error) == (
        "fs.write was called with invalid input: \"path\" ends in '/', which makes it the path of a directory: "
        "a file path cannot end in '/'; drop it and write 'dir' (fs.mkdir creates a directory).\n"
        "Fix the arguments and call fs.write again."
    )
    for path, suffix, shown in [("new/deep/", "/", "'new/deep'"), ("notes.txt/", "/", "'notes.txt'")]:
        assert detail(box.refused("fs.write", path=path, content="x")).startswith(
            f"ends in {suffix!r}, which makes it the path of a directory: a file path cannot end in {suffix!r}; "
            f"drop it and write {shown}"
        )
    assert detail(box.refused("fs.write", path="dir/.", content="x")).startswith("ends in '/.', which makes it")
    assert not (box.root / "dir").exists()
    assert not (box.root / "new").exists()
    assert (box.root / "notes.txt").read_text(encoding="utf-8") == "inside"
    for path, shown in [("notes.txt/", "'notes.txt'"), ("sub/", "'sub'")]:
        assert detail(box.refused("fs.read", path=path)) == (
            "ends in '/', which makes it the path of a directory: a file path cannot end in '/'; "
            f"drop it and write {shown} (fs.list lists a directory)"
        )
    assert snapshot(box.base) == before


def test_a_path_ending_in_a_slash_names_the_directory_for_the_directory_tools(box: Box) -> None:
    """fs.mkdir, fs.list, fs.stat and fs.delete take 'dir/' as the directory dir."""
    assert box.call("fs.mkdir", path="dir/") == {"path": "dir", "created": True}
    assert (box.root / "dir").is_dir()
    assert box.call("fs.mkdir", path="dir/") == {"path": "dir", "created": False}
    box.call("fs.write", path="dir/a.txt", content="a")
    assert box.call("fs.list", path="dir/")["entries"] == [{"name": "a.txt", "type": "file", "size": 1}]
    assert box.call("fs.stat", path="dir/")["type"] == "directory"
    assert box.call("fs.stat", path="dir/.")["type"] == "directory"
    assert box.call("fs.stat", path="missing/")["exists"] is False
    assert "not empty" in detail(box.refused("fs.delete", path="dir/"))
    box.call("fs.delete", path="dir/a.txt")
    assert box.call("fs.delete", path="dir/") == {"path": "dir", "type": "directory"}
    assert not (box.root / "dir").exists()


@pytest.mark.parametrize(("name", "what"), [("notes.txt", "a file"), ("link_dir", "a symbolic link")])
@pytest.mark.parametrize("tool", ["fs.stat", "fs.delete"])
def test_a_path_ending_in_a_slash_never_names_a_file_or_a_link(box: Box, tool: str, name: str, what: str) -> None:
    """'notes.txt/' is not the file notes.txt: fs.stat and fs.delete refuse it, and nothing is deleted."""
    before = snapshot(box.base)
    error = box.refused(tool, path=f"{name}/")
    assert error.issues[0][:2] == (("path",), "invalid")
    assert detail(error) == (
        f"ends in '/', which makes it the path of a directory, but {name!r} is {what}; "
        f"drop the '/' to name {name!r} itself"
    )
    assert os.path.lexists(box.root / name)
    assert snapshot(box.base) == before


# -- permissions ----------------------------------------------------------------------------------

ARGS: dict[str, dict[str, Any]] = {
    "fs.read": {"path": "notes.txt"},
    "fs.write": {"path": "notes.txt", "content": "changed"},
    "fs.list": {},
    "fs.stat": {"path": "notes.txt"},
    "fs.mkdir": {"path": "made"},
    "fs.delete": {"path": "notes.txt"},
}
NEEDS = {
    "fs.read": "fs:read",
    "fs.list": "fs:read",
    "fs.stat": "fs:read",
    "fs.write": "fs:write",
    "fs.mkdir": "fs:write",
    "fs.delete": "fs:write",
}


@pytest.mark.parametrize("tool", TOOLS)
def test_no_grant_means_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str) -> None:
    """Without a grant every tool is denied, naming its permission, and nothing happens."""
    make_base(tmp_path)
    runtime = build_runtime(monkeypatch, tmp_path / "root", grants=())
    with pytest.raises(PermissionDeniedError) as caught:
        runtime.call_sync(tool, ARGS[tool])
    assert (caught.value.code, caught.value.permission) == (ErrorCode.PERMISSION_DENIED, NEEDS[tool])
    assert (tmp_path / "root" / "notes.txt").read_text(encoding="utf-8") == "inside"
    assert not (tmp_path / "root" / "made").exists()


def test_read_grant_reads_but_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """fs:read allows the three reading tools and none of the writing ones."""
    make_base(tmp_path)
    runtime = build_runtime(monkeypatch, tmp_path / "root", grants=("fs:read",))
    for tool in TOOLS:
        if NEEDS[tool] == "fs:read":
            runtime.call_sync(tool, ARGS[tool])
        else:
            with pytest.raises(PermissionDeniedError) as caught:
                runtime.call_sync(tool, ARGS[tool])
            assert caught.value.permission == "fs:write"
    assert (tmp_path / "root" / "notes.txt").read_text(encoding="utf-8") == "inside"


# -- the attack list ------------------------------------------------------------------------------

NOT_FOLLOWED = "symbolic link"


@dataclass(frozen=True)
class Attack:
    """One hostile path, what its refusal must say, and which operations merely describe or remove a link."""

    name: str
    path: str
    says: str
    link_itself: bool = False  # the last name is a link: fs.stat describes it, fs.delete removes it (only it)


ATTACKS = [
    Attack("dotdot-leading", "../outside/canary.txt", "'..'"),
    Attack("dotdot-middle", "sub/../../outside/canary.txt", "'..'"),
    Attack("dotdot-trailing", "sub/..", "'..'"),
    Attack("dotdot-alone", "..", "'..'"),
    Attack("dotdot-many", "sub/../../../../../../../../etc/passwd", "'..'"),
    Attack("dotdot-after-dot", "./../outside", "'..'"),
    Attack("absolute-outside", "{base}/outside/canary.txt", "absolute"),
    Attack("absolute-inside", "{base}/root/notes.txt", "absolute"),
    Attack("absolute-slash", "/", "absolute"),
    Attack("absolute-double-slash", "//etc/passwd", "absolute"),
    Attack("tilde", "~/canary.txt", "'~'"),
    Attack("tilde-alone", "~", "'~'"),
    Attack("tilde-user", "~root/canary.txt", "'~'"),
    Attack("sibling", "../root2/canary.txt", "'..'"),
    Attack("sibling-by-link", "link_sibling/canary.txt", NOT_FOLLOWED),
    Attack("nul-middle", "notes.txt\x00.png", "NUL"),
    Attack("nul-alone", "\x00", "NUL"),
    Attack("nul-in-directory", "sub\x00/inner.txt", "NUL"),
    Attack("link-dir-absolute", "link_dir/canary.txt", NOT_FOLLOWED),
    Attack("link-dir-relative", "link_rel/canary.txt", NOT_FOLLOWED),
    Attack("link-dir-new-file", "link_dir/new.txt", NOT_FOLLOWED),
    Attack("link-dir-deep", "link_dir/d/deep.txt", NOT_FOLLOWED),
    Attack("link-dir-itself", "link_dir", NOT_FOLLOWED, link_itself=True),
    Attack("link-file", "link_file", NOT_FOLLOWED, link_itself=True),
    Attack("link-dangling", "dangling", NOT_FOLLOWED, link_itself=True),
    Attack("link-loop", "link_loop", NOT_FOLLOWED, link_itself=True),
    Attack("link-inside-root", "link_inside/inner.txt", NOT_FOLLOWED),
    Attack("link-up-to-root", "sub/up/notes.txt", NOT_FOLLOWED),
]
ATTACK_ARGS: dict[str, dict[str, Any]] = {
    "fs.read": {},
    "fs.write": {"content": "PWNED"},
    "fs.list": {},
    "fs.stat": {},
    "fs.mkdir": {},
    "fs.delete": {},
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("attack", ATTACKS, ids=[attack.name for attack in ATTACKS])
def test_attack_is_refused_and_nothing_outside_changes(box: Box, attack: Attack, tool: str) -> None:
    """Each attack against each tool is refused (or only describes or removes the link itself), canaries intact."""
    before = snapshot(box.base)
    path = attack.path.format(base=box.base)
    if attack.link_itself and tool == "fs.stat":
        assert box.call(tool, path=path)["type"] == "symlink"
    elif attack.link_itself and tool == "fs.delete":
        assert box.call(tool, path=path) == {"path": path, "type": "symlink"}
        assert not os.path.lexists(box.root / path)
    else:
        error = box.refused(tool, path=path, **ATTACK_ARGS[tool])
        assert error.issues[0][:2] == (("path",), "invalid")
        assert attack.says in detail(error)
    assert snapshot(box.base) == before
    assert not (box.root / "link_dir" / "new.txt").exists()


LEGITIMATE = [
    ("..test", "..test"),
    ("a..b", "a..b"),
    ("...", "..."),
    (".hidden", ".hidden"),
    ("with space.txt", "with space.txt"),
    ("ünïcödé/日本語.txt", "ünïcödé/日本語.txt"),
    ("back\\slash", "back\\slash"),
    ("./~tilde", "~tilde"),
    ("sub/./x.txt", "sub/x.txt"),
    ("sub//y.txt", "sub/y.txt"),
    ("x~", "x~"),
]


@pytest.mark.parametrize(("given_path", "stored"), LEGITIMATE, ids=[stored for _, stored in LEGITIMATE])
def test_legitimate_names_are_not_blocked(box: Box, given_path: str, stored: str) -> None:
    """Names that only look odd work with every tool, and land where they should."""
    before = snapshot(box.base)
    assert box.call("fs.write", path=given_path, content="ok")["path"] == stored
    assert (box.root / stored).read_text(encoding="utf-8") == "ok"
    assert box.call("fs.read", path=given_path)["content"] == "ok"
    assert box.call("fs.stat", path=given_path)["type"] == "file"
    parent, _, name = stored.rpartition("/")
    assert name in [e["name"] for e in box.call("fs.list", path=parent or ".")["entries"]]
    assert box.call("fs.delete", path=given_path)["type"] == "file"
    assert box.call("fs.mkdir", path=given_path)["created"] is True
    assert (box.root / stored).is_dir()
    assert snapshot(box.base) == before


# -- races ----------------------------------------------------------------------------------------


RACE_SECONDS = 1.5


@contextlib.contextmanager
def running(target: Callable[[threading.Event], None]) -> Iterator[None]:
    """Run *target(stop)* in a thread for the duration of the block, then stop it and wait for it."""
    stop = threading.Event()
    thread = threading.Thread(target=target, args=(stop,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)
        assert not thread.is_alive()


def hammer(box: Box, calls: list[tuple[str, dict[str, Any]]], check: Callable[[str, dict[str, Any]], None]) -> int:
    """Make *calls* round-robin for RACE_SECONDS (at most 200000 calls); check each success; count link refusals.

    The race is won rarely by a check-then-use implementation (a few times a
    second here), so the loop runs for its whole time rather than stopping at
    the first refusal: long enough to catch such an implementation almost surely.
    """
    links = 0
    deadline = time.monotonic() + RACE_SECONDS
    for index in range(200_000):
        if time.monotonic() > deadline:
            break
        tool, args = calls[index % len(calls)]
        try:
            out = box.runtime.call_sync(tool, args)
        except ToolError as error:
            links += NOT_FOLLOWED in error.message
            continue
        check(tool, out)
    return links


def test_directory_swapped_for_a_link_between_steps_never_leads_outside(box: Box) -> None:
    """A thread keeps swapping sub/ for a link to outside/; no call ever reads, lists or writes outside."""
    (box.outside / "inner.txt").write_text(CANARY, encoding="utf-8")  # what a followed link would read
    before = snapshot(box.base)
    real, aside = box.root / "sub", box.root / "sub.aside"

    def swap(stop: threading.Event) -> None:
        while not stop.is_set():
            os.rename(real, aside)
            os.symlink(box.outside, real)
            os.unlink(real)
            os.rename(aside, real)

    calls: list[tuple[str, dict[str, Any]]] = [
        ("fs.read", {"path": "sub/inner.txt"}),
        ("fs.read", {"path": "sub/canary.txt"}),
        ("fs.write", {"path": "sub/w.txt", "content": "mine", "create_parents": False}),
        ("fs.write", {"path": "sub/canary.txt", "content": "PWNED", "create_parents": False}),
        ("fs.write", {"path": "sub/d/deep.txt", "content": "PWNED", "create_parents": False}),
        ("fs.list", {"path": "sub"}),
        ("fs.stat", {"path": "sub/only_outside.txt"}),
        ("fs.mkdir", {"path": "sub/d/made", "parents": False}),
        ("fs.delete", {"path": "sub/only_outside.txt"}),
        ("fs.delete", {"path": "sub/w.txt"}),
    ]

    def check(tool: str, out: dict[str, Any]) -> None:
        if tool == "fs.read":  # sub/canary.txt exists inside only once this test wrote it there
            assert out["content"] == ("inner" if out["path"] == "sub/inner.txt" else "PWNED")
        elif tool == "fs.list":
            assert {e["name"] for e in out["entries"]} <= {"inner.txt", "up", "w.txt", "canary.txt"}
        elif tool == "fs.stat":
            assert out["exists"] is False
        elif tool == "fs.delete":
            assert out["path"] == "sub/w.txt"
        else:
            assert out["path"] in ("sub/w.txt", "sub/canary.txt")

    with running(swap):
        links = hammer(box, calls, check)
    assert links > 0, "the swap was never seen: the race was not exercised"
    assert snapshot(box.base) == before
    assert not aside.exists()


def test_file_swapped_for_a_link_is_never_read_or_written_through(box: Box) -> None:
    """A thread keeps replacing t.txt by a link to the canary and back; reads and writes never reach it."""
    before = snapshot(box.base)
    target = box.root / "t.txt"
    target.write_text("inside", encoding="utf-8")

    def swap(stop: threading.Event) -> None:
        while not stop.is_set():
            link, temp = box.root / "swap.lnk", box.root / "swap.tmp"
            link.symlink_to(box.outside / "canary.txt")
            link.replace(target)
            temp.write_text("inside", encoding="utf-8")
            temp.replace(target)

    calls: list[tuple[str, dict[str, Any]]] = [
        ("fs.read", {"path": "t.txt"}),
        ("fs.write", {"path": "t.txt", "content": "mine"}),
        ("fs.stat", {"path": "t.txt"}),
    ]

    def check(tool: str, out: dict[str, Any]) -> None:
        if tool == "fs.read":
            assert out["content"] in ("inside", "mine")
        elif tool == "fs.stat":
            assert out["type"] in ("file", "symlink")

    with running(swap):
        links = hammer(box, calls, check)
    assert links > 0, "the swap was never seen: the race was not exercised"
    assert snapshot(box.base) == before


def test_a_reader_never_sees_a_torn_file_while_it_is_rewritten(box: Box) -> None:
    """While a large file is rewritten again and again, every read sees one whole version."""
    size = 256 * 1024
    versions = ("A" * size, "B" * size)
    box.call("fs.write", path="big.txt", content=versions[0])
    seen: list[str] = []
    failures: list[BaseException] = []

    def read(stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                content = box.call("fs.read", path="big.txt")["content"]
            except BaseException as error:  # reported by the main thread
                failures.append(error)
                return
            seen.append(content[0])
            if content not in versions:
                failures.append(AssertionError(f"torn read: {len(content)} characters, {set(content)}"))
                return

    deadline = time.monotonic() + 4.0
    with running(read):
        for index in range(60):
            box.call("fs.write", path="big.txt", content=versions[index % 2])
            if time.monotonic() > deadline:
                break
    assert not failures, failures[0]
    assert seen
    assert [p.name for p in box.root.iterdir() if p.name.startswith(".hermesos-fs-")] == []


def test_create_mode_is_exclusive_between_concurrent_writers(box: Box) -> None:
    """Two writers race to create the same names: exactly one wins each, the other hears 'already exists'."""
    names = [f"race/c{index}.txt" for index in range(40)]
    box.call("fs.mkdir", path="race")
    results: dict[str, list[str]] = {name: [] for name in names}
    refusals: list[str] = []
    lock = threading.Lock()

    def writer(label: str) -> Callable[[], None]:
        def run() -> None:
            for name in names:
                try:
                    box.call("fs.write", path=name, content=label, mode="create")
                except InputInvalidError as error:
                    with lock:
                        refusals.append(error.issues[0].detail)
                    continue
                with lock:
                    results[name].append(label)

        return run

    threads = [threading.Thread(target=writer(label)) for label in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(refusals) == len(names)
    assert all("already exists" in refusal for refusal in refusals)
    for name, winners in results.items():
        assert len(winners) == 1, (name, winners)
        assert (box.root / name).read_text(encoding="utf-8") == winners[0]
    assert sorted(p.name for p in (box.root / "race").iterdir()) == sorted(n.split("/")[1] for n in names)


# -- random paths ---------------------------------------------------------------------------------

SEGMENTS = [
    *("..", ".", "", "~", "\x00", "a", "..test", "a..b", "b c", "é", "root2", "outside", "canary.txt"),
    *("sub", "notes.txt", "inner.txt", "up", "link_dir", "link_rel", "link_file", "dangling"),
    *("link_sibling", "link_inside", "link_loop"),
]


def test_random_paths_stay_inside_the_root_or_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any path built from hostile segments, with any tool: success inside the root, or a ToolError; canaries intact."""
    make_base(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "root"
    runtime = build_runtime(monkeypatch, root)
    before = snapshot(tmp_path)
    inside = str(root.resolve())

    @settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        absolute=st.booleans(),
        segments=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=6),
        tool=st.sampled_from(TOOLS),
    )
    def check(absolute: bool, segments: list[str], tool: str) -> None:
        populate(tmp_path)
        path = ("/" if absolute else "") + "/".join(segments)
        try:
            out = runtime.call_sync(tool, {"path": path, **ATTACK_ARGS[tool]})
        except ToolError:
            pass
        else:
            assert not absolute
            assert ".." not in segments
            if out["path"] != ".":
                parent = os.path.realpath(root / out["path"].rpartition("/")[0])
                assert parent == inside or parent.startswith(inside + os.sep), (path, out)
            if tool == "fs.read":
                assert out["content"] != CANARY
            if tool == "fs.list":
                assert not {e["name"] for e in out["entries"]} & {"only_outside.txt", "canary.txt", "deep.txt"}
            if tool == "fs.write":
                written = root / out["path"]
                assert not written.is_symlink()
                assert written.read_text(encoding="utf-8") == "PWNED"
        assert snapshot(tmp_path) == before

    check()


# -- configuration and loading --------------------------------------------------------------------


def test_without_a_root_the_plugin_contributes_nothing_and_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """There is no default root: not the working directory (once the default, and a home or a project with its venv)."""
    monkeypatch.delenv(hermes_fs.ROOT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert hermes_fs.hermes_tools() == []
    assert hermes_fs.hermes_write_roots() == []
    [problem] = hermes_fs.hermes_problems()
    assert problem.startswith(
        "HERMESOS_FS_ROOT is not set, so the file tools (fs.read, fs.write, fs.list, fs.stat, fs.mkdir, fs.delete) "
        "are left out: hermesos-fs has no default root. Set it to a folder of their own, such as "
        "HERMESOS_FS_ROOT=~/hermesos-workspace"
    )
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    assert hermes_fs.hermes_problems() == []
    assert len(hermes_fs.hermes_tools()) == 6


def test_root_is_fixed_when_the_hooks_are_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Changing HERMESOS_FS_ROOT later does not move a runtime already built."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    runtime = build_runtime(monkeypatch, tmp_path / "a")
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path / "b"))
    runtime.call_sync("fs.write", {"path": "x.txt", "content": "x"})
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["x.txt"]
    assert list((tmp_path / "b").iterdir()) == []


@pytest.mark.parametrize(("kind", "reason"), [("missing", "No such file or directory"), ("file", "Not a directory")])
def test_a_root_that_is_not_a_directory_fails_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, reason: str
) -> None:
    """A bad root is an InvalidDefinitionError naming HERMESOS_FS_ROOT when the hooks are called, not on a call."""
    root = tmp_path / "root"
    if kind == "file":
        root.write_text("x", encoding="utf-8")
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(root))
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.hermes_tools()
    assert (caught.value.declaration, caught.value.field) == ("setting HERMESOS_FS_ROOT", None)
    assert str(caught.value) == (
        f"setting HERMESOS_FS_ROOT is {str(root)!r}, which cannot be opened as a directory ({reason}); "
        "set it to an existing directory."
    )


def test_make_tools_names_its_root_argument(tmp_path: Path) -> None:
    """Built without the environment, a bad root names make_tools's argument instead of the variable."""
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.make_tools(tmp_path / "missing")
    assert (caught.value.declaration, caught.value.field) == ("hermes_fs.make_tools()", "root")
    assert caught.value.detail.endswith(
        "which cannot be opened as a directory (No such file or directory); pass an existing directory"
    )


@pytest.mark.parametrize("variable", [hermes_fs.MAX_READ_ENV, hermes_fs.MAX_WRITE_ENV])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "must be at least 1"),
        ("-5", "must be at least 1"),
        ("1.5", "must be an integer, got number"),
        ("true", "must be an integer, got boolean"),
        ("1MiB", "must be an integer written in JSON, got text that is not JSON"),
    ],
)
def test_malformed_limits_fail_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, problem: str
) -> None:
    """A limit must be a positive whole number of bytes; the message names the variable, not the value."""
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    monkeypatch.setenv(variable, value)
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.hermes_tools()
    verb = "fs.read returns" if variable == hermes_fs.MAX_READ_ENV else "fs.write writes"
    assert str(caught.value) == (
        f"setting {variable} {problem}; set it to an integer: the most bytes one {verb}, such as 1048576."
    )


def test_limits_are_read_as_json_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A limit is a JSON number: surrounding blanks are ignored, and 1e3 is the integer 1000."""
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    monkeypatch.setenv(hermes_fs.MAX_READ_ENV, " 16 ")
    monkeypatch.setenv(hermes_fs.MAX_WRITE_ENV, "1e3")
    tools = {tool.name: tool for tool in hermes_fs.hermes_tools()}
    assert tools["fs.read"].input.json_schema()["properties"]["limit"]["maximum"] == 16
    assert tools["fs.write"].input.json_schema()["properties"]["content"]["maxLength"] == 1000


def test_a_bad_setting_is_reported_naming_the_plugin_and_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the loader, the problem names the distribution, then the variable."""
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    monkeypatch.setenv(hermes_fs.MAX_READ_ENV, "lots")
    found = discover_plugins(strict=False)
    (plugin,) = [p for p in found.plugins if p.origin.distribution.lower().replace("_", "-") == "hermesos-fs"]
    assert not plugin.ok
    (problem,) = plugin.problems
    assert problem.message.startswith(f"{plugin.origin}: setting HERMESOS_FS_MAX_READ_BYTES must be an integer")


@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_make_tools_checks_its_limits(tmp_path: Path, value: Any) -> None:
    """make_tools refuses a limit that is not a positive integer."""
    with pytest.raises(InvalidDefinitionError) as caught:
        hermes_fs.make_tools(tmp_path, max_read_bytes=value)
    assert caught.value.field == "max_read_bytes"


def test_the_plugin_loads_through_its_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed distribution declares the entry point, and the loader finds its tools and schema."""
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(tmp_path))
    found = discover_plugins(strict=False)
    (plugin,) = [p for p in found.plugins if p.origin.distribution.lower().replace("_", "-") == "hermesos-fs"]
    assert plugin.ok, plugin.problems
    assert (plugin.origin.entry_point, plugin.origin.value) == ("fs", "hermes_fs")
    assert sorted(tool.name for tool in plugin.tools) == sorted(TOOLS)
    assert set(plugin.schemas) == {"fs.path"}
    runtime = Runtime(plugin.tools, grants=["fs:write"], schemas=plugin.schemas)
    runtime.call_sync("fs.write", {"path": "hello.txt", "content": "hi"})
    assert (tmp_path / "hello.txt").read_text(encoding="utf-8") == "hi"


def test_definitions_are_documented_strict_and_valid_json_schema(box: Box) -> None:
    """Every tool: version 1.0.0, a real description, every field described, strict objects, paths as fs.path."""
    definitions = box.runtime.definitions()
    assert [d["name"] for d in definitions] == list(TOOLS)
    for definition in definitions:
        tool = box.runtime.tools[definition["name"]]
        assert tool.version == "1.0.0"
        assert tool.permissions == (NEEDS[tool.name],)
        assert len(definition["description"]) > 100
        for schema in (definition["inputSchema"], definition["outputSchema"]):
            jsonschema.Draft202012Validator.check_schema(schema)
            assert schema["additionalProperties"] is False
            for field, prop in schema["properties"].items():
                assert prop.get("description"), (tool.name, field)
        path = definition["inputSchema"]["properties"]["path"]
        assert path["$ref"] == "#/$defs/fs.path"
        assert definition["inputSchema"]["$defs"]["fs.path"] == hermes_fs.PATH_SCHEMA.json_schema()


def test_unknown_fields_are_refused_by_the_schema(box: Box) -> None:
    """Inputs are strict: a misspelt field is refused with the closest allowed name."""
    with pytest.raises(InputInvalidError) as caught:
        box.runtime.call_sync("fs.write", {"path": "a.txt", "contents": "x"})
    assert [(issue.path, issue.kind) for issue in caught.value.issues] == [
        (("content",), "missing"),
        (("contents",), "unexpected"),
    ]


def test_the_plugin_says_its_root_is_where_its_tools_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The loader refuses a permission file under it (tests/test_plugins.py has the refusal itself).
    monkeypatch.setenv("HERMESOS_FS_ROOT", str(tmp_path))
    assert hermes_fs.hermes_write_roots() == [str(tmp_path)]
    monkeypatch.delenv("HERMESOS_FS_ROOT")
    monkeypatch.chdir(tmp_path)
    assert hermes_fs.hermes_write_roots() == []


# -- the contract, as the pytest plugin of hermesos-core[testing] checks it -------------------------


def test_the_installed_plugin_keeps_its_contract(hermes_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The workspace root is a folder of the isolated environment: generated writes land there.
    (hermes_env / "workspace").mkdir()
    monkeypatch.setenv(hermes_fs.ROOT_ENV, str(hermes_env / "workspace"))
    # Generated paths name no file: a file of each, so that reading and deleting are seen to succeed.
    given = {"fs.read": [{"path": "read-me.txt"}], "fs.delete": [{"path": "delete-me.txt"}]}
    for name in ("read-me.txt", "delete-me.txt"):
        (hermes_env / "workspace" / name).write_text("text")
    checked = check_plugin("hermesos-fs", examples=40, inputs=given)
    assert [c.name for c in checked] == ["fs.read", "fs.write", "fs.list", "fs.stat", "fs.mkdir", "fs.delete"]
    assert all(c.rejected == 40 and c.accepted + c.refused == 40 + len(given.get(c.name, ())) for c in checked)
    assert all(c.accepted for c in checked)
    assert {c.name for c in checked if c.accepted} >= {"fs.write", "fs.list", "fs.stat", "fs.mkdir"}


_GLOBS = ["ipython_*config.py", "jupyter_*config.*", "python[0-9]*", "*.pth", ".git", "a[b", "[!x]y", "?z", "*"]


@given(st.text(alphabet="ipytho_ncfg.jur[0-9]*?!xyzab", max_size=16), st.sampled_from(_GLOBS))
def test_a_protected_name_is_matched_as_fnmatch_matches_it(name: str, glob: str) -> None:
    # A glob is compiled only for a name that begins as it does (start-up): the same answers.
    import fnmatch

    assert hermes_fs._matches(name, glob) == fnmatch.fnmatchcase(name, glob)
