"""Running agents from code without an event loop: one loop per thread, kept between calls.

A fresh loop per call (``asyncio.run``) would strand what the agent keeps between runs (the
model's HTTP client, pooled MCP sessions) on a closed loop, and print "Event loop is closed"
tracebacks when they are collected. One long-lived loop per thread keeps them usable.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import weakref
from collections.abc import AsyncIterable, Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

from ponder.exceptions import UserError

__all__ = ["close_at_exit", "iterate_sync", "run_coroutine_sync"]

T = TypeVar("T")

_local = threading.local()
_loops: list[asyncio.AbstractEventLoop] = []
_loops_lock = threading.Lock()
_closers: list[weakref.WeakMethod[Callable[[], Awaitable[None]]]] = []


def close_at_exit(closer: Callable[[], Awaitable[None]]) -> None:
    """Await the bound method ``closer`` on this thread's loop when the process exits.

    Held weakly: an object collected before exit is not kept alive for it.
    """
    reference = weakref.WeakMethod(closer)
    with _loops_lock:
        _closers[:] = [r for r in _closers if r() is not None]  # forget collected objects
        if reference not in _closers:
            _closers.append(reference)


def _refuse_inside_loop(what: str) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise UserError(
        f"{what} cannot run inside a running event loop (e.g. Jupyter or async code): "
        "use `await agent.run(...)` or `async for event in agent.stream(...)` instead"
    )


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _local.loop = loop
        with _loops_lock:
            _loops.append(loop)
    return loop


def run_coroutine_sync(coroutine: Coroutine[Any, Any, T], what: str = "run_sync") -> T:
    """Run ``coroutine`` to its end on this thread's loop; refuses inside a running loop."""
    try:
        _refuse_inside_loop(what)
    except UserError:
        coroutine.close()
        raise
    return _thread_loop().run_until_complete(coroutine)


def iterate_sync(items: AsyncIterable[T], what: str = "stream_sync") -> Iterator[T]:
    """The items of an async iterable, one by one, driven on this thread's loop."""
    _refuse_inside_loop(what)
    loop = _thread_loop()
    iterator = aiter(items)
    try:
        while True:
            try:
                yield loop.run_until_complete(anext(iterator))
            except StopAsyncIteration:
                return
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None and not loop.is_closed():
            loop.run_until_complete(close())


async def _cancel_leftovers() -> None:
    with _loops_lock:
        closers, _closers[:] = list(_closers), []  # each runs once, on the first loop closed
    for reference in closers:
        closer = reference()
        if closer is not None:
            await asyncio.gather(closer(), return_exceptions=True)
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current and not task.done()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


@atexit.register
def _close_loops() -> None:
    with _loops_lock:
        loops, _loops[:] = list(_loops), []
    for loop in reversed(loops):
        if loop.is_closed() or loop.is_running():
            continue
        loop.run_until_complete(_cancel_leftovers())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
