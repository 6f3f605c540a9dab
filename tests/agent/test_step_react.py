"""The step-driven workflow end to end on a scripted model: plans, order, events, answers."""

from __future__ import annotations

import pytest

from ponder.agent import Agent, AgentStrategy
from ponder.agent.strategies.workflows import STEP_REACT_BLOCK
from ponder.exceptions import UserError
from ponder.messages import ToolMessage, UserMessage
from ponder.models import ScriptedModel, call_tools, reply

from .scripts import of_kind, stop
from .steps import no_plan, plan, step_agent, summary, tool_names

THREE_STEPS = plan(
    ("report", "Write the report", ["fetch", "parse"]),
    ("parse", "Parse the data", ["fetch"]),
    ("fetch", "Fetch the data", []),
)


def test_the_program_has_the_spec_shape() -> None:
    listing = STEP_REACT_BLOCK.dis()
    names = [
        "STRATEGY_INIT",
        "AGENT_ENTRY",
        "NODE_INTRO",
        "STEP_EXEC",
        "ITER_COND",
        "NODE_LEAVE",
        "TASK_COND",
        "AGENT_POST_PROCESS",
    ]
    positions = [listing.index(name) for name in names]
    assert positions == sorted(positions)
    assert "BRANCH_TRUE      TASK_COND" in listing and "BRANCH_TRUE      ITER_COND" in listing


async def test_three_step_dag_runs_in_dependency_order_with_step_events() -> None:
    model = ScriptedModel(
        [
            THREE_STEPS,
            call_tools(("lookup", {"key": "data"})),
            stop("fetched the data"),
            summary("Fetched the data.", "value of data"),
            stop("parsed"),
            summary("Parsed it into 3 rows.", "3 rows"),
            stop("written"),
            summary("Wrote the report.", "report.md"),
            reply("The report is in report.md: 3 rows of data."),
        ]
    )
    agent = step_agent(model)
    events = [e async for e in agent.stream("Make a report of the data.")]

    decompose = model.requests[0]
    assert decompose.output is not None and decompose.output.name == "task_plan"
    assert decompose.tool_choice == "none" and list(decompose.tools) == []
    plans = of_kind(events, "plan_updated")
    assert [p.revision for p in plans] == [1]
    assert [s["id"] for s in plans[0].steps] == ["report", "parse", "fetch"]

    started = of_kind(events, "step_started")
    assert [(e.step_id, e.index, e.total) for e in started] == [
        ("fetch", 1, 3),
        ("parse", 2, 3),
        ("report", 3, 3),
    ]
    finished = of_kind(events, "step_finished")
    assert [(e.step_id, e.status, e.summary) for e in finished] == [
        ("fetch", "stopped", "Fetched the data."),
        ("parse", "stopped", "Parsed it into 3 rows."),
        ("report", "stopped", "Wrote the report."),
    ]
    # the first action request offers update_step and carries the plan status
    first = model.requests[1]
    assert first.tool_choice == "required"
    assert tool_names(first) == ["lookup", "processing_message", "agent_stop", "update_step"]
    status = first.messages[-1]
    assert isinstance(status, UserMessage) and "[Current step] fetch" in status.content
    assert "[ ] report: Write the report (after fetch, parse)" in status.content
    # agent_stop closed the step, not the task
    stop_result = [m for m in model.requests[3].messages if isinstance(m, ToolMessage)][-1]
    assert stop_result.name == "agent_stop" and "2 step(s) remain" in stop_result.content
    assert model.requests[3].output is not None
    assert model.requests[3].output.name == "step_summary"
    # the final answer sees every step's result, with tools off
    final = model.requests[-1]
    assert final.tool_choice == "none" and list(final.tools) == []
    text = final.messages[-1].content  # type: ignore[union-attr]
    assert "Fetched the data." in text and "3 rows" in text and "report.md" in text
    done = of_kind(events, "run_finished")[0]
    assert done.output == "The report is in report.md: 3 rows of data."
    assert done.stop_reason == "answered"


async def test_plan_status_is_injected_only_when_it_changed() -> None:
    model = ScriptedModel(
        [
            plan(("a", "First", []), ("b", "Second", ["a"])),
            stop(),
            summary("A done."),
            stop(),
            summary("B done."),
            reply("all done"),
        ]
    )
    result = await step_agent(model).run("two things")
    statuses = [
        m for m in result.messages if isinstance(m, UserMessage) and "[Plan status]" in m.content
    ]
    assert len(statuses) == 2
    assert "[>] a: First" in statuses[0].content and "[x] a: First" in statuses[1].content


async def test_a_simple_task_runs_as_one_implicit_step() -> None:
    model = ScriptedModel(
        [
            no_plan("one lookup"),
            call_tools(("lookup", {"key": "k"})),
            stop("found"),
            summary("Looked up k.", "value of k"),
            reply("k is value of k"),
        ]
    )
    events = [e async for e in step_agent(model).stream("what is k?")]
    assert [(e.step_id, e.total) for e in of_kind(events, "step_started")] == [("task", 1)]
    assert of_kind(events, "plan_updated")[0].reason == "one lookup"
    assert not any(
        "[Plan status]" in str(getattr(m, "content", "")) for m in model.requests[1].messages
    )
    assert of_kind(events, "run_finished")[0].output == "k is value of k"


async def test_a_plain_answer_in_simple_mode_follows_the_stop_protocol() -> None:
    answer = "k is value of k"
    model = ScriptedModel([no_plan(), call_tools(("lookup", {"key": "k"})), answer, answer])
    result = await step_agent(model).run("what is k?")
    assert result.output == answer and result.stop_reason == "answered_without_stop"
    assert len(model.requests) == 4
    reminder = model.requests[3].messages[-1]
    assert reminder.kind == "user" and "not a tool call" in reminder.content


async def test_a_plain_answer_inside_a_plan_step_ends_only_that_step() -> None:
    model = ScriptedModel(
        [
            plan(("a", "First", []), ("b", "Second", ["a"])),
            "Step a needs no tools: it is 42.",
            "Step a needs no tools: it is 42.",
            summary("Found 42."),
            stop("b done"),
            summary("Used 42."),
            reply("The answer is 42."),
        ]
    )
    events = [e async for e in step_agent(model).stream("compute")]
    finished = [(e.step_id, e.status, e.summary) for e in of_kind(events, "step_finished")]
    assert finished == [("a", "done", "Found 42."), ("b", "stopped", "Used 42.")]
    assert of_kind(events, "run_finished")[0].output == "The answer is 42."


async def test_the_global_round_limit_still_ends_the_task_with_an_answer() -> None:
    looks = [call_tools(("lookup", {"key": f"k{i}"})) for i in range(3)]
    model = ScriptedModel([THREE_STEPS, *looks, reply("partial: limit hit")])
    events = [e async for e in step_agent(model, agent_tool_call_limit=3).stream("report")]
    assert [(e.limit, e.value) for e in of_kind(events, "limit_reached")] == [("rounds", 3)]
    assert [e.step_id for e in of_kind(events, "step_started")] == ["fetch"]
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("partial: limit hit", "round_limit")


def test_a_step_strategy_that_is_no_step_react_strategy_is_refused() -> None:
    class Stepper(AgentStrategy):
        category = "step"

    with pytest.raises(UserError, match="Stepper has category 'step' but is no StepReActStrategy"):
        Agent(ScriptedModel(["answer"]), strategy=Stepper)


async def test_only_the_answer_streams_as_text_not_the_plan_or_summaries() -> None:
    model = ScriptedModel(
        [
            plan(("fetch", "Fetch the data", []), ("report", "Report it", ["fetch"])),
            stop("fetched"),
            summary("Fetched the data.", "value of data"),
            stop("reported"),
            summary("Reported it.", "report.md"),
            reply("The report is in report.md."),
        ]
    )
    stream = step_agent(model).stream("Make a report of the data.")
    events = [e async for e in stream]
    streamed = "".join(e.text for e in of_kind(events, "text_delta"))
    assert streamed == stream.result.output == "The report is in report.md."
    assert [len(p.steps) for p in of_kind(events, "plan_updated")] == [2]
    assert [e.summary for e in of_kind(events, "step_finished")] == [
        "Fetched the data.",
        "Reported it.",
    ]
