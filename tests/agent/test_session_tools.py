"""``sequential_thinking`` and ``todo_write`` live for a session: their state carries across
turns of one ``session_id`` (stored with the session), and per run without one. Branch
contents come with every thinking result, within their size cap."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import StoreError
from ponder.store import open_store
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

from .scripts import of_kind


def calls(*items: tuple[str, dict[str, Any]]) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=n, arguments=a) for n, a in items])


def thought(number: int, text: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    args = {
        "thought": text,
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": number < 3,
        **extra,
    }
    return ("sequential_thinking", args)


def plan(status: str) -> tuple[str, dict[str, Any]]:
    steps = [
        {"id": 1, "description": "Look it up", "status": status},
        {"id": 2, "description": "Answer", "status": "pending"},
    ]
    return ("todo_write", {"task": "answer the question", "steps": steps})


STOP = calls(("agent_stop", {}))
TURN_ONE: list[FakeReply | str] = [
    calls(thought(1, "Start from the question.")),
    calls(
        thought(2, "Try the other angle.", branch_from_thought=1, branch_id="alt"),
        plan("in_progress"),
    ),
    STOP,
    "first answer",
]
TURN_TWO: list[FakeReply | str] = [
    calls(thought(3, "The other angle holds.", branch_from_thought=1, branch_id="alt")),
    calls(plan("completed")),
    STOP,
    "second answer",
]


def make_agent(server: FakeOpenAIServer, **config: Any) -> Agent:
    return Agent(
        "openai:fake",
        base_url=server.base_url,
        api_key="k",
        agent_thought_mode="chat",
        enable_todo_tool=True,
        **config,
    )


async def turn(agent: Agent, prompt: str, **options: Any) -> list[Any]:
    return [event async for event in agent.stream(prompt, **options)]


async def test_a_session_keeps_the_thinking_and_the_plan_across_turns(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    async with FakeOpenAIServer([*TURN_ONE, *TURN_TWO]) as server:
        agent = make_agent(server, store=store)
        await turn(agent, "question one", session_id="s1")
        second = await turn(agent, "question two", session_id="s1")
        await agent.model.aclose()  # type: ignore[attr-defined]
    last = of_kind(second, "thinking")[-1].data
    assert last["thought_history_length"] == 3 and last["branches"] == ["alt"]
    assert last["branch_contents"] == {
        "alt": [
            {"thought_number": 2, "thought": "Try the other angle."},
            {"thought_number": 3, "thought": "The other angle holds."},
        ]
    }
    assert of_kind(second, "todo")[-1].data["changed"] == ["1"]
    # the second turn continued the first on the wire
    first_of_turn_two = server.requests[len(TURN_ONE)]
    assert "first answer" in str(first_of_turn_two["messages"])
    # and a new agent (another process) on the same store goes on from there
    async with FakeOpenAIServer([calls(thought(4, "One more.")), STOP, "third"]) as server:
        fresh = make_agent(server, store=store)
        third = await turn(fresh, "question three", session_id="s1")
        await fresh.model.aclose()  # type: ignore[attr-defined]
    assert of_kind(third, "thinking")[-1].data["thought_history_length"] == 4
    await store.close()


async def test_without_a_session_each_run_starts_afresh() -> None:
    async with FakeOpenAIServer([*TURN_ONE, *TURN_TWO]) as server:
        agent = make_agent(server)
        first = await agent.run("question one")
        second = await turn(agent, "question two", message_history=first.messages)
        await agent.model.aclose()  # type: ignore[attr-defined]
    last = of_kind(second, "thinking")[-1].data
    assert last["thought_history_length"] == 1
    assert of_kind(second, "todo")[-1].data["changed"] == ["1", "2"]


async def test_branch_contents_keep_the_newest_within_the_cap() -> None:
    async with FakeOpenAIServer(TURN_ONE[:1] + TURN_TWO[:1] + TURN_ONE[1:]) as server:
        agent = make_agent(server, thinking_branch_contents_max_chars=25)
        events = await turn(agent, "question")
        await agent.model.aclose()  # type: ignore[attr-defined]
    data = of_kind(events, "thinking")[-1].data
    # "Try the other angle." (20) is newest; "The other angle holds." (22) would pass 25
    assert data["branch_contents"] == {
        "alt": [{"thought_number": 2, "thought": "Try the other angle."}]
    }
    assert data["branch_contents_omitted"] == 1


async def test_branch_contents_can_be_turned_off() -> None:
    async with FakeOpenAIServer(TURN_ONE) as server:
        agent = make_agent(server, thinking_branch_contents=False)
        events = await turn(agent, "question")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert all("branch_contents" not in e.data for e in of_kind(events, "thinking"))


async def test_a_corrupt_stored_tool_state_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = open_store(f"sqlite:///{path}")
    async with FakeOpenAIServer(TURN_ONE) as server:
        agent = make_agent(server, store=store)
        await agent.run("question one", session_id="s1")
        with sqlite3.connect(path) as db:
            (header,) = db.execute("SELECT header FROM ponder_runs").fetchone()
            broken = header.replace('"recorded":2', '"recorded":"many"')
            assert broken != header
            db.execute("UPDATE ponder_runs SET header = ?", (broken,))
        with pytest.raises(StoreError, match="sequential_thinking"):
            await agent.run("question two", session_id="s1")
        await agent.model.aclose()  # type: ignore[attr-defined]
    await store.close()
