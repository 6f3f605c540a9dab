"""Reading a checkpointed run for display: its suspension and what it waits for.

That is the calls awaiting approval or the MCP servers' questions awaiting an answer.
Plain functions over `ponder.store.StoredRun` (no web framework), shared by the server
and the ``ponder runs`` commands.
"""

from __future__ import annotations

from typing import Any

from ponder.exceptions import StoreError
from ponder.server.runs import RUN_STATUSES, RunStatus
from ponder.server.runs import RunRecord as ServerRecord
from ponder.store.base import RunRecord, StoredRun

__all__ = [
    "damaged_record",
    "last_seq",
    "pending_calls",
    "pending_questions",
    "record_of",
    "record_summary",
    "run_status",
    "suspension_of",
]


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


def run_status(text: str) -> RunStatus:
    """The server's status for a stored status (an unknown one is ``failed``)."""
    return next((s for s in RUN_STATUSES if s == text), "failed")


def _stored_state(stored: StoredRun) -> dict[str, Any]:
    vm = stored.header.get("vm")
    state = vm.get("state") if isinstance(vm, dict) else None
    return state if isinstance(state, dict) else {}


def damaged_record(entry: RunRecord, error: StoreError) -> ServerRecord:
    """A stored run the store cannot read back: ``failed``, with the store's reason.

    Listed and looked up alike; never kept, as the damage may be passing (a busy file).
    """
    return ServerRecord(
        run_id=entry.run_id,
        prompt=entry.prompt,
        created=entry.created,
        status="failed",
        error=f"StoreError: {error}",
    )


def record_of(stored: StoredRun, events: list[dict[str, Any]]) -> ServerRecord:
    """The server's record of a stored run: its outcome from the checkpoint, its event log.

    `StoreError` when the checkpoint or the log holds values of the wrong type.
    """
    try:
        return _record_of(stored, events)
    except (TypeError, ValueError, AttributeError) as exc:
        raise StoreError(
            f"run {stored.record.run_id!r}: the stored checkpoint has the wrong shape ({exc}); "
            "the store was changed by something other than ponder"
        ) from None


def _record_of(stored: StoredRun, events: list[dict[str, Any]]) -> ServerRecord:
    state = _stored_state(stored)
    usage = state.get("usage")
    record = ServerRecord(
        run_id=stored.record.run_id,
        prompt=stored.record.prompt,
        created=stored.record.created,
        status=run_status(stored.record.status),
        output=state.get("output") if isinstance(state.get("output"), str) else None,
        stop_reason=state.get("stop_reason") or None,
        is_typed=state.get("output_schema") is not None,
        usage={k: int(v) for k, v in usage.items()} if isinstance(usage, dict) else {},
        events=events,
    )
    for event in events:
        record.fold(event)  # the log's usage and outcome are the ones a live run showed
    record.status = run_status(stored.record.status)
    record.suspension = suspension_of(stored)
    failure = next((e for e in reversed(events) if e.get("kind") == "run_failed"), None)
    if record.status in ("failed", "cancelled") and failure is not None:
        record.error = f"{failure.get('error_type')}: {failure.get('error')}"
    return record


def last_seq(stored: StoredRun) -> int:
    """The ``seq`` of the stored run's last event, from its checkpoint."""
    return int(_stored_state(stored).get("event_seq", 0))
