"""The round's reasoning drives its action: a system message, appended, on every provider."""

from __future__ import annotations

import itertools

import pytest

from ponder.agent import Agent
from ponder.messages import Ledger, SystemMessage, ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer
from ponder.testing.prefix import prefix_shares, request_segments, request_shares
from ponder.testing.script import FakeReply, FakeToolCall

from .scripts import PROMPT, make_agent, multiply, stop, think


async def test_the_summary_is_a_system_message_that_drives_the_action_request() -> None:
    model = ScriptedModel(
        [
            think("Multiply 17 by 23 with the tool."),
            call_tools(("multiply", {"a": 17, "b": 23})),
            think("The product is 391; stop now.", last_step="multiplied 17 by 23"),
            stop("391"),
            reply("17 × 23 = 391."),
        ]
    )
    result = await make_agent(model).run(PROMPT)
    assert result.output == "17 × 23 = 391." and result.stop_reason == "answered"
    action = model.requests[1].messages
    # the forced call still has exactly one result, then the reasoning as a system message
    assert isinstance(action[-2], ToolMessage) and action[-2].name == "think_and_reason"
    assert action[-2].content == "Reasoning recorded."
    feedback = action[-1]
    assert isinstance(feedback, SystemMessage)
    assert "Reasoning: Multiply 17 by 23 with the tool." in feedback.content
    assert f"Request: {PROMPT}" in feedback.content
    assert "Last step:" not in feedback.content  # none given in the first round
    second = model.requests[3].messages[-1]
    assert isinstance(second, SystemMessage)
    assert "Last step: multiplied 17 by 23" in second.content
    assert "Reasoning: The product is 391; stop now." in second.content
    # every request is a valid conversation, and each extends the one before it
    for request in model.requests:
        Ledger(request.messages).ensure_sendable()
    for before, after in itertools.pairwise(model.requests):
        assert list(after.messages[: len(before.messages)]) == list(before.messages)


async def test_inline_reasoning_is_fed_back_after_its_batch() -> None:
    model = ScriptedModel(
        [
            call_tools(
                ("think_and_reason", {"summary": "multiply now"}), ("multiply", {"a": 2, "b": 3})
            ),
            stop(),
            reply("6"),
        ]
    )
    result = await make_agent(model, agent_thought_mode="inline").run("2*3?")
    assert result.output == "6"
    sent = model.requests[1].messages
    assert [m.kind for m in sent[-4:]] == ["assistant", "tool", "tool", "system"]
    assert "Reasoning: multiply now" in sent[-1].content  # type: ignore[union-attr]


async def test_a_long_request_is_cut_in_the_feedback() -> None:
    prompt = "word " * 400
    model = ScriptedModel([think("short"), stop(), reply("ok")])
    await make_agent(model).run(prompt)
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, SystemMessage)
    assert "[...]" in feedback.content and len(feedback.content) < 400


def _openai_script() -> list[FakeReply]:
    def think_call(n: int, summary: str) -> FakeReply:
        args = {"last_step": f"step {n}", "summary": summary}
        return FakeReply(tool_calls=[FakeToolCall(name="think_and_reason", arguments=args)])

    def multiply_call(a: int) -> FakeReply:
        args = {"a": a, "b": 23}
        return FakeReply(tool_calls=[FakeToolCall(name="multiply", arguments=args)])

    stop_call = FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})])
    return [
        think_call(0, "multiply 17 by 23"),
        multiply_call(17),
        think_call(1, "check with 18 by 23"),
        multiply_call(18),
        think_call(2, "enough"),
        stop_call,
        FakeReply(content="391"),
    ]


async def test_react_rounds_keep_a_stable_prefix_over_the_wire() -> None:
    async with FakeOpenAIServer(_openai_script()) as server:
        # the default configuration (sequential_thinking offered too)
        agent = Agent("openai:gpt-test", tools=[multiply], base_url=server.base_url, api_key="k")
        result = await agent.run(PROMPT)
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "391"
    bodies = server.requests
    rounds = bodies[:-1]  # the last request is the answer
    shares = prefix_shares(rounds)
    # request 2 (round 1's action) adds round 1's reasoning; the rounds after it reuse >= 90 %
    assert len(shares) == 5 and min(shares[1:]) >= 0.9, shares
    for before, after in itertools.pairwise(rounds):
        assert after["messages"][: len(before["messages"])] == before["messages"]
    roles = [m["role"] for m in bodies[1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "system"]


async def test_every_round_reuses_the_whole_previous_prompt() -> None:
    model = ScriptedModel(
        [think("a"), call_tools(("multiply", {"a": 1, "b": 2})), think("b"), stop(), reply("2")]
    )
    await Agent(model, tools=[multiply]).run(PROMPT)
    prompts = [request_segments(r) for r in model.requests]
    sizes = [sum(map(len, p)) for p in prompts]
    expected = [before / after for before, after in itertools.pairwise(sizes)]
    assert request_shares(model.requests) == pytest.approx(expected)
    assert all(after[: len(before)] == before for before, after in itertools.pairwise(prompts))


async def test_anthropic_keeps_its_system_field_and_gets_the_reasoning_in_a_user_turn() -> None:
    think_call = FakeToolCall(
        name="think_and_reason", id="toolu_t", arguments={"summary": "multiply 17 by 23"}
    )
    stop_call = FakeToolCall(name="agent_stop", id="toolu_s", arguments={})
    script = [FakeReply(tool_calls=[think_call]), FakeReply(tool_calls=[stop_call]), "391"]
    async with FakeAnthropicServer(script) as server:
        agent = make_agent(
            "anthropic:claude-test", base_url=server.base_url, api_key="k", instructions="Be exact."
        )
        result = await agent.run(PROMPT)
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "391"
    systems = [body["system"] for body in server.requests]
    assert all(s == systems[0] for s in systems) and systems[0][0]["text"].startswith("Be exact.")
    turn = server.requests[1]["messages"][-1]
    assert turn["role"] == "user"
    assert turn["content"][0]["type"] == "tool_result"
    assert "Reasoning: multiply 17 by 23" in turn["content"][1]["text"]


async def test_minimal_context_leaves_an_earlier_turns_reasoning_out() -> None:
    model = ScriptedModel([think("first turn"), stop(), reply("one"), think("b"), stop(), "two"])
    first = await make_agent(model, use_minimal_context=True).run("first")
    second = await make_agent(model, use_minimal_context=True).run(
        "second", message_history=first.messages
    )
    assert second.output == "two"
    sent = model.requests[3].messages
    assert [m.kind for m in sent] == ["system", "user"]
    assert not any("first turn" in getattr(m, "content", "") for m in sent)


async def test_step_react_feeds_reasoning_back_for_the_step() -> None:
    no_plan = '{"needs_decomposition": false, "reason": "one call", "steps": []}'
    summary = '{"summary": "multiplied", "outputs": ["391"]}'
    model = ScriptedModel([no_plan, think("multiply"), stop("391"), summary, reply("391")])
    result = await make_agent(model, agent_workflow="step-react").run(PROMPT)
    assert result.output == "391"
    feedback = model.requests[2].messages[-1]
    assert isinstance(feedback, SystemMessage)
    assert "Reasoning: multiply" in feedback.content and "the step is done" in feedback.content
