"""`PostgresStore`: checkpoints in PostgreSQL through psycopg 3 (async).

The schema is created (and later migrated) by the store itself. A small pool of
connections serves concurrent runs; each checkpoint is one transaction.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ponder.exceptions import RunLeaseError, StoreError
from ponder.store import sql
from ponder.store.base import Checkpoint, RunRecord, Store, StoredRun

__all__ = ["PostgresStore"]


class _Fenced(Exception):
    """The checkpoint's writer does not hold the run's lease (rolls the transaction back)."""


def _pg(statement: str) -> str:
    return statement.replace("?", "%s")


class PostgresStore(Store):
    """Checkpoints in a PostgreSQL database given by a libpq connection string."""

    def __init__(self, dsn: str, *, pool_size: int = 4) -> None:
        self.dsn = dsn
        self._size = pool_size
        self._pool: asyncio.Queue[Any] | None = None
        self._all: list[Any] = []
        self._opening = asyncio.Lock()

    async def _open(self) -> asyncio.Queue[Any]:
        async with self._opening:
            if self._pool is not None:
                return self._pool
            import psycopg

            pool: asyncio.Queue[Any] = asyncio.Queue()
            try:
                for _ in range(self._size):
                    conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
                    self._all.append(conn)
                    pool.put_nowait(conn)
                await self._migrate(self._all[0])
            except psycopg.Error as exc:
                raise StoreError(f"cannot open the PostgreSQL store: {exc}") from None
            self._pool = pool
            return pool

    @staticmethod
    async def _migrate(conn: Any) -> None:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(7270617)")
            for statement in sql.SCHEMA:
                await conn.execute(statement)
            found = await (await conn.execute(_pg(sql.SELECT_VERSION))).fetchone()
            for statement in sql.migration_plan(found):
                await conn.execute(statement)
            await conn.execute(_pg(sql.SET_VERSION), (str(sql.SCHEMA_VERSION),))

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        pool = self._pool or await self._open()
        conn = await pool.get()
        try:
            yield conn
        finally:
            pool.put_nowait(conn)

    async def write(self, checkpoint: Checkpoint) -> int:
        """Write the header and the new messages in one transaction."""
        import psycopg

        run_row, message_rows, size = sql.checkpoint_rows(checkpoint, time.time())
        run_id = checkpoint.run_id
        try:
            async with self._connection() as conn, conn.transaction():
                cursor = conn.cursor()
                await cursor.execute(_pg(sql.UPSERT_RUN), run_row)
                if cursor.rowcount == 0:
                    raise _Fenced
                if checkpoint.rewrite:
                    await cursor.execute(_pg(sql.DELETE_MESSAGES), (run_id,))
                if message_rows:
                    await cursor.executemany(_pg(sql.INSERT_MESSAGE), message_rows)
                if checkpoint.drop_effects:
                    await cursor.execute(_pg(sql.DELETE_EFFECTS), (run_id,))
        except _Fenced:
            rows = await self._fetch(sql.SELECT_OWNER, (run_id,))
            raise RunLeaseError(run_id, rows[0][0] if rows else None) from None
        except psycopg.errors.IntegrityError:
            raise RunLeaseError(run_id, None, sql.CONFLICT) from None
        return size

    async def write_effect(self, run_id: str, call_id: str, message: dict[str, Any]) -> int:
        """Record one completed call."""
        body = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        async with self._connection() as conn:
            await conn.execute(_pg(sql.INSERT_EFFECT), (run_id, call_id, body))
        return len(body)

    async def _fetch(self, statement: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        async with self._connection() as conn:
            cursor = await conn.execute(_pg(statement), args)
            return list(await cursor.fetchall())

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
        return [sql.record_from_row(r) for r in rows]

    async def latest_in_session(self, session_id: str) -> str | None:
        """The session's most recently completed run."""
        rows = await self._fetch(sql.LATEST_IN_SESSION, (session_id,))
        return str(rows[0][0]) if rows else None

    async def set_status(self, run_id: str, status: str) -> None:
        """Change a run's status."""
        async with self._connection() as conn:
            cursor = await conn.execute(_pg(sql.SET_STATUS), (status, time.time(), run_id))
            if cursor.rowcount == 0:
                raise StoreError(f"no stored run with id {run_id!r}")

    async def delete(self, run_id: str) -> None:
        """Remove a run."""
        async with self._connection() as conn, conn.transaction():
            for statement in (sql.DELETE_MESSAGES, sql.DELETE_EFFECTS, sql.DELETE_RUN):
                await conn.execute(_pg(statement), (run_id,))

    async def acquire(
        self, run_id: str, owner: str, ttl: float, *, takeover: str | None = None
    ) -> None:
        """Take the lease or raise `RunLeaseError`."""
        now = time.time()
        args = (run_id, now, now, owner, now + ttl, now, takeover)
        async with self._connection() as conn:
            if (await conn.execute(_pg(sql.ACQUIRE), args)).rowcount == 0:
                rows = await (await conn.execute(_pg(sql.SELECT_OWNER), (run_id,))).fetchall()
                raise RunLeaseError(run_id, rows[0][0] if rows else None)

    async def release(self, run_id: str, owner: str) -> None:
        """Give the lease back."""
        async with self._connection() as conn:
            await conn.execute(_pg(sql.RELEASE), (run_id, owner))

    async def close(self) -> None:
        """Close every connection."""
        for conn in self._all:
            await conn.close()
        self._all.clear()
        self._pool = None
