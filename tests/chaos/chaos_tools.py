"""The chaos lane's tool (``--tools tests.chaos.chaos_tools:TOOLS``).

``effect`` takes a moment, then appends ``<run id> <call id>`` to ``$EFFECT_LOG``: a line
seen twice is an effect a crash or a stop made happen twice.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ponder.tools import ToolContext, tool


@tool
async def effect(ctx: ToolContext, n: int) -> str:
    """Do something that must happen once.

    Args:
        n: Which thing.
    """
    await asyncio.sleep(float(os.environ.get("EFFECT_SECONDS", "0.2")))
    with Path(os.environ["EFFECT_LOG"]).open("a") as handle:
        handle.write(f"{ctx.run_id} {ctx.call_id}\n")
    return f"effect {n} done"


TOOLS = [effect]
