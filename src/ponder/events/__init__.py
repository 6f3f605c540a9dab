"""The typed event stream of a run.

Every event carries ``kind`` (its discriminator, equal to its class name in snake case),
``run_id``, a per-run sequence number ``seq`` and a wall-clock ``time``; the runtime fills
those in when it emits. The CLI, the SSE endpoint, the viewer and hooks all read this one
stream. ``Event`` is the discriminated union of the event classes (an exhaustive ``match``
ends in ``assert_never``); `EVENT_TYPES`, `EVENT_KINDS` and the `EventKind` check derive
from it. Events are slotted dataclasses (cheap to create on the hot path);
``event_to_dict``/``event_from_dict`` convert them for the wire, validating on the way in.

Event names follow one rule: ``kind`` is the class name in snake case, and a class name is
either ``<Subject><PastParticiple>`` for something that happened (``RunStarted``,
``ToolCallFailed``, ``PlanUpdated``, ``StallDetected``), ``<Subject>Delta`` for a fragment
of streamed text (``TextDelta``, ``ReasoningDelta``), or a noun for a record the run
produced (``Usage``, ``Thinking``, ``Todo``, ``Reflection``, ``Compaction``). Event classes
are imported from ``ponder.events``; where a name is also a ``ponder.models`` class
(``Usage``, ``TextDelta``, ``ReasoningDelta``), import the module (``from ponder import
events``) or alias one of them.

The classes live in `base` (the shared fields and closed value sets), `run`, `rounds`,
`steps`, `output` and `mcp`; import them from here. Six older names still resolve, with a
`DeprecationWarning`: ``UsageUpdated``, ``ReasoningStep``, ``ThinkingRecorded``,
``TodoUpdated``, ``CompactionApplied`` and ``RetrievalDone`` (see `DEPRECATED_NAMES`).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias, get_args

from pydantic import Field, TypeAdapter

from ponder.events.base import (
    CallStatus,
    CheckType,
    EventBase,
    ReasoningPhase,
    ReplanTrigger,
    StepEnd,
    Verdict,
)
from ponder.events.mcp import McpEvent, McpEventType
from ponder.events.output import (
    AnswerWithdrawn,
    ModelFallback,
    OutputPartial,
    OutputRejected,
    SubAgentEvent,
)
from ponder.events.rounds import (
    Compaction,
    LimitReached,
    LoopDetected,
    MiddleMessage,
    Reasoning,
    Reflection,
    ReportRaised,
    Retrieval,
    RoundStarted,
    StructuredReasoning,
    Thinking,
    Todo,
    ToolCallFailed,
    ToolCallFinished,
    ToolCallStarted,
    ToolPrediction,
)
from ponder.events.run import (
    CheckpointWritten,
    ModelDegraded,
    ModelUnanswered,
    ReasoningDelta,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    TextDelta,
    Usage,
)
from ponder.events.steps import (
    PlanReplanned,
    PlanUpdated,
    StallDetected,
    StepFinished,
    StepStarted,
)

__all__ = [
    "DEPRECATED_NAMES",
    "EVENT_KINDS",
    "EVENT_TYPES",
    "AnswerWithdrawn",
    "CallStatus",
    "CheckType",
    "CheckpointWritten",
    "Compaction",
    "Event",
    "EventBase",
    "EventKind",
    "LimitReached",
    "LoopDetected",
    "McpEvent",
    "McpEventType",
    "MiddleMessage",
    "ModelDegraded",
    "ModelFallback",
    "ModelUnanswered",
    "OutputPartial",
    "OutputRejected",
    "PlanReplanned",
    "PlanUpdated",
    "Reasoning",
    "ReasoningDelta",
    "ReasoningPhase",
    "Reflection",
    "ReplanTrigger",
    "ReportRaised",
    "Retrieval",
    "RoundStarted",
    "RunCancelled",
    "RunFailed",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "RunSuspended",
    "StallDetected",
    "StepEnd",
    "StepFinished",
    "StepStarted",
    "StructuredReasoning",
    "SubAgentEvent",
    "TextDelta",
    "Thinking",
    "Todo",
    "ToolCallFailed",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolPrediction",
    "Usage",
    "Verdict",
    "event_from_dict",
    "event_to_dict",
    "kind_of",
]

Event: TypeAlias = Annotated[
    RunStarted
    | RunFinished
    | RunFailed
    | RunCancelled
    | RunSuspended
    | RunResumed
    | RoundStarted
    | Usage
    | Reasoning
    | StructuredReasoning
    | ToolPrediction
    | ToolCallStarted
    | ToolCallFinished
    | ToolCallFailed
    | MiddleMessage
    | Reflection
    | LimitReached
    | LoopDetected
    | StallDetected
    | TextDelta
    | ReasoningDelta
    | Thinking
    | Todo
    | PlanUpdated
    | PlanReplanned
    | StepStarted
    | StepFinished
    | Compaction
    | Retrieval
    | ReportRaised
    | CheckpointWritten
    | ModelDegraded
    | ModelUnanswered
    | McpEvent
    | OutputPartial
    | OutputRejected
    | ModelFallback
    | SubAgentEvent
    | AnswerWithdrawn,
    Field(discriminator="kind"),
]

EventKind: TypeAlias = Literal[
    "run_started",
    "run_finished",
    "run_failed",
    "run_cancelled",
    "run_suspended",
    "run_resumed",
    "round_started",
    "usage",
    "reasoning",
    "structured_reasoning",
    "tool_prediction",
    "tool_call_started",
    "tool_call_finished",
    "tool_call_failed",
    "middle_message",
    "reflection",
    "limit_reached",
    "loop_detected",
    "stall_detected",
    "text_delta",
    "reasoning_delta",
    "thinking",
    "todo",
    "plan_updated",
    "plan_replanned",
    "step_started",
    "step_finished",
    "compaction",
    "retrieval",
    "report_raised",
    "checkpoint_written",
    "model_degraded",
    "model_unanswered",
    "mcp_event",
    "output_partial",
    "output_rejected",
    "model_fallback",
    "sub_agent_event",
    "answer_withdrawn",
]

EVENT_TYPES: dict[str, type[EventBase]] = {
    cls.__dataclass_fields__["kind"].default: cls for cls in get_args(get_args(Event)[0])
}
EVENT_KINDS: frozenset[str] = frozenset(EVENT_TYPES)
if EVENT_KINDS != frozenset(get_args(EventKind)):  # pragma: no cover - a programming error
    raise TypeError(f"EventKind and Event disagree: {EVENT_KINDS ^ set(get_args(EventKind))}")

DEPRECATED_NAMES: dict[str, type[EventBase]] = {
    "UsageUpdated": Usage,
    "ReasoningStep": Reasoning,
    "ThinkingRecorded": Thinking,
    "TodoUpdated": Todo,
    "CompactionApplied": Compaction,
    "RetrievalDone": Retrieval,
}
"""Older names of event classes, resolved with a `DeprecationWarning` (one grammar: see above)."""


if TYPE_CHECKING:  # type checkers see the exact classes; at run time `__getattr__` warns
    UsageUpdated = Usage
    ReasoningStep = Reasoning
    ThinkingRecorded = Thinking
    TodoUpdated = Todo
    CompactionApplied = Compaction
    RetrievalDone = Retrieval


def __getattr__(name: str) -> type[EventBase]:
    cls = DEPRECATED_NAMES.get(name)
    if cls is None:
        raise AttributeError(f"module 'ponder.events' has no attribute {name!r}")
    warnings.warn(
        f"ponder.events.{name} is deprecated; use ponder.events.{cls.__name__}",
        DeprecationWarning,
        stacklevel=2,
    )
    return cls


def kind_of(data: Mapping[str, Any]) -> EventKind:
    """The ``kind`` of an event dict; ``ValueError`` when it names no event."""
    kind = data.get("kind")
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}")
    found: EventKind = kind
    return found


def event_to_dict(event: Event) -> dict[str, Any]:
    """The event as a JSON-able dict, ``kind`` last."""
    names = _FIELD_NAMES.get(type(event))
    if names is None:
        names = _FIELD_NAMES[type(event)] = _field_names(event)
    data = {name: getattr(event, name) for name in names}
    data["kind"] = event.kind
    return data


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}
"""Each event class's fields but ``kind``, found once (``dataclasses.fields`` is slow)."""


def _field_names(event: Event) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(event) if f.name != "kind")


@cache
def _adapter() -> TypeAdapter[Event]:
    return TypeAdapter(Event)


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from ``event_to_dict`` output; ``ValueError`` when it is no event."""
    kind_of(data)
    return _adapter().validate_python(dict(data))
