"""Configuration files for plugins: where they live, and how to read them within bounds.

A plugin that reads a file the operator writes (a policy, ``mcp.toml``, a
token) finds it and reads it here, so every such file is looked for in one
place and read with the same refusals::

    import tomllib

    from hermes_core.config import check_toml_depth, read_config_file, user_config_file

    path = user_config_file("notes.toml")  # ~/.config/hermesos/notes.toml
    data = read_config_file(path, 1 << 20, f'notes file "{path}"', what="a notes file")
    text = data.decode("utf-8")
    check_toml_depth(text, f'notes file "{path}"')  # before tomllib sees it
    notes = tomllib.loads(text)

* :func:`user_config_dir` and :func:`user_config_file`: the hermesos user
  configuration directory, never the working directory (and
  :func:`user_config_path`, the file as a ``str``, for what runs at every
  start: it does not import ``pathlib``);
* :func:`read_config_file`: the bytes of a regular file of at most a given
  size (a FIFO, a device or a directory is refused without being read);
* :func:`read_token_file`: a bearer token from a file, read the same way;
* :func:`check_toml_depth` and :func:`toml_tokens`: TOML text checked for
  nesting before ``tomllib`` reads it, and its tokens with their lines.

Each raises :class:`~hermes_core.InvalidDefinitionError` naming the file as
its caller says, for the plugin loader to report. A setting given in an
environment variable is read with :func:`hermes_core.setting`; every
variable hermesos-core and its bundled plugins read is listed in
``docs/settings.md``.
"""

from __future__ import annotations

from hermes_core.config._settings import (
    read_config_file,
    read_token_file,
    user_config_dir,
    user_config_file,
    user_config_path,
)
from hermes_core.config._toml import check_toml_depth, toml_tokens

__all__ = [
    "check_toml_depth",
    "read_config_file",
    "read_token_file",
    "toml_tokens",
    "user_config_dir",
    "user_config_file",
    "user_config_path",
]
