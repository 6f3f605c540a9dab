"""Tools for the ``ponder serve`` stop/restart tests (``--tools tests.server.stop_tools:TOOLS``).

``step`` takes a moment, then appends ``label n`` to ``$STEP_LOG``: a test counts how
often each step really ran across server processes (a duplicated effect shows twice).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ponder.tools import tool


@tool
async def step(label: str, n: int) -> str:
    """Do one step of a task.

    Args:
        label: The task.
        n: The step's number.
    """
    await asyncio.sleep(float(os.environ.get("STEP_SECONDS", "0.3")))
    with Path(os.environ["STEP_LOG"]).open("a") as handle:
        handle.write(f"{label} {n}\n")
    return f"step {n} of {label} done"


TOOLS = [step]
