"""The official openai client drives client-side tools, approvals, retries and refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ponder.agent import Agent
from ponder.messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app

from .live import LiveServer, live_server, sse_events
from .openai_agents import PUBLISHED, publish_agent, weather_agent

WEATHER_TOOL: Any = {
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
QUESTION: Any = {"role": "user", "content": "What is the weather in Paris?"}


@pytest.fixture
def server() -> Iterator[LiveServer]:
    agent = weather_agent()
    with live_server(create_app(agent)) as running:
        running.agent = agent  # type: ignore[attr-defined]
        yield running


def client_for(server: LiveServer, retries: int = 0) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=retries)


def runs_of(server: LiveServer) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = httpx.get(f"{server.url}/v1/runs").json()["runs"]
    return runs


def test_a_client_tool_call_suspends_and_its_result_resumes_the_run(server: LiveServer) -> None:
    client = client_for(server)
    first = client.chat.completions.create(model="m", messages=[QUESTION], tools=[WEATHER_TOOL])
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    calls = choice.message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
        ("get_weather", {"city": "Paris"})
    ]
    assert runs_of(server)[0]["status"] == "suspended"

    history: list[Any] = [
        QUESTION,
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "22 °C and sunny"},
    ]
    second = client.chat.completions.create(model="m", messages=history, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content == "In Paris: 22 °C and sunny."
    assert second.choices[0].finish_reason == "stop"
    assert second.id == first.id  # the same run went on
    runs = runs_of(server)
    assert [r["status"] for r in runs] == ["completed"]
    assert second.usage is not None and second.usage.total_tokens > first.usage.total_tokens  # type: ignore[union-attr]


def test_the_tool_loop_streams_tool_calls_then_the_answer(server: LiveServer) -> None:
    client = client_for(server)
    stream = client.chat.completions.create(
        model="m", messages=[QUESTION], tools=[WEATHER_TOOL], stream=True
    )
    calls: dict[int, dict[str, str]] = {}
    finish: list[str] = []
    for chunk in stream:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or ():
                entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                entry["id"] += delta.id or ""
                entry["name"] += delta.function.name or "" if delta.function else ""
                entry["arguments"] += delta.function.arguments or "" if delta.function else ""
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    assert finish == ["tool_calls"]
    assert [c["name"] for c in calls.values()] == ["get_weather"]
    call = calls[0]
    history: list[Any] = [
        QUESTION,
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": call["arguments"]},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call["id"], "content": "rain"},
    ]
    answer = client.chat.completions.create(
        model="m", messages=history, tools=[WEATHER_TOOL], stream=True
    )
    text, finish = "", []
    for chunk in answer:
        for choice in chunk.choices:
            text += choice.delta.content or ""
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    assert text == "In Paris: rain." and finish == ["stop"]


def test_the_whole_history_reaches_the_agent(server: LiveServer) -> None:
    client = client_for(server)
    history: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2+2?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "calc", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "4"},
        {"role": "assistant", "content": "It is 4."},
        {"role": "user", "content": "And 3+3?"},
    ]
    answer = client.chat.completions.create(model="m", messages=history)
    model = server.agent.model  # type: ignore[attr-defined]
    assert isinstance(model, ScriptedModel)
    sent = model.requests[-1].messages
    calls = [p for m in sent if isinstance(m, AssistantMessage) for p in m.tool_calls]
    assert [(c.id, c.name) for c in calls] == [("c1", "calc")]
    assert [m.content for m in sent if isinstance(m, ToolMessage)] == ["4"]
    users = [m.content for m in sent if isinstance(m, UserMessage)]
    assert users[:2] == ["What is 2+2?", "And 3+3?"]
    assert [m.content for m in sent if isinstance(m, SystemMessage)][-1] == "Be brief."
    assert answer.choices[0].finish_reason == "stop"


@pytest.mark.parametrize(
    ("options", "param"),
    [
        ({"n": 2}, "n"),
        ({"tool_choice": "required", "tools": [WEATHER_TOOL]}, "tool_choice"),
        (
            {
                "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
                "tools": [WEATHER_TOOL],
            },
            "tool_choice",
        ),
        ({"stop": ["\n"]}, "stop"),
        ({"seed": 7}, "seed"),
        ({"logprobs": True}, "logprobs"),
        ({"top_logprobs": 2, "logprobs": True}, "logprobs"),
        ({"tools": [WEATHER_TOOL, WEATHER_TOOL]}, "tools"),
    ],
)
def test_options_the_agent_cannot_honour_are_a_400_naming_them(
    server: LiveServer, options: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client_for(server).chat.completions.create(model="m", messages=[QUESTION], **options)
    assert refused.value.param == param
    assert param.split(".")[0] in refused.value.message
    assert runs_of(server) == []


def test_tool_choice_none_and_text_format_are_honoured(server: LiveServer) -> None:
    answer = client_for(server).chat.completions.create(
        model="m",
        messages=[QUESTION],
        tools=[WEATHER_TOOL],
        tool_choice="none",
        response_format={"type": "text"},
        n=1,
    )
    assert answer.choices[0].finish_reason == "stop"  # the tool was not offered


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([QUESTION, {"role": "tool", "tool_call_id": "nope", "content": "x"}], "messages"),
        (
            [{"role": "tool", "tool_call_id": "x", "content": "x"}, QUESTION],
            "messages.0.tool_call_id",
        ),
        ([{"role": "wizard", "content": "x"}], "messages.0.role"),
        ([{"role": "assistant", "tool_calls": [{"id": "c"}]}, QUESTION], None),
        (
            [{"role": "tool", "tool_call_id": "call_" + "0" * 32 + "_c1", "content": "x"}],
            "messages",
        ),
    ],
)
def test_malformed_histories_are_a_400(
    server: LiveServer, messages: list[Any], param: str | None
) -> None:
    response = httpx.post(
        f"{server.url}/v1/chat/completions", json={"model": "m", "messages": messages}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error"
    if param is not None:
        assert error["param"] == param


def test_tools_of_the_wrong_shape_are_a_400(server: LiveServer) -> None:
    bad = {"type": "function", "function": {"name": "has space"}}
    response = httpx.post(
        f"{server.url}/v1/chat/completions",
        json={"model": "m", "messages": [QUESTION], "tools": [bad]},
    )
    assert response.status_code == 400
    assert response.json()["error"]["param"] == "tools.0.function.name"


def test_an_approval_gated_tool_answers_200_with_the_approve_url() -> None:
    PUBLISHED.clear()
    with live_server(create_app(publish_agent())) as server:
        client = client_for(server, retries=2)
        answer = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Publish the report."}]
        )
        waiting = (answer.model_extra or {})["ponder"]
        run_id = waiting["run_id"]
        assert waiting["status"] == "suspended"
        assert [c["name"] for c in waiting["pending_calls"]] == ["publish"]
        assert waiting["approve_url"] == f"{server.url}/v1/runs/{run_id}/resume"
        assert answer.choices[0].finish_reason == "stop"
        assert run_id in (answer.choices[0].message.content or "")
        assert len(runs_of(server)) == 1  # nothing was retried into a second run
        resumed = httpx.post(waiting["approve_url"], json={"decision": "approve"})
        assert resumed.status_code == 200
        with httpx.stream("GET", f"{server.url}/v1/runs/{run_id}/events", timeout=30) as events:
            kinds = [e["event"] for e in sse_events(events.iter_lines())]
        assert kinds[-1] == "run_finished"
        assert PUBLISHED == ["report"]


def test_an_idempotency_key_returns_the_first_run(server: LiveServer) -> None:
    client = client_for(server)
    headers = {"Idempotency-Key": "order-17"}
    first = client.chat.completions.create(model="m", messages=[QUESTION], extra_headers=headers)
    again = client.chat.completions.create(model="m", messages=[QUESTION], extra_headers=headers)
    other = client.chat.completions.create(model="m", messages=[QUESTION])
    assert again.id == first.id and other.id != first.id
    assert again.choices[0].message.content == first.choices[0].message.content
    assert len(runs_of(server)) == 2


def test_models_lists_the_agent(server: LiveServer) -> None:
    client = client_for(server)
    assert [m.id for m in client.models.list()] == ["ponder"]
    assert client.models.retrieve("anything").id == "anything"


def test_completion_fields_are_right(server: LiveServer) -> None:
    answer = client_for(server).chat.completions.create(model="my-agent", messages=[QUESTION])
    run = runs_of(server)[0]
    assert answer.id == f"chatcmpl-{run['id']}" and answer.object == "chat.completion"
    assert answer.model == "my-agent" and answer.created == int(run["created"])
    usage = answer.usage
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def step_agent_factory() -> Any:
    """A step-react agent per run: its plan and step summaries are JSON the model writes."""

    def make() -> Agent:
        plan = {
            "needs_decomposition": True,
            "reason": "two parts",
            "steps": [
                {"id": "a", "description": "Look", "depends_on": []},
                {"id": "b", "description": "Tell", "depends_on": ["a"]},
            ],
        }
        script = [
            reply(json.dumps(plan)),
            call_tools(("agent_stop", {"result": "looked"})),
            reply(json.dumps({"summary": "Looked.", "outputs": []})),
            call_tools(("agent_stop", {"result": "told"})),
            reply(json.dumps({"summary": "Told.", "outputs": []})),
            reply("Here is the answer."),
        ]
        return Agent(
            ScriptedModel(script),
            agent_workflow="step-react",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )

    return make


@pytest.mark.parametrize("stream", [True, False])
def test_a_step_react_answer_carries_no_plan_or_summary_json(stream: bool) -> None:
    with live_server(create_app(step_agent_factory())) as server:
        client = client_for(server)
        if stream:
            chunks = client.chat.completions.create(model="m", messages=[QUESTION], stream=True)
            text = "".join(c.delta.content or "" for chunk in chunks for c in chunk.choices)
        else:
            answer = client.chat.completions.create(model="m", messages=[QUESTION])
            text = answer.choices[0].message.content or ""
    assert text == "Here is the answer."
