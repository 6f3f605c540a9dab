"""A session's turn lease: one holder at a time, taken over once expired or named dead."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

import pytest

from ponder.exceptions import RunLeaseError, SessionLeaseError
from ponder.store import Checkpoint, SQLiteStore, Store

from .conftest import PG_DSN, drop_schema, header, isolated_schema, postgres_available


def new_session() -> str:
    return f"session-{uuid.uuid4().hex}"


async def test_one_owner_holds_a_session_at_a_time(store: Store) -> None:
    session = new_session()
    await store.acquire_session(session, "first", 60.0)
    await store.acquire_session(session, "first", 60.0)  # the holder renews it
    with pytest.raises(SessionLeaseError, match="being run by first") as busy:
        await store.acquire_session(session, "second", 60.0)
    assert busy.value.session_id == session and busy.value.holder == "first"
    assert isinstance(busy.value, RunLeaseError)  # a conflict wherever a lease one is
    await store.release_session(session, "second")  # not the holder: nothing happens
    with pytest.raises(SessionLeaseError):
        await store.acquire_session(session, "second", 60.0)
    await store.release_session(session, "first")
    await store.acquire_session(session, "second", 60.0)
    await store.acquire_session(new_session(), "first", 60.0)  # another session is free


async def test_an_expired_session_lease_is_taken_over(store: Store) -> None:
    session = new_session()
    await store.acquire_session(session, "gone", -1.0)
    await store.acquire_session(session, "next", 60.0)
    with pytest.raises(SessionLeaseError, match="being run by next"):
        await store.acquire_session(session, "gone", 60.0)  # the old holder cannot renew


async def test_a_holder_named_dead_is_taken_over(store: Store) -> None:
    session = new_session()
    await store.acquire_session(session, "dead", 60.0)
    await store.acquire_session(session, "next", 60.0, takeover="dead")
    with pytest.raises(SessionLeaseError, match="being run by next"):
        await store.acquire_session(session, "third", 60.0, takeover="dead")


async def test_the_latest_turn_is_the_sessions_last_run_whatever_its_status(
    store: Store, run_id: str
) -> None:
    session = new_session()
    assert await store.latest_turn(session) is None
    await store.write(Checkpoint(f"{run_id}-1", "completed", header(0), 0, [], session_id=session))
    await store.write(Checkpoint(f"{run_id}-2", "suspended", header(0), 0, [], session_id=session))
    await store.write(Checkpoint(f"{run_id}-x", "completed", header(0), 0, [], session_id="other"))
    latest = await store.latest_turn(session)
    assert latest is not None and (latest.run_id, latest.status) == (f"{run_id}-2", "suspended")
    assert await store.latest_in_session(session) == f"{run_id}-1"


async def test_a_version_3_sqlite_store_gains_the_session_leases(tmp_path: Path) -> None:
    path = tmp_path / "v3.sqlite3"
    await SQLiteStore(path).close()
    old = sqlite3.connect(path)  # what version 3 had: every table but ponder_sessions
    old.executescript(
        "DROP TABLE ponder_sessions; UPDATE ponder_meta SET value = '3' WHERE key = 'schema';"
    )
    old.close()
    store = SQLiteStore(path)
    await store.acquire_session("s", "owner", 60.0)
    with pytest.raises(SessionLeaseError):
        await store.acquire_session("s", "other", 60.0)
    await store.close()
    found = sqlite3.connect(path).execute("SELECT value FROM ponder_meta WHERE key = 'schema'")
    assert found.fetchone() == ("4",)


async def test_a_version_3_postgres_store_gains_the_session_leases() -> None:
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    import psycopg

    from ponder.store.postgres import PostgresStore

    schema = isolated_schema()
    dsn = f"{PG_DSN}?options=-csearch_path%3D{schema}"
    try:
        current = PostgresStore(dsn)
        await current.list_runs()  # creates the current schema
        await current.close()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE ponder_sessions")
            conn.execute("UPDATE ponder_meta SET value = '3' WHERE key = 'schema'")
        store = PostgresStore(dsn)
        await store.acquire_session("s", "owner", 60.0)
        with pytest.raises(SessionLeaseError):
            await store.acquire_session("s", "other", 60.0)
        await store.close()
        with psycopg.connect(dsn) as conn:
            found = conn.execute("SELECT value FROM ponder_meta WHERE key = 'schema'")
            assert found.fetchone() == ("4",)
    finally:
        drop_schema(schema)
