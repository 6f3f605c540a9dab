"""Cells of the feature matrix on Temporal: the same agent run locally and on a worker.

Each test runs one agent twice, in this process and on Temporal, and checks that the
feature shows the same way in both (see the matrix in docs/guides/temporal.md).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from temporalio.client import Client

from ponder.agent import Agent, RunResult, UsageLimits
from ponder.events import Event
from ponder.exceptions import ModelHTTPError, UserError
from ponder.messages import ToolMessage
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.temporal import TemporalAgent, build_worker
from ponder.tools import tool
from tests.agent import steps
from tests.agent.steps import no_plan, step_agent, summary
from tests.composition.test_reflection_and_loops import STOP, lookup, think
from tests.temporal.test_runs import assert_replays, dumped

Run = tuple[RunResult, list[Event]]


async def run_both(
    client: Client, task_queue: str, make: Callable[[], Agent], **options: Any
) -> tuple[Run, Run]:
    """The local run of ``make()`` and the run of another ``make()`` on a worker."""
    stream = make().stream("q", **options)
    local_events = [e async for e in stream]
    async with build_worker(client, task_queue, make()):
        remote = TemporalAgent(client, task_queue)
        result = await remote.run("q", **options)
        events = await remote.events(result.run_id)
        await assert_replays(client, result.run_id)
    return (stream.result, local_events), (result, events)


def of_kind(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]


def thought(number: int, text: str, **extra: Any) -> ModelResponse:
    args = {
        "thought": text,
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": True,
        **extra,
    }
    return call_tools(("sequential_thinking", args))


async def test_a_branching_thought_shows_the_other_branches_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[ScriptEntry] = [
            thought(1, "MAIN-LINE start"),
            thought(2, "ALPHA-IDEA first branch", branch_from_thought=1, branch_id="alpha"),
            thought(2, "BETA-IDEA second branch", branch_from_thought=1, branch_id="beta"),
            call_tools(("agent_stop", {})),
            "done",
        ]
        model = ScriptedModel(script)
        return Agent(model, agent_thought_mode="chat", thinking_branch_contents_max_chars=2000)

    (local, _), (remote, _) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local)
    beta = [m.content for m in remote.messages if isinstance(m, ToolMessage)][2]
    assert "ALPHA-IDEA" in beta and "alpha" in beta  # the model reads the other branch


async def test_step_blocks_beyond_the_reasoning_depth_are_reported_on_temporal(
    client: Client, task_queue: str
) -> None:
    summary = "\n".join(f"[Step {i}/4] [analyze] part {i}" for i in range(1, 5))

    def make() -> Agent:
        script: list[ScriptEntry] = [
            call_tools(("think_and_reason", {"summary": summary, "last_step": ""})),
            call_tools(("agent_stop", {})),
            "done",
        ]
        return Agent(
            ScriptedModel(script),
            enable_thinking_tool=False,
            structured_reasoning=True,
            reasoning_depth=2,
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local)
    blocks = of_kind(events, "structured_reasoning")
    assert [b.step_index for b in blocks] == [1, 2]
    assert [b.step_index for b in of_kind(local_events, "structured_reasoning")] == [1, 2]
    recorded = next(m.content for m in remote.messages if isinstance(m, ToolMessage))
    assert "reasoning_depth" in recorded and "2 of 4" in recorded


async def test_a_stop_after_a_loop_correction_is_a_stop_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[Any] = []
        for _ in range(5):
            script += [think("same plan"), call_tools(("lookup", {"n": 1}))]
        script += [think("same plan"), STOP, "the answer"]
        return Agent(
            ScriptedModel(script),
            tools=[lookup],
            enable_thinking_tool=False,
            loop_reasoning_trigger=3,
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local)
    assert [e.action for e in of_kind(events, "loop_detected")] == ["corrected"]
    assert [e.action for e in of_kind(local_events, "loop_detected")] == ["corrected"]
    assert (remote.output, remote.stop_reason) == ("the answer", "answered")


async def test_a_chat_run_is_its_one_request_within_any_limit_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        return Agent(ScriptedModel(["hi"]), tool_calling_mode="none")

    limits = UsageLimits(requests=1, tool_calls=0)
    (local, _), (remote, events) = await run_both(client, task_queue, make, limits=limits)
    assert (remote.output, remote.stop_reason) == (local.output, local.stop_reason)
    assert (remote.output, remote.stop_reason, remote.usage.requests) == ("hi", "answered", 1)
    assert of_kind(events, "limit_reached") == []


async def test_a_limit_reached_before_retrieval_answers_without_it_in_rag_mode_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        model = ScriptedModel(["From what I know: 42."])
        return Agent(model, tools=[steps.lookup], tool_calling_mode="rag")

    limits = UsageLimits(requests=1)
    (local, _), (remote, events) = await run_both(client, task_queue, make, limits=limits)
    assert (remote.output, remote.stop_reason) == (local.output, local.stop_reason)
    assert remote.stop_reason == "requests_limit" and remote.usage.requests == 1
    assert [(e.limit, e.value) for e in of_kind(events, "limit_reached")] == [("requests", 1)]
    assert of_kind(events, "retrieval") == []


async def test_a_sub_agent_is_a_retrieval_tool_in_rag_mode_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        child = Agent(
            ScriptedModel([reply("The warranty lasts 3 years.")]), agent_strategy="no-action"
        )
        model = ScriptedModel(
            [call_tools(("librarian", {"task": "Warranty length?"}, "c1")), "Three years."]
        )
        tool = child.as_tool("librarian", "Reads the manuals.")
        return Agent(model, tools=[tool], tool_calling_mode="rag")

    limits = UsageLimits(requests=3)
    (local, _), (remote, events) = await run_both(client, task_queue, make, limits=limits)
    assert remote.output == local.output == "Three years."
    assert of_kind(events, "retrieval")[0].sources == ["librarian"]
    nested = of_kind(events, "sub_agent_event")
    assert nested and nested[-1].event["kind"] == "run_finished"
    assert remote.usage.requests == local.usage.requests == 3  # retrieval, child, answer


async def test_a_typed_or_recording_agent_is_refused_by_build_worker(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    class Answer(BaseModel):
        value: int

    typed = Agent(ScriptedModel(["{}"]), output_type=Answer)
    with pytest.raises(UserError, match=r"'default': output_type .* Temporal"):
        build_worker(client, task_queue, typed)
    child = Agent(ScriptedModel(["x"]), record=tmp_path / "run.json")
    parent = Agent(ScriptedModel(["x"]), tools=[child.as_tool("helper", "Helps.")])
    with pytest.raises(UserError, match=r"'default/helper': record= .* Temporal"):
        build_worker(client, task_queue, parent)


REFLECTION_CHECKS = ("self_check", "contradiction_check", "completeness_check")


def verdicts(*checks: str) -> ModelResponse:
    calls = [
        ("verify_reasoning", {"check_type": c, "result": "pass", "detail": "ok"}) for c in checks
    ]
    return call_tools(*calls)


async def test_all_three_reflection_checks_in_one_request_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[ScriptEntry] = [
            call_tools(("agent_stop", {})),
            verdicts(*REFLECTION_CHECKS),
            "the answer",
        ]
        return Agent(
            ScriptedModel(script),
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            enable_reflection=True,
        )

    (local, _), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "the answer"
    shown = [(e.check_type, e.result, e.attempt) for e in of_kind(events, "reflection")]
    assert shown == [(c, "pass", 1) for c in REFLECTION_CHECKS]


async def test_a_check_answered_as_another_type_is_asked_again_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        script: list[ScriptEntry] = [
            call_tools(("agent_stop", {})),
            verdicts("self_check", "contradiction_check"),
            verdicts("self_check"),  # not the completeness check it was asked for
            verdicts("completeness_check"),
            "the answer",
        ]
        return Agent(
            ScriptedModel(script),
            agent_thought_mode="chat",
            enable_thinking_tool=False,
            enable_reflection=True,
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert dumped(remote) == dumped(local) and remote.output == "the answer"
    checks = [(e.check_type, e.result) for e in of_kind(events, "reflection")]
    assert checks == [(e.check_type, e.result) for e in of_kind(local_events, "reflection")]
    assert ("completeness_check", "pass") in checks


async def test_a_session_is_refused_on_temporal(client: Client, task_queue: str) -> None:
    remote = TemporalAgent(client, task_queue)
    with pytest.raises(UserError, match=r"session_id='s'.*not supported on Temporal"):
        await remote.run("first", session_id="s")


async def test_the_next_model_answers_and_an_event_says_which_on_temporal(
    client: Client, task_queue: str
) -> None:
    def make() -> Agent:
        def down(request: Any) -> Any:
            raise ModelHTTPError(503, "overloaded", model_name="primary")

        primary = ScriptedModel(down, name="primary")
        backup = ScriptedModel(
            [call_tools(("agent_stop", {"result": "ok"})), reply("From the backup.")],
            name="backup",
        )
        return Agent([primary, backup], agent_thought_mode="chat", enable_thinking_tool=False)

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert remote.output == local.output == "From the backup."
    fell = [(e.failed, e.answered_by) for e in of_kind(events, "model_fallback")]
    assert fell == [(e.failed, e.answered_by) for e in of_kind(local_events, "model_fallback")]
    assert fell == [("primary", "backup")] * 2


DEPLOYS: list[str] = []


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    DEPLOYS.append(target)
    return f"deployed to {target}"


async def approved_on_temporal(
    client: Client, task_queue: str, agent: Agent, **options: Any
) -> RunResult:
    """Run ``agent`` on a worker up to its approval, then approve it on a new worker."""
    DEPLOYS.clear()
    remote = TemporalAgent(client, task_queue)
    async with build_worker(client, task_queue, agent):
        first = await remote.run("deploy", **options)
    assert first.status == "suspended" and first.suspension is not None
    assert [c["name"] for c in first.suspension["payload"]["calls"]] == ["deploy"]
    assert DEPLOYS == []
    async with build_worker(client, task_queue, agent):  # it replays the run so far
        done = await remote.resume(first.run_id, "approve")
        await assert_replays(client, first.run_id)
    assert DEPLOYS == ["prod"]
    return done


async def test_an_approval_in_the_retrieval_round_suspends_and_resumes_on_temporal(
    client: Client, task_queue: str
) -> None:
    model = ScriptedModel([call_tools(("deploy", {"target": "prod"}, "d1")), "Deployed."])
    agent = Agent(model, tools=[deploy], tool_calling_mode="rag")
    done = await approved_on_temporal(client, task_queue, agent)
    assert (done.status, done.output) == ("completed", "Deployed.")
    assert len(model.requests) == 2  # the retrieval round was not asked again


@pytest.mark.parametrize("workflow", ["step-react", "none", "rag"])
async def test_the_answer_streams_as_text_in_every_workflow_on_temporal(
    client: Client, task_queue: str, workflow: str
) -> None:
    def make() -> Agent:
        if workflow == "step-react":
            script: list[ScriptEntry] = [
                no_plan(),
                call_tools(("agent_stop", {"result": "done"})),
                summary("Done."),
                reply("The streamed answer."),
            ]
            return step_agent(ScriptedModel(script))
        return Agent(
            ScriptedModel(["The streamed answer."]),
            tool_calling_mode=workflow,
            tools=[steps.lookup],
        )

    (local, local_events), (remote, events) = await run_both(client, task_queue, make)
    assert remote.output == local.output == "The streamed answer."
    streamed = "".join(e.text for e in of_kind(events, "text_delta"))
    assert streamed == "".join(e.text for e in of_kind(local_events, "text_delta"))
    assert "The streamed answer." in streamed


async def test_usage_limits_hold_on_the_worker_that_takes_the_run_up(
    client: Client, task_queue: str
) -> None:
    model = ScriptedModel([call_tools(("deploy", {"target": "prod"})), "Deployed."])
    agent = Agent(model, tools=[deploy], agent_thought_mode="chat", enable_thinking_tool=False)
    done = await approved_on_temporal(client, task_queue, agent, limits=UsageLimits(requests=2))
    assert (done.output, done.stop_reason, done.usage.requests) == (
        "Deployed.",
        "requests_limit",
        2,
    )
