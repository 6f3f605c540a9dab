"""One turn or one resume of a composition scenario, meant to be run as a subprocess.

    python -m tests.composition.cell_worker SCENARIO STORE_URL RUN_ID [BASE_URL]

SCENARIO is ``thinking-1``/``thinking-2`` (two turns of session RUN_ID), or
``limits``/``fallback``/``cost`` followed by ``-start`` (a run that suspends for approval)
or ``-resume`` (approve it). ``cost`` talks to the fake provider at BASE_URL. Prints the
result as one JSON line, with the events the run emitted in this process.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from ponder.agent import Agent, UsageLimits
from ponder.events import Event
from ponder.exceptions import ModelHTTPError
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.store import open_store
from ponder.tools import tool

STOP = call_tools(("agent_stop", {"result": "done"}))


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed to {target}"


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def _thought(n: int) -> Any:
    args = {
        "thought": f"thought {n}",
        "thought_number": n,
        "total_thoughts": 3,
        "next_thought_needed": n < 3,
    }
    return call_tools(("sequential_thinking", args))


def _todo(status: str) -> Any:
    steps = [{"id": 1, "description": "Look it up", "status": status}]
    return call_tools(("todo_write", {"task": "answer", "steps": steps}))


def _down(request: ModelRequest) -> Any:
    raise ModelHTTPError(503, "overloaded", model_name="primary")


def thinking_agent(turn: str) -> Agent:
    script = [_thought(1), _todo("in_progress"), STOP, "one"]
    if turn == "2":
        script = [_thought(2), _todo("completed"), STOP, "two"]
    return Agent(ScriptedModel(script), agent_thought_mode="chat", enable_todo_tool=True)


def limits_script(request: ModelRequest) -> Any:
    """Deploy first; then look keys up for as long as tools are offered, then answer."""
    if not any(isinstance(m, ToolMessage) for m in request.messages):
        return call_tools(("deploy", {"target": "prod"}))
    if request.tools:
        return call_tools(("lookup", {"key": "k"}))
    return reply("Stopped at the limit.")


def limits_agent() -> Agent:
    return Agent(ScriptedModel(limits_script), tools=[deploy, lookup], agent_thought_mode="chat")


def fallback_agent(phase: str) -> Agent:
    script = [STOP, reply("Deployed by the backup.")]
    if phase == "start":
        script = [call_tools(("deploy", {"target": "prod"}))]
    backup = ScriptedModel(script, name="backup")
    return Agent(
        [ScriptedModel(_down, name="primary"), backup],
        tools=[deploy],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


def cost_agent(base_url: str) -> Agent:
    return Agent(
        "openai:gpt-4o-mini",
        tools=[deploy],
        base_url=base_url,
        api_key="k",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


def build(scenario: str, base_url: str) -> Agent:
    name, phase = scenario.split("-")
    if name == "thinking":
        return thinking_agent(phase)
    if name == "limits":
        return limits_agent()
    if name == "fallback":
        return fallback_agent(phase)
    return cost_agent(base_url)


async def main(scenario: str, url: str, run_id: str, base_url: str) -> None:
    store = open_store(url)
    agent = build(scenario, base_url)
    events: list[Event] = []
    agent.on_event()(events.append)
    if scenario.startswith("thinking"):
        result = await agent.run("question", session_id=run_id, store=store)
    elif scenario.endswith("start"):
        limits = UsageLimits(requests=3) if scenario.startswith("limits") else None
        result = await agent.run("deploy", run_id=run_id, store=store, limits=limits)
    else:
        result = await agent.resume(run_id, "approve", store=store)
    await store.close()
    data = {
        "status": result.status,
        "output": result.output,
        "stop_reason": result.stop_reason,
        "requests": result.usage.requests,
        "cost": result.cost,
        "events": [{"kind": e.kind, **_fields(e)} for e in events],
    }
    print(json.dumps(data, default=str))


def _fields(event: Event) -> dict[str, Any]:
    wanted = ["data", "limit", "value", "failed", "answered_by", "cost"]
    wanted += ["input_tokens", "output_tokens"]
    return {name: getattr(event, name) for name in wanted if hasattr(event, name)}


if __name__ == "__main__":
    args = [*sys.argv[1:], ""]
    asyncio.run(main(args[0], args[1], args[2], args[3]))
