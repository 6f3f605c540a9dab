"""The OpenAI-compatible adapter, through the real ``openai`` client over HTTP to the fake."""

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.exceptions import (
    LedgerError,
    ModelHTTPError,
    ModelResponseError,
    UserError,
)
from ponder.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.models import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OpenAIModel,
    OutputSchema,
    ReasoningDelta,
    RetryPolicy,
    TextDelta,
    ToolCallDelta,
    ToolDefinition,
    output_schema,
    parse_structured,
)
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

FAST = RetryPolicy(max_retries=3, backoff_base=0.001, backoff_cap=0.01)
ADD = ToolDefinition(name="add", parameters={"type": "object", "properties": {"a": {}, "b": {}}})
MUL = ToolDefinition(name="mul")


def _model(server: FakeOpenAIServer, **kwargs: Any) -> OpenAIModel:
    kwargs.setdefault("retry", FAST)
    return OpenAIModel("gpt-test", api_key="sk-test", base_url=server.base_url, **kwargs)


def _ask(text: str = "hi", **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        messages=[SystemMessage(content="Be brief."), UserMessage(content=text)], **kwargs
    )


async def _collect(model: OpenAIModel, request: ModelRequest) -> tuple[list[Any], ModelResponse]:
    events = [event async for event in model.stream(request)]
    assert isinstance(events[-1], ModelResponse)
    return events[:-1], events[-1]


async def test_plain_text_request_and_usage() -> None:
    reply = FakeReply(content="Hello!", input_tokens=11, output_tokens=3, reasoning_tokens=1)
    async with FakeOpenAIServer([reply]) as server:
        model = _model(server)
        response = await model.request(_ask())
    assert response.text == "Hello!" and response.finish_reason == "stop"
    assert response.model_name == "fake-model" and model.name == "openai:gpt-test"
    usage = response.usage
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (1, 11, 3)
    assert usage.reasoning_tokens == 1
    body = server.requests[0]
    assert body["model"] == "gpt-test" and "stream" not in body
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert "tools" not in body and "tool_choice" not in body


async def test_streamed_text_ends_with_the_same_response() -> None:
    text = "Streaming works in several chunks."
    async with FakeOpenAIServer([text, text]) as server:
        model = _model(server)
        deltas, final = await _collect(model, _ask())
        whole = await model.request(_ask())
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == text
    assert len(deltas) > 1
    assert final.text == whole.text == text
    assert final.usage.requests == 1 and final.usage.input_tokens > 0
    assert server.requests[0]["stream"] is True
    assert server.requests[0]["stream_options"] == {"include_usage": True}


async def test_one_and_several_parallel_tool_calls_streamed_and_not() -> None:
    calls = [
        FakeToolCall(name="add", arguments={"a": 1, "b": 2}, id="c_add"),
        FakeToolCall(name="mul", arguments={"x": "多"}, id="c_mul"),
        FakeToolCall(name="add", arguments={"a": 3, "b": 4}),
    ]
    script = [
        FakeReply(tool_calls=calls[:1]),
        FakeReply(tool_calls=calls),
        FakeReply(tool_calls=calls),
    ]
    async with FakeOpenAIServer(script) as server:
        model = _model(server)
        one = await model.request(_ask(tools=[ADD, MUL]))
        deltas, streamed = await _collect(model, _ask(tools=[ADD, MUL]))
        plain = await model.request(_ask(tools=[ADD, MUL]))
    assert [(c.id, c.name, c.args) for c in one.tool_calls] == [("c_add", "add", {"a": 1, "b": 2})]
    assert one.finish_reason == "tool_calls"
    for response in (streamed, plain):
        assert [c.name for c in response.tool_calls] == ["add", "mul", "add"]
        assert [c.args for c in response.tool_calls] == [
            {"a": 1, "b": 2},
            {"x": "多"},
            {"a": 3, "b": 4},
        ]
        assert response.tool_calls[0].id == "c_add" and response.tool_calls[1].id == "c_mul"
    fragments = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert {d.index for d in fragments} == {0, 1, 2}
    interleaved = [d.index for d in fragments if d.arguments]
    assert interleaved != sorted(interleaved)
    assert server.requests[0]["tools"][0]["function"]["name"] == "add"
    assert server.requests[0]["tool_choice"] == "auto"


async def test_malformed_arguments_are_kept_as_a_parse_error() -> None:
    bad = FakeToolCall(name="add", arguments='{"a": 1,', id="c1")
    async with FakeOpenAIServer([FakeReply(tool_calls=[bad])] * 2) as server:
        model = _model(server)
        plain = await model.request(_ask(tools=[ADD]))
        _, streamed = await _collect(model, _ask(tools=[ADD]))
    for response in (plain, streamed):
        call = response.tool_calls[0]
        assert call.args is None and call.arguments == '{"a": 1,'
        assert call.args_error is not None and "not valid JSON" in call.args_error


async def test_tool_choice_forced_required_and_none() -> None:
    async with FakeOpenAIServer(["a", "b", "c"]) as server:
        model = _model(server)
        await model.request(_ask(tools=[ADD, MUL], tool_choice=ForceTool("mul")))
        await model.request(_ask(tools=[ADD], tool_choice="required"))
        await model.request(_ask(tools=[ADD], tool_choice="none"))
        with pytest.raises(UserError, match="'nope'"):
            await model.request(_ask(tools=[ADD], tool_choice=ForceTool("nope")))
    choices = [body["tool_choice"] for body in server.requests]
    assert choices == [{"type": "function", "function": {"name": "mul"}}, "required", "none"]


class Weather(BaseModel):
    city: str
    celsius: float


async def test_structured_output_native_response_format() -> None:
    async with FakeOpenAIServer(['{"city": "Oslo", "celsius": -3.5}', '{"city": "Oslo"']) as server:
        model = _model(server)
        good = await model.request(_ask(output=output_schema(Weather)))
        bad = await model.request(_ask(output=output_schema(Weather)))
    assert parse_structured(good, Weather) == Weather(city="Oslo", celsius=-3.5)
    with pytest.raises(ModelResponseError, match="not valid JSON"):
        parse_structured(bad, Weather)
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Weather"
    assert fmt["json_schema"]["schema"]["required"] == ["city", "celsius"]
    assert fmt["json_schema"]["strict"] is False  # pydantic's schema is not strict-compatible


async def test_structured_output_as_forced_tool_where_not_native() -> None:
    schema = OutputSchema(name="weather report", json_schema=Weather.model_json_schema())
    call = FakeToolCall(name="weather_report", arguments={"city": "Lima", "celsius": 19})
    async with FakeOpenAIServer([FakeReply(tool_calls=[call])] * 2) as server:
        model = _model(server, provider="deepseek")
        plain = await model.request(_ask(output=schema))
        _, streamed = await _collect(model, _ask(output=schema))
    for response in (plain, streamed):
        assert response.tool_calls == ()
        assert parse_structured(response, Weather) == Weather(city="Lima", celsius=19)
    body = server.requests[0]
    assert "response_format" not in body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "weather_report"}}


async def test_reasoning_content_is_streamed_and_replayed_for_deepseek() -> None:
    call = FakeToolCall(name="add", arguments={"a": 1, "b": 2}, id="c1")
    script: list[FakeReply | str] = [FakeReply(reasoning="Let me add.", tool_calls=[call]), "3"] * 2
    for provider, replays in (("deepseek", True), ("openai", False)):
        async with FakeOpenAIServer(script[:2]) as server:
            model = _model(server, provider=provider)
            deltas, first = await _collect(model, _ask(tools=[ADD]))
            assert "".join(d.text for d in deltas if isinstance(d, ReasoningDelta)) == "Let me add."
            assert first.reasoning == "Let me add."
            history = [*_ask().messages, first.to_message()]
            history.append(ToolMessage(call_id="c1", name="add", content="3"))
            await model.request(ModelRequest(messages=history, tools=[ADD]))
        assistant = server.requests[1]["messages"][2]
        assert assistant["tool_calls"][0]["id"] == "c1"
        assert ("reasoning_content" in assistant) is replays
        if replays:
            assert assistant["reasoning_content"] == "Let me add."
        assert server.requests[1]["messages"][3] == {
            "role": "tool",
            "tool_call_id": "c1",
            "content": "3",
        }


async def test_a_broken_ledger_is_never_sent() -> None:
    call = ToolCallPart.from_args("call_42", "add", {"a": 1})
    messages: list[Message] = [UserMessage(content="x"), AssistantMessage(parts=(call,))]
    async with FakeOpenAIServer(["never"]) as server:
        model = _model(server)
        with pytest.raises(LedgerError, match="call_42"):
            await model.request(ModelRequest(messages=messages))
        with pytest.raises(LedgerError, match="call_42"):
            [e async for e in model.stream(ModelRequest(messages=messages))]
    assert server.requests == []


async def test_history_driven_handler() -> None:
    def handler(body: dict[str, Any]) -> str:
        return f"{len(body['messages'])} messages, last: {body['messages'][-1]['content']}"

    async with FakeOpenAIServer(handler) as server:
        response = await _model(server).request(_ask("ping"))
    assert response.text == "2 messages, last: ping"


def test_settings_reach_the_wire() -> None:
    settings = ModelSettings(temperature=0.2, max_tokens=50, extra_body={"top_k": 3})

    async def two_requests(model: OpenAIModel) -> None:
        await model.request(_ask())
        await model.request(_ask(settings=ModelSettings(temperature=0.9)))

    with FakeOpenAIServer(["ok", "ok"]) as server:  # the sync form: a background thread
        asyncio.run(two_requests(_model(server, settings=settings)))
    first, second = server.requests
    assert (first["temperature"], first["max_tokens"], first["top_k"]) == (0.2, 50, 3)
    assert (second["temperature"], second["max_tokens"]) == (0.9, 50)


def test_unknown_provider_profile_is_a_user_error() -> None:
    with pytest.raises(UserError, match="known: deepseek"):
        OpenAIModel("m", provider="nosuch", api_key="k")


async def test_malformed_request_script_is_rejected() -> None:
    with pytest.raises(ValueError):
        FakeOpenAIServer([{"content": "x", "bogus": 1}])
    async with FakeOpenAIServer(["x"]) as server:
        model = _model(server)
        await model.request(_ask())
        with pytest.raises(ModelHTTPError, match="all 1 scripted replies were used") as info:
            await model.request(_ask())
    assert info.value.status_code == 400
    assert len(server.requests) == 2
