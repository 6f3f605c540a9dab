"""A whole agent through the official `openai` SDK against the fake OpenAI HTTP server."""

from __future__ import annotations

from ponder.agent import Agent
from ponder.models import ForceTool
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


SCRIPT = [
    FakeReply(
        tool_calls=[
            FakeToolCall(
                name="think_and_reason", id="t1", arguments={"summary": "Add both pairs at once."}
            )
        ]
    ),
    FakeReply(
        reasoning="Two independent sums.",
        tool_calls=[
            FakeToolCall(name="add", id="a1", arguments={"a": 1, "b": 2}),
            FakeToolCall(name="add", id="a2", arguments='{"a": "3", "b": 4}'),
        ],
    ),
    FakeReply(tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})]),
    FakeReply(content="1+2=3 and 3+4=7.", input_tokens=50, output_tokens=9),
]


async def test_an_agent_runs_through_the_openai_sdk_over_http() -> None:
    async with FakeOpenAIServer(SCRIPT) as server:
        agent = Agent(
            "deepseek:deepseek-chat",
            tools=[add],
            base_url=server.base_url,
            api_key="test-key",
            enable_thinking_tool=False,
            agent_thought_mode="reasoning",
        )
        stream = agent.stream("Add 1+2 and 3+4.")
        events = [event async for event in stream]
        result = stream.result
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "1+2=3 and 3+4=7."
    bodies = server.requests
    forced = ForceTool("think_and_reason")
    assert bodies[0]["tool_choice"] == {"type": "function", "function": {"name": forced.name}}
    assert [b["tool_choice"] for b in bodies[1:]] == ["required", "required", "auto"]
    assert all(b["stream"] for b in bodies)
    tool_messages = [m for m in bodies[2]["messages"] if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_messages[-2:]] == [
        ("a1", "3"),
        ("a2", "7"),
    ]
    # DeepSeek's reasoning_content is replayed on the next request
    replayed = [m for m in bodies[2]["messages"] if m.get("reasoning_content")]
    assert replayed and replayed[0]["reasoning_content"] == "Two independent sums."
    assert "".join(e.text for e in of_kind(events, "text_delta")) == result.output
    usage = of_kind(events, "usage")
    assert usage[-1].requests == 4 and result.usage.requests == 4
    assert result.usage.input_tokens >= 50


async def test_the_stream_result_is_only_available_after_the_run() -> None:
    import pytest

    from ponder.exceptions import UserError

    async with FakeOpenAIServer(["hello"]) as server:
        agent = Agent(
            "openai:gpt-4o-mini", base_url=server.base_url, api_key="k", agent_strategy="no-action"
        )
        stream = agent.stream("hi")
        with pytest.raises(UserError, match="iterate the stream"):
            _ = stream.result
        kinds = [e.kind async for e in stream]
        assert stream.result.output == "hello"
        with pytest.raises(UserError, match="only once"):
            _ = [e async for e in stream]
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
