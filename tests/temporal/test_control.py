"""Approval through Updates, cancellation, and bad input: clear errors, nothing hangs."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import Client

from ponder import Agent, UserError, tool
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.temporal import (
    WORKFLOW_NAME,
    TemporalAgent,
    TemporalRunError,
    TemporalUnreachableError,
    WorkerUnavailableError,
    build_worker,
    connect,
)
from ponder.temporal import client as temporal_client
from tests.agent.scripts import stop, think
from tests.temporal.test_runs import assert_replays, by_history

DEPLOYED: list[str] = []


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy to a target.

    Args:
        target: Where to deploy.
    """
    DEPLOYED.append(target)
    return f"deployed to {target}"


def approval_agent() -> Agent:
    script = [
        think("deploy it"),
        call_tools(("deploy", {"target": "prod"}, "c1")),
        think("deployed", "deploy"),
        stop("done"),
        reply("Finished."),
    ]
    return Agent(by_history(script), tools=[deploy])


async def test_approve_and_reject_through_updates(client: Client, task_queue: str) -> None:
    DEPLOYED.clear()
    async with build_worker(client, task_queue, approval_agent()):
        remote = TemporalAgent(client, task_queue)
        waiting = await remote.run("Ship it")
        assert waiting.status == "suspended" and waiting.suspension is not None
        assert waiting.suspension["payload"]["calls"][0]["name"] == "deploy"
        assert DEPLOYED == []
        with pytest.raises(UserError, match="decision"):
            await remote.decide(waiting.run_id, "maybe")
        with pytest.raises(UserError, match="no decision for pending call"):
            await remote.decide(waiting.run_id, {"other": "approve"})
        await remote.decide(waiting.run_id, "approve")
        done = await remote.result(waiting.run_id)
        with pytest.raises(UserError, match="no running run"):
            await remote.decide(waiting.run_id, "approve")
        assert done.status == "completed" and DEPLOYED == ["prod"]
        await assert_replays(client, waiting.run_id)

        refused = await remote.run("Ship it")
        await remote.decide(refused.run_id, {"c1": {"action": "reject", "reason": "frozen"}})
        rejected = await remote.result(refused.run_id)
        kinds = [e.kind for e in await remote.events(refused.run_id)]
    answer = next(m for m in rejected.messages if isinstance(m, ToolMessage) and m.name == "deploy")
    assert answer.is_error and "rejected this call: frozen" in answer.content
    assert DEPLOYED == ["prod"] and rejected.status == "completed"
    assert kinds.count("run_suspended") == 1 and kinds.count("run_resumed") == 1


async def test_cancelling_a_waiting_run_ends_it_cancelled(client: Client, task_queue: str) -> None:
    async with build_worker(client, task_queue, approval_agent()):
        remote = TemporalAgent(client, task_queue)
        waiting = await remote.run("Ship it")
        await remote.cancel(waiting.run_id)
        with pytest.raises(TemporalRunError, match="cancelled"):
            await remote.result(waiting.run_id)
        status = await remote.status(waiting.run_id)
        events = await remote.events(waiting.run_id)
    assert status["status"] == "cancelled"
    assert events[-1].kind == "run_cancelled"


@tool
async def linger(seconds: float) -> str:
    """Wait a while.

    Args:
        seconds: How long.
    """
    await asyncio.sleep(seconds)
    return "waited"


async def test_cancelling_a_run_in_a_tool_call(client: Client, task_queue: str) -> None:
    agent = Agent(
        ScriptedModel([think("wait"), call_tools(("linger", {"seconds": 60}))]), tools=[linger]
    )
    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue, heartbeat_timeout=2)
        run_id = await remote.start("Wait")
        async for event in remote.follow(run_id):
            if event.kind == "tool_call_started":
                break
        await remote.cancel(run_id)
        with pytest.raises(TemporalRunError, match="cancelled"):
            await remote.result(run_id)
        assert (await remote.status(run_id))["status"] == "cancelled"


async def test_an_unreachable_address_is_a_clear_error() -> None:
    with pytest.raises(TemporalUnreachableError, match=r"reach Temporal at '127\.0\.0\.1:9'"):
        await connect("127.0.0.1:9", timeout=5)


async def test_a_queue_without_workers_is_a_clear_error(client: Client, task_queue: str) -> None:
    remote = TemporalAgent(client, task_queue)
    with pytest.raises(WorkerUnavailableError, match=f"no worker polls task queue '{task_queue}'"):
        await remote.start("Anyone there?")


@pytest.mark.timeout(60)
async def test_a_run_that_ended_before_any_worker_took_it_up_has_no_events(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker can replay it: its events are none, and the server's refusal does not leak.

    The server refuses to query a run that ended before any worker took it up; read
    again with a live run's query cut to a millisecond (not answered either), the
    events are still none, and the hour-long wait for an ended run does not hang it.
    """
    remote = TemporalAgent(client, task_queue, check_worker=False)
    run_id = await remote.start("Anyone there?")
    await client.get_workflow_handle(run_id).terminate("no worker will come")
    monkeypatch.setattr(temporal_client, "_REPLAY_TIMEOUT", timedelta(hours=1))
    assert await remote.events(run_id) == []
    assert [e async for e in remote.follow(run_id)] == []
    monkeypatch.setattr(temporal_client, "_QUERY_TIMEOUT", timedelta(milliseconds=1))
    assert await remote.events(run_id) == []
    assert [e async for e in remote.follow(run_id)] == []


async def test_a_worker_missing_a_tool_fails_the_run_clearly(
    client: Client, task_queue: str
) -> None:
    async with build_worker(client, task_queue, approval_agent()):
        remote = TemporalAgent(client, task_queue, require_tools=["deploy", "rollback"])
        with pytest.raises(TemporalRunError, match="has no tool 'rollback'"):
            await remote.run("Ship it")
        failed = await remote.start("Ship it")
        assert [e async for e in remote.follow(failed)] == []  # ends, though no event came
        assert (await remote.status(failed))["status"] == "failed"
        stranger = TemporalAgent(client, task_queue, agent="billing")
        with pytest.raises(TemporalRunError, match="no agent 'billing'"):
            await stranger.run("Bill it")
        with pytest.raises(UserError, match="no run 'nope'"):
            await remote.status("nope")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"prompt": 5}, "a 'prompt' string"),
        ("just text", "a 'prompt' string"),
        ({"prompt": "hi", "message_history": [{"kind": "nope"}]}, "bad run input"),
        ({"prompt": "hi", "history_budget": {"rounds": 0}}, "HistoryBudget.rounds"),
        ({"prompt": "hi", "continued": {"spec": {}}}, "bad run input"),
    ],
    ids=["prompt-not-text", "not-an-object", "bad-history", "bad-budget", "bad-continued"],
)
async def test_malformed_run_input_fails_the_run_at_once(
    client: Client, task_queue: str, data: Any, expected: str
) -> None:
    async with build_worker(client, task_queue, approval_agent()):
        handle = await client.start_workflow(
            WORKFLOW_NAME, data, id=uuid.uuid4().hex, task_queue=task_queue
        )
        with pytest.raises(TemporalRunError, match=expected):
            await TemporalAgent(client, task_queue).result(handle.id)
