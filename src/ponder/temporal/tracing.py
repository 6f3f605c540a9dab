"""Tracing a run on Temporal: which span each activity's spans are children of.

A run's spans are made by its activities, on whatever worker runs each, never by the
workflow (a replay would make them again). ``ponder.prepare`` makes the run's
``invoke_agent`` span on a worker whose agent is traced and returns its W3C
``traceparent``, which the history keeps; the model request that opens a round makes
the round's span and returns its ``traceparent`` the same way. Every later activity is
given the parent its spans go under, so a run is one trace whichever worker takes it up.
`RunTrace` is the workflow's side of this: plain data, no OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ponder.events import Event, RoundStarted

__all__ = ["RunTrace"]


@dataclass(slots=True)
class RunTrace:
    """The spans a traced run's next activities go under (rounds as they begin)."""

    run_id: str
    run_parent: str
    """``traceparent`` of the run's ``invoke_agent`` span."""
    round: int = 0
    round_parent: str | None = None
    """``traceparent`` of the current round's span, once its first request made it."""
    opening: int | None = None
    """A round that began and whose span the next model request makes."""

    @classmethod
    def of(cls, spec: dict[str, Any], run_id: str) -> RunTrace | None:
        """The run's trace when its worker traced it (``spec`` from ``ponder.prepare``)."""
        parent = spec.get("traceparent")
        return cls(run_id, parent) if isinstance(parent, str) and parent else None

    def watching(self, sink: Callable[[Event], None]) -> Callable[[Event], None]:
        """``sink``, noting each round that begins first."""

        def noted(event: Event) -> None:
            if isinstance(event, RoundStarted):
                self.round, self.round_parent, self.opening = event.round, None, event.round
            sink(event)

        return noted

    def for_call(self) -> dict[str, Any]:
        """What a tool call's activity needs to trace the call."""
        parent = self.round_parent or self.run_parent
        return {"run_id": self.run_id, "parent": parent, "round": self.round}

    def for_request(self) -> dict[str, Any]:
        """What a model request's activity needs; the first of a round makes its span."""
        found = self.for_call()
        if self.opening is not None:
            found["open_round"], self.opening = self.opening, None
        return found

    def opened(self, raw: dict[str, Any]) -> None:
        """Note the span of the round a model request's result says it made."""
        parent = raw.get("round_traceparent")
        if isinstance(parent, str) and parent:
            self.round_parent = parent
