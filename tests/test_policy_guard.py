"""A tool must never be able to change the permissions that govern it: the attack, through the real command.

The bundled hermesos-fs writes under its root (``HERMESOS_FS_ROOT``; once the
working directory by default) and hermesos-policy decides from a policy file.
Once, with the defaults, the policy was read from the working directory, so a
model granted ``fs:write`` could write ``grant = ["*"]`` into it and read what
the operator denied on the next load. Each combination of root and policy
location is tried here with the installed ``hermesos`` command: the policy
plugin is refused for deciding from a file a tool may write, and the file
plugin for a root holding a guarded path (the policy file, which the policy
plugin registers through ``hermes_guarded_paths``, or the configuration
directory of hermesos, which the core guards).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERMES = Path(sys.executable).with_name("hermesos")


def hermesos(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("HERMESOS_", "XDG_CONFIG_HOME", "NO_COLOR"))
    }
    # The home directory beside the working directory, not inside: a root may never hold the home directory.
    home = cwd.parent / f"{cwd.name}-home"
    home.mkdir(exist_ok=True)
    environment.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / "nowhere"), **env})
    return subprocess.run([str(HERMES), *argv], cwd=cwd, env=environment, capture_output=True, text=True, check=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "secret.txt").write_text("the secret\n")
    return tmp_path


def test_the_attack_no_longer_works_a_policy_in_the_working_directory_is_not_read(workspace: Path) -> None:
    (workspace / "hermesos-policy.toml").write_text('deny = ["fs:read"]\n')
    # The model, granted only fs:write, rewrites the file the operator once meant as the policy...
    wrote = hermesos(
        workspace,
        "call",
        "fs.write",
        json.dumps({"path": "hermesos-policy.toml", "content": 'grant = ["*"]\n'}),
        "--grant",
        "fs:write",
        HERMESOS_FS_ROOT=str(workspace),
    )
    assert wrote.returncode == 0, wrote.stderr
    # ...and it grants nothing: a file in the working directory is not a policy.
    read = hermesos(
        workspace, "call", "fs.read", json.dumps({"path": "secret.txt"}), "--json", HERMESOS_FS_ROOT=str(workspace)
    )
    assert read.returncode == 5
    assert json.loads(read.stderr)["code"] == "PERMISSION_DENIED"
    assert "the secret" not in read.stdout + read.stderr


@pytest.mark.parametrize(
    ("where", "settings"),
    [
        # the root named, the policy named inside it
        ("named", {"HERMESOS_FS_ROOT": "{cwd}", "HERMESOS_POLICY": "{cwd}/policy.toml"}),
        # the root named, the policy in the user's configuration directory, under the root
        ("config", {"HERMESOS_FS_ROOT": "{cwd}", "XDG_CONFIG_HOME": "{cwd}/config"}),
    ],
)
def test_a_policy_under_the_file_tools_root_stops_the_command_naming_both_paths(
    workspace: Path, where: str, settings: dict[str, str]
) -> None:
    env = {name: value.format(cwd=workspace) for name, value in settings.items()}
    policy = workspace / "config" / "hermesos" / "policy.toml" if where == "config" else workspace / "policy.toml"
    policy.parent.mkdir(parents=True, exist_ok=True)
    policy.write_text('deny = ["fs:read"]\n')
    done = hermesos(workspace, "call", "fs.read", json.dumps({"path": "secret.txt"}), "--grant", "fs:read", **env)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    # The file tools' plugin, for a root holding a guarded path...
    fs_line = next(line for line in lines if line.startswith("error: plugin hermesos-fs "))
    assert ") not loaded: " in fs_line  # the root is a setting's value: the plugin is not broken
    assert (
        f'setting HERMESOS_FS_ROOT names "{workspace}" as a directory its tools may write, but it contains '
    ) in fs_line
    guarded = policy if where == "named" else policy.parent
    assert f'contains "{guarded}", ' in fs_line
    # ...and the policy's, which is not loaded: the policy it would decide from may have been changed already.
    policy_line = next(line for line in lines if line.startswith("error: plugin hermesos-policy "))
    assert f'hermes_guarded_paths names "{policy}", which "{workspace}" meets, a directory the tools of ' in policy_line
    assert "plugin hermesos-fs " in policy_line
    assert "(its setting HERMESOS_FS_ROOT names it)" in policy_line
    # What to do is the root's setting, else to start without the file tools: never without the policy.
    assert lines[-1].startswith("Change the setting HERMESOS_FS_ROOT as said above, and run the command again; ")
    assert "--disable hermesos-fs or HERMESOS_DISABLE_PLUGINS=hermesos-fs;" in lines[-1]
    assert "hermesos-policy" not in lines[-1]


def test_a_policy_outside_the_root_governs_and_a_link_to_it_under_the_root_is_refused(workspace: Path) -> None:
    config = workspace / "config"
    (config / "hermesos").mkdir(parents=True)
    policy = config / "hermesos" / "policy.toml"
    policy.write_text('deny = ["fs:read"]\n')
    root = workspace / "root"
    root.mkdir()
    (root / "secret.txt").write_text("the secret\n")
    env = {"HERMESOS_FS_ROOT": str(root), "XDG_CONFIG_HOME": str(config)}
    denied = hermesos(workspace, "call", "fs.read", json.dumps({"path": "secret.txt"}), "--grant", "fs:*", **env)
    assert denied.returncode == 5, denied.stderr  # the policy's deny wins over the grant
    (root / "policy-link.toml").symlink_to(policy)
    linked = hermesos(workspace, "check", HERMESOS_POLICY=str(root / "policy-link.toml"), HERMESOS_FS_ROOT=str(root))
    assert linked.returncode == 1
    assert f'contains "{root / "policy-link.toml"}" (that is, "{policy}")' in linked.stdout
    assert f'hermes_guarded_paths names "{root / "policy-link.toml"}", which "{root}" meets' in linked.stdout
    os.link(policy, workspace / "another-name.toml")
    hard = hermesos(workspace, "check", **env)
    assert hard.returncode == 1
    assert "has 2 hard links" in hard.stdout
