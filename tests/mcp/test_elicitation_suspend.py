"""An MCP server's question with no one to answer live: the run suspends, and resumes.

Real stdio fixture server, real SQLite and PostgreSQL stores; the resume is made by a
fresh agent (a new server process), as after a restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.models import ScriptedModel, reply
from ponder.store import open_store
from ponder.store.sqlite import SQLiteStore
from tests.mcp.test_client_features import agent_for, calling, mcp_events


def questions(result: Any) -> list[dict[str, Any]]:
    assert result.status == "suspended", result
    assert result.suspension["reason"] == "elicitation"
    found: list[dict[str, Any]] = result.suspension["payload"]["elicitations"]
    return found


async def test_a_question_suspends_the_run_and_its_answer_resumes_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    events: list[Any] = []
    async with agent_for(calling(("ask_contact", {}), ("visit", {}))) as agent:
        agent.on_event("*")(events.append)
        result = await agent.run("add a contact", store=store)
    [question] = questions(result)
    assert question["message"] == "Who should I add?" and question["mode"] == "form"
    assert set(question["schema"]["properties"]) == {"name", "age"}
    assert question["server"] == "mcp_server" and question["tool"] == "ask_contact"
    assert [e.data["status"] for e in mcp_events(events, "elicitation")] == ["held"]
    assert not [e for e in events if e.kind == "tool_call_finished"]
    run_id = result.run_id
    assert (await store.load(run_id)).record.status == "suspended"

    async with agent_for(calling(("ask_contact", {}), ("visit", {}))) as fresh:
        bad = {"action": "accept", "content": {"name": "Ada", "age": 500}}
        with pytest.raises(UserError, match="does not match its schema: age"):
            await fresh.resume(run_id, bad, store=store)
        with pytest.raises(UserError, match="no question 'nosuch'"):
            await fresh.resume(run_id, {"nosuch": {"action": "decline"}}, store=store)
        assert (await store.load(run_id)).record.status == "suspended"
        good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
        result = await fresh.resume(run_id, {question["id"]: good}, store=store)
        [visit] = questions(result)
        assert visit["mode"] == "url" and visit["url"] == "https://example.test/login"
        result = await fresh.resume(run_id, {"action": "accept"}, store=store)
    assert result.status == "completed", result
    assert result.output == "added Ada (36) | visit: accept"
    await store.close()


async def test_a_declined_question_is_declined_to_the_server(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runs.db'}")
    async with agent_for(calling(("ask_contact", {}))) as agent:
        result = await agent.run("add", store=store)
        questions(result)
        result = await agent.resume(result.run_id, "decline", store=store)
    assert result.output == "not added: decline"
    await store.close()


async def test_a_live_handler_answers_instead_of_suspending() -> None:
    async with agent_for(calling(("ask_contact", {}))) as agent:

        @agent.on_elicitation
        async def answer(request: Any) -> Any:
            from ponder.mcp.elicitation import ElicitationAnswer

            return ElicitationAnswer("cancel")

        result = await agent.run("add")
    assert result.output == "not added: cancel"


async def test_an_agent_without_mcp_servers_refuses_the_answers(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    async with agent_for(calling(("ask_contact", {}))) as agent:
        result = await agent.run("add", store=store)
    plain = Agent(
        ScriptedModel([reply("x")]), agent_thought_mode="chat", enable_thinking_tool=False
    )
    with pytest.raises(UserError, match="elicitation handler or no MCP servers"):
        await plain.resume(result.run_id, "decline", store=store)
    assert (await store.load(result.run_id)).record.status == "suspended"
    await store.close()
