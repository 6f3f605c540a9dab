"""Approval across processes, interrupted calls, leases, and refusing bad resumes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.exceptions import RunLeaseError, SnapshotError, UserError
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import SQLiteStore
from ponder.tools import tool

from .test_crash_resume import worker

PUBLISH = {"WITH_PUBLISH": "1"}


def tool_results(result: dict[str, object]) -> dict[str, dict[str, Any]]:
    messages = result["messages"]
    assert isinstance(messages, list)
    return {m["call_id"]: m for m in messages if m["kind"] == "tool"}


def test_suspend_in_one_process_approve_in_another(tmp_path: Path) -> None:
    url, log = f"sqlite:///{tmp_path / 'runs.sqlite3'}", tmp_path / "calls.log"
    code, suspended = worker(url, "r1", log, "start", env=PUBLISH)
    assert code == 0 and suspended["status"] == "suspended"
    assert suspended["suspension"]["payload"]["calls"] == [
        {"id": "p1", "name": "publish", "arguments": {"text": "report"}}
    ]
    assert "p1" not in log.read_text().split()
    code, finished = worker(url, "r1", log, "resume", value="approve", env=PUBLISH)
    assert code == 0 and finished["status"] == "completed"
    assert finished["output"] == "measured everything"
    assert tool_results(finished)["p1"]["content"] == "published 'report'"
    assert log.read_text().split().count("p1") == 1


def test_rejected_and_edited_calls(tmp_path: Path) -> None:
    url, log = f"sqlite:///{tmp_path / 'runs.sqlite3'}", tmp_path / "calls.log"
    worker(url, "rej", log, "start", env=PUBLISH)
    _, rejected = worker(
        url,
        "rej",
        log,
        "resume",
        value={"p1": {"action": "reject", "reason": "not now"}},
        env=PUBLISH,
    )
    message = tool_results(rejected)["p1"]
    assert message["is_error"] and message["content"] == (
        "Error: the user rejected this call: not now"
    )
    worker(url, "edit", log, "start", env=PUBLISH)
    _, edited = worker(
        url,
        "edit",
        log,
        "resume",
        value={"p1": {"action": "edit", "arguments": {"text": "final"}}},
        env=PUBLISH,
    )
    assert tool_results(edited)["p1"]["content"] == "published 'final'"
    assert log.read_text().split().count("p1") == 1


def test_a_call_running_at_a_crash_is_reported_not_repeated(tmp_path: Path) -> None:
    url, log = f"sqlite:///{tmp_path / 'runs.sqlite3'}", tmp_path / "calls.log"
    env = {"INTERRUPT_TEST": "1", "SLOW_SECONDS": "2"}
    code, _ = worker(url, "r2", log, "start", crash=4, env=env)
    assert code == -9
    code, result = worker(url, "r2", log, "resume", env=env)
    assert code == 0 and result["status"] == "completed"
    results = tool_results(result)
    assert results["q1"]["content"] == "quick: 5" and not results["q1"]["is_error"]
    assert results["s1"]["is_error"] and "interrupted" in results["s1"]["content"]
    assert log.read_text().split().count("s1") == 1


@tool(requires_approval=True)
async def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where.
    """
    await asyncio.sleep(0.3)
    return f"deployed to {target}"


def deploy_agent(store: SQLiteStore) -> Agent:
    model = ScriptedModel(
        lambda r: (
            call_tools(("deploy", {"target": "prod"}, "d1"))
            if not any(isinstance(m, ToolMessage) for m in r.messages)
            else (
                call_tools(("agent_stop", {}, "s"))
                if sum(isinstance(m, ToolMessage) for m in r.messages) == 1
                else reply("deployed")
            )
        )
    )
    return Agent(
        model, tools=[deploy], agent_thought_mode="chat", enable_thinking_tool=False, store=store
    )


async def test_two_resumes_of_one_run_one_wins(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = deploy_agent(store)
    suspended = await agent.run("ship it")
    assert suspended.status == "suspended"
    outcomes = await asyncio.gather(
        agent.resume(suspended.run_id, "approve"),
        agent.resume(suspended.run_id, "approve"),
        return_exceptions=True,
    )
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], RunLeaseError)
    assert "is being run by" in str(errors[0])
    done = next(o for o in outcomes if not isinstance(o, BaseException))
    assert done.status == "completed" and done.output == "deployed"
    again = await agent.resume(suspended.run_id)
    assert again.status == "completed" and again.output == "deployed"


async def test_bad_resumes_are_refused_and_lose_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = deploy_agent(store)
    suspended = await agent.run("ship it")
    with pytest.raises(UserError, match="resume a run waiting for approval"):
        await agent.resume(suspended.run_id, 42)
    with pytest.raises(UserError, match="no decision for pending call"):
        await agent.resume(suspended.run_id, {"other": "approve"})
    chat = Agent(ScriptedModel([reply("x")]), agent_strategy="no-action", store=store)
    with pytest.raises(SnapshotError):
        await chat.resume(suspended.run_id, "approve")
    done = await agent.resume(suspended.run_id, "approve")
    assert done.output == "deployed"


async def test_a_cancelled_run_cannot_be_resumed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = deploy_agent(store)
    suspended = await agent.run("ship it")
    await store.set_status(suspended.run_id, "cancelled")
    with pytest.raises(UserError, match="was cancelled"):
        await agent.resume(suspended.run_id, "approve")
    records = await store.list_runs(status="cancelled")
    assert [r.run_id for r in records] == [suspended.run_id]


async def test_a_session_id_continues_the_sessions_last_turn(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    model = ScriptedModel(["Nice to meet you, Ada.", "Your name is Ada."])
    agent = Agent(model, agent_strategy="no-action", store=store)
    await agent.run("My name is Ada.", session_id="s1")
    second = await agent.run("What is my name?", session_id="s1")
    assert second.output == "Your name is Ada."
    sent = [m.kind for m in model.requests[1].messages]
    assert sent == ["user", "assistant", "user"]
    assert model.requests[1].messages[0].content == "My name is Ada."  # type: ignore[union-attr]
    fresh = ScriptedModel(["Who are you?"])
    await Agent(fresh, agent_strategy="no-action", store=store).run("Hi", session_id="s2")
    assert [m.kind for m in fresh.requests[0].messages] == ["user"]
