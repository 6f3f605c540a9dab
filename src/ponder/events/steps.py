"""The step-driven workflow's events: the plan, each step, stalls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ponder.events.base import EventBase, ReplanTrigger, StepEnd

__all__ = [
    "PlanReplanned",
    "PlanUpdated",
    "StallDetected",
    "StepFinished",
    "StepStarted",
]


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
class StallDetected(EventBase):
    """A step repeats the same call with the same result; ``action`` is what was done."""

    kind: Literal["stall_detected"] = "stall_detected"
    step_id: str
    signature: str
    repeats: int
    action: Literal["corrected", "replan", "skip", "abandon"]
