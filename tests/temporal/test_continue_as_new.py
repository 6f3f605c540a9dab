"""A long run continues as new past its history budget, and nobody can tell.

The same script runs twice on one worker: once with a small budget, once with none.
The budgeted run's chain of workflow runs (each started by the one before, under one
workflow id) is walked through the Temporal client; its result, usage, ledger and
events must be the unbudgeted run's, and an approval pending while the run moved on
to a new workflow run is answered afterwards.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

from ponder import Agent, tool
from ponder.agent import RunResult
from ponder.events import event_to_dict
from ponder.messages import ToolMessage
from ponder.models import call_tools, reply
from ponder.temporal import (
    HistoryBudget,
    TemporalAgent,
    TemporalRunError,
    build_replayer,
    build_worker,
)
from ponder.temporal.continuation import CONTINUED
from tests.cli.test_commands import ponder
from tests.temporal.test_control import DEPLOYED, deploy
from tests.temporal.test_runs import by_history, dumped
from tests.temporal.test_sub_agents import NOTES, note

ROUNDS = 200
"""Tool rounds of the long run. Call ids are given: the scripted model numbers the others
across runs, and the two runs must have the same ledger."""
HELPED_AT = (40, 150)
"""Rounds that call the sub-agent: one before the first continue-as-new, one after."""
NO_BUDGET = HistoryBudget(follow_server=False)
COMPLETED, CONTINUED_AS_NEW = (
    WorkflowExecutionStatus.COMPLETED,
    WorkflowExecutionStatus.CONTINUED_AS_NEW,
)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def stop(result: str) -> Any:
    return call_tools(("agent_stop", {"result": result}, "s1"))


def _round(n: int) -> Any:
    if n in HELPED_AT:
        return call_tools(("helper", {"task": f"note {n}"}, f"h{n}"))
    return call_tools(("add", {"a": n, "b": 1}, f"c{n}"))


def long_agent() -> Agent:
    helper = Agent(
        by_history([call_tools(("note", {"text": "x"}, "n1")), stop("noted"), reply("Noted.")]),
        tools=[note],
        agent_thought_mode="reasoning-optional",
    )
    script = [*(_round(n) for n in range(ROUNDS)), stop("counted"), reply("Counted to the end.")]
    return Agent(
        by_history(script),
        tools=[add, helper.as_tool("helper", "Notes things.")],
        agent_thought_mode="reasoning-optional",
        agent_tool_call_limit=ROUNDS + 10,
        enable_compaction=False,  # the scripted model answers by the count of its replies
    )


def approval_agent() -> Agent:
    script = [
        call_tools(("add", {"a": 1, "b": 1}, "c1")),
        call_tools(("add", {"a": 2, "b": 1}, "c2")),
        call_tools(("deploy", {"target": "prod"}, "d1")),
        call_tools(("add", {"a": 3, "b": 1}, "c3")),
        stop("shipped"),
        reply("Shipped."),
    ]
    return Agent(by_history(script), tools=[add, deploy], agent_thought_mode="reasoning-optional")


Link = tuple[WorkflowExecutionStatus | None, int]


async def chain(client: Client, run_id: str) -> list[Link]:
    """The run's workflow runs, first to last: their status and history length.

    Each one's history is checked to replay.
    """
    links: list[Link] = []
    run: str | None = (await client.get_workflow_handle(run_id).describe()).run_id
    replayer = build_replayer()
    while run:
        handle = client.get_workflow_handle(run_id, run_id=run)
        history = await handle.fetch_history()
        links.append(((await handle.describe()).status, len(history.events)))
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert replayed.replay_failure is None
        started = history.events[0].workflow_execution_started_event_attributes
        run = started.continued_execution_run_id
    return links[::-1]


async def handed_on_waiting(client: Client, run_id: str) -> bool:
    """Whether the run's latest workflow run began from a run handed on while it waited."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    data = json.loads(started.input.payloads[0].data)
    return bool(data.get(CONTINUED, {}).get("snapshot", {}).get("status") == "suspended")


CLOCKED = frozenset({"run_id", "time", "latency", "duration"})
"""What differs between two runs of one script: ids and the clock."""


def comparable(events: list[Any], run_id: str) -> list[dict[str, Any]]:
    """The events without their ids and clock readings (a sub-agent's event's too)."""
    found = []
    for event in events:
        data = {k: v for k, v in event_to_dict(event).items() if k not in CLOCKED}
        if isinstance(data.get("event"), dict):
            data["event"] = {k: v for k, v in data["event"].items() if k not in CLOCKED}
        found.append(data)
    neutral: list[dict[str, Any]] = json.loads(json.dumps(found).replace(run_id, "<run>"))
    return neutral  # sub-agents' run ids hold the run's


def ledger(result: RunResult) -> list[dict[str, Any]]:
    """The run's messages, its id left out (sub-agents' run ids hold it)."""
    neutral: list[dict[str, Any]] = json.loads(
        json.dumps(dumped(result)).replace(result.run_id, "<run>")
    )
    return neutral


def same_run(budgeted: RunResult, plain: RunResult) -> None:
    assert budgeted.status == plain.status == "completed"
    assert budgeted.output == plain.output
    assert budgeted.usage == plain.usage
    assert (budgeted.rounds, budgeted.tool_calls) == (plain.rounds, plain.tool_calls)
    assert ledger(budgeted) == ledger(plain)


@pytest.mark.slow
@pytest.mark.timeout(300)  # two runs of 200 rounds: about 80 s on a busy machine
async def test_a_long_run_continues_as_new_and_ends_as_it_would_have(
    client: Client, task_queue: str
) -> None:
    NOTES.clear()
    async with build_worker(client, task_queue, long_agent()):
        budgeted = TemporalAgent(client, task_queue, history_budget=HistoryBudget(rounds=60))
        plain = TemporalAgent(client, task_queue, history_budget=NO_BUDGET)
        moved = await budgeted.run("Count to the end.")
        stayed = await plain.run("Count to the end.")
        moved_events = await budgeted.events(moved.run_id)
        stayed_events = await plain.events(stayed.run_id)
        statuses = [status for status, _ in await chain(client, moved.run_id)]
        assert [s for s, _ in await chain(client, stayed.run_id)] == [COMPLETED]
    assert statuses.count(CONTINUED_AS_NEW) >= 2
    assert statuses[-1] == COMPLETED
    assert moved.output == "Counted to the end."
    same_run(moved, stayed)
    assert comparable(moved_events, moved.run_id) == comparable(stayed_events, stayed.run_id)
    assert moved.usage.requests > ROUNDS
    assert [e.seq for e in moved_events] == list(range(1, len(moved_events) + 1))
    assert NOTES == ["x"] * 4  # each sub-agent call ran once, in either run


async def test_an_approval_pending_across_a_continue_as_new_is_answered_after(
    client: Client, task_queue: str
) -> None:
    DEPLOYED.clear()
    async with build_worker(client, task_queue, approval_agent()):
        budgeted = TemporalAgent(client, task_queue, history_budget=HistoryBudget(rounds=1))
        plain = TemporalAgent(client, task_queue, history_budget=NO_BUDGET)
        results, handed = [], []
        for remote in (budgeted, plain):
            waiting = await remote.run("Ship it")
            assert waiting.status == "suspended" and waiting.suspension is not None
            assert (await remote.status(waiting.run_id))["status"] == "suspended"
            handed.append(await handed_on_waiting(client, waiting.run_id))
            assert await remote.decide(waiting.run_id, "approve")
            done = await remote.result(waiting.run_id)
            results.append((done, await remote.events(done.run_id)))
        statuses = [status for status, _ in await chain(client, results[0][0].run_id)]
    (moved, moved_events), (stayed, stayed_events) = results
    # the run moved on after each round, and while it waited for the approval
    assert statuses.count(CONTINUED_AS_NEW) >= 3
    assert handed == [True, False]
    assert moved.output == "Shipped." and DEPLOYED == ["prod", "prod"]
    same_run(moved, stayed)
    assert comparable(moved_events, moved.run_id) == comparable(stayed_events, stayed.run_id)


async def test_a_budget_of_history_events_is_kept_too(client: Client, task_queue: str) -> None:
    rounds = [call_tools(("add", {"a": n, "b": 1}, f"c{n}")) for n in range(12)]
    agent = Agent(
        by_history([*rounds, stop("counted"), reply("Counted.")]),
        tools=[add],
        agent_thought_mode="reasoning-optional",
    )
    async with build_worker(client, task_queue, agent):
        budgeted = TemporalAgent(client, task_queue, history_budget=HistoryBudget(events=40))
        moved = await budgeted.run("Count.")
        stayed = await TemporalAgent(client, task_queue, history_budget=NO_BUDGET).run("Count.")
        links = await chain(client, moved.run_id)
    assert [status for status, _ in links].count(CONTINUED_AS_NEW) >= 2
    # handed on at the first node boundary past the budget: a round adds about a dozen
    assert all(length < 40 + 20 for _, length in links)
    same_run(moved, stayed)


def delegating_agent() -> Agent:
    helper = Agent(
        by_history(
            [
                *(call_tools(("note", {"text": f"n{n}"}, f"n{n}")) for n in range(3)),
                stop("noted"),
                reply("Noted thrice."),
            ]
        ),
        tools=[note],
        agent_thought_mode="reasoning-optional",
    )
    script = [call_tools(("helper", {"task": "note it"}, "h1")), stop("done"), reply("Helped.")]
    return Agent(
        by_history(script),
        tools=[helper.as_tool("helper", "Notes things.")],
        agent_thought_mode="reasoning-optional",
    )


async def test_a_sub_agent_is_given_the_budget_and_rolls_up_as_before(
    client: Client, task_queue: str
) -> None:
    NOTES.clear()
    async with build_worker(client, task_queue, delegating_agent()):
        budgeted = TemporalAgent(client, task_queue, history_budget=HistoryBudget(rounds=1))
        plain = TemporalAgent(client, task_queue, history_budget=NO_BUDGET)
        moved = await budgeted.run("Get it noted.")
        stayed = await plain.run("Get it noted.")
        moved_events = await budgeted.events(moved.run_id)
        stayed_events = await plain.events(stayed.run_id)
        child = [status for status, _ in await chain(client, f"{moved.run_id}.h1")]
    assert child.count(CONTINUED_AS_NEW) >= 2 and child[-1] == COMPLETED
    assert moved.output == "Helped." and NOTES == ["n0", "n1", "n2"] * 2
    same_run(moved, stayed)
    assert comparable(moved_events, moved.run_id) == comparable(stayed_events, stayed.run_id)
    assert any(e.kind == "sub_agent_event" for e in moved_events)


async def test_a_stateful_tool_keeps_its_state_across_runs_of_the_chain(
    client: Client, task_queue: str
) -> None:
    thoughts = [
        call_tools(
            (
                "sequential_thinking",
                {
                    "thought": f"step {n}",
                    "next_thought_needed": n < 3,
                    "thought_number": n,
                    "total_thoughts": 3,
                },
                f"t{n}",
            )
        )
        for n in (1, 2, 3)
    ]
    agent = Agent(
        by_history([*thoughts, stop("thought"), reply("Thought thrice.")]),
        agent_thought_mode="reasoning-optional",
    )
    async with build_worker(client, task_queue, agent):
        budgeted = TemporalAgent(client, task_queue, history_budget=HistoryBudget(rounds=1))
        moved = await budgeted.run("Think thrice.")
        links = await chain(client, moved.run_id)
    assert [status for status, _ in links].count(CONTINUED_AS_NEW) >= 2
    last = [m for m in moved.messages if isinstance(m, ToolMessage)][-2]
    assert last.name == "sequential_thinking" and last.data["thought_history_length"] == 3


async def test_the_cli_shows_decides_and_cancels_a_run_handed_on_with_no_worker(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    DEPLOYED.clear()
    remote = TemporalAgent(client, task_queue, history_budget=HistoryBudget(rounds=1))
    address = ("--temporal", temporal_address)
    waiting = []
    for _ in range(2):
        async with build_worker(client, task_queue, approval_agent()):
            run = await remote.run("Ship it")
        assert run.status == "suspended" and await handed_on_waiting(client, run.run_id)
        waiting.append(run.run_id)
    decided, cancelled = waiting
    shown = ponder("runs", "show", decided, *address, "--json")
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert found["status"] == "suspended"
    assert [c["name"] for c in found["suspension"]["payload"]["calls"]] == ["deploy"]
    resumed = ponder("runs", "resume", decided, *address, "--approve")
    assert resumed.returncode == 0 and "decision recorded" in resumed.stderr
    stopped = ponder("runs", "cancel", cancelled, *address)
    assert stopped.returncode == 0 and "cancelling" in stopped.stdout
    async with build_worker(client, task_queue, approval_agent()):
        done = await remote.result(decided)
        with pytest.raises(TemporalRunError, match="cancelled"):
            await remote.result(cancelled)
        await chain(client, decided)  # every run of each chain replays
        await chain(client, cancelled)
    assert done.status == "completed" and done.output == "Shipped." and DEPLOYED == ["prod"]
