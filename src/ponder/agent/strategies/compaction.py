"""Context compaction: keep a long run's ledger inside the model's window.

Modes (``context_strategy``): ``compact`` summarises the older prefix with one model call,
``slide`` drops it, ``none`` leaves the ledger alone. Compaction triggers when the ledger
holds more than ``memory_length_limit`` messages or its estimated prompt tokens exceed
``compaction_trigger_ratio`` × ``session_tokens_windows`` (``memory_length_limit = 0``
turns the message-count trigger off). The kept tail is about ``slide_target_ratio`` × the
window (half the trigger when unset). Cuts fall only before a user or
assistant message, so a tool call never loses its result; the system prompt, the turn's
prompt and the most recent exchange (with any provider reasoning) are always kept. The
summary is asked for, and cut to, ``compaction_max_tokens`` tokens (0: the config's
``max_tokens``; neither set: no limit). The new ledger goes through ``Ledger.replace``,
which re-checks the pairing.

The step workflow has its own form, `compact_step_if_needed`, after every round: finished
steps' messages are replaced by their summaries (`compact_steps`), then, when a step's own
rounds fill the window, that step's older rounds are summarised or dropped like the prefix
above (`compact_in_step`), its opening and latest exchange kept.

The budget is `ponder.agent.strategies.budget`'s window; a request refused for the window
is made to fit in `ponder.agent.strategies.fitting`, which cuts with `shrink` and, once
compaction has nothing more to cut, `trim_results`: a tool result larger than the window
alone is cut to fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from ponder.agent.run.window import context_messages, minimal_messages, prompt_index
from ponder.agent.strategies.budget import calibrate, context_tokens, window_tokens
from ponder.agent.strategies.prompts import STEP_SUMMARY_HEADER, compaction_instruction
from ponder.config import AgentConfig
from ponder.events import Compaction
from ponder.exceptions import ModelError
from ponder.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.models.tokens import estimate_messages_tokens, estimate_tokens

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = [
    "compact",
    "compact_if_needed",
    "compact_in_step",
    "compact_step_if_needed",
    "compact_steps",
    "compaction_on",
    "context_messages",
    "is_over_window",
    "minimal_messages",
    "shrink",
    "summary_budget",
    "trim_results",
]


def _trigger_tokens(ctx: RunContext) -> int:
    return int(ctx.config.compaction_trigger_ratio * window_tokens(ctx))


def is_over_window(ctx: RunContext) -> bool:
    """True when the ledger is past the message limit or the token trigger."""
    state = ctx.state
    limit = ctx.config.memory_length_limit  # 0: no message-count trigger
    too_long = limit > 0 and len(state.ledger) > limit
    return too_long or context_tokens(state) >= _trigger_tokens(ctx)


async def compact_if_needed(ctx: RunContext) -> bool:
    """Compact the ledger with the configured mode if it is over its limits.

    When what is left still exceeds the window (a tool result larger than the window
    alone), the longest tool results are cut to fit (`trim_results`).
    """
    mode = ctx.config.context_strategy
    if mode == "none" or not _due(ctx):
        return False
    compacted = await compact(ctx, mode)
    if context_tokens(ctx.state) > window_tokens(ctx):
        return await trim_results(ctx) or compacted
    return compacted


def compaction_on(config: AgentConfig) -> bool:
    """Whether the run may cut its ledger to fit the window (``enable_compaction``, a mode)."""
    return config.enable_compaction and config.context_strategy != "none"


def _due(ctx: RunContext) -> bool:
    """True when compaction is on, no call waits for its result and the ledger is over."""
    if not compaction_on(ctx.config):
        return False
    calibrate(ctx)
    return not ctx.state.ledger.open_calls and is_over_window(ctx)


async def shrink(ctx: RunContext) -> bool:
    """Compact now, whatever the triggers say; False if compaction is off or finds nothing.

    The step workflow compacts its finished steps, then the running step's older rounds
    (`compact_step_if_needed`).
    """
    config, state = ctx.config, ctx.state
    mode = config.context_strategy
    if not config.enable_compaction or mode == "none":  # `compaction_on`, narrowing the mode
        return False
    if state.ledger.open_calls:
        return False
    if state.step.steps_begin is not None:
        return await _fit_steps(ctx)
    return await compact(ctx, mode) or await trim_results(ctx)


_TRIM_FLOOR = 400
"""A tool result is never cut below this many characters."""


async def trim_results(ctx: RunContext, *, budget: int | None = None) -> bool:
    """Cut the longest tool results and call arguments until the ledger fits; False if none.

    What is left once compaction has nothing more to cut (the system prompt, the turn's
    prompt, the latest exchange) can still be too long when a tool returned more than the
    window holds, or a model wrote a runaway argument. The longest piece is halved, then the
    next longest, each keeping its beginning and a note of how much was cut, until the
    estimate fits ``budget`` (the window's, by default) or every piece is down to
    `_TRIM_FLOOR` characters. A cut argument stays a JSON object (its long strings cut); a
    result's ``data`` (what a UI shows) stays whole.
    """
    state = ctx.state
    before = list(state.ledger.messages)
    messages = list(before)
    budget = window_tokens(ctx) if budget is None else budget
    total = estimate_messages_tokens(messages)
    whole = _pieces(messages)
    kept = {key: len(text) for key, text in whole.items()}
    while total > budget:
        longest = max(kept, key=kept.__getitem__, default=None)
        if longest is None or kept[longest] <= _TRIM_FLOOR:
            break
        kept[longest] = max(kept[longest] // 2, _TRIM_FLOOR)
        index = longest[0]
        old = messages[index]
        messages[index] = _with_cuts(old, whole, kept, index)
        total += estimate_messages_tokens([messages[index]]) - estimate_messages_tokens([old])
    if messages == before:
        return False
    await _replace(ctx, before, messages, "trim")
    return True


_Piece = tuple[int, str, str]
"""A cuttable text: (message index, call id or "" for a result, argument name or "")."""


def _pieces(messages: Sequence[Message]) -> dict[_Piece, str]:
    found: dict[_Piece, str] = {}
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            found[(index, "", "")] = message.content
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                if call.args is None:  # not JSON (a runaway cut off mid-way): the raw text
                    found[(index, call.id, "")] = call.arguments
                    continue
                for name, value in call.args.items():
                    if isinstance(value, str):
                        found[(index, call.id, name)] = value
    return found


def _with_cuts(
    message: Message, whole: dict[_Piece, str], kept: dict[_Piece, int], index: int
) -> Message:
    """``message`` with each of its pieces cut to what ``kept`` allows."""
    if isinstance(message, ToolMessage):
        key = (index, "", "")
        return message.model_copy(update={"content": _cut(whole[key], kept[key])})
    if not isinstance(message, AssistantMessage):
        return message
    parts = []
    for part in message.parts:
        if isinstance(part, ToolCallPart):
            part = _cut_call(part, whole, kept, index)
        parts.append(part)
    return message.model_copy(update={"parts": tuple(parts)})


def _cut(text: str, keep: int) -> str:
    if keep >= len(text):
        return text
    note = f"[{len(text) - keep} of {len(text)} characters cut to fit the model's context window]"
    return f"{text[:keep].rstrip()}\n… {note}"


def _cut_call(
    call: ToolCallPart, whole: dict[_Piece, str], kept: dict[_Piece, int], index: int
) -> ToolCallPart:
    if call.args is None:
        key = (index, call.id, "")
        if key not in kept:
            return call
        return call.model_copy(update={"arguments": _cut(whole[key], kept[key])})
    args = dict(call.args)
    for name in call.args:
        key = (index, call.id, name)
        if key in kept:
            args[name] = _cut(whole[key], kept[key])
    if args == call.args:
        return call
    return ToolCallPart.from_args(call.id, call.name, args).model_copy(
        update={"provider_id": call.provider_id}
    )


def _cut_index(ctx: RunContext, messages: Sequence[Message]) -> int:
    """Where the kept tail begins: about half the trigger, never inside a call's results."""
    config = ctx.config
    ratio = config.slide_target_ratio
    budget = int(ratio * window_tokens(ctx)) if ratio else _trigger_tokens(ctx) // 2
    limit = config.memory_length_limit
    keep_at_most = max(1, limit // 2) if limit else len(messages)
    cut, used = len(messages), 0
    while cut > 0 and len(messages) - cut < keep_at_most:
        used += estimate_messages_tokens(messages[cut - 1 : cut])
        if used > budget and len(messages) - cut >= 1:
            break
        cut -= 1
    last_unit = len(messages) - 1
    while last_unit > 0 and isinstance(messages[last_unit], ToolMessage):
        last_unit -= 1
    cut = min(cut, last_unit)
    while cut > 0 and isinstance(messages[cut], ToolMessage):
        cut -= 1
    return cut


async def compact(ctx: RunContext, mode: Literal["compact", "slide"], *, floor: int = 0) -> bool:
    """Summarise (``compact``) or drop (``slide``) the older prefix; False if nothing to cut.

    Nothing before ``floor`` is cut (the step workflow's finished steps and the running
    step's opening).
    """
    state = ctx.state
    messages = list(state.ledger.messages)
    head = floor
    while head < len(messages) and isinstance(messages[head], SystemMessage):
        head += 1
    cut = _cut_index(ctx, messages)
    prompt = prompt_index(messages, state.prompt)
    kept_prompt = [messages[prompt]] if head <= prompt < cut else []
    dropped = [m for i, m in enumerate(messages[head:cut], head) if i != prompt]
    if cut <= head or not dropped:
        return False
    summary = await _summarise(ctx, messages[:cut]) if mode == "compact" else ""
    if summary:
        note = UserMessage(content=f"[Summary of the earlier conversation]\n{summary}")
        middle: list[Message] = [*kept_prompt, note]
    else:
        mode, middle = "slide", kept_prompt
    fresh = [*messages[:head], *middle, *messages[cut:]]
    await _replace(ctx, messages, fresh, mode)
    return True


def summary_budget(config: AgentConfig) -> int | None:
    """The summary's size in tokens: ``compaction_max_tokens``, or when 0 ``max_tokens``."""
    return config.compaction_max_tokens or config.max_tokens


async def _summarise(ctx: RunContext, prefix: list[Message]) -> str:
    budget = summary_budget(ctx.config)
    request = [*prefix, UserMessage(content=compaction_instruction(budget))]
    try:
        response = await ctx.caller.request("compaction", (), "none", messages=request)
    except ModelError:
        return ""
    return _clip(response.text.strip(), budget)


def _clip(text: str, budget: int | None) -> str:
    """``text`` cut to at most ``budget`` estimated tokens, marked with an ellipsis if cut."""
    if budget is None or estimate_tokens(text) <= budget:
        return text
    low, high = 0, len(text)  # the longest prefix within the budget, less one for the mark
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= budget - 1:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip() + " …"


async def _replace(
    ctx: RunContext,
    before: list[Message],
    after: list[Message],
    mode: Literal["compact", "slide", "steps", "trim"],
) -> None:
    state = ctx.state
    state.ledger.replace(after)
    ctx.caller.sent_upto = ctx.caller.sent_tokens = 0  # its positions are gone
    tokens_after = estimate_messages_tokens(after)
    state.context.estimated_tokens, state.context.estimated_upto = tokens_after, len(after)
    await ctx.bus.emit(
        Compaction(
            mode=mode, tokens_before=estimate_messages_tokens(before), tokens_after=tokens_after
        )
    )


async def compact_steps(ctx: RunContext) -> bool:
    """Replace the finished steps' messages with one message holding their summaries.

    A running step's own messages stay after that message (its start moves with them).
    """
    state = ctx.state
    step = state.step
    begin, messages = step.steps_begin, list(state.ledger.messages)
    if begin is None or begin >= len(messages) or state.ledger.open_calls:
        return False
    lines = []
    for planned in step.plan:
        if planned.status in ("done", "skipped"):
            outputs = f" Outputs: {'; '.join(planned.outputs)}" if planned.outputs else ""
            lines.append(f"- {planned.id} ({planned.status}): {planned.summary}{outputs}")
    if not lines:
        return False
    running = step.current_id is not None and begin <= step.ledger_start <= len(messages)
    end = step.ledger_start if running else len(messages)
    note = UserMessage(content=STEP_SUMMARY_HEADER + "\n" + "\n".join(lines))
    if messages[begin:end] == [note]:
        return False  # already in their summaries
    if running:
        step.ledger_start = begin + 1
    else:
        step.injected_status = ""
    await _replace(ctx, messages, [*messages[:begin], note, *messages[end:]], "steps")
    return True


async def compact_in_step(ctx: RunContext) -> bool:
    """Summarise or drop the running step's older rounds; False if there is nothing to cut.

    The step's opening (the plan status it was started with) and its latest exchange stay.
    """
    state = ctx.state
    step, messages = state.step, state.ledger.messages
    if step.current_id is None or step.ledger_start > len(messages):
        return False
    mode = ctx.config.context_strategy
    if mode == "none":
        return False
    floor = step.ledger_start
    while floor < len(messages) and isinstance(messages[floor], UserMessage):
        floor += 1
    return await compact(ctx, mode, floor=floor)


async def compact_step_if_needed(ctx: RunContext) -> bool:
    """The step workflow's `compact_if_needed`, after each round of a step.

    Finished steps go into their summaries first; when the ledger is still over its
    triggers (a step whose rounds fill the window alone), the running step's older rounds
    are summarised or dropped; a tool result larger than the window is cut last.
    """
    return await _fit_steps(ctx) if _due(ctx) else False


async def _fit_steps(ctx: RunContext) -> bool:
    changed = await compact_steps(ctx)
    if not changed or is_over_window(ctx):
        changed = await compact_in_step(ctx) or changed
    if context_tokens(ctx.state) > window_tokens(ctx):
        changed = await trim_results(ctx) or changed
    return changed
