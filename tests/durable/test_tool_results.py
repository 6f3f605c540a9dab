"""Tool results in a stored run: data that is not JSON, and very long outputs."""

from __future__ import annotations

import datetime
from typing import Any

from ponder.agent import Agent
from ponder.events import Event, ToolCallFinished
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import Store
from ponder.tools import ToolResult, tool

BIG = 10_000_000


@tool
async def odd_data(kind: str) -> ToolResult:
    """Return data of some kind.

    Args:
        kind: Which data.
    """
    values: dict[str, Any] = {
        "set": {3, 1, 2},
        "date": datetime.date(2026, 12, 1),
        "object": object(),
    }
    return ToolResult.ok(f"{kind} ready", data=values[kind])


@tool
async def huge() -> str:
    """Return ten million characters."""
    return "y" * BIG


def agent(store: Store, *calls: tuple[str, dict[str, Any]]) -> Agent:
    model = ScriptedModel(
        [call_tools(*calls), call_tools(("agent_stop", {"result": "ok"})), reply("all done")]
    )
    return Agent(
        model,
        tools=[odd_data, huge],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        store=store,
    )


async def test_data_that_is_not_json_is_converted_or_becomes_that_calls_error(
    store: Store,
) -> None:
    calls = [("odd_data", {"kind": k}) for k in ("set", "date", "object")]
    result = await agent(store, *calls).run("get data")
    assert result.status == "completed" and result.output == "all done"
    answers = [m for m in result.messages if isinstance(m, ToolMessage)][:3]
    assert [m.data for m in answers[:2]] == [[1, 2, 3], "2026-12-01"]
    assert not answers[0].is_error and not answers[1].is_error
    assert answers[2].is_error and "cannot be stored as JSON" in answers[2].content
    stored = await store.load(result.run_id)
    assert [m.content for m in stored.ledger_messages() if isinstance(m, ToolMessage)][:3] == [
        m.content for m in answers
    ]


async def test_a_huge_output_is_stored_once_and_its_event_is_capped(store: Store) -> None:
    events: list[Event] = []
    runner = agent(store, ("huge", {}))
    runner.on_event("tool_call_finished")(events.append)
    result = await runner.run("get it all")
    assert result.status == "completed"
    message = next(m for m in result.messages if isinstance(m, ToolMessage))
    assert message.data == "y" * BIG  # whole in the ledger, cut for the model
    assert len(message.content) < 30_000
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished.output) < 30_000
    stored = await store.load(result.run_id)
    kept = sum(len(str(body)) for body in stored.effects.values())
    kept += sum(len(str(m)) for m in stored.messages)
    assert BIG <= kept < 1.5 * BIG
