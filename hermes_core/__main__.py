"""``python -m hermes_core``: the ``hermesos`` command."""

from __future__ import annotations

import sys

from hermes_core.cli import main

sys.exit(main())
