"""Tools for ``ponder serve --tools`` processes: the A2A agent at ``$PONDER_TEST_REMOTE``,
and a tool that waits for a file (a run that is mid-way when its server is killed)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ponder.protocols.a2a_client import A2AAgent
from ponder.tools import tool

TOOLS = [
    A2AAgent(
        os.environ.get("PONDER_TEST_REMOTE", "http://127.0.0.1:9"),
        name="echoer",
        description="An agent that says back what it is told.",
        headers={"Authorization": f"Bearer {os.environ.get('PONDER_TEST_REMOTE_TOKEN', '')}"},
        timeout=60,
    )
]


@tool(idempotent=True)
async def wait_for_file(name: str) -> str:
    """Wait until the file ``name`` exists under ``$PONDER_TEST_GATE_DIR``, then say so.

    Args:
        name: The file to wait for.
    """
    path = Path(os.environ["PONDER_TEST_GATE_DIR"]) / name
    while not path.exists():
        await asyncio.sleep(0.05)
    return f"{name} is there"


SLOW_TOOLS = [wait_for_file]
