"""``response_format`` types the agent's answer: the openai client's ``parse`` gets a model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from pydantic import BaseModel

from ponder.agent import Agent
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, reply
from ponder.server.app import create_app

from .live import LiveServer, live_server
from .openai_agents import report_agent

QUESTION: Any = {"role": "user", "content": "What is the weather in Paris?"}
REPORT_SCHEMA: Any = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "sky": {"type": "string"}},
    "required": ["city", "sky"],
    "additionalProperties": False,
}
XML: Any = {"type": "xml"}
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


class Report(BaseModel):
    city: str
    sky: str


def json_schema(schema: Any = REPORT_SCHEMA, **extra: Any) -> Any:
    return {"type": "json_schema", "json_schema": {"name": "report", "schema": schema, **extra}}


@pytest.fixture
def server() -> Iterator[LiveServer]:
    agent = report_agent()
    with live_server(create_app(agent)) as running:
        running.agent = agent  # type: ignore[attr-defined]
        yield running


def client_for(server: LiveServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def runs_of(server: LiveServer) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = httpx.get(f"{server.url}/v1/runs").json()["runs"]
    return runs


def last_request(server: LiveServer) -> ModelRequest:
    model = server.agent.model  # type: ignore[attr-defined]
    assert isinstance(model, ScriptedModel)
    return model.requests[-1]


def test_parse_gets_the_answer_as_the_pydantic_model(server: LiveServer) -> None:
    parsed = client_for(server).chat.completions.parse(
        model="m", messages=[QUESTION], response_format=Report
    )
    message = parsed.choices[0].message
    assert message.parsed == Report(city="Paris", sky="unknown")
    assert json.loads(message.content or "") == {"city": "Paris", "sky": "unknown"}
    asked = last_request(server).output
    assert asked is not None and asked.name == "Report" and asked.strict  # as the SDK asked
    beta = client_for(server).beta.chat.completions.parse(
        model="m", messages=[QUESTION], response_format=Report
    )
    assert beta.choices[0].message.parsed == Report(city="Paris", sky="unknown")


def test_a_streamed_typed_answer_is_its_validated_json(server: LiveServer) -> None:
    client = client_for(server)
    with client.beta.chat.completions.stream(
        model="m", messages=[QUESTION], response_format=Report
    ) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.choices[0].message.parsed == Report(city="Paris", sky="unknown")
    chunks = client.chat.completions.create(
        model="m", messages=[QUESTION], response_format=json_schema(), stream=True
    )
    text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
    assert json.loads(text) == {"city": "Paris", "sky": "unknown"}  # not the text reply


def test_name_and_strict_reach_the_model(server: LiveServer) -> None:
    answer = client_for(server).chat.completions.create(
        model="m", messages=[QUESTION], response_format=json_schema(strict=False)
    )
    assert json.loads(answer.choices[0].message.content or "")["city"] == "Paris"
    asked = last_request(server).output
    assert asked is not None and asked.name == "report" and not asked.strict


def test_a_schema_that_is_not_an_object_answers_its_own_json(server: LiveServer) -> None:
    listing = {"type": "array", "items": REPORT_SCHEMA}
    answer = client_for(server).chat.completions.create(
        model="m", messages=[QUESTION], response_format=json_schema(listing)
    )
    assert json.loads(answer.choices[0].message.content or "") == [
        {"city": "Paris", "sky": "unknown"}
    ]


def test_client_tools_then_a_typed_answer(server: LiveServer) -> None:
    client = client_for(server)
    first = client.chat.completions.create(
        model="m", messages=[QUESTION], tools=[WEATHER_TOOL], response_format=json_schema()
    )
    calls = first.choices[0].message.tool_calls or []
    assert first.choices[0].finish_reason == "tool_calls" and len(calls) == 1
    history: list[Any] = [
        QUESTION,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "rain"},
    ]
    second = client.chat.completions.create(
        model="m", messages=history, tools=[WEATHER_TOOL], response_format=json_schema()
    )
    assert json.loads(second.choices[0].message.content or "") == {"city": "Paris", "sky": "rain"}
    assert [r["status"] for r in runs_of(server)] == ["completed"]


def json_object_script(request: ModelRequest) -> ModelResponse:
    """A list first; an object once told that it must be one."""
    corrected = any(
        "of type 'object'" in str(getattr(m, "content", "")) for m in request.messages[1:]
    )
    return reply('{"items": [1, 2]}' if request.output is not None and corrected else "[1, 2]")


def test_json_object_asks_again_until_the_answer_is_an_object() -> None:
    agent = Agent(
        ScriptedModel(json_object_script), agent_thought_mode="chat", enable_thinking_tool=False
    )
    with live_server(create_app(agent)) as server:
        answer = client_for(server).chat.completions.create(
            model="m", messages=[QUESTION], response_format={"type": "json_object"}
        )
    assert json.loads(answer.choices[0].message.content or "") == {"items": [1, 2]}


def test_an_answer_that_never_validates_is_a_clear_error() -> None:
    agent = Agent(
        ScriptedModel(lambda _: reply("It rains.")),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        structured_output_retries=1,
    )
    with live_server(create_app(agent)) as server:
        client = client_for(server)
        with pytest.raises(openai.InternalServerError) as caught:
            client.chat.completions.create(
                model="m", messages=[QUESTION], response_format=json_schema()
            )
        error = caught.value
        assert error.status_code == 502 and error.response.headers["x-should-retry"] == "false"
        assert error.code == "invalid_output" and error.param == "response_format"
        assert "not valid JSON" in error.message
        stream = client.chat.completions.create(
            model="m", messages=[QUESTION], response_format=json_schema(), stream=True
        )
        content = ""
        with pytest.raises(openai.APIError) as streamed:
            for chunk in stream:
                content += "".join(c.delta.content or "" for c in chunk.choices)
        assert "matches response_format" in str(streamed.value) and content == ""
        assert [r["stop_reason"] for r in runs_of(server)] == ["invalid_output"] * 2


@pytest.mark.parametrize(
    ("response_format", "param"),
    [
        ("json", "response_format"),
        (["json_schema"], "response_format"),
        (7, "response_format"),
        ({}, "response_format.type"),
        ({"type": "yaml"}, "response_format.type"),
        ({"type": None}, "response_format.type"),
        ({"type": "json_schema"}, "response_format.json_schema"),
        ({"type": "json_schema", "json_schema": "report"}, "response_format.json_schema"),
        ({"type": "json_schema", "json_schema": {"schema": REPORT_SCHEMA}}, "response_format"),
        (
            {"type": "json_schema", "json_schema": {"name": "has space", "schema": {}}},
            "response_format.json_schema.name",
        ),
        ({"type": "json_schema", "json_schema": {"name": "x" * 65}}, "response_format"),
        ({"type": "json_schema", "json_schema": {"name": 3}}, "response_format"),
        (json_schema(strict="yes"), "response_format.json_schema.strict"),
        (json_schema(["not", "a", "schema"]), "response_format.json_schema.schema"),
        (json_schema({"type": 5}), "response_format.json_schema.schema"),
        (json_schema({"type": "object", "required": "city"}), "response_format"),
        (json_schema({"properties": {"a": {"minLength": -1}}}), "response_format"),
        (json_schema({"$ref": "#/$defs/Missing"}), "response_format.json_schema.schema"),
        (json_schema({"$ref": "https://example.com/s.json"}), "response_format.json_schema.schema"),
    ],
)
def test_malformed_response_formats_are_a_400_naming_it(
    server: LiveServer, response_format: Any, param: str
) -> None:
    response = httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "m", "messages": [QUESTION], "response_format": response_format},
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    assert error["param"].startswith(param) and "response_format" in error["message"]
    assert runs_of(server) == []


def test_a_deeply_nested_schema_is_a_400(server: LiveServer) -> None:
    schema: Any = {"type": "object"}
    for _ in range(200):  # deep enough to break the run's checkpoint, were it let through
        schema = {"type": "object", "properties": {"a": schema}}
    response = httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "m", "messages": [QUESTION], "response_format": json_schema(schema)},
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "response_format.json_schema.schema"
    assert "levels deep" in response.json()["error"]["message"]


def test_a_bad_response_format_on_a_tool_result_request_is_a_400(server: LiveServer) -> None:
    client = client_for(server)
    first = client.chat.completions.create(model="m", messages=[QUESTION], tools=[WEATHER_TOOL])
    calls = first.choices[0].message.tool_calls or []
    history: list[Any] = [
        QUESTION,
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "rain"},
    ]
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="m", messages=history, tools=[WEATHER_TOOL], response_format=XML
        )
    assert refused.value.param == "response_format.type"
    assert runs_of(server)[0]["status"] == "suspended"  # the run still waits for its results


@pytest.mark.parametrize("response_format", [json_schema(), {"type": "json_object"}])
def test_runs_on_temporal_refuse_a_structured_answer(response_format: Any) -> None:
    pytest.importorskip("temporalio")
    from ponder.temporal.launcher import TemporalLauncher

    launcher = TemporalLauncher("127.0.0.1:1", "nowhere")  # refused before it connects
    with live_server(create_app(launcher=launcher)) as server:
        response = httpx.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "m", "messages": [QUESTION], "response_format": response_format},
        )
        text = httpx.post(
            f"{server.url}/v1/chat/completions",
            json={"model": "m", "messages": [QUESTION], "response_format": {"type": "xml"}},
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "response_format" and "Temporal" in error["message"]
    assert text.status_code == 400 and text.json()["error"]["param"] == "response_format.type"
