"""The official openai client talking to /v1/chat/completions, streaming and not."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from ponder import AgentStrategy
from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app

from .live import (
    ANSWER,
    ECHO_FIXED,
    LiveServer,
    add,
    echoing_agent,
    live_server,
    thinking_agent_factory,
)


@pytest.fixture
def server() -> Iterator[LiveServer]:
    gate = threading.Event()
    gate.set()
    with live_server(create_app(thinking_agent_factory(gate))) as running:
        yield running


def client_for(server: LiveServer, api_key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key=api_key, max_retries=0)


def test_completion_has_the_answer_reasoning_and_usage(server: LiveServer) -> None:
    client = client_for(server)
    completion = client.chat.completions.create(
        model="ponder-agent",
        messages=[
            {"role": "system", "content": "You add numbers."},
            {"role": "user", "content": "Add 1+2 and 3+4."},
        ],
    )
    choice = completion.choices[0]
    assert choice.message.content == ANSWER and choice.finish_reason == "stop"
    assert completion.model == "ponder-agent"
    reasoning = (choice.message.model_extra or {})["reasoning_content"]
    assert "[round 1] Plan: think it through, then add." in reasoning
    assert "Thought 3/4: Or use the adder tool." in reasoning
    assert completion.usage is not None and completion.usage.total_tokens > 0
    # the request became a run the viewer can show
    runs = httpx.get(f"{server.url}/v1/runs").json()["runs"]
    assert completion.id == f"chatcmpl-{runs[0]['id']}"
    assert runs[0]["status"] == "completed" and runs[0]["prompt"] == "Add 1+2 and 3+4."


def test_streaming_sends_reasoning_then_the_answer(server: LiveServer) -> None:
    client = client_for(server)
    stream = client.chat.completions.create(
        model="ponder-agent",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Add 1+2 and 3+4."}]}],
        stream=True,
        stream_options={"include_usage": True},
    )
    content, reasoning, finish, usage = "", "", [], None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            reasoning += (choice.delta.model_extra or {}).get("reasoning_content") or ""
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    assert content == ANSWER
    assert reasoning.index("Thought 1/3") < reasoning.index("Thought 4/4")
    assert "[round 4] Both sums known." in reasoning
    assert finish == ["stop"]
    assert usage is not None and usage.prompt_tokens > 0


def test_a_withdrawn_echo_never_reaches_the_stream() -> None:
    """The model's first answer repeats ponder's instruction: the client sees only the next."""
    with live_server(create_app(echoing_agent)) as server:
        client = client_for(server)
        asked: Any = [{"role": "user", "content": "Add 17 and 23."}]
        chunks = list(client.chat.completions.create(model="m", messages=asked, stream=True))
        whole = client.chat.completions.create(model="m", messages=asked)
        run_id = chunks[0].id.removeprefix("chatcmpl-")
        run = httpx.get(f"{server.url}/v1/runs/{run_id}").json()
    deltas = [choice.delta for chunk in chunks for choice in chunk.choices]
    content = [d.content for d in deltas if d.content]
    reasoning = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    assert "".join(content) == ECHO_FIXED == whole.choices[0].message.content == run["output"]
    assert len(content) > 1  # the accepted answer still goes out in chunks
    assert "Add 17 and 23 with the tool." in reasoning


def test_the_streamed_content_is_the_runs_output_not_what_came_before_it() -> None:
    """A retrieval round's reply, and whitespace around the answer, are not the answer."""

    def make() -> Agent:
        said = call_tools(("add", {"a": 1, "b": 2}), text="Let me add. ")
        model = ScriptedModel([said, reply("  It is 3.\n")])
        return Agent(model, tools=[add], tool_calling_mode="rag", enable_thinking_tool=False)

    with live_server(create_app(make)) as server:
        asked: Any = [{"role": "user", "content": "Add 1 and 2."}]
        chunks = list(
            client_for(server).chat.completions.create(model="m", messages=asked, stream=True)
        )
        run = httpx.get(f"{server.url}/v1/runs/{chunks[0].id.removeprefix('chatcmpl-')}").json()
    content = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert "".join(content) == run["output"] == "It is 3."
    assert len(content) > 1


class Signed(AgentStrategy):
    """A strategy that keeps the model's streamed answer with a note appended."""

    category = "chat"

    async def run(self) -> None:
        response = await self.ctx.caller.request("chat")
        self.finish(f"{response.text} (checked)", "answered")


def test_an_answer_the_strategy_changed_streams_as_it_was_kept() -> None:
    def make() -> Agent:
        return Agent(ScriptedModel([reply("It is 3.")]), strategy=Signed)

    with live_server(create_app(make)) as server:
        asked: Any = [{"role": "user", "content": "Add 1 and 2."}]
        chunks = list(
            client_for(server).chat.completions.create(model="m", messages=asked, stream=True)
        )
    content = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert content == ["It is 3. (checked)"]


def test_last_message_must_be_the_users(server: LiveServer) -> None:
    client = client_for(server)
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="m", messages=[{"role": "assistant", "content": "hello"}]
        )
    assert "last message" in str(caught.value)
    with pytest.raises(openai.BadRequestError) as empty:
        client.chat.completions.create(model="m", messages=[])
    assert empty.value.param == "messages"


def test_a_failing_run_is_a_502_not_a_500() -> None:
    # one shared agent whose script covers one run only: the second run's model fails
    agent = Agent(ScriptedModel(["answer one"]), agent_strategy="no-action")
    with live_server(create_app(agent)) as server:
        client = client_for(server)
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "first"}]
        )
        assert first.choices[0].message.content == "answer one"
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert caught.value.status_code == 502
        assert "out of script" in caught.value.message
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "y"}], stream=True
        )
        with pytest.raises(openai.APIError) as streamed:
            for _ in stream:
                pass
        assert "out of script" in str(streamed.value)
        statuses = [r["status"] for r in httpx.get(f"{server.url}/v1/runs").json()["runs"]]
        assert statuses == ["failed", "failed", "completed"]
