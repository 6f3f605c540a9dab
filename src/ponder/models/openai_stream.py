"""`StreamAssembler`: streamed OpenAI ``ChatCompletionChunk`` objects → deltas and a response."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ponder.exceptions import ModelResponseError
from ponder.messages import AssistantPart, ReasoningPart, TextPart, ToolCallPart
from ponder.models.base import (
    ModelDelta,
    ModelResponse,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ponder.models.openai_response import usage_from
from ponder.models.wire_fields import (
    arguments_text,
    call_id,
    call_name,
    get,
    items,
    label,
    new_call_id,
    text_or_none,
    unreadable,
)

__all__ = ["StreamAssembler"]


@dataclass
class _CallBuffer:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamAssembler:
    """Folds ``ChatCompletionChunk`` objects into deltas and, at the end, one response.

    Tool-call fragments are assembled by ``index``, so several parallel calls may
    interleave. `finish` refuses a stream that never said why it stopped.
    """

    provider: str
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _CallBuffer] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None
    model_name: str | None = None

    def feed(self, chunk: Any) -> list[ModelDelta]:
        """Take one chunk; return the deltas it carries (`ModelResponseError` if unreadable)."""
        if chunk is None or isinstance(chunk, str | bytes | list | int | float):
            raise unreadable(f"a stream chunk is {repr(chunk)[:120]}", self.model_name)
        self.model_name = label(get(chunk, "model")) or self.model_name
        usage = get(chunk, "usage")
        if usage is not None:
            self.usage = usage_from(usage)
        choices = items(get(chunk, "choices"), "a chunk's choices")
        if not choices:
            return []
        choice = choices[0]
        reason = label(get(choice, "finish_reason"))
        if reason:
            self.finish_reason = reason
        delta = get(choice, "delta")
        return [] if delta is None else self._deltas(delta)

    def _deltas(self, delta: Any) -> list[ModelDelta]:
        out: list[ModelDelta] = []
        reasoning = text_or_none(get(delta, "reasoning_content"), "reasoning_content")
        if reasoning:
            self.reasoning.append(reasoning)
            out.append(ReasoningDelta(reasoning))
        content = text_or_none(get(delta, "content"), "a chunk's content")
        if content:
            self.text.append(content)
            out.append(TextDelta(content))
        for fragment in items(get(delta, "tool_calls"), "a chunk's tool_calls"):
            out.append(self._call_fragment(fragment))
        return out

    def _call_fragment(self, fragment: Any) -> ToolCallDelta:
        index = self._index(fragment)
        buffer = self.calls.setdefault(index, _CallBuffer())
        function = get(fragment, "function") or get(fragment, "custom")
        raw_name = get(function, "name")
        name = call_name(raw_name) if raw_name is not None else None
        raw_arguments = get(function, "arguments")
        if raw_arguments is None:
            raw_arguments = get(function, "input")
        arguments = arguments_text(raw_arguments)
        if name and name == buffer.name:  # some servers repeat the name in every chunk
            name = None
        raw_id = get(fragment, "id")
        fragment_id = call_id(raw_id) if raw_id is not None else None
        new_id = fragment_id if fragment_id and fragment_id != buffer.id else None
        buffer.id = buffer.id or fragment_id
        buffer.name += name or ""
        buffer.arguments.append(arguments)
        return ToolCallDelta(index, id=new_id, name=name, arguments=arguments)

    def _index(self, fragment: Any) -> int:
        """The fragment's call index; without one, a new call if it brings a new id."""
        index = get(fragment, "index")
        if index is None:
            if not self.calls:
                return 0
            last = max(self.calls)
            raw_id = get(fragment, "id")
            is_new = raw_id is not None and call_id(raw_id) != self.calls[last].id
            return last + 1 if is_new else last
        if not isinstance(index, int) or isinstance(index, bool):
            raise unreadable(f"a tool call fragment has index {index!r}", self.model_name)
        return index

    def finish(self) -> ModelResponse:
        """The complete response; `ModelResponseError` if the stream was cut short."""
        if self.finish_reason is None:
            raise ModelResponseError(
                "the stream ended before the provider finished the response",
                model_name=self.model_name,
            )
        parts: list[AssistantPart] = []
        if self.reasoning:
            parts.append(ReasoningPart(text="".join(self.reasoning), provider=self.provider))
        if self.text:
            parts.append(TextPart(text="".join(self.text)))
        for _, buffer in sorted(self.calls.items()):
            arguments = "".join(buffer.arguments)
            parts.append(ToolCallPart.from_raw(buffer.id or new_call_id(), buffer.name, arguments))
        return ModelResponse(
            parts=tuple(parts),
            usage=self.usage or Usage(requests=1),
            finish_reason=self.finish_reason,
            model_name=self.model_name,
        )
