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

An idle thread waits on a socket pair of its own, not on a lock: the loop's thread wakes it
with a send, during which it does not hold the GIL, so the woken thread can run at once. A
lock released with the GIL held woke a thread only to make it wait for the GIL (six thread
switches a call instead of two).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import socket
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
    ctx.worker = worker  # only once submitted: a call that never started holds no slot
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


class _Worker:
    """One daemon thread: the job it runs next, and the socket pair it waits on when idle."""

    __slots__ = ("bell", "job", "ring")

    def __init__(self, job: _Job) -> None:
        self.job: _Job | None = job
        self.bell: socket.socket | None = None
        """Read while idle; one byte means ``job`` is set."""
        self.ring: socket.socket | None = None

    def open(self) -> None:
        self.bell, self.ring = socket.socketpair()
        self.bell.settimeout(IDLE_SECONDS)

    def close(self) -> None:
        for end in (self.bell, self.ring):
            if end is not None:
                end.close()
        self.bell = self.ring = None


class _Pool:
    """Daemon threads, each woken through its own socket pair; a job finding none starts one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[_Worker] = []
        """Workers waiting for a job, the most recently idle last (the next one to work)."""
        self.workers: set[_Worker] = set()
        """Workers holding a socket pair, for a forked child to close its copies."""

    def submit(self, job: _Job) -> None:
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        if worker is None:
            worker = _Worker(job)
            threading.Thread(target=self._work, args=(worker,), name=job.name, daemon=True).start()
            return
        worker.job = job
        assert worker.ring is not None  # an idle worker has its pair
        worker.ring.send(b"\0")

    def _work(self, worker: _Worker) -> None:
        while True:
            job = worker.job
            assert job is not None
            worker.job = None
            result = job.run()
            loop, inbox = job.loop, job.inbox
            del job
            # idle before the result wakes the loop: it may submit again
            staying = self._rest(worker)
            threading.current_thread().name = "ponder-tool-idle"
            inbox.put(loop, result)
            del result, loop, inbox
            if not (staying and self._wait(worker)):
                self._end(worker)
                return

    def _rest(self, worker: _Worker) -> bool:
        """Put ``worker`` among the idle ones; False if it should end instead."""
        with self.lock:
            if len(self.idle) >= MAX_IDLE:
                return False
            if worker.bell is None:
                try:
                    worker.open()
                except OSError:  # out of file descriptors: the next call starts a thread
                    return False
                self.workers.add(worker)
            self.idle.append(worker)
            return True

    def _wait(self, worker: _Worker) -> bool:
        """Wait until a job is handed to ``worker``; False if none came in time."""
        assert worker.bell is not None
        while True:
            try:
                worker.bell.recv(1)
                return True
            except TimeoutError:
                with self.lock:
                    if worker in self.idle:  # nobody claimed this thread: end it
                        self.idle.remove(worker)
                        return False
                # claimed: its job's byte is on the way

    def _end(self, worker: _Worker) -> None:
        with self.lock:
            self.workers.discard(worker)
        worker.close()


_POOL = _Pool()


def _reset_after_fork() -> None:
    """A forked child has none of the parent's threads (nor their locks): start afresh."""
    global _POOL, _INBOXES
    for worker in _POOL.workers:  # their threads did not survive the fork
        worker.close()
    _POOL = _Pool()
    _INBOXES = weakref.WeakKeyDictionary()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
