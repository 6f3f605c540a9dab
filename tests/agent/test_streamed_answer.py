"""Only the answer streams as answer text: a reply that is not the answer streams as reasoning.

Before ``agent_stop`` a text reply is not the answer (the model is reminded of the stop
protocol); it goes out as `ReasoningDelta`. The answer streams as `TextDelta`, or, when it
is settled from such a reply, is given as one `TextDelta` — so the streamed text always
equals the run's output.
"""

from __future__ import annotations

from ponder.models import ScriptedModel, reply

from .scripts import PROMPT, make_agent, of_kind, stop


async def _streamed(model: ScriptedModel, **config: object) -> tuple[str, str, str]:
    stream = make_agent(model, agent_thought_mode="chat", **config).stream(PROMPT)
    events = [e async for e in stream]
    text = "".join(e.text for e in of_kind(events, "text_delta"))
    reasoning = "".join(e.text for e in of_kind(events, "reasoning_delta"))
    return text, reasoning, stream.result.output


async def test_a_reply_before_agent_stop_streams_as_reasoning_then_the_answer() -> None:
    model = ScriptedModel([reply("Let me see."), stop(), reply("391.")])
    text, reasoning, output = await _streamed(model)
    assert output == "391." and text == "391."
    assert "Let me see." in reasoning


async def test_an_answer_settled_from_a_second_text_reply_is_given_once() -> None:
    model = ScriptedModel([reply("It is 391."), reply("17 × 23 = 391.")])
    text, reasoning, output = await _streamed(model)
    assert output == "17 × 23 = 391." and text == output
    assert "It is 391." in reasoning
