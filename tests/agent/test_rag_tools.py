"""RAG mode without an index, on the wire: one retrieval round with the agent's own tools
(no agent_stop, no loop), then the answer with tools off, from a minimal context."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.messages import UserMessage
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind

HISTORY = [UserMessage(content="EARLIER-TURN")]


@tool
def search(query: str) -> str:
    """Search the knowledge base.

    Args:
        query: What to search for.
    """
    return f"found: {query} is 42"


def rag_agent(server: FakeOpenAIServer, **config: Any) -> Agent:
    return Agent(
        "openai:fake",
        tools=[search],
        base_url=server.base_url,
        api_key="k",
        instructions="You answer from the knowledge base.",
        tool_calling_mode="rag",
        **config,
    )


def names(body: dict[str, object]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]  # type: ignore[attr-defined]


async def test_one_round_with_the_agents_tools_then_the_answer() -> None:
    calls = [
        FakeToolCall(name="search", id="s1", arguments={"query": "answer"}),
        FakeToolCall(name="search", id="s2", arguments={"query": "question"}),
    ]
    async with FakeOpenAIServer([FakeReply(tool_calls=calls), "It is 42."]) as server:
        agent = rag_agent(server)
        events = [e async for e in agent.stream("What is the answer?", message_history=HISTORY)]
        await agent.model.aclose()  # type: ignore[attr-defined]
    retrieval, answer = server.requests
    assert names(retrieval) == ["search"] and retrieval["tool_choice"] == "auto"
    assert [m["role"] for m in retrieval["messages"]] == ["system", "user"]
    assert "EARLIER-TURN" not in json.dumps(server.requests)
    assert names(answer) == ["search"] and answer["tool_choice"] == "none"  # the same prefix
    results = [m["content"] for m in answer["messages"] if m["role"] == "tool"]
    assert results == ["found: answer is 42", "found: question is 42"]
    assert of_kind(events, "retrieval")[0].sources == ["search"]
    assert of_kind(events, "run_finished")[0].output == "It is 42."
    assert len(of_kind(events, "tool_call_finished")) == 2


async def test_a_reply_without_calls_is_the_answer() -> None:
    async with FakeOpenAIServer(["Nothing to look up: hello!"]) as server:
        agent = rag_agent(server)
        result = await agent.run("hi")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "Nothing to look up: hello!" and len(server.requests) == 1


async def test_calls_in_the_answer_are_refused_and_never_loop() -> None:
    again = FakeReply(
        content="It is 42.",
        tool_calls=[FakeToolCall(name="search", id="s2", arguments={"query": "more"})],
    )
    first = FakeReply(tool_calls=[FakeToolCall(name="search", id="s1", arguments={"query": "a"})])
    script = [first, again]
    async with FakeOpenAIServer(script) as server:
        agent = rag_agent(server)
        result = await agent.run("What is the answer?")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "It is 42." and len(server.requests) == 2
    assert result.messages[-1].kind == "tool" and result.messages[-1].is_error


async def test_a_call_to_an_unknown_tool_gets_an_error_result() -> None:
    script: list[FakeReply | str] = [
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="x", arguments={})]),
        "ok",
    ]
    async with FakeOpenAIServer(script) as server:
        agent = rag_agent(server)
        result = await agent.run("q")
        await agent.model.aclose()  # type: ignore[attr-defined]
    tool_results = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 1 and "agent_stop" in tool_results[0]["content"]
    assert result.output == "ok"


async def test_neither_an_index_nor_tools_is_a_user_error() -> None:
    async with FakeOpenAIServer(["x"]) as server:
        agent = Agent("openai:fake", base_url=server.base_url, api_key="k", tool_calling_mode="rag")
        with pytest.raises(UserError, match="rag_index_path"):
            await agent.run("anything")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert server.requests == []


async def test_an_approval_in_the_retrieval_round_suspends_and_resumes() -> None:
    from ponder.store import open_store

    runs: list[str] = []

    @tool(requires_approval=True)
    def fetch(url: str) -> str:
        """Fetch a page.

        Args:
            url: The page.
        """
        runs.append(url)
        return f"page {url}: 42"

    store = open_store("memory://")
    first = FakeReply(tool_calls=[FakeToolCall(name="fetch", id="f1", arguments={"url": "u"})])
    async with FakeOpenAIServer([first, "It is 42."]) as server:
        agent = Agent(
            "openai:fake",
            tools=[fetch],
            base_url=server.base_url,
            api_key="k",
            tool_calling_mode="rag",
            store=store,
        )
        suspended = await agent.run("What is on the page?")
        assert suspended.status == "suspended" and runs == []
        done = await agent.resume(suspended.run_id, "approve")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert (done.status, done.output, runs) == ("completed", "It is 42.", ["u"])
    assert len(server.requests) == 2  # the retrieval round was not asked again
    await store.close()
