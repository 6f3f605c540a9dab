"""No request spent twice on one thought.

Small models answer the action request with ``think_and_reason`` again (SmolLM2-135M did
in 36 of 36 action requests). That reasoning is the next round's: its forced reasoning
request is not sent, so the round asks for the action straight away.
"""

from __future__ import annotations

from ponder.models import ForceTool, ScriptedModel, call_tools

from .scripts import PROMPT, make_agent, stop, think


def _choices(model: ScriptedModel) -> list[str]:
    return [
        c.name if isinstance(c, ForceTool) else str(c)
        for c in (r.tool_choice for r in model.requests)
    ]


async def test_reasoning_in_the_action_request_is_the_next_rounds_reasoning() -> None:
    model = ScriptedModel(
        [
            think("I will multiply"),
            think("I will multiply, really"),  # the action request, answered with reasoning
            call_tools(("multiply", {"a": 17, "b": 23})),  # round 2: its action, at once
            think("done"),
            stop(),
            "17 times 23 is 391.",
        ]
    )
    result = await make_agent(model).run(PROMPT)
    assert result.output == "17 times 23 is 391." and result.stop_reason == "answered"
    assert _choices(model) == [
        "think_and_reason",
        "required",
        "required",
        "think_and_reason",
        "required",
        "auto",  # after agent_stop: the answer
    ]
    assert result.usage.requests == 6


async def test_a_model_that_only_reasons_costs_one_request_per_round() -> None:
    model = ScriptedModel(lambda request: think("thinking about it") if request.tools else "391")
    result = await make_agent(model, agent_tool_call_limit=4, loop_reasoning_trigger=99).run(PROMPT)
    assert result.stop_reason in ("round_limit", "loop")
    reasoning = [c for c in _choices(model) if c == "think_and_reason"]
    assert len(reasoning) == 1  # only the first round's is forced
    assert len(model.requests) <= 6


async def test_a_runtime_message_between_rounds_brings_the_forced_reasoning_back() -> None:
    # the loop guard's correction is a runtime message: the next round reasons first
    model = ScriptedModel(
        lambda request: think("same thought") if request.tools else "I could not finish."
    )
    await make_agent(model, agent_tool_call_limit=6, loop_reasoning_trigger=1).run(PROMPT)
    choices = _choices(model)
    assert choices[0] == "think_and_reason"
    assert choices.count("think_and_reason") >= 2  # forced again after the loop correction
