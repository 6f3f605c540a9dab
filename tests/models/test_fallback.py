"""Fallback models: the next model answers a request the first failed for good."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import ModelConnectionError, ModelHTTPError, UserError
from ponder.models import FallbackModel, ModelRequest, ScriptedModel, call_tools, reply
from ponder.testing import FakeAnthropicServer, FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool


def _down(request: ModelRequest) -> Any:
    raise ModelHTTPError(503, "overloaded", model_name="primary")


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


async def test_the_next_model_answers_and_an_event_says_which() -> None:
    primary = ScriptedModel(_down, name="primary")
    backup = ScriptedModel(
        [call_tools(("agent_stop", {"result": "ok"})), reply("From the backup.")], name="backup"
    )
    agent = Agent([primary, backup], agent_thought_mode="chat", enable_thinking_tool=False)
    stream = agent.stream("hello")
    events = [e async for e in stream]
    assert stream.result.output == "From the backup."
    fell = [e for e in events if e.kind == "model_fallback"]
    assert [(e.failed, e.answered_by) for e in fell] == [("primary", "backup")] * 2
    assert "ModelHTTPError" in fell[0].error and "overloaded" in fell[0].error
    assert len(primary.requests) == 2 and len(backup.requests) == 2
    started = next(e for e in events if e.kind == "run_started")
    assert started.model == "fallback(primary, backup)"


async def test_every_model_failing_raises_the_last_error_naming_all() -> None:
    def gone(request: ModelRequest) -> Any:
        raise ModelConnectionError("refused", model_name="second")

    model = FallbackModel(ScriptedModel(_down, name="a"), ScriptedModel(gone, name="b"))
    with pytest.raises(ModelConnectionError, match="refused") as caught:
        await model.request(ModelRequest(messages=()))
    assert "every fallback model failed: a, b" in caught.value.__notes__[0]


async def test_a_stream_falls_back_before_its_first_delta() -> None:
    model = FallbackModel(ScriptedModel(_down, name="a"), ScriptedModel(["streamed"], name="b"))
    events = [e async for e in model.stream(ModelRequest(messages=()))]
    final = events[-1]
    assert final.kind == "response" and final.text == "streamed"
    assert [f.failed for f in final.fallbacks] == ["a"]
    assert "".join(e.text for e in events[:-1] if e.kind == "text_delta") == "streamed"


async def test_reasoning_is_replayed_only_to_the_provider_that_made_it() -> None:
    pytest.importorskip("anthropic")
    deepseek = [
        FakeReply(
            reasoning="deepseek thinks",
            tool_calls=[FakeToolCall(name="lookup", id="c1", arguments={"key": "k"})],
        ),
        FakeReply(status=429, error_message="rate limited"),
        FakeReply(content="Deepseek answers: value of k."),
    ]
    claude = [
        FakeReply(
            reasoning="claude thinks",
            reasoning_signature="sig",
            tool_calls=[FakeToolCall(name="agent_stop", id="s1", arguments={})],
        )
    ]
    async with FakeOpenAIServer(deepseek) as first, FakeAnthropicServer(claude) as second:
        models = FallbackModel(
            _model("deepseek:deepseek-chat", first.base_url),
            _model("anthropic:claude-3-5-haiku-latest", second.base_url),
        )
        agent = Agent(models, tools=[lookup], agent_thought_mode="chat", enable_thinking_tool=False)
        result = await agent.run("What is k?")
        await models.aclose()
    assert result.output == "Deepseek answers: value of k."
    claude_body = second.requests[0]
    blocks = [b for m in claude_body["messages"] for b in _blocks(m)]
    assert not any(b.get("type") == "thinking" for b in blocks)  # deepseek's is not replayed
    assert any(b.get("type") == "tool_result" for b in blocks)
    last = first.requests[-1]["messages"]
    replayed = [m.get("reasoning_content") for m in last if m["role"] == "assistant"]
    assert replayed == ["deepseek thinks", None]  # claude's thinking stays with claude


def _model(spec: str, base_url: str) -> Any:
    from ponder.models import RetryPolicy, resolve_model

    return resolve_model(spec, base_url=base_url, api_key="k", retry=RetryPolicy(max_retries=0))


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def test_an_empty_fallback_list_is_a_user_error_naming_model() -> None:
    with pytest.raises(UserError, match=r"model=\[\]"):
        _ = Agent([]).model
    with pytest.raises(UserError, match="at least one model"):
        FallbackModel()
    with pytest.raises(UserError, match="model strings or Models"):
        FallbackModel(42)  # type: ignore[arg-type]
