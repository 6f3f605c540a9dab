"""`ScriptedModel`: a deterministic model that plays back a script, for tests and demos.

A script is a list of entries served in order — a `ModelResponse` (build one with
`reply` or `call_tools`), a plain ``str`` (a text reply) or a callable
``(request) -> ModelResponse | str`` — or one callable that answers every request.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, TypeAlias

from ponder.exceptions import ModelResponseError, UserError
from ponder.messages import AssistantPart, ReasoningPart, TextPart, ToolCallPart
from ponder.models.base import (
    ModelRequest,
    ModelResponse,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from ponder.models.tokens import estimate_messages_tokens, estimate_tokens

__all__ = ["ScriptEntry", "ScriptedModel", "call_tools", "reply"]

ScriptHandler: TypeAlias = Callable[[ModelRequest], "ModelResponse | str"]
ScriptEntry: TypeAlias = "ModelResponse | str | ScriptHandler"
ToolCallSpec: TypeAlias = tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str]

_STREAM_CHUNKS = 3


def reply(text: str, *, reasoning: str | None = None, usage: Usage | None = None) -> ModelResponse:
    """A response with visible text (and optional provider reasoning)."""
    parts: list[AssistantPart] = []
    if reasoning:
        parts.append(ReasoningPart(text=reasoning, provider="scripted"))
    parts.append(TextPart(text=text))
    return ModelResponse(
        parts=tuple(parts), usage=usage or Usage(), finish_reason="stop", model_name="scripted"
    )


def call_tools(*calls: ToolCallSpec, text: str = "", reasoning: str | None = None) -> ModelResponse:
    """A response that calls tools: each call is ``(name, args)`` or ``(name, args, id)``.

    ``args`` is a dict, or a raw string kept verbatim (malformed JSON becomes
    ``args_error`` on the call). Calls without an id get ``call_<n>`` when served.
    """
    if not calls:
        raise UserError("call_tools() needs at least one (name, args) call")
    parts: list[AssistantPart] = []
    if reasoning:
        parts.append(ReasoningPart(text=reasoning, provider="scripted"))
    if text:
        parts.append(TextPart(text=text))
    parts.extend(_tool_call(spec) for spec in calls)
    return ModelResponse(parts=tuple(parts), finish_reason="tool_calls", model_name="scripted")


def _tool_call(spec: ToolCallSpec) -> ToolCallPart:
    if not isinstance(spec, tuple) or len(spec) not in (2, 3):
        raise UserError(f"a scripted tool call is (name, args) or (name, args, id), got {spec!r}")
    name, args = spec[0], spec[1]
    call_id = spec[2] if len(spec) == 3 else ""
    if isinstance(args, str):
        return ToolCallPart.from_raw(call_id, name, args)
    if isinstance(args, dict):
        return ToolCallPart.from_args(call_id, name, args)
    raise UserError(f"tool call {name!r}: args must be a dict or a raw JSON string")


class ScriptedModel:
    """A `Model` that answers from a script; ``requests`` records what it was asked."""

    def __init__(self, script: Sequence[ScriptEntry] | ScriptHandler, *, name: str = "scripted"):
        if callable(script):
            self._handler: ScriptHandler | None = script
            self._script: list[ScriptEntry] = []
        elif isinstance(script, str | bytes) or not isinstance(script, Sequence):
            raise UserError("ScriptedModel takes a list of responses or a function of the request")
        else:
            self._handler, self._script = None, list(script)
        self._name = name
        self._served = 0
        self._next_call = 0
        self.requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        """The model's name (``scripted`` unless given)."""
        return self._name

    @property
    def remaining(self) -> int:
        """How many scripted responses are left (0 for a handler function)."""
        return len(self._script) - self._served

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Record the request and return the next scripted response."""
        # The caller may keep appending to the list it sent (a live ledger): record a copy.
        request = dataclasses.replace(request, messages=tuple(request.messages))
        self.requests.append(request)
        entry = self._next_entry()
        value = entry(request) if callable(entry) else entry
        return self._finish(value, request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Yield the next response as text, reasoning and tool-call deltas, then the response."""
        response = await self.request(request)
        for event in _deltas(response):
            yield event
        yield response

    def _next_entry(self) -> ScriptEntry:
        if self._handler is not None:
            return self._handler
        if self._served >= len(self._script):
            raise ModelResponseError(
                f"ScriptedModel is out of script: all {len(self._script)} responses were used "
                f"and request {len(self.requests)} has no answer",
                model_name=self._name,
            )
        entry = self._script[self._served]
        self._served += 1
        return entry

    def _finish(self, value: ModelResponse | str, request: ModelRequest) -> ModelResponse:
        if isinstance(value, str):
            value = reply(value)
        if not isinstance(value, ModelResponse):
            raise ModelResponseError(
                f"a script entry returned {type(value).__name__}, not a ModelResponse or str",
                model_name=self._name,
            )
        parts = tuple(self._with_id(p) for p in value.parts)
        usage = value.usage.model_copy(update={"requests": max(1, value.usage.requests)})
        if value.usage == Usage():
            usage = self._estimate(request, value)
        return value.model_copy(update={"parts": parts, "usage": usage, "model_name": self._name})

    def _with_id(self, part: AssistantPart) -> AssistantPart:
        if not isinstance(part, ToolCallPart) or part.id:
            return part
        self._next_call += 1
        return part.model_copy(update={"id": f"call_{self._next_call}"})

    @staticmethod
    def _estimate(request: ModelRequest, response: ModelResponse) -> Usage:
        output = estimate_tokens(response.text) + estimate_tokens(response.reasoning)
        output += sum(estimate_tokens(c.name + c.arguments) for c in response.tool_calls)
        tools = sum(estimate_tokens(json.dumps(t.parameters)) for t in request.tools)
        return Usage(
            requests=1,
            input_tokens=estimate_messages_tokens(request.messages) + tools,
            output_tokens=output,
        )


def _chunks(text: str) -> list[str]:
    size = max(1, -(-len(text) // _STREAM_CHUNKS))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _deltas(response: ModelResponse) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    index = 0
    for part in response.parts:
        if isinstance(part, ReasoningPart):
            events.extend(ReasoningDelta(chunk) for chunk in _chunks(part.text))
        elif isinstance(part, TextPart):
            events.extend(TextDelta(chunk) for chunk in _chunks(part.text))
        else:
            pieces = _chunks(part.arguments) or [""]
            events.append(ToolCallDelta(index, id=part.id, name=part.name, arguments=pieces[0]))
            events.extend(ToolCallDelta(index, arguments=piece) for piece in pieces[1:])
            index += 1
    return events
