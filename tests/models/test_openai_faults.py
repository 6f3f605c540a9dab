"""Injected faults: retried where they should be, typed errors where they should not."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ponder.exceptions import (
    ModelConnectionError,
    ModelHTTPError,
    ModelResponseError,
    ModelTimeoutError,
    UserError,
)
from ponder.messages import UserMessage
from ponder.models import (
    ForceTool,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    OpenAIModel,
    RetryPolicy,
    TextDelta,
    ToolDefinition,
    resolve_model,
)
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall

FAST = RetryPolicy(max_retries=2, backoff_base=0.001, backoff_cap=0.01)
ASK = ModelRequest(messages=[UserMessage(content="hi")])


def _model(server: FakeOpenAIServer, retry: RetryPolicy = FAST, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel("m", api_key="k", base_url=server.base_url, retry=retry, **kwargs)


async def _stream(model: OpenAIModel, request: ModelRequest = ASK) -> list[Any]:
    return [event async for event in model.stream(request)]


@pytest.mark.parametrize("streamed", [False, True])
async def test_429_honours_retry_after_then_succeeds(streamed: bool) -> None:
    # The backoff alone would outlast the total timeout: success proves Retry-After was used.
    patient = RetryPolicy(max_retries=2, backoff_base=100.0, backoff_cap=100.0)
    script: list[FakeReply | str] = [
        FakeReply(status=429, retry_after=0.01, error_message="slow down"),
        "ok",
    ]
    async with FakeOpenAIServer(script) as server:
        model = _model(server, patient, settings=ModelSettings(timeout=10))
        if streamed:
            response = (await _stream(model))[-1]
        else:
            response = await model.request(ASK)
    assert response.text == "ok" and len(server.requests) == 2


async def test_retry_after_is_capped() -> None:
    capped = RetryPolicy(max_retries=1, retry_after_cap=0.01)
    async with FakeOpenAIServer([FakeReply(status=429, retry_after=3600), "ok"]) as server:
        assert (await _model(server, capped).request(ASK)).text == "ok"


async def test_500_is_retried_until_the_cap_then_typed() -> None:
    script = [FakeReply(status=500, error_message="upstream exploded")] * 3
    async with FakeOpenAIServer(script) as server:
        with pytest.raises(ModelHTTPError) as info:
            await _model(server).request(ASK)
    assert info.value.status_code == 500
    assert "upstream exploded" in str(info.value)
    assert len(server.requests) == 3  # the first attempt and max_retries=2


async def test_client_errors_are_not_retried() -> None:
    async with FakeOpenAIServer([FakeReply(status=401, error_message="bad key"), "x"]) as server:
        with pytest.raises(ModelHTTPError, match="HTTP 401: bad key"):
            await _model(server).request(ASK)
    assert len(server.requests) == 1


async def test_slow_first_byte_is_retried_per_attempt_and_bounded_in_total() -> None:
    per_attempt = RetryPolicy(max_retries=2, backoff_base=0.001, attempt_timeout=0.2)
    async with FakeOpenAIServer([FakeReply(content="late", delay=5), "fast"]) as server:
        assert (await _model(server, per_attempt).request(ASK)).text == "fast"
    async with FakeOpenAIServer([FakeReply(content="late", delay=5)] * 2) as server:
        model = _model(server, settings=ModelSettings(timeout=0.3))
        with pytest.raises(ModelTimeoutError, match="total timeout"):
            await model.request(ASK)
        with pytest.raises(ModelTimeoutError):
            await _stream(model)


async def test_connection_dropped_before_anything_is_retried() -> None:
    async with FakeOpenAIServer([FakeReply(content="x", drop_after=0), "ok", "ok2"]) as server:
        model = _model(server)
        assert (await model.request(ASK)).text == "ok"
        server.script._items.insert(2, FakeReply(content="y", drop_after=1))
        assert (await _stream(model))[-1].text == "ok2"
    assert len(server.requests) == 4


async def test_connection_dropped_mid_stream_is_typed_and_yields_no_response() -> None:
    call = FakeToolCall(name="add", arguments={"a": 1, "b": 2})
    script: list[FakeReply | str] = [
        FakeReply(content="partial text", tool_calls=[call], drop_after=6),
        "unused",
    ]
    seen: list[Any] = []
    async with FakeOpenAIServer(script) as server:
        with pytest.raises(ModelConnectionError):
            async for event in _model(server).stream(ASK):
                seen.append(event)
    assert any(isinstance(e, TextDelta) for e in seen)
    assert not any(isinstance(e, ModelResponse) for e in seen)
    assert len(server.requests) == 1


async def test_malformed_chunk_and_body_are_typed_errors() -> None:
    script = [FakeReply(content="abc", malformed=True), FakeReply(content="abc", malformed=True)]
    async with FakeOpenAIServer(script) as server:
        model = _model(server)
        with pytest.raises(ModelResponseError, match="malformed"):
            await _stream(model)
        with pytest.raises(ModelResponseError, match="malformed"):
            await model.request(ASK)
    assert len(server.requests) == 2


async def test_empty_choices_is_a_typed_error() -> None:
    script = [FakeReply(content="x", empty_choices=True)] * 4  # a stream left empty is retried
    async with FakeOpenAIServer(script) as server:
        model = _model(server)
        with pytest.raises(ModelResponseError, match="no choices"):
            await model.request(ASK)
        tools = ModelRequest(
            messages=ASK.messages, tools=[ToolDefinition(name="t")], tool_choice=ForceTool("t")
        )
        with pytest.raises(ModelResponseError, match="before the provider finished"):
            await _stream(model, tools)


async def test_unreachable_provider_is_a_connection_error() -> None:
    async with FakeOpenAIServer([]) as server:
        url = server.base_url
    model = OpenAIModel("m", api_key="k", base_url=url, retry=FAST)
    with pytest.raises(ModelConnectionError, match="connection failed"):
        await model.request(ASK)


async def test_resolve_model_uses_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        resolve_model("openai:gpt-4o-mini")
    with pytest.raises(UserError, match="DEEPSEEK_API_KEY"):
        resolve_model("deepseek:deepseek-chat")
    with pytest.raises(UserError, match="unknown model provider 'nosuch'"):
        resolve_model("nosuch:x")
    with pytest.raises(UserError, match="names no model"):
        resolve_model("openai:")
    with pytest.raises(UserError):
        resolve_model(42)  # type: ignore[arg-type]
    async with FakeOpenAIServer(["from env", "from ollama"]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        model = resolve_model("openai:gpt-4o-mini")
        assert model.name == "openai:gpt-4o-mini"
        assert (await model.request(ASK)).text == "from env"
        monkeypatch.setenv("OLLAMA_BASE_URL", server.base_url)
        assert (await resolve_model("ollama:llama3").request(ASK)).text == "from ollama"
    assert server.requests[1]["model"] == "llama3"
    assert resolve_model(model) is model
    assert (await resolve_model("scripted").request(ASK)).text == "hi"


def test_fake_server_as_a_subprocess(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "from a subprocess"}, "second"]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ponder.testing.fake_openai",
            "--port",
            "0",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        import asyncio

        model = OpenAIModel("m", api_key="k", base_url=base_url, retry=FAST)
        assert asyncio.run(model.request(ASK)).text == "from a subprocess"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_fake_server_cli_rejects_a_bad_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('[{"content": 5, "bogus": true}]')
    proc = subprocess.run(
        [sys.executable, "-m", "ponder.testing.fake_openai", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert "cannot read script" in proc.stderr and proc.stdout == ""
