"""Tools, a sub-agent and a fake-provider script for the Temporal fault lane (``fault_lane``).

Every effect is one line in the file ``PONDER_TEST_LOG`` names, tagged with its run, so
the lane can tell a duplicated effect from a missing one. Imported by ``ponder worker``
processes (``--tools tests.temporal.fault_tools:TOOLS``), whose model is the fake provider.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ponder import Agent
from ponder.tools import tool

SLOW_SECONDS = 1.5
"""How long a slow call takes: long enough for a worker to be killed in the middle."""


def log(line: str) -> None:
    """Append one line to the effects log."""
    with open(os.environ["PONDER_TEST_LOG"], "a", encoding="utf-8") as file:
        file.write(line + "\n")


@tool
def effect(text: str) -> str:
    """Make a quick effect.

    Args:
        text: Its tag.
    """
    log(f"effect {text}")
    return f"made {text}"


@tool
async def slow_effect(text: str) -> str:
    """Make a slow effect (at most once: a lost call is not run again).

    Args:
        text: Its tag.
    """
    log(f"start {text} {os.getpid()}")  # the lane kills the worker running it
    await asyncio.sleep(SLOW_SECONDS)
    log(f"effect {text}")
    return f"made {text}"


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy (needs approval).

    Args:
        target: Its tag.
    """
    log(f"effect {target}")
    return f"deployed {target}"


_HELPER = Agent(
    "openai:fake-model",
    tools=[effect, slow_effect],
    agent_thought_mode="chat",
    enable_thinking_tool=False,
)

TOOLS = [effect, slow_effect, deploy, _HELPER.as_tool("helper", "Does a task.")]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def script(body: dict[str, Any]) -> Any:
    """The fake provider's answer to ``<kind> <tag>``, from the conversation so far."""
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    kind, _, tag = prompt.partition(" ")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    if kind == "approve":
        steps = [_call("deploy", target=tag)]
    elif kind == "delegate":
        steps = [_call("helper", task=f"slow {tag}.h")]
    else:
        steps = [_call("effect", text=f"{tag}.a"), _call("slow_effect", text=f"{tag}.b")]
    steps.append(_call("agent_stop", result="done"))
    if len(results) < len(steps):
        return steps[len(results)]
    return f"Done: {results[len(steps) - 2]}"
