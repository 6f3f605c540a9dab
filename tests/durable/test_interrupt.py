"""`RunStream.interrupt`: a run stopped as ``interrupted`` resumes to the end; ``cancel``
ends it for good."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.store import SQLiteStore
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

CALLS: list[int] = []


@tool
def measure(n: int) -> int:
    """Measure something.

    Args:
        n: Which thing.
    """
    CALLS.append(n)
    return n * 10


def call(name: str, delay: float = 0.0, **arguments: object) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=arguments)], delay=delay)


# the request after the call hangs, so the run is still going when it is stopped
SCRIPT = [
    call("think_and_reason", last_step="", summary="measure"),
    call("measure", n=1),
    call("think_and_reason", delay=60, last_step="measured", summary="stop"),
    call("think_and_reason", last_step="measured", summary="stop"),
    call("agent_stop", result="10"),
    FakeReply(content="it measures 10"),
]


def agent_for(server: FakeOpenAIServer) -> Agent:
    return Agent("openai:m", base_url=server.base_url, api_key="k", tools=[measure])


async def stop_after_the_call(agent: Agent, store: SQLiteStore, how: str) -> str:
    stream = agent.stream("measure it", store=store)
    kinds: list[str] = []
    with pytest.raises(asyncio.CancelledError):
        async for event in stream:
            kinds.append(event.kind)
            if event.kind == "tool_call_finished":
                getattr(stream, how)()
                getattr(stream, how)()  # a second call changes nothing
    assert kinds[-1] == "run_cancelled"
    return stream.run_id


async def test_an_interrupted_run_resumes_without_redoing_its_call(tmp_path: Path) -> None:
    CALLS.clear()
    store = SQLiteStore(tmp_path / "runs.db")
    with FakeOpenAIServer(SCRIPT) as server:
        agent = agent_for(server)
        run_id = await stop_after_the_call(agent, store, "interrupt")
        assert (await store.load(run_id)).record.status == "interrupted"
        done = await agent.resume(run_id, store=store)
        await agent.aclose()
    assert done.status == "completed" and done.output == "it measures 10"
    assert CALLS == [1]
    await store.close()


async def test_a_cancelled_run_cannot_be_resumed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    with FakeOpenAIServer(SCRIPT) as server:
        agent = agent_for(server)
        run_id = await stop_after_the_call(agent, store, "cancel")
        assert (await store.load(run_id)).record.status == "cancelled"
        with pytest.raises(UserError, match="was cancelled"):
            await agent.resume(run_id, store=store)
    await store.close()
