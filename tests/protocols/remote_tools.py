"""Tools for a ``ponder serve --tools`` process: the A2A agent at ``$PONDER_TEST_REMOTE``."""

from __future__ import annotations

import os

from ponder.protocols.a2a_client import A2AAgent

TOOLS = [
    A2AAgent(
        os.environ.get("PONDER_TEST_REMOTE", "http://127.0.0.1:9"),
        name="echoer",
        description="An agent that says back what it is told.",
        headers={"Authorization": f"Bearer {os.environ.get('PONDER_TEST_REMOTE_TOKEN', '')}"},
        timeout=60,
    )
]
