"""The typed event stream of a run, and the hook registry that receives it.

Every event carries ``kind`` (its discriminator), ``run_id``, a per-run sequence number
``seq`` and a wall-clock ``time``; the runtime fills those in when it emits. The CLI, the
SSE endpoint, the viewer and hooks all read this one stream. Events are slotted
dataclasses (cheap to create on the hot path); ``event_to_dict``/``event_from_dict``
convert them for the wire.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

__all__ = [
    "CheckpointWritten",
    "CompactionApplied",
    "Event",
    "EventKind",
    "LimitReached",
    "LoopDetected",
    "MiddleMessage",
    "PlanUpdated",
    "ReasoningDelta",
    "ReasoningStep",
    "Reflection",
    "ReportRaised",
    "RetrievalDone",
    "RoundStarted",
    "RunCancelled",
    "RunFailed",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "RunSuspended",
    "StallDetected",
    "StepFinished",
    "StepStarted",
    "StructuredReasoning",
    "TextDelta",
    "ThinkingRecorded",
    "TodoUpdated",
    "ToolCallFailed",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolPrediction",
    "UsageUpdated",
    "event_from_dict",
    "event_to_dict",
]


@dataclass(slots=True, kw_only=True)
class Event:
    """Fields every event has."""

    kind: ClassVar[str] = "event"
    run_id: str = ""
    seq: int = 0
    time: float = 0.0


@dataclass(slots=True, kw_only=True)
class RunStarted(Event):
    """A run began (or a new turn of a session)."""

    kind: ClassVar[str] = "run_started"
    prompt: str
    workflow: str
    model: str


@dataclass(slots=True, kw_only=True)
class RunFinished(Event):
    """A run ended with an answer."""

    kind: ClassVar[str] = "run_finished"
    output: str
    stop_reason: str
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class RunFailed(Event):
    """A run ended with an error; its state was kept."""

    kind: ClassVar[str] = "run_failed"
    error: str
    error_type: str


@dataclass(slots=True, kw_only=True)
class RunCancelled(Event):
    """A run was cancelled; its state up to the last boundary was kept."""

    kind: ClassVar[str] = "run_cancelled"


@dataclass(slots=True, kw_only=True)
class UsageUpdated(Event):
    """Tokens used so far in the run, after a model response."""

    kind: ClassVar[str] = "usage"
    requests: int
    input_tokens: int
    output_tokens: int


@dataclass(slots=True, kw_only=True)
class RunSuspended(Event):
    """A run suspended (approval or explicit); resume it by id."""

    kind: ClassVar[str] = "run_suspended"
    reason: str
    payload: Any = None


@dataclass(slots=True, kw_only=True)
class RunResumed(Event):
    """A suspended or crashed run continues."""

    kind: ClassVar[str] = "run_resumed"
    pc: int


@dataclass(slots=True, kw_only=True)
class RoundStarted(Event):
    """A think–act round begins; ``round`` counts from 1."""

    kind: ClassVar[str] = "round_started"
    round: int
    tool_choice: str


@dataclass(slots=True, kw_only=True)
class ReasoningStep(Event):
    """The round's reasoning: the ``think_and_reason`` summary, or a text reply.

    ``source`` is ``"text"`` when the server answered the forced reasoning request in text.
    """

    kind: ClassVar[str] = "reasoning"
    round: int
    last_step: str
    summary: str
    source: Literal["tool", "text"] = "tool"


@dataclass(slots=True, kw_only=True)
class StructuredReasoning(Event):
    """One ``[Step N/M] [phase]`` block of structured reasoning."""

    kind: ClassVar[str] = "structured_reasoning"
    step_index: int
    total_steps: int
    phase: str
    sub_problem: str


@dataclass(slots=True, kw_only=True)
class ToolPrediction(Event):
    """Tools the model predicted it will need (``[TOOL_PREDICTION]``)."""

    kind: ClassVar[str] = "tool_prediction"
    predicted_tools: list[str]
    predicted_next_action: str


@dataclass(slots=True, kw_only=True)
class ToolCallStarted(Event):
    """A tool call began."""

    kind: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str
    arguments: Any


@dataclass(slots=True, kw_only=True)
class ToolCallFinished(Event):
    """A tool call succeeded."""

    kind: ClassVar[str] = "tool_call_finished"
    call_id: str
    name: str
    output: str
    data: Any
    duration: float


@dataclass(slots=True, kw_only=True)
class ToolCallFailed(Event):
    """A tool call failed: error, timeout, invalid arguments, unknown tool, cancelled."""

    kind: ClassVar[str] = "tool_call_failed"
    call_id: str
    name: str
    error: str
    status: str
    duration: float


@dataclass(slots=True, kw_only=True)
class MiddleMessage(Event):
    """A progress message for the user (``processing_message``)."""

    kind: ClassVar[str] = "middle_message"
    content: str


@dataclass(slots=True, kw_only=True)
class Reflection(Event):
    """One ``verify_reasoning`` verdict."""

    kind: ClassVar[str] = "reflection"
    check_type: str
    result: str
    detail: str
    attempt: int


@dataclass(slots=True, kw_only=True)
class LimitReached(Event):
    """A limit stopped the tool loop; a final answer follows."""

    kind: ClassVar[str] = "limit_reached"
    limit: Literal["rounds", "tool_calls", "step_iterations", "token_budget"]
    value: int


@dataclass(slots=True, kw_only=True)
class LoopDetected(Event):
    """Rounds repeat; ``action`` is ``corrected`` or ``ended``."""

    kind: ClassVar[str] = "loop_detected"
    signature: str
    repeats: int
    action: Literal["corrected", "ended"]


@dataclass(slots=True, kw_only=True)
class StallDetected(Event):
    """A step repeats the same call with the same result."""

    kind: ClassVar[str] = "stall_detected"
    step_id: str
    signature: str
    repeats: int
    action: str


@dataclass(slots=True, kw_only=True)
class TextDelta(Event):
    """A fragment of the model's visible answer."""

    kind: ClassVar[str] = "text_delta"
    text: str


@dataclass(slots=True, kw_only=True)
class ReasoningDelta(Event):
    """A fragment of provider reasoning (e.g. DeepSeek ``reasoning_content``)."""

    kind: ClassVar[str] = "reasoning_delta"
    text: str


@dataclass(slots=True, kw_only=True)
class ThinkingRecorded(Event):
    """A ``sequential_thinking`` call was recorded; ``data`` is the tool's UI data."""

    kind: ClassVar[str] = "thinking"
    call_id: str
    data: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class TodoUpdated(Event):
    """A ``todo_write`` call changed the plan; ``data`` is the tool's UI data."""

    kind: ClassVar[str] = "todo"
    call_id: str
    data: dict[str, Any]


@dataclass(slots=True, kw_only=True)
class PlanUpdated(Event):
    """The step plan was created or revised."""

    kind: ClassVar[str] = "plan_updated"
    revision: int
    steps: list[dict[str, Any]]
    reason: str


@dataclass(slots=True, kw_only=True)
class StepStarted(Event):
    """A plan step begins."""

    kind: ClassVar[str] = "step_started"
    step_id: str
    description: str
    index: int
    total: int


@dataclass(slots=True, kw_only=True)
class StepFinished(Event):
    """A plan step ended, with its summary."""

    kind: ClassVar[str] = "step_finished"
    step_id: str
    summary: str
    status: str


@dataclass(slots=True, kw_only=True)
class CompactionApplied(Event):
    """Older context was compacted."""

    kind: ClassVar[str] = "compaction"
    mode: str
    tokens_before: int
    tokens_after: int


@dataclass(slots=True, kw_only=True)
class RetrievalDone(Event):
    """RAG mode retrieved passages for the query (``sources`` as ``file#chunk``)."""

    kind: ClassVar[str] = "retrieval"
    query: str
    sources: list[str]
    scores: list[float]


@dataclass(slots=True, kw_only=True)
class ReportRaised(Event):
    """The content report guard flagged the user's message; the run answers with a block."""

    kind: ClassVar[str] = "report_raised"
    level: str
    category: str
    reason: str


@dataclass(slots=True, kw_only=True)
class CheckpointWritten(Event):
    """A checkpoint was written to the store."""

    kind: ClassVar[str] = "checkpoint_written"
    pc: int
    bytes_written: int


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted, RunFinished, RunFailed, RunCancelled, RunSuspended, RunResumed,
        RoundStarted, UsageUpdated, ReasoningStep, StructuredReasoning, ToolPrediction,
        ToolCallStarted,
        ToolCallFinished, ToolCallFailed, MiddleMessage, Reflection, LimitReached,
        LoopDetected, StallDetected, TextDelta, ReasoningDelta, ThinkingRecorded,
        TodoUpdated, PlanUpdated, StepStarted, StepFinished, CompactionApplied,
        RetrievalDone, ReportRaised,
        CheckpointWritten,
    )
}  # fmt: skip
EventKind = str


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as a JSON-able dict with its ``kind``."""
    data = {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    data["kind"] = event.kind
    return data


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from ``event_to_dict`` output; unknown kinds raise ``ValueError``."""
    values = dict(data)
    kind = values.pop("kind", None)
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    return cls(**values)
