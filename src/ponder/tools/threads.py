"""Running a sync tool in a thread of its own that never keeps the process alive.

``asyncio.to_thread`` borrows the loop's pool, whose threads are joined when the loop or
the interpreter shuts down, so a tool that outlived its timeout kept ``ponder run`` from
exiting. Here each call gets a daemon thread; the call's future is left on the
`ToolContext` (``worker``) so the executor can hold the tool's concurrency slot and lock
until the thread has really ended.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Any

from ponder.tools.tool import ToolContext

__all__ = ["run_in_daemon_thread"]


async def run_in_daemon_thread(call: Callable[[], Any], ctx: ToolContext) -> Any:
    """Run ``call`` in a daemon thread; cancelling the wait leaves the thread running."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            value = context.run(call)
        except BaseException as exc:  # handed to the awaiting task, whatever it is
            _deliver(loop, future, None, exc)
        else:
            _deliver(loop, future, value, None)

    ctx.worker = future
    threading.Thread(target=work, name=f"ponder-tool-{ctx.tool_name}", daemon=True).start()
    return await asyncio.shield(future)


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    value: Any,
    error: BaseException | None,
) -> None:
    try:
        loop.call_soon_threadsafe(_settle, future, value, error)
    except RuntimeError:
        pass  # the loop is closed: nobody waits for this call any more


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
