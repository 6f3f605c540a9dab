"""Reporting a finished tool call: its events, and its result saved to the store."""

from __future__ import annotations

from ponder.agent.run.context import RunContext
from ponder.agent.run.link import is_held
from ponder.events import Thinking, Todo, ToolCallFailed, ToolCallFinished
from ponder.tools.executor import ToolOutcome

__all__ = ["EVENT_TEXT_LIMIT", "report_tool"]

EVENT_TEXT_LIMIT = 20_000
"""At most this much of a tool's error text goes into its event (the ledger keeps it all)."""


async def report_tool(ctx: RunContext, outcome: ToolOutcome) -> None:
    """Report a finished call (events) and save its result (store)."""
    call, result = outcome.call, outcome.result
    if ctx.inputs is not None and call.id in ctx.inputs.held:
        return  # the call asked a question: its result is dropped, the run suspends
    if is_held(result):
        return  # not finished: the sub-agent waits (see ``subagent``)
    if not ctx.bus.heard:
        ctx.bus.skip()
    elif outcome.status == "ok":
        ctx.bus.emit_now(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                output=outcome.message.content,  # capped like the model's copy
                data=result.data,
                duration=outcome.duration,
            )
        )
    else:
        ctx.bus.emit_now(
            ToolCallFailed(
                call_id=call.id,
                name=call.name,
                error=(result.error or outcome.message.content)[:EVENT_TEXT_LIMIT],
                status=outcome.status,
                duration=outcome.duration,
            )
        )
    if result.success and result.display is not None and isinstance(result.data, dict):
        if result.display == "thinking":
            ctx.bus.emit_now(Thinking(call_id=call.id, data=result.data))
        else:
            ctx.bus.emit_now(Todo(call_id=call.id, data=result.data))
    if ctx.checkpointer is not None:
        await ctx.checkpointer.record(outcome)
