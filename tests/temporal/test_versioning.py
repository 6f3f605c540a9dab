"""A changed program does not break runs in flight: the change is marked with `patched`."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client

from ponder import Agent
from ponder.messages import AssistantMessage, UserMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.temporal import TemporalAgent, build_replayer, build_worker
from tests.agent.scripts import stop, think
from tests.temporal import versions
from tests.temporal.test_control import deploy
from tests.temporal.test_runs import assert_replays

SCRIPT = [
    think("deploy it"),
    call_tools(("deploy", {"target": "prod"}, "c1")),
    think("deployed", "deploy"),
    stop("done"),
    reply("Finished."),
]


def answer(request: ModelRequest) -> Any:
    if request.tool_choice == "none" and not any(
        isinstance(m, AssistantMessage) for m in request.messages
    ):
        return reply("hello")
    return SCRIPT[sum(isinstance(m, AssistantMessage) for m in request.messages)]


def notes(messages: list[Any]) -> list[str]:
    return [m.content for m in messages if isinstance(m, UserMessage) and "note:" in m.content]


async def test_a_marked_change_keeps_runs_in_flight_on_the_old_path(
    client: Client, task_queue: str
) -> None:
    versions.CHANGED[0] = versions.UNPATCHED[0] = False
    remote = TemporalAgent(client, task_queue)
    try:
        agent = Agent(ScriptedModel(answer), tools=[deploy], strategy=versions.Greeter)
        async with build_worker(client, task_queue, agent):
            before = await remote.run("Ship it")  # waits for approval across the change
        assert before.status == "suspended"

        versions.CHANGED[0] = True
        async with build_worker(client, task_queue, agent):
            await remote.decide(before.run_id, "approve")
            old = await remote.result(before.run_id)
            new = await remote.run("Ship it")
            await remote.decide(new.run_id, "approve")
            new = await remote.result(new.run_id)
            await assert_replays(client, old.run_id)
            await assert_replays(client, new.run_id)
        history = await client.get_workflow_handle(old.run_id).fetch_history()

        versions.UNPATCHED[0] = True  # the same change, unmarked, breaks the old history
        broken = await build_replayer().replay_workflow(history, raise_on_replay_failure=False)
    finally:
        versions.CHANGED[0] = versions.UNPATCHED[0] = False
    assert old.status == new.status == "completed"
    assert notes(old.messages) == [] and notes(new.messages) == ["note: hello"]
    assert broken.replay_failure is not None
    assert "nondetermin" in str(broken.replay_failure).lower()
