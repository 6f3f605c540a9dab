"""Golden files: a text output compared whole against a file kept beside the tests.

``PONDER_UPDATE_GOLDEN=1`` rewrites the files from the current output instead; review the
diff (``git diff tests``) before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

__all__ = ["assert_golden"]


def assert_golden(text: str, path: Path) -> None:
    """Fail with a unified diff unless ``text`` equals the golden file at ``path``."""
    if os.environ.get("PONDER_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if not path.exists():
        raise AssertionError(f"{path} is missing: run the test with PONDER_UPDATE_GOLDEN=1")
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            text.splitlines(keepends=True),
            fromfile=str(path),
            tofile="output",
        )
        raise AssertionError(
            "output differs from the golden file (PONDER_UPDATE_GOLDEN=1 rewrites it):\n"
            + "".join(diff)
        )
