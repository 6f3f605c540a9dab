"""One model call sends at most ``1 + max_retries`` requests, whatever happens on the way.

A provider answering 503 forever is asked that many times per call: the retries, the
re-sends of a request downgraded for the provider (a bare 5xx turns off the riskiest
feature the request used) and a fallback chain's models all spend the same budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.config import AgentConfig
from ponder.exceptions import ModelHTTPError, ModelTimeoutError
from ponder.models import FallbackModel, OpenAIModel, RetryPolicy
from ponder.models.capabilities import forget_learned
from ponder.testing import FakeOpenAIServer, FakeReply
from ponder.tools import tool

FAST: dict[str, Any] = {"backoff_base": 0.001, "backoff_cap": 0.01}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def unavailable(_: dict[str, Any]) -> FakeReply:
    return FakeReply(status=503)


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def _fail(agent: Agent[Any], streamed: bool) -> None:
    with pytest.raises(ModelHTTPError):
        if streamed:
            async for _ in agent.stream("add 1 and 2"):
                pass
        else:
            await agent.run("add 1 and 2")


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
@pytest.mark.parametrize("mode", ["reasoning-required", "chat"])
async def test_a_provider_down_for_good_gets_one_call_budget_of_requests(
    mode: str, streamed: bool
) -> None:
    # chat mode sends tool_choice "required" streamed: two features a bare 5xx may turn off
    async with FakeOpenAIServer(unavailable) as server:
        config = AgentConfig(
            model="openai:m",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode=mode,
            max_retries=3,
        )
        await _fail(Agent(config=config, tools=[add]), streamed)
    # 1 + max_retries, one of them a downgraded re-send; where a second feature may be
    # guessed (streamed "required" in chat mode), the call's one spare re-send on top
    assert len(server.requests) == (5 if (mode, streamed) == ("chat", True) else 4)


async def test_a_fallback_chain_shares_the_budget_and_reaches_every_model() -> None:
    async with FakeOpenAIServer(unavailable) as first, FakeOpenAIServer(unavailable) as second:
        retry = RetryPolicy(max_retries=3, **FAST)
        models = [
            OpenAIModel("m", api_key="k", base_url=s.base_url, retry=retry) for s in (first, second)
        ]
        await _fail(Agent(FallbackModel(*models), tools=[add]), streamed=True)
    assert (len(first.requests), len(second.requests)) == (3, 1)


@pytest.mark.parametrize(("profile", "sent"), [("llamacpp", 1), ("openai", 3)])
async def test_a_local_server_is_not_sent_a_request_it_timed_out_on(
    profile: str, sent: int
) -> None:
    # A local server goes on generating after the client gave up: a second copy would
    # queue behind the first (a runaway generation held one for twenty minutes).
    slow = [FakeReply(content="late", delay=2.0) for _ in range(4)]
    async with FakeOpenAIServer(slow) as server:
        agent = Agent(
            f"{profile}:m",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            llm_timeout=0.3,
            max_retries=2,
        )
        with pytest.raises(ModelTimeoutError) as caught:
            await agent.run("Go")
    if profile == "llamacpp":
        assert len(server.requests) == 1 and "not sent again" in str(caught.value)
    else:  # a hosted API runs each request anew: a timed-out attempt is retried
        assert len(server.requests) > 1
