"""The matrix's column for a run inside a sub-agent: each feature used by a child agent
(``agent.as_tool(...)``) that a parent's model calls, seen where a user looks — the parent's
result, its events (the child's nested under the call), its store and its usage."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from ponder.agent import Agent, RunResult
from ponder.events import Event, SubAgentEvent
from ponder.exceptions import UserError
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.store import open_store
from tests.agent.steps import plan, step_agent, summary

from .support import of_kind, user_turns
from .test_cells_workflows import deploy

STOP = call_tools(("agent_stop", {"result": "done"}))
PLAIN: dict[str, Any] = {"agent_thought_mode": "chat", "enable_thinking_tool": False}


def child_of(*script: ScriptEntry, **options: Any) -> Agent[Any]:
    """A child that answers its task with a plain reply (no tool loop) unless told."""
    options = options or {"agent_strategy": "no-action"}
    return Agent(ScriptedModel(list(script), name="child"), **options)


def parent_of(child: Agent[Any], *answer: ScriptEntry, **options: Any) -> Agent[Any]:
    """A parent whose model hands ``Do it.`` to ``child`` (as ``helper``), then answers."""
    script = [call_tools(("helper", {"task": "Do it."}, "c1")), STOP, *answer]
    model = ScriptedModel(script, name="parent")
    return Agent(model, tools=[child.as_tool("helper", "Helps.")], **{**PLAIN, **options})


async def streamed(agent: Agent[Any], prompt: str = "go", **run: Any) -> tuple[Any, list[Event]]:
    stream = agent.stream(prompt, **run)
    events = [e async for e in stream]
    return stream.result, events


def nested(events: list[Event], kind: str) -> list[dict[str, Any]]:
    """The child's events of ``kind``, as the parent's stream carries them."""
    inner = [e.event for e in events if isinstance(e, SubAgentEvent)]
    return [e for e in inner if e["kind"] == kind]


def helper_results(result: RunResult[Any]) -> list[str]:
    return [
        str(m.content) for m in result.messages if isinstance(m, ToolMessage) and m.name == "helper"
    ]


def delegating(request: ModelRequest) -> ModelResponse:
    """A parent's turn: hand the turn's prompt to ``helper``, stop, answer with every
    user turn the request holds."""
    messages = list(request.messages)
    start = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    results = [m for m in messages[start:] if isinstance(m, ToolMessage)]
    if not results:
        return call_tools(("helper", {"task": user_turns(messages)[-1]}))
    if len(results) == 1:
        return STOP
    return reply(" ".join(user_turns(messages)))


def task_echo(request: ModelRequest) -> ModelResponse:
    """A child that answers with every user message it was sent."""
    return reply("child saw: " + " | ".join(user_turns(request.messages)))


async def test_each_turn_of_a_session_calls_a_child_that_starts_afresh() -> None:
    """A session's turns continue each other, the child's answers included; the child
    itself is no turn of the session: each call sees only its task."""
    store = open_store("memory:")
    child = Agent(ScriptedModel(task_echo), agent_strategy="no-action")
    parent = Agent(ScriptedModel(delegating), tools=[child.as_tool("helper", "Helps.")], **PLAIN)
    await parent.run("one", session_id="s", store=store)
    second = await parent.run("two", session_id="s", store=store)
    assert second.output == "one two"
    assert helper_results(second) == ["child saw: one", "child saw: two"]
    assert await store.latest_in_session("s") == second.run_id


async def test_concurrent_turns_of_a_session_call_their_children_one_after_the_other() -> None:
    """Two turns of one session started together run one at a time, each with its child
    call: the later turn continues the earlier one, its child's answer included."""
    child = Agent(ScriptedModel(task_echo), agent_strategy="no-action")
    parent = Agent(ScriptedModel(delegating), tools=[child.as_tool("helper", "Helps.")], **PLAIN)
    turns = await asyncio.gather(parent.run("A", session_id="s"), parent.run("B", session_id="s"))
    earlier, later = sorted(turns, key=lambda r: len(r.output))
    assert later.output == f"{earlier.output} {later.output[-1]}"
    assert helper_results(later) == [f"child saw: {t}" for t in later.output.split()]


def _thought(n: int) -> ModelResponse:
    args = {
        "thought": f"thought {n}",
        "thought_number": n,
        "total_thoughts": 3,
        "next_thought_needed": True,
    }
    return call_tools(("sequential_thinking", args))


async def test_a_child_thinks_afresh_in_each_call_while_the_session_keeps_the_parents() -> None:
    """The parent's ``sequential_thinking`` state carries across a session's turns; the
    child's is its own run's: each call starts with no thought, and none reaches the
    parent's."""
    call = call_tools(("helper", {"task": "Think."}))
    script: list[ScriptEntry] = [_thought(1), call, STOP, "one", _thought(2), call, STOP, "two"]
    child_script: list[ScriptEntry] = [_thought(1), STOP, "c1", _thought(1), STOP, "c2"]
    child = Agent(ScriptedModel(child_script), agent_thought_mode="chat")
    parent = Agent(
        ScriptedModel(script),
        tools=[child.as_tool("helper", "Helps.")],
        agent_thought_mode="chat",
    )
    await parent.run("first", session_id="s")
    _, events = await streamed(parent, "second", session_id="s")
    assert of_kind(events, "thinking")[-1].data["thought_history_length"] == 2
    assert [t["data"]["thought_history_length"] for t in nested(events, "thinking")] == [1]


class Population(BaseModel):
    city: str
    people: int


async def test_a_typed_child_answers_its_parent_with_its_validated_json() -> None:
    """A child with an ``output_type`` validates its answer; the parent's call gets it as
    JSON, and the child's finished event carries the same value."""
    child = child_of(
        reply('{"city": "Paris", "people": 2100000}'),
        agent_strategy="no-action",
        output_type=Population,
    )
    result, events = await streamed(parent_of(child, reply("About 2.1 million.")))
    [answer] = helper_results(result)
    assert Population.model_validate_json(answer) == Population(city="Paris", people=2100000)
    assert json.loads(nested(events, "run_finished")[0]["output"]) == json.loads(answer)


async def test_a_step_plan_runs_inside_a_child_with_its_step_events() -> None:
    """A step-react child runs its plan in dependency order; its step events reach the
    parent's stream nested under the call, and its answer is the call's result."""
    child = step_agent(
        ScriptedModel(
            [
                plan(("a", "Find x", []), ("b", "Use x", ["a"])),
                call_tools(("lookup", {"key": "x"})),
                call_tools(("agent_stop", {"result": "found x"})),
                summary("Found x.", "value of x"),
                call_tools(("agent_stop", {"result": "used x"})),
                summary("Used x."),
                reply("x is value of x"),
            ]
        )
    )
    result, events = await streamed(parent_of(child, reply("Done.")))
    assert [e["step_id"] for e in nested(events, "step_started")] == ["a", "b"]
    assert [e["step_id"] for e in nested(events, "step_finished")] == ["a", "b"]
    assert helper_results(result) == ["x is value of x"]
    assert not of_kind(events, "step_started")  # the parent ran no plan of its own


def _verdict(check: str, result: str = "pass") -> tuple[str, dict[str, Any]]:
    return ("verify_reasoning", {"check_type": check, "result": result, "detail": "ok"})


async def test_reflection_sends_a_child_back_before_it_answers_its_parent() -> None:
    """A child with reflection is sent back by a failed check; its verdicts reach the
    parent's stream nested, and only the checked answer is the call's result."""
    checks = ("self_check", "contradiction_check", "completeness_check")
    child = child_of(
        STOP,
        call_tools(_verdict("self_check"), _verdict("contradiction_check", "fail")),
        STOP,
        call_tools(*(_verdict(c) for c in checks)),
        reply("checked answer"),
        **PLAIN,
        enable_reflection=True,
        reflection_depth=2,
    )
    result, events = await streamed(parent_of(child, reply("Done.")))
    verdicts = [(e["check_type"], e["result"]) for e in nested(events, "reflection")]
    assert verdicts[1] == ("contradiction_check", "fail")
    assert verdicts[2:] == [(c, "pass") for c in checks]
    assert helper_results(result) == ["checked answer"]
    assert not of_kind(events, "reflection")


async def test_an_approval_in_a_child_shows_in_the_parents_suspension_and_is_checked() -> None:
    """A child's call needing approval suspends the parent on the call to the child, whose
    entry shows what the child waits for; a decision the child cannot take is refused
    before anything runs, and an approval runs the child's tool once."""
    store = open_store("memory:")
    child_script: list[ScriptEntry] = [
        call_tools(("deploy", {"target": "prod"}, "d1")),
        STOP,
        "Deployed.",
    ]
    child = Agent(ScriptedModel(child_script), tools=[deploy], **PLAIN)
    parent = parent_of(child, reply("Prod is deployed."), store=store)
    first = await parent.run("Ship it.")
    assert first.suspension is not None
    [call] = first.suspension["payload"]["calls"]
    assert (call["id"], call["sub_agent"]["reason"]) == ("c1", "approval")
    assert [c["name"] for c in call["sub_agent"]["payload"]["calls"]] == ["deploy"]
    with pytest.raises(UserError, match="decision for call 'd1' must be"):
        await parent.resume(first.run_id, {"c1": {"d1": "maybe"}})
    done = await parent.resume(first.run_id, {"c1": {"d1": "approve"}})
    assert (done.status, done.output) == ("completed", "Prod is deployed.")
    assert helper_results(done) == ["Deployed."]
    stored = await store.load(f"{first.run_id}.c1")
    ran = [m["content"] for m in stored.messages if m.get("name") == "deploy"]
    assert ran == ["deployed to prod"]
