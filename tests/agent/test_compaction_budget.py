"""``compaction_max_tokens``: the size a compaction summary is asked for and cut to."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.messages import UserMessage
from ponder.models import ModelResponse, ScriptedModel, call_tools, estimate_tokens, reply
from ponder.tools import tool

from .scripts import of_kind, stop

HEADER = "[Summary of the earlier conversation]\n"
LONG_SUMMARY = " ".join(f"k{i} was looked up and gave value {i}." for i in range(200))


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def looks(n: int) -> list[ModelResponse]:
    return [call_tools(("lookup", {"key": f"k{i}"})) for i in range(n)]


async def compacted(**config: Any) -> tuple[ScriptedModel, str]:
    """Run until one compaction with a long summary; the request it went out in, the note."""
    model = ScriptedModel([*looks(3), LONG_SUMMARY, stop(), LONG_SUMMARY, reply("answer")])
    agent = Agent(
        model,
        tools=[lookup],
        enable_thinking_tool=False,
        agent_thought_mode="chat",
        context_strategy="compact",
        memory_length_limit=6,
        **config,
    )
    events = [e async for e in agent.stream("look up keys")]
    assert of_kind(events, "compaction")[0].mode == "compact"
    assert of_kind(events, "run_finished")[0].output == "answer"
    note = model.requests[4].messages[2]
    assert isinstance(note, UserMessage) and note.content.startswith(HEADER)
    return model, note.content.removeprefix(HEADER)


def instruction(model: ScriptedModel) -> str:
    request = model.requests[3].messages[-1]  # the summariser's request
    assert isinstance(request, UserMessage) and "BEGIN_OF_COMPACTION" in request.content
    return request.content


async def test_the_summary_is_asked_for_and_cut_to_compaction_max_tokens() -> None:
    model, summary = await compacted(compaction_max_tokens=64)
    assert "Use at most 64 tokens." in instruction(model)
    assert estimate_tokens(summary) <= 64 < estimate_tokens(LONG_SUMMARY)
    assert summary.endswith(" …") and LONG_SUMMARY.startswith(summary.removesuffix(" …"))


async def test_zero_means_the_model_s_max_tokens() -> None:
    model, summary = await compacted(compaction_max_tokens=0, max_tokens=100)
    assert "Use at most 100 tokens." in instruction(model)
    assert 90 <= estimate_tokens(summary) <= 100


async def test_zero_without_max_tokens_leaves_the_summary_whole() -> None:
    model, summary = await compacted(compaction_max_tokens=0)
    assert "Use at most" not in instruction(model)
    assert summary == LONG_SUMMARY


async def test_a_summary_within_the_budget_is_kept_as_written() -> None:
    model = ScriptedModel([*looks(3), "k0 was value of k0.", stop(), "short.", reply("answer")])
    agent = Agent(
        model,
        tools=[lookup],
        enable_thinking_tool=False,
        agent_thought_mode="chat",
        memory_length_limit=6,
        compaction_max_tokens=64,
    )
    await agent.run("look up keys")
    note = model.requests[4].messages[2]
    assert note == UserMessage(content=HEADER + "k0 was value of k0.")
