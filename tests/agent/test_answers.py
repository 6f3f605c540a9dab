"""What a real small model showed: echoed markers, prompts naming absent tools, limits.

An answer never carries ponder's control markers or a server's template tags; every
system prompt names exactly the built-in tools its mode offers; the answer after a limit
is asked for with the results gathered so far.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from ponder.messages import SystemMessage, UserMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply

from .scripts import PROMPT, make_agent, of_kind, stop, think

BUILTINS = ("think_and_reason", "processing_message", "agent_stop", "verify_reasoning")


def multiplying(request: ModelRequest) -> Any:
    """A weak model: multiplies the last result by 23 again, every time it may."""
    if request.tool_choice == "none":
        return "391"
    return call_tools(("multiply", {"a": 17, "b": 23}))


async def test_the_answer_after_a_limit_is_asked_with_the_results_gathered() -> None:
    model = ScriptedModel(multiplying)
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=2)
    result = await agent.run(PROMPT)
    assert result.output == "391" and result.stop_reason == "round_limit"
    instruction = model.requests[-1].messages[-1]
    assert isinstance(instruction, UserMessage)
    assert "The limit of 2 tool rounds has been reached" in instruction.content
    # the same call with the same result is listed once
    assert instruction.content.count("- multiply(a=17, b=23) → 391") == 1


async def test_an_answer_echoing_the_limit_instruction_is_asked_for_again() -> None:
    def echoing(request: ModelRequest) -> Any:
        if request.tool_choice != "none":
            return call_tools(("multiply", {"a": 17, "b": 23}))
        last = request.messages[-1]
        if isinstance(last, UserMessage) and "limit" in last.content:
            return reply(last.content)  # what SmolLM2-135M did
        return reply("17 times 23 is 391.")

    model = ScriptedModel(echoing)
    events = [
        e
        async for e in make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1).stream(
            PROMPT
        )
    ]
    done = of_kind(events, "run_finished")[0]
    assert done.output == "17 times 23 is 391." and done.stop_reason == "round_limit"
    correction = model.requests[-1].messages[-1]
    assert isinstance(correction, UserMessage)
    assert "contained markup" in correction.content
    assert "<BEGIN_OF" not in "".join(e.output for e in of_kind(events, "run_finished"))


@pytest.mark.parametrize(
    ("answer", "output", "stop_reason"),
    [
        ("<tool_response>\n391", "391", "answered"),
        ("&lt;tool_response&gt;\n391", "391", "answered"),  # SmolLM2 escapes what it echoes
        (
            "Your answer repeated the runtime&#39;s instructions.\n&lt;END_OF_INSTRUCTIONS&gt;",
            "",
            "empty_answer",
        ),
        (  # escaped twice: what SmolLM2-135M wrote on another CPU
            "&lt;BEGIN_OF_INSTRUCTIONS&amp;gt;You have exceeded the maximum number of inputs.",
            "",
            "empty_answer",
        ),
        ("391 BEGIN_OF_REASONING", "391", "answered"),  # the marker without its brackets
        ("<|im_start|>assistant\n391<|im_end|>", "391", "answered"),
        ('<tool_call>{"name": "nothing"}</tool_call>391', "391", "answered"),
        (
            "<BEGIN_OF_INSTRUCTIONS>Now generate the final response.<END_OF_INSTRUCTIONS>",
            "",
            "empty_answer",
        ),
    ],
)
async def test_an_answer_with_markup_twice_is_cleaned(
    answer: str, output: str, stop_reason: str
) -> None:
    model = ScriptedModel([think("x"), stop(), answer, answer])
    result = await make_agent(model).run(PROMPT)
    assert (result.output, result.stop_reason) == (output, stop_reason)
    assert len(model.requests) == 4
    assert model.requests[3].tool_choice == "none"


async def test_a_clean_answer_is_kept_as_it_is() -> None:
    text = "Use a < b and <b>bold</b> in HTML; 17 × 23 = 391."
    model = ScriptedModel([think("x"), stop(), text])
    result = await make_agent(model).run(PROMPT)
    assert result.output == text and len(model.requests) == 3


async def test_the_no_action_strategy_strips_a_leaked_tag() -> None:
    model = ScriptedModel(["391<|im_end|>", "391<|im_end|>"])
    result = await make_agent(model, agent_strategy="no-action").run(PROMPT)
    assert result.output == "391"


def _named(text: str) -> set[str]:
    return {name for name in BUILTINS if re.search(rf"\b{name}\b", text)}


@pytest.mark.parametrize("mode", ["reasoning-required", "reasoning", "inline", "chat"])
@pytest.mark.parametrize("middle", [True, False])
@pytest.mark.parametrize("reflection", [True, False])
async def test_the_system_prompt_names_exactly_the_tools_offered(
    mode: str, middle: bool, reflection: bool
) -> None:
    script: list[Any] = [think("plan")] if mode != "chat" else []
    script.append(stop())
    if reflection:
        checks = ("self_check", "contradiction_check", "completeness_check")
        verdicts = [("verify_reasoning", {"check_type": c, "result": "pass"}) for c in checks]
        script.append(call_tools(*verdicts))
    model = ScriptedModel([*script, reply("ok")])
    agent = make_agent(
        model,
        agent_thought_mode=mode,
        agent_middle_message=middle,
        enable_reflection=reflection,
        instructions="Be brief.",
    )
    await agent.run(PROMPT)
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage) and system.content.startswith("Be brief.")
    offered = {t.name for t in model.requests[0].tools} & set(BUILTINS)
    assert _named(system.content) == offered
    assert ("think_and_reason" in offered) is (mode != "chat")
    assert ("processing_message" in offered) is middle
