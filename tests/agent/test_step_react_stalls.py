"""Stalls, budgets and compaction in the step loop, each ending in an answer."""

from __future__ import annotations

import itertools

import pytest

from ponder.agent import Agent
from ponder.messages import AssistantMessage, Ledger, ToolMessage, UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.tools import tool

from .scripts import of_kind, stop
from .steps import plan, step_agent, summary

SAME = call_tools(("lookup", {"key": "x"}))
TWO_STEPS = plan(("a", "Find x", []), ("b", "Use x", ["a"]))


def contents(request: object) -> str:
    return "\n".join(str(getattr(m, "content", "")) for m in request.messages)  # type: ignore[attr-defined]


async def test_a_stall_is_corrected_and_the_step_goes_on() -> None:
    model = ScriptedModel(
        [
            TWO_STEPS,
            SAME,
            SAME,
            stop("x found"),
            summary("Found x."),
            stop(),
            summary("Used x."),
            reply("x is value of x"),
        ]
    )
    events = [e async for e in step_agent(model, loop_reasoning_trigger=2).stream("x?")]
    stalls = of_kind(events, "stall_detected")
    assert [(s.step_id, s.action, s.repeats) for s in stalls] == [("a", "corrected", 2)]
    assert stalls[0].signature == 'lookup({"key": "x"})'
    correction = model.requests[3].messages[-1]
    assert isinstance(correction, UserMessage) and "STALL_CORRECTION" in correction.content
    statuses = [(e.step_id, e.status) for e in of_kind(events, "step_finished")]
    assert statuses == [("a", "stopped"), ("b", "stopped")]
    assert of_kind(events, "run_finished")[0].output == "x is value of x"


async def test_the_same_call_with_new_results_is_progress_not_a_stall() -> None:
    counter = itertools.count()

    @tool
    def poll() -> str:
        """Poll a job."""
        return f"progress {next(counter)}"

    poll_call = call_tools(("poll", {}))
    model = ScriptedModel(
        [
            TWO_STEPS,
            poll_call,
            poll_call,
            poll_call,
            stop(),
            summary("Polled."),
            stop(),
            summary("Done."),
            reply("finished"),
        ]
    )
    agent = Agent(
        model,
        tools=[poll],
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        loop_reasoning_trigger=2,
    )
    events = [e async for e in agent.stream("wait for the job")]
    assert of_kind(events, "stall_detected") == []
    assert of_kind(events, "run_finished")[0].output == "finished"


async def test_a_persisting_stall_skips_the_step_under_skip() -> None:
    model = ScriptedModel(
        [TWO_STEPS, SAME, SAME, SAME, stop("used what I had"), summary("Used x."), reply("partial")]
    )
    events = [
        e
        async for e in step_agent(model, loop_reasoning_trigger=2, stall_action="skip").stream("x")
    ]
    stalls = of_kind(events, "stall_detected")
    assert [(s.action, s.repeats) for s in stalls] == [("corrected", 2), ("skip", 3)]
    finished = [(e.step_id, e.status) for e in of_kind(events, "step_finished")]
    assert finished == [("a", "skipped"), ("b", "stopped")]
    final = contents(model.requests[-1])
    assert "a (skipped)" in final and "Used x." in final
    assert of_kind(events, "run_finished")[0].output == "partial"


async def test_a_persisting_stall_abandons_the_task_honestly_under_abandon() -> None:
    model = ScriptedModel([TWO_STEPS, SAME, SAME, SAME, reply("I could not find x: stuck.")])
    agent = step_agent(model, loop_reasoning_trigger=2, stall_action="abandon")
    events = [e async for e in agent.stream("x")]
    assert [s.action for s in of_kind(events, "stall_detected")] == ["corrected", "abandon"]
    final = model.requests[-1]
    assert final.tool_choice == "none" and "ABANDONED" in final.messages[-1].content  # type: ignore[union-attr]
    assert [e.step_id for e in of_kind(events, "step_started")] == ["a"]
    assert [e.status for e in of_kind(events, "step_finished")] == ["abandoned"]
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("I could not find x: stuck.", "stalled")


async def test_a_persisting_stall_replans_under_replan() -> None:
    new_plan = plan(("a2", "Derive x another way", []), ("b2", "Use x", ["a2"]), reason="other way")
    model = ScriptedModel(
        [
            TWO_STEPS,
            SAME,
            SAME,
            SAME,
            new_plan,
            stop(),
            summary("Derived x."),
            stop(),
            summary("Used x."),
            reply("x derived"),
        ]
    )
    events = [e async for e in step_agent(model, loop_reasoning_trigger=2).stream("x")]
    assert [s.action for s in of_kind(events, "stall_detected")] == ["corrected", "replan"]
    replan_request = model.requests[4]
    assert replan_request.output is not None and "REPLANNING" in contents(replan_request)
    plans = of_kind(events, "plan_updated")
    assert [s["id"] for s in plans[-1].steps] == ["a", "a2", "b2"]
    assert plans[-1].steps[0]["status"] == "skipped"
    assert "stall in step 'a'" in plans[-1].reason
    assert [e.step_id for e in of_kind(events, "step_started")] == ["a", "a2", "b2"]
    assert of_kind(events, "step_finished")[0].status == "replaced"
    assert of_kind(events, "run_finished")[0].output == "x derived"


async def test_an_unusable_replan_falls_back_to_skipping_the_step() -> None:
    model = ScriptedModel(
        [TWO_STEPS, SAME, SAME, SAME, "nope", "{}", stop(), summary("Used x."), reply("partial")]
    )
    agent = step_agent(model, loop_reasoning_trigger=2, structured_output_retries=1)
    events = [e async for e in agent.stream("x")]
    assert [e.status for e in of_kind(events, "step_finished")] == ["skipped", "stopped"]
    assert of_kind(events, "run_finished")[0].output == "partial"


async def test_the_step_iteration_limit_ends_the_step_not_the_task() -> None:
    looks = [call_tools(("lookup", {"key": f"k{i}"})) for i in range(3)]
    model = ScriptedModel(
        [TWO_STEPS, *looks, summary("Looked up 3 keys."), stop(), summary("Used."), reply("ok")]
    )
    events = [e async for e in step_agent(model, step_iteration_limit=3).stream("x")]
    limits = of_kind(events, "limit_reached")
    assert [(e.limit, e.value) for e in limits] == [("step_iterations", 3)]
    assert [e.status for e in of_kind(events, "step_finished")] == ["limit", "stopped"]
    assert of_kind(events, "run_finished")[0].output == "ok"


@pytest.mark.parametrize("budget", [-1, 0])
async def test_a_disabled_token_budget_never_ends_a_step(budget: int) -> None:
    looks = [call_tools(("lookup", {"key": f"k{i}" * 200})) for i in range(3)]
    model = ScriptedModel([TWO_STEPS, *looks, stop(), summary("A."), stop(), summary("B."), "ok"])
    agent = step_agent(model, agent_step_token_budget=budget)
    events = [e async for e in agent.stream("x")]
    assert of_kind(events, "limit_reached") == [] and of_kind(events, "compaction") == []


async def test_the_step_token_budget_ends_the_step_and_compacts_it_into_its_summary() -> None:
    big = call_tools(("lookup", {"key": "x" * 2000}))
    model = ScriptedModel(
        [
            TWO_STEPS,
            big,
            summary("Looked x up.", "value of x"),
            stop("used"),
            summary("Used x."),
            reply("answer from the summary"),
        ]
    )
    events = [e async for e in step_agent(model, agent_step_token_budget=300).stream("x")]
    assert [(e.limit, e.value) for e in of_kind(events, "limit_reached")] == [("token_budget", 300)]
    assert [e.status for e in of_kind(events, "step_finished")] == ["budget", "stopped"]
    compactions = of_kind(events, "compaction")
    assert len(compactions) == 1 and compactions[0].mode == "steps"
    assert compactions[0].tokens_after < compactions[0].tokens_before
    step_b = model.requests[3]
    text = contents(step_b)
    assert "[Summary of previous steps]" in text and "a (done): Looked x up." in text
    assert "value of x" in text and "x" * 2000 not in text
    assert not any(isinstance(m, ToolMessage) and m.name == "lookup" for m in step_b.messages)
    # the compacted ledger still pairs every call with its result
    Ledger(step_b.messages).ensure_sendable()
    Ledger(model.requests[-1].messages).ensure_sendable()
    calls = [
        c.id
        for m in model.requests[-1].messages
        if isinstance(m, AssistantMessage)
        for c in m.tool_calls
    ]
    results = [m.call_id for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert calls == results
    assert of_kind(events, "run_finished")[0].output == "answer from the summary"
