"""Answer a server's ``sampling/createMessage`` with the run's model.

A request is answered by the model of the run it belongs to (see `ponder.mcp.binding`),
at most ``sampling_limit`` times per run. Every request is an ``mcp`` event of type
``sampling`` with a ``status`` (``answered``, ``refused``, ``failed``), the count and the
limit; the tokens it used are added to the run's usage. A refusal or a model failure is
an error answer to that server's request: the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types

from ponder.events import McpEvent
from ponder.mcp.binding import RunBinding
from ponder.messages import AssistantMessage, Message, SystemMessage, TextPart, UserMessage
from ponder.models.base import ModelRequest, ModelResponse, ModelSettings

__all__ = ["answer_sampling", "to_model_messages"]

_NO_CALL = "no tool call of a run is in flight on this session"
_STOP_REASONS = {"length": "maxTokens", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}


def to_model_messages(params: types.CreateMessageRequestParams) -> list[Message]:
    """The request's system prompt and messages as ponder messages (non-text described)."""
    messages: list[Message] = []
    if params.system_prompt:
        messages.append(SystemMessage(content=params.system_prompt))
    for item in params.messages:
        blocks = item.content if isinstance(item.content, list) else [item.content]
        text = "\n".join(_block_text(block) for block in blocks)
        if item.role == "user":
            messages.append(UserMessage(content=text))
        else:
            messages.append(AssistantMessage(parts=(TextPart(text=text),)))
    return messages


def _block_text(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    mime = getattr(block, "mime_type", None)
    return f"[{getattr(block, 'type', 'content')} content{f' ({mime})' if mime else ''} omitted]"


async def answer_sampling(
    binding: RunBinding | None,
    server: str,
    params: types.CreateMessageRequestParams,
    emit: Callable[[str, McpEvent], None],
) -> types.CreateMessageResult | types.ErrorData:
    """The model's answer to ``params``, or an error the server receives instead."""
    refusal = _refusal(binding, params)
    if refusal is not None or binding is None:
        reason = refusal or _NO_CALL
        emit(server, _event(server, binding, "refused", error=reason))
        return types.ErrorData(code=types.INVALID_REQUEST, message=f"sampling refused: {reason}")
    binding.sampling_count += 1
    try:
        response = await _ask(binding, params)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        emit(server, _event(server, binding, "failed", error=error))
        return types.ErrorData(code=types.INTERNAL_ERROR, message=f"sampling failed: {error}")
    if binding.add_usage is not None:
        binding.add_usage(response.usage)
    model = response.model_name or (binding.model.name if binding.model else "")
    usage = {
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
    }
    emit(server, _event(server, binding, "answered", model=model, **usage))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=response.text),
        model=model,
        stop_reason=_STOP_REASONS.get(response.finish_reason or "", "endTurn"),
    )


def _refusal(binding: RunBinding | None, params: types.CreateMessageRequestParams) -> str | None:
    if binding is None:
        return _NO_CALL
    if binding.model is None or binding.sampling_limit <= 0:
        return "sampling is off for this run"
    if binding.sampling_count >= binding.sampling_limit:
        return f"the run's limit of {binding.sampling_limit} sampling requests is reached"
    if params.tools:
        return "sampling with tools is not supported"
    return None


async def _ask(binding: RunBinding, params: types.CreateMessageRequestParams) -> ModelResponse:
    assert binding.model is not None
    settings = ModelSettings(temperature=params.temperature, max_tokens=params.max_tokens)
    request = ModelRequest(to_model_messages(params), settings=settings)
    return await binding.model.request(request)


def _event(server: str, binding: RunBinding | None, status: str, **data: Any) -> McpEvent:
    count = binding.sampling_count if binding is not None else 0
    limit = binding.sampling_limit if binding is not None else 0
    details = {"status": status, "count": count, "limit": limit, **data}
    return McpEvent(type="sampling", server=server, data=details)
