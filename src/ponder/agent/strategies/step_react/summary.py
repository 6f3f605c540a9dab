"""The summary of a finished step, by structured output ``{summary, outputs}``.

The summary is what later steps, compaction and the final answer see of the step. If the
model's output cannot be used after the retries, the step's ``agent_stop`` result (or
its last text) stands in for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ponder.agent.run.plan_state import PlanStep
from ponder.agent.strategies.compaction import context_messages
from ponder.agent.strategies.step_react.prompts import step_summary_instruction
from ponder.agent.strategies.structured_ask import request_structured
from ponder.messages import AssistantMessage, UserMessage

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["STEP_SUMMARY_SCHEMA", "StepSummary", "summarise_step"]


class StepSummary(BaseModel):
    """What a step achieved and the results later steps need."""

    summary: str
    outputs: list[str] = Field(default_factory=list)


STEP_SUMMARY_SCHEMA: dict[str, Any] = {
    "title": "step_summary",
    "description": "What the step achieved, and its concrete results.",
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "outputs": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["summary", "outputs"],
    "additionalProperties": False,
}


def _not_empty(value: StepSummary) -> list[str]:
    return [] if value.summary.strip() else ["the summary is empty"]


async def summarise_step(ctx: RunContext, step: PlanStep) -> tuple[str, list[str]]:
    """Ask for the step's summary; fall back to its stop result or last text."""
    state = ctx.state
    sent = context_messages(state, ctx.config.use_minimal_context)
    request = [*sent, UserMessage(content=step_summary_instruction(step))]
    found = await request_structured(
        ctx, "step_summary", request, STEP_SUMMARY_SCHEMA, StepSummary, _not_empty
    )
    if found is not None:
        return found.summary.strip(), [o.strip() for o in found.outputs if o.strip()]
    return _fallback(ctx, step), []


def _fallback(ctx: RunContext, step: PlanStep) -> str:
    state = ctx.state
    if state.step.stop_result:
        return state.step.stop_result
    for message in reversed(state.ledger.messages[state.step.ledger_start :]):
        if isinstance(message, AssistantMessage) and message.text.strip():
            return message.text.strip()
    return f"step {step.id!r} ended without a summary"
