"""`PostgresStore`: checkpoints in PostgreSQL through psycopg 3 (async).

The schema is created (and later migrated) by the store itself. A small pool of
connections serves concurrent runs, the most recently used first (its server process is
the one still warm); each checkpoint is one statement, so one round trip and one commit.
A tool call's result commits without waiting for the server's WAL flush
(`ponder.store.pg_statements.INSERT_EFFECT` says why that loses nothing a resumed run
cannot handle); checkpoints wait for it. These two writes of every step run as
statements prepared when a connection opens, on libpq directly (`ponder.store.pg_prepared`).
A connection the server dropped (a restart, a failover, ``pg_terminate_backend``) is
discarded and the operation retried once on a new one; connecting gives up after
``connect_timeout`` seconds. A checkpoint retried after its commit's reply was lost
recognises its own row (by the ``updated`` stamp it wrote) instead of seeing a conflict.
Every failure is a `StoreError` (or `RunLeaseError`), never a raw psycopg error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ponder.exceptions import RunLeaseError, SessionLeaseError, StoreError
from ponder.extras import require
from ponder.store import sql
from ponder.store.base import Checkpoint, RunRecord, Store, StoredRun
from ponder.store.pg_statements import (
    GENERIC_PLANS,
    INSERT_EFFECT,
    LAZY_COMMIT,
    checkpoint_args,
    landed,
    statement_for,
    to_pg,
)

__all__ = ["LAZY_COMMIT", "PostgresStore"]

T = TypeVar("T")
Work = Callable[[Any], Awaitable[T]]


class _Fenced(Exception):
    """The checkpoint's writer does not hold the run's lease (rolls the transaction back)."""


class PostgresStore(Store):
    """Checkpoints in a PostgreSQL database given by a libpq connection string."""

    def __init__(self, dsn: str, *, pool_size: int = 4, connect_timeout: float = 10.0) -> None:
        require("postgres", "the PostgreSQL store")
        self.dsn = dsn
        self.connect_timeout = connect_timeout
        self._size = pool_size
        self._pool: asyncio.Queue[Any] | None = None
        self._opening = asyncio.Lock()

    async def _connect(self, *, prepared: bool = True) -> Any:
        """A new connection; ``prepared``: with the step writes prepared (the schema exists)."""
        import psycopg

        from ponder.store import pg_prepared

        async def connect() -> Any:
            conn = await psycopg.AsyncConnection.connect(
                self.dsn, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
            )
            try:
                await conn.execute(GENERIC_PLANS)
                if prepared:
                    await pg_prepared.prepare(conn)
            except BaseException:
                await conn.close()
                raise
            return conn

        try:
            return await asyncio.wait_for(connect(), self.connect_timeout)
        except TimeoutError:
            raise StoreError(
                f"cannot open the PostgreSQL store: no answer within {self.connect_timeout:g} s "
                "(check the host and port in the connection string)"
            ) from None
        except psycopg.Error as exc:
            raise sql.store_error(exc, "cannot open the PostgreSQL store") from None

    async def _open(self) -> asyncio.Queue[Any]:
        async with self._opening:
            if self._pool is not None:
                return self._pool
            from ponder.store import pg_prepared

            pool: asyncio.Queue[Any] = asyncio.LifoQueue()
            first = await self._connect(prepared=False)
            pool.put_nowait(first)
            await self._guarded("cannot create the schema", first, self._migrate)
            await self._guarded("cannot prepare the store's statements", first, pg_prepared.prepare)
            for _ in range(self._size - 1):
                pool.put_nowait(await self._connect())
            self._pool = pool
            return pool

    @staticmethod
    async def _migrate(conn: Any) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(7270617)")
            for statement in sql.SCHEMA:
                await conn.execute(statement)
            found = await (await conn.execute(to_pg(sql.SELECT_VERSION))).fetchone()
            for statement in sql.migration_plan(found):
                await conn.execute(statement)
            await conn.execute(to_pg(sql.SET_VERSION), (str(sql.SCHEMA_VERSION),))

    async def _use(self, where: str, work: Work[T]) -> T:
        """Run ``work`` on a pooled connection; a dropped one is replaced and retried once."""
        import psycopg

        pool = self._pool or await self._open()
        conn = await pool.get()
        try:
            for attempt in (1, 2):
                if conn.closed or conn.broken:
                    conn = await self._replace(conn)
                try:
                    return await work(conn)
                except psycopg.OperationalError as exc:
                    if attempt == 2 or not (conn.closed or conn.broken):
                        raise sql.store_error(exc, where) from None
            raise AssertionError("unreachable")  # pragma: no cover
        except psycopg.Error as exc:
            raise sql.store_error(exc, where) from None
        finally:
            pool.put_nowait(conn)

    async def _replace(self, conn: Any) -> Any:
        """A new connection for a dropped one (the dropped one if none can be made)."""
        await conn.close()
        try:
            return await self._connect()
        except StoreError:
            return conn

    async def _guarded(self, where: str, conn: Any, work: Work[T]) -> T:
        import psycopg

        try:
            return await work(conn)
        except psycopg.Error as exc:
            raise sql.store_error(exc, where) from None

    async def write(self, checkpoint: Checkpoint) -> int:
        """Write the header, the new messages and events in one statement (one round trip)."""
        import psycopg

        from ponder.store import pg_prepared

        run_row, message_rows, size = sql.checkpoint_rows(checkpoint, time.time())
        run_id = checkpoint.run_id
        attempts = 0
        args = checkpoint_args(
            checkpoint, run_row, message_rows, sql.event_rows(run_id, checkpoint.events)
        )
        statement = statement_for(checkpoint)

        async def work(conn: Any) -> None:
            nonlocal attempts
            attempts += 1
            if attempts > 1 and await landed(conn, run_row):
                return  # the first attempt committed; only its reply was lost
            found = await pg_prepared.run(conn, statement, args)
            if found is None or found == b"0":
                raise _Fenced

        try:
            await self._use(f"cannot write run {run_id!r}", work)
        except _Fenced:
            rows = await self._fetch(sql.SELECT_OWNER, (run_id,))
            raise RunLeaseError(run_id, rows[0][0] if rows else None) from None
        except StoreError as exc:
            if isinstance(exc.__context__, psycopg.errors.IntegrityError):
                raise RunLeaseError(run_id, None, sql.CONFLICT) from None
            raise
        return size

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Record one completed call (see `INSERT_EFFECT` for how it commits)."""
        from ponder.store import pg_prepared

        body = sql.to_json(message)

        async def work(conn: Any) -> None:
            await pg_prepared.run(conn, INSERT_EFFECT, (run_id, call_id, body))

        await self._use(f"cannot record a tool result of run {run_id!r}", work)
        return len(body)

    async def _fetch(self, statement: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async def work(conn: Any) -> list[tuple[Any, ...]]:
            cursor = await conn.execute(to_pg(statement), args)
            return list(await cursor.fetchall())

        return await self._use("cannot read the store", work)

    async def append_events(self, run_id: str, events: list[dict[str, Any]]) -> None:
        """Add the run's last events to its log."""
        rows = sql.event_rows(run_id, events)

        async def work(conn: Any) -> None:
            if rows:
                async with conn.transaction():
                    await conn.cursor().executemany(to_pg(sql.INSERT_EVENT), rows)

        await self._use(f"cannot write the events of run {run_id!r}", work)

    async def load_events(self, run_id: str, after: int = 0) -> list[dict[str, Any]]:
        """The run's stored events after ``after``."""
        return sql.decode_events(run_id, await self._fetch(sql.SELECT_EVENTS, (run_id, after)))

    async def find_ids(self, prefix: str, limit: int = 2) -> list[str]:
        """Stored run ids starting with ``prefix``."""
        rows = await self._fetch(sql.SELECT_IDS_LIKE, (sql.like_prefix(prefix), limit))
        return [str(r[0]) for r in rows]

    async def get_secret(self, scope: str, name: str) -> dict[str, Any] | None:
        """A kept value, or None."""
        rows = await self._fetch(sql.SELECT_SECRET, (scope, name))
        return sql.decode_secret(rows[0] if rows else None)

    async def set_secret(self, scope: str, name: str, value: dict[str, Any]) -> None:
        """Keep ``value``."""
        body = json.dumps(value)

        async def work(conn: Any) -> None:
            await conn.execute(to_pg(sql.UPSERT_SECRET), (scope, name, body))

        await self._use(f"cannot write the {scope} secrets", work)

    async def load(self, run_id: str) -> StoredRun:
        """Read a run back."""
        rows = await self._fetch(sql.SELECT_RUN, (run_id,))
        messages = await self._fetch(sql.SELECT_MESSAGES, (run_id,))
        effects = await self._fetch(sql.SELECT_EFFECTS, (run_id,))
        return sql.decode_run(run_id, rows[0] if rows else None, messages, effects)

    async def list_runs(self, *, status: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs, newest first."""
        if status is None:
            rows = await self._fetch(sql.LIST_RUNS, (limit,))
        else:
            rows = await self._fetch(sql.LIST_RUNS_BY_STATUS, (status, limit))
        return [sql.listed_record(r) for r in rows]

    async def latest_in_session(self, session_id: str) -> str | None:
        """The session's most recently completed run."""
        rows = await self._fetch(sql.LATEST_IN_SESSION, (session_id,))
        return str(rows[0][0]) if rows else None

    async def latest_turn(self, session_id: str) -> RunRecord | None:
        """The session's most recently updated run."""
        rows = await self._fetch(sql.LATEST_TURN, (session_id,))
        return sql.record_from_row(rows[0]) if rows else None

    async def set_status(self, run_id: str, status: str) -> None:
        """Change a run's status."""

        async def work(conn: Any) -> int:
            cursor = await conn.execute(to_pg(sql.SET_STATUS), (status, time.time(), run_id))
            return int(cursor.rowcount)

        if await self._use(f"cannot change the status of run {run_id!r}", work) == 0:
            raise StoreError(f"no stored run with id {run_id!r}")

    async def delete(self, run_id: str) -> None:
        """Remove a run."""

        async def work(conn: Any) -> None:
            async with conn.transaction():
                for statement in sql.DELETE_ALL:
                    await conn.execute(to_pg(statement), (run_id,))

        await self._use(f"cannot delete run {run_id!r}", work)

    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the lease or raise `RunLeaseError`."""
        now = time.time()
        args = (run_id, now, now, owner, now + ttl, now, takeover)

        async def work(conn: Any) -> list[tuple[Any, ...]] | None:
            if (await conn.execute(to_pg(sql.ACQUIRE), args)).rowcount != 0:
                return None
            return list(await (await conn.execute(to_pg(sql.SELECT_OWNER), (run_id,))).fetchall())

        busy = await self._use(f"cannot take the lease of run {run_id!r}", work)
        if busy is not None:
            raise RunLeaseError(run_id, busy[0][0] if busy else None)

    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease back."""

        async def work(conn: Any) -> None:
            await conn.execute(to_pg(sql.RELEASE), (run_id, owner))

        await self._use(f"cannot release the lease of run {run_id!r}", work)

    async def acquire_session(
        self, session_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the session's turn lease or raise `SessionLeaseError`."""
        now = time.time()
        args = (session_id, owner, now + ttl, now, takeover)

        async def work(conn: Any) -> list[tuple[Any, ...]] | None:
            if (await conn.execute(to_pg(sql.ACQUIRE_SESSION), args)).rowcount != 0:
                return None
            found = await conn.execute(to_pg(sql.SELECT_SESSION_OWNER), (session_id,))
            return list(await found.fetchall())

        busy = await self._use(f"cannot take the lease of session {session_id!r}", work)
        if busy is not None:
            raise SessionLeaseError(session_id, busy[0][0] if busy else None)

    async def release_session(self, session_id: str, owner: str) -> None:
        """Give the session's turn lease back."""

        async def work(conn: Any) -> None:
            await conn.execute(to_pg(sql.RELEASE_SESSION), (session_id, owner))

        await self._use(f"cannot release the lease of session {session_id!r}", work)

    async def close(self) -> None:
        """Close every connection."""
        await self.drain()  # runs still stopping write their end first
        pool, self._pool = self._pool, None
        while pool is not None and not pool.empty():
            await pool.get_nowait().close()
