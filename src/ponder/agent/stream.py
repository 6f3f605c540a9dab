"""`RunStream`: a run's events as they happen, and its result once it is over.

A stream owns its run. Leaving it early stops the run as ``cancelled``: its final status
is stored and its lease given back, so the run never stays ``running`` behind a consumer
that went away. With ``async with`` (or an awaited `RunStream.aclose`) that is done before
control returns. A plain ``async for`` that is left early is cleaned up when its iterator
is dropped, or at the latest when the loop shuts down; closing the run's store first waits
for that cleanup, so a store closed right after the loop is never left with a held lease.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic

from ponder.agent.result import OutputT, RunResult
from ponder.agent.run.context import EventSink
from ponder.agent.run.driver import INTERRUPT
from ponder.agent.run.shielding import wait_through
from ponder.events import Event
from ponder.exceptions import UserError

if TYPE_CHECKING:
    from ponder.store.base import Store

__all__ = ["RunStream"]

_DONE = object()


class RunStream(Generic[OutputT]):
    """Iterate it (once) for the events; then ``result`` holds the `RunResult`.

    Use it as ``async with agent.stream(...) as stream: async for event in stream: ...``:
    leaving the block before the run is over (a ``break``, an exception, the task being
    cancelled) stops the run as ``cancelled`` — stored so, with its lease given back —
    before control returns. Events never wait for the consumer (the queue is unbounded).
    `interrupt` stops the run so that it can be resumed.
    """

    def __init__(
        self,
        start: Callable[[EventSink], Awaitable[RunResult[OutputT]]],
        run_id: str,
        store: Store | None = None,
    ) -> None:
        self.run_id = run_id
        self._start = start
        self._store = store
        self._result: RunResult[OutputT] | None = None
        self._started = False
        self._closed = False
        self._task: asyncio.Future[RunResult[OutputT]] | None = None
        self._stopping = False
        self._early: tuple[str | None] | None = None
        """An `interrupt` or `cancel` that came before the run started: applied at its start."""

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
        self._stop(INTERRUPT)

    def cancel(self) -> None:
        """Stop the run now as ``cancelled``; it can never be resumed."""
        self._stop(None)

    async def aclose(self) -> None:
        """Stop the run if it is still going (as ``cancelled``) and wait for its end.

        When it returns, the run's final status is stored and its lease given back. A
        cancellation of the calling task meanwhile does not cut that short: it is raised
        once the run has ended. A stream that was never iterated starts no run; one that
        is closed cannot be iterated any more. Calling it again does nothing.
        """
        self._closed = True
        task = self._task
        if task is None:
            return
        self._stop(None)
        held = await wait_through(task)
        if task.cancelled():
            pass
        elif task.exception() is None:
            self._result = task.result()
        # a run that failed has stored its failure; leaving the block does not raise it
        if held is not None:
            raise held

    async def __aenter__(self) -> RunStream[OutputT]:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> _Events:
        if self._closed:
            raise UserError("this RunStream is closed: start a new one with agent.stream(...)")
        if self._started:
            raise UserError("a RunStream can be iterated only once")
        self._started = True
        return _Events(self)

    def _begin(self, queue: asyncio.Queue[Any]) -> asyncio.Future[RunResult[OutputT]]:
        task = self._task = asyncio.ensure_future(self._start(queue.put_nowait))
        task.add_done_callback(lambda _: queue.put_nowait(_DONE))
        if self._early is not None:  # stopped before it started: cancelled before its first step
            self._stop(self._early[0])
        return task

    def _stop(self, message: str | None) -> None:
        """Cancel the run once (a second cancel would cut its cleanup short)."""
        task = self._task
        if task is None:
            if self._early is None and not self._closed:
                self._early = (message,)  # kept, with its kind, for when the run starts
            return
        if task.done() or self._stopping:
            return
        self._stopping = True
        task.cancel(message)
        if self._store is not None:
            self._store.wait_before_close(task)

    def _abandon(self) -> None:
        """The iterator was dropped before the run's end: cancel the run from its loop."""
        task = self._task
        if task is None:
            return
        if task.done():
            if not task.cancelled():
                task.exception()  # the run stored its failure; nobody is left to raise it
            return
        loop = task.get_loop()
        try:
            here = asyncio.get_running_loop() is loop
        except RuntimeError:
            here = False
        if here:
            self._stop(None)
        elif not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._stop, None)
            except RuntimeError:
                pass  # the loop closed in between: its shutdown cancelled the run


class _Events:
    """The one iterator of a `RunStream`.

    Dropping it before the run's end cancels the run: nobody can read its events any more.
    """

    def __init__(self, stream: RunStream[Any]) -> None:
        self._stream: RunStream[Any] | None = stream
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task: asyncio.Future[Any] | None = None

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Event:
        stream = self._stream
        if stream is None:
            raise StopAsyncIteration
        task = self._task
        if task is None:
            if stream._closed:
                raise UserError("this RunStream is closed: start a new one with agent.stream(...)")
            task = self._task = stream._begin(self._queue)
        try:
            item = await self._queue.get()
        except asyncio.CancelledError:
            # the consumer was cancelled while waiting: the run stops with it, and is
            # recorded before the cancellation goes on
            stream._stop(None)
            await wait_through(task)
            raise
        if item is not _DONE:
            return item  # type: ignore[no-any-return]
        self._stream = None
        stream._result = task.result()  # the run's error, or CancelledError, is raised here
        raise StopAsyncIteration

    async def aclose(self) -> None:
        """`RunStream.aclose`: stop the run if it is still going and wait for its end."""
        if self._stream is not None:
            await self._stream.aclose()

    def __del__(self) -> None:
        stream = self._stream
        if stream is not None and self._task is not None:
            stream._abandon()
