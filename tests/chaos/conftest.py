"""The chaos lane runs only when asked: ``make test-chaos`` (``PONDER_CHAOS=1``).

Its tests stop and kill real servers in a loop for a minute or two; `make test` skips them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENABLED = os.environ.get("PONDER_CHAOS", "") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here not in item.path.parents:
            continue  # the hook sees the whole session's tests
        item.add_marker(pytest.mark.chaos)
        if not ENABLED:
            item.add_marker(pytest.mark.skip(reason="the chaos lane: make test-chaos"))
