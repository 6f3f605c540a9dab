"""Sub-agents: an agent as a tool of another, run as a child run nested in the parent's."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.agent import Agent, UsageLimits
from ponder.exceptions import UserError
from ponder.models import ScriptedModel, Usage, call_tools, reply
from ponder.store import open_store


def _child(*script: Any) -> Agent[Any]:
    return Agent(ScriptedModel(list(script), name="child"), agent_strategy="no-action")


def _parent(child: Any, *script: Any, **options: Any) -> tuple[Agent[Any], ScriptedModel]:
    model = ScriptedModel(list(script), name="parent")
    agent = Agent(
        model, tools=[child], agent_thought_mode="chat", enable_thinking_tool=False, **options
    )
    return agent, model


def _used(tokens: int) -> Usage:
    return Usage(requests=1, input_tokens=tokens, output_tokens=1)


async def test_a_child_runs_nested_and_its_usage_rolls_up() -> None:
    child = _child(reply("Paris has 2.1 million people.", usage=_used(50)))
    tool = child.as_tool("researcher", "Finds facts.")
    parent, model = _parent(
        tool,
        call_tools(("researcher", {"task": "Population of Paris?"}, "c1")),
        call_tools(("agent_stop", {"result": "found"})),
        reply("About 2.1 million.", usage=_used(10)),
    )
    stream = parent.stream("How many people live in Paris?")
    events = [e async for e in stream]
    result = stream.result
    assert result.output == "About 2.1 million."
    finished = next(e for e in events if e.kind == "tool_call_finished")
    assert finished.output == "Paris has 2.1 million people."
    assert finished.data["run_id"] == f"{result.run_id}.c1"
    nested = [e for e in events if e.kind == "sub_agent_event"]
    assert {e.call_id for e in nested} == {"c1"} and {e.agent for e in nested} == {"researcher"}
    inner = [e.event["kind"] for e in nested]
    assert inner[0] == "run_started" and inner[-1] == "run_finished"
    assert all(e.event["run_id"] == f"{result.run_id}.c1" for e in nested)
    assert result.usage.requests == len(model.requests) + 1  # the child's request rolled up
    assert result.usage.input_tokens >= 60


async def test_an_agent_in_tools_is_a_tool_and_the_child_has_its_own_limits() -> None:
    worker = Agent(
        ScriptedModel(
            [call_tools(("agent_stop", {"result": "x"})), reply("Limited answer.")], name="w"
        ),
        instructions="Does the work.",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    tool = worker.as_tool("worker", limits=UsageLimits(requests=1))
    assert tool.description == "Does the work."
    parent, _ = _parent(
        tool,
        call_tools(("worker", {"task": "Work."}, "c1")),
        call_tools(("agent_stop", {"result": "done"})),
        reply("Done."),
    )
    stream = parent.stream("Go.")
    events = [e async for e in stream]
    ends = [e.event for e in events if e.kind == "sub_agent_event"]
    assert ends[-1]["stop_reason"] == "requests_limit"
    plain = Agent(ScriptedModel([]), tools=[worker])
    assert any(t.metadata.get("agent") is worker for t in plain.toolbox.base)


async def test_the_child_is_checkpointed_in_the_parents_store(tmp_path: Any) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    child = _child(reply("Child answer."))
    parent, _ = _parent(
        child.as_tool("helper", "Helps."),
        call_tools(("helper", {"task": "Help."}, "c1")),
        call_tools(("agent_stop", {"result": "ok"})),
        reply("Parent answer."),
        store=store,
    )
    result = await parent.run("Start.")
    stored = await store.load(f"{result.run_id}.c1")
    assert stored.record.status == "completed"
    again = await child.resume(f"{result.run_id}.c1", store=store)  # a finished child
    assert again.output == "Child answer."


def test_a_cycle_of_sub_agents_is_a_user_error_naming_tools() -> None:
    a = Agent(ScriptedModel([]))
    b = Agent(ScriptedModel([]), tools=[a])
    a.toolbox.base.append(b.as_tool("b", "B."))
    with pytest.raises(UserError, match=r"tools: the sub-agents of .* form a cycle"):
        Agent(ScriptedModel([]), tools=[a])


def test_a_crash_inside_a_child_resumes_inside_the_child(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    url, log = f"sqlite:///{tmp_path / 'runs.sqlite3'}", tmp_path / "calls.log"

    def worker(mode: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "tests.agent.subagent_worker", url, "p1", str(log), mode]
        return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=root)

    crashed = worker("start")
    assert crashed.returncode == 9, crashed.stderr
    assert log.read_text().split("\n")[:1] == ["note a"]
    resumed = worker("resume")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == {
        "status": "completed",
        "output": "parent done",
        "run_id": "p1",
    }
    assert log.read_text() == "note a\n"  # the child's finished call was not run again


async def test_an_approval_inside_a_child_surfaces_to_the_parents_caller(tmp_path: Any) -> None:
    from ponder.tools import tool

    ran: list[str] = []

    @tool(requires_approval=True)
    def deploy(target: str) -> str:
        """Deploy.

        Args:
            target: Where to.
        """
        ran.append(target)
        return f"deployed to {target}"

    store = open_store(f"sqlite:///{tmp_path / 'runs.sqlite3'}")
    child_script = [
        call_tools(("deploy", {"target": "prod"}, "d1")),
        call_tools(("agent_stop", {"result": "deployed"})),
        reply("Deployed to prod."),
    ]
    options: dict[str, Any] = {"agent_thought_mode": "chat", "enable_thinking_tool": False}
    child = Agent(ScriptedModel(child_script), tools=[deploy], **options)
    parent, _ = _parent(
        child.as_tool("ops", "Runs deployments."),
        call_tools(("ops", {"task": "Deploy to prod."}, "c1")),
        call_tools(("agent_stop", {"result": "done"})),
        reply("Prod is deployed."),
        store=store,
    )
    first = await parent.run("Ship it.")
    assert first.status == "suspended" and ran == []
    assert first.suspension is not None
    assert [c["id"] for c in first.suspension["payload"]["calls"]] == ["c1"]
    child_run = await store.load(f"{first.run_id}.c1")
    assert child_run.record.status == "suspended"
    done = await parent.resume(first.run_id, {"c1": "approve"})
    assert done.status == "completed" and done.output == "Prod is deployed."
    assert ran == ["prod"]
    helper = [m for m in done.messages if getattr(m, "call_id", None) == "c1"]
    assert [m.content for m in helper] == ["Deployed to prod."]  # type: ignore[union-attr]
