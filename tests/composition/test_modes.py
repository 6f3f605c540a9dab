"""The run modes where they meet streaming: each answer streams once, as answer text."""

from __future__ import annotations

from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools
from ponder.models.scripted import ScriptEntry
from ponder.tools import tool

from .support import of_kind


@tool
def search(query: str) -> str:
    """Search the documents.

    Args:
        query: What to look for.
    """
    return f"found {query}"


async def test_a_direct_answer_in_rag_mode_without_an_index_streams_once_as_text() -> None:
    agent = Agent(
        ScriptedModel(["The direct answer is here."]), tools=[search], tool_calling_mode="rag"
    )
    events = [e async for e in agent.stream("q")]
    text = "".join(e.text for e in of_kind(events, "text_delta"))
    assert text == "The direct answer is here."
    assert of_kind(events, "reasoning_delta") == []
    assert of_kind(events, "run_finished")[0].output == "The direct answer is here."


async def test_a_rag_answer_after_retrieval_streams_once_as_text() -> None:
    script: list[ScriptEntry] = [
        call_tools(("search", {"query": "x"})),
        "From the search: found x.",
    ]
    agent = Agent(ScriptedModel(script), tools=[search], tool_calling_mode="rag")
    events = [e async for e in agent.stream("q")]
    text = "".join(e.text for e in of_kind(events, "text_delta"))
    assert text == "From the search: found x."
    assert of_kind(events, "retrieval")[0].sources == ["search"]
