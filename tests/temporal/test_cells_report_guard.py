"""The report guard's cells of the feature matrix on Temporal, in every workflow.

A guarded run on a worker is given an earlier turn; the guard reads it only without
``use_minimal_context``, as locally (see docs/guides/temporal.md).
"""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from ponder.agent import Agent
from ponder.messages import AssistantMessage, TextPart, UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.temporal import TemporalAgent, build_worker
from tests.agent import steps
from tests.agent.steps import no_plan, step_agent, summary
from tests.composition.support import sent_text

CLEAN = reply('{"flagged": false, "category": "none", "reason": ""}')


async def report_requests(
    client: Client, task_queue: str, script: list[ScriptEntry], **config: Any
) -> list[str]:
    """The texts of the requests a report-guarded run on a worker sends, with a history."""
    model = ScriptedModel(script)
    if config.get("agent_workflow") == "step-react":
        agent = step_agent(model, enable_report=True, **config)
    else:
        agent = Agent(model, enable_report=True, **config)
    history = [
        UserMessage(content="EARLIER-QUESTION"),
        AssistantMessage(parts=(TextPart(text="EARLIER-ANSWER"),)),
    ]
    async with build_worker(client, task_queue, agent):
        result = await TemporalAgent(client, task_queue).run(
            "CURRENT-QUESTION", message_history=history
        )
    assert result.status == "completed" and model.remaining == 0
    return [sent_text(r.messages) for r in model.requests]


@pytest.mark.parametrize("minimal", [False, True])
async def test_the_report_guard_reads_earlier_turns_only_without_minimal_context_on_temporal(
    client: Client, task_queue: str, minimal: bool
) -> None:
    texts = await report_requests(
        client, task_queue, [CLEAN, "hi"], tool_calling_mode="none", use_minimal_context=minimal
    )
    for text in texts:
        assert "CURRENT-QUESTION" in text and ("EARLIER-QUESTION" in text) is (not minimal)


@pytest.mark.parametrize("minimal", [False, True])
async def test_the_report_guard_in_react_reads_earlier_turns_only_without_minimal_context(
    client: Client, task_queue: str, minimal: bool
) -> None:
    script: list[ScriptEntry] = [CLEAN, call_tools(("agent_stop", {})), "Hello!"]
    report, *_ = await report_requests(
        client,
        task_queue,
        script,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        use_minimal_context=minimal,
    )
    assert "CURRENT-QUESTION" in report and ("EARLIER-QUESTION" in report) is (not minimal)


@pytest.mark.parametrize("minimal", [False, True])
async def test_the_report_guard_in_rag_mode_reads_earlier_turns_only_without_minimal_context(
    client: Client, task_queue: str, minimal: bool
) -> None:
    script: list[ScriptEntry] = [CLEAN, call_tools(("lookup", {"key": "k"})), "It is k."]
    report, *rest = await report_requests(
        client,
        task_queue,
        script,
        tools=[steps.lookup],
        tool_calling_mode="rag",
        use_minimal_context=minimal,
    )
    assert "CURRENT-QUESTION" in report and ("EARLIER-QUESTION" in report) is (not minimal)
    assert all("CURRENT-QUESTION" in t and "EARLIER" not in t for t in rest)


async def test_the_report_guard_in_step_react_reads_no_earlier_turn_on_temporal(
    client: Client, task_queue: str
) -> None:
    script: list[ScriptEntry] = [
        CLEAN,
        no_plan(),
        call_tools(("agent_stop", {"result": "hi"})),
        summary("Greeted."),
        reply("Hello!"),
    ]
    report, *_ = await report_requests(
        client, task_queue, script, agent_workflow="step-react", use_minimal_context=True
    )
    assert "CURRENT-QUESTION" in report and "EARLIER-QUESTION" not in report
