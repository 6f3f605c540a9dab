"""Acting on a model response: append it, run its tool calls, append one result per call.

Built-in calls are applied inline; every other call goes to the executor as one
concurrent batch, and results are appended in call order. With a store, the response is
checkpointed before any call runs and each result the moment its call finishes, so the
same code also finishes a batch that a crash or an approval interrupted:

- a call whose result was saved is never run again;
- a call awaiting approval runs, is edited or is refused as the decision says (see
  ``run.approval``, which also suspends the run on calls that wait);
- a call whose MCP server asked a question that no one could answer live is made again
  once the run is resumed with the answer (see ``run.elicitation``, which suspends the
  run on such questions);
- any other unanswered call was running at the crash: it runs again only if its tool is
  ``idempotent``, otherwise the model is told it was interrupted.

``agent_max_tool_calls`` is exact: calls past the limit get an error result, unrun. A
call to a known tool that the request did not offer gets an error result, unrun; call ids
that are missing or repeated within a response are made unique before it is appended.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from typing import TYPE_CHECKING, Any

from ponder.agent.run.approval import approval_decision, approval_settled, hold_for_approval
from ponder.agent.run.context import NOTHING
from ponder.agent.run.elicitation import hold_for_input
from ponder.agent.run.link import is_held
from ponder.agent.run.tool_reports import report_tool
from ponder.events import ToolCallStarted
from ponder.exceptions import LedgerError
from ponder.jsontext import json_encoder
from ponder.messages import AssistantMessage, Ledger, ToolCallPart, ToolMessage
from ponder.models.base import ModelResponse
from ponder.tools.builtin import CONTROL_TOOLS
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext
    from ponder.agent.strategies.builtins import Builtins

__all__ = ["act", "answer_open_calls", "call_signature", "unique_call_ids"]

INTERRUPTED = (
    "interrupted: the run stopped while this call was running and its tool is not marked "
    "idempotent, so it was not run again. Check its effect before calling it again."
)

_CANONICAL = json_encoder(sort_keys=True)


def call_signature(call: ToolCallPart) -> str:
    """``name(canonical-json-args)``: equal for equal calls, whatever the key order."""
    if call.args is not None:
        return f"{call.name}({_CANONICAL(call.args)})"
    return f"{call.name}<{call.arguments.strip()}>"


async def act(
    ctx: RunContext, response: ModelResponse, builtins: Builtins, round_no: int
) -> tuple[ToolCallPart, ...]:
    """Append ``response`` and answer each of its tool calls; return the calls."""
    response = unique_call_ids(response)
    ctx.state.ledger.append(response.to_message())
    if not response.tool_calls:
        return ()
    if ctx.checkpointer is not None:
        await ctx.checkpointer.checkpoint()
    return await answer_open_calls(ctx, builtins, round_no)


async def answer_open_calls(
    ctx: RunContext, builtins: Builtins, round_no: int
) -> tuple[ToolCallPart, ...]:
    """Answer the latest assistant message's unanswered calls; return all its calls."""
    state = ctx.state
    message = _latest_assistant(state.ledger)
    open_ids = state.ledger.open_calls
    calls = message.tool_calls
    answers: dict[str, ToolMessage] = {}
    checkpointer = ctx.checkpointer
    for call in calls:
        if call.id not in open_ids:
            continue
        saved = checkpointer.saved(call.id) if checkpointer is not None else None
        if saved is not None:
            answers[call.id] = saved
        elif not _is_offered(ctx, builtins, call.name):
            answers[call.id] = _not_offered(state.offered_tools or (), call).to_message(call)
        elif call.name in builtins:
            answers[call.id] = (await builtins.handle(call, round_no)).to_message(call)
    pending = _unanswered(calls, open_ids, answers)
    runnable = _settle_pending(ctx, pending, answers)
    children = await _run(ctx, runnable, answers)
    if not _nothing_waits(ctx, pending, answers):
        await _hold_if_waiting(ctx, pending, runnable, answers, children)
    _append_answers(ctx, calls, answers)
    return calls


def _append_answers(
    ctx: RunContext, calls: tuple[ToolCallPart, ...], answers: dict[str, ToolMessage]
) -> None:
    """Append the batch's answers in call order; saved results are in the ledger now."""
    if ctx.resumed is not None and ctx.resumed.interrupted:
        ctx.resumed.interrupted = NOTHING
    ledger = ctx.state.ledger
    for call in calls:
        if call.id in answers:
            ledger.append(answers[call.id])
    if ctx.checkpointer is not None:
        ctx.checkpointer.forget(answers)


def _unanswered(
    calls: tuple[ToolCallPart, ...], open_ids: Collection[str], answers: dict[str, ToolMessage]
) -> list[ToolCallPart]:
    """The open calls still without an answer.

    A helper, not a comprehension in `answer_open_calls`: the variables a comprehension
    reads become cells that the waiting caller's frame would keep for the whole batch.
    """
    return [c for c in calls if c.id in open_ids and c.id not in answers]


def _nothing_waits(
    ctx: RunContext, pending: list[ToolCallPart], answers: dict[str, ToolMessage]
) -> bool:
    """True, the waiting marks cleared, when every call is answered and none asked a question.

    The usual batch: a test, where `_hold_if_waiting` is a coroutine.
    """
    if ctx.inputs is not None:
        return False
    for call in pending:
        if call.id not in answers:
            return False
    _settled(ctx)
    return True


def _settled(ctx: RunContext) -> None:
    """Nothing waits for a decision or an answer any more."""
    approval_settled(ctx)
    if ctx.state.awaiting_input:
        ctx.state.awaiting_input = ()


def _latest_assistant(ledger: Ledger) -> AssistantMessage:
    """The ledger's latest assistant message (its index is kept: no scan)."""
    message = ledger[ledger.assistant_index] if ledger.assistant_index >= 0 else None
    if not isinstance(message, AssistantMessage):
        raise LedgerError("no assistant message whose calls could be answered")
    return message


async def _hold_if_waiting(
    ctx: RunContext,
    pending: list[ToolCallPart],
    ran: list[ToolCallPart],
    answers: dict[str, ToolMessage],
    children: dict[str, Any],
) -> None:
    """Suspend on the questions the calls asked, or on the calls awaiting a decision.

    ``children`` holds the data of the sub-agent calls whose child waits, by call id.
    """
    asked = _asked(ctx, ran, answers)
    waiting = [c for c in pending if c.id not in answers and c not in asked]
    if asked:
        await hold_for_input(ctx, asked, answers, waiting)
    if waiting:
        await hold_for_approval(ctx, waiting, answers, children)
    _settled(ctx)


def _asked(
    ctx: RunContext, ran: list[ToolCallPart], answers: dict[str, ToolMessage]
) -> list[ToolCallPart]:
    """The calls whose server asked a question that waits: their results are dropped."""
    held = ctx.inputs.held if ctx.inputs is not None else {}
    asked = [c for c in ran if c.id in held]
    for call in asked:
        answers.pop(call.id, None)
    return asked


def unique_call_ids(response: ModelResponse) -> ModelResponse:
    """``response`` with every tool call id present and unique (servers reuse or omit them)."""
    seen: set[str] = set()
    for part in response.parts:  # the common case: every id present and unique
        if isinstance(part, ToolCallPart):
            if not part.id or part.id in seen:
                break
            seen.add(part.id)
    else:
        return response
    seen.clear()
    parts = list(response.parts)
    for index, part in enumerate(parts):
        if not isinstance(part, ToolCallPart):
            continue
        if not part.id or part.id in seen:
            new_id, n = part.id or "call", index
            while f"{new_id}_{n}" in seen:
                n += 1
            parts[index] = part = part.model_copy(update={"id": f"{new_id}_{n}"})
        seen.add(part.id)
    return response.model_copy(update={"parts": tuple(parts)})  # some id was renumbered


def _is_offered(ctx: RunContext, builtins: Builtins, name: str) -> bool:
    """False for a known tool the latest request did not offer (unknown names go on)."""
    offered = ctx.state.offered_tools
    if offered is None or name in offered:
        return True
    return name not in builtins and ctx.tools.get(name) is None


def _not_offered(offered: tuple[str, ...], call: ToolCallPart) -> ToolResult:
    names = ", ".join(offered) or "none"
    return ToolResult.fail(
        f"tool {call.name!r} is not available in this request, so it was not run. "
        f"Available now: {names}."
    )


def _settle_pending(
    ctx: RunContext, pending: list[ToolCallPart], answers: dict[str, ToolMessage]
) -> list[ToolCallPart]:
    """Decide what runs now: limits, approvals and interrupted calls are answered here."""
    actions = [c for c in pending if c.name not in CONTROL_TOOLS]
    allowed, refused = _split_by_limit(ctx, actions)
    for call in refused:
        answers[call.id] = ToolResult.fail(
            f"not executed: the limit of {ctx.config.agent_max_tool_calls} tool calls was reached"
        ).to_message(call)
    runnable: list[ToolCallPart] = []
    for call in [*allowed, *(c for c in pending if c.name in CONTROL_TOOLS)]:
        tool = ctx.tools.get(call.name)
        if tool is not None and tool.requires_approval:
            decided = approval_decision(ctx, call)
            if isinstance(decided, ToolMessage):
                answers[call.id] = decided
            elif decided is not None:
                runnable.append(decided)
        elif call.id in ctx.interrupted and not (tool is not None and tool.idempotent):
            answers[call.id] = ToolResult.fail(INTERRUPTED).to_message(call)
        else:
            runnable.append(call)
    return runnable


def _split_by_limit(
    ctx: RunContext, calls: list[ToolCallPart]
) -> tuple[list[ToolCallPart], list[ToolCallPart]]:
    limit = ctx.config.agent_max_tool_calls
    if limit is None:
        return calls, []
    remaining = max(0, limit - ctx.state.tool_calls)
    return calls[:remaining], calls[remaining:]


async def _run(
    ctx: RunContext, calls: list[ToolCallPart], answers: dict[str, ToolMessage]
) -> dict[str, Any]:
    """Run ``calls`` into ``answers``; return the suspensions of the sub-agents that wait."""
    children: dict[str, Any] = {}
    if not calls:
        return children
    heard = ctx.bus.heard
    for call in calls:
        if not heard:
            ctx.bus.skip()
            continue
        arguments: Any = call.args if call.args is not None else call.arguments
        ctx.bus.emit_now(ToolCallStarted(call_id=call.id, name=call.name, arguments=arguments))
    outcomes = await ctx.executor.run_batch(
        calls,
        run_id=ctx.state.run_id,
        states=ctx.state.tool_states,
        deps=ctx.deps,
        on_finish=partial(report_tool, ctx),
        intercept=ctx.tap.tool if ctx.tap is not None else None,
        run=ctx,  # sub-agents called by these tools nest under this run
    )
    await ctx.bus.flush()
    actions = 0
    for call in calls:
        if call.name not in CONTROL_TOOLS:
            actions += 1
    ctx.state.tool_calls += actions
    for outcome in outcomes:
        if is_held(outcome.result):  # a sub-agent that waits: the run waits with it
            children[outcome.call.id] = outcome.result.data
        else:
            answers[outcome.call.id] = outcome.message
    return children
