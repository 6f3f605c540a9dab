"""Sessions where they meet concurrency, stores and no store: no turn is ever lost."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ponder.agent import Agent
from ponder.exceptions import ModelError, SessionLeaseError, UserError
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.store import Store, open_store
from ponder.testing import FakeOpenAIServer
from ponder.tools import tool
from tests.store.conftest import PG_DSN, drop_schema, isolated_schema, postgres_available

from .support import user_turns


def echo(request: ModelRequest) -> str:
    last = [m for m in request.messages if isinstance(m, UserMessage)][-1]
    return f"re: {last.content}"


def chat_agent(**options: object) -> Agent:
    return Agent(ScriptedModel(echo), tool_calling_mode="none", **options)  # type: ignore[arg-type]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    schema = None
    if request.param == "memory":
        made = open_store("memory:")
    elif request.param == "sqlite":
        made = open_store(tmp_path / "runs.db")
    else:
        if not postgres_available():
            pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
        schema = isolated_schema()
        made = open_store(f"{PG_DSN}?options=-csearch_path%3D{schema}")
    yield made
    await made.close()
    if schema is not None:
        drop_schema(schema)


async def test_concurrent_turns_of_one_session_are_serialised(store: Store) -> None:
    session = f"s-{os.urandom(4).hex()}"
    async with FakeOpenAIServer(["ok"] * 4) as server:  # real HTTP: the turns interleave
        agent = Agent(
            "openai:fake", base_url=server.base_url, api_key="k", tool_calling_mode="none"
        )
        await agent.run("T0", session_id=session, store=store)
        await asyncio.gather(
            agent.run("A", session_id=session, store=store),
            agent.run("B", session_id=session, store=store),
        )
        last = await agent.run("C", session_id=session, store=store)
        await agent.model.aclose()  # type: ignore[attr-defined]
    turns = user_turns(last.messages)
    assert turns[0] == "T0" and turns[-1] == "C"
    assert sorted(turns[1:3]) == ["A", "B"]  # both turns kept, one after the other


async def test_turns_of_two_sessions_still_run_side_by_side() -> None:
    store = open_store("memory:")
    agent = chat_agent()
    results = await asyncio.gather(
        *(agent.run(f"Q{i}", session_id=f"own-{i}", store=store) for i in range(4))
    )
    assert [user_turns(r.messages) for r in results] == [[f"Q{i}"] for i in range(4)]


async def test_a_session_without_a_store_continues_in_the_process() -> None:
    agent = chat_agent()
    await agent.run("first", session_id="s")
    second = await agent.run("second", session_id="s")
    assert user_turns(second.messages) == ["first", "second"]
    other = await agent.run("elsewhere", session_id="t")
    assert user_turns(other.messages) == ["elsewhere"]
    assert user_turns((await agent.run("no session")).messages) == ["no session"]


async def test_concurrent_turns_without_a_store_are_serialised_too() -> None:
    agent = chat_agent()
    await agent.run("T0", session_id="s")
    await asyncio.gather(agent.run("A", session_id="s"), agent.run("B", session_id="s"))
    last = await agent.run("C", session_id="s")
    turns = user_turns(last.messages)
    assert turns[0] == "T0" and sorted(turns[1:3]) == ["A", "B"] and turns[-1] == "C"


async def test_given_history_wins_over_the_kept_session() -> None:
    agent = chat_agent()
    await agent.run("first", session_id="s")
    fresh = await agent.run("again", session_id="s", message_history=[UserMessage(content="x")])
    assert user_turns(fresh.messages) == ["x", "again"]


async def test_a_session_without_a_store_keeps_its_thinking_state() -> None:
    def thought(n: int) -> ModelResponse:
        args = {
            "thought": f"thought {n}",
            "thought_number": n,
            "total_thoughts": 2,
            "next_thought_needed": n < 2,
        }
        return call_tools(("sequential_thinking", args))

    stop = call_tools(("agent_stop", {}))
    model = ScriptedModel([thought(1), stop, "one", thought(2), stop, "two"])
    agent = Agent(model, agent_thought_mode="chat")
    await agent.run("first", session_id="s")
    stream = agent.stream("second", session_id="s")
    events = [e async for e in stream]
    [shown] = [e for e in events if e.kind == "thinking"]
    assert shown.data["thought_history_length"] == 2  # the first turn's thought is kept


ELSEWHERE = "another-host:1:feedbeef"


def tool_agent(store: Store, *tools: object) -> Agent:
    """An agent that calls its first tool once, then stops and answers ``done``."""

    def script(request: ModelRequest) -> ModelResponse:
        asked = max(i for i, m in enumerate(request.messages) if isinstance(m, UserMessage))
        done = sum(isinstance(m, ToolMessage) for m in request.messages[asked:])
        if done == 0:
            return call_tools((tools[0].name, {}, "t1"))  # type: ignore[attr-defined]
        return call_tools(("agent_stop", {}, "s1")) if done == 1 else reply("done")

    return Agent(
        ScriptedModel(script),
        tools=list(tools),  # type: ignore[arg-type]
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )


@tool(requires_approval=True)
async def deploy() -> str:
    """Deploy."""
    return "deployed"


async def test_a_turn_after_a_suspended_turn_is_refused_until_it_is_resumed(
    store: Store,
) -> None:
    session = f"s-{os.urandom(4).hex()}"
    agent = tool_agent(store, deploy)
    suspended = await agent.run("ship", session_id=session)
    assert suspended.status == "suspended"
    with pytest.raises(UserError, match=f"last turn, run '{suspended.run_id}', is suspended"):
        await agent.run("next", session_id=session)
    resumed = await agent.resume(suspended.run_id, "approve")
    assert resumed.status == "completed"
    after = await agent.run("next", session_id=session)
    assert user_turns(after.messages) == ["ship", "next"]  # continues the resumed turn


async def test_the_session_lease_is_given_back_however_a_turn_ends(store: Store) -> None:
    session = f"s-{os.urandom(4).hex()}"
    store.turn_wait_seconds = 0.0  # a lease still held would refuse the next turn at once
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never return."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    def broken(request: ModelRequest) -> ModelResponse:
        raise ModelError("the provider is down")

    with pytest.raises(ModelError):
        await Agent(ScriptedModel(broken), store=store).run("fails", session_id=session)
    hanging = asyncio.create_task(tool_agent(store, hang).run("hangs", session_id=session))
    await started.wait()
    hanging.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hanging
    suspended = await tool_agent(store, deploy).run("waits", session_id=session)
    await store.set_status(suspended.run_id, "cancelled")  # the session moves past it
    last = await chat_agent().run("done", session_id=session, store=store)
    assert last.status == "completed"


async def test_an_expired_session_lease_of_another_host_is_taken_over(store: Store) -> None:
    session = f"s-{os.urandom(4).hex()}"
    await store.acquire_session(session, ELSEWHERE, 0.3)  # its holder stopped renewing
    turn = await chat_agent().run("after", session_id=session, store=store)
    assert turn.status == "completed"


async def test_a_turn_waits_for_a_live_holder_then_is_refused_naming_it(store: Store) -> None:
    session = f"s-{os.urandom(4).hex()}"
    store.turn_wait_seconds = 0.3
    await store.acquire_session(session, ELSEWHERE, 60.0)
    with pytest.raises(SessionLeaseError, match="another-host:1:feedbeef") as refused:
        await chat_agent().run("waits", session_id=session, store=store)
    assert refused.value.session_id == session and refused.value.waited is not None
    assert await store.latest_turn(session) is None  # nothing of the turn was stored


async def test_a_resumed_turn_holds_its_session_too(store: Store) -> None:
    session = f"s-{os.urandom(4).hex()}"
    agent = tool_agent(store, deploy)
    suspended = await agent.run("ship", session_id=session)
    store.turn_wait_seconds = 0.3
    await store.acquire_session(session, ELSEWHERE, 60.0)  # another process's turn
    with pytest.raises(SessionLeaseError, match="another-host"):
        await agent.resume(suspended.run_id, "approve")
    await store.release_session(session, ELSEWHERE)
    assert (await agent.resume(suspended.run_id, "approve")).status == "completed"
