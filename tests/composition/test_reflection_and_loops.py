"""Reflection and the loop guard where they meet other features: step-react plans, checks
answered out of turn, and rounds that repeat their summary while making progress."""

from __future__ import annotations

import json
from typing import Any

from ponder.agent import Agent
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.tools import tool

from .support import of_kind, sent_text

CHECKS = ("self_check", "contradiction_check", "completeness_check")


def verdict(check: str, result: str = "pass") -> tuple[str, dict[str, Any]]:
    return ("verify_reasoning", {"check_type": check, "result": result, "detail": "ok"})


def think(summary: str) -> ModelResponse:
    return call_tools(("think_and_reason", {"summary": summary, "last_step": ""}))


STOP = call_tools(("agent_stop", {"result": "4"}))


async def test_a_check_answered_as_another_type_is_asked_again() -> None:
    script: list[ScriptEntry] = [
        STOP,
        call_tools(verdict("self_check"), verdict("completeness_check")),
        call_tools(verdict("self_check")),  # asked for contradiction_check: the wrong type
        call_tools(verdict("contradiction_check")),
        "the answer",
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model, agent_thought_mode="chat", enable_thinking_tool=False, enable_reflection=True
    )
    events = [e async for e in agent.stream("q")]
    checks = {e.check_type for e in of_kind(events, "reflection")}
    assert checks == set(CHECKS)
    asked = [sent_text(r.messages[-1:]) for r in model.requests[2:4]]
    assert all("contradiction_check" in text for text in asked)
    assert of_kind(events, "run_finished")[0].output == "the answer"
    assert model.remaining == 0


async def test_a_check_never_given_is_not_a_pass() -> None:
    script: list[ScriptEntry] = [
        STOP,
        call_tools(verdict("self_check"), verdict("completeness_check")),
        call_tools(verdict("self_check")),
        call_tools(verdict("self_check")),
        STOP,  # corrected: no contradiction_check verdict; the depth is reached
        "the answer",
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
        reflection_depth=1,
    )
    result = await agent.run("q")
    assert result.output == "the answer"
    corrections = [
        r
        for r in model.requests
        if "contradiction_check" in sent_text(r.messages[-1:])
        and "REFLECTION_CORRECTION" in sent_text(r.messages[-1:])
    ]
    assert len(corrections) == 1


def _decomposition(*steps: str) -> ModelResponse:
    specs = [{"id": f"s{i}", "description": d, "depends_on": []} for i, d in enumerate(steps, 1)]
    return reply(json.dumps({"needs_decomposition": True, "reason": "two parts", "steps": specs}))


def _summary(text: str) -> ModelResponse:
    return reply(json.dumps({"summary": text, "outputs": []}))


async def test_step_react_reflects_after_the_last_step_stops_before_the_answer() -> None:
    script: list[ScriptEntry] = [
        _decomposition("find a", "find b"),
        call_tools(("agent_stop", {"result": "a=1"})),
        _summary("a is 1"),
        call_tools(("agent_stop", {"result": "b=2"})),
        call_tools(*(verdict(c) for c in CHECKS)),
        _summary("b is 2"),
        "a=1, b=2",
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model,
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
    )
    events = [e async for e in agent.stream("find a and b")]
    kinds = [e.kind for e in events]
    assert [e.check_type for e in of_kind(events, "reflection")] == list(CHECKS)
    last_step_end = max(i for i, k in enumerate(kinds) if k == "step_finished")
    assert kinds.index("reflection") < last_step_end
    assert kinds.index("reflection") > kinds.index("step_finished")  # not after step 1
    assert of_kind(events, "run_finished")[0].output == "a=1, b=2"
    assert model.remaining == 0


async def test_a_failed_reflection_in_step_react_sends_the_model_back_to_the_step() -> None:
    script: list[ScriptEntry] = [
        _decomposition("find a", "find b"),
        call_tools(("agent_stop", {"result": "a=1"})),
        _summary("a is 1"),
        call_tools(("agent_stop", {"result": "b=3"})),
        call_tools(verdict("self_check"), verdict("contradiction_check", "fail")),
        call_tools(("agent_stop", {"result": "b=2"})),  # back in step 2, stops again
        call_tools(*(verdict(c) for c in CHECKS)),
        _summary("b is 2"),
        "a=1, b=2",
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model,
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
        reflection_depth=2,
    )
    events = [e async for e in agent.stream("find a and b")]
    assert [e.attempt for e in of_kind(events, "reflection")] == [1, 1, 2, 2, 2]
    finished = [(e.step_id, e.status) for e in of_kind(events, "step_finished")]
    assert finished == [("s1", "stopped"), ("s2", "stopped")]
    assert of_kind(events, "run_finished")[0].output == "a=1, b=2"
    assert model.remaining == 0


@tool
def lookup(n: int) -> str:
    """Look up item n.

    Args:
        n: The item.
    """
    return f"item {n}"


async def test_rounds_with_one_summary_that_advance_the_thinking_are_progress() -> None:
    def thought(n: int) -> ModelResponse:
        args = {
            "thought": f"step {n}",
            "thought_number": n,
            "total_thoughts": 7,
            "next_thought_needed": n < 7,
        }
        return call_tools(("sequential_thinking", args))

    script: list[Any] = []
    for n in range(1, 8):
        script += [think("work through the thoughts"), thought(n)]
    script += [think("work through the thoughts"), STOP, "the answer"]
    model = ScriptedModel(script)
    agent = Agent(model, loop_reasoning_trigger=3)
    events = [e async for e in agent.stream("q")]
    assert of_kind(events, "loop_detected") == []
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("the answer", "answered")


async def test_a_stop_after_a_loop_correction_is_a_stop() -> None:
    script: list[Any] = []
    for _ in range(5):
        script += [think("same plan"), call_tools(("lookup", {"n": 1}))]
    script += [think("same plan"), STOP, "the answer"]
    model = ScriptedModel(script)
    agent = Agent(model, tools=[lookup], enable_thinking_tool=False, loop_reasoning_trigger=3)
    events = [e async for e in agent.stream("q")]
    assert [e.action for e in of_kind(events, "loop_detected")] == ["corrected"]
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("the answer", "answered")
