"""Plans that are wrong, plans that change: correction, fallback, update_step mid-run."""

from __future__ import annotations

import json

from ponder.agent.run.state import RunState
from ponder.agent.strategies.step_react.plan import StepSpec, steps_from_specs
from ponder.messages import AssistantMessage, ToolMessage, UserMessage
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply

from .scripts import of_kind, stop
from .steps import no_plan, plan, step_agent, summary


async def test_a_cyclic_plan_is_corrected_on_retry() -> None:
    cyclic = plan(("a", "First", ["b"]), ("b", "Second", ["a"]))
    model = ScriptedModel(
        [
            cyclic,
            plan(("a", "First", []), ("b", "Second", ["a"])),
            stop(),
            summary("A."),
            stop(),
            summary("B."),
            reply("done"),
        ]
    )
    agent = step_agent(model)
    events = [e async for e in agent.stream("two steps")]
    retry = model.requests[1]
    assert retry.output is not None and retry.output.name == "task_plan"
    assert isinstance(retry.messages[-2], AssistantMessage)
    correction = retry.messages[-1]
    assert isinstance(correction, UserMessage) and "cycle" in correction.content
    assert "a -> b -> a" in correction.content or "b -> a -> b" in correction.content
    assert [e.step_id for e in of_kind(events, "step_started")] == ["a", "b"]
    assert of_kind(events, "run_finished")[0].output == "done"
    # the retry conversation never reached the run's ledger
    final = model.requests[-1].messages
    assert not any("cycle" in str(getattr(m, "content", "")) for m in final)


async def test_unknown_dependencies_and_duplicate_ids_are_named() -> None:
    bad = plan(("a", "First", ["ghost"]), ("a", "Again", []))
    model = ScriptedModel([bad, no_plan(), stop(), summary("ok"), reply("fine")])
    await step_agent(model).run("task")
    correction = model.requests[1].messages[-1].content  # type: ignore[union-attr]
    assert "'a' is used more than once" in correction
    assert "unknown step 'ghost'" in correction


async def test_malformed_plans_fall_back_to_one_step_after_the_retries() -> None:
    model = ScriptedModel(
        [
            "not json at all",
            '{"needs_decomposition": true}',
            '{"needs_decomposition": "maybe", "steps": 3}',
            stop("did it"),
            '```json\n{"summary": "Did it.", "outputs": []}\n```',
            reply("answer"),
        ]
    )
    events = [e async for e in step_agent(model, structured_output_retries=2).stream("task")]
    assert "not valid JSON" in model.requests[1].messages[-1].content  # type: ignore[union-attr]
    assert "the plan has no steps" in model.requests[2].messages[-1].content  # type: ignore[union-attr]
    plans = of_kind(events, "plan_updated")
    assert plans[0].reason == "no usable plan; running as one step"
    assert [s["id"] for s in plans[0].steps] == ["task"]
    assert of_kind(events, "step_finished")[0].summary == "Did it."
    assert of_kind(events, "run_finished")[0].output == "answer"


async def test_a_malformed_step_summary_falls_back_to_the_stop_result() -> None:
    model = ScriptedModel([no_plan(), stop("looked everywhere"), "{", "[]", "", reply("ok")])
    events = [e async for e in step_agent(model, structured_output_retries=2).stream("q")]
    assert of_kind(events, "step_finished")[0].summary == "looked everywhere"
    assert of_kind(events, "run_finished")[0].output == "ok"


CHECK = {"id": "c", "description": "Check", "depends_on": ["b"]}
SELF_LOOP = {"id": "z", "description": "Z", "depends_on": ["z"]}


def update(**args: object) -> ModelResponse:
    return call_tools(("update_step", args))


async def test_add_step_and_replan_mid_run() -> None:
    model = ScriptedModel(
        [
            plan(("a", "Gather", []), ("b", "Draft", ["a"])),
            update(action="add_step", node=CHECK),
            stop("gathered"),
            summary("Gathered."),
            update(
                action="replan",
                dag=[
                    {"id": "outline", "description": "Outline", "depends_on": ["a"]},
                    {"id": "write", "description": "Write", "depends_on": ["outline"]},
                ],
            ),
            stop(),
            summary("Outlined."),
            stop(),
            summary("Written."),
            reply("final text"),
        ]
    )
    events = [e async for e in step_agent(model).stream("write something")]
    plans = of_kind(events, "plan_updated")
    assert [p.revision for p in plans] == [1, 2, 3]
    assert [s["id"] for s in plans[1].steps] == ["a", "b", "c"]
    assert [s["id"] for s in plans[2].steps] == ["a", "outline", "write"]
    assert "update_step replan" in plans[2].reason
    started = [e.step_id for e in of_kind(events, "step_started")]
    assert started == ["a", "b", "outline", "write"]
    statuses = [(e.step_id, e.status) for e in of_kind(events, "step_finished")]
    assert statuses[1] == ("b", "replaced")
    results = [m for m in model.requests[2].messages if isinstance(m, ToolMessage)]
    assert results[-1].content.startswith("<STEP_PLAN_UPDATED> Step 'c' added.")
    assert of_kind(events, "run_finished")[0].output == "final text"


async def test_invalid_updates_are_refused_and_the_plan_stays() -> None:
    model = ScriptedModel(
        [
            plan(("a", "Gather", []), ("b", "Draft", ["a"])),
            call_tools(
                ("update_step", {"action": "add_step", "node": {"id": "a", "description": "x"}}),
                ("update_step", {"action": "remove_step", "node_id": "a"}),
                ("update_step", {"action": "explode"}),
                ("update_step", '{"action": "replan", "dag": [{"id": 1}]'),
                ("update_step", {"action": "replan", "dag": [SELF_LOOP]}),
            ),
            update(action="note", note="remember the units"),
            stop(),
            summary("A."),
            stop(),
            summary("B."),
            reply("ok"),
        ]
    )
    events = [e async for e in step_agent(model).stream("task")]
    results = [m for m in model.requests[2].messages if isinstance(m, ToolMessage)]
    assert all(m.is_error for m in results[:5])
    assert "'a' is used more than once" in results[0].content
    assert "depend on 'a'" in results[1].content
    assert "expected one of replan" in results[2].content
    assert "depends on itself" in results[4].content
    plans = of_kind(events, "plan_updated")
    assert [p.revision for p in plans] == [1, 2]
    assert plans[1].steps[0]["notes"] == ["remember the units"]
    assert of_kind(events, "run_finished")[0].output == "ok"


async def test_mark_done_closes_the_current_step_or_another_one() -> None:
    model = ScriptedModel(
        [
            plan(("one", "One", []), ("two", "Two", ["one"]), ("three", "Three", ["one"])),
            update(action="mark_done", node_id="three", note="covered already"),
            stop("one finished"),
            summary("One."),
            update(action="mark_done", note="nothing to do"),
            summary("Two."),
            reply("answer"),
        ]
    )
    events = [e async for e in step_agent(model).stream("three things")]
    started = [e.step_id for e in of_kind(events, "step_started")]
    assert started == ["one", "two"]
    finished = [(e.step_id, e.status) for e in of_kind(events, "step_finished")]
    assert finished == [("one", "stopped"), ("two", "done")]
    final = model.requests[-1].messages[-1].content  # type: ignore[union-attr]
    assert "three (done): covered already" in final and "two (done): Two." in final
    assert of_kind(events, "run_finished")[0].output == "answer"


def test_step_state_is_plain_data_that_round_trips_through_json() -> None:
    state = RunState(run_id="r", prompt="go")
    step = state.step
    step.plan = steps_from_specs(
        [StepSpec(id="a", description="A"), StepSpec(id="b", description="B", depends_on=["a"])]
    )
    step.plan[0].status, step.plan[0].summary, step.plan[0].outputs = "done", "A done.", ["x"]
    step.current_id, step.signatures, step.stall_signature = "b", (("lookup({}) => #ab", 2),), "s"
    written = state.model_dump_json()
    assert json.loads(written)["step"]["signatures"] == {"lookup({}) => #ab": 2}
    again = RunState.model_validate_json(written)
    assert again.step == step
    assert again.step.plan[0].outputs == ["x"]
