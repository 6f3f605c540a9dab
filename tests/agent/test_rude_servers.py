"""Whole runs against rude servers: degradations reported, empty answers not "answered"."""

from collections.abc import Iterator
from typing import Any

import pytest

from ponder import Agent
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def _agent(server: FakeOpenAIServer, model: str = "openai:m", **config: Any) -> Agent:
    return Agent(
        model,
        tools=[add],
        base_url=server.base_url,
        api_key="k",
        agent_thought_mode="chat",
        max_retries=0,
        **config,
    )


SCRIPT = [
    FakeReply(tool_calls=[FakeToolCall(name="add", arguments={"a": 17, "b": 23})]),
    FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "40"})]),
    "40",
]


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_run_against_a_llamacpp_like_server_degrades_and_finishes(streamed: bool) -> None:
    quirks = ["error_on_required", "error_on_null_content", "refuse_streamed_tools"]
    async with FakeOpenAIServer(SCRIPT, quirks=quirks) as server:
        agent = _agent(server)
        if streamed:
            events = [e async for e in agent.stream("What is 17 + 23?")]
        else:
            events = []
            agent.on_event()(events.append)
            result = await agent.run("What is 17 + 23?")
    finished = of_kind(events, "run_finished")[0]
    assert finished.output == "40" and finished.stop_reason == "answered"
    degraded = {e.feature: e.source for e in of_kind(events, "model_degraded")}
    assert degraded["required_tool_choice"] == "detected"
    assert degraded["null_content"] == "detected"
    assert ("stream_tool_calls" in degraded) is streamed
    assert len(of_kind(events, "model_degraded")) == len(degraded)  # once per feature
    assert of_kind(events, "tool_call_finished")[0].output == "40"
    if not streamed:
        assert result.output == "40"


async def test_the_llamacpp_profile_needs_no_failed_request() -> None:
    async with FakeOpenAIServer(
        SCRIPT, quirks=["error_on_required", "error_on_null_content"]
    ) as server:
        events = [e async for e in _agent(server, "llamacpp:m").stream("What is 17 + 23?")]
    assert of_kind(events, "run_finished")[0].output == "40"
    assert len(server.requests) == 3
    sources = {e.source for e in of_kind(events, "model_degraded")}
    assert sources == {"profile"}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (FakeReply(content="  "), "empty_answer"),
        (FakeReply(content="", finish_reason="content_filter"), "content_filter"),
    ],
)
async def test_no_answer_twice_stops_with_a_reason(reply: FakeReply, reason: str) -> None:
    async with FakeOpenAIServer([reply, reply]) as server:
        events = [e async for e in _agent(server, agent_strategy="no-action").stream("hi")]
    finished = of_kind(events, "run_finished")[0]
    assert finished.stop_reason == reason
    assert [e.retrying for e in of_kind(events, "model_unanswered")] == [True, False]
    assert len(server.requests) == 2


async def test_no_answer_once_is_retried() -> None:
    async with FakeOpenAIServer(["", "hello"]) as server:
        events = [e async for e in _agent(server, agent_strategy="no-action").stream("hi")]
    finished = of_kind(events, "run_finished")[0]
    assert (finished.output, finished.stop_reason) == ("hello", "answered")
