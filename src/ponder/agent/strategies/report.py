"""The content report guard (``enable_report``): classify the user's message before work.

One structured-output call per run, with the strictness of ``report_invoke_level``
(low | medium | high). Checked: the user's message, and before it the agent's
instructions (unless ``report_exclude_system_prompt``) and the earlier conversation
(unless ``report_exclude_context`` or ``use_minimal_context``). When flagged, a
``ReportRaised`` event is emitted; with ``report_then_block`` (the default) the run then
answers with ``report_block_message`` (one of them, at random, when several are given)
and does nothing else, otherwise it goes on. The check holds no lock and shares nothing between
runs, so concurrent runs are never serialised. If the classifier's output cannot be read
after the retries, the message is let through.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, StrictBool

from ponder.agent.strategies.prompts import report_instruction
from ponder.agent.strategies.structured_ask import request_structured
from ponder.events import ReportRaised
from ponder.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    UserMessage,
)

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = [
    "REPORT_SCHEMA",
    "ReportVerdict",
    "block_message",
    "check_report",
    "report_messages",
]


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


def _earlier_conversation(ctx: RunContext) -> str:
    """The turns before this one as ``role: text`` lines (tool traffic left out)."""
    lines = []
    for message in ctx.state.ledger.messages:
        if isinstance(message, UserMessage) and message.content != ctx.state.prompt:
            lines.append(f"user: {message.content}")
        elif isinstance(message, AssistantMessage) and message.text:
            lines.append(f"assistant: {message.text}")
    return "\n".join(lines)


def report_messages(ctx: RunContext) -> list[Message]:
    """What the classifier reads: its instruction, the checked context, the message."""
    config = ctx.config
    checked = []
    if not config.report_exclude_system_prompt and ctx.instructions.strip():
        checked.append(f"<system_prompt>\n{ctx.instructions.strip()}\n</system_prompt>")
    # with minimal context the earlier turns are sent to no request, the guard's included
    skip = config.report_exclude_context or config.use_minimal_context
    context = "" if skip else _earlier_conversation(ctx)
    if context:
        checked.append(f"<context>\n{context}\n</context>")
    messages: list[Message] = [
        SystemMessage(content=report_instruction(config.report_invoke_level))
    ]
    if checked:
        note = "Check this too; the message to classify follows.\n" + "\n".join(checked)
        messages.append(UserMessage(content=note))
    messages.append(UserMessage(content=ctx.state.prompt))
    return messages


def block_message(choices: str | tuple[str, ...]) -> str:
    """The configured block message (one at random when several are configured)."""
    return choices if isinstance(choices, str) else random.choice(choices)


async def check_report(ctx: RunContext) -> bool:
    """Run the guard if enabled; True when it blocked and the run has its answer."""
    config, state = ctx.config, ctx.state
    if not config.enable_report or state.done:
        return False
    level = config.report_invoke_level
    messages = report_messages(ctx)
    verdict = await request_structured(ctx, "report", messages, REPORT_SCHEMA, ReportVerdict)
    if verdict is None or not verdict.flagged:
        return False
    await ctx.bus.emit(ReportRaised(level=level, category=verdict.category, reason=verdict.reason))
    if not config.report_then_block:
        return False
    answer = block_message(config.report_block_message)
    state.ledger.append(AssistantMessage(parts=(TextPart(text=answer),)))
    state.output, state.stop_reason, state.done = answer, "reported", True
    return True
