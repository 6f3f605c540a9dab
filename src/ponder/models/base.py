"""The `Model` protocol every provider adapter implements, and the types it speaks.

A request is a `ModelRequest` (messages, tool definitions, tool choice, optional structured
output schema, settings). `Model.request` returns a `ModelResponse`; `Model.stream` yields
typed deltas and ends with the same `ModelResponse`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ponder.messages import (
    AssistantMessage,
    AssistantPart,
    Message,
    PartsView,
    TextPart,
    ToolCallPart,
    is_clean,
    scrub_parts,
    scrub_text,
    scrub_value,
    unique_call_ids,
)
from ponder.models.capabilities import Feature
from ponder.shared_fields import CopyOnWriteFields, built, shared_fields_set
from ponder.tools.definition import ForceTool, ToolChoice, ToolDefinition

__all__ = [
    "Degradation",
    "Fallback",
    "ForceTool",
    "Model",
    "ModelDelta",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "OutputSchema",
    "ReasoningDelta",
    "StreamEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolChoice",
    "ToolDefinition",
    "Unanswered",
    "Usage",
]


class OutputSchema(BaseModel):
    """A request for structured output: the response text must be JSON matching the schema."""

    model_config = ConfigDict(frozen=True)

    name: str
    json_schema: dict[str, Any]
    description: str = ""
    strict: bool = True

    @classmethod
    def from_model(cls, model: type[BaseModel], *, name: str | None = None) -> OutputSchema:
        """Describe a pydantic model as the expected output."""
        return cls(
            name=name or model.__name__,
            json_schema=model.model_json_schema(),
            description=(model.__doc__ or "").strip(),
        )


class ModelSettings(BaseModel):
    """Per-request knobs; ``None`` means the provider's default."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    """Total seconds one request may take, retries and waits included."""
    idle_timeout: float | None = None
    """Seconds the provider may stay silent: between stream chunks, or before a whole
    non-streamed answer. A slow model that keeps streaming is never cut off by it."""
    extra_body: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs."""

    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    tool_choice: ToolChoice = "auto"
    output: OutputSchema | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    prefix_tools: Sequence[ToolDefinition] = ()
    """With no ``tools`` and ``tool_choice`` ``"none"``: the tools the run offered before,
    which a provider that obeys ``tool_choice`` is sent anyway, so the prompt begins as the
    tool loop's did and its prompt cache reads that prefix. Never offered to be called."""


class Usage(CopyOnWriteFields):
    """Token usage; adds up across requests."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    """Input tokens read from the provider's prompt cache (part of ``input_tokens``)."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        """The sum, built as `model_construct` builds (the sums of counts need no checks).

        A run adds one per request and keeps the latest: it shares its fields set.
        """
        return built(
            Usage,
            {
                "requests": self.requests + other.requests,
                "input_tokens": self.input_tokens + other.input_tokens,
                "output_tokens": self.output_tokens + other.output_tokens,
                "reasoning_tokens": self.reasoning_tokens + other.reasoning_tokens,
                "cached_input_tokens": self.cached_input_tokens + other.cached_input_tokens,
            },
            _SUMMED,
        )


_SUMMED = shared_fields_set(Usage.model_fields)


class Degradation(BaseModel):
    """A feature the provider does not honour, and what was sent instead.

    ``source`` says how ponder knew: from the provider's profile or the config
    (``profile``), or from an error of this provider earlier in the process (``detected``).
    """

    model_config = ConfigDict(frozen=True)

    feature: Feature
    action: str
    source: Literal["profile", "detected"] = "profile"


class Fallback(BaseModel):
    """A model of a `FallbackModel` that failed a request, and the one that answered it."""

    model_config = ConfigDict(frozen=True)

    failed: str
    error: str
    answered_by: str


Unanswered = Literal["empty", "content_filter"]


class ModelResponse(PartsView, BaseModel):
    """One complete model answer.

    ``degradations`` lists what the request needed because the provider lacks a feature;
    `unanswered` says whether this is no answer at all (nothing but whitespace, or
    withheld by a content filter), which a caller may retry once and then stop on.
    """

    kind: Literal["response"] = "response"
    parts: tuple[AssistantPart, ...] = ()
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    model_name: str | None = None
    provider_extras: dict[str, Any] = Field(default_factory=dict)
    degradations: tuple[Degradation, ...] = ()
    fallbacks: tuple[Fallback, ...] = ()
    """The models that failed this request before the one that answered (`FallbackModel`)."""

    @property
    def unanswered(self) -> Unanswered | None:
        """``content_filter`` or ``empty`` when the response carries no answer, else ``None``."""
        if self.finish_reason in ("content_filter", "refusal"):
            return "content_filter"
        for part in self.parts:  # a call, or text that is not all whitespace, answers
            if isinstance(part, ToolCallPart) or (isinstance(part, TextPart) and part.text.strip()):
                return None
        return "empty"

    @model_validator(mode="after")
    def _unique_call_ids(self) -> ModelResponse:
        """Renumber repeated call ids; replace lone surrogates (no store can encode them)."""
        parts = unique_call_ids(scrub_parts(self.parts))
        if parts is not self.parts:  # assigning only what changed keeps building cheap
            self.parts = parts
        if self.model_name is not None and not is_clean(self.model_name):
            self.model_name = scrub_text(self.model_name)
        if self.finish_reason is not None and not is_clean(self.finish_reason):
            self.finish_reason = scrub_text(self.finish_reason)
        if self.provider_extras and not is_clean(self.provider_extras):
            self.provider_extras = scrub_value(self.provider_extras)
        return self

    def to_message(self) -> AssistantMessage:
        """The assistant message to append to the ledger (its parts are validated already)."""
        extras = self.provider_extras
        return built(
            AssistantMessage,
            {
                "parts": self.parts,
                "kind": "assistant",
                "model_name": self.model_name,
                "provider_extras": dict(extras) if extras else {},
            },
            _ANSWER_FIELDS,
        )


_ANSWER_FIELDS = shared_fields_set(("parts", "model_name", "provider_extras"))
"""The fields of an assistant message built from a response (`ModelResponse.to_message`)."""


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A fragment of visible text."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A fragment of provider reasoning."""

    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call; ``index`` says which call of the response it belongs to."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    kind: Literal["tool_call_delta"] = "tool_call_delta"


ModelDelta = TextDelta | ReasoningDelta | ToolCallDelta
StreamEvent = ModelDelta | ModelResponse


@runtime_checkable
class Model(Protocol):
    """A language model behind some provider."""

    @property
    def name(self) -> str:
        """A readable name such as ``openai:gpt-4o-mini``."""
        ...

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send one request and return the whole response."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Send one request; yield deltas, then the complete ``ModelResponse`` last."""
        ...
