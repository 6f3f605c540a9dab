"""Run lifecycle, model and durability events: a run's start and end, usage, deltas."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ponder.events.base import EventBase

__all__ = [
    "CheckpointWritten",
    "ModelDegraded",
    "ModelUnanswered",
    "ReasoningDelta",
    "RunCancelled",
    "RunFailed",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "RunSuspended",
    "TextDelta",
    "Usage",
]


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
    cost: float | None = None
    """The run's price in USD, where the model's price is known (see ``ponder.cost``)."""


@dataclass(slots=True, kw_only=True)
class RunFailed(EventBase):
    """A run ended with an error; its state was kept."""

    kind: Literal["run_failed"] = "run_failed"
    error: str
    error_type: str


@dataclass(slots=True, kw_only=True)
class RunCancelled(EventBase):
    """A run was cancelled; its state up to the last boundary was kept.

    ``resumable`` is true when it was interrupted (`RunStream.interrupt`, Ctrl-C in
    ``ponder run``): its status is then ``interrupted`` and ``resume`` continues it.
    """

    kind: Literal["run_cancelled"] = "run_cancelled"
    resumable: bool = False


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
class Usage(EventBase):
    """Tokens used so far in the run, after a model response, and their price in USD.

    ``purpose`` and ``latency`` say what the request was for and how long it took; ``cost``
    is None while the model's price is unknown (tokens only).
    """

    kind: Literal["usage"] = "usage"
    requests: int
    input_tokens: int
    output_tokens: int
    purpose: str = ""
    """What the request was for: ``reasoning``, ``action``, ``compaction``, ``decompose``, ..."""
    cached_input_tokens: int = 0
    """Of ``input_tokens``, those read from the provider's prompt cache."""
    latency: float | None = None
    """Seconds the model request took, retries included (None: not measured)."""
    cost: float | None = None


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
