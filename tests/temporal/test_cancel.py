"""A cancel reaches the running tool: the run says ``cancelling`` until the tool has stopped."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.client import Client

from ponder import Agent, tool
from ponder.models import ScriptedModel, call_tools
from ponder.temporal import TemporalAgent, TemporalRunError, build_worker
from tests.agent.scripts import think
from tests.temporal.test_runs import assert_replays

EFFECTS: list[str] = []


@tool
async def slow_write(seconds: float) -> str:
    """Write a record after a while.

    Args:
        seconds: How long the write takes.
    """
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        EFFECTS.append("stopped")
        raise
    EFFECTS.append("written")
    return "written"


async def test_a_cancel_stops_the_tool_before_the_run_says_cancelled(
    client: Client, task_queue: str
) -> None:
    EFFECTS.clear()
    script = [think("write"), call_tools(("slow_write", {"seconds": 60}))]
    agent = Agent(ScriptedModel(script), tools=[slow_write])
    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue)  # the default heartbeat timeout
        run_id = await remote.start("Write it")
        async for event in remote.follow(run_id):
            if event.kind == "tool_call_started":
                break
        await remote.cancel(run_id)
        seen: list[str] = []
        while not seen or seen[-1] in ("running", "cancelling"):
            seen.append((await remote.status(run_id))["status"])
            await asyncio.sleep(0.2)
        with pytest.raises(TemporalRunError, match="cancelled"):
            await remote.result(run_id)
        stopped_before_end = list(EFFECTS)
        events = await remote.events(run_id)
        await assert_replays(client, run_id)
    assert stopped_before_end == ["stopped"]
    assert "cancelling" in seen and seen[-1] == "cancelled"
    assert events[-1].kind == "run_cancelled"
