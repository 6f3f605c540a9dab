"""The content report guard at each strictness, in every workflow, never serialising runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.messages import SystemMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, StreamEvent, reply

from .scripts import of_kind, stop


def verdict(flagged: bool, category: str = "none", reason: str = "") -> ModelResponse:
    return reply(json.dumps({"flagged": flagged, "category": category, "reason": reason}))


@pytest.mark.parametrize("level", ["low", "medium", "high"])
async def test_a_flagged_message_is_reported_and_blocked_at_each_level(level: str) -> None:
    model = ScriptedModel([verdict(True, "harassment", "insults a person")])
    agent = Agent(
        model,
        enable_report=True,
        report_invoke_level=level,
        report_block_message="I won't help with that.",
    )
    events = [e async for e in agent.stream("write an insult about my neighbour")]
    assert len(model.requests) == 1
    request = model.requests[0]
    assert request.output is not None and request.output.name == "content_report"
    assert list(request.tools) == [] and request.tool_choice == "none"
    system = request.messages[0]
    assert isinstance(system, SystemMessage) and f"Strictness: {level}." in system.content
    assert request.messages[1].content == "write an insult about my neighbour"  # type: ignore[union-attr]
    raised = of_kind(events, "report_raised")
    assert [(e.level, e.category, e.reason) for e in raised] == [
        (level, "harassment", "insults a person")
    ]
    done = of_kind(events, "run_finished")[0]
    assert (done.output, done.stop_reason) == ("I won't help with that.", "reported")


async def test_the_levels_ask_with_different_strictness() -> None:
    prompts = []
    for level in ("low", "medium", "high"):
        model = ScriptedModel([verdict(False), reply("ok")])
        await Agent(
            model, enable_report=True, report_invoke_level=level, tool_calling_mode="none"
        ).run("hello")
        prompts.append(model.requests[0].messages[0].content)  # type: ignore[union-attr]
    assert len(set(prompts)) == 3
    assert "clearly severe" in prompts[0] and "strict" in prompts[2]


async def test_a_clean_message_goes_on_to_the_normal_run() -> None:
    model = ScriptedModel([verdict(False), stop("nothing to do"), reply("Hello!")])
    agent = Agent(model, enable_report=True, agent_thought_mode="chat", enable_thinking_tool=False)
    events = [e async for e in agent.stream("hello")]
    assert of_kind(events, "report_raised") == []
    assert [r.tool_choice for r in model.requests] == ["none", "required", "auto"]
    assert of_kind(events, "run_finished")[0].output == "Hello!"


async def test_disabled_report_makes_no_classifier_call() -> None:
    model = ScriptedModel([reply("hi")])
    await Agent(model, tool_calling_mode="none").run("hello")
    assert len(model.requests) == 1 and model.requests[0].output is None


async def test_malformed_verdicts_are_retried_then_let_through() -> None:
    model = ScriptedModel(["flagged!!", '{"flagged": "yes"}', reply("hi")])
    agent = Agent(model, enable_report=True, tool_calling_mode="none", structured_output_retries=1)
    events = [e async for e in agent.stream("hello")]
    assert "could not be used" in model.requests[1].messages[-1].content  # type: ignore[union-attr]
    assert of_kind(events, "report_raised") == []
    assert of_kind(events, "run_finished")[0].output == "hi"


@pytest.mark.parametrize(
    "setting", [{"agent_workflow": "step-react"}, {"tool_calling_mode": "none"}]
)
async def test_a_report_ends_every_workflow_without_further_calls(setting: dict[str, Any]) -> None:
    model = ScriptedModel([verdict(True, "violence", "threat")])
    result = await Agent(model, enable_report=True, **setting).run("threat")
    assert len(model.requests) == 1 and result.stop_reason == "reported"


class BarrierModel:
    """Answers classifier requests only once two of them are in flight at the same time."""

    name = "barrier"

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0
        self.both = asyncio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        if request.output is None:
            return reply("answer")
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight == 2:
            self.both.set()
        await asyncio.wait_for(self.both.wait(), timeout=10)
        self.in_flight -= 1
        return verdict(False)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        yield await self.request(request)


async def test_concurrent_runs_are_checked_concurrently() -> None:
    model = BarrierModel()
    agent = Agent(model, enable_report=True, tool_calling_mode="none")
    results = await asyncio.gather(agent.run("one"), agent.run("two"))
    assert model.peak == 2
    assert [r.output for r in results] == ["answer", "answer"]
