"""Makes the modules named in ``PONDER_BLOCK_MODULES`` unimportable, as if not installed.

Put this folder first on ``PYTHONPATH`` of a subprocess: the interpreter imports
``sitecustomize`` at start-up, before any of ponder's code runs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

BLOCKED = {name for name in os.environ.get("PONDER_BLOCK_MODULES", "").split(",") if name}


class Blocker:
    """A meta-path finder that refuses the blocked top-level modules."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
