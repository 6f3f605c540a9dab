"""Runs the server knows about: a small registry interface and its in-memory implementation.

A `RunRecord` is plain data — the prompt, status, outcome and the run's event log (JSON
dicts with increasing ``seq``), so an SSE client can replay from any ``Last-Event-ID``.
The registry owns the records and lets readers wait for new events. It folds the
events it is given into the record: ``run_suspended`` marks the run suspended with its
pending calls, ``run_resumed`` marks it running again, ``usage`` keeps the token total,
``run_finished`` gives the output and the stop reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol, assert_never

from ponder.agent.limits import UsageLimits
from ponder.events import kind_of
from ponder.status import RUN_STATUSES, RunStatus

__all__ = [
    "RUN_STATUSES",
    "TERMINAL_KINDS",
    "MemoryRunRegistry",
    "RunRecord",
    "RunRegistry",
    "RunStatus",
    "Turn",
    "to_json_safe",
]

TERMINAL_KINDS = frozenset({"run_finished", "run_failed"})


@dataclass(frozen=True, slots=True)
class Turn:
    """What a started run is besides its prompt: the session it continues, its limits."""

    session_id: str | None = None
    limits: UsageLimits | None = None


_USAGE_KEYS = ("requests", "input_tokens", "output_tokens")


def _cost(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def to_json_safe(value: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``value`` that ``json.dumps`` accepts (unknown objects become strings)."""
    result: dict[str, Any] = json.loads(json.dumps(value, ensure_ascii=False, default=str))
    return result


@dataclass
class RunRecord:
    """One run as the server sees it."""

    run_id: str
    prompt: str
    created: float = field(default_factory=time.time)
    status: RunStatus = "running"
    output: str | None = None
    error: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cost: float | None = None
    """The run's price in USD so far, where the model's price is known."""
    events: list[dict[str, Any]] = field(default_factory=list)
    suspension: dict[str, Any] | None = None
    """For a suspended run: ``{"reason", "payload"}`` (approval: ``payload["calls"]``)."""
    stop_reason: str | None = None
    """Why a completed run stopped (``run_finished``'s ``stop_reason``)."""
    is_typed: bool = False
    """True when the run's answer has an output type (its ``output`` is that JSON)."""

    @property
    def is_done(self) -> bool:
        """True once the run has ended for good (a suspended run may still continue)."""
        return self.status not in ("running", "suspended")

    def fold(self, event: dict[str, Any]) -> None:
        """Update the status, suspension and usage from one of the run's events."""
        match kind := kind_of(event):
            case "run_suspended":
                self.status = "suspended"
                self.suspension = {"reason": event.get("reason"), "payload": event.get("payload")}
            case "run_resumed":
                self.status, self.suspension = "running", None
            case "usage":
                self.usage = {k: int(event.get(k) or 0) for k in _USAGE_KEYS}
                self.cost = _cost(event.get("cost"))
            case "run_finished":
                if isinstance(event.get("usage"), dict):
                    self.usage = dict(event["usage"])
                self.output = str(event.get("output") or "")
                self.stop_reason = str(event.get("stop_reason") or "") or None
                self.cost = _cost(event.get("cost"))
            case (
                "run_started"
                | "run_failed"
                | "run_cancelled"
                | "round_started"
                | "reasoning"
                | "structured_reasoning"
                | "tool_prediction"
                | "tool_call_started"
                | "tool_call_finished"
                | "tool_call_failed"
                | "middle_message"
                | "reflection"
                | "limit_reached"
                | "loop_detected"
                | "stall_detected"
                | "text_delta"
                | "reasoning_delta"
                | "thinking"
                | "todo"
                | "plan_updated"
                | "step_started"
                | "step_finished"
                | "compaction"
                | "retrieval"
                | "report_raised"
                | "checkpoint_written"
                | "model_degraded"
                | "model_unanswered"
                | "plan_replanned"
                | "mcp_event"
                | "output_partial"
                | "output_rejected"
                | "model_fallback"
                | "sub_agent_event"
                | "answer_withdrawn"
            ):
                pass
            case _:
                assert_never(kind)

    @property
    def last_seq(self) -> int:
        """The ``seq`` of the latest event (0 before the first)."""
        return int(self.events[-1]["seq"]) if self.events else 0

    def summary(self) -> dict[str, Any]:
        """The record without its event log."""
        return {
            "id": self.run_id,
            "run_id": self.run_id,
            "prompt": self.prompt,
            "created": self.created,
            "status": self.status,
            "output": self.output,
            "error": self.error,
            "stop_reason": self.stop_reason,
            "usage": self.usage,
            "cost": self.cost,
            "event_count": len(self.events),
            "suspension": self.suspension,
        }


class RunRegistry(Protocol):
    """Where runs and their event logs live."""

    def create(self, run_id: str, prompt: str) -> RunRecord:
        """Register a new running run."""
        ...

    def add(self, record: RunRecord) -> None:
        """Register a run known from elsewhere (a store), with its current status."""
        ...

    def get(self, run_id: str) -> RunRecord | None:
        """The run with this id, if known."""
        ...

    def list_runs(self, limit: int) -> list[RunRecord]:
        """The newest runs first."""
        ...

    async def append(self, run_id: str, event: dict[str, Any]) -> None:
        """Add an event to a run's log and wake its readers."""
        ...

    async def finish(
        self, run_id: str, status: RunStatus, *, output: str | None = None, error: str | None = None
    ) -> None:
        """Record how a run ended and wake its readers."""
        ...

    def events_after(self, run_id: str, seq: int) -> list[dict[str, Any]]:
        """The run's events with ``seq`` greater than ``seq``."""
        ...

    async def wait(self, run_id: str, seq: int, timeout: float) -> None:
        """Return when the run has events after ``seq``, has ended, or ``timeout`` passed."""
        ...


class MemoryRunRegistry:
    """Runs kept in memory; the oldest finished runs are dropped beyond ``max_runs``."""

    def __init__(self, max_runs: int = 1000) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[str, RunRecord] = OrderedDict()
        self._changed: dict[str, asyncio.Condition] = {}

    def create(self, run_id: str, prompt: str) -> RunRecord:
        """Register a new running run."""
        record = RunRecord(run_id=run_id, prompt=prompt)
        self.add(record)
        return record

    def add(self, record: RunRecord) -> None:
        """Register a run known from elsewhere (a store), with its current status."""
        self._runs[record.run_id] = record
        self._changed[record.run_id] = asyncio.Condition()
        self._evict()

    def _evict(self) -> None:
        finished = [r.run_id for r in self._runs.values() if r.is_done]
        while len(self._runs) > self.max_runs and finished:
            run_id = finished.pop(0)
            del self._runs[run_id]
            self._changed.pop(run_id, None)

    def get(self, run_id: str) -> RunRecord | None:
        """The run with this id, if known."""
        return self._runs.get(run_id)

    def list_runs(self, limit: int) -> list[RunRecord]:
        """The newest runs first."""
        return list(reversed(self._runs.values()))[:limit]

    async def _notify(self, run_id: str) -> None:
        condition = self._changed.get(run_id)
        if condition is not None:
            async with condition:
                condition.notify_all()

    async def append(self, run_id: str, event: dict[str, Any]) -> None:
        """Add an event to a run's log and wake its readers."""
        record = self._runs[run_id]
        safe = to_json_safe(event)
        if int(safe.get("seq") or 0) <= record.last_seq:
            safe["seq"] = record.last_seq + 1  # a resumed run numbers its events afresh
        record.events.append(safe)
        record.fold(safe)
        await self._notify(run_id)

    async def finish(
        self, run_id: str, status: RunStatus, *, output: str | None = None, error: str | None = None
    ) -> None:
        """Record how a run ended and wake its readers."""
        record = self._runs[run_id]
        record.status, record.output, record.error = status, output, error
        record.suspension = None
        await self._notify(run_id)

    def events_after(self, run_id: str, seq: int) -> list[dict[str, Any]]:
        """The run's events with ``seq`` greater than ``seq``."""
        record = self._runs.get(run_id)
        if record is None:
            return []
        events = record.events
        start = len(events)
        while start > 0 and int(events[start - 1]["seq"]) > seq:
            start -= 1
        return events[start:]

    async def wait(self, run_id: str, seq: int, timeout: float) -> None:
        """Return when the run has events after ``seq``, has ended, or ``timeout`` passed."""
        record, condition = self._runs.get(run_id), self._changed.get(run_id)
        if record is None or condition is None:
            return

        def ready() -> bool:
            return record.is_done or record.last_seq > seq

        async with condition:
            try:
                await asyncio.wait_for(condition.wait_for(ready), timeout)
            except TimeoutError:
                return
