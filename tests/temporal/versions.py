"""A strategy that changes between two worker deployments, for the versioning test."""

from __future__ import annotations

import asyncio

from ponder.agent.strategies.react import ReActStrategy
from ponder.temporal import patched

CHANGED = [False]
"""The deployed version: False before the change, True after it."""
UNPATCHED = [False]
"""True: the change is made without marking it (what breaks runs in flight)."""


class Greeter(ReActStrategy):
    """ReAct that, since the change, pauses (a durable timer there) and asks for a greeting."""

    async def on_entry(self) -> None:
        await super().on_entry()
        if UNPATCHED[0] or (CHANGED[0] and patched("greet-first")):
            await asyncio.sleep(0.05)
            response = await self.ctx.caller.request("greet", (), "none")
            self.ctx.append_user(f"note: {response.text}")
