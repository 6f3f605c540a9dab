"""`SQLiteStore`: the default store, a file in WAL mode.

Writes are small transactions run inline (no thread hop): a checkpoint costs one upsert
and one insert per new message. Several processes may share a file; leases keep two of
them from resuming the same run. Every SQLite failure (a damaged file, a full disk, a
read-only file) is a `StoreError` that says what to do; a read-only file (or a file on a
read-only mount) is opened read-only, so its runs can still be listed and shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ponder.exceptions import RunLeaseError, SessionLeaseError, StoreError
from ponder.store import sql
from ponder.store.base import Checkpoint, RunRecord, Store, StoredRun

__all__ = ["SQLiteStore", "default_path"]


def default_path() -> Path:
    """``<user data dir>/ponder/runs.sqlite3``."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("ponder")) / "runs.sqlite3"


class SQLiteStore(Store):
    """Checkpoints in one SQLite file."""

    def __init__(self, path: str | Path | None = None) -> None:
        target = Path(path) if path is not None else default_path()
        if str(target) != ":memory:":
            target.parent.mkdir(parents=True, exist_ok=True)
        self.path = target
        self.is_read_only = False
        with _translated(f"cannot open the SQLite store at {target}"):
            try:
                self._db = self._connect(str(target), uri=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._migrate()
            except sqlite3.OperationalError as exc:
                if not _is_unwritable(exc, target):
                    raise
                self._open_read_only(target)

    @staticmethod
    def _connect(target: str, *, uri: bool) -> sqlite3.Connection:
        return sqlite3.connect(
            target, isolation_level=None, check_same_thread=False, timeout=10.0, uri=uri
        )

    def _open_read_only(self, target: Path) -> None:
        """Open a file this process may not write: reading works if the schema is current.

        On a read-only mount SQLite cannot create the WAL index beside the file: the file
        is then read as immutable (what the last writer checkpointed into it).
        """
        with contextlib.suppress(AttributeError):
            self._db.close()
        uri = target.resolve().as_uri()
        try:
            self._db = self._connect(f"{uri}?mode=ro", uri=True)
            self._db.execute(sql.SELECT_VERSION).fetchone()
        except sqlite3.OperationalError:
            self._db.close()
            self._db = self._connect(f"{uri}?mode=ro&immutable=1", uri=True)
        self.is_read_only = True
        found = self._db.execute(sql.SELECT_VERSION).fetchone()
        if found is None or int(found[0]) != sql.SCHEMA_VERSION:
            raise sqlite3.OperationalError(
                "readonly database whose schema needs an upgrade that cannot be written"
            )

    def _migrate(self) -> None:
        with self._transaction() as db:
            for statement in sql.SCHEMA:
                db.execute(statement)
            for statement in sql.migration_plan(db.execute(sql.SELECT_VERSION).fetchone()):
                db.execute(statement)
            db.execute(sql.SET_VERSION, (str(sql.SCHEMA_VERSION),))

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)

    async def write(self, checkpoint: Checkpoint) -> int:
        """Write the header and the new messages in one transaction."""
        with _translated(f"cannot write run {checkpoint.run_id!r}"):
            run_row, message_rows, size = sql.checkpoint_rows(checkpoint, time.time())
            run_id = checkpoint.run_id
            try:
                with self._transaction() as db:
                    if db.execute(sql.UPSERT_RUN, run_row).rowcount == 0:
                        raise RunLeaseError(run_id, self._owner_of(run_id))
                    if checkpoint.rewrite:
                        db.execute(sql.DELETE_MESSAGES, (run_id,))
                    db.executemany(sql.INSERT_MESSAGE, message_rows)
                    db.executemany(sql.INSERT_EVENT, sql.event_rows(run_id, checkpoint.events))
                    if checkpoint.drop_effects:
                        db.execute(sql.DELETE_EFFECTS, (run_id,))
            except sqlite3.IntegrityError:
                raise RunLeaseError(run_id, None, sql.CONFLICT) from None
            return size

    def _owner_of(self, run_id: str) -> str | None:
        row = self._db.execute(sql.SELECT_OWNER, (run_id,)).fetchone()
        return None if row is None else row[0]

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Record one completed call."""
        with _translated(f"cannot record a tool result of run {run_id!r}"):
            body = sql.to_json(message)
            self._db.execute(sql.INSERT_EFFECT, (run_id, call_id, body))  # one statement: atomic
            return len(body)

    async def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        """Add the run's last events to its log."""
        with _translated(f"cannot write the events of run {run_id!r}"):
            with self._transaction() as db:
                db.executemany(sql.INSERT_EVENT, sql.event_rows(run_id, events))

    async def load_events(self, run_id: str, after: int = 0) -> list[dict[str, Any]]:
        """The run's stored events after ``after``."""
        with _translated(f"cannot read the events of run {run_id!r}"):
            rows = self._db.execute(sql.SELECT_EVENTS, (run_id, after)).fetchall()
            return sql.decode_events(run_id, rows)

    async def find_ids(self, prefix: str, limit: int = 2) -> list[str]:
        """Stored run ids starting with ``prefix``."""
        with _translated("cannot list the runs"):
            rows = self._db.execute(sql.SELECT_IDS_LIKE, (sql.like_prefix(prefix), limit))
            return [str(r[0]) for r in rows.fetchall()]

    async def load(self, run_id: str) -> StoredRun:
        """Read a run back."""
        with _translated(f"cannot read run {run_id!r}"):
            db = self._db
            row = db.execute(sql.SELECT_RUN, (run_id,)).fetchone()
            messages = db.execute(sql.SELECT_MESSAGES, (run_id,)).fetchall()
            effects = db.execute(sql.SELECT_EFFECTS, (run_id,)).fetchall()
            return sql.decode_run(run_id, row, messages, effects)

    async def list_runs(self, *, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs, newest first."""
        with _translated("cannot list the runs"):
            if status is None:
                rows = self._db.execute(sql.LIST_RUNS, (limit,)).fetchall()
            else:
                rows = self._db.execute(sql.LIST_RUNS_BY_STATUS, (status, limit)).fetchall()
            return [sql.listed_record(r) for r in rows]

    async def latest_in_session(self, session_id: str) -> str | None:
        """The session's most recently completed run."""
        with _translated("cannot read the session"):
            row = self._db.execute(sql.LATEST_IN_SESSION, (session_id,)).fetchone()
            return None if row is None else str(row[0])

    async def latest_turn(self, session_id: str) -> RunRecord | None:
        """The session's most recently updated run."""
        with _translated("cannot read the session"):
            row = self._db.execute(sql.LATEST_TURN, (session_id,)).fetchone()
            return None if row is None else sql.record_from_row(row)

    async def set_status(self, run_id: str, status: str) -> None:
        """Change a run's status."""
        with _translated(f"cannot change the status of run {run_id!r}"):
            with self._transaction() as db:
                if db.execute(sql.SET_STATUS, (status, time.time(), run_id)).rowcount == 0:
                    raise StoreError(f"no stored run with id {run_id!r}")

    async def delete(self, run_id: str) -> None:
        """Remove a run."""
        with _translated(f"cannot delete run {run_id!r}"):
            with self._transaction() as db:
                for statement in sql.DELETE_ALL:
                    db.execute(statement, (run_id,))

    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the lease or raise `RunLeaseError`."""
        with _translated(f"cannot take the lease of run {run_id!r}"):
            now = time.time()
            with self._transaction() as db:
                args = (run_id, now, now, owner, now + ttl, now, takeover)
                if db.execute(sql.ACQUIRE, args).rowcount == 0:
                    raise RunLeaseError(run_id, self._owner_of(run_id))

    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease back."""
        with _translated(f"cannot release the lease of run {run_id!r}"):
            with self._transaction() as db:
                db.execute(sql.RELEASE, (run_id, owner))

    async def acquire_session(
        self, session_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the session's turn lease or raise `SessionLeaseError`."""
        with _translated(f"cannot take the lease of session {session_id!r}"):
            now = time.time()
            with self._transaction() as db:
                args = (session_id, owner, now + ttl, now, takeover)
                if db.execute(sql.ACQUIRE_SESSION, args).rowcount == 0:
                    row = db.execute(sql.SELECT_SESSION_OWNER, (session_id,)).fetchone()
                    raise SessionLeaseError(session_id, None if row is None else row[0])

    async def release_session(self, session_id: str, owner: str) -> None:
        """Give the session's turn lease back."""
        with _translated(f"cannot release the lease of session {session_id!r}"):
            with self._transaction() as db:
                db.execute(sql.RELEASE_SESSION, (session_id, owner))

    async def get_secret(self, scope: str, name: str) -> dict[str, Any] | None:
        """A kept value, or None."""
        with _translated(f"cannot read the {scope} secrets"):
            row = self._db.execute(sql.SELECT_SECRET, (scope, name)).fetchone()
        return sql.decode_secret(row)

    async def set_secret(self, scope: str, name: str, value: dict[str, Any]) -> None:
        """Keep ``value`` (one statement: atomic)."""
        with _translated(f"cannot write the {scope} secrets"):
            self._db.execute(sql.UPSERT_SECRET, (scope, name, json.dumps(value)))

    async def close(self) -> None:
        """Close the file."""
        await self.drain()  # runs still stopping write their end first
        self._db.close()


def _is_unwritable(error: sqlite3.OperationalError, target: Path) -> bool:
    """True when opening ``target`` for writing failed because it cannot be written.

    A read-only file says ``readonly``; on a read-only mount, an existing file cannot even
    be opened (its journal cannot be created). Other failures (a lock, damage) are not.
    """
    text = str(error)
    if "readonly" in text:
        return True
    cannot_write = not os.access(target, os.W_OK) or not os.access(target.parent, os.W_OK)
    return "unable to open" in text and target.is_file() and cannot_write


@contextmanager
def _translated(where: str) -> Iterator[None]:
    """Turn SQLite's errors into `StoreError` (lease conflicts pass through)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sql.store_error(exc, where) from None


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (or ``ROLLBACK`` on error) on a connection."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
            return
        try:
            self.db.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite rolled back already (a full disk, a lost file): the cause is raised
