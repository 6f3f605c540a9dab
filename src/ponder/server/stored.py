"""Reading a checkpointed run for display: its suspension and what it waits for.

That is the calls awaiting approval or the MCP servers' questions awaiting an answer.
Plain functions over `ponder.store.StoredRun` (no web framework), shared by the server
and the ``ponder runs`` commands.
"""

from __future__ import annotations

from typing import Any

from ponder.store.base import RunRecord, StoredRun

__all__ = ["pending_calls", "pending_questions", "record_summary", "suspension_of"]


def suspension_of(stored: StoredRun) -> dict[str, Any] | None:
    """``{"reason", "payload"}`` of a suspended run, from its VM snapshot; else None."""
    if stored.record.status != "suspended":
        return None
    vm = stored.header.get("vm")
    found = vm.get("suspension") if isinstance(vm, dict) else None
    if not isinstance(found, list | tuple) or len(found) != 2:
        return None
    return {"reason": str(found[0]), "payload": found[1]}


def pending_calls(suspension: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The tool calls an approval suspension waits on (``id``, ``name``, ``arguments``)."""
    if not suspension or suspension.get("reason") != "approval":
        return []
    payload = suspension.get("payload")
    calls = payload.get("calls") if isinstance(payload, dict) else None
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def pending_questions(suspension: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The MCP servers' questions an elicitation suspension waits on."""
    if not suspension or suspension.get("reason") != "elicitation":
        return []
    payload = suspension.get("payload")
    found = payload.get("elicitations") if isinstance(payload, dict) else None
    return [q for q in found if isinstance(q, dict)] if isinstance(found, list) else []


def record_summary(record: RunRecord) -> dict[str, Any]:
    """A stored run's listing fields as a JSON-able dict."""
    return {
        "id": record.run_id,
        "status": record.status,
        "created": record.created,
        "updated": record.updated,
        "prompt": record.prompt,
        "messages": record.messages,
    }
