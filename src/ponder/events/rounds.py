"""The events of think–act rounds: reasoning, tool calls, built-ins, guards, context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ponder.events.base import CallStatus, CheckType, EventBase, ReasoningPhase, Verdict

__all__ = [
    "Compaction",
    "LimitReached",
    "LoopDetected",
    "MiddleMessage",
    "Reasoning",
    "Reflection",
    "ReportRaised",
    "Retrieval",
    "RoundStarted",
    "StructuredReasoning",
    "Thinking",
    "Todo",
    "ToolCallFailed",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolPrediction",
]


@dataclass(slots=True, kw_only=True)
class RoundStarted(EventBase):
    """A think–act round begins; ``round`` counts from 1."""

    kind: Literal["round_started"] = "round_started"
    round: int
    tool_choice: Literal["auto", "required"]


@dataclass(slots=True, kw_only=True)
class Reasoning(EventBase):
    """The round's reasoning: the ``think_and_reason`` summary, or a text reply.

    ``source`` is ``"text"`` when the server answered the forced reasoning request in text.
    """

    kind: Literal["reasoning"] = "reasoning"
    round: int
    last_step: str
    summary: str
    source: Literal["tool", "text"] = "tool"


@dataclass(slots=True, kw_only=True)
class StructuredReasoning(EventBase):
    """One ``[Step N/M] [phase]`` block of structured reasoning."""

    kind: Literal["structured_reasoning"] = "structured_reasoning"
    step_index: int
    total_steps: int
    phase: ReasoningPhase
    sub_problem: str


@dataclass(slots=True, kw_only=True)
class ToolPrediction(EventBase):
    """Tools the model predicted it will need (``[TOOL_PREDICTION]``)."""

    kind: Literal["tool_prediction"] = "tool_prediction"
    predicted_tools: list[str]
    predicted_next_action: str


@dataclass(slots=True, kw_only=True)
class ToolCallStarted(EventBase):
    """A tool call began."""

    kind: Literal["tool_call_started"] = "tool_call_started"
    call_id: str
    name: str
    arguments: Any


@dataclass(slots=True, kw_only=True)
class ToolCallFinished(EventBase):
    """A tool call succeeded."""

    kind: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    name: str
    output: str
    data: Any
    duration: float


@dataclass(slots=True, kw_only=True)
class ToolCallFailed(EventBase):
    """A tool call failed: error, timeout, invalid arguments, unknown tool, cancelled."""

    kind: Literal["tool_call_failed"] = "tool_call_failed"
    call_id: str
    name: str
    error: str
    status: CallStatus
    duration: float


@dataclass(slots=True, kw_only=True)
class MiddleMessage(EventBase):
    """A progress message for the user (``processing_message``)."""

    kind: Literal["middle_message"] = "middle_message"
    content: str


@dataclass(slots=True, kw_only=True)
class Reflection(EventBase):
    """One ``verify_reasoning`` verdict."""

    kind: Literal["reflection"] = "reflection"
    check_type: CheckType
    result: Verdict
    detail: str
    attempt: int


@dataclass(slots=True, kw_only=True)
class LimitReached(EventBase):
    """A limit stopped the tool loop; a final answer follows."""

    kind: Literal["limit_reached"] = "limit_reached"
    limit: Literal[
        "rounds",
        "tool_calls",
        "step_iterations",
        "token_budget",
        "requests",
        "input_tokens",
        "output_tokens",
        "total_tokens",
    ]
    value: int


@dataclass(slots=True, kw_only=True)
class LoopDetected(EventBase):
    """Rounds repeat: the model was ``corrected``, or the run ``ended`` with an answer."""

    kind: Literal["loop_detected"] = "loop_detected"
    signature: str
    repeats: int
    action: Literal["corrected", "ended"]


@dataclass(slots=True, kw_only=True)
class Thinking(EventBase):
    """A ``sequential_thinking`` call was recorded; ``data`` is the tool's UI data."""

    kind: Literal["thinking"] = "thinking"
    call_id: str
    data: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class Todo(EventBase):
    """A ``todo_write`` call changed the plan; ``data`` is the tool's UI data."""

    kind: Literal["todo"] = "todo"
    call_id: str
    data: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class Compaction(EventBase):
    """Older context was compacted (``trim``: tool results were cut to fit the window)."""

    kind: Literal["compaction"] = "compaction"
    mode: Literal["compact", "slide", "steps", "trim"]
    tokens_before: int
    tokens_after: int


@dataclass(slots=True, kw_only=True)
class Retrieval(EventBase):
    """RAG mode retrieved passages for the query (``sources`` as ``file#chunk``)."""

    kind: Literal["retrieval"] = "retrieval"
    query: str
    sources: list[str]
    scores: list[float]


@dataclass(slots=True, kw_only=True)
class ReportRaised(EventBase):
    """The content report guard flagged the user's message; the run answers with a block."""

    kind: Literal["report_raised"] = "report_raised"
    level: Literal["low", "medium", "high"]
    category: str
    reason: str
