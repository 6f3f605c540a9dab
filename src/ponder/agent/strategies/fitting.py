"""A request the provider refused for the window, made to fit; or the refusal read right.

`request_in_window` sends a request for the ledger; on a `ContextOverflowError` the run
learns the window (`ponder.agent.strategies.budget`), `shrink`s the ledger and sends
again (`refit`). A refusal that counts exactly the window for a prompt estimated at under
half of it is a reply that generated past the window (the stock llama-cpp-python server
generates automatic tool calls without ``max_tokens`` and fails on the next call with the
grown prompt): `prompt_fits` says so, and the prompt is neither cut nor sent again, since
the same prompt would run away the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ponder.agent.run.window import context_messages
from ponder.agent.strategies.budget import learn_from_refusal
from ponder.agent.strategies.compaction import compaction_on, shrink, trim_results
from ponder.exceptions import ContextOverflowError
from ponder.models.base import ModelResponse, OutputSchema, ToolChoice, ToolDefinition
from ponder.models.tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["prompt_fits", "refit", "request_in_window"]


_SHRINKS = 3
"""How often one request is shrunk and sent again before its overflow stands."""


async def request_in_window(
    ctx: RunContext,
    purpose: str,
    tools: Sequence[ToolDefinition] = (),
    tool_choice: ToolChoice = "auto",
    *,
    output: OutputSchema | None = None,
) -> ModelResponse:
    """`RunContext.caller`'s request for the ledger, made to fit when the provider says no.

    On a `ContextOverflowError` the run learns the window (`budget.learn_from_refusal`),
    `shrink`s the ledger and sends again; a prompt refused again means the estimate was too
    kind, so what it misses is raised by a quarter of the window before the next shrink (up
    to three times). With nothing to cut, or compaction off, the error stands.
    """
    try:
        return await ctx.caller.request(purpose, tools, tool_choice, output=output)
    except ContextOverflowError as exc:
        return await refit(ctx, exc, purpose, tools, tool_choice, output=output)


async def refit(
    ctx: RunContext,
    exc: ContextOverflowError,
    purpose: str,
    tools: Sequence[ToolDefinition] = (),
    tool_choice: ToolChoice = "auto",
    *,
    output: OutputSchema | None = None,
) -> ModelResponse:
    """`request_in_window` after its first request was refused with ``exc``.

    Callers on the hot path send the first request themselves and come here only on an
    overflow: a run waiting on its model keeps one coroutine level fewer.
    """
    for attempt in range(_SHRINKS):
        if prompt_fits(ctx, exc):
            if exc.limit:
                ctx.state.context.window = exc.limit
            raise exc
        learn_from_refusal(ctx, exc, again=attempt > 0)
        if not await shrink(ctx) and not await _trim_to_scale(ctx, exc):
            raise exc
        try:
            return await ctx.caller.request(purpose, tools, tool_choice, output=output)
        except ContextOverflowError as again:
            exc = again
    raise exc


def prompt_fits(ctx: RunContext, exc: ContextOverflowError) -> bool:
    """True when the refusal was for a reply that generated past the window, not the prompt.

    The provider counted exactly the window (where a generation that filled it stops) while
    the prompt, as estimated with what the run learned the estimate misses, is under half
    of it. A tokenizer that splits text finer than the estimate counts more than the
    window, not the window itself.
    """
    if not exc.limit or exc.prompt_tokens != exc.limit:
        return False
    state = ctx.state
    sent = estimate_messages_tokens(context_messages(state, ctx.config.use_minimal_context))
    return 2 * (sent + state.context.overhead) < exc.limit


async def _trim_to_scale(ctx: RunContext, exc: ContextOverflowError) -> bool:
    """Cut tool results and arguments by the ratio the provider counted; False if none.

    For when the estimate says the ledger fits and the provider said no: the estimate can
    miss in proportion (text a tokenizer splits finer than four characters a token, such as
    accented or escaped text), which the fixed overhead of `budget.window_tokens` cannot
    express.
    """
    config, state = ctx.config, ctx.state
    if not compaction_on(config):
        return False
    sent = estimate_messages_tokens(context_messages(state, config.use_minimal_context))
    window = state.context.window or exc.limit
    if state.ledger.open_calls or not exc.prompt_tokens or not sent or not window:
        return False
    ratio = exc.prompt_tokens / sent
    reserve = config.max_tokens or window // 8
    return ratio > 1 and await trim_results(ctx, budget=int((window - reserve) / ratio))
