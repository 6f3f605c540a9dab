"""An answer that loops is given once: small models repeat a sentence until the token limit.

SmolLM2-135M behind a grammar-constrained server answered "The user requested a response
to their request, and the response is:" three times, the third cut off by ``max_tokens``.
"""

from __future__ import annotations

import pytest

from ponder.models import ScriptedModel

from .scripts import PROMPT, make_agent, of_kind, stop, think
from .test_answer_keeps_results import answering

LOOP = "The user requested a response to their request, and the response is:"


async def test_a_looping_answer_is_given_once_and_its_cut_off_repeat_dropped() -> None:
    looping = f"{LOOP}\n\n{LOOP}\n\n{LOOP[:40]}"
    model = ScriptedModel([think("multiply"), stop(), looping])
    events = [event async for event in make_agent(model).stream(PROMPT)]
    assert of_kind(events, "run_finished")[0].output == LOOP
    (withdrawn,) = of_kind(events, "answer_withdrawn")
    assert withdrawn.text == looping and not withdrawn.retrying  # the streamed text is not it
    assert of_kind(events, "text_delta")[-1].text == LOOP


async def test_the_looping_answer_still_gets_the_results_it_left_out() -> None:
    looping = f"{LOOP}\n\n{LOOP}\n\n{LOOP[:40]}"
    agent = make_agent(
        ScriptedModel(answering(looping)), agent_thought_mode="chat", answer_keeps_results=True
    )
    result = await agent.run(PROMPT)
    assert result.output == f"{LOOP}\n\n- multiply(a=17, b=23) → 391"


@pytest.mark.parametrize(
    ("answer", "given"),
    [
        ("It is 391. It is 391. It is 391.", "It is 391."),
        ("17 times 23 is 391.\n17 times 23 is 391.", "17 times 23 is 391."),
    ],
)
async def test_a_repeated_sentence_is_said_once(answer: str, given: str) -> None:
    agent = make_agent(ScriptedModel(answering(answer)), agent_thought_mode="chat")
    assert (await agent.run(PROMPT)).output == given


@pytest.mark.parametrize(
    "answer",
    [
        "OK. OK. It is 391.",  # too short to be a loop
        "| a | b |\n|---|---|\n| 1 | 391 |\n\n| c | d |\n|---|---|\n| 2 | 391 |",
        "```python\nfor i in range(3):\n    print(i)\nfor i in range(3):\n    print(i)\n```\n391",
        "17 times 23 is 391. 23 times 17 is 391 too.",
    ],
)
async def test_an_answer_that_does_not_loop_is_kept_as_written(answer: str) -> None:
    agent = make_agent(ScriptedModel(answering(answer)), agent_thought_mode="chat")
    assert (await agent.run(PROMPT)).output == answer
