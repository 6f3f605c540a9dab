"""A PostgreSQL checkpoint costs one round trip, counted at the wire."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from ponder.store import FORMAT, Checkpoint
from ponder.store.postgres import PostgresStore

from .conftest import drop_schema, isolated_schema, postgres_available
from .pg_proxy import LossyProxy

pytestmark = pytest.mark.postgres

OWNER = "this-host:1:cafe"


@pytest.fixture
def counted() -> Iterator[tuple[PostgresStore, LossyProxy]]:
    """A one-connection store whose traffic goes through a `LossyProxy` (which counts)."""
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
    return {"format": FORMAT, "vm": {"pc": 0}, "ledger": {"length": length, "generation": 0}}


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


async def test_a_checkpoint_is_one_round_trip(counted: tuple[PostgresStore, LossyProxy]) -> None:
    store, proxy = counted
    run_id = f"trips-{uuid.uuid4().hex}"
    await store.acquire(run_id, OWNER, 60.0)
    for i in range(3):
        checkpoint = Checkpoint(
            run_id, "running", header(i + 1), i, [{"kind": "user", "content": str(i)}],
            owner=OWNER, drop_effects=i == 2, events=[{"seq": i + 1, "kind": "usage"}],
        )  # fmt: skip
        assert await answers_to(proxy, store.write(checkpoint)) == 1
    rewrite = Checkpoint(
        run_id, "running", header(1), 0, [{"kind": "user", "content": "summary"}],
        rewrite=True, owner=OWNER,
    )  # fmt: skip
    assert await answers_to(proxy, store.write(rewrite)) == 1
    stored = await store.load(run_id)
    assert [m["content"] for m in stored.messages] == ["summary"]
    assert [e["seq"] for e in await store.load_events(run_id)] == [1, 2, 3]
    await store.close()
