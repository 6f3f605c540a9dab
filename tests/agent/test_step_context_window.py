"""The step workflow keeps its prompt inside the window within a step, not only between steps.

A step's rounds can fill a small model's window on their own (a 4k llama.cpp server, a
step that reads page after page). The fake provider refuses an over-long prompt as
vLLM does; runs go through the official SDK.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.events import Event
from ponder.models.capabilities import forget_learned
from ponder.models.windows import forget_probes
from ponder.testing import FakeOpenAIServer
from ponder.testing.fake_openai import prompt_tokens
from ponder.testing.script import FakeReply, FakeToolCall
from ponder.tools import tool

from .scripts import of_kind
from .test_context_overflow import MAX_TOKENS, WINDOW, refused

ANSWER = "The report says lorem."
KNOWN = "vllm:fake-model"
"""A profile whose server is asked for its window (vLLM's ``max_model_len``) before the run."""


@tool
def fetch(page: int) -> str:
    """Fetch a page of the report.

    Args:
        page: The page number.
    """
    return f"page {page}: " + "lorem ipsum dolor sit amet " * 80


def structured(data: dict[str, Any]) -> FakeReply:
    return FakeReply(content=json.dumps(data))


def call(name: str, n: int, **arguments: Any) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=name, id=f"c{n}", arguments=arguments)])


def script(pages: int) -> list[FakeReply]:
    """A two-step plan: one page in the first step, ``pages`` pages in the second."""
    steps = [
        {"id": "skim", "description": "Skim the cover", "depends_on": []},
        {"id": "read", "description": "Read the pages", "depends_on": ["skim"]},
    ]
    plan = structured({"needs_decomposition": True, "reason": "two parts", "steps": steps})
    first = [call("fetch", 0, page=0), call("agent_stop", 1, result="skimmed")]
    second = [call("fetch", 10 + n, page=n + 1) for n in range(pages)]
    second.append(call("agent_stop", 2, result="read"))
    return [
        plan,
        *first,
        structured({"summary": "The cover is lorem.", "outputs": []}),
        *second,
        structured({"summary": "The pages are lorem.", "outputs": []}),
        FakeReply(content=ANSWER),
    ]


@pytest.fixture(autouse=True)
def _fresh_windows() -> Iterator[None]:
    forget_learned()
    forget_probes()
    yield
    forget_learned()
    forget_probes()


async def run(
    server: FakeOpenAIServer, model: str = "openai:fake-model", **config: Any
) -> tuple[Any, list[Event]]:
    agent = Agent(
        model,
        tools=[fetch],
        base_url=server.base_url,
        api_key="k",
        enable_thinking_tool=False,
        max_tokens=MAX_TOKENS,
        **{
            "agent_workflow": "step-react",
            "agent_thought_mode": "chat",
            "context_strategy": "slide",
            **config,
        },
    )
    stream = agent.stream("Read the report and say what it is about.")
    events = [event async for event in stream]
    return stream.result, events


def texts(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in body["messages"])


def last_call_id(body: dict[str, Any]) -> str | None:
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or []]
    return calls[-1] if calls else None


async def test_a_step_whose_rounds_fill_the_window_compacts_inside_the_step() -> None:
    async with FakeOpenAIServer(script(6), context_window=WINDOW, states_window=True) as server:
        result, events = await run(server, KNOWN)
    assert result.status == "completed" and result.output == ANSWER, result.status
    assert refused(server) == []  # the window was known: no prompt was ever too long
    compactions = of_kind(events, "compaction")
    finished = [i for i, e in enumerate(events) if e.kind == "step_finished"]
    in_step = [e for e in compactions if finished[0] < events.index(e) < finished[1]]
    assert in_step, [e.kind for e in events]
    # every request of the second step still carries its latest call and the plan status
    for body in server.requests:
        if "page 6" in texts(body) or "c15" == last_call_id(body):
            assert "Read the pages" in texts(body)
    final_step_round = next(b for b in server.requests if last_call_id(b) == "c15")
    assert "page 6:" in texts(final_step_round)


async def test_an_overflow_inside_a_step_keeps_the_step_s_own_messages() -> None:
    async with FakeOpenAIServer(script(6), context_window=WINDOW) as server:
        result, events = await run(server)
    assert result.status == "completed" and result.output == ANSWER, result.status
    first = refused(server)
    assert len(first) == 1, first  # refused once, then the step compacts before it overflows
    after = server.requests[first[0] + 1]
    assert prompt_tokens(after) < prompt_tokens(server.requests[first[0]])
    # the step goes on where it was: its plan status and its latest result are still sent
    assert "Read the pages" in texts(after)
    assert last_call_id(after) == last_call_id(server.requests[first[0]])
    assert of_kind(events, "compaction")


async def test_compact_mode_summarises_the_step_s_older_rounds() -> None:
    replies = iter(script(6))

    def answer(body: dict[str, Any]) -> FakeReply:
        if "BEGIN_OF_COMPACTION" in str(body["messages"][-1].get("content")):
            return FakeReply(content="Pages 1 to 3 are lorem ipsum.")
        return next(replies)

    async with FakeOpenAIServer(answer, context_window=WINDOW, states_window=True) as server:
        result, events = await run(server, KNOWN, context_strategy="compact")
    assert result.status == "completed" and result.output == ANSWER, result.status
    assert refused(server) == []
    assert "compact" in {e.mode for e in of_kind(events, "compaction")}
    later = [b for b in server.requests if "Pages 1 to 3 are lorem ipsum." in texts(b)]
    assert later and all("Read the pages" in texts(b) for b in later)
