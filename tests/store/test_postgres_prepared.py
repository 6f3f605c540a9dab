"""A step's writes run as statements prepared on each connection: lost ones come back, a
cancelled write is stopped on the server before its connection is used again, a large one
is sent whole."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from ponder.store import Checkpoint
from ponder.store.postgres import PostgresStore

from .conftest import PG_DSN, drop_schema, header, isolated_schema, postgres_available

pytestmark = pytest.mark.postgres


@pytest.fixture
def one_connection() -> Iterator[tuple[PostgresStore, str]]:
    """A one-connection store in a schema of its own, and that schema's name."""
    if not postgres_available():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    schema = isolated_schema()
    yield PostgresStore(f"{PG_DSN}?options=-csearch_path%3D{schema}", pool_size=1), schema
    drop_schema(schema)


def checkpoint(run_id: str, index: int) -> Checkpoint:
    message = {"kind": "user", "content": f"m{index}"}
    return Checkpoint(run_id, "running", header(index + 1), index, [message])


async def test_statements_the_session_dropped_are_prepared_again(
    one_connection: tuple[PostgresStore, str],
) -> None:
    store, _ = one_connection
    run_id = f"prepared-{uuid.uuid4().hex}"
    await store.write(checkpoint(run_id, 0))
    # what psycopg sends after a rollback, once it has prepared statements of its own
    await store._use("deallocating", lambda conn: conn.execute("DEALLOCATE ALL"))
    await store.write(checkpoint(run_id, 1))
    await store.write_effect(run_id, "c1", {"content": "7"})
    stored = await store.load(run_id)
    assert [m["content"] for m in stored.messages] == ["m0", "m1"]
    assert stored.effects == {"c1": {"content": "7"}}
    await store.close()


async def test_a_cancelled_write_is_stopped_before_its_connection_is_used_again(
    one_connection: tuple[PostgresStore, str],
) -> None:
    import psycopg

    store, schema = one_connection
    run_id = f"cancelled-{uuid.uuid4().hex}"
    await store.write(checkpoint(run_id, 0))
    async with await psycopg.AsyncConnection.connect(PG_DSN) as locker:
        await locker.execute(
            f"SELECT 1 FROM {schema}.ponder_runs WHERE run_id = %s FOR UPDATE", (run_id,)
        )
        write = asyncio.ensure_future(store.write(checkpoint(run_id, 1)))
        await asyncio.sleep(0.3)  # the write's statement now waits for the row lock
        assert not write.done()
        write.cancel()
        with pytest.raises(asyncio.CancelledError):
            await write  # the server cancelled the statement, the lock still held
    await asyncio.sleep(0.2)  # the lock is gone: a statement left running would land now
    stored = await store.load(run_id)  # on the same connection, idle again
    assert [m["content"] for m in stored.messages] == ["m0"]
    await store.write(checkpoint(run_id, 1))
    assert len((await store.load(run_id)).messages) == 2
    await store.close()


async def test_a_write_larger_than_the_socket_buffers_is_sent_whole(
    one_connection: tuple[PostgresStore, str],
) -> None:
    store, _ = one_connection
    run_id = f"large-{uuid.uuid4().hex}"
    text = "x" * 8_000_000  # past what the kernel takes at once: sent as the socket drains
    big = Checkpoint(run_id, "running", header(1), 0, [{"kind": "user", "content": text}])
    await store.write(big)
    await store.write_effect(run_id, "c1", {"content": text})
    stored = await store.load(run_id)
    assert stored.messages[0]["content"] == text and stored.effects["c1"]["content"] == text
    await store.close()
