"""A PostgreSQL checkpoint costs one round trip, counted at the wire."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from ponder.store import Checkpoint
from ponder.store.postgres import PostgresStore

from .conftest import header, written_run
from .pg_proxy import LossyProxy

pytestmark = pytest.mark.postgres

OWNER = "this-host:1:cafe"


async def answers_to(proxy: LossyProxy, write: asyncio.Future[object] | object) -> int:
    """How many times the server finished answering while ``write`` ran."""
    before = proxy.answers
    await write  # type: ignore[misc]
    for _ in range(100):  # the proxy forwards the last answer just after the client has it
        await asyncio.sleep(0.01)
        if proxy.answers > before:
            break
    await asyncio.sleep(0.05)
    return proxy.answers - before


async def test_a_checkpoint_is_one_round_trip(proxied: tuple[PostgresStore, LossyProxy]) -> None:
    store, proxy = proxied
    run_id = f"trips-{uuid.uuid4().hex}"
    await store.acquire(run_id, OWNER, 60.0)
    for i in range(3):
        checkpoint = Checkpoint(
            run_id,
            "running",
            header(i + 1),
            i,
            [{"kind": "user", "content": str(i)}],
            owner=OWNER,
            drop_effects=i == 2,
            events=[{"seq": i + 1, "kind": "usage"}],
        )
        assert await answers_to(proxy, store.write(checkpoint)) == 1
    rewrite = Checkpoint(
        run_id,
        "running",
        header(1),
        0,
        [{"kind": "user", "content": "summary"}],
        rewrite=True,
        owner=OWNER,
    )
    assert await answers_to(proxy, store.write(rewrite)) == 1
    stored = await store.load(run_id)
    assert [m["content"] for m in stored.messages] == ["summary"]
    assert [e["seq"] for e in await store.load_events(run_id)] == [1, 2, 3]
    await store.close()


async def test_a_tool_result_commits_lazily_and_leaves_the_session_as_it_was(
    proxied: tuple[PostgresStore, LossyProxy],
) -> None:
    """The result's own transaction skips the WAL-flush wait; the next statements do not."""
    store, proxy = proxied
    run_id = await written_run(store, "lazy")
    assert await answers_to(proxy, store.write_effect(run_id, "c1", {"content": "7"})) == 1
    unflushed = "SELECT pg_current_wal_insert_lsn() > pg_current_wal_flush_lsn()"
    lagged = []
    for i in range(10):  # the WAL writer flushes within wal_writer_delay (200 ms by default)
        await store.write_effect(run_id, f"more-{i}", {"content": str(i)})
        lagged.append((await store._fetch(unflushed, ()))[0][0])
    assert any(lagged)  # a synchronous commit returns only once its WAL is flushed
    found = await store._fetch("SELECT current_setting('synchronous_commit')", ())
    assert found == [("on",)]  # set for the effect's transaction only (one pooled connection)
    assert (await store.load(run_id)).effects["c1"] == {"content": "7"}
    await store.close()
