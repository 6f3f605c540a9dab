"""The crossings of features and workflows that the matrix had open: each proved end to end
(or refused before the run) in step-react, chat (``none``) and RAG."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ponder.agent import Agent, UsageLimits
from ponder.exceptions import UserError
from ponder.messages import AssistantMessage, Message, TextPart, ToolMessage, UserMessage
from ponder.models import ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.store import open_store
from ponder.tools import tool
from tests.agent.steps import lookup, no_plan, plan, step_agent, summary

from .support import of_kind, sent_text


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed to {target}"


def _child(*script: ScriptEntry) -> Agent[Any]:
    return Agent(ScriptedModel(list(script), name="child"), agent_strategy="no-action")


def _history() -> list[Message]:
    return [
        UserMessage(content="EARLIER-QUESTION"),
        AssistantMessage(parts=(TextPart(text="EARLIER-ANSWER"),)),
    ]


def _verdict(flagged: bool) -> ModelResponse:
    return reply(json.dumps({"flagged": flagged, "category": "none", "reason": ""}))


@pytest.mark.parametrize("mode", ["none", "rag"])
def test_reflection_where_no_tool_loop_runs_is_refused(mode: str) -> None:
    """Reflection checks the ``agent_stop`` of a tool loop; chat and RAG have none, so the
    agent is refused when it is built, naming both settings."""
    with pytest.raises(UserError, match=f"enable_reflection.*{mode}"):
        Agent(ScriptedModel([]), tools=[lookup], enable_reflection=True, tool_calling_mode=mode)
    with pytest.raises(UserError, match=r"enable_reflection.*no-action"):
        Agent(ScriptedModel([]), enable_reflection=True, agent_strategy="no-action")


async def test_an_approval_inside_a_step_suspends_and_the_step_goes_on() -> None:
    """A call needing approval in a step suspends the run; approved, it runs once and the
    same step goes on to the next one with the plan intact."""
    store = open_store("memory:")
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
        store=store,
    )
    finished: list[str] = []
    agent.on_event("step_finished")(lambda e: finished.append(e.step_id))
    first = await agent.run("deploy then report")
    assert first.status == "suspended" and first.suspension is not None
    assert [c["name"] for c in first.suspension["payload"]["calls"]] == ["deploy"]
    assert finished == []
    done = await agent.resume(first.run_id, "approve")
    assert done.output == "Deployed and reported."
    results = [m for m in done.messages if isinstance(m, ToolMessage)]
    assert [m.content for m in results if m.name == "deploy"] == ["deployed to prod"]
    assert finished == ["a", "b"]
    planned = [r for r in model.requests if r.output is not None and r.output.name == "task_plan"]
    assert len(planned) == 1  # the resumed run kept its plan
    assert model.remaining == 0


async def test_a_sub_agent_runs_inside_a_step_and_its_usage_rolls_up() -> None:
    """A child agent called from a step runs nested (its events under the call id), its
    answer is the step's tool result, and its request counts in the parent's usage."""
    child = _child(reply("Paris has 2.1 million people."))
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
    agent = Agent(
        model,
        tools=[child.as_tool("researcher", "Finds facts.")],
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    stream = agent.stream("How many people live in Paris?")
    events = [e async for e in stream]
    result = stream.result
    assert result.output == "About 2.1 million."
    nested = of_kind(events, "sub_agent_event")
    assert {e.call_id for e in nested} == {"c1"}
    assert nested[0].event["kind"] == "run_started" and nested[-1].event["kind"] == "run_finished"
    finished = [e for e in of_kind(events, "tool_call_finished") if e.name == "researcher"]
    assert [e.output for e in finished] == ["Paris has 2.1 million people."]
    assert [e.step_id for e in of_kind(events, "step_finished")] == ["a", "b"]
    assert result.usage.requests == len(model.requests) + 1


async def test_a_sub_agent_is_a_retrieval_tool_in_rag_mode() -> None:
    """In RAG mode without an index, a child agent among the tools is called in the
    retrieval round, runs nested, and the answer is written from what it returned."""
    child = _child(reply("The warranty lasts 3 years."))
    model = ScriptedModel(
        [call_tools(("librarian", {"task": "Warranty length?"}, "c1")), "Three years."]
    )
    agent = Agent(
        model, tools=[child.as_tool("librarian", "Reads the manuals.")], tool_calling_mode="rag"
    )
    stream = agent.stream("How long is the warranty?")
    events = [e async for e in stream]
    assert stream.result.output == "Three years."
    assert of_kind(events, "retrieval")[0].sources == ["librarian"]
    nested = of_kind(events, "sub_agent_event")
    assert nested and nested[-1].event["kind"] == "run_finished"
    assert "The warranty lasts 3 years." in sent_text(model.requests[-1].messages)
    assert stream.result.usage.requests == 3  # retrieval, the child's request, the answer


def _thought(number: int, text: str, **extra: Any) -> ModelResponse:
    args = {
        "thought": text,
        "thought_number": number,
        "total_thoughts": 3,
        "next_thought_needed": True,
        **extra,
    }
    return call_tools(("sequential_thinking", args))


async def test_a_branching_thought_in_a_step_shows_the_other_branches() -> None:
    """``sequential_thinking`` inside a step keeps its branches: a branch thought shows the
    model the other branch's newest thought, as in react."""
    script: list[ScriptEntry] = [
        plan(("a", "Think it through", []), ("b", "Conclude", ["a"])),
        _thought(1, "MAIN-LINE start"),
        _thought(2, "ALPHA-IDEA first branch", branch_from_thought=1, branch_id="alpha"),
        _thought(2, "BETA-IDEA second branch", branch_from_thought=1, branch_id="beta"),
        call_tools(("agent_stop", {"result": "thought"}, "s1")),
        summary("Two branches weighed."),
        call_tools(("agent_stop", {"result": "concluded"}, "s2")),
        summary("Concluded."),
        reply("done"),
    ]
    model = ScriptedModel(script)
    agent = Agent(
        model,
        agent_workflow="step-react",
        agent_thought_mode="chat",
        thinking_branch_contents_max_chars=2000,
    )
    result = await agent.run("q")
    assert result.output == "done"
    thoughts = [
        m.content
        for m in result.messages
        if isinstance(m, ToolMessage) and m.name == "sequential_thinking"
    ]
    assert len(thoughts) == 3
    assert "ALPHA-IDEA" not in thoughts[1]
    assert "ALPHA-IDEA" in thoughts[2] and "alpha" in thoughts[2]
    assert model.remaining == 0


async def test_a_chat_run_is_its_one_request_within_any_limit() -> None:
    """Chat mode makes one request, which is the answer: a limit never cuts it short, and
    the run's usage says one request."""
    model = ScriptedModel(["hi"])
    agent = Agent(model, tool_calling_mode="none")
    stream = agent.stream("hello", limits=UsageLimits(requests=1, tool_calls=0))
    events = [e async for e in stream]
    assert (stream.result.output, stream.result.stop_reason) == ("hi", "answered")
    assert stream.result.usage.requests == 1 and len(model.requests) == 1
    assert of_kind(events, "limit_reached") == []


async def test_a_limit_reached_before_retrieval_answers_without_it_in_rag_mode() -> None:
    """With one request allowed, RAG mode keeps it for the answer: no retrieval round, a
    ``limit_reached`` event, and the answer from the message alone (tools off)."""
    model = ScriptedModel(["From what I know: 42."])
    agent = Agent(model, tools=[lookup], tool_calling_mode="rag")
    stream = agent.stream("What is k?", limits=UsageLimits(requests=1))
    events = [e async for e in stream]
    result = stream.result
    assert (result.output, result.stop_reason) == ("From what I know: 42.", "requests_limit")
    assert [(e.limit, e.value) for e in of_kind(events, "limit_reached")] == [("requests", 1)]
    assert len(model.requests) == 1 and model.requests[0].tools == ()
    assert of_kind(events, "retrieval") == [] and result.usage.requests == 1


async def test_rag_within_its_limit_retrieves_then_answers() -> None:
    """Two requests allowed: the retrieval round and the answer both happen."""
    model = ScriptedModel([call_tools(("lookup", {"key": "k"})), "k is value of k."])
    agent = Agent(model, tools=[lookup], tool_calling_mode="rag")
    result = await agent.run("What is k?", limits=UsageLimits(requests=2))
    assert (result.output, result.stop_reason) == ("k is value of k.", "answered")
    assert result.usage.requests == 2


@pytest.mark.parametrize("flagged", [False, True])
async def test_the_report_guard_in_step_react_reads_no_earlier_turn(flagged: bool) -> None:
    """With ``use_minimal_context`` the report guard of a step-react run reads the current
    message only; a clean message goes on to the plan, a flagged one is blocked before it."""
    script: list[ScriptEntry] = [
        _verdict(flagged),
        no_plan(),
        call_tools(("agent_stop", {"result": "hi"})),
        summary("Greeted."),
        reply("Hello!"),
    ]
    model = ScriptedModel(script)
    agent = step_agent(
        model, enable_report=True, use_minimal_context=True, report_block_message=("Blocked.",)
    )
    stream = agent.stream("CURRENT-QUESTION", message_history=_history())
    events = [e async for e in stream]
    report = sent_text(model.requests[0].messages)
    assert "CURRENT-QUESTION" in report and "EARLIER" not in report
    assert len(of_kind(events, "report_raised")) == int(flagged)
    if flagged:
        assert stream.result.output == "Blocked." and len(model.requests) == 1
    else:
        assert stream.result.output == "Hello!" and model.remaining == 0


@pytest.mark.parametrize("minimal", [True, False])
async def test_the_report_guard_in_rag_mode_reads_earlier_turns_only_without_minimal_context(
    minimal: bool,
) -> None:
    """RAG's own requests never read earlier turns; its report guard reads them unless
    ``use_minimal_context`` is set, then goes on to retrieval and the answer."""
    model = ScriptedModel([_verdict(False), call_tools(("lookup", {"key": "k"})), "It is k."])
    agent = Agent(
        model,
        tools=[lookup],
        tool_calling_mode="rag",
        enable_report=True,
        use_minimal_context=minimal,
    )
    result = await agent.run("CURRENT-QUESTION", message_history=_history())
    assert result.output == "It is k."
    report, retrieval, answer = (sent_text(r.messages) for r in model.requests)
    assert "CURRENT-QUESTION" in report and ("EARLIER-QUESTION" in report) is (not minimal)
    for text in (retrieval, answer):
        assert "CURRENT-QUESTION" in text and "EARLIER" not in text


async def test_step_blocks_beyond_the_reasoning_depth_in_a_step_are_reported() -> None:
    """Inside a step, ``[Step]`` blocks past ``reasoning_depth`` are not recorded as
    events, and the reasoning tool's result tells the model how many were."""
    blocks = "\n".join(f"[Step {i}/4] [analyze] part {i}" for i in range(1, 5))
    script: list[ScriptEntry] = [
        no_plan(),
        call_tools(("think_and_reason", {"summary": blocks, "last_step": ""})),
        call_tools(("agent_stop", {"result": "done"})),
        summary("Done."),
        reply("done"),
    ]
    agent = step_agent(
        ScriptedModel(script),
        agent_thought_mode="reasoning-optional",
        structured_reasoning=True,
        reasoning_depth=2,
    )
    stream = agent.stream("q")
    events = [e async for e in stream]
    assert [b.step_index for b in of_kind(events, "structured_reasoning")] == [1, 2]
    recorded = [
        m.content
        for m in stream.result.messages
        if isinstance(m, ToolMessage) and m.name == "think_and_reason"
    ]
    assert len(recorded) == 1 and "reasoning_depth" in recorded[0] and "2 of 4" in recorded[0]
    assert stream.result.output == "done"
