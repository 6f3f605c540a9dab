"""Limits, the loop guard and reflection: each proven to fire, each ending in an answer."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.tools import tool

from .scripts import of_kind, stop, think, verify


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def agent_for(model: ScriptedModel, **config: Any) -> Agent:
    config.setdefault("agent_thought_mode", "chat")
    return Agent(model, tools=[lookup], enable_thinking_tool=False, **config)


async def test_round_limit_is_exact_and_ends_in_an_answer() -> None:
    script = [call_tools(("lookup", {"key": f"k{i}"})) for i in range(10)]
    model = ScriptedModel([*script[:3], reply("partial answer")])
    agent = agent_for(model, agent_tool_call_limit=3)
    events = [e async for e in agent.stream("find everything")]
    assert len(model.requests) == 4
    assert len(of_kind(events, "tool_call_finished")) == 3
    last = model.requests[-1]
    assert last.tool_choice == "none" and list(last.tools) == []
    assert isinstance(last.messages[-1], UserMessage)
    assert "limit of 3 tool rounds" in last.messages[-1].content
    limit = of_kind(events, "limit_reached")
    assert [(e.limit, e.value) for e in limit] == [("rounds", 3)]
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("partial answer", "round_limit")


async def test_call_limit_is_exact_across_a_batch() -> None:
    two = call_tools(("lookup", {"key": "a"}), ("lookup", {"key": "b"}))
    model = ScriptedModel([two, two, reply("enough")])
    agent = agent_for(model, agent_max_tool_calls=3)
    result = await agent.run("look up a lot")
    assert result.tool_calls == 3
    results = [m for m in result.messages if isinstance(m, ToolMessage)]
    assert [m.is_error for m in results] == [False, False, False, True]
    assert "limit of 3 tool calls" in results[-1].content
    assert result.stop_reason == "call_limit" and result.output == "enough"


async def test_loop_guard_fires_on_repeated_calls_then_ends_a_persisting_loop() -> None:
    same = call_tools(("lookup", {"key": "same"}))
    model = ScriptedModel([same] * 6 + [reply("I got stuck repeating the same lookup.")])
    agent = agent_for(model, loop_reasoning_trigger=3)
    events = [e async for e in agent.stream("loop")]
    loops = of_kind(events, "loop_detected")
    assert [(e.action, e.repeats) for e in loops] == [("corrected", 5), ("ended", 2)]
    assert loops[0].signature == 'lookup({"key": "same"})'
    correction = model.requests[5].messages[-1]
    assert isinstance(correction, UserMessage) and "LOOP_CORRECTION" in correction.content
    final = model.requests[-1]
    assert final.tool_choice == "none" and "kept repeating" in final.messages[-1].content  # type: ignore[union-attr]
    done = of_kind(events, "run_finished")[0]
    assert done.stop_reason == "loop"


async def test_loop_guard_fires_on_repeated_reasoning_with_different_calls() -> None:
    script = []
    for i in range(4):
        script += [think("Try another key."), call_tools(("lookup", {"key": f"k{i}"}))]
    model = ScriptedModel([*script, think("Use what I have."), stop(), reply("ok")])
    agent = agent_for(model, agent_thought_mode="reasoning-required", loop_reasoning_trigger=2)
    events = [e async for e in agent.stream("search")]
    loops = of_kind(events, "loop_detected")
    assert [e.action for e in loops] == ["corrected"]
    assert loops[0].signature == 'lookup({"key": "k3"})'
    assert of_kind(events, "run_finished")[0].stop_reason == "answered"


async def test_a_loop_corrected_in_time_lets_the_run_finish_normally() -> None:
    same = call_tools(("lookup", {"key": "x"}))
    model = ScriptedModel(
        [same, same, same, call_tools(("lookup", {"key": "y"})), stop(), reply("done")]
    )
    agent = agent_for(model, loop_reasoning_trigger=1)
    result = await agent.run("go")
    assert result.stop_reason == "answered" and result.output == "done"


async def test_reflection_fail_sends_the_model_back_then_pass_leads_to_the_answer() -> None:
    model = ScriptedModel(
        [
            stop("guessed"),
            verify("fail", "the key was never looked up"),
            call_tools(("lookup", {"key": "k"})),
            stop("looked it up"),
            call_tools(
                *[
                    ("verify_reasoning", {"check_type": c, "result": "pass", "detail": "ok"})
                    for c in ("self_check", "contradiction_check", "completeness_check")
                ]
            ),
            reply("k is value of k"),
        ]
    )
    agent = agent_for(model, enable_reflection=True, reflection_depth=2)
    events = [e async for e in agent.stream("what is k?")]
    reflections = of_kind(events, "reflection")
    assert [(e.result, e.attempt) for e in reflections] == [("fail", 1)] + [("pass", 2)] * 3
    assert model.requests[1].tool_choice == "required"
    assert [t.name for t in model.requests[1].tools] == ["verify_reasoning"]
    correction = model.requests[2].messages[-1]
    assert "REFLECTION_CORRECTION" in correction.content  # type: ignore[union-attr]
    assert "never looked up" in correction.content  # type: ignore[union-attr]
    assert model.requests[2].tool_choice == "required"
    assert model.requests[5].tool_choice == "auto"
    assert "must NOT call any tools" in model.requests[5].messages[-1].content  # type: ignore[union-attr]
    assert of_kind(events, "run_finished")[0].output == "k is value of k"


async def test_reflection_depth_bounds_the_number_of_verifications() -> None:
    model = ScriptedModel([stop(), verify("fail", "no"), stop(), reply("answer anyway")])
    agent = agent_for(model, enable_reflection=True, reflection_depth=1)
    result = await agent.run("q")
    assert result.output == "answer anyway"
    assert [r.tool_choice for r in model.requests] == [
        "required",
        "required",  # the three checks, in one request
        "required",
        "auto",
    ]


async def test_structured_reasoning_and_tool_prediction_stream_as_events() -> None:
    summary = (
        "[Step 1/3] [analyze] what is asked\n"
        "[Step 2/3] [plan] look the key up\n"
        "[Step 3/3] [verify] check the value\n"
        "[TOOL_PREDICTION] lookup -> look up the key"
    )
    model = ScriptedModel([think(summary), stop(), reply("ok")])
    agent = agent_for(
        model,
        agent_thought_mode="reasoning",
        structured_reasoning=True,
        reasoning_depth=2,
        tool_prediction=True,
    )
    events = [e async for e in agent.stream("q")]
    steps = of_kind(events, "structured_reasoning")
    assert [(e.step_index, e.total_steps, e.phase, e.sub_problem) for e in steps] == [
        (1, 3, "analyze", "what is asked"),
        (2, 3, "plan", "look the key up"),
    ]
    prediction = of_kind(events, "tool_prediction")[0]
    assert prediction.predicted_tools == ["lookup"]
    assert prediction.predicted_next_action == "look up the key"
    system = model.requests[0].messages[0]
    assert "[Step N/M] [phase]" in system.content and "[TOOL_PREDICTION]" in system.content  # type: ignore[union-attr]
