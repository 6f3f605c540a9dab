"""A parent with a sub-agent, run in its own process: ``start`` dies inside the child.

``python -m tests.agent.subagent_worker URL RUN_ID LOG start|resume``. The child's tool
writes to LOG, so a test sees it ran once; ``start`` exits (code 9) on the child's second
request, after the child's tool result was checkpointed; ``resume`` prints the result.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import open_store
from ponder.tools import tool


def _results(request: ModelRequest) -> list[str]:
    return [m.name for m in request.messages if isinstance(m, ToolMessage)]


def _child_model(mode: str) -> Any:
    def answer(request: ModelRequest) -> ModelResponse:
        done = _results(request)
        if not done:
            return call_tools(("note", {"text": "a"}, "n1"))
        if mode == "start":
            os._exit(9)
        if "agent_stop" not in done:
            return call_tools(("agent_stop", {"result": "noted"}, "s1"))
        return reply("child done")

    return answer


def _parent_model(request: ModelRequest) -> ModelResponse:
    done = _results(request)
    if "helper" not in done:
        return call_tools(("helper", {"task": "Take a note."}, "c1"))
    if "agent_stop" not in done:
        return call_tools(("agent_stop", {"result": "helped"}, "s2"))
    return reply("parent done")


def main(url: str, run_id: str, log: str, mode: str) -> None:
    @tool
    def note(text: str) -> str:
        """Write a note.

        Args:
            text: The note.
        """
        with open(log, "a") as handle:
            handle.write(f"note {text}\n")
        return "noted"

    options: dict[str, Any] = {"agent_thought_mode": "chat", "enable_thinking_tool": False}
    child = Agent(ScriptedModel(_child_model(mode)), tools=[note], **options)
    store = open_store(url)
    parent = Agent(
        ScriptedModel(_parent_model),
        tools=[child.as_tool("helper", "Helps.")],
        store=store,
        **options,
    )

    async def go() -> Any:
        if mode == "start":
            return await parent.run("Get help.", run_id=run_id)
        return await parent.resume(run_id)

    result = asyncio.run(go())
    print(json.dumps({"status": result.status, "output": result.text, "run_id": result.run_id}))


if __name__ == "__main__":
    main(*sys.argv[1:5])
