"""Lone surrogates from a model or a tool are replaced at the boundary; the run goes on."""

from __future__ import annotations

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import Store
from ponder.tools import ToolResult, tool


@tool
async def echo(text: str) -> ToolResult:
    """Echo a text back, with a broken character of its own.

    Args:
        text: The text.
    """
    return ToolResult.ok(f"echo {text} \udfff", data={"raw\ud801": [text]})


async def test_lone_surrogates_are_replaced_and_the_stored_run_completes(store: Store) -> None:
    model = ScriptedModel(
        [
            call_tools(("echo", {"text": "bad \ud800 char"}), text="calling \udc00"),
            call_tools(("agent_stop", {"result": "echoed \ud800"})),
            reply("done \ud83d"),
        ]
    )
    agent = Agent(
        model, tools=[echo], agent_thought_mode="chat", enable_thinking_tool=False, store=store
    )
    result = await agent.run("echo it")
    assert result.status == "completed" and result.output == "done \ufffd"
    answer = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert answer.content == "echo bad \ufffd char \ufffd"
    assert answer.data == {"raw\ufffd": ["bad \ufffd char"]}
    stored = await store.load(result.run_id)
    assert stored.record.status == "completed"
    assert len(stored.ledger_messages()) == len(result.messages)
