"""The Anthropic Messages wire format: ledger → request body, blocks/events → parts.

The leading system messages go to the top-level ``system`` field; a system message later
in the conversation (the round's reasoning) rides in a user turn as text, so ``system``
and the earlier turns stay a stable, cacheable prefix. Thinking blocks are replayed with
their signatures; tool results ride in user turns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ponder.exceptions import ModelResponseError, UserError
from ponder.media import File, Image
from ponder.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from ponder.models.base import (
    ForceTool,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ponder.models.structured import output_tool, tool_name
from ponder.models.wire_fields import (
    arguments_text,
    call_id,
    call_name,
    count,
    get,
    items,
    label,
    text,
    unreadable,
)

__all__ = ["FINISH_REASONS", "StreamAssembler", "request_body", "response_from_blocks"]

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def request_body(request: ModelRequest, max_tokens: int) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` (without model and stream)."""
    messages = list(request.messages)
    head = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), None)
    head = len(messages) if head is None else head
    system = "\n\n".join(m.content for m in messages[:head] if isinstance(m, SystemMessage))
    body: dict[str, Any] = {"max_tokens": request.settings.max_tokens or max_tokens}
    body["messages"] = _turns(messages[head:])
    if system:
        body["system"] = [{"type": "text", "text": system}]
    tools, choice = list(request.tools), request.tool_choice
    if not tools and choice == "none":  # the tool loop's prefix, for the prompt cache
        tools = list(request.prefix_tools)
    if request.output is not None:
        tools.append(output_tool(request.output))
        choice = ForceTool(tool_name(request.output.name))
    if tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
        body["tool_choice"] = _tool_choice(choice, [t.name for t in tools])
    _mark_cache_breakpoints(body)
    if request.settings.temperature is not None:
        body["temperature"] = request.settings.temperature
    if request.settings.extra_body:
        body["extra_body"] = request.settings.extra_body
    return body


def _mark_cache_breakpoints(body: dict[str, Any]) -> None:
    """Mark the stable prefix for Anthropic's prompt cache (3 of its 4 breakpoints).

    The tools, the system prompt and the conversation so far: each request of a run sends
    the previous one's messages again and adds to them, so the next request reads all of
    it from the cache (a prefix shorter than the model's minimum is simply not cached).
    """
    ephemeral = {"type": "ephemeral"}
    if body.get("tools"):
        body["tools"][-1]["cache_control"] = ephemeral
    if body.get("system"):
        body["system"][-1]["cache_control"] = ephemeral
    turns = body["messages"]
    if turns and turns[-1]["content"]:
        last = turns[-1]["content"][-1]
        if last.get("type") not in ("thinking", "redacted_thinking"):
            last["cache_control"] = ephemeral


def _tool_choice(choice: Any, names: list[str]) -> dict[str, Any]:
    if isinstance(choice, ForceTool):
        if choice.name not in names:
            raise UserError(f"tool_choice forces tool {choice.name!r}, which is not among {names}")
        return {"type": "tool", "name": choice.name}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice]}


def _turns(messages: Any) -> list[dict[str, Any]]:
    """Messages as alternating turns; consecutive same-role blocks share one turn."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(message, SystemMessage):
        return "user", [{"type": "text", "text": message.content}] if message.content else []
    if isinstance(message, UserMessage):
        text = [{"type": "text", "text": message.content}] if message.content else []
        return "user", [*map(media_block, message.attachments), *text]
    if isinstance(message, ToolMessage):
        content: Any = message.content
        if message.attachments:
            content = [{"type": "text", "text": content}, *map(media_block, message.attachments)]
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": message.call_id,
            "content": content,
        }
        if message.is_error:
            result["is_error"] = True
        return "user", [result]
    assert isinstance(message, AssistantMessage)
    return "assistant", [b for b in map(_assistant_block, message.parts) if b is not None]


def media_block(media: Image | File) -> dict[str, Any]:
    """An image or document block: by URL, or base64."""
    kind = "image" if isinstance(media, Image) else "document"
    if media.url is not None:
        return {"type": kind, "source": {"type": "url", "url": media.url}}
    source = {"type": "base64", "media_type": media.media_type, "data": media.base64()}
    return {"type": kind, "source": source}


def _assistant_block(part: AssistantPart) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ToolCallPart):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.args or {}}
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    if part.signature is not None:  # unsigned reasoning (another provider's) cannot be replayed
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return None


def usage_from(raw: Any) -> Usage:
    """Usage from an Anthropic usage object (cache reads count as input, and apart)."""
    if raw is None:
        return Usage(requests=1)
    input_tokens = sum(
        count(get(raw, key))
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    )
    return Usage(
        requests=1,
        input_tokens=input_tokens,
        output_tokens=count(get(raw, "output_tokens")),
        cached_input_tokens=count(get(raw, "cache_read_input_tokens")),
    )


def block_part(block: Any) -> AssistantPart | None:
    """One content block of a response as a ledger part (an unknown kind is skipped)."""
    kind = get(block, "type")
    if kind == "text":
        return TextPart(text=text(get(block, "text"), "a text block"))
    if kind == "thinking":
        thinking = text(get(block, "thinking"), "a thinking block")
        signature = label(get(block, "signature"))
        return ReasoningPart(text=thinking, signature=signature, provider="anthropic")
    if kind == "redacted_thinking":
        return ReasoningPart(text="", redacted=label(get(block, "data")), provider="anthropic")
    if kind == "tool_use":
        return tool_use_part(get(block, "id"), get(block, "name"), get(block, "input"))
    return None


def tool_use_part(raw_id: Any, name: Any, arguments: Any) -> ToolCallPart:
    """A ``tool_use`` block as a call; input that is not an object fails as its arguments."""
    if isinstance(arguments, dict):
        return ToolCallPart.from_args(call_id(raw_id), call_name(name), arguments)
    return ToolCallPart.from_raw(call_id(raw_id), call_name(name), arguments_text(arguments))


def response_from_blocks(message: Any) -> ModelResponse:
    """A `ModelResponse` from a non-streamed Anthropic ``Message``."""
    if message is None or isinstance(message, str | bytes | list | int | float):
        raise unreadable(f"the body is {repr(message)[:120]}, not a message")
    if get(message, "type") == "error" or get(message, "error") is not None:
        raise unreadable(f"it reported an error instead: {str(get(message, 'error'))[:200]}")
    blocks = items(get(message, "content"), "the message content")
    parts = [p for p in map(block_part, blocks) if p is not None]
    reason = label(get(message, "stop_reason"))
    return ModelResponse(
        parts=tuple(parts),
        usage=usage_from(get(message, "usage")),
        finish_reason=FINISH_REASONS.get(reason or "", reason),
        model_name=label(get(message, "model")),
    )


@dataclass
class _Block:
    kind: str
    text: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    call_id: str = ""
    name: str = ""
    call_index: int = -1


@dataclass
class StreamAssembler:
    """Folds raw stream events into deltas and, at ``message_stop``, one response."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    usage: Usage = field(default_factory=lambda: Usage(requests=1))
    finish_reason: str | None = None
    model_name: str | None = None
    is_complete: bool = False

    def feed(self, event: Any) -> list[ModelDelta]:
        """Take one stream event; return its deltas (`ModelResponseError` if unreadable)."""
        kind = get(event, "type")
        if kind == "message_start":
            message = get(event, "message")
            self.model_name = label(get(message, "model"))
            self.usage = usage_from(get(message, "usage"))
        elif kind == "content_block_start":
            return self._start(self._index(event, new=True), get(event, "content_block"))
        elif kind == "content_block_delta":
            return self._delta(self.blocks[self._index(event)], get(event, "delta"))
        elif kind == "message_delta":
            reason = label(get(get(event, "delta"), "stop_reason"))
            self.finish_reason = FINISH_REASONS.get(reason or "", reason)
            output = count(get(get(event, "usage"), "output_tokens"))
            self.usage = self.usage.model_copy(update={"output_tokens": output})
        elif kind == "message_stop":
            self.is_complete = True
        return []

    def _index(self, event: Any, *, new: bool = False) -> int:
        index = get(event, "index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise unreadable(f"a stream event has block index {index!r}", self.model_name)
        if not new and index not in self.blocks:
            raise unreadable(f"a delta for block {index}, which never started", self.model_name)
        return index

    def _start(self, index: int, block: Any) -> list[ModelDelta]:
        state = _Block(label(get(block, "type")) or "")
        self.blocks[index] = state
        if state.kind == "redacted_thinking":
            state.redacted = label(get(block, "data"))
        if state.kind != "tool_use":
            return []
        state.call_id = call_id(get(block, "id"))
        state.name = call_name(get(block, "name"))
        state.call_index = sum(1 for b in self.blocks.values() if b.kind == "tool_use") - 1
        return [ToolCallDelta(state.call_index, id=state.call_id, name=state.name)]

    @staticmethod
    def _delta(state: _Block, delta: Any) -> list[ModelDelta]:
        kind = get(delta, "type")
        if kind == "text_delta":
            piece = text(get(delta, "text"), "a text delta")
            state.text.append(piece)
            return [TextDelta(piece)]
        if kind == "thinking_delta":
            piece = text(get(delta, "thinking"), "a thinking delta")
            state.text.append(piece)
            return [ReasoningDelta(piece)]
        if kind == "signature_delta":
            state.signature = (state.signature or "") + text(get(delta, "signature"), "a signature")
        elif kind == "input_json_delta":
            piece = arguments_text(get(delta, "partial_json"))
            state.text.append(piece)
            return [ToolCallDelta(state.call_index, arguments=piece)]
        return []

    def finish(self) -> ModelResponse:
        """The complete response; `ModelResponseError` if the stream was cut short."""
        if not self.is_complete:
            raise ModelResponseError(
                "the stream ended before the provider finished the response",
                model_name=self.model_name,
            )
        parts = [_part(b) for _, b in sorted(self.blocks.items())]
        return ModelResponse(
            parts=tuple(p for p in parts if p is not None),
            usage=self.usage,
            finish_reason=self.finish_reason,
            model_name=self.model_name,
        )


def _part(block: _Block) -> AssistantPart | None:
    text = "".join(block.text)
    if block.kind == "text":
        return TextPart(text=text)
    if block.kind == "thinking":
        return ReasoningPart(text=text, signature=block.signature, provider="anthropic")
    if block.kind == "redacted_thinking":
        return ReasoningPart(text="", redacted=block.redacted, provider="anthropic")
    if block.kind == "tool_use":
        return ToolCallPart.from_raw(block.call_id, block.name, text)
    return None
