"""Fixtures shared by hermesos-mcp's tests: the reference MCP server, installed from npm once per run."""

from __future__ import annotations

import shutil
import subprocess

import pytest

EVERYTHING = "@modelcontextprotocol/server-everything"


@pytest.fixture(scope="session")
def everything(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command starting the reference server over stdio, installed from npm into a temporary folder."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node and npm are needed to install the server")
    prefix = tmp_path_factory.mktemp("npm")
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), EVERYTHING],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # Its package.json: "bin": {"mcp-server-everything": "dist/index.js"}, "start:stdio": "node dist/index.js stdio".
    return [node, str(prefix / "node_modules" / EVERYTHING / "dist" / "index.js"), "stdio"]
