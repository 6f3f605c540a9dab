"""Tool calls written as text, recovered over HTTP; and the timeouts of slow servers."""

import json
from typing import Any

import pytest

from ponder.exceptions import ModelTimeoutError
from ponder.messages import UserMessage
from ponder.models import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OpenAIModel,
    RetryPolicy,
    ToolDefinition,
)
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

FAST = RetryPolicy(max_retries=1, backoff_base=0.001, backoff_cap=0.01)
ADD = ToolDefinition(name="add", parameters={"type": "object", "properties": {}})
REQUEST = ModelRequest([UserMessage(content="add")], [ADD])


def _model(server: FakeOpenAIServer, **kw: Any) -> OpenAIModel:
    return OpenAIModel("m", api_key="k", base_url=server.base_url, retry=FAST, **kw)


async def _ask(script: list[Any], **kw: Any) -> ModelResponse:
    async with FakeOpenAIServer(script, **kw) as server:
        return await _model(server).request(REQUEST)


async def test_hermes_tool_call_tags_written_by_the_server() -> None:
    call = FakeToolCall(name="add", arguments={"a": 1, "b": {"c": 2}})
    reply = FakeReply(content="Let me add. ", tool_calls=[call])
    response = await _ask([reply], quirks=["tool_calls_as_text"])
    assert [(c.name, c.args) for c in response.tool_calls] == [("add", {"a": 1, "b": {"c": 2}})]
    assert response.text == "Let me add." and "<tool_call>" not in response.text
    assert response.finish_reason == "tool_calls"


async def test_function_tags() -> None:
    response = await _ask(['<function=add>{"a": 5}</function>'])
    assert [(c.name, c.args) for c in response.tool_calls] == [("add", {"a": 5})]
    assert response.text == ""


async def test_llamacpp_functions_prefix() -> None:
    response = await _ask(['functions.add:\n{"a": 7}'])
    assert [(c.name, c.args) for c in response.tool_calls] == [("add", {"a": 7})]


@pytest.mark.parametrize("key", ["arguments", "parameters"])
async def test_a_bare_json_object_naming_an_offered_tool(key: str) -> None:
    text = "```json\n" + json.dumps({"name": "add", key: {"a": 9}}) + "\n```"
    response = await _ask([text])
    assert [(c.name, c.args) for c in response.tool_calls] == [("add", {"a": 9})]
    assert response.text == ""


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "delete_everything", "arguments": {}}',
        "<tool_call>not json</tool_call>",
        '<function=nosuch>{"a": 1}</function>',
        '{"answer": 42}',
    ],
)
async def test_text_naming_no_offered_tool_stays_text(text: str) -> None:
    response = await _ask([text])
    assert response.tool_calls == () and response.text == text


async def test_malformed_arguments_in_markup_stay_a_call_with_its_raw_arguments() -> None:
    response = await _ask(["<function=add>{not json}</function>"])
    (call,) = response.tool_calls
    assert call.name == "add" and call.arguments == "{not json}"


async def test_a_slow_stream_that_keeps_talking_is_not_cut_off() -> None:
    reply = FakeReply(content="a long and slow answer", chunk_delay=0.5)
    async with FakeOpenAIServer([reply]) as server:  # 2 s in all, never 2 s silent
        model = _model(server, settings=ModelSettings(idle_timeout=2.0, timeout=60))
        events = [e async for e in model.stream(ModelRequest([UserMessage(content="hi")]))]
    assert events[-1].text == "a long and slow answer"  # type: ignore[union-attr]


async def test_a_silent_stream_hits_the_idle_bound_and_a_long_one_the_total() -> None:
    ask = ModelRequest([UserMessage(content="hi")])
    async with FakeOpenAIServer([FakeReply(content="abc", chunk_delay=20)]) as server:
        model = _model(server, settings=ModelSettings(idle_timeout=1.0, timeout=60))
        with pytest.raises(ModelTimeoutError, match=r"silent for 1 s"):
            _ = [e async for e in model.stream(ask)]
    async with FakeOpenAIServer([FakeReply(content="late", delay=20)] * 2) as server:
        model = _model(server, settings=ModelSettings(idle_timeout=1.0, timeout=60))
        with pytest.raises(ModelTimeoutError, match="attempt timed out"):
            await model.request(ask)  # silent before the answer: retried, then typed
    assert len(server.requests) == 2
    async with FakeOpenAIServer([FakeReply(content="abcdef", chunk_delay=1.0)]) as server:
        model = _model(server, settings=ModelSettings(idle_timeout=10, timeout=2))
        with pytest.raises(ModelTimeoutError, match=r"total timeout of 2 s"):
            _ = [e async for e in model.stream(ask)]


async def test_a_retry_after_beyond_the_budget_says_so() -> None:
    script: list[FakeReply | str] = [
        FakeReply(status=429, retry_after=30, error_message="busy"),
        "never",
    ]
    async with FakeOpenAIServer(script) as server:
        model = _model(server, settings=ModelSettings(timeout=2))
        with pytest.raises(ModelTimeoutError, match=r"asked to retry after 30 s, longer than"):
            await model.request(ModelRequest([UserMessage(content="hi")]))
    assert len(server.requests) == 1
