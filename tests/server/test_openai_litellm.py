"""litellm's ``completion`` drives the endpoint as an OpenAI-compatible provider.

Plain and streamed answers, a client-side tool loop (the call comes back as
``tool_calls``, and the request carrying its result resumes the same run), and a typed
answer for a pydantic ``response_format``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.server.app import create_app

from .live import LiveServer, live_server
from .openai_agents import report_agent

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no fetch from the network
litellm = pytest.importorskip("litellm")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@pytest.fixture
def server() -> Iterator[LiveServer]:
    with live_server(create_app(report_agent())) as running:
        yield running


def complete(server: LiveServer, messages: list[dict[str, Any]], **options: Any) -> Any:
    return litellm.completion(
        model="openai/ponder",
        api_base=f"{server.url}/v1",
        api_key="unused",
        messages=messages,
        num_retries=0,
        **options,
    )


def test_a_plain_and_a_streamed_answer(server: LiveServer) -> None:
    history = [{"role": "user", "content": "Hello"}]
    answer = complete(server, history)
    assert answer.choices[0].message.content.endswith("messages")
    assert answer.choices[0].finish_reason == "stop"
    assert answer.usage.total_tokens >= 0
    chunks = complete(server, history, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == (
        answer.choices[0].message.content
    )


def test_a_client_side_tool_loop(server: LiveServer) -> None:
    question = {"role": "user", "content": "What is the weather in Paris?"}
    asked = complete(server, [question], tools=[WEATHER])
    choice = asked.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": "get_weather", "arguments": call.function.arguments},
            }
        ],
    }
    result = {"role": "tool", "tool_call_id": call.id, "content": "hail"}
    answer = complete(server, [question, assistant, result], tools=[WEATHER])
    assert answer.choices[0].message.content == "In Paris: hail."


def test_a_refused_option_is_a_bad_request(server: LiveServer) -> None:
    with pytest.raises(litellm.BadRequestError) as refused:
        complete(server, [{"role": "user", "content": "Hi"}], n=2)
    assert "n" in str(refused.value)


class Report(BaseModel):
    city: str
    sky: str


def test_a_pydantic_response_format_gets_its_json(server: LiveServer) -> None:
    question = {"role": "user", "content": "What is the weather in Paris?"}
    answer = complete(server, [question], response_format=Report)
    content = answer.choices[0].message.content
    assert Report.model_validate_json(content) == Report(city="Paris", sky="unknown")
    chunks = complete(server, [question], response_format=Report, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == content
