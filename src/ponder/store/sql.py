"""SQL shared by the SQLite and PostgreSQL stores (``?`` placeholders; PostgreSQL maps them).

``ponder_meta`` holds the schema version; `pending_migrations` brings an older store up to
date (version 2 added ``session_id``, version 3 the ``ponder_events`` log, version 4 the
``ponder_sessions`` turn leases).
"""

from __future__ import annotations

import json
from typing import Any

from ponder.exceptions import StoreError
from ponder.jsontext import json_encoder
from ponder.scrub import scrub_text
from ponder.store.base import Checkpoint, RunRecord, StoredRun, check_header

__all__ = [
    "ACQUIRE",
    "ACQUIRE_SESSION",
    "CONFLICT",
    "DELETE_ALL",
    "DELETE_EFFECTS",
    "DELETE_EVENTS",
    "DELETE_MESSAGES",
    "DELETE_RUN",
    "INDEXES",
    "INSERT_EFFECT",
    "INSERT_EVENT",
    "INSERT_MESSAGE",
    "LATEST_IN_SESSION",
    "LATEST_TURN",
    "LIST_RUNS",
    "LIST_RUNS_BY_STATUS",
    "MIGRATIONS",
    "RELEASE",
    "RELEASE_SESSION",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SELECT_EFFECTS",
    "SELECT_EVENTS",
    "SELECT_IDS_LIKE",
    "SELECT_MESSAGES",
    "SELECT_OWNER",
    "SELECT_RUN",
    "SELECT_SECRET",
    "SELECT_SESSION_OWNER",
    "SELECT_STAMP",
    "SELECT_VERSION",
    "SET_STATUS",
    "SET_VERSION",
    "UPSERT_RUN",
    "UPSERT_SECRET",
    "checkpoint_rows",
    "decode_events",
    "decode_run",
    "decode_secret",
    "event_rows",
    "like_prefix",
    "listed_record",
    "migration_plan",
    "pending_migrations",
    "record_from_row",
    "store_error",
    "to_json",
]

SCHEMA_VERSION = 4

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ponder_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ponder_runs ("
    " run_id TEXT PRIMARY KEY, status TEXT NOT NULL, created DOUBLE PRECISION NOT NULL,"
    " updated DOUBLE PRECISION NOT NULL, prompt TEXT NOT NULL DEFAULT '',"
    " header TEXT NOT NULL DEFAULT '{}', messages INTEGER NOT NULL DEFAULT 0,"
    " lease_owner TEXT, lease_until DOUBLE PRECISION, session_id TEXT)",
    "CREATE TABLE IF NOT EXISTS ponder_messages ("
    " run_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (run_id, idx))",
    "CREATE TABLE IF NOT EXISTS ponder_effects ("
    " run_id TEXT NOT NULL, call_id TEXT NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (run_id, call_id))",
    "CREATE TABLE IF NOT EXISTS ponder_events ("
    " run_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (run_id, seq))",
    "CREATE TABLE IF NOT EXISTS ponder_sessions ("
    " session_id TEXT PRIMARY KEY, lease_owner TEXT NOT NULL,"
    " lease_until DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS ponder_secrets ("
    " scope TEXT NOT NULL, name TEXT NOT NULL, body TEXT NOT NULL,"
    " PRIMARY KEY (scope, name))",
)
INDEXES = (
    "CREATE INDEX IF NOT EXISTS ponder_runs_updated ON ponder_runs (updated)",
    "CREATE INDEX IF NOT EXISTS ponder_runs_session ON ponder_runs (session_id, updated)",
)
MIGRATIONS: dict[int, tuple[str, ...]] = {
    2: ("ALTER TABLE ponder_runs ADD COLUMN session_id TEXT",),
    3: (),  # ponder_events: created by SCHEMA
    4: (),  # ponder_sessions: created by SCHEMA
}
"""Statements that bring a store of version ``n - 1`` to version ``n``."""


SELECT_VERSION = "SELECT value FROM ponder_meta WHERE key = 'schema'"
SET_VERSION = (
    "INSERT INTO ponder_meta VALUES ('schema', ?)"
    " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


def decode_secret(row: Any) -> dict[str, Any] | None:
    """A kept secret's value from its row (None: no row, or not a JSON object)."""
    if row is None:
        return None
    try:
        value = json.loads(row[0])
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def migration_plan(found: Any) -> list[str]:
    """Every statement after the tables exist, given the stored version row (or None)."""
    version = None if found is None else int(found[0])
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"the store's schema version {version} is newer than this ponder")
    return [*pending_migrations(version), *INDEXES]


def pending_migrations(found: int | None) -> list[str]:
    """What to run on a store at version ``found`` (None: just created, nothing)."""
    if found is None:
        return []
    return [s for v in range(found + 1, SCHEMA_VERSION + 1) for s in MIGRATIONS.get(v, ())]


SELECT_SECRET = "SELECT body FROM ponder_secrets WHERE scope = ? AND name = ?"
UPSERT_SECRET = (
    "INSERT INTO ponder_secrets (scope, name, body) VALUES (?, ?, ?)"
    " ON CONFLICT (scope, name) DO UPDATE SET body = excluded.body"
)
UPSERT_RUN = (
    "INSERT INTO ponder_runs"
    " (run_id, status, created, updated, prompt, header, messages, session_id)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id) DO UPDATE SET status = CASE WHEN ponder_runs.status = 'cancelled'"
    " THEN 'cancelled' ELSE excluded.status END,"
    " updated = excluded.updated, header = excluded.header, messages = excluded.messages,"
    " prompt = CASE WHEN ponder_runs.prompt = '' THEN excluded.prompt"
    " ELSE ponder_runs.prompt END, session_id = excluded.session_id"
    " WHERE CAST(? AS TEXT) IS NULL OR ponder_runs.lease_owner IS NULL"
    " OR ponder_runs.lease_owner = ?"
)
"""Arguments: the run row, then the writer's lease owner twice (None: no fence)."""
INSERT_MESSAGE = "INSERT INTO ponder_messages (run_id, idx, body) VALUES (?, ?, ?)"
DELETE_MESSAGES = "DELETE FROM ponder_messages WHERE run_id = ?"
INSERT_EFFECT = (
    "INSERT INTO ponder_effects (run_id, call_id, body) VALUES (?, ?, ?)"
    " ON CONFLICT (run_id, call_id) DO NOTHING"
)
DELETE_EFFECTS = "DELETE FROM ponder_effects WHERE run_id = ?"
DELETE_RUN = "DELETE FROM ponder_runs WHERE run_id = ?"
INSERT_EVENT = (
    "INSERT INTO ponder_events (run_id, seq, body) VALUES (?, ?, ?)"
    " ON CONFLICT (run_id, seq) DO UPDATE SET body = excluded.body"
)
"""A resumed run may number events the crashed process wrote but never checkpointed."""
DELETE_EVENTS = "DELETE FROM ponder_events WHERE run_id = ?"
DELETE_ALL = (DELETE_MESSAGES, DELETE_EFFECTS, DELETE_EVENTS, DELETE_RUN)
"""Every row of a run, in an order that never leaves orphans."""
SELECT_EVENTS = "SELECT body FROM ponder_events WHERE run_id = ? AND seq > ? ORDER BY seq"
SELECT_IDS_LIKE = (
    "SELECT run_id FROM ponder_runs WHERE run_id LIKE ? ESCAPE '!' ORDER BY run_id LIMIT ?"
)
SELECT_RUN = (
    "SELECT run_id, status, created, updated, prompt, messages, lease_owner, lease_until,"
    " header"
    " FROM ponder_runs WHERE run_id = ?"
)
SELECT_MESSAGES = "SELECT idx, body FROM ponder_messages WHERE run_id = ? ORDER BY idx"
SELECT_EFFECTS = "SELECT call_id, body FROM ponder_effects WHERE run_id = ?"
_LIST = (
    "SELECT run_id, status, created, updated, prompt, messages, lease_owner, lease_until"
    " FROM ponder_runs"
)
LIST_RUNS = _LIST + " ORDER BY updated DESC LIMIT ?"
LIST_RUNS_BY_STATUS = _LIST + " WHERE status = ? ORDER BY updated DESC LIMIT ?"
LATEST_IN_SESSION = (
    "SELECT run_id FROM ponder_runs WHERE session_id = ? AND status = 'completed'"
    " ORDER BY updated DESC LIMIT 1"
)
LATEST_TURN = _LIST + " WHERE session_id = ? ORDER BY updated DESC LIMIT 1"
SET_STATUS = "UPDATE ponder_runs SET status = ?, updated = ? WHERE run_id = ?"
ACQUIRE = (
    "INSERT INTO ponder_runs (run_id, status, created, updated, lease_owner, lease_until)"
    " VALUES (?, 'running', ?, ?, ?, ?)"
    " ON CONFLICT (run_id) DO UPDATE SET lease_owner = excluded.lease_owner,"
    " lease_until = excluded.lease_until"
    " WHERE ponder_runs.lease_owner IS NULL OR ponder_runs.lease_until < ?"
    " OR ponder_runs.lease_owner = excluded.lease_owner OR ponder_runs.lease_owner = ?"
)
SELECT_OWNER = "SELECT lease_owner FROM ponder_runs WHERE run_id = ?"
SELECT_STAMP = "SELECT updated, header, messages FROM ponder_runs WHERE run_id = ?"
CONFLICT = (
    "its stored messages conflict with this checkpoint: another process wrote the run, "
    "or the run id was used before; resume the run or pick a new id"
)
RELEASE = (
    "UPDATE ponder_runs SET lease_owner = NULL, lease_until = NULL"
    " WHERE run_id = ? AND lease_owner = ?"
)

ACQUIRE_SESSION = (
    "INSERT INTO ponder_sessions (session_id, lease_owner, lease_until) VALUES (?, ?, ?)"
    " ON CONFLICT (session_id) DO UPDATE SET lease_owner = excluded.lease_owner,"
    " lease_until = excluded.lease_until"
    " WHERE ponder_sessions.lease_until < ?"
    " OR ponder_sessions.lease_owner = excluded.lease_owner OR ponder_sessions.lease_owner = ?"
)
"""Arguments: session id, owner, lease end, now, the dead holder that may be taken over."""
SELECT_SESSION_OWNER = "SELECT lease_owner FROM ponder_sessions WHERE session_id = ?"
RELEASE_SESSION = "DELETE FROM ponder_sessions WHERE session_id = ? AND lease_owner = ?"


_COMPACT = json_encoder(separators=(",", ":"))
_EVENT = json_encoder(separators=(",", ":"), default=str)


def to_json(value: Any) -> str:
    """``value`` as compact JSON text any database can encode (lone surrogates replaced)."""
    return scrub_text(_COMPACT(value))


def event_json(event: dict[str, Any]) -> str:
    """An event dict as `to_json` text; a value JSON cannot hold is written as its ``str``.

    Events come as `ponder.events.event_to_dict` made them: their fields are JSON values
    but for what a hook or a tool put there, which the log keeps as text.
    """
    return scrub_text(_EVENT(event))


def checkpoint_rows(
    checkpoint: Checkpoint, now: float
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]], int]:
    """The run row, the message rows, and the bytes they hold."""
    header = to_json(checkpoint.header)
    bodies = [to_json(m) for m in checkpoint.messages]
    count = checkpoint.first_index + len(bodies)
    run_row = (
        checkpoint.run_id,
        checkpoint.status,
        now,
        now,
        checkpoint.prompt,
        header,
        count,
        checkpoint.session_id,
        checkpoint.owner,
        checkpoint.owner,
    )
    message_rows = [
        (checkpoint.run_id, checkpoint.first_index + i, body) for i, body in enumerate(bodies)
    ]
    return run_row, message_rows, len(header) + sum(len(b) for b in bodies)


def event_rows(run_id: str, events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The rows of ``events`` (each with its ``seq``)."""
    return [(run_id, int(e["seq"]), event_json(e)) for e in events]


def decode_events(run_id: str, rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The stored events of a run, from their rows."""
    found = [_json(run_id, row[0], "event") for row in rows]
    return [e for e in found if isinstance(e, dict)]


def like_prefix(prefix: str) -> str:
    """A ``LIKE ... ESCAPE '!'`` pattern for ids starting with ``prefix``, taken literally."""
    return "".join(f"!{c}" if c in "%_!" else c for c in prefix) + "%"


def record_from_row(row: tuple[Any, ...]) -> RunRecord:
    """A `RunRecord` from the first eight columns of a runs row (`StoreError` if malformed)."""
    try:
        return _record(row)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"a stored run row has the wrong shape ({exc}): {row[:1]!r}") from None


def listed_record(row: tuple[Any, ...]) -> RunRecord:
    """`record_from_row` for a listing: a malformed row is listed by its id, not raised.

    Its times and counts read as 0; loading the run raises the `StoreError` that says why.
    """
    try:
        return _record(row)
    except (TypeError, ValueError):
        return RunRecord(str(row[0]), str(row[1]), 0.0, 0.0, "", 0)


def _record(row: tuple[Any, ...]) -> RunRecord:
    run_id, status, created, updated, prompt, messages, owner, until = row[:8]
    return RunRecord(
        str(run_id),
        str(status),
        float(created),
        float(updated),
        str(prompt),
        int(messages),
        owner,
        None if until is None else float(until),
    )


def _json(run_id: str, text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise StoreError(f"run {run_id!r}: stored {what} is not valid JSON ({exc})") from None


def decode_run(
    run_id: str,
    row: tuple[Any, ...] | None,
    messages: list[tuple[Any, ...]],
    effects: list[tuple[Any, ...]],
) -> StoredRun:
    """Turn raw rows into a `StoredRun`, checking the header and the message indices."""
    if row is None:
        raise StoreError(f"no stored run with id {run_id!r}")
    try:
        return _decode(run_id, row, messages, effects)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"run {run_id!r}: a stored row has the wrong shape ({exc})") from None


def _decode(
    run_id: str,
    row: tuple[Any, ...],
    messages: list[tuple[Any, ...]],
    effects: list[tuple[Any, ...]],
) -> StoredRun:
    header = check_header(run_id, _json(run_id, row[8], "header"))
    bodies = []
    for expected, (idx, body) in enumerate(messages):
        if idx != expected:
            raise StoreError(f"run {run_id!r}: stored messages have a gap at index {expected}")
        bodies.append(_json(run_id, body, f"message {idx}"))
    found = {str(c): _json(run_id, b, f"effect {c}") for c, b in effects}
    return StoredRun(record_from_row(row), header, bodies, found)


_ADVICE = (
    (
        ("full", "disk i/o error"),
        "the disk is full or failing: free some space (or check the disk), then resume the run",
    ),
    (
        ("readonly", "read-only", "read only"),
        "the store is read-only: runs can be listed and shown, not written; "
        "make it writable or use another store",
    ),
    (
        ("not a database", "malformed", "corrupt"),
        "the store is damaged: restore it from a backup, or use another store",
    ),
    (("locked", "busy"), "another process holds the store: retry in a moment"),
)


def store_error(exc: Exception, where: str) -> StoreError:
    """A `StoreError` for a database driver's error: what happened and what to do."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    lowered = text.lower()
    for words, advice in _ADVICE:
        if any(word in lowered for word in words):
            return StoreError(f"{where}: {text} ({advice})")
    return StoreError(f"{where}: {text} (check that the store is reachable and healthy)")
