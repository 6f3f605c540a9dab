"""RAG mode over a real folder of documents, and plain chat mode, end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.agent.strategies.rag import RagStrategy
from ponder.config import ConfigWarning
from ponder.exceptions import UserError
from ponder.messages import SystemMessage, UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.retrieval import index_folder
from ponder.tools import tool

from .scripts import of_kind


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return key


HISTORY = [UserMessage(content="earlier question"), UserMessage(content="more history")]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "handbook"
    folder.mkdir()
    (folder / "leave.md").write_text(
        "# Leave policy\nEmployees get 25 days of paid leave per year.", encoding="utf-8"
    )
    (folder / "travel.md").write_text(
        "# Travel\nTrain travel is booked in second class.", encoding="utf-8"
    )
    return folder


async def test_rag_retrieves_once_and_answers_without_tools(docs: Path) -> None:
    model = ScriptedModel([reply("You get 25 days of paid leave [leave.md].")])
    with pytest.warns(ConfigWarning, match="not offered: lookup"):
        agent = Agent(
            model,
            tools=[lookup],
            instructions="You are the HR bot.",
            tool_calling_mode="rag",
            rag_index_path=str(docs),
            rag_top_k=1,
        )
    events = [e async for e in agent.stream("How many days of paid leave do I get?")]
    retrievals = of_kind(events, "retrieval")
    assert len(retrievals) == 1 and retrievals[0].sources == ["leave.md#0"]
    assert len(model.requests) == 1
    request = model.requests[0]
    assert list(request.tools) == [] and request.tool_choice == "none"
    system, user = request.messages
    assert isinstance(system, SystemMessage) and "You are the HR bot." in system.content
    assert "25 days of paid leave" in system.content and "second class" not in system.content
    assert isinstance(user, UserMessage) and user.content.startswith("How many days")
    assert of_kind(events, "run_finished")[0].output.startswith("You get 25 days")


async def test_rag_context_is_minimal_even_with_history(docs: Path) -> None:
    index = index_folder(docs)
    model = ScriptedModel([reply("Second class."), reply("ignored")])
    agent = Agent(model, strategy=RagStrategy.using(index), tool_calling_mode="rag")
    result = await agent.run("How is train travel booked?", message_history=HISTORY)
    assert len(model.requests) == 1
    sent = model.requests[0].messages
    assert len(sent) == 2 and "second class" in sent[0].content  # type: ignore[union-attr]
    assert result.output == "Second class." and result.stop_reason == "answered"


async def test_rag_with_no_match_says_so_to_the_model(docs: Path) -> None:
    model = ScriptedModel([reply("The handbook does not cover that.")])
    agent = Agent(model, tool_calling_mode="rag", rag_index_path=str(docs))
    events = [e async for e in agent.stream("zebra migration ???")]
    assert of_kind(events, "retrieval")[0].sources == []
    assert "no matching documents" in model.requests[0].messages[0].content  # type: ignore[union-attr]


async def test_a_tool_call_in_rag_mode_gets_an_error_result_and_the_ledger_stays_valid(
    docs: Path,
) -> None:
    model = ScriptedModel([call_tools(("lookup", {"key": "x"}), text="Leave is 25 days.")])
    agent = Agent(model, tool_calling_mode="rag", rag_index_path=str(docs))
    result = await agent.run("paid leave?")
    assert result.output == "Leave is 25 days."
    assert result.messages[-1].kind == "tool" and result.messages[-1].is_error


async def test_rag_without_a_retriever_is_a_user_error() -> None:
    agent = Agent(ScriptedModel([reply("x")]), tool_calling_mode="rag")
    with pytest.raises(UserError, match="rag_index_path"):
        await agent.run("anything")
    with pytest.raises(UserError, match="retrieve"):
        RagStrategy.using(object())  # type: ignore[arg-type]


async def test_rag_with_a_missing_folder_is_a_user_error(tmp_path: Path) -> None:
    agent = Agent(
        ScriptedModel([reply("x")]),
        tool_calling_mode="rag",
        rag_index_path=str(tmp_path / "missing"),
    )
    with pytest.raises(UserError, match="not a folder"):
        await agent.run("anything")


@pytest.mark.parametrize(
    "setting", [{"tool_calling_mode": "none"}, {"agent_strategy": "no-action"}]
)
async def test_chat_mode_offers_no_tools_and_sends_the_whole_conversation(
    setting: dict[str, Any],
) -> None:
    model = ScriptedModel([reply("Hello! Nice to meet you.")])
    agent = Agent(model, tools=[lookup], instructions="Be kind.", **setting)
    events = [e async for e in agent.stream("hi there", message_history=HISTORY)]
    assert len(model.requests) == 1
    request = model.requests[0]
    assert list(request.tools) == [] and request.tool_choice == "auto"
    contents = [m.content for m in request.messages]  # type: ignore[union-attr]
    assert contents == ["Be kind.", "earlier question", "more history", "hi there"]
    assert of_kind(events, "round_started") == [] and of_kind(events, "tool_call_started") == []
    assert of_kind(events, "run_finished")[0].output == "Hello! Nice to meet you."


async def test_chat_mode_honours_minimal_context() -> None:
    model = ScriptedModel([reply("Hi.")])
    agent = Agent(
        model, instructions="Be kind.", tool_calling_mode="none", use_minimal_context=True
    )
    result = await agent.run("hi there", message_history=HISTORY)
    contents = [m.content for m in model.requests[0].messages]  # type: ignore[union-attr]
    assert contents == ["Be kind.", "hi there"]
    # the conversation itself keeps its history
    assert [m.content for m in result.messages[:4]] == [  # type: ignore[union-attr]
        "Be kind.",
        "earlier question",
        "more history",
        "hi there",
    ]
