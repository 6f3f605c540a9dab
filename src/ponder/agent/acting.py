"""Acting on a model response: append it, run its tool calls, append one result per call.

Built-in calls are applied inline; every other call goes to the executor as one
concurrent batch. Results are appended in call order. ``agent_max_tool_calls`` is exact:
calls past the limit are answered with an error result, not executed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ponder.events import (
    ThinkingRecorded,
    TodoUpdated,
    ToolCallFailed,
    ToolCallFinished,
    ToolCallStarted,
)
from ponder.messages import ToolCallPart, ToolMessage
from ponder.models.base import ModelResponse
from ponder.tools.builtin import CONTROL_TOOLS
from ponder.tools.executor import ToolOutcome
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.builtins import Builtins
    from ponder.agent.run import RunContext

__all__ = ["act", "call_signature"]


def call_signature(call: ToolCallPart) -> str:
    """``name(canonical-json-args)``: equal for equal calls, whatever the key order."""
    if call.args is not None:
        return f"{call.name}({json.dumps(call.args, sort_keys=True, ensure_ascii=False)})"
    return f"{call.name}<{call.arguments.strip()}>"


def _report(ctx: RunContext, outcome: ToolOutcome) -> None:
    call, result = outcome.call, outcome.result
    if outcome.status == "ok":
        ctx.emit_now(
            ToolCallFinished(
                call_id=call.id,
                name=call.name,
                output=result.output,
                data=result.data,
                duration=outcome.duration,
            )
        )
    else:
        ctx.emit_now(
            ToolCallFailed(
                call_id=call.id,
                name=call.name,
                error=result.error or result.output,
                status=outcome.status,
                duration=outcome.duration,
            )
        )
    data = result.data
    if result.success and isinstance(data, dict):
        display = data.get("display_type")
        if display == "thinking":
            ctx.emit_now(ThinkingRecorded(call_id=call.id, data=data))
        elif display == "plan":
            ctx.emit_now(TodoUpdated(call_id=call.id, data=data))


def _split_by_limit(
    ctx: RunContext, calls: list[ToolCallPart]
) -> tuple[list[ToolCallPart], list[ToolCallPart]]:
    limit = ctx.config.agent_max_tool_calls
    if limit is None:
        return calls, []
    remaining = max(0, limit - ctx.state.tool_calls)
    return calls[:remaining], calls[remaining:]


async def act(
    ctx: RunContext, response: ModelResponse, builtins: Builtins, round_no: int
) -> tuple[ToolCallPart, ...]:
    """Append ``response`` and answer each of its tool calls; return the calls."""
    state = ctx.state
    state.ledger.append(response.to_message())
    calls = response.tool_calls
    if not calls:
        return calls
    answers: dict[str, ToolMessage] = {}
    for call in calls:
        if call.name in builtins:
            answers[call.id] = (await builtins.handle(call, round_no)).to_message(call)
    actions = [c for c in calls if c.id not in answers]
    allowed, refused = _split_by_limit(ctx, [c for c in actions if c.name not in CONTROL_TOOLS])
    allowed += [c for c in actions if c.name in CONTROL_TOOLS]
    for call in refused:
        limit = ctx.config.agent_max_tool_calls
        answers[call.id] = ToolResult.fail(
            f"not executed: the limit of {limit} tool calls was reached"
        ).to_message(call)
    if allowed:
        await _execute(ctx, allowed, answers)
    for call in calls:
        state.ledger.append(answers[call.id])
    return calls


async def _execute(
    ctx: RunContext, calls: list[ToolCallPart], answers: dict[str, ToolMessage]
) -> None:
    state = ctx.state
    for call in calls:
        ctx.emit_now(
            ToolCallStarted(
                call_id=call.id,
                name=call.name,
                arguments=call.args if call.args is not None else call.arguments,
            )
        )
    outcomes = await ctx.executor.run_batch(
        calls,
        run_id=state.run_id,
        states=state.tool_states,
        deps=ctx.deps,
        on_finish=lambda outcome: _report(ctx, outcome),
    )
    await ctx.flush()
    state.tool_calls += len(calls)
    for outcome in outcomes:
        answers[outcome.call.id] = outcome.message
