"""Checkpoint cost per step: bytes and milliseconds, SQLite and PostgreSQL, K = 20/80/160.

Each run is the per-step task of ``bench.agent`` (one ``add`` call per step, chat mode)
with a store attached. "Overhead" is what a step writes beyond its new messages' own
JSON: the header rewrite and the tool-result effect row.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from bench.agent import STEPS, check, ponder_agent
from bench.common import median_seconds, table
from ponder.store import Checkpoint, SQLiteStore, Store

__all__ = ["run"]

PG_DSN = "postgresql://postgres@127.0.0.1:5432/test"
REPEAT = 5


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
    try:
        import psycopg

        with psycopg.connect(PG_DSN, connect_timeout=3):
            pass
    except Exception:
        return None
    from ponder.store.postgres import PostgresStore

    return PostgresStore(PG_DSN)


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


def _median(loop: asyncio.AbstractEventLoop, agent: Any) -> float:
    return median_seconds(
        lambda: loop.run_until_complete(agent.run("count")), repeat=REPEAT, warmup=0
    )


def run() -> str:
    """The Markdown section."""
    rows = []
    for kind in ("sqlite", "postgres"):
        for k in STEPS:
            found = measure(kind, k)
            if found is None:
                rows.append([kind, k, "not measured (server unreachable)", "", "", ""])
                continue
            ms, written, overhead, base = found
            rows.append(
                [kind, k, f"{ms:.3f}", f"{ms - base:+.3f}", f"{written:,.0f}", f"{overhead:,.0f}"]
            )
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
        "every model response with tool calls and every tool result.\n\n" + table(headers, rows)
    )
