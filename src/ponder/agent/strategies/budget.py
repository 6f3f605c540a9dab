"""The window a run's ledger must fit in, as estimated and as the provider states it.

The window is ``session_tokens_windows`` until the provider states a smaller one: a
request refused as too long (`ContextOverflowError`) teaches the run, and the process, the
model's window and how many prompt tokens the estimate misses (tool schemas, the chat
template) (`learn_from_refusal`). What the estimate misses is also read from each
response's counted prompt tokens (`calibrate`). `ponder.agent.strategies.compaction` cuts
the ledger to this budget; `ponder.agent.strategies.fitting` makes a refused request fit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ponder.agent.run.state import RunState
from ponder.agent.run.window import context_messages
from ponder.exceptions import ContextOverflowError
from ponder.models.capabilities import learn_window, learned_window
from ponder.models.tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["calibrate", "context_tokens", "learn_from_refusal", "window_tokens"]


def context_tokens(state: RunState) -> int:
    """The ledger's estimated prompt tokens, updated with only the messages added since."""
    track, messages = state.context, state.ledger.messages
    if track.estimated_upto > len(messages):
        track.estimated_tokens = track.estimated_upto = 0
    track.estimated_tokens += estimate_messages_tokens(messages[track.estimated_upto :])
    track.estimated_upto = len(messages)
    return track.estimated_tokens


def window_tokens(ctx: RunContext) -> int:
    """The estimated prompt tokens the ledger must fit in.

    ``session_tokens_windows``, or less once the provider stated a smaller window (in this
    run, or earlier in this process for the same model): that window less room for the
    completion (``max_tokens``, else an eighth of the window) and less what the estimate
    misses.
    """
    config, track = ctx.config, ctx.state.context
    window = config.session_tokens_windows
    stated = track.window or learned_window(ctx.model.name)
    if stated:
        reserve = config.max_tokens or stated // 8
        window = min(window, max(stated - reserve - track.overhead, stated // 4))
    return window


def calibrate(ctx: RunContext) -> None:
    """Learn what the estimate misses from the prompt tokens the provider last counted.

    Tool schemas and the chat template are not in the ledger's estimate; the latest request
    that sent the whole ledger says how many tokens they took (O(messages added since)).
    """
    caller, state = ctx.caller, ctx.state
    messages = state.ledger.messages
    if not caller.sent_tokens or caller.sent_upto > len(messages):
        return
    sent = context_tokens(state) - estimate_messages_tokens(messages[caller.sent_upto :])
    missed = caller.sent_tokens - sent
    if missed > state.context.overhead:
        state.context.overhead = missed


def learn_from_refusal(ctx: RunContext, exc: ContextOverflowError, *, again: bool) -> None:
    """Learn the window and what the estimate misses from a refusal for the window.

    ``again``: the request was refused after a shrink, so the estimate misses more than
    the refusal said: a quarter of the window more.
    """
    track = ctx.state.context
    sent = estimate_messages_tokens(context_messages(ctx.state, ctx.config.use_minimal_context))
    if exc.prompt_tokens:
        track.overhead = max(track.overhead, exc.prompt_tokens - sent, 0)
    if exc.limit:
        track.window = exc.limit
        learn_window(ctx.model.name, exc.limit)
    else:  # no number given: the window is smaller than what was sent
        track.window = min(track.window or sent + track.overhead, sent + track.overhead)
    if again and track.window:  # refused after a shrink: the estimate misses more than said
        track.overhead += track.window // 4
