"""Cleanup that runs to its end while the task awaiting it is being cancelled.

A run that stops must still write its final status and give its lease back. The task
doing that may be cancelled again meanwhile — a second ``cancel()``, a timeout around the
consumer, a loop shutting down (which cancels every task it has) — and an interrupted
write would leave the run ``running`` with its lease held until it expires. `settled`
runs the write as its own task, waits for it through any number of cancellations, and
starts it again if the write itself was cancelled, so writes given to it must be
idempotent (a status, a lease release).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["settled", "wait_through"]

ATTEMPTS = 3
"""How often a write that was itself cancelled is started again."""


async def wait_through(future: asyncio.Future[Any]) -> asyncio.CancelledError | None:
    """Wait until ``future`` is done, whatever cancels the waiting task meanwhile.

    ``future`` itself is never cancelled from here. Returns the last cancellation that
    arrived while waiting (for the caller to raise once it is done), or None.
    """
    held: asyncio.CancelledError | None = None
    while not future.done():
        try:
            await asyncio.wait((future,))
        except asyncio.CancelledError as cancel:
            held = cancel
    return held


async def settled(
    write: Callable[[], Awaitable[Any]],
) -> asyncio.CancelledError | None:
    """Run ``write()`` to its end; return the cancellation held back meanwhile, if any.

    The write's own error is raised. For callers with more cleanup to do before they
    raise a held-back cancellation (or that are propagating one already).
    """
    held: asyncio.CancelledError | None = None
    for _ in range(ATTEMPTS):
        work = asyncio.ensure_future(write())
        held = await wait_through(work) or held
        if not work.cancelled():
            work.result()  # the write's own error, if it failed
            return held
    # cancelled every time it was started: the loop is going away; give up on the write
    return held or asyncio.CancelledError()
