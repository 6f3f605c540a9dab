"""The typed event stream of a run.

Every event carries ``kind`` (its discriminator, equal to its class name in snake case),
``run_id``, a per-run sequence number ``seq`` and a wall-clock ``time``; the runtime fills
those in when it emits. The CLI, the SSE endpoint, the viewer and hooks all read this one
stream. ``Event`` is the discriminated union of the event classes (an exhaustive ``match``
ends in ``assert_never``); `EVENT_TYPES`, `EVENT_KINDS` and the `EventKind` check derive
from it. Events are slotted dataclasses (cheap to create on the hot path);
``event_to_dict``/``event_from_dict`` convert them for the wire, validating on the way in.

Six classes keep their older names as aliases: ``UsageUpdated``, ``ReasoningStep``,
``ThinkingRecorded``, ``TodoUpdated``, ``CompactionApplied``, ``RetrievalDone``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal, TypeAlias, get_args

from pydantic import Field, TypeAdapter

__all__ = [
 "EVENT_KINDS", "EVENT_TYPES", "CallStatus", "CheckType", "CheckpointWritten", "Compaction",
 "CompactionApplied", "Event", "EventBase", "EventKind", "LimitReached", "LoopDetected",
 "MiddleMessage", "ModelDegraded", "ModelUnanswered", "PlanReplanned", "PlanUpdated", "Reasoning",
 "ReasoningDelta", "ReasoningPhase", "ReasoningStep", "Reflection", "ReplanTrigger",
 "ReportRaised", "Retrieval", "RetrievalDone", "RoundStarted", "RunCancelled", "RunFailed",
 "RunFinished", "RunResumed", "RunStarted", "RunSuspended", "StallDetected", "StepEnd",
 "StepFinished", "StepStarted", "StructuredReasoning", "TextDelta", "Thinking", "ThinkingRecorded",
 "Todo", "TodoUpdated", "ToolCallFailed", "ToolCallFinished", "ToolCallStarted", "ToolPrediction",
 "Usage", "UsageUpdated", "Verdict", "event_from_dict", "event_to_dict", "kind_of",
]  # fmt: skip

CallStatus = Literal["ok", "error", "timeout", "invalid_arguments", "unknown_tool", "cancelled"]
CheckType = Literal["self_check", "contradiction_check", "completeness_check"]
Verdict = Literal["pass", "warning", "fail"]
ReasoningPhase = Literal["analyze", "plan", "execute", "verify"]
ReplanTrigger = Literal["stall", "update_step"]
StepEnd = Literal["done", "stopped", "limit", "budget", "skipped", "replaced", "abandoned"]


@dataclass(slots=True, kw_only=True)
class EventBase:
    """Fields every event has (the runtime stamps them when it emits)."""

    run_id: str = ""
    seq: int = 0
    time: float = 0.0


@dataclass(slots=True, kw_only=True)
class RunStarted(EventBase):
    """A run began (or a new turn of a session)."""

    kind: Literal["run_started"] = "run_started"
    prompt: str
    workflow: str
    model: str


@dataclass(slots=True, kw_only=True)
class RunFinished(EventBase):
    """A run ended with an answer."""

    kind: Literal["run_finished"] = "run_finished"
    output: str
    stop_reason: str
    usage: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class RunFailed(EventBase):
    """A run ended with an error; its state was kept."""

    kind: Literal["run_failed"] = "run_failed"
    error: str
    error_type: str


@dataclass(slots=True, kw_only=True)
class RunCancelled(EventBase):
    """A run was cancelled; its state up to the last boundary was kept."""

    kind: Literal["run_cancelled"] = "run_cancelled"


@dataclass(slots=True, kw_only=True)
class Usage(EventBase):
    """Tokens used so far in the run, after a model response."""

    kind: Literal["usage"] = "usage"
    requests: int
    input_tokens: int
    output_tokens: int


@dataclass(slots=True, kw_only=True)
class RunSuspended(EventBase):
    """A run suspended (approval or explicit); resume it by id."""

    kind: Literal["run_suspended"] = "run_suspended"
    reason: str
    payload: Any = None


@dataclass(slots=True, kw_only=True)
class RunResumed(EventBase):
    """A suspended or crashed run continues."""

    kind: Literal["run_resumed"] = "run_resumed"
    pc: int


@dataclass(slots=True, kw_only=True)
class RoundStarted(EventBase):
    """A think–act round begins; ``round`` counts from 1."""

    kind: Literal["round_started"] = "round_started"
    round: int
    tool_choice: Literal["auto", "required"]


@dataclass(slots=True, kw_only=True)
class Reasoning(EventBase):
    """The model's ``think_and_reason`` summary for this round."""

    kind: Literal["reasoning"] = "reasoning"
    round: int
    last_step: str
    summary: str


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
    limit: Literal["rounds", "tool_calls", "step_iterations", "token_budget"]
    value: int


@dataclass(slots=True, kw_only=True)
class LoopDetected(EventBase):
    """Rounds repeat: the model was ``corrected``, or the run ``ended`` with an answer."""

    kind: Literal["loop_detected"] = "loop_detected"
    signature: str
    repeats: int
    action: Literal["corrected", "ended"]


@dataclass(slots=True, kw_only=True)
class StallDetected(EventBase):
    """A step repeats the same call with the same result; ``action`` is what was done."""

    kind: Literal["stall_detected"] = "stall_detected"
    step_id: str
    signature: str
    repeats: int
    action: Literal["corrected", "replan", "skip", "abandon"]


@dataclass(slots=True, kw_only=True)
class TextDelta(EventBase):
    """A fragment of the model's visible answer."""

    kind: Literal["text_delta"] = "text_delta"
    text: str


@dataclass(slots=True, kw_only=True)
class ReasoningDelta(EventBase):
    """A fragment of provider reasoning (e.g. DeepSeek ``reasoning_content``)."""

    kind: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


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
class PlanUpdated(EventBase):
    """The step plan was created or revised."""

    kind: Literal["plan_updated"] = "plan_updated"
    revision: int
    steps: list[dict[str, Any]]
    reason: str


@dataclass(slots=True, kw_only=True)
class PlanReplanned(EventBase):
    """The remaining work was planned anew (``trigger``: ``stall`` or ``update_step``).

    ``replaced``: the unfinished steps' ids the new plan dropped; ``plan_updated`` follows.
    """

    kind: Literal["plan_replanned"] = "plan_replanned"
    revision: int
    trigger: ReplanTrigger
    reason: str
    replaced: list[str]
    steps: list[dict[str, Any]]


@dataclass(slots=True, kw_only=True)
class StepStarted(EventBase):
    """A plan step begins: ``index`` of ``total`` is its position in the current plan."""

    kind: Literal["step_started"] = "step_started"
    step_id: str
    description: str
    index: int
    total: int


@dataclass(slots=True, kw_only=True)
class StepFinished(EventBase):
    """A plan step ended, with its summary."""

    kind: Literal["step_finished"] = "step_finished"
    step_id: str
    summary: str
    status: StepEnd


@dataclass(slots=True, kw_only=True)
class Compaction(EventBase):
    """Older context was compacted."""

    kind: Literal["compaction"] = "compaction"
    mode: Literal["compact", "slide", "steps"]
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


@dataclass(slots=True, kw_only=True)
class CheckpointWritten(EventBase):
    """A checkpoint was written to the store."""

    kind: Literal["checkpoint_written"] = "checkpoint_written"
    pc: int
    bytes_written: int


@dataclass(slots=True, kw_only=True)
class ModelDegraded(EventBase):
    """The provider lacks a feature a request needed; ponder sent something else instead.

    ``source`` is ``profile`` (the provider family's profile or the config said so) or
    ``detected`` (an error of the provider named the feature; it stays off for that model
    for the rest of the process). Reported once per feature and run.
    """

    kind: Literal["model_degraded"] = "model_degraded"
    model: str
    feature: str
    action: str
    source: Literal["profile", "detected"]


@dataclass(slots=True, kw_only=True)
class ModelUnanswered(EventBase):
    """A response carried no answer (``empty``, or withheld: ``content_filter``).

    ``retrying`` says whether the request is sent once more; when it is not, the run
    stops with the stop reason ``empty_answer`` or ``content_filter``.
    """

    kind: Literal["model_unanswered"] = "model_unanswered"
    reason: Literal["empty", "content_filter"]
    retrying: bool


Event: TypeAlias = Annotated[
    RunStarted | RunFinished | RunFailed | RunCancelled | RunSuspended | RunResumed
    | RoundStarted | Usage | Reasoning | StructuredReasoning | ToolPrediction
    | ToolCallStarted | ToolCallFinished | ToolCallFailed | MiddleMessage | Reflection
    | LimitReached | LoopDetected | StallDetected | TextDelta | ReasoningDelta | Thinking
    | Todo | PlanUpdated | PlanReplanned | StepStarted | StepFinished | Compaction | Retrieval
    | ReportRaised | CheckpointWritten | ModelDegraded | ModelUnanswered,
    Field(discriminator="kind"),
]  # fmt: skip

EventKind: TypeAlias = Literal[
 "run_started", "run_finished", "run_failed", "run_cancelled", "run_suspended", "run_resumed",
 "round_started", "usage", "reasoning", "structured_reasoning", "tool_prediction",
 "tool_call_started", "tool_call_finished", "tool_call_failed", "middle_message", "reflection",
 "limit_reached", "loop_detected", "stall_detected", "text_delta", "reasoning_delta", "thinking",
 "todo", "plan_updated", "plan_replanned", "step_started", "step_finished", "compaction",
 "retrieval", "report_raised", "checkpoint_written", "model_degraded", "model_unanswered",
]  # fmt: skip

EVENT_TYPES: dict[str, type[EventBase]] = {
    cls.__dataclass_fields__["kind"].default: cls for cls in get_args(get_args(Event)[0])
}
EVENT_KINDS: frozenset[str] = frozenset(EVENT_TYPES)
if EVENT_KINDS != frozenset(get_args(EventKind)):  # pragma: no cover - a programming error
    raise TypeError(f"EventKind and Event disagree: {EVENT_KINDS ^ set(get_args(EventKind))}")

UsageUpdated: TypeAlias = Usage
ReasoningStep: TypeAlias = Reasoning
ThinkingRecorded: TypeAlias = Thinking
TodoUpdated: TypeAlias = Todo
CompactionApplied: TypeAlias = Compaction
RetrievalDone: TypeAlias = Retrieval


def kind_of(data: Mapping[str, Any]) -> EventKind:
    """The ``kind`` of an event dict; ``ValueError`` when it names no event."""
    kind = data.get("kind")
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    found: EventKind = kind
    return found


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as a JSON-able dict, ``kind`` last."""
    data = {f.name: getattr(event, f.name) for f in dataclasses.fields(event) if f.name != "kind"}
    data["kind"] = event.kind
    return data


@cache
def _adapter() -> TypeAdapter[Event]:
    return TypeAdapter(Event)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from ``event_to_dict`` output; ``ValueError`` when it is no event."""
    kind_of(data)
    return _adapter().validate_python(dict(data))
