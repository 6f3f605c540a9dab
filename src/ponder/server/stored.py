"""A checkpointed run as the server shows it: its record, listing fields and suspension.

Plain functions over `ponder.store.StoredRun` (no web framework), shared by the server and
the ``ponder runs`` commands; the checkpoint is read through its typed view
(`ponder.store.view.CheckpointView`), which raises `StoreError` when it is malformed.
"""

from __future__ import annotations

from typing import Any

from ponder.exceptions import StoreError
from ponder.server.runs import RUN_STATUSES, RunStatus
from ponder.server.runs import RunRecord as ServerRecord
from ponder.store.base import RunRecord, StoredRun

__all__ = [
    "damaged_record",
    "record_of",
    "record_summary",
    "run_status",
    "suspension_of",
]


def suspension_of(stored: StoredRun) -> dict[str, Any] | None:
    """``{"reason", "payload"}`` of a suspended run; else None. `StoreError` if malformed."""
    suspension = stored.view.suspension
    return None if suspension is None else suspension.to_dict()


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

    `StoreError` if the checkpoint is malformed or the log holds values of the wrong type.
    """
    try:
        return _record_of(stored, events)
    except (TypeError, ValueError, AttributeError) as exc:
        raise StoreError(
            f"run {stored.record.run_id!r}: the stored checkpoint has the wrong shape ({exc}); "
            "the store was changed by something other than ponder"
        ) from None


def _record_of(stored: StoredRun, events: list[dict[str, Any]]) -> ServerRecord:
    view = stored.view
    record = ServerRecord(
        run_id=stored.record.run_id,
        prompt=stored.record.prompt,
        created=stored.record.created,
        status=view.status,
        output=view.output,
        stop_reason=view.stop_reason,
        is_typed=view.is_typed,
        usage=dict(view.usage),
        events=events,
    )
    for event in events:
        record.fold(event)  # the log's usage and outcome are the ones a live run showed
    record.status = view.status
    record.suspension = suspension_of(stored)
    failure = next((e for e in reversed(events) if e.get("kind") == "run_failed"), None)
    if record.status in ("failed", "cancelled") and failure is not None:
        record.error = f"{failure.get('error_type')}: {failure.get('error')}"
    return record
