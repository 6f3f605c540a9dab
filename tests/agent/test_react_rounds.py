"""The ReAct round, end to end on a scripted model, in every thought mode."""

from __future__ import annotations

import pytest

from ponder.agent import Agent
from ponder.events import Event
from ponder.messages import AssistantMessage, ToolMessage
from ponder.models import ForceTool, ScriptedModel, call_tools, reply
from ponder.tools import tool

from .scripts import of_kind, stop, think


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def offered(request: object) -> list[str]:
    return [t.name for t in request.tools]  # type: ignore[attr-defined]


async def collect(agent: Agent, prompt: str) -> list[Event]:
    return [event async for event in agent.stream(prompt)]


async def test_full_round_sequence_with_forced_reasoning() -> None:
    model = ScriptedModel(
        [
            think("I need two sums."),
            call_tools(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})),
            think("Both sums are known.", last_step="added"),
            stop("computed 3 and 7"),
            reply("1+2=3 and 3+4=7."),
        ]
    )
    agent = Agent(model, tools=[add], instructions="Be brief.", enable_thinking_tool=False)
    events = await collect(agent, "Add 1+2 and 3+4.")

    choices = [r.tool_choice for r in model.requests]
    assert choices == [
        ForceTool("think_and_reason"),
        "required",
        ForceTool("think_and_reason"),
        "required",
        "auto",
    ]
    assert offered(model.requests[1]) == [
        "add",
        "think_and_reason",
        "processing_message",
        "agent_stop",
    ]
    reasoning = of_kind(events, "reasoning")
    assert [(e.round, e.summary) for e in reasoning] == [
        (1, "I need two sums."),
        (2, "Both sums are known."),
    ]
    finished = of_kind(events, "tool_call_finished")
    assert sorted(e.output for e in finished) == ["3", "7"]
    assert "".join(e.text for e in of_kind(events, "text_delta")) == "1+2=3 and 3+4=7."
    done = of_kind(events, "run_finished")[0]
    assert done.output == "1+2=3 and 3+4=7." and done.stop_reason == "answered"
    # the stop result carries the final-answer instruction into the context
    stop_result = [m for m in model.requests[4].messages if isinstance(m, ToolMessage)][-1]
    assert stop_result.name == "agent_stop" and "must NOT call any tools" in stop_result.content
    # every event is stamped with the run id and an increasing sequence number
    assert len({e.run_id for e in events}) == 1
    assert [e.seq for e in events] == sorted(e.seq for e in events)


async def test_reasoning_mode_forces_thinking_only_in_the_first_round() -> None:
    model = ScriptedModel(
        [think("plan"), call_tools(("add", {"a": 1, "b": 1})), stop(), reply("2")]
    )
    agent = Agent(model, tools=[add], agent_thought_mode="reasoning", enable_thinking_tool=False)
    result = await agent.run("1+1?")
    assert result.output == "2"
    assert [r.tool_choice for r in model.requests] == [
        ForceTool("think_and_reason"),
        "required",
        "required",
        "auto",
    ]


async def test_inline_mode_offers_thinking_beside_the_action_tools() -> None:
    model = ScriptedModel(
        [
            call_tools(("think_and_reason", {"summary": "add them"}), ("add", {"a": 2, "b": 2})),
            stop(),
            reply("4"),
        ]
    )
    agent = Agent(model, tools=[add], agent_thought_mode="inline", enable_thinking_tool=False)
    events = await collect(agent, "2+2?")
    assert [r.tool_choice for r in model.requests] == ["required", "required", "auto"]
    assert "think_and_reason" in offered(model.requests[0])
    assert [e.summary for e in of_kind(events, "reasoning")] == ["add them"]
    assert of_kind(events, "run_finished")[0].output == "4"


async def test_chat_thought_mode_turns_reasoning_off() -> None:
    model = ScriptedModel([call_tools(("add", {"a": 2, "b": 3})), stop(), reply("5")])
    agent = Agent(model, tools=[add], agent_thought_mode="chat", enable_thinking_tool=False)
    result = await agent.run("2+3?")
    assert result.output == "5"
    assert all("think_and_reason" not in offered(r) for r in model.requests)
    assert [r.tool_choice for r in model.requests] == ["required", "required", "auto"]


async def test_a_tool_call_after_stop_keeps_the_loop_going() -> None:
    model = ScriptedModel([stop(), call_tools(("add", {"a": 5, "b": 5})), reply("10")])
    agent = Agent(model, tools=[add], agent_thought_mode="chat", enable_thinking_tool=False)
    result = await agent.run("5+5?")
    assert result.output == "10"
    assert [r.tool_choice for r in model.requests] == ["required", "auto", "auto"]
    assert result.rounds == 2


@pytest.mark.parametrize("enabled", [True, False])
async def test_middle_messages_on_and_off(enabled: bool) -> None:
    model = ScriptedModel(
        [call_tools(("processing_message", {"content": "Looking it up"})), stop(), reply("ok")]
    )
    agent = Agent(
        model, agent_thought_mode="chat", agent_middle_message=enabled, enable_thinking_tool=False
    )
    events = await collect(agent, "hi")
    assert ("processing_message" in offered(model.requests[0])) is enabled
    middle = of_kind(events, "middle_message")
    result = [m for m in model.requests[1].messages if isinstance(m, ToolMessage)][-1]
    if enabled:
        assert [e.content for e in middle] == ["Looking it up"]
        assert result.content == "Sent a message to user: Looking it up"
    else:
        assert middle == []
        assert result.is_error and "unknown tool" in result.content.lower()


async def test_no_action_strategy_offers_no_tools() -> None:
    model = ScriptedModel([reply("Hello!")])
    agent = Agent(model, tools=[add], agent_strategy="no-action")
    result = await agent.run("hi")
    assert result.output == "Hello!"
    assert model.requests[0].tools == [] or list(model.requests[0].tools) == []


async def test_hybrid_react_is_deprecated_and_runs_react() -> None:
    model = ScriptedModel([think("x"), stop(), reply("done")])
    with pytest.warns(DeprecationWarning, match="hybrid-react"):
        agent = Agent(model, agent_strategy="hybrid-react", enable_thinking_tool=False)
    assert (await agent.run("go")).output == "done"


async def test_messages_of_a_turn_are_a_valid_conversation_for_the_next() -> None:
    model = ScriptedModel([think("x"), stop(), reply("first"), reply("second")])
    agent = Agent(model, enable_thinking_tool=False)
    first = await agent.run("one")
    chat = Agent(model, agent_strategy="no-action")
    second = await chat.run("two", message_history=first.messages)
    assert second.output == "second"
    sent = model.requests[-1].messages
    assert [m.kind for m in sent][:2] == ["system", "user"]
    assert isinstance(sent[-2], AssistantMessage) and sent[-2].text == "first"
    assert sent[-1].kind == "user"
