"""A run on Temporal is priced as a local run is: the worker looks the price up."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from ponder.agent import Agent
from ponder.temporal import TemporalAgent, build_worker
from ponder.testing import FakeOpenAIServer
from tests.cli.test_commands import agent_script
from tests.temporal.test_runs import assert_replays


async def test_a_run_on_temporal_costs_what_it_costs_locally(
    client: Client, task_queue: str
) -> None:
    with FakeOpenAIServer(agent_script()) as provider:
        here = Agent("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k")
        local = await here.run("What is the answer?")
    with FakeOpenAIServer(agent_script()) as provider:
        agent = Agent("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k")
        async with build_worker(client, task_queue, agent):
            remote = TemporalAgent(client, task_queue)
            result = await remote.run("What is the answer?")
            events = await remote.events(result.run_id)
            status = await remote.status(result.run_id)
            await assert_replays(client, result.run_id)
    assert local.cost is not None and local.cost > 0
    assert result.cost == pytest.approx(local.cost)
    assert status["cost"] == pytest.approx(local.cost)
    usages = [e.cost for e in events if e.kind == "usage"]
    assert usages and usages[-1] == pytest.approx(local.cost)
    assert events[-1].kind == "run_finished" and events[-1].cost == pytest.approx(local.cost)
