"""The store the ``ponder`` commands use, and finding a run in it by id or prefix."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from ponder.exceptions import StoreError, UserError
from ponder.store import Store, StoredRun, open_store

__all__ = [
    "load_run",
    "open_cli_store",
    "resolve_run_id",
    "store_label",
    "with_store",
]

T = TypeVar("T")


def store_label(url: str | None) -> str:
    """The store a URL names, as a URL (the default SQLite file when None)."""
    if url:
        return url
    from ponder.store.sqlite import default_path

    return f"sqlite:///{default_path()}"


def open_cli_store(url: str | None) -> Store:
    """`open_store`, with file-system failures reported as store errors."""
    try:
        return open_store(url)
    except OSError as error:
        raise StoreError(f"cannot open the store {store_label(url)}: {error}") from None


async def resolve_run_id(store: Store, text: str) -> str:
    """The stored run id ``text`` is, or is the unique prefix of."""
    found = await store.find_ids(text, limit=6)
    if text in found or len(found) == 1:
        return text if text in found else found[0]
    if not found:
        raise StoreError(f"no stored run with id {text!r}")
    shown = ", ".join(found[:5])
    raise UserError(f"run id prefix {text!r} is ambiguous: it starts {shown}; give more of it")


async def load_run(store: Store, text: str) -> StoredRun:
    """The stored run whose id ``text`` is, or is the unique prefix of."""
    return await store.load(await resolve_run_id(store, text))


def with_store(url: str | None, action: Callable[[Store], Awaitable[T]]) -> T:
    """Run ``action`` on the store at ``url`` in a new event loop, then close the store."""

    async def work() -> T:
        store = open_cli_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    return asyncio.run(work())
