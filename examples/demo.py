"""The main job: the installed tools, listed and called through the hermesos command.

Runs the real ``hermesos`` command of this environment, in a fresh workspace
directory (the root hermesos-fs confines itself to), and prints each command
as a shell would show it. Then runs ``core_demo.py``: the core on its own,
with each of the seven error codes as a model receives it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERMES = Path(sys.executable).with_name("hermesos")

STEPS = [
    ("The installed plugins, and what each contributes:", ["plugins", "list"]),
    ("Every tool the installed plugins contribute:", ["tools", "list"]),
    ("A call of a bundled tool; its output is JSON:", ["call", "math.eval", '{"expression": "(2 + 3) * 4"}']),
    (
        "Tools that touch files need a grant; each grant is a permission pattern:",
        ["call", "fs.write", '{"path": "notes/todo.txt", "content": "buy milk\\n"}', "--grant", "fs:write"],
    ),
    ("", ["call", "fs.read", '{"path": "notes/todo.txt"}', "--grant", "fs:read"]),
    (
        "A call that fails, as a model receives it (--json: the error's to_dict()):",
        ["call", "fs.read", '{"pth": "notes/todo.txt"}', "--grant", "fs:read", "--json"],
    ),
    (
        "Without the grant, the error says that no rewrite will help, and the operator how to grant it:",
        ["call", "fs.read", '{"path": "notes/todo.txt"}'],
    ),
    ("Every plugin checked, every problem listed:", ["check"]),
]


def main() -> int:
    """Run the steps in a temporary workspace; return 0 unless the demo itself went wrong."""
    with tempfile.TemporaryDirectory(prefix="hermesos-demo-") as workspace:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESOS_")}
        env["HERMESOS_FS_ROOT"] = workspace
        for title, argv in STEPS:
            if title:
                print(f"\n# {title}")
            print("$ hermesos " + shlex.join(argv), flush=True)
            done = subprocess.run([str(HERMES), *argv], env=env, cwd=workspace, check=False)
            if done.returncode:
                print(f"(exit status {done.returncode})", flush=True)
    print("\n# The core on its own: examples/core_demo.py\n", flush=True)
    return subprocess.call([sys.executable, str(Path(__file__).with_name("core_demo.py"))])


if __name__ == "__main__":
    sys.exit(main())
