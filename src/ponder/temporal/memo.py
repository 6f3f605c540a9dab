"""What a run's memo says about it: readable from the server alone, with no worker up."""

from __future__ import annotations

from typing import Any

from temporalio.client import WorkflowExecutionDescription

from ponder.temporal.workflow import MEMO_STATUS, MEMO_SUSPENSION

__all__ = ["status_from_memo"]


async def status_from_memo(run_id: str, described: WorkflowExecutionDescription) -> dict[str, Any]:
    """A running run's status as its memo has it (what it says with no worker up)."""
    memo = await described.memo()
    status = memo.get(MEMO_STATUS)
    found: dict[str, Any] = {
        "run_id": run_id,
        "status": status if status in ("suspended", "cancelling") else "running",
        "output": None,
    }
    suspension = memo.get(MEMO_SUSPENSION)
    if status == "suspended" and isinstance(suspension, dict):
        found["suspension"] = suspension
    return found
