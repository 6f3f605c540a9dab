"""The bot's settings with their meaning, on the wire: the report guard's inputs and its
action, the block messages, and the refusal rounds after a limit."""

from __future__ import annotations

import json
from typing import Any

from ponder.agent import Agent
from ponder.agent.strategies.base import REFUSALS_EXHAUSTED
from ponder.messages import AssistantMessage, Message, TextPart, UserMessage
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind

FLAGGED = FakeReply(content=json.dumps({"flagged": True, "category": "abuse", "reason": "r"}))


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def agent_on(server: FakeOpenAIServer, **config: Any) -> Agent:
    return Agent("openai:fake", base_url=server.base_url, api_key="k", **config)


HISTORY: list[Message] = [
    UserMessage(content="earlier question"),
    AssistantMessage(parts=(TextPart(text="earlier answer"),)),
]


async def test_the_guard_checks_instructions_and_context_by_default() -> None:
    async with FakeOpenAIServer([FLAGGED]) as server:
        agent = agent_on(server, enable_report=True, instructions="You are Amrita.")
        result = await agent.run("the message", message_history=HISTORY)
        await agent.model.aclose()  # type: ignore[attr-defined]
    [body] = server.requests
    checked = body["messages"][1]["content"]
    assert "<system_prompt>\nYou are Amrita.\n</system_prompt>" in checked
    assert "user: earlier question\nassistant: earlier answer" in checked
    assert body["messages"][-1] == {"role": "user", "content": "the message"}
    assert (result.stop_reason, result.output) == (
        "reported",
        "Sorry, I can't help with that request.",
    )


async def test_exclusions_leave_only_the_message() -> None:
    async with FakeOpenAIServer([FLAGGED]) as server:
        agent = agent_on(
            server,
            enable_report=True,
            instructions="You are Amrita.",
            report_exclude_system_prompt=True,
            report_exclude_context=True,
        )
        await agent.run("the message", message_history=HISTORY)
        await agent.model.aclose()  # type: ignore[attr-defined]
    [body] = server.requests
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "the message"


async def test_without_report_then_block_the_run_goes_on_after_the_event() -> None:
    async with FakeOpenAIServer([FLAGGED, "a normal answer"]) as server:
        agent = agent_on(
            server, enable_report=True, report_then_block=False, tool_calling_mode="none"
        )
        events = [e async for e in agent.stream("the message")]
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert len(of_kind(events, "report_raised")) == 1
    assert of_kind(events, "run_finished")[0].output == "a normal answer"
    assert len(server.requests) == 2


async def test_one_of_several_block_messages_is_the_answer() -> None:
    choices = ("Blocked one.", "Blocked two.", "Blocked three.")
    outputs = set()
    async with FakeOpenAIServer([FLAGGED] * 12) as server:
        agent = agent_on(server, enable_report=True, report_block_message=list(choices))
        for _ in range(12):
            outputs.add((await agent.run("the message")).output)
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert outputs <= set(choices) and len(outputs) >= 2


def add_call(call_id: str) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name="add", id=call_id, arguments={"a": 1, "b": 2})])


async def test_calls_after_the_limit_are_refused_then_the_turn_closes() -> None:
    script = [add_call("c1"), add_call("c2"), add_call("c3"), add_call("c4")]
    async with FakeOpenAIServer(script) as server:
        agent = agent_on(
            server,
            tools=[add],
            agent_tool_call_limit=1,
            agent_tool_refusal_rounds=3,
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        result = await agent.run("add forever")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert len(server.requests) == 4  # one round, then three refused answers
    # tools off: the round's tools stay (the same prompt prefix), with tool_choice "none"
    assert all(b["tool_choice"] == "none" for b in server.requests[1:])
    assert all(b["tools"] == server.requests[0]["tools"] for b in server.requests[1:])
    refusals = [
        m
        for m in server.requests[3]["messages"]
        if m["role"] == "tool" and "tools are off" in m["content"]
    ]
    assert [m["tool_call_id"] for m in refusals] == ["c2", "c3"]
    assert (result.output, result.stop_reason) == (REFUSALS_EXHAUSTED, "round_limit")


async def test_an_answer_after_a_refusal_is_accepted() -> None:
    async with FakeOpenAIServer([add_call("c1"), add_call("c2"), "3, finally"]) as server:
        agent = agent_on(
            server,
            tools=[add],
            agent_tool_call_limit=1,
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        result = await agent.run("add once")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "3, finally" and len(server.requests) == 3
