"""The stop protocol on providers that do not honour every tool_choice.

A text reply to the forced reasoning request is reasoning; before ``agent_stop`` a text
reply is an answer only the second time in a row; an empty reply is never an answer.
"""

from __future__ import annotations

from typing import Any

from ponder.messages import SystemMessage, UserMessage
from ponder.models import ForceTool, ModelRequest, ScriptedModel, call_tools, reply
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall

from .scripts import PROMPT, make_agent, of_kind, stop, think


async def test_a_text_reply_to_forced_reasoning_is_the_rounds_reasoning() -> None:
    model = ScriptedModel(
        [
            "I will multiply 17 by 23 with the tool.",
            call_tools(("multiply", {"a": 17, "b": 23})),
            "The product is known.",
            stop("391"),
            reply("17 × 23 = 391."),
        ]
    )
    events = [e async for e in make_agent(model).stream(PROMPT)]
    done = of_kind(events, "run_finished")[0]
    assert done.output == "17 × 23 = 391." and done.stop_reason == "answered"
    assert [(e.round, e.summary, e.source) for e in of_kind(events, "reasoning")] == [
        (1, "I will multiply 17 by 23 with the tool.", "text"),
        (2, "The product is known.", "text"),
    ]
    assert [r.tool_choice for r in model.requests] == [
        ForceTool("think_and_reason"),
        "required",
        ForceTool("think_and_reason"),
        "required",
        "auto",
    ]
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, SystemMessage)
    assert "Reasoning: I will multiply 17 by 23 with the tool." in feedback.content
    # the reasoning text streamed as reasoning, never as answer text
    assert "".join(e.text for e in of_kind(events, "text_delta")) == "17 × 23 = 391."
    assert "I will multiply" in "".join(e.text for e in of_kind(events, "reasoning_delta"))
    assert [e.output for e in of_kind(events, "tool_call_finished")] == ["391"]


async def test_a_model_that_only_writes_text_still_ends_with_an_answer() -> None:
    def answer(request: ModelRequest) -> str:
        if isinstance(request.tool_choice, ForceTool):
            return "Let me think: 17 times 23."
        return "391"

    model = ScriptedModel(answer)
    result = await make_agent(model).run(PROMPT)
    assert result.output == "391" and result.stop_reason == "answered_without_stop"
    # reasoning, text (reminded), reasoning, text (taken as the answer)
    assert len(model.requests) == 4
    reminder = model.requests[2].messages[-1]
    assert isinstance(reminder, UserMessage) and "not a tool call" in reminder.content


async def test_a_text_reply_after_a_tool_call_is_reminded_again() -> None:
    model = ScriptedModel(["391?", call_tools(("multiply", {"a": 17, "b": 23})), "391.", "391!"])
    result = await make_agent(model, agent_thought_mode="chat").run(PROMPT)
    assert result.output == "391!" and result.stop_reason == "answered_without_stop"
    reminders = [
        m
        for m in model.requests[-1].messages
        if isinstance(m, UserMessage) and "not a tool call" in m.content
    ]
    assert len(reminders) == 2


async def test_text_after_agent_stop_is_the_answer() -> None:
    model = ScriptedModel([think("done"), stop(), reply("391")])
    result = await make_agent(model).run(PROMPT)
    assert result.output == "391" and result.stop_reason == "answered"
    assert len(model.requests) == 3


async def test_forced_reasoning_answered_with_an_action_is_the_rounds_action() -> None:
    model = ScriptedModel(
        [call_tools(("multiply", {"a": 17, "b": 23})), think("enough"), stop(), reply("391")]
    )
    result = await make_agent(model).run(PROMPT)
    assert result.output == "391"
    assert [r.tool_choice for r in model.requests] == [
        ForceTool("think_and_reason"),
        ForceTool("think_and_reason"),
        "required",
        "auto",
    ]
    assert result.rounds == 2


async def test_an_empty_reply_before_stop_is_not_an_answer() -> None:
    model = ScriptedModel([think("x"), "", ""])
    events = [e async for e in make_agent(model).stream(PROMPT)]
    done = of_kind(events, "run_finished")[0]
    assert done.output == "" and done.stop_reason == "empty_answer"
    assert [e.retrying for e in of_kind(events, "model_unanswered")] == [True, False]
    assert len(model.requests) == 3
    assert model.requests[2].messages == model.requests[1].messages


async def test_an_empty_answer_is_asked_for_once_more() -> None:
    model = ScriptedModel([think("x"), stop(), "", "391"])
    result = await make_agent(model).run(PROMPT)
    assert result.output == "391" and result.stop_reason == "answered"
    assert len(model.requests) == 4
    assert model.requests[3].messages == model.requests[2].messages


async def test_two_empty_answers_end_with_empty_answer() -> None:
    model = ScriptedModel([think("x"), stop(), "", ""])
    result = await make_agent(model).run(PROMPT)
    assert result.output == "" and result.stop_reason == "empty_answer"
    assert len(model.requests) == 4


async def test_a_server_that_ignores_forced_tool_choice_over_the_wire() -> None:
    multiply_call = FakeToolCall(name="multiply", arguments={"a": 17, "b": 23})
    script = [
        FakeReply(content="I should call multiply with 17 and 23."),
        FakeReply(tool_calls=[multiply_call]),
        FakeReply(content="The tool said 391, so I can stop."),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "391"})]),
        FakeReply(content="17 times 23 is 391."),
    ]
    async with FakeOpenAIServer(script) as server:
        agent = make_agent("openai:local", base_url=server.base_url, api_key="k")
        stream = agent.stream(PROMPT)
        events = [e async for e in stream]
        await agent.model.aclose()  # type: ignore[attr-defined]
    result = stream.result
    assert result.output == "17 times 23 is 391." and result.stop_reason == "answered"
    assert [e.source for e in of_kind(events, "reasoning")] == ["text", "text"]
    bodies = server.requests
    assert len(bodies) == 5
    forced = {"type": "function", "function": {"name": "think_and_reason"}}
    assert [b["tool_choice"] for b in bodies] == [forced, "required", forced, "required", "auto"]
    action = bodies[1]["messages"]
    assert action[-2] == {"role": "assistant", "content": "I should call multiply with 17 and 23."}
    assert action[-1]["role"] == "system"
    assert "Reasoning: I should call multiply" in action[-1]["content"]
    assert "".join(e.text for e in of_kind(events, "text_delta")) == result.output


async def test_a_server_with_the_ignore_tool_choice_quirk_ends_with_an_answer() -> None:
    def call(name: str, **args: Any) -> FakeReply:
        return FakeReply(tool_calls=[FakeToolCall(name=name, arguments=args)])

    script = [
        call("think_and_reason", summary="multiply 17 by 23"),  # answered in text
        call("multiply", a=17, b=23),  # "auto" after "required" was refused: honoured
        call("think_and_reason", summary="391 is known"),
        call("agent_stop", result="391"),
        FakeReply(content="17 times 23 is 391."),
    ]
    forget_learned()
    try:
        quirks = ["ignore_tool_choice", "error_on_required"]
        async with FakeOpenAIServer(script, quirks=quirks) as server:
            agent = make_agent("openai:ignoring", base_url=server.base_url, api_key="k")
            events = [e async for e in agent.stream(PROMPT)]
            await agent.model.aclose()  # type: ignore[attr-defined]
    finally:
        forget_learned()
    done = of_kind(events, "run_finished")[0]
    assert done.output == "17 times 23 is 391." and done.stop_reason == "answered"
    reasoning = of_kind(events, "reasoning")
    assert [e.source for e in reasoning] == ["text", "text"]
    assert "required_tool_choice" in {e.feature for e in of_kind(events, "model_degraded")}
    assert [e.output for e in of_kind(events, "tool_call_finished")] == ["391"]


async def test_a_server_that_never_calls_tools_when_told_to_ends_cleanly() -> None:
    think_call = FakeToolCall(name="think_and_reason", arguments={"summary": "multiply"})
    multiply_call = FakeToolCall(name="multiply", arguments={"a": 17, "b": 23})
    script = [FakeReply(tool_calls=[think_call]), FakeReply(tool_calls=[multiply_call])] * 2
    async with FakeOpenAIServer(script, quirks=["ignore_tool_choice"]) as server:
        agent = make_agent("openai:ignoring", base_url=server.base_url, api_key="k")
        result = await agent.run(PROMPT)
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.status == "completed" and result.stop_reason == "answered_without_stop"
    assert len(server.requests) == 4
    assert "<BEGIN_OF" not in result.output
