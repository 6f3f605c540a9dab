"""`RunResult`: what a finished run returns."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ponder.agent.run.state import RunState, RunStatus
from ponder.messages import Message
from ponder.models.base import Usage

__all__ = ["RunResult"]


@dataclass(frozen=True, slots=True)
class RunResult:
    """The answer, why the run stopped, the whole conversation, and the tokens used."""

    output: str
    status: RunStatus
    stop_reason: str
    messages: list[Message]
    usage: Usage
    run_id: str
    rounds: int
    tool_calls: int
    suspension: dict[str, Any] | None = None
    """For a suspended run: ``{"reason": ..., "payload": ...}`` (resume it by ``run_id``)."""
    cost: float | None = None
    """The price of the run's model requests in USD; None when the model's price is unknown."""

    @classmethod
    def from_state(cls, state: RunState) -> RunResult:
        """The result recorded in a finished run's state."""
        return cls(
            output=state.output or "",
            status=state.status,
            stop_reason=state.stop_reason or "",
            messages=list(state.ledger.messages),
            usage=state.usage,
            run_id=state.run_id,
            rounds=state.rounds,
            tool_calls=state.tool_calls,
            cost=state.cost,
        )

    def suspended(self, reason: str, payload: Any) -> RunResult:
        """A copy of the result, marked as suspended for ``reason``."""
        return dataclasses.replace(
            self, status="suspended", suspension={"reason": reason, "payload": payload}
        )
