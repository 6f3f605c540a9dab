"""Running a sync tool in a worker thread that never keeps the process alive.

``asyncio.to_thread`` borrows the loop's pool, whose threads are joined when the loop or
the interpreter shuts down, so a tool that outlived its timeout kept ``ponder run`` from
exiting. Here calls run on ponder's own daemon threads: a call takes an idle one or, when
none is idle, starts a new one, so a call never waits behind another call's thread. An
idle thread waits a while for the next call (starting a thread costs far more than the
call itself) and then ends. The call's future is left on the `ToolContext` (``worker``) so
the executor can hold the tool's concurrency slot and lock until the call has really
ended. Results go back to the loop through a per-loop inbox: the first result of a burst
wakes the loop (``call_soon_threadsafe``), later ones ride along with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ponder.tools.tool import ToolContext

__all__ = ["run_in_daemon_thread"]

IDLE_SECONDS = 30.0
"""How long an idle worker thread waits for another call before it ends."""
MAX_IDLE = 32
"""At most this many idle worker threads wait; past that a finished thread ends."""


def run_in_daemon_thread(call: Callable[[], Any], ctx: ToolContext) -> asyncio.Future[Any]:
    """Run ``call`` in a daemon thread; await the future returned for its result.

    Cancelling the wait leaves the thread running. The call sees a copy of the caller's
    context variables and runs in a thread named ``ponder-tool-<tool name>``. A plain
    function handing back the future, not a coroutine: a waiting call keeps one frame less.
    """
    loop = asyncio.get_running_loop()
    inbox = _INBOXES.get(loop)
    if inbox is None:
        inbox = _INBOXES[loop] = _Inbox()
    worker: asyncio.Future[Any] = loop.create_future()
    waiter: asyncio.Future[Any] = loop.create_future()
    ctx.worker = worker
    _POOL.submit(
        _Job(
            loop,
            inbox,
            worker,
            waiter,
            contextvars.copy_context(),
            call,
            f"ponder-tool-{ctx.tool_name}",
        )
    )
    return waiter


class _Job:
    """One call: ``call`` in ``context``; its result goes to ``inbox`` for ``loop``."""

    __slots__ = ("call", "context", "inbox", "loop", "name", "waiter", "worker")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        inbox: _Inbox,
        worker: asyncio.Future[Any],
        waiter: asyncio.Future[Any],
        context: contextvars.Context,
        call: Callable[[], Any],
        name: str,
    ) -> None:
        self.loop, self.inbox, self.worker, self.waiter = loop, inbox, worker, waiter
        self.context, self.call, self.name = context, call, name

    def run(self) -> _Result:
        threading.current_thread().name = self.name
        try:
            value = self.context.run(self.call)
        except BaseException as exc:  # handed to the awaiting task, whatever it is
            return self.worker, self.waiter, None, exc
        return self.worker, self.waiter, value, None


_Result = tuple["asyncio.Future[Any]", "asyncio.Future[Any]", Any, "BaseException | None"]


class _Inbox:
    """Finished calls for one loop: the first of a burst wakes the loop, the rest ride along."""

    __slots__ = ("lock", "results", "waking")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.results: list[_Result] = []
        self.waking = False

    def put(self, loop: asyncio.AbstractEventLoop, result: _Result) -> None:
        with self.lock:
            self.results.append(result)
            if self.waking:
                return
            self.waking = True
        try:
            loop.call_soon_threadsafe(self._drain)
        except RuntimeError:
            pass  # the loop is closed: nobody waits for these calls any more

    def _drain(self) -> None:
        with self.lock:
            results, self.results = self.results, []
            self.waking = False
        for worker, waiter, value, error in results:
            _settle(worker, waiter, value, error)


_INBOXES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Inbox] = weakref.WeakKeyDictionary()


def _settle(
    worker: asyncio.Future[Any],
    waiter: asyncio.Future[Any],
    value: Any,
    error: BaseException | None,
) -> None:
    """``waiter`` is what the call awaits (it may be cancelled); ``worker`` tracks the thread."""
    for future in (waiter, worker):
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)
    if not worker.cancelled():
        worker.exception()  # the waiter reports it; the worker only says when the call ended


class _Pool:
    """Daemon threads taking jobs from one queue; a job finding no idle thread starts one."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.lock = threading.Lock()
        self.idle = 0
        """Threads waiting for a job that no submitted job has claimed yet."""

    def submit(self, job: _Job) -> None:
        with self.lock:
            claimed = self.idle > 0
            if claimed:
                self.idle -= 1
        self.jobs.put(job)
        if not claimed:
            threading.Thread(target=self._work, name=job.name, daemon=True).start()

    def _work(self) -> None:
        jobs = self.jobs
        while True:
            try:
                job = jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self.lock:
                    if self.idle > 0:  # nobody claimed this thread: end it
                        self.idle -= 1
                        return
                continue  # a job is on its way to this thread
            result = job.run()
            loop, inbox = job.loop, job.inbox
            del job
            with self.lock:  # idle before the result wakes the loop: it may submit again
                ending = self.idle >= MAX_IDLE
                if not ending:
                    self.idle += 1
            threading.current_thread().name = "ponder-tool-idle"
            inbox.put(loop, result)
            del result, loop, inbox
            if ending:
                return


_POOL = _Pool()


def _reset_after_fork() -> None:
    """A forked child has none of the parent's threads (nor their locks): start afresh."""
    global _POOL, _INBOXES
    _POOL = _Pool()
    _INBOXES = weakref.WeakKeyDictionary()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
