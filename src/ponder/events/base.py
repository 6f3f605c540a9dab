"""What every event shares: the stamped fields, and the closed value sets of event fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ponder.status import CallStatus

__all__ = [
    "CallStatus",
    "CheckType",
    "EventBase",
    "ReasoningPhase",
    "ReplanTrigger",
    "StepEnd",
    "Verdict",
]

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
