"""The crossings of features and ways of running that the matrix had open, in one process:
a plain sync script (``run_sync``, ``stream_sync``, ``asyncio.run`` per call) and a store."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent, UsageLimits
from ponder.exceptions import ModelHTTPError, UserError
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ScriptedModel, Usage, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.replay import ReplayModel, load_cassette
from ponder.store import Store, open_store
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.agent.steps import lookup, plan, step_agent, summary

from .support import of_kind, user_turns
from .test_sessions import chat_agent, store

__all__ = ["store"]  # the memory, SQLite and PostgreSQL fixture of the session tests

STOP = call_tools(("agent_stop", {"result": "done"}))
STOP_WIRE = FakeReply(tool_calls=[FakeToolCall(name="agent_stop", arguments={"result": "done"})])


def _down(request: ModelRequest) -> Any:
    raise ModelHTTPError(503, "overloaded", model_name="primary")


def _thought(n: int) -> Any:
    args = {
        "thought": f"thought {n}",
        "thought_number": n,
        "total_thoughts": 3,
        "next_thought_needed": n < 3,
    }
    return call_tools(("sequential_thinking", args))


def _todo(status: str) -> Any:
    steps = [{"id": 1, "description": "Look it up", "status": status}]
    return call_tools(("todo_write", {"task": "answer", "steps": steps}))


def test_a_session_continues_across_sync_calls_and_event_loops() -> None:
    """Without a store, the turns of one session continue each other whether they come from
    ``run_sync``, ``stream_sync`` or ``asyncio.run`` — each its own event loop."""
    agent = chat_agent()
    agent.run_sync("first", session_id="s")
    streamed = list(agent.stream_sync("second", session_id="s"))
    assert of_kind(streamed, "run_finished")[0].output == "re: second"
    third = asyncio.run(agent.run("third", session_id="s"))
    assert user_turns(third.messages) == ["first", "second", "third"]
    assert user_turns(agent.run_sync("other", session_id="t").messages) == ["other"]


def test_a_session_keeps_its_thinking_and_plan_across_sync_calls() -> None:
    """``sequential_thinking`` and ``todo_write`` state carries from one ``run_sync`` turn
    of a session to the next, which sees the earlier thought and plan."""
    script: list[ScriptEntry] = [
        _thought(1),
        _todo("in_progress"),
        STOP,
        "one",
        _thought(2),
        _todo("completed"),
        STOP,
        "two",
    ]
    agent = Agent(ScriptedModel(script), agent_thought_mode="chat", enable_todo_tool=True)
    agent.run_sync("first", session_id="s")
    events = list(agent.stream_sync("second", session_id="s"))
    assert of_kind(events, "thinking")[-1].data["thought_history_length"] == 2
    assert of_kind(events, "todo")[-1].data["changed"] == ["1"]  # the plan was kept


def test_a_step_plan_runs_under_run_sync_with_its_step_events() -> None:
    """A step-react plan runs from a sync script: steps in dependency order, each with its
    events, the later step reading the earlier one's result."""
    model = ScriptedModel(
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
    events = list(step_agent(model).stream_sync("use x"))
    assert [e.step_id for e in of_kind(events, "step_started")] == ["a", "b"]
    assert [e.step_id for e in of_kind(events, "step_finished")] == ["a", "b"]
    assert "Found x." in str(model.requests[4].messages[-1].content)  # type: ignore[union-attr]
    assert of_kind(events, "run_finished")[0].output == "x is value of x"


def _verdict(check: str, result: str = "pass") -> tuple[str, dict[str, Any]]:
    return ("verify_reasoning", {"check_type": check, "result": result, "detail": "ok"})


def test_reflection_runs_under_run_sync() -> None:
    """Under ``stream_sync``, a failed check sends the model back; the passing checks then
    lead to the answer, and each verdict is an event."""
    checks = ("self_check", "contradiction_check", "completeness_check")
    model = ScriptedModel(
        [
            STOP,
            call_tools(_verdict("self_check"), _verdict("contradiction_check", "fail")),
            STOP,
            call_tools(*(_verdict(c) for c in checks)),
            reply("checked answer"),
        ]
    )
    agent = Agent(
        model,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
        reflection_depth=2,
    )
    events = list(agent.stream_sync("q"))
    verdicts = [(e.check_type, e.result) for e in of_kind(events, "reflection")]
    assert verdicts[1] == ("contradiction_check", "fail")
    assert verdicts[2:] == [(c, "pass") for c in checks]
    assert of_kind(events, "run_finished")[0].output == "checked answer"
    assert model.remaining == 0


def test_usage_limits_hold_under_run_sync() -> None:
    """``run_sync(limits=...)`` ends the loop at the limit with an answer, as ``run`` does."""
    calls = [call_tools(("lookup", {"key": f"k{i}"})) for i in range(2)]
    model = ScriptedModel([*calls, reply("Found k0 and k1.")])
    agent = Agent(model, tools=[lookup], agent_thought_mode="chat", enable_thinking_tool=False)
    result = agent.run_sync("look up", limits=UsageLimits(requests=3))
    assert (result.stop_reason, result.output) == ("requests_limit", "Found k0 and k1.")
    assert result.usage.requests == 3 and len(model.requests) == 3


def test_a_sub_agent_runs_under_run_sync_and_its_usage_rolls_up() -> None:
    """A child agent called from a ``run_sync`` parent runs nested; its answer is the tool
    result and its tokens count in the parent's usage."""
    used = Usage(requests=1, input_tokens=50, output_tokens=1)
    child = Agent(ScriptedModel([reply("child says 7", usage=used)]), agent_strategy="no-action")
    model = ScriptedModel(
        [call_tools(("helper", {"task": "Count."}, "c1")), STOP, reply("It is 7.")]
    )
    parent = Agent(
        model,
        tools=[child.as_tool("helper", "Counts.")],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    events = list(parent.stream_sync("How many?"))
    result = of_kind(events, "run_finished")[0]
    assert result.output == "It is 7."
    nested = of_kind(events, "sub_agent_event")
    assert nested[0].event["kind"] == "run_started" and nested[-1].event["kind"] == "run_finished"
    helper = [e.output for e in of_kind(events, "tool_call_finished") if e.name == "helper"]
    assert helper == ["child says 7"]
    assert result.usage["input_tokens"] >= 50


def test_a_fallback_model_answers_under_run_sync() -> None:
    """From a sync script, the backup answers the requests the primary fails, and says so."""
    backup = ScriptedModel([STOP, reply("From the backup.")], name="backup")
    agent = Agent(
        [ScriptedModel(_down, name="primary"), backup],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    events = list(agent.stream_sync("hello"))
    fell = of_kind(events, "model_fallback")
    assert [(e.failed, e.answered_by) for e in fell] == [("primary", "backup")] * 2
    assert of_kind(events, "run_finished")[0].output == "From the backup."


def _recorded_script() -> list[ScriptEntry]:
    return [call_tools(("lookup", {"key": "x"})), STOP, reply("x is value of x")]


def _recording_agent(model: Any, **options: Any) -> Agent:
    return Agent(
        model, tools=[lookup], agent_thought_mode="chat", enable_thinking_tool=False, **options
    )


def test_a_run_recorded_with_run_sync_replays_with_run_sync(tmp_path: Path) -> None:
    """``record=`` writes the cassette of a ``run_sync`` run; a `ReplayModel` plays it back
    under ``run_sync`` with the same answer, requests and tool results."""
    path = tmp_path / "run.json"
    first = _recording_agent(ScriptedModel(_recorded_script()), record=path).run_sync("x?")
    cassette = load_cassette(path)
    assert len(cassette.exchanges) == 3 and len(cassette.tool_calls) == 1
    model = ReplayModel(cassette)
    again = _recording_agent(model).run_sync("x?")
    assert again.output == first.output == "x is value of x"
    assert model.requests == 3
    results = [m.content for m in again.messages if isinstance(m, ToolMessage)]
    assert results[0] == "value of x"


async def test_a_recorded_run_with_a_store_replays_into_a_store(
    store: Store, tmp_path: Path
) -> None:
    """A run recorded while checkpointed to a store replays with a store too: the same
    answer, and the replayed run is stored as completed with the same messages."""
    path = tmp_path / "run.json"
    agent = _recording_agent(ScriptedModel(_recorded_script()), record=path, store=store)
    first = await agent.run("x?")
    replayed = await _recording_agent(ReplayModel(load_cassette(path)), store=store).run("x?")
    assert replayed.output == first.output == "x is value of x"
    for run in (first, replayed):
        stored = await store.load(run.run_id)
        assert stored.record.status == "completed"
    assert [m.kind for m in replayed.messages] == [m.kind for m in first.messages]


async def test_a_fallback_model_with_a_store_falls_back_after_a_resume(store: Store) -> None:
    """A run on a fallback model is checkpointed like any other: suspended for approval,
    resumed from the store, the backup answers again while the primary is down."""
    from tests.composition.test_entry_points import deploy

    def agent(backup: ScriptedModel) -> Agent:
        return Agent(
            [ScriptedModel(_down, name="primary"), backup],
            tools=[deploy],
            store=store,
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )

    first = await agent(
        ScriptedModel([call_tools(("deploy", {"target": "prod"}))], name="backup")
    ).run("deploy")
    assert first.status == "suspended"
    later = ScriptedModel([STOP, reply("Deployed by the backup.")], name="backup")
    fallbacks: list[str] = []
    resumer = agent(later)
    resumer.on_event("model_fallback")(lambda e: fallbacks.append(e.answered_by))
    done = await resumer.resume(first.run_id, "approve")
    assert (done.status, done.output) == ("completed", "Deployed by the backup.")
    assert fallbacks == ["backup", "backup"] and len(later.requests) == 2
    stored = await store.load(first.run_id)
    assert stored.record.status == "completed"


def test_the_price_of_a_run_sync_run_is_the_sum_of_its_requests() -> None:
    """From a sync script a priced model gives usage events and the result a price, the
    sum of the requests' prices."""
    with FakeOpenAIServer([STOP_WIRE, "the answer"]) as server:
        agent = Agent(
            "openai:gpt-4o-mini",
            base_url=server.base_url,
            api_key="k",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )
        events = list(agent.stream_sync("q"))
    usages = of_kind(events, "usage")
    assert len(usages) == len(server.requests) == 2
    done = of_kind(events, "run_finished")[0]
    assert done.output == "the answer"
    assert done.cost is not None and done.cost > 0
    assert done.cost == pytest.approx(usages[-1].cost)


async def test_resuming_with_a_recording_agent_is_refused(tmp_path: Path) -> None:
    """A cassette holds a run from its first request; resuming a stored run (as another
    process does) with ``record=`` set is refused before any request, naming both."""
    from tests.composition.test_entry_points import deploy

    store = open_store(tmp_path / "runs.db")
    path = tmp_path / "run.json"
    script = [call_tools(("deploy", {"target": "prod"})), STOP, reply("Deployed.")]
    first = await Agent(ScriptedModel(script), tools=[deploy], store=store).run("deploy")
    assert first.status == "suspended"
    model = ScriptedModel(script[1:])
    recording = Agent(model, tools=[deploy], store=store, record=path)
    with pytest.raises(UserError, match=r"record=.*resume"):
        await recording.resume(first.run_id, "approve")
    assert model.requests == [] and not path.exists()
    done = await Agent(model, tools=[deploy], store=store).resume(first.run_id, "approve")
    assert done.output == "Deployed."
    await store.close()
