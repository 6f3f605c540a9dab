"""Runs on a real Temporal server end as they do locally: same answer, same ledger."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from ponder import Agent, tool
from ponder.agent import RunResult
from ponder.messages import AssistantMessage, ToolMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.temporal import TemporalAgent, build_replayer, build_worker
from ponder.temporal import client as temporal_client
from tests.agent.scripts import stop, think
from tests.agent.steps import lookup, plan, step_agent, summary


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool
def explode(reason: str) -> str:
    """Fail on purpose.

    Args:
        reason: Why.
    """
    raise RuntimeError(f"exploded: {reason}")


def react_script() -> list[Any]:
    return [
        think("add the numbers"),
        call_tools(("add", {"a": 2, "b": 3}), ("explode", {"reason": "x"})),
        think("got 5, one call failed", "added"),
        stop("5"),
        reply("The answer is 5."),
    ]


def step_script() -> list[Any]:
    return [
        plan(("fetch", "Fetch the data", []), ("report", "Write the report", ["fetch"])),
        call_tools(("lookup", {"key": "data"})),
        stop("fetched"),
        summary("Fetched the data.", "value of data"),
        stop("written"),
        summary("Wrote the report.", "report.md"),
        reply("The report is in report.md."),
    ]


def by_history(script: list[Any]) -> ScriptedModel:
    """A model that answers from the conversation so far, so it serves any number of runs."""

    def answer(request: ModelRequest) -> Any:
        return script[sum(isinstance(m, AssistantMessage) for m in request.messages)]

    return ScriptedModel(answer)


def dumped(result: RunResult) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in result.messages]


async def assert_replays(client: Client, run_id: str) -> None:
    history = await client.get_workflow_handle(run_id).fetch_history()
    replayed = await build_replayer().replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


async def run_both(
    client: Client, task_queue: str, make: Any, prompt: str
) -> tuple[RunResult, RunResult]:
    local = await make().run(prompt)
    async with build_worker(client, task_queue, make()):
        remote = await TemporalAgent(client, task_queue).run(prompt)
        await assert_replays(client, remote.run_id)
    return local, remote


async def test_react_run_matches_the_local_run(client: Client, task_queue: str) -> None:
    def make() -> Agent:
        return Agent(ScriptedModel(react_script()), tools=[add, explode])

    local, remote = await run_both(client, task_queue, make, "What is 2+3?")
    assert remote.status == "completed" and remote.output == local.output == "The answer is 5."
    assert dumped(remote) == dumped(local)
    assert (remote.rounds, remote.tool_calls, remote.usage) == (
        local.rounds,
        local.tool_calls,
        local.usage,
    )
    results = {m.name: m for m in remote.messages if isinstance(m, ToolMessage)}
    assert results["add"].content == "5" and not results["add"].is_error
    assert results["explode"].is_error and "exploded: x" in results["explode"].content


async def test_step_react_run_matches_the_local_run(client: Client, task_queue: str) -> None:
    def make() -> Agent:
        return step_agent(ScriptedModel(step_script()))

    local, remote = await run_both(client, task_queue, make, "Make a report of the data.")
    assert remote.status == "completed" and remote.output == "The report is in report.md."
    assert dumped(remote) == dumped(local)
    assert lookup.name in {m.name for m in remote.messages if isinstance(m, ToolMessage)}


async def test_chat_and_stateful_tools(client: Client, task_queue: str) -> None:
    thoughts = [
        call_tools(
            (
                "sequential_thinking",
                {
                    "thought": f"step {n}",
                    "next_thought_needed": n < 2,
                    "thought_number": n,
                    "total_thoughts": 2,
                },
            )
        )
        for n in (1, 2)
    ]

    def make() -> Agent:
        script = [
            think("think it through"),
            *thoughts,
            think("done", "thought"),
            stop("ok"),
            reply("Thought twice."),
        ]
        return Agent(ScriptedModel(script))

    local, remote = await run_both(client, task_queue, make, "Think twice.")
    assert dumped(remote) == dumped(local)
    second = [m for m in remote.messages if isinstance(m, ToolMessage)][-3]
    assert second.name == "sequential_thinking"
    assert second.data["thought_history_length"] == 2  # the state came back from the first call

    chat = Agent(ScriptedModel(["Hello there."]), agent_strategy="no-action")
    async with build_worker(client, task_queue + "-chat", chat):
        answer = await TemporalAgent(client, task_queue + "-chat").run("Hi")
    assert answer.output == "Hello there."


async def test_events_are_readable_by_sequence_number(client: Client, task_queue: str) -> None:
    async with build_worker(
        client, task_queue, Agent(ScriptedModel(react_script()), tools=[add, explode])
    ):
        remote = TemporalAgent(client, task_queue)
        result = await remote.run("What is 2+3?")
        events = await remote.events(result.run_id)
        later = await remote.events(result.run_id, after=5)
        followed = [e async for e in remote.follow(result.run_id)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert events[0].kind == "run_started" and events[-1].kind == "run_finished"
    assert [e.seq for e in later] == [e.seq for e in events[5:]]
    assert [e.kind for e in followed] == [e.kind for e in events]
    kinds = [e.kind for e in events]
    assert kinds.count("tool_call_finished") == 1 and kinds.count("tool_call_failed") == 1
    assert all(e.run_id == result.run_id and e.time > 0 for e in events)


async def test_a_finished_runs_events_are_waited_for_while_a_worker_replays_it(
    client: Client, task_queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A closed run's query replays its whole history, which can outlast a live run's timeout.

    With that timeout cut to a millisecond no query can be answered within it, and a
    finished run must still show its events, not none.
    """
    async with build_worker(
        client, task_queue, Agent(ScriptedModel(react_script()), tools=[add, explode])
    ):
        remote = TemporalAgent(client, task_queue)
        result = await remote.run("What is 2+3?")
        expected = await remote.events(result.run_id)
        monkeypatch.setattr(temporal_client, "_QUERY_TIMEOUT", timedelta(milliseconds=1))
        handle = client.get_workflow_handle(result.run_id)
        with pytest.raises(RPCError) as unanswered:
            await handle.query("events", 0, rpc_timeout=temporal_client._QUERY_TIMEOUT)
        assert unanswered.value.status in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED)
        events = await remote.events(result.run_id)
        followed = [e async for e in remote.follow(result.run_id)]
    assert [e.kind for e in events][-1:] == ["run_finished"]
    assert [e.seq for e in events] == [e.seq for e in expected] == [e.seq for e in followed]


async def test_rag_retrieves_on_a_worker(client: Client, task_queue: str, tmp_path: Any) -> None:
    (tmp_path / "notes.md").write_text("The launch code word is heliotrope.\n")
    model = ScriptedModel(["It is heliotrope."])
    agent = Agent(model, tool_calling_mode="rag", rag_index_path=str(tmp_path))
    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue)
        result = await remote.run("What is the code word?")
        events = await remote.events(result.run_id)
    assert result.output == "It is heliotrope."
    retrieval = next(e for e in events if e.kind == "retrieval")
    assert retrieval.sources and retrieval.sources[0].startswith("notes.md")
    assert "heliotrope" in str(model.requests[0].messages[0])
