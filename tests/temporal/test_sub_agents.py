"""Sub-agents on Temporal are child workflows: durable, asked once, rolled up as locally."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client

from ponder import Agent, tool
from ponder.agent import UsageLimits
from ponder.messages import AssistantMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.temporal import TemporalAgent, build_worker
from tests.agent.scripts import stop, think
from tests.temporal.test_control import DEPLOYED, deploy
from tests.temporal.test_runs import assert_replays

NOTES: list[str] = []


@tool
def note(text: str) -> str:
    """Write a note (an effect a test can count).

    Args:
        text: What to write.
    """
    NOTES.append(text)
    return f"noted {text}"


def counted(script: list[Any], requests: list[int]) -> ScriptedModel:
    """Answers from the conversation so far (any number of runs), counting requests."""

    def answer(request: ModelRequest) -> Any:
        requests.append(1)
        return script[sum(isinstance(m, AssistantMessage) for m in request.messages)]

    return ScriptedModel(answer)


def agents(parent_requests: list[int], child_requests: list[int]) -> Agent:
    child = Agent(
        counted(
            [
                think("note, then deploy"),
                call_tools(("note", {"text": "a"}, "n1")),
                think("noted", "note"),
                call_tools(("deploy", {"target": "prod"}, "c1")),
                think("deployed", "deploy"),
                stop("done"),
                reply("Child finished."),
            ],
            child_requests,
        ),
        tools=[note, deploy],
    )
    return Agent(
        counted(
            [
                think("delegate"),
                call_tools(("helper", {"task": "ship it"}, "h1")),
                think("helped", "helper"),
                stop("done"),
                reply("Parent finished."),
            ],
            parent_requests,
        ),
        tools=[child.as_tool("helper", "Ships things.")],
    )


async def test_a_sub_agent_asks_once_survives_a_new_worker_and_rolls_up(
    client: Client, task_queue: str
) -> None:
    NOTES.clear()
    DEPLOYED.clear()
    parent_requests: list[int] = []
    child_requests: list[int] = []
    agent = agents(parent_requests, child_requests)
    remote = TemporalAgent(client, task_queue)
    async with build_worker(client, task_queue, agent):
        waiting = await remote.run("Ship it through the helper")
    assert waiting.status == "suspended" and waiting.suspension is not None
    calls = waiting.suspension["payload"]["calls"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("deploy", {"target": "prod"})]
    assert NOTES == ["a"] and DEPLOYED == []

    async with build_worker(client, task_queue, agent):  # a new worker: both runs replay
        await remote.decide(waiting.run_id, "approve")
        done = await remote.result(waiting.run_id)
        events = await remote.events(waiting.run_id)
        child_id = f"{waiting.run_id}.h1"
        child_events = await remote.events(child_id)
        await assert_replays(client, waiting.run_id)
        await assert_replays(client, child_id)
    assert done.status == "completed" and done.text == "Parent finished."
    assert NOTES == ["a"] and DEPLOYED == ["prod"]
    kinds = [e.kind for e in events]
    assert kinds.count("run_suspended") == 1 and kinds.count("run_resumed") == 1
    nested = [e for e in events if e.kind == "sub_agent_event"]
    assert [e.event["kind"] for e in nested] == [e.kind for e in child_events]
    assert {e.call_id for e in nested} == {"h1"} and nested[-1].event["kind"] == "run_finished"
    assert done.usage.requests == len(parent_requests) + len(child_requests) == 12


def limited_agents() -> Agent:
    """A parent that delegates once, then answers; its child may make one request."""

    def parent(request: ModelRequest) -> Any:
        if any(isinstance(m, AssistantMessage) for m in request.messages):
            return reply("Parent answer.")
        return call_tools(("helper", {"task": "look it up"}, "h1"))

    child = Agent(ScriptedModel(lambda _: reply("Child answer.")), **CHAT)
    helper = child.as_tool("helper", "Looks things up.", limits=UsageLimits(requests=1))
    return Agent(ScriptedModel(parent), tools=[helper], **CHAT)


CHAT: dict[str, Any] = {"agent_thought_mode": "chat", "enable_thinking_tool": False}


def child_end(events: list[Any]) -> dict[str, Any]:
    nested = [e.event for e in events if e.kind == "sub_agent_event"]
    end: dict[str, Any] = nested[-1]
    return end


async def test_usage_limits_bound_the_parent_and_the_child_as_locally(
    client: Client, task_queue: str
) -> None:
    agent = limited_agents()
    limits = UsageLimits(requests=3)
    local = agent.stream("Find it", limits=limits)
    local_events = [e async for e in local]
    remote = TemporalAgent(client, task_queue)
    async with build_worker(client, task_queue, agent):
        done = await remote.run("Find it", limits=limits)
        events = await remote.events(done.run_id)
        await assert_replays(client, done.run_id)
    assert child_end(events)["stop_reason"] == child_end(local_events)["stop_reason"]
    assert child_end(events)["stop_reason"] == "requests_limit"
    assert (done.stop_reason, done.usage.requests) == ("requests_limit", 3)
    assert (local.result.stop_reason, local.result.usage.requests) == ("requests_limit", 3)
