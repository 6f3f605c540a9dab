"""The checkpoint store protocol and the checkpoint format.

A run is stored as three kinds of rows, all JSON text (never pickle):

- one **run row**: id, status, timestamps, lease, and a small **header** — the VM snapshot
  of the run (program fingerprint, pc, frames, the `RunState` without its ledger) plus the
  ledger's length and generation; rewritten in place at each checkpoint;
- **message rows**, append-only: the ledger, one row per message, indexed from 0; a
  checkpoint writes only the messages added since the last one (compaction, which
  replaces the ledger, bumps the generation and rewrites them);
- **effect rows**: the result of each completed tool call, written the moment the call
  finishes, so a resumed run never executes a completed call again; deleted by the
  checkpoint whose messages hold them, so a result is kept once;
- **event rows**: the run's event log (JSON dicts with their ``seq``; runs of text deltas
  merged into one), written with each checkpoint, so a stored run can be replayed.

``FORMAT`` is the header's version; a store refuses headers of another format.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from ponder.exceptions import StoreError
from ponder.messages import Message, messages_from_json

if TYPE_CHECKING:
    from ponder.store.view import CheckpointView

__all__ = ["FORMAT", "Checkpoint", "RunRecord", "Store", "StoredRun", "check_header"]

FORMAT = "ponder.checkpoint/1"
RunRecordStatus = Literal["running", "completed", "suspended", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A stored run's summary, for listing."""

    run_id: str
    status: str
    created: float
    updated: float
    prompt: str
    messages: int
    lease_owner: str | None = None
    lease_until: float | None = None

    @property
    def is_held(self) -> bool:
        """True while some process holds an unexpired lease on the run."""
        return self.lease_owner is not None and (self.lease_until or 0.0) >= time.time()


@dataclass(slots=True)
class Checkpoint:
    """What one checkpoint writes: the header, and messages from ``first_index`` on."""

    run_id: str
    status: str
    header: dict[str, Any]
    first_index: int
    messages: list[dict[str, Any]]
    rewrite: bool = False
    """True when the ledger was replaced: drop the stored messages first."""
    prompt: str = ""
    session_id: str | None = None
    owner: str | None = None
    """The writer's lease: the write fails with `RunLeaseError` if another holds the run."""
    drop_effects: bool = False
    """True when these messages hold every saved tool result: delete the effect rows."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """The run's events since the last checkpoint, as `ponder.events.event_to_dict` made them
    (each with its ``seq``). A store writes them with `ponder.store.sql.event_json`, which
    keeps a value JSON cannot hold as its ``str``."""


@dataclass(slots=True)
class StoredRun:
    """Everything stored for one run: its row, raw header, messages and effects.

    Read the header through `view`; ``header`` is the JSON as stored.
    """

    record: RunRecord
    header: dict[str, Any]
    messages: list[dict[str, Any]]
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    _view: CheckpointView | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def view(self) -> CheckpointView:
        """The checkpoint, typed, parsed on first use; `StoreError` naming the bad field."""
        if self._view is None:
            # read only when a stored run is: a run without a store never imports it
            from ponder.store.view import CheckpointView

            self._view = CheckpointView.parse(self.record.run_id, self.record.status, self.header)
        return self._view

    def ledger_messages(self) -> list[Message]:
        """The stored messages, typed; `StoreError` if one has the wrong shape."""
        try:
            return messages_from_json(self.messages)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"][:1])
            raise StoreError(
                f"run {self.record.run_id!r}: stored message {where} has the wrong shape "
                f"({exc.error_count()} problem(s), first: {exc.errors()[0]['msg']}); "
                "the store was changed by something other than ponder"
            ) from None

    def vm_snapshot(self) -> dict[str, Any]:
        """The header's VM snapshot; `StoreError` if the header has none."""
        found = self.header.get("vm")
        if not isinstance(found, dict):
            raise StoreError(
                f"run {self.record.run_id!r}: the stored header has no VM snapshot; "
                "the store was changed by something other than ponder"
            )
        return found

    @property
    def has_checkpoint(self) -> bool:
        """False for a run whose process died between taking the lease and checkpointing."""
        return bool(self.header)


def check_header(run_id: str, header: Any) -> dict[str, Any]:
    """Return ``header`` if it is a checkpoint header of this format (or ``{}``), else raise.

    ``{}`` is the header of a run that has no checkpoint yet (see `StoredRun.has_checkpoint`).
    """
    if header == {}:
        return {}
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        found = header.get("format") if isinstance(header, dict) else type(header).__name__
        raise StoreError(
            f"run {run_id!r}: stored checkpoint has format {found!r}, expected {FORMAT!r}"
        )
    return header


class Store(ABC):
    """Where runs are checkpointed. Implementations must be safe for concurrent runs."""

    lease_seconds: float = 600.0
    """How long a lease lasts unless renewed; a driven run renews it every third of this."""
    turn_wait_seconds: float = 300.0
    """How long a turn of a session waits for the session's turn in another process."""

    @abstractmethod
    async def write(self, checkpoint: Checkpoint) -> int:
        """Write a checkpoint atomically; return the bytes written.

        ``RunLeaseError`` if ``checkpoint.owner`` is set and another process holds the run,
        or the stored messages conflict with it (another writer); nothing is written then.
        """

    @abstractmethod
    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Record a completed tool call's result; return the bytes written.

        ``call_id`` is the call's effect key, unique within the run; the first write of
        a key wins.
        """

    @abstractmethod
    async def load(self, run_id: str) -> StoredRun:
        """Everything stored for ``run_id``; ``StoreError`` if unknown or unreadable."""

    @abstractmethod
    async def list_runs(self, *, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs, newest first."""

    @abstractmethod
    async def latest_in_session(self, session_id: str) -> str | None:
        """The id of the session's most recently completed run, if any."""

    @abstractmethod
    async def latest_turn(self, session_id: str) -> RunRecord | None:
        """The session's most recently updated run, whatever its status, if any."""

    @abstractmethod
    async def set_status(self, run_id: str, status: str) -> None:
        """Change a run's status (``cancelled`` stops it from being resumed)."""

    @abstractmethod
    async def delete(self, run_id: str) -> None:
        """Remove a run and everything stored for it."""

    @abstractmethod
    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the run's lease for ``ttl`` seconds; ``RunLeaseError`` if someone holds it.

        ``takeover`` names a holder known to be dead, whose lease may be taken.
        """

    @abstractmethod
    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease back (no error if it is not held)."""

    @abstractmethod
    async def acquire_session(
        self, session_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the session's turn lease for ``ttl`` seconds; `SessionLeaseError` if held.

        One turn of a session runs at a time, across processes; ``takeover`` names a holder
        known to be dead, whose lease may be taken. The holder itself may renew it.
        """

    @abstractmethod
    async def release_session(self, session_id: str, owner: str) -> None:
        """Give the session's turn lease back (no error if ``owner`` does not hold it)."""

    async def append_events(  # noqa: B027 - optional for stores that keep no event log
        self, run_id: str, events: list[dict[str, Any]]
    ) -> None:
        """Add events to the run's log outside a checkpoint (the run's last ones)."""

    async def load_events(self, run_id: str, after: int = 0) -> list[dict[str, Any]]:
        """The run's stored events with ``seq`` above ``after``; ``[]`` if it keeps none."""
        return []

    async def find_ids(self, prefix: str, limit: int = 2) -> list[str]:
        """Up to ``limit`` stored run ids that start with ``prefix``, in order."""
        runs = await self.list_runs(limit=1_000_000)
        return sorted(r.run_id for r in runs if r.run_id.startswith(prefix))[:limit]

    async def prune(self, *, keep_last: int | None = None, older_than: float | None = None) -> int:
        """Delete runs beyond the newest ``keep_last`` or not updated for ``older_than`` s.

        Runs whose lease is held (being driven right now) are kept.
        """
        runs = await self.list_runs(limit=1_000_000)
        cutoff = None if older_than is None else time.time() - older_than
        doomed = [
            r.run_id
            for index, r in enumerate(runs)
            if not r.is_held  # a run some process is driving is never pruned
            and (
                (keep_last is not None and index >= keep_last)
                or (cutoff is not None and r.updated < cutoff)
            )
        ]
        for run_id in doomed:
            await self.delete(run_id)
        return len(doomed)

    async def get_secret(self, scope: str, name: str) -> dict[str, Any] | None:
        """A value kept with `set_secret` (OAuth tokens), or None; never part of a run."""
        raise StoreError(f"{type(self).__name__} keeps no secrets")

    async def set_secret(self, scope: str, name: str, value: dict[str, Any]) -> None:
        """Keep ``value`` under ``(scope, name)``, replacing what was there."""
        raise StoreError(f"{type(self).__name__} keeps no secrets")

    async def close(self) -> None:
        """Release the store's resources, once the runs stopping on it have written their end.

        Implementations that hold resources await `drain` first.
        """
        await self.drain()

    def wait_before_close(self, run: asyncio.Future[Any]) -> None:
        """Have `close` wait for ``run`` first.

        ``run`` was stopped and is still writing its final status and giving its lease
        back (a stream left before its end).
        """
        stopping: set[asyncio.Future[Any]] = self.__dict__.setdefault("_stopping_runs", set())
        if not run.done():
            stopping.add(run)
            run.add_done_callback(stopping.discard)

    async def drain(self) -> None:
        """Wait for the runs named to `wait_before_close` (those of this event loop)."""
        stopping: set[asyncio.Future[Any]] = self.__dict__.get("_stopping_runs", set())
        loop = asyncio.get_running_loop()
        runs = [run for run in stopping if run.get_loop() is loop and not run.done()]
        if runs:
            await asyncio.wait(runs)
