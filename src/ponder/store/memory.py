"""`MemoryStore`: checkpoints in this process's memory (tests, short-lived agents).

It keeps the same JSON the other stores write, so a run behaves identically whichever
store holds it.
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass, field, replace
from typing import Any

from ponder.exceptions import RunLeaseError, SessionLeaseError, StoreError
from ponder.jsontext import json_encoder
from ponder.store.base import Checkpoint, RunRecord, Store, StoredRun, check_header
from ponder.store.sql import CONFLICT, event_json

__all__ = ["MemoryStore"]


@dataclass
class _Run:
    record: RunRecord
    session_id: str | None = None
    header: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    effects: dict[str, str] = field(default_factory=dict)
    events: dict[int, str] = field(default_factory=dict)


_COMPACT = json_encoder(separators=(",", ":"))


def _dump(value: Any) -> str:
    return _COMPACT(value)


class MemoryStore(Store):
    """Checkpoints in a dict."""

    def __init__(self) -> None:
        self._runs: dict[str, _Run] = {}
        self._secrets: dict[tuple[str, str], dict[str, Any]] = {}
        self._sessions: dict[str, tuple[str, float]] = {}
        """Each session's turn lease: its owner and when it ends."""

    async def get_secret(self, scope: str, name: str) -> dict[str, Any] | None:
        """A kept value, or None."""
        found = self._secrets.get((scope, name))
        return dict(found) if found is not None else None

    async def set_secret(self, scope: str, name: str, value: dict[str, Any]) -> None:
        """Keep ``value``."""
        self._secrets[(scope, name)] = dict(value)

    def _run(self, run_id: str) -> _Run:
        found = self._runs.get(run_id)
        if found is None:
            raise StoreError(f"no stored run with id {run_id!r}")
        return found

    def _ensure(self, run_id: str, prompt: str = "") -> _Run:
        if run_id not in self._runs:
            now = time.time()
            self._runs[run_id] = _Run(RunRecord(run_id, "running", now, now, prompt, 0))
        return self._runs[run_id]

    async def write(self, checkpoint: Checkpoint) -> int:
        """Store the header and append the new messages."""
        run = self._ensure(checkpoint.run_id, checkpoint.prompt)
        holder = run.record.lease_owner
        if checkpoint.owner is not None and holder not in (None, checkpoint.owner):
            raise RunLeaseError(checkpoint.run_id, holder)
        if (
            checkpoint.messages
            and not checkpoint.rewrite
            and checkpoint.first_index < len(run.messages)
        ):
            raise RunLeaseError(checkpoint.run_id, None, CONFLICT)
        run.session_id = checkpoint.session_id
        header = _dump(checkpoint.header)
        bodies = [_dump(m) for m in checkpoint.messages]
        if checkpoint.rewrite:
            run.messages.clear()
        run.messages.extend(bodies)
        if checkpoint.drop_effects:
            run.effects.clear()
        run.events.update((int(e["seq"]), event_json(e)) for e in checkpoint.events)
        run.header = json.loads(header)
        record = run.record
        run.record = replace(
            record,
            status="cancelled" if record.status == "cancelled" else checkpoint.status,
            updated=time.time(),
            prompt=record.prompt or checkpoint.prompt,
            messages=len(run.messages),
        )
        return len(header) + sum(len(b) for b in bodies)

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Record one completed call."""
        body = _dump(message)
        self._ensure(run_id).effects.setdefault(call_id, body)
        return len(body)

    async def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        """Add the run's last events to its log."""
        self._ensure(run_id).events.update((int(e["seq"]), event_json(e)) for e in events)

    async def load_events(self, run_id: str, after: int = 0) -> list[dict[str, Any]]:
        """The run's stored events after ``after``."""
        run = self._runs.get(run_id)
        found = sorted(run.events.items()) if run is not None else []
        return [json.loads(body) for seq, body in found if seq > after]

    async def load(self, run_id: str) -> StoredRun:
        """A copy of everything stored for the run."""
        run = self._run(run_id)
        header = check_header(run_id, copy.deepcopy(run.header))
        return StoredRun(
            run.record,
            header,
            [json.loads(m) for m in run.messages],
            {k: json.loads(v) for k, v in run.effects.items()},
        )

    async def list_runs(self, *, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs, newest first."""
        records = [
            r.record for r in self._runs.values() if status is None or r.record.status == status
        ]
        return sorted(records, key=lambda r: r.updated, reverse=True)[:limit]

    async def latest_in_session(self, session_id: str) -> str | None:
        """The session's most recently completed run."""
        found = [
            r.record
            for r in self._runs.values()
            if r.session_id == session_id and r.record.status == "completed"
        ]
        return max(found, key=lambda r: r.updated).run_id if found else None

    async def latest_turn(self, session_id: str) -> RunRecord | None:
        """The session's most recently updated run."""
        found = [r.record for r in self._runs.values() if r.session_id == session_id]
        return max(found, key=lambda r: r.updated) if found else None

    async def set_status(self, run_id: str, status: str) -> None:
        """Change a run's status."""
        run = self._run(run_id)
        r = run.record
        run.record = replace(r, status=status, updated=time.time())

    async def delete(self, run_id: str) -> None:
        """Forget a run."""
        self._runs.pop(run_id, None)

    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the lease or raise `RunLeaseError`."""
        run = self._ensure(run_id)
        r, now = run.record, time.time()
        if r.lease_owner not in (None, owner, takeover) and r.is_held:
            raise RunLeaseError(run_id, r.lease_owner)
        run.record = replace(r, lease_owner=owner, lease_until=now + ttl)

    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease back."""
        run = self._runs.get(run_id)
        if run is not None and run.record.lease_owner == owner:
            run.record = replace(run.record, lease_owner=None, lease_until=None)

    async def acquire_session(
        self, session_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the session's turn lease or raise `SessionLeaseError`."""
        now = time.time()
        holder, until = self._sessions.get(session_id, (owner, now))
        if holder not in (owner, takeover) and until >= now:
            raise SessionLeaseError(session_id, holder)
        self._sessions[session_id] = (owner, now + ttl)

    async def release_session(self, session_id: str, owner: str) -> None:
        """Give the session's turn lease back."""
        if self._sessions.get(session_id, ("",))[0] == owner:
            del self._sessions[session_id]
