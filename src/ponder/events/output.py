"""Events of the run's typed answer, of the models that gave it, and of its sub-agents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ponder.events.base import EventBase

__all__ = ["ModelFallback", "OutputPartial", "OutputRejected", "SubAgentEvent"]


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
