"""Crossings of the built-in tools, the guards and the context options, end to end."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.messages import AssistantMessage, Message, TextPart, ToolMessage, UserMessage
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.tools import tool

from .support import of_kind, sent_text

HISTORY_TEXT = ("EARLIER-QUESTION", "EARLIER-ANSWER")


@pytest.mark.parametrize(
    "name", ["think_and_reason", "agent_stop", "verify_reasoning", "update_step"]
)
def test_a_user_tool_named_like_a_builtin_is_refused_naming_it(name: str) -> None:
    @tool(name=name)
    def clash(text: str) -> str:
        """Echo.

        Args:
            text: Anything.
        """
        return text

    with pytest.raises(UserError, match=name):
        Agent(ScriptedModel([]), tools=[clash])


def _history() -> list[Message]:
    return [
        UserMessage(content=HISTORY_TEXT[0]),
        AssistantMessage(parts=(TextPart(text=HISTORY_TEXT[1]),)),
    ]


def _verdict(flagged: bool) -> ModelResponse:
    return reply(json.dumps({"flagged": flagged, "category": "none", "reason": ""}))


@pytest.mark.parametrize("minimal", [True, False])
async def test_the_report_guard_reads_earlier_turns_only_without_minimal_context(
    minimal: bool,
) -> None:
    model = ScriptedModel([_verdict(False), reply("hi")])
    agent = Agent(model, enable_report=True, tool_calling_mode="none", use_minimal_context=minimal)
    result = await agent.run("CURRENT-QUESTION", message_history=_history())
    assert result.output == "hi"
    report, answer = model.requests
    for request in (report, answer):
        text = sent_text(request.messages)
        assert "CURRENT-QUESTION" in text
        assert ("EARLIER-QUESTION" in text) is (not minimal)
        assert ("EARLIER-ANSWER" in text) is (not minimal)


def _thought(number: int, text: str, **extra: Any) -> ModelResponse:
    args = {
        "thought": text,
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": True,
        **extra,
    }
    return call_tools(("sequential_thinking", args))


def _thinking_results(messages: list[Message]) -> list[str]:
    return [
        m.content
        for m in messages
        if isinstance(m, ToolMessage) and m.name == "sequential_thinking"
    ]


async def test_a_branching_thought_shows_the_model_the_other_branches() -> None:
    script: list[ScriptEntry] = [
        _thought(1, "MAIN-LINE start"),
        _thought(2, "ALPHA-IDEA first branch", branch_from_thought=1, branch_id="alpha"),
        _thought(2, "BETA-IDEA second branch", branch_from_thought=1, branch_id="beta"),
        call_tools(("agent_stop", {})),
        "done",
    ]
    model = ScriptedModel(script)
    agent = Agent(model, agent_thought_mode="chat", thinking_branch_contents_max_chars=2000)
    result = await agent.run("q")
    first, alpha, beta = _thinking_results(result.messages)
    assert "BRANCH" not in first.upper() or "ALPHA-IDEA" not in first
    assert "ALPHA-IDEA" not in alpha  # its own thought is not repeated back
    assert "ALPHA-IDEA" in beta and "alpha" in beta  # the model reads the other branch
    data = [m for m in result.messages if isinstance(m, ToolMessage)][2]
    assert data.content == beta


async def test_branch_contents_stay_within_their_cap_in_what_the_model_reads() -> None:
    long = "X" * 300
    script: list[ScriptEntry] = [
        _thought(1, "root"),
        _thought(2, f"ALPHA {long}", branch_from_thought=1, branch_id="alpha"),
        _thought(2, "BETA", branch_from_thought=1, branch_id="beta"),
        call_tools(("agent_stop", {})),
        "done",
    ]
    agent = Agent(
        ScriptedModel(script), agent_thought_mode="chat", thinking_branch_contents_max_chars=50
    )
    result = await agent.run("q")
    beta = _thinking_results(result.messages)[-1]
    assert long not in beta and "left out" in beta


async def test_branch_contents_off_keeps_the_plain_result() -> None:
    script: list[ScriptEntry] = [
        _thought(1, "root"),
        _thought(2, "ALPHA-IDEA", branch_from_thought=1, branch_id="alpha"),
        _thought(2, "BETA", branch_from_thought=1, branch_id="beta"),
        call_tools(("agent_stop", {})),
        "done",
    ]
    agent = Agent(ScriptedModel(script), agent_thought_mode="chat", thinking_branch_contents=False)
    result = await agent.run("q")
    assert "ALPHA-IDEA" not in _thinking_results(result.messages)[-1]


@pytest.mark.parametrize("mode", ["rag", "none"])
def test_step_react_under_a_mode_without_its_loop_is_refused(mode: str) -> None:
    with pytest.raises(UserError, match=f"step-react.*{mode}|{mode}.*step-react"):
        Agent(ScriptedModel([]), agent_workflow="step-react", tool_calling_mode=mode)


def test_step_react_with_the_no_action_strategy_is_refused() -> None:
    with pytest.raises(UserError, match="step-react"):
        Agent(ScriptedModel([]), agent_workflow="step-react", agent_strategy="no-action")


async def test_step_blocks_beyond_the_reasoning_depth_are_reported() -> None:
    summary = "\n".join(f"[Step {i}/4] [analyze] part {i}" for i in range(1, 5))
    script: list[ScriptEntry] = [
        call_tools(("think_and_reason", {"summary": summary, "last_step": ""})),
        call_tools(("agent_stop", {})),
        "done",
    ]
    agent = Agent(
        ScriptedModel(script),
        enable_thinking_tool=False,
        structured_reasoning=True,
        reasoning_depth=2,
    )
    stream = agent.stream("q")
    events = [e async for e in stream]
    result = stream.result
    blocks = of_kind(events, "structured_reasoning")
    assert [b.step_index for b in blocks] == [1, 2]
    [recorded] = [m.content for m in result.messages if isinstance(m, ToolMessage)][:1]
    assert "reasoning_depth" in recorded and "2 of 4" in recorded
