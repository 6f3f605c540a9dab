from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from ponder.store import FORMAT, Checkpoint, MemoryStore, SQLiteStore, Store
from ponder.store.postgres import PostgresStore

from .pg_proxy import LossyProxy

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"


def postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG_DSN, connect_timeout=3):
            return True
    except Exception:
        return False


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    kind = request.param
    if kind == "memory":
        found: Store = MemoryStore()
    elif kind == "sqlite":
        found = SQLiteStore(tmp_path / "runs.sqlite3")
    else:
        if not postgres_available():
            pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
        from ponder.store.postgres import PostgresStore

        schema = isolated_schema()
        found = PostgresStore(f"{PG_DSN}?options=-csearch_path%3D{schema}")
    yield found
    await found.close()
    if kind == "postgres":
        drop_schema(schema)


def isolated_schema() -> str:
    """A fresh schema, so a test that prunes or lists sees only its own runs."""
    import psycopg

    name = f"ponder_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    return name


def drop_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {name} CASCADE")


@pytest.fixture
def run_id() -> str:
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
def proxied() -> Iterator[tuple[PostgresStore, LossyProxy]]:
    """A one-connection PostgreSQL store whose traffic goes through a `LossyProxy`."""
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema = isolated_schema()
    with LossyProxy() as proxy:
        dsn = (
            f"postgresql://postgres@127.0.0.1:{proxy.port}/test?sslmode=disable"
            f"&gssencmode=disable&options=-csearch_path%3D{schema}"
        )
        yield PostgresStore(dsn, pool_size=1), proxy
    drop_schema(schema)


def header(length: int) -> dict[str, object]:
    """A checkpoint header for a ledger of ``length`` messages."""
    return {"format": FORMAT, "vm": {"pc": 0}, "ledger": {"length": length, "generation": 0}}


async def written_run(store: Store, prefix: str) -> str:
    """A new run id whose run is written, empty (a tool result needs its run)."""
    run_id = f"{prefix}-{uuid.uuid4().hex}"
    await store.write(Checkpoint(run_id, "running", header(0), 0, []))
    return run_id
