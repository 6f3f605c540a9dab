"""Step-react cells of the feature matrix on Temporal: each agent run locally and on a worker.

See ``tests.temporal.test_cells`` for how a cell is run, and docs/guides/temporal.md.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client

from ponder.agent import Agent, UsageLimits
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from tests.agent.steps import no_plan, plan, step_agent, summary
from tests.temporal.test_cells import (
    REFLECTION_CHECKS,
    approved_on_temporal,
    deploy,
    of_kind,
    run_both,
    thought,
    verdicts,
)
from tests.temporal.test_runs import dumped


async def test_a_branching_thought_in_a_step_shows_the_other_branches_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[ScriptEntry] = [
            plan(("a", "Think it through", []), ("b", "Conclude", ["a"])),
            thought(1, "MAIN-LINE start"),
            thought(2, "ALPHA-IDEA first branch", branch_from_thought=1, branch_id="alpha"),
            thought(2, "BETA-IDEA second branch", branch_from_thought=1, branch_id="beta"),
            call_tools(("agent_stop", {"result": "thought"}, "s1")),
            summary("Two branches weighed."),
            call_tools(("agent_stop", {"result": "concluded"}, "s2")),
            summary("Concluded."),
            reply("done"),
        ]
        return Agent(
            ScriptedModel(script),
            agent_workflow="step-react",
            agent_thought_mode="chat",
            thinking_branch_contents_max_chars=2000,
        )

    (local, _), (remote, _) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "done"
    thoughts = [
        m.content
        for m in remote.messages
        if isinstance(m, ToolMessage) and m.name == "sequential_thinking"
    ]
    assert "ALPHA-IDEA" in thoughts[2] and "alpha" in thoughts[2]


async def test_step_blocks_beyond_the_reasoning_depth_in_a_step_are_reported_on_temporal(
    client: Client, task_queue: str
) -> None:
    blocks = "\n".join(f"[Step {i}/4] [analyze] part {i}" for i in range(1, 5))

    def make() -> Agent:
        script: list[ScriptEntry] = [
            no_plan(),
            call_tools(("think_and_reason", {"summary": blocks, "last_step": ""})),
            call_tools(("agent_stop", {"result": "done"})),
            summary("Done."),
            reply("done"),
        ]
        return step_agent(
            ScriptedModel(script),
            agent_thought_mode="reasoning-optional",
            structured_reasoning=True,
            reasoning_depth=2,
        )

    (local, _), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "done"
    assert [b.step_index for b in of_kind(events, "structured_reasoning")] == [1, 2]


async def test_a_sub_agent_runs_inside_a_step_and_its_usage_rolls_up_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        child = Agent(
            ScriptedModel([reply("Paris has 2.1 million people.")]), agent_strategy="no-action"
        )
        model = ScriptedModel(
            [
                plan(("a", "Ask the researcher", []), ("b", "Answer", ["a"])),
                call_tools(("researcher", {"task": "Population of Paris?"}, "c1")),
                call_tools(("agent_stop", {"result": "2.1 million"}, "s1")),
                summary("Paris has 2.1 million people."),
                call_tools(("agent_stop", {"result": "answered"}, "s2")),
                summary("Answered."),
                reply("About 2.1 million."),
            ]
        )
        tool = child.as_tool("researcher", "Finds facts.")
        return Agent(
            model,
            tools=[tool],
            agent_workflow="step-react",
            agent_thought_mode="chat",
            enable_thinking_tool=False,
        )

    (local, _), (remote, events) = await run_both(client, task_queue, make)
    assert remote.output == local.output == "About 2.1 million."
    nested = of_kind(events, "sub_agent_event")
    assert {e.call_id for e in nested} == {"c1"} and nested[-1].event["kind"] == "run_finished"
    assert [e.step_id for e in of_kind(events, "step_finished")] == ["a", "b"]
    assert remote.usage.requests == local.usage.requests == 8  # the child's request too


async def test_step_react_ends_on_a_usage_limit_with_an_answer_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[ScriptEntry] = [
            no_plan(),
            call_tools(("lookup", {"key": "k"})),
            reply("k is value of k."),
        ]
        return step_agent(ScriptedModel(script))

    limits = UsageLimits(requests=3)
    (local, _), (remote, _) = await run_both(client, task_queue, make, limits=limits)
    assert (remote.output, remote.stop_reason) == (local.output, local.stop_reason)
    assert (remote.stop_reason, remote.usage.requests) == ("requests_limit", 3)


async def test_an_approval_inside_a_step_suspends_and_the_step_goes_on_on_temporal(
    client: Client, task_queue: str
) -> None:
    script: list[ScriptEntry] = [
        plan(("a", "Deploy", []), ("b", "Report", ["a"])),
        call_tools(("deploy", {"target": "prod"}, "d1")),
        call_tools(("agent_stop", {"result": "deployed"}, "s1")),
        summary("Deployed to prod."),
        call_tools(("agent_stop", {"result": "reported"}, "s2")),
        summary("Reported."),
        reply("Deployed and reported."),
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model,
        tools=[deploy],
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    done = await approved_on_temporal(client, task_queue, agent)
    assert done.output == "Deployed and reported." and model.remaining == 0


def reflecting_step_agent(script: list[ScriptEntry], **config: Any) -> Agent:
    return Agent(
        ScriptedModel(script),
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        enable_reflection=True,
        **config,
    )


async def test_step_react_reflects_after_the_last_step_stops_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        return reflecting_step_agent(
            [
                plan(("s1", "find a", []), ("s2", "find b", [])),
                call_tools(("agent_stop", {"result": "a=1"})),
                summary("a is 1"),
                call_tools(("agent_stop", {"result": "b=2"})),
                verdicts(*REFLECTION_CHECKS),
                summary("b is 2"),
                reply("a=1, b=2"),
            ]
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "a=1, b=2"
    kinds = [e.kind for e in events if e.kind != "text_delta"]  # deltas come batched
    assert kinds == [e.kind for e in local_events if e.kind != "text_delta"]
    assert [e.check_type for e in of_kind(events, "reflection")] == list(REFLECTION_CHECKS)
    assert kinds.index("step_finished") < kinds.index("reflection")


async def test_a_failed_reflection_in_step_react_sends_the_model_back_on_temporal(
    client: Client, task_queue: str
) -> None:
    failed = (
        "verify_reasoning",
        {"check_type": "contradiction_check", "result": "fail", "detail": "b is not 3"},
    )

    def make() -> Agent:
        return reflecting_step_agent(
            [
                plan(("s1", "find a", []), ("s2", "find b", [])),
                call_tools(("agent_stop", {"result": "a=1"})),
                summary("a is 1"),
                call_tools(("agent_stop", {"result": "b=3"})),
                call_tools(
                    (
                        "verify_reasoning",
                        {"check_type": "self_check", "result": "pass", "detail": "ok"},
                    ),
                    failed,
                ),
                call_tools(("agent_stop", {"result": "b=2"})),  # back in step 2, stops again
                verdicts(*REFLECTION_CHECKS),
                summary("b is 2"),
                reply("a=1, b=2"),
            ],
            reflection_depth=2,
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "a=1, b=2"
    attempts = [e.attempt for e in of_kind(events, "reflection")]
    assert attempts == [e.attempt for e in of_kind(local_events, "reflection")] == [1, 1, 2, 2, 2]


async def test_a_stall_in_a_step_is_corrected_and_the_step_goes_on_on_temporal(
    client: Client, task_queue: str
) -> None:
    same = call_tools(("lookup", {"key": "x"}))

    def make() -> Agent:
        script: list[ScriptEntry] = [
            plan(("a", "Find x", []), ("b", "Use x", ["a"])),
            same,
            same,
            call_tools(("agent_stop", {"result": "x found"})),
            summary("Found x."),
            call_tools(("agent_stop", {})),
            summary("Used x."),
            reply("x is value of x"),
        ]
        return step_agent(ScriptedModel(script), loop_reasoning_trigger=2)

    (local, _), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "x is value of x"
    stalls = of_kind(events, "stall_detected")
    assert [(s.step_id, s.action, s.repeats) for s in stalls] == [("a", "corrected", 2)]
