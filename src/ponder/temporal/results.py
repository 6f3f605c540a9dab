"""What a finished (or waiting) workflow run returns: its outcome, usage and ledger as JSON."""

from __future__ import annotations

from typing import Any

from ponder.agent.run.state import RunState

__all__ = ["result_of"]


def result_of(state: RunState) -> dict[str, Any]:
    """The run's result: status, output, stop reason, usage, cost, counts and messages."""
    return {
        "run_id": state.run_id,
        "status": state.status,
        "output": state.output or "",
        "stop_reason": state.stop_reason or "",
        "usage": state.usage.model_dump(mode="json"),
        "cost": state.cost,
        "rounds": state.rounds,
        "tool_calls": state.tool_calls,
        "messages": state.ledger.to_json(),
    }
