"""Request and response bodies of the HTTP API (they make the OpenAPI schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ponder.agent.limits import UsageLimits
from ponder.status import RunStatus

__all__ = [
    "MAX_MESSAGES",
    "MAX_TEXT_CHARS",
    "ChatMessageIn",
    "ChatRequest",
    "ContentPart",
    "ErrorBody",
    "ErrorDetail",
    "FunctionCallIn",
    "FunctionIn",
    "HistoryMessage",
    "ResumeRequest",
    "RunList",
    "RunRequest",
    "RunSummary",
    "StreamOptions",
    "Suspension",
    "ToolCallIn",
    "ToolIn",
]

MAX_TEXT_CHARS = 200_000
MAX_MESSAGES = 500


class HistoryMessage(BaseModel):
    """An earlier turn of the conversation."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str = Field(max_length=MAX_TEXT_CHARS)


class RunRequest(BaseModel):
    """Start a run: the task and, optionally, the conversation so far.

    ``session_id`` makes the run the next turn of that session (the server needs a store):
    it continues the session's last completed turn, one turn at a time. ``limits`` bound
    what the run may use, as `ponder.agent.UsageLimits` do.
    """

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    history: list[HistoryMessage] = Field(default_factory=list, max_length=MAX_MESSAGES)
    session_id: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9._:@-]+$"
    )
    limits: UsageLimits | None = None


class Suspension(BaseModel):
    """Why a run waits; for ``approval`` the payload is ``{"calls": [{id, name, arguments}]}``."""

    reason: str
    payload: Any = None


class RunSummary(BaseModel):
    """A run without its events."""

    id: str
    run_id: str
    """The same as ``id``, under the name events and errors use."""
    prompt: str
    created: float
    status: RunStatus
    output: str | None
    error: str | None
    usage: dict[str, int]
    cost: float | None = None
    """The price of the run's model requests in USD; None when the model's price is unknown."""
    event_count: int
    suspension: Suspension | None = None
    stop_reason: str | None = None
    """Why a completed run stopped (``answered``, ``tool_call_limit``, ...)."""


class ResumeRequest(BaseModel):
    """Continue a suspended run: ``"approve"``, ``"reject"``, or a decision per call id.

    Per call: ``"approve"``, ``"reject"``, ``{"action": "reject", "reason": ...}`` or
    ``{"action": "edit", "arguments": {...}}``. ``null`` continues a crashed run.
    """

    model_config = ConfigDict(extra="forbid")

    decision: Any = Field(
        json_schema_extra={"examples": ["approve", {"call_1": {"action": "reject"}}]}
    )


class RunList(BaseModel):
    """The newest runs first."""

    runs: list[RunSummary]


class ErrorDetail(BaseModel):
    """What went wrong, OpenAI-style."""

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorBody(BaseModel):
    """Every error response."""

    error: ErrorDetail


class ContentPart(BaseModel):
    """One part of a multi-part message: text, or an ``image_url`` (http(s) or ``data:``)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(max_length=64)
    text: str | None = Field(default=None, max_length=MAX_TEXT_CHARS)


class FunctionCallIn(BaseModel):
    """The function of a tool call: its name and its arguments as JSON text."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(max_length=256)
    arguments: str = Field(default="{}", max_length=MAX_TEXT_CHARS)


class ToolCallIn(BaseModel):
    """A tool call of an assistant message in the client's history."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1, max_length=256)
    type: Literal["function"] = "function"
    function: FunctionCallIn


class ChatMessageIn(BaseModel):
    """One message of an OpenAI chat request."""

    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPart] | None = Field(default=None, max_length=MAX_TEXT_CHARS)
    name: str | None = Field(default=None, max_length=256)
    tool_calls: list[ToolCallIn] | None = Field(default=None, max_length=MAX_MESSAGES)
    tool_call_id: str | None = Field(default=None, max_length=256)


class FunctionIn(BaseModel):
    """A client-side function the agent may call."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")
    description: str = Field(default="", max_length=MAX_TEXT_CHARS)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    strict: bool | None = None


class ToolIn(BaseModel):
    """One entry of a request's ``tools``: a client-side function."""

    model_config = ConfigDict(extra="allow")

    type: Literal["function"]
    function: FunctionIn


class StreamOptions(BaseModel):
    """OpenAI ``stream_options``."""

    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatRequest(BaseModel):
    """An OpenAI ``/v1/chat/completions`` request.

    ``tools`` are the client's: the agent may call them, and the client answers (see
    ``ponder.server.openai_compat``). Options the agent cannot honour are refused.
    """

    model_config = ConfigDict(extra="allow")

    model: str = Field(default="ponder", max_length=256)
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    tools: list[ToolIn] | None = Field(default=None, max_length=128)
    tool_choice: Any = None
    response_format: Any = None
    n: int | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None

    def text_of(self, message: ChatMessageIn) -> str:
        """A message's text (text parts joined)."""
        content: Any = message.content
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        return "".join(part.text or "" for part in content if part.type == "text")
