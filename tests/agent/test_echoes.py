"""Never ponder's own words as the answer, never a correct result thrown away.

What SmolLM2-135M did behind the stock llama.cpp server: it answered with ponder's
instructions, HTML-escaped (``runtime&#39;s``), with a word changed, as the results list,
or in the server's ``functions.X:`` call syntax. The answer is compared with the
instruction texts the run sent, by similarity; an answer that merely quotes the results
is kept; streamed text that is not the answer is withdrawn by an event.
"""

from __future__ import annotations

import html
from typing import Any

import pytest

from ponder import Agent
from ponder.agent.strategies import prompts
from ponder.agent.strategies.echo import normalise, said_by_runtime, without_echo
from ponder.events import event_from_dict, event_to_dict
from ponder.messages import Message, SystemMessage, UserMessage
from ponder.models import ModelRequest, ScriptedModel, call_tools, reply
from ponder.testing import FakeOpenAIServer

from .scripts import PROMPT, make_agent, multiply, of_kind, stop, think

LIMIT_ECHO = (
    "The limit of 1 tool rounds has been reached, so no more tools can be called. "
    "Answer the user's request now from these results."
)
CORRECTION_ECHO = (
    "Your answer repeated the runtime's instructions instead of answering. Write the "
    "answer to the user's request again, in plain words only, without any markup or "
    "instructions."
)
FINAL_ECHO = (
    "You have stopped the tool loop. Now generate the final, comprehensive response to "
    "the user's request from what you found. You must NOT call any tools."
)


def _last_user(request: ModelRequest) -> str:
    last = [m for m in request.messages if isinstance(m, UserMessage)][-1]
    return last.content


@pytest.mark.parametrize(
    "echo",
    [
        pytest.param(html.escape(CORRECTION_ECHO), id="html-escaped"),
        pytest.param(FINAL_ECHO, id="one-word-changed"),
        pytest.param(FINAL_ECHO.upper().replace(".", "!"), id="shouted"),
        pytest.param("- " + FINAL_ECHO.replace(". ", ".\n- "), id="as-a-list"),
        pytest.param(
            "**You have stopped the tool loop.** Now generate the final response to the user's "
            "request from what you found!",
            id="markdown-paraphrase",
        ),
        pytest.param('functions.multiply:\n{"a": 17, "b": 23}', id="server-call-syntax"),
        pytest.param(
            'This is a special case of the "&#39;think_and_reason&amp;#39;" function.',
            id="an-escaped-control-tool-named",
        ),
    ],
)
async def test_an_echo_is_asked_for_again_and_never_the_answer(echo: str) -> None:
    model = ScriptedModel([think("multiply"), stop(), echo, "17 times 23 is 391."])
    result = await make_agent(model).run(PROMPT)
    assert result.output == "17 times 23 is 391." and result.stop_reason == "answered"
    correction = model.requests[-1].messages[-1]
    assert isinstance(correction, UserMessage) and "Write the answer" in correction.content


async def test_a_second_echo_gives_the_tool_results_not_the_echo() -> None:
    def echoing(request: ModelRequest) -> Any:
        if request.tool_choice != "none":
            return call_tools(("multiply", {"a": 17, "b": 23}))
        return reply(html.escape(_last_user(request)))  # the stock server's escaping

    model = ScriptedModel(echoing)
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1)
    result = await agent.run(PROMPT)
    assert result.stop_reason == "round_limit"
    assert result.output.endswith("- multiply(a=17, b=23) → 391")
    assert "Write the answer" not in result.output and "limit" not in result.output
    assert len(model.requests) == 3  # the action, the answer, one retry


def _answering_after_a_call(*answers: str) -> Any:
    replies = iter(answers)

    def script(request: ModelRequest) -> Any:
        if request.tool_choice != "none":
            return call_tools(("multiply", {"a": 17, "b": 23}))
        return reply(next(replies))

    return script


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param("{ &amp;#34;a&amp;#34;:17, &amp;#34;b&amp;#34;:23 }", id="escaped-twice"),
        pytest.param('{ "a": 17 }', id="some-of-the-keys"),
        pytest.param('{ "a&#10;The product of seventeen', id="cut-off"),
    ],
)
async def test_a_calls_arguments_written_as_the_answer_give_the_results(arguments: str) -> None:
    """SmolLM2 on the stock server: the call syntax, then asked again, the arguments alone."""
    model = ScriptedModel(_answering_after_a_call('functions.multiply:\n{"a": 17}', arguments))
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1)
    result = await agent.run(PROMPT)
    assert result.output == "- multiply(a=17, b=23) → 391"


async def test_what_follows_a_calls_arguments_on_their_line_stays() -> None:
    answer = '{ "a": 17, "b": 23 } gives 391.\n\nThat is the product.'
    model = ScriptedModel(_answering_after_a_call(answer))
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1)
    assert (await agent.run(PROMPT)).output == "gives 391.\n\nThat is the product."


@pytest.mark.parametrize(
    "answer",
    [
        '{"product": 391}',  # a JSON answer about other things
        'The call was { "a": 17, "b": 23 } and it returned 391.',  # in prose
        "First line.\n\nSecond paragraph, { braces } kept.",
    ],
)
async def test_a_json_answer_that_is_not_a_call_is_kept(answer: str) -> None:
    model = ScriptedModel(_answering_after_a_call(answer))
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1)
    assert (await agent.run(PROMPT)).output == answer


async def test_an_answer_quoting_the_results_list_is_kept_without_asking_again() -> None:
    answer = (
        "The results of your tool calls:\n- multiply(a=17, b=23) → 391\n"
        "Answer the user's request now from these results."
    )

    def quoting(request: ModelRequest) -> Any:
        if request.tool_choice != "none":
            return call_tools(("multiply", {"a": 17, "b": 23}))
        return reply(answer)

    model = ScriptedModel(quoting)
    agent = make_agent(model, agent_thought_mode="chat", agent_tool_call_limit=1)
    result = await agent.run(PROMPT)
    assert result.output == "- multiply(a=17, b=23) → 391"
    assert len(model.requests) == 2  # no request spent on a correct answer


async def test_a_second_answer_naming_a_control_tool_loses_that_sentence() -> None:
    named = "I used think_and_reason first. 17 × 23 = 391."
    model = ScriptedModel([think("x"), stop(), named, named])
    result = await make_agent(model).run(PROMPT)
    assert (result.output, result.stop_reason) == ("17 × 23 = 391.", "answered")


async def test_an_answer_that_also_echoes_is_cleaned_without_asking_again() -> None:
    model = ScriptedModel([think("x"), stop(), "You must NOT call any tools again. 17 × 23 = 391."])
    result = await make_agent(model).run(PROMPT)
    assert (result.output, result.stop_reason) == ("17 × 23 = 391.", "answered")
    assert len(model.requests) == 3


@pytest.mark.parametrize(
    "answer",
    [
        "17 times 23 is 391.",
        "You asked: what is 17 times 23? I used the multiply tool: the answer is 391.",
        "I called multiply with a=17 and b=23; the tool returned 391, so the answer is 391.",
        "Answer: 391",
        "391",
        "The final answer is 391. No more tools were needed.",
    ],
)
async def test_a_correct_answer_in_the_runtimes_vocabulary_is_kept(answer: str) -> None:
    model = ScriptedModel(
        [think("multiply"), call_tools(("multiply", {"a": 17, "b": 23})), stop(), answer]
    )
    result = await make_agent(model).run(PROMPT)
    assert result.output == answer and len(model.requests) == 4


def test_the_comparison_is_with_what_the_run_sent_less_the_request_and_results() -> None:
    messages: list[Message] = [
        SystemMessage(content="Reply in French. You work in rounds."),
        UserMessage(content="Summarise the report on tool loops."),
        UserMessage(
            content="<BEGIN_OF_INSTRUCTIONS>Stop now. The results of your tool calls:\n"
            '- search(q="tool loops") → Tool loops waste requests.\n'
            "Answer from these results.<END_OF_INSTRUCTIONS>"
        ),
    ]
    said = said_by_runtime(messages)
    assert normalise("reply in french") in said.sentences
    assert not any("summarise" in s or "waste" in s for s in said.sentences)
    kept, echoed = without_echo("Tool loops waste requests.\nAnswer from these results!", said)
    assert (kept, echoed) == ("Tool loops waste requests.", True)
    assert without_echo("Summarise the report on tool loops.", said) == (
        "Summarise the report on tool loops.",
        False,
    )


async def test_a_streamed_echo_is_withdrawn_and_the_answer_streams_again() -> None:
    model = ScriptedModel([think("multiply"), stop(), FINAL_ECHO, "It is 391."])
    events = [e async for e in make_agent(model).stream(PROMPT)]
    kinds = [e.kind for e in events if e.kind in ("text_delta", "answer_withdrawn")]
    withdrawn = of_kind(events, "answer_withdrawn")
    assert kinds.index("answer_withdrawn") > 0 and kinds[-1] == "text_delta"
    assert withdrawn[0].retrying and withdrawn[0].text == FINAL_ECHO
    after = kinds.index("answer_withdrawn")
    shown = "".join(e.text for e in of_kind(events, "text_delta")[after:])
    assert shown == "It is 391." == of_kind(events, "run_finished")[0].output
    assert event_from_dict(event_to_dict(withdrawn[0])) == withdrawn[0]


async def test_streamed_text_that_was_cleaned_is_withdrawn_and_replaced() -> None:
    answer = f"{FINAL_ECHO}\n17 × 23 = 391."
    model = ScriptedModel([think("multiply"), stop(), answer])
    events = [e async for e in make_agent(model).stream(PROMPT)]
    withdrawn = of_kind(events, "answer_withdrawn")
    assert len(withdrawn) == 1 and not withdrawn[0].retrying
    last = of_kind(events, "text_delta")[-1]
    assert last.seq > withdrawn[0].seq and last.text == "17 × 23 = 391."
    assert of_kind(events, "run_finished")[0].output == "17 × 23 = 391."


def test_the_stock_servers_escaped_echo_over_the_wire() -> None:
    """The fake provider, escaping like the stock server: echo, then echo again."""

    def server_side(body: dict[str, Any]) -> Any:
        if body.get("tool_choice") not in (None, "none") and body.get("tools"):
            if not any(m["role"] == "tool" for m in body["messages"]):
                return {"tool_calls": [{"name": "multiply", "arguments": {"a": 17, "b": 23}}]}
        last = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        return html.escape(last)  # the instruction, escaped, as the answer

    with FakeOpenAIServer(server_side) as server:
        agent = Agent(
            "openai:gpt-4o-mini",
            tools=[multiply],
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            agent_tool_call_limit=1,
            enable_thinking_tool=False,
        )
        events = list(agent.stream_sync(PROMPT))
    finished = of_kind(events, "run_finished")[0]
    assert finished.output.endswith("- multiply(a=17, b=23) → 391")
    assert "&#x27;" not in finished.output and "BEGIN_OF" not in finished.output
    assert len(server.requests) == 3
    withdrawn = of_kind(events, "answer_withdrawn")
    assert [w.retrying for w in withdrawn] == [True, False]


def test_the_models_own_reasoning_fed_back_is_not_an_instruction() -> None:
    feedback = prompts.reasoning_feedback("echo: 2 messages", "", "hi", step_mode=False)
    said = said_by_runtime([UserMessage(content="hi"), SystemMessage(content=feedback)])
    assert without_echo("echo: 8 messages", said) == ("echo: 8 messages", False)
    assert without_echo("Act on it now, or call agent_stop when you can answer.", said)[1]
