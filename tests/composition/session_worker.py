"""One turn of a session, meant to be run as a subprocess by the session lease tests.

    python -m tests.composition.session_worker STORE_URL SESSION PROMPT MARKERS HOLD

The turn calls a tool that touches ``MARKERS/PROMPT.started`` and then sleeps ``HOLD``
seconds (so a test knows the turn is under way and holds the session), then stops and
answers. ``TURN_WAIT`` in the environment sets the store's ``turn_wait_seconds``; with
``GO_FILE``, the turn starts once that file exists (the interpreter is up by then). Prints
one JSON line: the status and the user turns the run's ledger holds, or the error.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from ponder.agent import Agent
from ponder.exceptions import PonderError
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import open_store
from ponder.tools import tool


def build(markers: Path, prompt: str, hold: float) -> Agent:
    @tool(idempotent=True)
    async def hold_session() -> str:
        """Hold the turn for a while."""
        (markers / f"{prompt}.started").touch()
        await asyncio.sleep(hold)
        return "held"

    def script(request: ModelRequest) -> ModelResponse:
        asked = max(i for i, m in enumerate(request.messages) if isinstance(m, UserMessage))
        done = sum(isinstance(m, ToolMessage) for m in request.messages[asked:])
        if done == 0:
            return call_tools(("hold_session", {}, "h1"))
        if done == 1:
            return call_tools(("agent_stop", {}, "s1"))
        return reply(f"re: {prompt}")

    return Agent(
        ScriptedModel(script),
        tools=[hold_session],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


async def main(url: str, session: str, prompt: str, markers: str, hold: str) -> None:
    store = open_store(url)
    store.turn_wait_seconds = float(os.environ.get("TURN_WAIT", "120"))
    agent = build(Path(markers), prompt, float(hold))
    go = os.environ.get("GO_FILE")
    while go and not Path(go).exists():
        await asyncio.sleep(0.02)
    try:
        result = await agent.run(prompt, session_id=session, store=store)
    except PonderError as error:
        print(json.dumps({"error": type(error).__name__, "message": str(error)}))
        return
    finally:
        await store.close()
    turns = [str(m.content) for m in result.messages if isinstance(m, UserMessage)]
    print(json.dumps({"status": result.status, "turns": turns}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
