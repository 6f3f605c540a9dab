"""One SDK client per event loop: an async HTTP client cannot be used across loops.

`Agent.run_sync` starts a new loop per call; a model reused across such calls gets a
fresh client on each new loop instead of failing inside the SDK's transport.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["LoopClient"]

T = TypeVar("T")


class LoopClient(Generic[T]):
    """Makes a client with ``factory`` for each running event loop, on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._client: T | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> T:
        """The client for the running loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._factory(), loop
        return self._client

    async def aclose(self) -> None:
        """Close the current loop's client, if any."""
        client: Any = self._client
        self._client, self._loop = None, None
        if client is not None:
            await client.close()
