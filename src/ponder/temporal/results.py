"""What a finished (or waiting) workflow run returns, and the `RunResult` made of it."""

from __future__ import annotations

from typing import Any

from ponder.agent.result import RunResult
from ponder.agent.run.state import RunState
from ponder.messages import messages_from_json
from ponder.models.base import Usage

__all__ = ["result_from_data", "result_of"]


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


def result_from_data(data: dict[str, Any]) -> RunResult:
    """The `RunResult` a workflow's result (or its ``result`` Query) describes."""
    result = RunResult(
        text=data.get("output") or "",
        status=data["status"],
        stop_reason=data.get("stop_reason") or "",
        messages=messages_from_json(data.get("messages") or []),
        usage=Usage.model_validate(data.get("usage") or {}),
        cost=data.get("cost"),
        run_id=data["run_id"],
        rounds=int(data.get("rounds", 0)),
        tool_calls=int(data.get("tool_calls", 0)),
    )
    suspension = data.get("suspension")
    if suspension is not None:
        return result.suspended(suspension["reason"], suspension["payload"])
    return result
