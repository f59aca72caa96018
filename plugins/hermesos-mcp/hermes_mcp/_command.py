"""``hermesos-mcp``: refresh or clear the listing cache.

hermesos-mcp refresh   # start and list every configured server now, rewriting the cache (failed ones too)
hermesos-mcp clear     # remove every cached listing and every failure remembered
hermesos-mcp where     # print the configuration file and the cache directory
"""

from __future__ import annotations

import argparse
import sys

from hermes_core import InvalidDefinitionError
from hermes_mcp import _cache
from hermes_mcp._config import find_config_file, load_config

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the command in *argv*; return its exit status (0, 1 if a server failed, 2 for a usage error)."""
    parser = argparse.ArgumentParser(prog="hermesos-mcp", description="The listing cache of hermesos-mcp.")
    parser.add_argument("command", choices=("refresh", "clear", "where"))
    args = parser.parse_args(argv)
    from hermes_mcp import mount_servers  # noqa: PLC0415 - the package imports this module's neighbours

    directory = _cache.cache_dir()
    try:
        path = find_config_file()
    except InvalidDefinitionError as error:
        print(f"hermesos-mcp: {error}", file=sys.stderr)
        return 2
    if args.command == "where":
        print(f"configuration file: {path or 'none'}")
        print(f"cache directory: {directory}")
        return 0
    if args.command == "clear":
        print(f"removed {_cache.clear(directory)} cached listings and failures remembered from {directory}")
        return 0
    if path is None:
        print("hermesos-mcp: no configuration file: nothing to list", file=sys.stderr)
        return 1
    try:
        mounted = mount_servers(load_config(path), refresh=True, cache_directory=directory)
    except InvalidDefinitionError as error:
        print(f"hermesos-mcp: {error}", file=sys.stderr)
        return 2
    print(f"{len(mounted.tools)} tools listed, cached in {directory}")
    for problem in mounted.problems:
        print(f"problem: {problem}")
    return 1 if mounted.problems else 0


if __name__ == "__main__":
    sys.exit(main())
