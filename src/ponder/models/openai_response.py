"""Reading OpenAI chat completions: a whole completion or its usage as ponder's response.

Pure functions, no SDK import (see ``ponder.models.openai_stream`` for streamed chunks).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ponder.exceptions import ModelResponseError
from ponder.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
)
from ponder.models.base import (
    ModelDelta,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ponder.models.wire_fields import (
    arguments_text,
    call_id,
    call_name,
    count,
    get,
    items,
    label,
    new_call_id,
    text_or_none,
    unreadable,
)

__all__ = ["deltas_of", "response_from_message", "usage_from", "with_unique_ids"]


def usage_from(raw: Any) -> Usage:
    """Provider-reported usage (``None`` → an empty usage for one request)."""
    if raw is None:
        return Usage(requests=1)
    details = get(raw, "completion_tokens_details")
    prompt = count(get(raw, "prompt_tokens"))
    cached = count(get(get(raw, "prompt_tokens_details"), "cached_tokens"))
    return Usage(
        requests=1,
        input_tokens=prompt,
        output_tokens=count(get(raw, "completion_tokens")),
        reasoning_tokens=count(get(details, "reasoning_tokens")),
        cached_input_tokens=min(cached, prompt),  # part of the prompt, whatever was reported
    )


def response_from_message(completion: Any, provider: str) -> ModelResponse:
    """A `ModelResponse` from a non-streamed ``ChatCompletion``.

    `ModelResponseError` if it cannot be read; a call's odd fields stay that call's problem.
    """
    if completion is None or isinstance(completion, str | bytes | list | int | float):
        shown = repr(completion)[:120]
        raise unreadable(f"the body is {shown}, not a chat completion")
    model_name = label(get(completion, "model"))
    choices = items(get(completion, "choices"), "choices")
    reported = get(completion, "error")
    if not choices and reported is not None:
        raise unreadable(f"it reported an error instead: {str(reported)[:200]}", model_name)
    if not choices:
        raise ModelResponseError("the provider returned no choices", model_name=model_name)
    choice = choices[0]
    message = get(choice, "message")
    if message is None:
        raise unreadable("the first choice has no message", model_name)
    parts: list[AssistantPart] = []
    reasoning = text_or_none(get(message, "reasoning_content"), "reasoning_content")
    if reasoning:
        parts.append(ReasoningPart(text=reasoning, provider=provider))
    content = text_or_none(get(message, "content"), "the message content")
    if content:
        parts.append(TextPart(text=content))
    parts += [_call_part(call) for call in items(get(message, "tool_calls"), "tool_calls")]
    return ModelResponse(
        parts=tuple(parts),
        usage=usage_from(get(completion, "usage")),
        finish_reason=label(get(choice, "finish_reason")),
        model_name=model_name,
    )


def _call_part(call: Any) -> ToolCallPart:
    """One call of a completion; a ``custom`` call's input is read as its arguments."""
    function = get(call, "function")
    custom = get(call, "custom")
    if function is None and custom is not None:
        name, arguments = get(custom, "name"), get(custom, "input")
    else:
        name, arguments = get(function, "name"), get(function, "arguments")
    return ToolCallPart.from_raw(
        call_id(get(call, "id")), call_name(name), arguments_text(arguments)
    )


def deltas_of(response: ModelResponse) -> list[ModelDelta]:
    """The deltas a whole response would have streamed (for providers that cannot stream)."""
    deltas: list[ModelDelta] = []
    if response.reasoning:
        deltas.append(ReasoningDelta(response.reasoning))
    if response.text:
        deltas.append(TextDelta(response.text))
    for index, call in enumerate(response.tool_calls):
        deltas.append(ToolCallDelta(index, id=call.id, name=call.name, arguments=call.arguments))
    return deltas


def with_unique_ids(response: ModelResponse, history: Sequence[Message]) -> ModelResponse:
    """``response`` with call ids the history already holds (or it repeats) replaced."""
    seen = {c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls}
    parts: list[AssistantPart] = []
    changed = False
    for part in response.parts:
        if isinstance(part, ToolCallPart):
            if part.id in seen:
                part, changed = part.model_copy(update={"id": new_call_id()}), True
            seen.add(part.id)
        parts.append(part)
    return response.model_copy(update={"parts": tuple(parts)}) if changed else response
