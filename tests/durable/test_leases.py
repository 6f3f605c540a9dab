"""Leases: taken before a run is loaded, renewed while it runs, conflicts typed."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from ponder.agent import Agent
from ponder.exceptions import RunLeaseError
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import Store
from ponder.tools import tool

ELSEWHERE = "another-host:1:feedbeef"


def slow_agent(store: Store, log: list[str], started: asyncio.Event, seconds: float) -> Agent:
    @tool(idempotent=True)
    async def crunch(n: int) -> str:
        """Crunch a number slowly.

        Args:
            n: The number.
        """
        log.append(f"crunch {n}")
        started.set()
        await asyncio.sleep(seconds)
        return f"crunched {n}"

    def script(request: ModelRequest) -> ModelResponse:
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        if done == 0:
            return call_tools(("crunch", {"n": 7}, "c1"))
        if done == 1:
            return call_tools(("agent_stop", {"result": "crunched"}, "s1"))
        return reply("crunched 7")

    return Agent(
        ScriptedModel(script),
        tools=[crunch],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )


def new_id() -> str:
    return f"lease-{uuid.uuid4().hex}"


async def test_a_run_longer_than_its_lease_is_not_taken_over(store: Store) -> None:
    store.lease_seconds = 1.5
    log: list[str] = []
    started = asyncio.Event()
    agent, run_id = slow_agent(store, log, started, 4.0), new_id()
    running = asyncio.create_task(agent.run("crunch", run_id=run_id))
    await started.wait()
    await asyncio.sleep(3.0)  # twice the lease: only renewal keeps it
    with pytest.raises(RunLeaseError, match="is being run by"):
        await slow_agent(store, log, asyncio.Event(), 0.0).resume(run_id)
    result = await running
    assert result.status == "completed" and result.output == "crunched 7"
    assert log == ["crunch 7"]


async def test_resume_takes_the_lease_before_loading(store: Store) -> None:
    run_id = new_id()
    await store.acquire(run_id, ELSEWHERE, 60.0)  # a live holder, nothing stored yet
    agent = slow_agent(store, [], asyncio.Event(), 0.0)
    with pytest.raises(RunLeaseError, match="another-host"):
        await agent.resume(run_id)


async def test_a_run_that_lost_its_lease_cannot_overwrite_the_new_holder(store: Store) -> None:
    store.lease_seconds = 30.0
    log: list[str] = []
    started = asyncio.Event()
    agent, run_id = slow_agent(store, log, started, 0.5), new_id()
    running = asyncio.create_task(agent.run("crunch", run_id=run_id))
    await started.wait()
    holder = next(r for r in await store.list_runs() if r.run_id == run_id).lease_owner
    await store.acquire(run_id, ELSEWHERE, 60.0, takeover=holder)
    with pytest.raises(RunLeaseError, match="another-host"):
        await running
    stored = await store.load(run_id)
    assert stored.record.lease_owner == ELSEWHERE


async def test_a_used_run_id_is_refused_with_a_typed_error(store: Store) -> None:
    agent, run_id = slow_agent(store, [], asyncio.Event(), 0.0), new_id()
    assert (await agent.run("crunch", run_id=run_id)).status == "completed"
    with pytest.raises(RunLeaseError, match="the run id was used before"):
        await agent.run("crunch again", run_id=run_id)
    assert (await agent.resume(run_id)).output == "crunched 7"
