"""Tools and a fake-provider script for workers run as subprocesses (``ponder worker``).

Tools append to the file named by ``PONDER_TEST_LOG``, so a test can count how often each
ran; ``slow_record`` waits while ``<log>.hold`` exists, so a test can kill its worker mid-call.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from ponder.tools import tool


def _log(line: str) -> None:
    with open(os.environ["PONDER_TEST_LOG"], "a", encoding="utf-8") as file:
        file.write(line + "\n")


@tool
def record(text: str) -> str:
    """Write a line to the log.

    Args:
        text: What to write.
    """
    _log(f"record {text}")
    return f"recorded {text}"


async def _slow(text: str) -> str:
    _log(f"start {text}")
    hold = Path(os.environ["PONDER_TEST_LOG"] + ".hold")
    for _ in range(1200):
        if not hold.exists():
            break
        await asyncio.sleep(0.05)
    _log(f"done {text}")
    return f"recorded {text}"


@tool
async def slow_record(text: str) -> str:
    """Write a line to the log, slowly.

    Args:
        text: What to write.
    """
    return await _slow(text)


@tool(idempotent=True)
async def slow_record_safe(text: str) -> str:
    """Write a line to the log, slowly; safe to repeat.

    Args:
        text: What to write.
    """
    return await _slow(text)


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy to a target.

    Args:
        target: Where to deploy.
    """
    _log(f"deploy {target}")
    return f"deployed to {target}"


TOOLS = [record, slow_record, slow_record_safe, deploy]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def script(body: dict[str, Any]) -> Any:
    """The fake provider's answer, from the conversation so far (any worker, any retry)."""
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    if prompt.startswith("deploy"):
        steps = [_call("deploy", target="prod"), _call("agent_stop", result="deployed")]
    elif prompt.startswith("delegate"):
        steps = [_call("helper", task="log it"), _call("agent_stop", result="delegated")]
    else:
        slow = "slow_record_safe" if "safe" in prompt else "slow_record"
        steps = [
            _call("record", text="first"),
            _call(slow, text="second"),
            _call("agent_stop", result="logged"),
        ]
    if len(results) < len(steps):
        return steps[len(results)]
    return f"Done: {results[len(steps) - 2]}"
