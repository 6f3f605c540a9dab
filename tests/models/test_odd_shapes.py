"""Odd response shapes through the wire: a readable response, a call's error, or a typed error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ponder.exceptions import ModelError, ModelHTTPError, ModelResponseError
from ponder.messages import UserMessage
from ponder.models import ModelRequest, ModelResponse, OpenAIModel, RetryPolicy, ToolDefinition
from ponder.models.anthropic import AnthropicModel
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer, FakeReply, RawReply
from ponder.testing.malformed import Provider, odd_shapes, to_raw, valid_response

FAST = RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.01)
ASK = ModelRequest(messages=[UserMessage(content="add")], tools=[ToolDefinition(name="add")])
PROVIDERS: tuple[Provider, ...] = ("openai", "anthropic")
CASES = [
    pytest.param(
        provider, streamed, name, id=f"{provider}-{'stream' if streamed else 'whole'}-{name}"
    )
    for provider in PROVIDERS
    for streamed in (False, True)
    for name in odd_shapes(provider, streamed)
]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def _server(provider: Provider, script: Any) -> FakeOpenAIServer:
    return FakeOpenAIServer(script) if provider == "openai" else FakeAnthropicServer(script)


def _model(provider: Provider, server: FakeOpenAIServer) -> OpenAIModel | AnthropicModel:
    if provider == "openai":
        return OpenAIModel("m", api_key="k", base_url=server.base_url, retry=FAST)
    return AnthropicModel("c", api_key="k", base_url=server.base_url, retry=FAST)


async def _send(model: OpenAIModel | AnthropicModel, streamed: bool) -> ModelResponse:
    if not streamed:
        return await model.request(ASK)
    events = [event async for event in model.stream(ASK)]
    assert isinstance(events[-1], ModelResponse)
    return events[-1]


async def _answer(provider: Provider, streamed: bool, raw: RawReply) -> ModelResponse:
    async with _server(provider, lambda body: FakeReply(raw=raw)) as server:
        return await _send(_model(provider, server), streamed)


@pytest.mark.parametrize(("provider", "streamed", "name"), CASES)
async def test_an_odd_shape_is_read_or_refused_with_a_typed_error(
    provider: Provider, streamed: bool, name: str
) -> None:
    try:
        response = await _answer(provider, streamed, odd_shapes(provider, streamed)[name])
    except ModelError as exc:
        assert str(exc)
        return
    for call in response.tool_calls:
        assert isinstance(call.id, str) and call.id and isinstance(call.name, str)
        assert (call.args is None) != (call.args_error is None)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("arguments object", {"a": 1, "b": 2}),
        ("arguments null", {}),
        ("type custom", {"a": 1, "b": 2}),
        ("id number", {"a": 1, "b": 2}),
    ],
)
async def test_odd_call_fields_are_read_as_what_they_mean(name: str, args: dict[str, int]) -> None:
    response = await _answer("openai", False, odd_shapes("openai", False)[name])
    (call,) = response.tool_calls
    assert (call.name, call.args, call.args_error) == ("add", args, None)


@pytest.mark.parametrize(
    ("provider", "name", "error"),
    [
        ("openai", "arguments number", "must be a JSON object, got int"),
        ("anthropic", "input list", "must be a JSON object, got list"),
        ("anthropic", "input string", None),
    ],
)
async def test_arguments_of_the_wrong_type_are_that_calls_error(
    provider: Provider, name: str, error: str | None
) -> None:
    response = await _answer(provider, False, odd_shapes(provider, False)[name])
    (call,) = response.tool_calls
    assert call.name == "add"
    if error is None:
        assert call.args == {"a": 1, "b": 2}
    else:
        assert call.args is None and error in (call.args_error or "")


@pytest.mark.parametrize(
    ("provider", "name"), [("openai", "name number"), ("anthropic", "name number")]
)
async def test_a_name_that_is_no_text_names_no_tool(provider: Provider, name: str) -> None:
    response = await _answer(provider, False, odd_shapes(provider, False)[name])
    assert [c.name for c in response.tool_calls] == ["7"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_error_event_before_any_delta_is_retried(provider: Provider) -> None:
    error_first = odd_shapes(provider, True)["error event first"]
    valid = to_raw(provider, True, valid_response(provider, True))
    script = [FakeReply(raw=error_first), FakeReply(raw=valid)]
    async with _server(provider, script) as server:
        response = await _send(_model(provider, server), True)
    assert [c.args for c in response.tool_calls] == [{"a": 1, "b": 2}]
    assert len(server.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_error_event_midway_is_a_typed_error(provider: Provider) -> None:
    with pytest.raises(ModelResponseError, match="reported an error in the stream: overloaded"):
        await _answer(provider, True, odd_shapes(provider, True)["error event midway"])


async def test_an_error_event_about_the_request_is_not_retried() -> None:
    event = b'data: {"error": {"message": "bad tools", "type": "invalid_request_error"}}\n\n'
    raw = RawReply(content_type="text/event-stream", events=[event])
    async with FakeOpenAIServer([FakeReply(raw=raw), "unused"]) as server:
        with pytest.raises(ModelResponseError, match="bad tools"):
            await _send(_model("openai", server), True)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", ["binary body", "null body", "html body", "truncated json"])
async def test_bodies_that_are_no_response_are_typed_errors(provider: Provider, name: str) -> None:
    with pytest.raises(ModelResponseError):
        await _answer(provider, False, odd_shapes(provider, False)[name])


async def test_an_html_gateway_error_is_an_http_error_retried() -> None:
    html = odd_shapes("openai", False)["html body 502"]
    async with FakeOpenAIServer(lambda body: FakeReply(raw=html)) as server:
        with pytest.raises(ModelHTTPError, match="HTTP 502"):
            await _model("openai", server).request(ASK)
    assert len(server.requests) == 3


def test_a_raw_reply_round_trips_through_a_json_script() -> None:
    raw = RawReply(body=b"\xff\x00", events=[b"data: \xfe\n\n"], cut=True)
    assert RawReply.model_validate_json(raw.model_dump_json()) == raw
