"""Many runs at once across two workers, each ending with its own answer."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import Client

from ponder import Agent
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.temporal import TemporalAgent, build_worker, connect
from tests.agent.scripts import stop
from tests.temporal.test_runs import add

RUNS = 100


def answer(request: ModelRequest) -> Any:
    prompt = next(m.content for m in request.messages if isinstance(m, UserMessage))
    number = int(prompt.split()[-1])
    results = [m.content for m in request.messages if isinstance(m, ToolMessage)]
    if not results:
        return call_tools(("add", {"a": number, "b": 1}))
    if len(results) == 1:
        return stop(results[0])
    return reply(f"{number} + 1 = {results[0]}")


def agent() -> Agent:
    return Agent(
        ScriptedModel(answer), tools=[add], agent_thought_mode="chat", enable_thinking_tool=False
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_hundred_concurrent_runs_on_two_workers(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    first, second = agent(), agent()
    other = await connect(temporal_address)  # one worker per queue and client
    async with build_worker(client, task_queue, first), build_worker(other, task_queue, second):
        remote = TemporalAgent(client, task_queue)
        results = await asyncio.gather(*(remote.run(f"add one to {n}") for n in range(RUNS)))
    assert [r.output for r in results] == [f"{n} + 1 = {n + 1}" for n in range(RUNS)]
    assert all(r.status == "completed" and r.tool_calls == 1 for r in results)
    served = [len(model.requests) for model in (first.model, second.model)]  # type: ignore[attr-defined]
    assert sum(served) == 3 * RUNS and min(served) > 0  # both workers took part
