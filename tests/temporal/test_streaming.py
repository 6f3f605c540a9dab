"""Streamed text is exact on Temporal even when a model request is retried mid-stream."""

from __future__ import annotations

from typing import Any

from temporalio.client import Client

from ponder.agent import Agent
from ponder.events import ReasoningDelta, TextDelta
from ponder.temporal import TemporalAgent, build_worker
from ponder.testing import FakeOpenAIServer, FakeReply
from tests.temporal.test_runs import assert_replays

ANSWER = "The final answer is: forty-two, give or take a little."


def slow_answer(body: dict[str, Any]) -> FakeReply:
    """Every request gets the same answer, its later pieces slow to come."""
    return FakeReply(content=ANSWER, chunk_delay=2.0)


async def test_text_shown_before_a_lost_worker_is_not_shown_again(
    client: Client, task_queue: str
) -> None:
    with FakeOpenAIServer(slow_answer) as provider:
        agent = Agent(
            "openai:fake-model",
            base_url=provider.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        remote = TemporalAgent(client, task_queue)
        async with build_worker(client, task_queue, agent):
            run_id = await remote.start("What is the answer?")
            async for event in remote.follow(run_id):
                if event.kind in ("text_delta", "reasoning_delta"):
                    break  # the worker goes away with the answer half streamed
        async with build_worker(client, task_queue, agent):
            result = await remote.result(run_id)
            events = await remote.events(run_id)
            await assert_replays(client, run_id)
        attempts = len(provider.requests)
    first = [e.kind for e in events].index("usage")  # the end of the retried request
    streamed = "".join(e.text for e in events[:first] if isinstance(e, TextDelta | ReasoningDelta))
    assert result.text == ANSWER and attempts >= 2
    assert streamed == ANSWER
