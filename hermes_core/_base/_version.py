"""The version of hermesos-core, in one place: the package, the build and the plugin loader read it here."""

from __future__ import annotations

__version__ = "0.4.0"
