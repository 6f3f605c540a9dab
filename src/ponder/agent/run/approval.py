"""Human approval of tool calls: what a suspended run asks, and what a resume value means.

A tool marked ``requires_approval`` suspends the run with the pending calls as payload.
The run is resumed with a decision: ``"approve"`` / ``True`` or ``"reject"`` / ``False``
for every pending call, or a mapping from call id to ``"approve"``, ``"reject"``,
``{"action": "reject", "reason": "..."}`` or ``{"action": "edit", "arguments": {...}}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ponder.exceptions import UserError
from ponder.messages import ToolCallPart, ToolMessage
from ponder.tools.tool import ToolResult

__all__ = ["approval_payload", "check_decision", "decide"]

_ALL = {"approve": "approve", "reject": "reject", True: "approve", False: "reject"}


def approval_payload(calls: Sequence[ToolCallPart]) -> dict[str, Any]:
    """The suspension payload: the calls that wait for a decision."""
    return {
        "calls": [
            {"id": c.id, "name": c.name, "arguments": c.args if c.args is not None else c.arguments}
            for c in calls
        ]
    }


def _check_one(call_id: str, decision: Any) -> None:
    if decision in ("approve", "reject"):
        return
    if isinstance(decision, dict):
        action = decision.get("action")
        if action == "reject":
            return
        if action == "edit" and isinstance(decision.get("arguments"), dict):
            return
    raise UserError(
        f"decision for call {call_id!r} must be 'approve', 'reject', "
        "{'action': 'reject', 'reason': ...} or {'action': 'edit', 'arguments': {...}}; "
        f"got {decision!r}"
    )


def check_decision(value: Any, pending: Sequence[str]) -> None:
    """Raise ``UserError`` unless ``value`` decides every pending call."""
    if isinstance(value, bool | str) and value in _ALL:
        return
    if not isinstance(value, dict):
        raise UserError(
            "resume a run waiting for approval with 'approve', 'reject', or a mapping "
            f"from call id to a decision; got {value!r}"
        )
    missing = [c for c in pending if c not in value]
    if missing:
        raise UserError(f"no decision for pending call(s): {', '.join(missing)}")
    for call_id in pending:
        _check_one(call_id, value[call_id])


def decide(call: ToolCallPart, value: Any) -> ToolCallPart | ToolMessage | None:
    """Apply a checked decision: the call to run, the refusal to record, or None (undecided)."""
    if value is None:
        return None
    decision = _ALL[value] if isinstance(value, bool | str) else value[call.id]
    if decision == "approve":
        return call
    if isinstance(decision, dict) and decision["action"] == "edit":
        args = decision["arguments"]
        return ToolCallPart(id=call.id, name=call.name, arguments=json.dumps(args), args=args)
    reason = decision.get("reason", "") if isinstance(decision, dict) else ""
    refusal = "the user rejected this call" + (f": {reason}" if reason else "")
    return ToolResult.fail(refusal).to_message(call)
