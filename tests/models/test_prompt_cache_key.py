"""OpenAI's ``prompt_cache_key``: one key per stable prefix, on the wire, dropped where refused."""

from __future__ import annotations

from typing import Any

from ponder import Agent
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


def script() -> list[FakeReply]:
    call = FakeToolCall(name="multiply", id="m1", arguments={"a": 17, "b": 23})
    stop = FakeToolCall(name="agent_stop", id="s1", arguments={})
    return [FakeReply(tool_calls=[call]), FakeReply(tool_calls=[stop]), FakeReply(content="391")]


def agent_for(server: FakeOpenAIServer, model: str, **config: Any) -> Agent:
    return Agent(
        model,
        tools=[multiply],
        base_url=server.base_url,
        api_key="k",
        enable_thinking_tool=False,
        agent_thought_mode="chat",
        **config,
    )


def keys(server: FakeOpenAIServer) -> list[Any]:
    return [body.get("prompt_cache_key") for body in server.requests]


def test_every_request_of_an_agent_names_one_cache_and_another_prompt_another() -> None:
    with FakeOpenAIServer(script() + script()) as server:
        agent = agent_for(server, "openai:gpt-4o-mini")
        assert agent.run_sync("17 times 23?").output == "391"
        assert agent.run_sync("17 times 23, again?").output == "391"
    sent = keys(server)  # the answer's request keeps the tools too: one prefix throughout
    assert len(sent) == 6 and len(set(sent)) == 1
    assert str(sent[0]).startswith("ponder-")
    with FakeOpenAIServer(script()) as other:
        agent_for(other, "openai:gpt-4o-mini", instructions="Answer in French.").run_sync("?")
    assert keys(other)[0] not in sent  # another system prompt, another cache


def test_other_providers_are_not_sent_the_key() -> None:
    with FakeOpenAIServer(script()) as server:
        assert agent_for(server, "vllm:some-model").run_sync("17 times 23?").output == "391"
    assert keys(server) == [None, None, None]


def test_a_server_that_refuses_the_field_is_sent_it_no_more() -> None:
    forget_learned()
    with FakeOpenAIServer(script(), quirks=["refuse_unknown_fields"]) as server:
        result = agent_for(server, "openai:strict-model").run_sync("17 times 23?")
    forget_learned()
    assert result.status == "completed" and result.output == "391"
    assert keys(server)[0] is not None  # sent once, refused with 400
    assert keys(server)[1:] == [None, None, None]  # then dropped for every request after
