"""One SDK client per event loop: an async HTTP client cannot be used across loops.

A model reused under several loops (a script calling ``asyncio.run`` for each run) gets a
fresh client on each new loop instead of failing inside the SDK's transport, and each
client is closed on its own loop when that loop shuts down (``asyncio.run`` and
``loop.shutdown_asyncgens`` close the loop's async generators, one of which holds the
client), so no connection is left to a closed loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import Any, Generic, TypeVar

__all__ = ["LoopClient"]

T = TypeVar("T")


class LoopClient(Generic[T]):
    """Makes a client with ``factory`` for each running event loop, on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._client: T | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._started: asyncio.Task[None] | None = None

    def get(self) -> T:
        """The client for the running loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._factory(), loop
            self._closer = _closed_with_loop(self._client)
            self._started = loop.create_task(_start(self._closer))
        return self._client

    async def aclose(self) -> None:
        """Close the current loop's client, if any."""
        client: Any = self._client
        self._client, self._loop = None, None
        if client is not None:
            await client.close()


async def _closed_with_loop(client: Any) -> AsyncGenerator[None, None]:
    """Suspended until its loop shuts its async generators down; then closes ``client``."""
    try:
        yield
    finally:
        with contextlib.suppress(Exception):  # the loop is going away: nothing to report to
            await client.close()


async def _start(closer: AsyncGenerator[None, None]) -> None:
    await anext(closer)  # now the loop tracks it (``sys.set_asyncgen_hooks``)
