"""Whatever odd thing a model emits ends as a tool error result or a typed stop reason."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.agent.hooks import ModelCall
from ponder.messages import AssistantMessage, Ledger, ToolCallPart, ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.models.base import ModelRequest, ModelResponse
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind, stop


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


def make_agent(model: Any, **config: Any) -> Agent:
    config.setdefault("agent_thought_mode", "chat")
    return Agent(model, tools=[multiply], enable_thinking_tool=False, **config)


def results(messages: Sequence[Any]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("multiply", '{"a": 17, "b": ', "json"),
        ("multiply", "[17, 23]", "object"),
        ("multiply", "null", "object"),
        ("multiply", {"a": "seventeen", "b": 23}, "- a: expected an integer"),
        ("multiply", {"a": 17}, "- b: missing"),
        ("multiply", {"a": 17, "b": 23, "c": 1}, "- c: unexpected field"),
        ("multiplyy", {"a": 17, "b": 23}, "did you mean 'multiply'"),
        ("multiply<|im_end|>", {"a": 17, "b": 23}, "unknown tool"),
        ("", {}, "unknown tool"),
        ("think_and_reason", {"summary": "not offered in chat mode"}, "unknown tool"),
        ("agent_stop", {"result": [1, 2]}, "- result: expected a string"),
        ("verify_reasoning", {"check_type": "self_check"}, "unknown tool"),
    ],
)
async def test_a_bad_call_gets_an_error_result_and_the_run_goes_on(
    name: str, arguments: dict[str, Any] | str, expected: str
) -> None:
    model = ScriptedModel(
        [call_tools((name, arguments)), call_tools(("multiply", {"a": 17, "b": 23})), stop(), "391"]
    )
    events = [e async for e in make_agent(model).stream("17*23?")]
    done = of_kind(events, "run_finished")[0]
    assert done.output == "391" and done.stop_reason == "answered"
    first = results(model.requests[1].messages)[-1]
    assert first.is_error and expected in first.content.lower(), first.content
    assert [m.content for m in results(model.requests[2].messages)][-1] == "391"
    Ledger(model.requests[-1].messages).ensure_sendable()


async def test_a_malformed_forced_reasoning_call_still_leads_to_the_action() -> None:
    model = ScriptedModel(
        [
            call_tools(("think_and_reason", {"summary": 42})),
            call_tools(("multiply", {"a": 17, "b": 23})),
            call_tools(("think_and_reason", {"summary": "done"})),
            stop(),
            "391",
        ]
    )
    events = [
        e async for e in make_agent(model, agent_thought_mode="reasoning-required").stream("?")
    ]
    assert of_kind(events, "run_finished")[0].output == "391"
    error = results(model.requests[1].messages)[-1]
    assert error.is_error and "summary" in error.content
    # no reasoning was recorded, so none is fed back
    assert model.requests[1].messages[-1].kind == "tool"
    assert [e.summary for e in of_kind(events, "reasoning")] == ["done"]


async def test_a_call_to_a_tool_not_offered_in_this_request_is_refused_unrun() -> None:
    agent = make_agent(ScriptedModel([call_tools(("multiply", {"a": 2, "b": 3})), stop(), "no"]))

    @agent.hooks.on_precompletion()
    def only_builtins(call: ModelCall) -> None:  # a hook that offers no user tool
        call.tools = [t for t in call.tools if t.name != "multiply"]

    events = [e async for e in agent.stream("2*3?")]
    assert of_kind(events, "run_finished")[0].stop_reason == "answered"
    assert of_kind(events, "tool_call_started") == []
    model = agent.model
    assert isinstance(model, ScriptedModel)
    error = results(model.requests[1].messages)[-1]
    assert error.is_error and "not available in this request" in error.content
    assert "agent_stop" in error.content and "multiply" not in error.content.split("now:")[1]


async def test_repeated_and_missing_call_ids_are_made_unique() -> None:
    model = ScriptedModel(
        [
            call_tools(
                ("multiply", {"a": 1, "b": 2}, "dup"),
                ("multiply", {"a": 3, "b": 4}, "dup"),
                ("multiply", {"a": 5, "b": 6}, "dup_1"),
            ),
            stop(),
            "2, 12 and 30",
        ]
    )
    result = await make_agent(model).run("three products")
    assert result.output == "2, 12 and 30"
    assistant = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    ids = [c.id for c in assistant.tool_calls]
    assert len(set(ids)) == 3 and ids[0] == "dup"
    assert [m.content for m in results(result.messages)][:3] == ["2", "12", "30"]


async def test_odd_calls_over_the_wire_end_as_error_results() -> None:
    script = [
        FakeReply(
            tool_calls=[
                FakeToolCall(name="multiply", id="same", arguments='{"a": 17, "b": 23'),
                FakeToolCall(name="multiply", id="same", arguments={"a": 17, "b": 23}),
                FakeToolCall(name="divide", id="other", arguments={"a": 1}),
            ]
        ),
        FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={})]),
        FakeReply(content="391"),
    ]
    async with FakeOpenAIServer(script) as server:
        agent = make_agent("openai:local", base_url=server.base_url, api_key="k")
        result = await agent.run("17*23?")
        await agent.model.aclose()  # type: ignore[attr-defined]
    assert result.output == "391" and result.status == "completed"
    tools = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert len({m["tool_call_id"] for m in tools}) == 3
    assert [m["content"] for m in tools][1] == "391"
    assert "json" in tools[0]["content"].lower() and "unknown tool" in tools[2]["content"]


async def test_a_tool_call_in_the_final_answer_is_refused() -> None:
    model = ScriptedModel([stop(), call_tools(("multiply", {"a": 1, "b": 1})), reply("1")])
    result = await make_agent(model, agent_tool_call_limit=1).run("1*1?")
    assert result.output == "1" and result.stop_reason == "answered"


class _NoIds:
    """A custom model that sends its tool calls without ids (as some local servers do)."""

    name = "no-ids"

    def __init__(self) -> None:
        self.requests = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        self.requests += 1
        if self.requests == 1:
            calls = tuple(ToolCallPart.from_args("", "multiply", {"a": n, "b": 2}) for n in (1, 2))
            return ModelResponse(parts=calls, finish_reason="tool_calls")
        if self.requests == 2:
            return stop()
        return reply("2 and 4")

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        yield await self.request(request)


async def test_calls_without_ids_get_unique_ids_and_each_its_result() -> None:
    result = await make_agent(_NoIds()).run("two products")
    assert result.output == "2 and 4"
    assistant = next(m for m in result.messages if isinstance(m, AssistantMessage) and m.tool_calls)
    ids = [c.id for c in assistant.tool_calls]
    assert all(ids) and len(set(ids)) == 2
    answered = results(result.messages)[:2]
    assert [m.call_id for m in answered] == ids and [m.content for m in answered] == ["2", "4"]
