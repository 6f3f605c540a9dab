"""`TemporalAgent` answers to `Agent`'s verbs: stream, resume and the sync forms."""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from ponder import Agent
from ponder.temporal import TemporalAgent, build_worker
from tests.temporal.test_control import DEPLOYED, approval_agent
from tests.temporal.test_runs import add, by_history, react_script


async def test_stream_then_resume_carry_a_run_through_its_approval(
    client: Client, task_queue: str
) -> None:
    DEPLOYED.clear()
    async with build_worker(client, task_queue, approval_agent()):
        remote = TemporalAgent(client, task_queue)
        events = [event async for event in remote.stream("Ship it")]
        assert events[0].kind == "run_started" and events[-1].kind == "run_suspended"
        assert DEPLOYED == []
        done = await remote.resume(events[-1].run_id, "approve")
        assert done.status == "completed" and done.output == "Finished."
        assert DEPLOYED == ["prod"]


async def test_sync_verbs_from_a_thread(client: Client, task_queue: str) -> None:
    agent = Agent(by_history(react_script()), tools=[add])
    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue)
        result = await asyncio.to_thread(remote.run_sync, "What is 2+3?")
        assert result.status == "completed" and result.output == "The answer is 5."
        kinds = await asyncio.to_thread(lambda: [e.kind for e in remote.stream_sync("Again")])
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
