"""Whole runs against rude servers: degradations reported, empty answers not "answered"."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ponder import Agent
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def _agent(server: FakeOpenAIServer, model: str = "openai:m", **config: Any) -> Agent:
    return Agent(
        model,
        tools=[add],
        base_url=server.base_url,
        api_key="k",
        agent_thought_mode="chat",
        max_retries=0,
        **config,
    )


SCRIPT: list[FakeReply | str] = [
    FakeReply(tool_calls=[FakeToolCall(name="add", arguments={"a": 17, "b": 23})]),
    FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "40"})]),
    "40",
]


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_run_against_a_llamacpp_like_server_degrades_and_finishes(streamed: bool) -> None:
    quirks = ["error_on_required", "error_on_null_content", "refuse_streamed_tools"]
    async with FakeOpenAIServer(SCRIPT, quirks=quirks) as server:
        agent = _agent(server)
        if streamed:
            events = [e async for e in agent.stream("What is 17 + 23?")]
        else:
            events = []
            agent.on_event()(events.append)
            result = await agent.run("What is 17 + 23?")
    finished = of_kind(events, "run_finished")[0]
    assert finished.output == "40" and finished.stop_reason == "answered"
    degraded = {e.feature: e.source for e in of_kind(events, "model_degraded")}
    assert degraded["required_tool_choice"] == "detected"
    assert degraded["null_content"] == "detected"
    assert ("stream_tool_calls" in degraded) is streamed
    assert len(of_kind(events, "model_degraded")) == len(degraded)  # once per feature
    assert of_kind(events, "tool_call_finished")[0].output == "40"
    if not streamed:
        assert result.output == "40"


async def test_the_llamacpp_profile_needs_no_failed_request() -> None:
    async with FakeOpenAIServer(
        SCRIPT, quirks=["error_on_required", "error_on_null_content"]
    ) as server:
        events = [e async for e in _agent(server, "llamacpp:m").stream("What is 17 + 23?")]
    assert of_kind(events, "run_finished")[0].output == "40"
    assert len(server.requests) == 3
    sources = {e.source for e in of_kind(events, "model_degraded")}
    assert sources == {"profile"}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (FakeReply(content="  "), "empty_answer"),
        (FakeReply(content="", finish_reason="content_filter"), "content_filter"),
    ],
)
async def test_no_answer_twice_stops_with_a_reason(reply: FakeReply, reason: str) -> None:
    async with FakeOpenAIServer([reply, reply]) as server:
        events = [e async for e in _agent(server, agent_strategy="no-action").stream("hi")]
    finished = of_kind(events, "run_finished")[0]
    assert finished.stop_reason == reason
    assert [e.retrying for e in of_kind(events, "model_unanswered")] == [True, False]
    assert len(server.requests) == 2


async def test_no_answer_once_is_retried() -> None:
    async with FakeOpenAIServer(["", "hello"]) as server:
        events = [e async for e in _agent(server, agent_strategy="no-action").stream("hi")]
    finished = of_kind(events, "run_finished")[0]
    assert (finished.output, finished.stop_reason) == ("hello", "answered")


async def test_a_server_that_ignores_tool_choice_still_ends_the_run_cleanly() -> None:
    think = FakeToolCall(name="think_and_reason", arguments={"last_step": "", "summary": "x"})
    script = [FakeReply(tool_calls=[think]), *SCRIPT, "40", "40", "40"]
    async with FakeOpenAIServer(script, quirks=["ignore_tool_choice"]) as server:
        agent = Agent("openai:m", tools=[add], base_url=server.base_url, api_key="k", max_retries=0)
        result = await agent.run("What is 17 + 23?")
    assert result.status == "completed" and result.stop_reason
    forced = [r for r in server.requests if isinstance(r.get("tool_choice"), dict)]
    assert forced  # ponder asked for its reasoning call; the server answered in text
    assert len(server.requests) <= len(script)


def _step_script(body: dict[str, Any]) -> FakeReply | str:
    last = str(body["messages"][-1].get("content") or "")
    if "JSON Schema" in last:
        if "needs_decomposition" in last:
            step = {"id": "a", "description": "Multiply", "depends_on": []}
            plan = {"needs_decomposition": True, "reason": "one part", "steps": [step]}
            return "Here is the plan: " + json.dumps(plan) + " Done."
        return "```json\n" + json.dumps({"summary": "multiplied", "outputs": ["391"]}) + "\n```"
    if body.get("tools"):
        if any(m["role"] == "tool" for m in body["messages"]):
            return FakeReply(
                tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "391"})]
            )
        return FakeReply(tool_calls=[FakeToolCall(name="add", arguments={"a": 390, "b": 1})])
    return "391"


async def test_step_react_plans_and_summaries_as_json_in_text() -> None:
    async with FakeOpenAIServer(_step_script, quirks=["refuse_response_format"]) as server:
        agent = _agent(
            server,
            agent_workflow="step-react",
            enable_thinking_tool=False,
            model_capabilities={"forced_tool_choice": False},
        )
        events = [e async for e in agent.stream("What is 390 + 1?")]
    finished = of_kind(events, "run_finished")[0]
    assert finished.output == "391"
    assert of_kind(events, "step_finished")[0].summary == "multiplied"
    degraded = {e.feature: e.source for e in of_kind(events, "model_degraded")}
    assert degraded["json_schema_output"] == "detected"
    formats = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert formats.count("json_schema") == 1 and "json_object" in formats
