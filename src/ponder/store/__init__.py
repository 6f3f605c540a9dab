"""Checkpoint stores: where runs are written so they survive a crash and resume elsewhere.

``open_store("memory://")``, ``open_store("sqlite:///path/runs.db")`` (or a plain path),
``open_store("postgresql://user@host/db")``. The stores (and the checkpoint view) are
imported on first use, so a run without one never loads ``sqlite3``.
``store.load(run_id).view`` is a stored run's checkpoint as a `CheckpointView` (status,
suspension, output, usage, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ponder.exceptions import UserError
from ponder.store.base import FORMAT, Checkpoint, RunRecord, Store, StoredRun

if TYPE_CHECKING:
    from ponder.store.memory import MemoryStore
    from ponder.store.sqlite import SQLiteStore
    from ponder.store.view import CheckpointView, Suspension

__all__ = [
    "FORMAT",
    "Checkpoint",
    "CheckpointView",
    "MemoryStore",
    "RunRecord",
    "SQLiteStore",
    "Store",
    "StoredRun",
    "Suspension",
    "open_store",
]


def __getattr__(name: str) -> Any:
    if name in ("CheckpointView", "Suspension"):
        from ponder.store import view

        return getattr(view, name)
    if name == "MemoryStore":
        from ponder.store.memory import MemoryStore

        return MemoryStore
    if name == "SQLiteStore":
        from ponder.store.sqlite import SQLiteStore

        return SQLiteStore
    raise AttributeError(f"module 'ponder.store' has no attribute {name!r}")


def open_store(url: str | Path | None = None) -> Store:
    """A store from a URL or path; ``None`` is the default SQLite file."""
    from ponder.store.memory import MemoryStore
    from ponder.store.sqlite import SQLiteStore

    if url is None:
        return SQLiteStore()
    text = str(url)
    if text.startswith("memory:"):
        return MemoryStore()
    if text.startswith(("postgresql://", "postgres://")):
        from ponder.store.postgres import PostgresStore

        return PostgresStore(text)
    if text.startswith("sqlite:///"):
        return SQLiteStore(text.removeprefix("sqlite:///"))
    if text.startswith("sqlite:"):
        raise UserError(
            f"store URL {text!r} needs three slashes: sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db (or give a plain file path)"
        )
    if "://" in text:
        raise UserError(
            f"unknown store URL {text!r}: use memory://, sqlite:///PATH, a file path, "
            "or postgresql://..."
        )
    return SQLiteStore(text)
