"""The Anthropic adapter, through the real ``anthropic`` client over HTTP to the fake."""

from typing import Any

import pytest
from pydantic import BaseModel

from ponder.exceptions import (
    LedgerError,
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    UserError,
)
from ponder.messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.models import (
    AnthropicModel,
    ForceTool,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    RetryPolicy,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
    output_schema,
    parse_structured,
    resolve_model,
)
from ponder.testing import FakeAnthropicServer, FakeReply, FakeToolCall

FAST = RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.01)
ADD = ToolDefinition(name="add", description="Add.", parameters={"type": "object"})


def _model(server: FakeAnthropicServer, **kwargs: Any) -> AnthropicModel:
    kwargs.setdefault("retry", FAST)
    return AnthropicModel("claude-test", api_key="k", base_url=server.base_url, **kwargs)


def _ask(**kwargs: Any) -> ModelRequest:
    messages: list[Message] = [SystemMessage(content="Be brief."), UserMessage(content="hi")]
    return ModelRequest(messages=messages, **kwargs)


async def _collect(model: AnthropicModel, request: ModelRequest) -> tuple[list[Any], ModelResponse]:
    events = [event async for event in model.stream(request)]
    assert isinstance(events[-1], ModelResponse)
    return events[:-1], events[-1]


async def test_text_with_system_in_the_system_field() -> None:
    reply = FakeReply(content="Hello!", input_tokens=9, output_tokens=2)
    async with FakeAnthropicServer([reply, reply]) as server:
        model = _model(server)
        plain = await model.request(_ask())
        deltas, streamed = await _collect(model, _ask())
    for response in (plain, streamed):
        assert response.text == "Hello!" and response.finish_reason == "stop"
        assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 2)
        assert response.model_name == "claude-fake"
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello!"
    body = server.requests[0]
    cached = {"cache_control": {"type": "ephemeral"}}  # the prompt cache's breakpoints
    assert body["system"] == [{"type": "text", "text": "Be brief.", **cached}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", **cached}]}
    ]
    assert body["model"] == "claude-test" and body["max_tokens"] == 4096
    assert model.name == "anthropic:claude-test"


async def test_thinking_signed_tool_use_and_replay() -> None:
    calls = [
        FakeToolCall(name="add", arguments={"a": 1, "b": 2}, id="toolu_1"),
        FakeToolCall(name="add", arguments={"a": 3, "b": 4}, id="toolu_2"),
    ]
    first = FakeReply(reasoning="I should add.", reasoning_signature="sig-123", tool_calls=calls)
    async with FakeAnthropicServer([first, "3 and 7"]) as server:
        model = _model(server, thinking_budget=1024)
        deltas, response = await _collect(model, _ask(tools=[ADD]))
        history = [*_ask().messages, response.to_message()]
        history += [
            ToolMessage(call_id="toolu_1", name="add", content="3"),
            ToolMessage(call_id="toolu_2", name="add", content="oops", is_error=True),
        ]
        await model.request(ModelRequest(messages=history, tools=[ADD]))
    assert "".join(d.text for d in deltas if isinstance(d, ReasoningDelta)) == "I should add."
    assert {d.index for d in deltas if isinstance(d, ToolCallDelta)} == {0, 1}
    reasoning = response.parts[0]
    assert isinstance(reasoning, ReasoningPart) and reasoning.signature == "sig-123"
    assert [c.args for c in response.tool_calls] == [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    assert response.finish_reason == "tool_calls"
    assert server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assistant, results = server.requests[1]["messages"][1:]
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "I should add.",
        "signature": "sig-123",
    }
    assert assistant["content"][1]["type"] == "tool_use"
    assert assistant["content"][1]["input"] == {"a": 1, "b": 2}
    assert results["role"] == "user"
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "3"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": "oops",
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


async def test_unsigned_reasoning_from_another_provider_is_not_sent() -> None:
    assistant = AssistantMessage(
        parts=(ReasoningPart(text="deepseek thoughts"), TextPart(text="x"))
    )
    messages: list[Message] = [UserMessage(content="a"), assistant, UserMessage(content="b")]
    async with FakeAnthropicServer(["ok"]) as server:
        await _model(server).request(ModelRequest(messages=messages))
    sent = server.requests[0]["messages"][1]
    assert sent == {"role": "assistant", "content": [{"type": "text", "text": "x"}]}


async def test_tool_choice_mapping_and_forced_tool() -> None:
    async with FakeAnthropicServer(["a", "b", "c"]) as server:
        model = _model(server)
        await model.request(_ask(tools=[ADD], tool_choice=ForceTool("add")))
        await model.request(_ask(tools=[ADD], tool_choice="required"))
        await model.request(_ask(tools=[ADD], tool_choice="none"))
        with pytest.raises(UserError, match="'sub'"):
            await model.request(_ask(tools=[ADD], tool_choice=ForceTool("sub")))
    assert [b["tool_choice"] for b in server.requests] == [
        {"type": "tool", "name": "add"},
        {"type": "any"},
        {"type": "none"},
    ]
    assert server.requests[0]["tools"][0]["input_schema"] == {"type": "object"}


class City(BaseModel):
    name: str
    population: int


async def test_structured_output_through_a_forced_tool() -> None:
    call = FakeToolCall(name="City", arguments={"name": "Kyoto", "population": 1460000})
    async with FakeAnthropicServer([FakeReply(tool_calls=[call])] * 2) as server:
        model = _model(server)
        plain = await model.request(_ask(output=output_schema(City)))
        _, streamed = await _collect(model, _ask(output=output_schema(City)))
    for response in (plain, streamed):
        assert parse_structured(response, City) == City(name="Kyoto", population=1460000)
        assert response.tool_calls == ()
    assert server.requests[0]["tool_choice"] == {"type": "tool", "name": "City"}


async def test_malformed_streamed_tool_input_is_a_parse_error() -> None:
    call = FakeToolCall(name="add", arguments='{"a": 1,', id="toolu_bad")
    async with FakeAnthropicServer([FakeReply(tool_calls=[call])]) as server:
        _, response = await _collect(_model(server), _ask(tools=[ADD]))
    bad = response.tool_calls[0]
    assert bad.id == "toolu_bad" and bad.args is None and bad.args_error


async def test_faults_are_retried_or_typed() -> None:
    script = [
        FakeReply(status=529, error_message="overloaded", retry_after=0.01),
        "after overload",
        FakeReply(status=400, error_message="bad request body"),
        FakeReply(content="some text here", drop_after=4),
        FakeReply(content="x", malformed=True),
    ]
    async with FakeAnthropicServer(script) as server:
        model = _model(server)
        assert (await model.request(_ask())).text == "after overload"
        with pytest.raises(ModelHTTPError, match="HTTP 400: bad request body"):
            await model.request(_ask())
        seen: list[Any] = []
        with pytest.raises(ModelConnectionError):
            async for event in model.stream(_ask()):
                seen.append(event)
        assert seen and not any(isinstance(e, ModelResponse) for e in seen)
        with pytest.raises(ModelResponseError):
            await _collect(model, _ask())
    assert len(server.requests) == 5


async def test_broken_ledger_is_never_sent_and_missing_key_is_a_user_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    open_call = AssistantMessage(parts=(ToolCallPart.from_args("toolu_9", "add", {}),))
    async with FakeAnthropicServer([]) as server:
        with pytest.raises(LedgerError, match="toolu_9"):
            await _model(server).request(
                ModelRequest(messages=[UserMessage(content="x"), open_call])
            )
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        with pytest.raises(UserError, match="ANTHROPIC_API_KEY"):
            resolve_model("anthropic:claude-x")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        model = resolve_model("anthropic:claude-x")
        server.script._items.append(FakeReply(content="via env"))
        assert (await model.request(_ask())).text == "via env"
    assert len(server.requests) == 1
