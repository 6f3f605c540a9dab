"""The OpenAI-compatible endpoint against OpenAI's OpenAPI document: the fields a strict
client reads, options it may send, images, and malformed requests; over HTTP."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ponder.agent import Agent
from ponder.messages import UserMessage
from ponder.models import ModelRequest, ScriptedModel
from ponder.server.app import create_app

from .live import LiveServer, live_server

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def describe_images(request: ModelRequest) -> str:
    """Answers with what the user's messages carried."""
    users = [
        m
        for m in request.messages
        if isinstance(m, UserMessage) and not m.content.startswith("<BEGIN_OF")
    ]
    seen = [
        f"{a.media_type}:{a.url or len(base64.b64decode(a.data or ''))}"
        for m in users
        for a in m.attachments
    ]
    return f"{users[-1].content} | images: {', '.join(seen) or 'none'}"


@pytest.fixture
def server() -> Iterator[LiveServer]:
    agent = Agent(
        ScriptedModel(describe_images), agent_thought_mode="chat", enable_thinking_tool=False
    )
    with live_server(create_app(agent)) as running:
        yield running


def post(server: LiveServer, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{server.url}/v1/chat/completions",
        content=content,
        headers={"content-type": "application/json", **headers},
        timeout=60,
    )


def ask(text: str = "hi", **options: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **options}


def sse(response: httpx.Response) -> list[dict[str, Any]]:
    lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def test_a_completion_has_every_field_the_schema_requires(server: LiveServer) -> None:
    done = post(server, ask())
    assert done.status_code == 200, done.text
    message = done.json()["choices"][0]["message"]
    assert message["refusal"] is None and message["role"] == "assistant"
    assert "x-ponder-ignored" not in done.headers


def test_chunks_of_one_completion_share_created_and_carry_usage_null(server: LiveServer) -> None:
    done = post(server, ask(stream=True, stream_options={"include_usage": True}))
    assert done.status_code == 200, done.text
    chunks = sse(done)
    assert len({c["created"] for c in chunks}) == 1
    *deltas, last = chunks
    assert deltas and all(c["usage"] is None for c in deltas)
    assert last["choices"] == [] and last["usage"]["total_tokens"] > 0


def test_temperature_and_max_tokens_are_accepted_and_named_as_ignored(server: LiveServer) -> None:
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.2, max_tokens=50
    )
    assert raw.headers["x-ponder-ignored"] == "temperature, max_tokens"
    assert raw.parse().choices[0].message.content == "hi | images: none"
    streamed = post(server, ask(stream=True, max_completion_tokens=9))
    assert streamed.headers["x-ponder-ignored"] == "max_completion_tokens"


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"stream": "yes"}, "stream"),
        ({"stop": "END"}, "stop"),
        ({"seed": 1}, "seed"),
        ({"logprobs": True, "top_logprobs": 3}, "logprobs"),
        ({"top_logprobs": 3}, "top_logprobs"),
        ({"presence_penalty": 0.5}, "presence_penalty"),
    ],
)
def test_options_not_honoured_are_refused_by_name(
    server: LiveServer, options: dict[str, Any], param: str
) -> None:
    refused = post(server, ask(**options))
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_default_values_of_unsupported_options_are_accepted(server: LiveServer) -> None:
    done = post(server, ask(logprobs=False, top_p=1, presence_penalty=0, stop=None))
    assert done.status_code == 200, done.text


def test_a_malformed_body_names_no_field(server: LiveServer) -> None:
    refused = post(server, b'{"model": "m", "messages": [')
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["param"] is None and "not valid JSON" in error["message"]


def image_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def test_images_reach_the_model(server: LiveServer) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    earlier = {
        "role": "user",
        "content": [{"type": "text", "text": "first"}, image_part("https://example.com/cat.jpg")],
    }
    last = {
        "role": "user",
        "content": [{"type": "text", "text": "what is it?"}, image_part(data_url)],
    }
    answer = {"role": "assistant", "content": "a cat"}
    done = post(server, {"model": "m", "messages": [earlier, answer, last]})
    assert done.status_code == 200, done.text
    content = done.json()["choices"][0]["message"]["content"]
    assert content == (
        f"what is it? | images: image/jpeg:https://example.com/cat.jpg, image/png:{len(PNG)}"
    )


@pytest.mark.parametrize(
    ("part", "param", "words"),
    [
        (image_part("/etc/passwd"), "messages.0.content.1.image_url.url", "not an http(s) URL"),
        (image_part("file:///etc/passwd"), "messages.0.content.1.image_url.url", "http(s)"),
        (image_part("data:image/png;base64,@@@"), "messages.0.content.1.image_url.url", "base64"),
        ({"type": "input_audio", "input_audio": {}}, "messages.0.content.1.type", "input_audio"),
        ({"type": "image_url"}, "messages.0.content.1.image_url", "url"),
    ],
)
def test_a_bad_content_part_is_refused_and_starts_no_run(
    server: LiveServer, part: dict[str, Any], param: str, words: str
) -> None:
    message = {"role": "user", "content": [{"type": "text", "text": "look"}, part]}
    refused = post(server, {"model": "m", "messages": [message]})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["param"] == param and words in error["message"]
    assert httpx.get(f"{server.url}/v1/runs").json()["runs"] == []


def test_a_started_run_is_named_by_run_id_as_its_events_are(server: LiveServer) -> None:
    started = httpx.post(f"{server.url}/v1/runs", json={"prompt": "hi"}, timeout=60)
    assert started.status_code == 201, started.text
    summary = started.json()
    assert summary["run_id"] == summary["id"]
    listed = httpx.get(f"{server.url}/v1/runs", timeout=60).json()["runs"]
    assert [run["run_id"] for run in listed] == [summary["run_id"]]
