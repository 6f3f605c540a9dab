"""SmolLM2-135M behind the stock llama.cpp server, in the default mode: what it costs.

Behaviour only, never answer quality: no answer carries ponder's instruction text or
markup; streamed answer text that is not the answer is withdrawn; an action request
answered with ``think_and_reason`` is not followed by another forced reasoning request;
the round's reasoning reaches the server as a user message (the stock template would
append the whole tool list to another system message); the server reuses most of each
prompt from the one before.
"""

import asyncio
from typing import Any

from ponder import Agent
from ponder.agent.strategies.answer import answer_problem
from ponder.agent.strategies.echo import said_by_runtime, without_echo
from ponder.events import Event
from ponder.messages import AssistantMessage, ensure_sendable
from ponder.testing.llama_server import LlamaServer
from ponder.tools.builtin import PROCESSING_MESSAGE, THINK_AND_REASON
from tests.models_real.lane_tools import TOOLS
from tests.models_real.test_lane import SMALL, STOP_REASONS, TASK

_REASONING_ONLY = {THINK_AND_REASON, PROCESSING_MESSAGE}


def _streamed_run(server: LlamaServer, **config: Any) -> tuple[list[Event], Any]:
    agent = Agent(
        "llamacpp:smollm2",
        tools=TOOLS,
        base_url=server.base_url,
        api_key="none",
        **{**SMALL, "agent_tool_call_limit": 3, "enable_thinking_tool": False, **config},
    )

    async def run() -> tuple[list[Event], Any]:
        stream = agent.stream(TASK)
        events = [e async for e in stream]
        return events, stream.result

    return asyncio.run(run())


def test_the_default_mode_never_answers_with_ponders_words(server: LlamaServer) -> None:
    events, result = _streamed_run(server)
    assert result.status == "completed" and result.stop_reason in STOP_REASONS
    ensure_sendable(result.messages)
    assert set(server.statuses) == {200}
    # no instruction text, no markup in the answer
    said = said_by_runtime(result.messages)
    assert without_echo(result.output, said) == (result.output, False), result.output
    assert not result.output or answer_problem(result.output) is None, result.output
    # what a stream consumer shows is the answer: text after the last withdrawal
    kinds = [e.kind for e in events]
    start = max((i for i, k in enumerate(kinds) if k == "answer_withdrawn"), default=-1) + 1
    shown = "".join(e.text for e in events[start:] if e.kind == "text_delta")
    assert shown == result.output
    # a reasoning-only reply to the action request is the next round's reasoning
    purposes = [e.purpose for e in events if e.kind == "usage"]
    replies = [m for m in result.messages if isinstance(m, AssistantMessage)]
    if len(replies) == len(purposes):  # one reply per request: no retry, no compaction
        for n, (purpose, reply) in enumerate(zip(purposes[:-1], replies, strict=False)):
            names = {c.name for c in reply.tool_calls}
            if purpose == "action" and names and names <= _REASONING_ONLY:
                assert purposes[n + 1] != "reasoning", purposes
    assert result.usage.requests <= 8


def test_the_reasoning_feedback_keeps_the_prompt_small(server: LlamaServer) -> None:
    _events, result = _streamed_run(server, agent_thought_mode="reasoning-required")
    assert result.status == "completed"
    hits = server.prefix_hits
    assert hits, "the server logged no prompt evaluation"
    prompts = [reused + evaluated for reused, evaluated in hits]
    # most requests re-read most of the one before: the tool list is in one system message
    shares = sorted(r / max(r + e, 1) for r, e in hits[1:])
    assert shares and shares[len(shares) // 2] >= 0.5, hits
    assert max(prompts) < 4096, prompts  # the lane's context
