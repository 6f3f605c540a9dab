"""`RunStream`: a run's events as they happen, and its result once it is over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic

from ponder.agent.result import OutputT, RunResult
from ponder.agent.run.context import EventSink
from ponder.agent.run.driver import INTERRUPT
from ponder.events import Event
from ponder.exceptions import UserError

__all__ = ["RunStream"]

_DONE = object()


class RunStream(Generic[OutputT]):
    """Iterate it (once) for the events; then ``result`` holds the `RunResult`.

    Events never wait for the consumer (the queue is unbounded). Leaving the loop early
    cancels the run; `interrupt` stops it so that it can be resumed.
    """

    def __init__(
        self, start: Callable[[EventSink], Awaitable[RunResult[OutputT]]], run_id: str
    ) -> None:
        self.run_id = run_id
        self._start = start
        self._result: RunResult[OutputT] | None = None
        self._started = False
        self._task: asyncio.Future[RunResult[OutputT]] | None = None
        self._stopping = False

    @property
    def result(self) -> RunResult[OutputT]:
        """The run's result; raises ``UserError`` before the stream has been consumed."""
        if self._result is None:
            raise UserError("the run has not finished: iterate the stream to the end first")
        return self._result

    def interrupt(self) -> None:
        """Stop the run now as ``interrupted``: with a store, ``resume`` continues it.

        What the run finished is kept: a call that was running is re-run on resume only if
        its tool is ``idempotent``. The iteration ends with ``asyncio.CancelledError``
        after the run's `RunCancelled` event (``resumable=True``). Calling it again does
        nothing.
        """
        if self._task is not None and not self._task.done() and not self._stopping:
            self._stopping = True
            self._task.cancel(INTERRUPT)

    def cancel(self) -> None:
        """Stop the run now as ``cancelled``; it can never be resumed."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def __aiter__(self) -> AsyncIterator[Event]:
        if self._started:
            raise UserError("a RunStream can be iterated only once")
        self._started = True
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        task = self._task = asyncio.ensure_future(self._start(queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(_DONE))
        try:
            while (item := await queue.get()) is not _DONE:
                yield item
            self._result = task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
