"""Events of the run's typed answer, of the models that gave it, and of its sub-agents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ponder.events.base import EventBase

__all__ = ["AnswerWithdrawn", "ModelFallback", "OutputPartial", "OutputRejected", "SubAgentEvent"]


@dataclass(slots=True, kw_only=True)
class OutputPartial(EventBase):
    """A streamed structured answer so far, parsed as far as it goes (JSON)."""

    kind: Literal["output_partial"] = "output_partial"
    output: Any = None


@dataclass(slots=True, kw_only=True)
class OutputRejected(EventBase):
    """A structured answer did not validate; ``retrying`` says whether it is asked again."""

    kind: Literal["output_rejected"] = "output_rejected"
    problem: str
    attempt: int
    retrying: bool


@dataclass(slots=True, kw_only=True)
class AnswerWithdrawn(EventBase):
    """Answer text already streamed as `TextDelta` events is not the answer after all.

    A consumer drops what it showed of the answer so far. ``retrying``: the model is asked
    for the answer again (its text streams anew); otherwise the kept answer follows as one
    `TextDelta` (the withdrawn text cleaned, or built from the tool results), if any.
    """

    kind: Literal["answer_withdrawn"] = "answer_withdrawn"
    text: str
    reason: str
    retrying: bool


@dataclass(slots=True, kw_only=True)
class ModelFallback(EventBase):
    """A model failed a request its retries could not fix; the next one answers it."""

    kind: Literal["model_fallback"] = "model_fallback"
    failed: str
    error: str
    answered_by: str


@dataclass(slots=True, kw_only=True)
class SubAgentEvent(EventBase):
    """An event of a sub-agent's run, nested under the parent's call ``call_id``."""

    kind: Literal["sub_agent_event"] = "sub_agent_event"
    call_id: str
    agent: str
    event: dict[str, Any]
