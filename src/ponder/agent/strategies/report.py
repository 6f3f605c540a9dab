"""The content report guard (``enable_report``): classify the user's message before work.

One structured-output call per run, with the strictness of ``report_invoke_level``
(low | medium | high). When the message is flagged, a ``ReportRaised`` event is emitted
and the run answers with ``report_block_message`` without doing anything else. The check
holds no lock and shares nothing between runs, so concurrent runs are never serialised.
If the classifier's output cannot be read after the retries, the message is let through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, StrictBool

from ponder.agent.strategies.prompts import report_instruction
from ponder.agent.strategies.structured_ask import request_structured
from ponder.events import ReportRaised
from ponder.messages import AssistantMessage, Message, SystemMessage, TextPart, UserMessage

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["REPORT_SCHEMA", "ReportVerdict", "check_report"]


class ReportVerdict(BaseModel):
    """The classifier's verdict on one message."""

    flagged: StrictBool
    category: str = "none"
    reason: str = ""


REPORT_SCHEMA: dict[str, Any] = {
    "title": "content_report",
    "description": "Whether the user's message must be reported, and why.",
    "type": "object",
    "properties": {
        "flagged": {"type": "boolean"},
        "category": {"type": "string"},
        "reason": {"type": "string"},
    },
    "required": ["flagged", "category", "reason"],
    "additionalProperties": False,
}


async def check_report(ctx: RunContext) -> bool:
    """Run the guard if enabled; True when it fired and the run has its (blocked) answer."""
    config, state = ctx.config, ctx.state
    if not config.enable_report or state.done:
        return False
    level = config.report_invoke_level
    messages: list[Message] = [
        SystemMessage(content=report_instruction(level)),
        UserMessage(content=state.prompt),
    ]
    verdict = await request_structured(ctx, "report", messages, REPORT_SCHEMA, ReportVerdict)
    if verdict is None or not verdict.flagged:
        return False
    await ctx.emit(ReportRaised(level=level, category=verdict.category, reason=verdict.reason))
    answer = config.report_block_message
    state.ledger.append(AssistantMessage(parts=(TextPart(text=answer),)))
    state.output, state.stop_reason, state.done = answer, "reported", True
    return True
