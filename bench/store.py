"""Checkpoint cost per step: bytes and milliseconds, SQLite and PostgreSQL, K = 20/80/160.

Each run is the per-step task of ``bench.agent`` (one ``add`` call per step, chat mode)
with a store attached. "Overhead" is what a step writes beyond its new messages' own
JSON: the header rewrite and the tool-result effect row.

A tool step makes two durable writes, each its own commit: the model response before its
call runs, and the call's result (on PostgreSQL a commit that does not wait for the WAL
flush; the next checkpoint's flush covers it). Beside PostgreSQL, the same run again with
the connection string's ``synchronous_commit=off`` (the documented opt-in), and the floor:
the same two commits of single-row autocommit INSERTs a step on the same server, timed the
same way.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.agent import STEPS, check, ponder_agent
from bench.common import PG_DSN, median_seconds, postgres_up, table
from ponder.store import Checkpoint, SQLiteStore, Store
from ponder.store.postgres import LAZY_COMMIT

__all__ = ["run"]

PG_ASYNC_COMMIT = PG_DSN + "?options=-c%20synchronous_commit%3Doff"
REPEAT = 5
LAZY_FLOOR_INSERT = f"{LAZY_COMMIT} INSERT INTO ponder_bench_floor (body) SELECT %s FROM lazy"
"""The floor's second commit, made the way `PostgresStore` commits a tool result."""
KINDS = {"sqlite": "", "postgres": PG_DSN, "postgres, synchronous_commit=off": PG_ASYNC_COMMIT}


class Counted:
    """Adds up what a store's writes report, split into messages and the rest."""

    def __init__(self) -> None:
        self.total = 0
        self.messages = 0

    def checkpoint(self, checkpoint: Checkpoint, size: int) -> None:
        self.total += size
        self.messages += sum(len(_json(m)) for m in checkpoint.messages)

    def effect(self, size: int) -> None:
        self.total += size


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def counting(store: Store, counts: Counted) -> Store:
    """Wrap ``store``'s write methods to count bytes (same object, patched instance)."""
    write, write_effect = store.write, store.write_effect

    async def counted_write(checkpoint: Checkpoint) -> int:
        size = await write(checkpoint)
        counts.checkpoint(checkpoint, size)
        return size

    async def counted_effect(run_id: str, call_id: str, message: dict[str, Any]) -> int:
        size = await write_effect(run_id, call_id, message)
        counts.effect(size)
        return size

    store.write = counted_write  # type: ignore[method-assign]
    store.write_effect = counted_effect  # type: ignore[method-assign]
    return store


def _open(kind: str, folder: Path) -> Store | None:
    if kind == "sqlite":
        return SQLiteStore(folder / "runs.db")
    if not postgres_up():
        return None
    from ponder.store.postgres import PostgresStore

    return PostgresStore(KINDS[kind])


def measure(kind: str, k: int) -> tuple[float, float, float, float] | None:
    """(ms/step, bytes written/step, overhead bytes/step, ms/step without a store)."""
    with tempfile.TemporaryDirectory() as name:
        loop = asyncio.new_event_loop()
        store = _open(kind, Path(name))
        if store is None:
            return None
        counts = Counted()
        agent = ponder_agent(k, store=counting(store, counts))
        bare = ponder_agent(k)
        try:
            check(loop.run_until_complete(agent.run("count")), k)
            written, message_bytes = counts.total, counts.messages
            timed = _median(loop, agent)
            base = _median(loop, bare)
        finally:
            loop.run_until_complete(store.close())
            loop.close()
    return timed / k * 1e3, written / k, (written - message_bytes) / k, base / k * 1e3


def commit_floor(k: int) -> float | None:
    """ms per step of two single-row autocommit INSERTs, the second lazy as an effect's."""
    if not postgres_up():
        return None
    import psycopg

    async def steps(conn: Any) -> None:
        for i in range(k):
            await conn.execute("INSERT INTO ponder_bench_floor (body) VALUES (%s)", ("{}",))
            await conn.execute(LAZY_FLOOR_INSERT, (str(i),))

    async def main() -> float:
        conn = await psycopg.AsyncConnection.connect(PG_DSN, autocommit=True)
        try:
            # a logged table: commits that wrote only a temporary one would not flush the WAL
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS ponder_bench_floor (n serial PRIMARY KEY, body text)"
            )
            await steps(conn)  # warm-up
            times = []
            for _ in range(REPEAT):
                start = time.perf_counter()
                await steps(conn)
                times.append(time.perf_counter() - start)
            return statistics.median(times)
        finally:
            await conn.execute("DROP TABLE IF EXISTS ponder_bench_floor")
            await conn.close()

    return asyncio.run(main()) / k * 1e3


def _median(loop: asyncio.AbstractEventLoop, agent: Any) -> float:
    return median_seconds(
        lambda: loop.run_until_complete(agent.run("count")), repeat=REPEAT, warmup=0
    )


def run() -> str:
    """The Markdown section."""
    rows = []
    for kind in KINDS:
        for k in STEPS:
            found = measure(kind, k)
            if found is None:
                rows.append([kind, k, "not measured (server unreachable)", "", "", ""])
                continue
            ms, written, overhead, base = found
            rows.append(
                [kind, k, f"{ms:.3f}", f"{ms - base:+.3f}", f"{written:,.0f}", f"{overhead:,.0f}"]
            )
    for k in STEPS:
        floor = commit_floor(k)
        shown = "not measured (server unreachable)" if floor is None else f"{floor:.3f}"
        rows.append(["floor: 2 one-row INSERT commits a step, one lazy", k, "", shown, "", ""])
    headers = [
        "store",
        "K",
        "ms/step",
        "vs no store",
        "bytes written/step",
        "overhead bytes/step (beyond messages)",
    ]
    return (
        "## Checkpoint cost per step (ponder stores)\n\n"
        "Chat-mode ReAct, one `add` call per step, a checkpoint at every node boundary, "
        "every model response with tool calls and every tool result. A tool step makes two "
        "durable writes, each its own commit (the response before its call runs, then the "
        "call's result, which on PostgreSQL does not wait for the WAL flush: the next "
        "checkpoint's flush covers it); the floor rows time the same two commits of one-row "
        "autocommit INSERTs a step on the same server. `synchronous_commit=off` is set in "
        "the connection string (`?options=-c%20synchronous_commit%3Doff`), an opt-in: the "
        "server acknowledges a commit before its WAL reaches the disk, so a crash of the "
        "server (not of the process) can lose the last moments of runs.\n\n" + table(headers, rows)
    )
