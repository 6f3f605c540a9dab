"""A correct tool result never becomes a wrong answer (`answer_keeps_results`).

SmolLM2-135M behind a local server answered "The user requested a response to their
request…" after its tool had returned the answer; the results are then listed after
its text. On a local server's profile this is the default; elsewhere it is opt-in.
"""

from __future__ import annotations

from typing import Any

import pytest

from ponder.agent import Agent
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import PROMPT, make_agent, multiply

META = "The user requested a response to their request, and the response is incomplete."


def answering(answer: str, name: str = "multiply", **args: Any) -> Any:
    arguments = args or {"a": 17, "b": 23}

    def script(request: ModelRequest) -> Any:
        if request.tool_choice == "none" or len(request.messages) > 3:
            return reply(answer)
        return call_tools((name, arguments))

    return script


async def test_an_answer_that_states_no_result_gets_the_results_after_it() -> None:
    agent = make_agent(
        ScriptedModel(answering(META)), agent_thought_mode="chat", answer_keeps_results=True
    )
    result = await agent.run(PROMPT)
    assert result.output == f"{META}\n\n- multiply(a=17, b=23) → 391"


@pytest.mark.parametrize(
    "answer", ["17 times 23 is 391.", "It is 391", "**391**", "The product: 391."]
)
async def test_an_answer_that_states_a_result_is_kept_as_written(answer: str) -> None:
    agent = make_agent(
        ScriptedModel(answering(answer)), agent_thought_mode="chat", answer_keeps_results=True
    )
    assert (await agent.run(PROMPT)).output == answer


@pytest.mark.parametrize(
    "answer",
    [
        "The product is 1391.",  # the digits inside another number
        "About 3.391 of them.",
        "It is 391.5 exactly.",
    ],
)
async def test_a_result_inside_other_text_is_not_stated(answer: str) -> None:
    agent = make_agent(
        ScriptedModel(answering(answer)), agent_thought_mode="chat", answer_keeps_results=True
    )
    assert (await agent.run(PROMPT)).output.endswith("\n\n- multiply(a=17, b=23) → 391")


async def test_a_result_inside_an_entity_is_not_stated() -> None:
    """'&#34;' (a quote, escaped twice by the server) has "34" in it, not the result 34."""

    def script(request: ModelRequest) -> Any:
        if request.tool_choice == "none" or len(request.messages) > 3:
            return reply("{ &amp;#34;a&amp;#34;:17 }")
        return call_tools(("multiply", {"a": 17, "b": 2}))

    agent = make_agent(ScriptedModel(script), agent_thought_mode="chat", answer_keeps_results=True)
    assert (await agent.run(PROMPT)).output.endswith("- multiply(a=17, b=2) → 34")


@tool
def save(text: str) -> str:
    """Save a note.

    Args:
        text: The note.
    """
    return "ok"


@tool
def page(n: int) -> str:
    """Read a page.

    Args:
        n: The page.
    """
    return "The report covers the year's sales, region by region, and their causes. " * 4


@pytest.mark.parametrize(("made", "args"), [(save, {"text": "hi"}), (page, {"n": 1})])
async def test_acknowledgements_and_long_results_need_no_quoting(made: Any, args: Any) -> None:
    model = ScriptedModel(answering("Done as asked.", made.name, **args))
    agent = Agent(
        model,
        tools=[made],
        enable_thinking_tool=False,
        agent_thought_mode="chat",
        answer_keeps_results=True,
    )
    assert (await agent.run("Do it.")).output == "Done as asked."


def served(answer: str) -> list[FakeReply]:
    call = FakeToolCall(name="multiply", id="c1", arguments={"a": 17, "b": 23})
    # a local profile asks for a tool call once more after the first text reply
    return [FakeReply(tool_calls=[call]), FakeReply(content=answer), FakeReply(content=answer)]


async def test_on_a_local_servers_profile_it_is_the_default() -> None:
    async with FakeOpenAIServer(served(META)) as server:
        local = Agent(
            "llamacpp:smollm2",
            tools=[multiply],
            base_url=server.base_url,
            enable_thinking_tool=False,
            agent_thought_mode="chat",
        )
        assert local.config.answer_keeps_results is True
        result = await local.run(PROMPT)
    assert result.output.endswith("\n\n- multiply(a=17, b=23) → 391")


async def test_elsewhere_it_is_off_unless_asked_for() -> None:
    async with FakeOpenAIServer(served(META)) as server:
        hosted = Agent(
            "openai:gpt-fake",
            tools=[multiply],
            base_url=server.base_url,
            api_key="k",
            enable_thinking_tool=False,
            agent_thought_mode="chat",
        )
        assert hosted.config.answer_keeps_results is False
        result = await hosted.run(PROMPT)
    assert result.output == META
