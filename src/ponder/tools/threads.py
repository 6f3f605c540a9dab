"""Running a sync tool in a worker thread that never keeps the process alive.

``asyncio.to_thread`` borrows the loop's pool, whose threads are joined when the loop or
the interpreter shuts down, so a tool that outlived its timeout kept ``ponder run`` from
exiting. Here calls run on ponder's own daemon threads: a call wakes an idle one or, when
none is idle, starts a new one, so a call never waits behind another call's thread (a
thread that finishes first may take it over). An idle thread waits a while for the next
call (starting a thread costs far more than the call itself) and then ends. The call's
future is left on the `ToolContext` (``worker``) so the executor can hold the tool's
concurrency slot and lock until the call has really ended. Results go back to the loop
through a per-loop inbox: the first result of a burst wakes the loop
(``call_soon_threadsafe``), later ones ride along with it.

An idle thread waits on a socket pair of its own, not on a lock: the loop's thread wakes it
with a send, during which it does not hold the GIL, so the woken thread can run at once. A
lock released with the GIL held woke a thread only to make it wait for the GIL (six thread
switches a call instead of two). Calls a batch starts together (`start_together`) are
queued until the loop's next round and then woken for one by one, as long as calls are
left that no woken thread has taken: a thread that runs at once takes them all.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import socket
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from ponder.tools.tool import ToolContext

__all__ = ["run_in_daemon_thread", "start_held", "start_together"]

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
    inbox = _inbox_for(loop)
    worker: asyncio.Future[Any] = loop.create_future()
    waiter: asyncio.Future[Any] = loop.create_future()
    ctx.worker = worker
    job = _Job(
        loop,
        inbox,
        worker,
        waiter,
        contextvars.copy_context(),
        call,
        f"ponder-tool-{ctx.tool_name}",
    )
    if inbox.held is None:
        _POOL.submit((job,))
    else:
        inbox.held.append(job)
    return waiter


def start_together(loop: asyncio.AbstractEventLoop) -> None:
    """Hold the threaded calls made on ``loop`` (running) until its next round, then start them.

    A batch calls this once its calls' tasks exist: their first steps run before the
    release, so a thread woken for the first call can take the others without a wake-up
    each. A call that runs tool code on the loop first starts what is held (`start_held`).
    """
    inbox = _inbox_for(loop)
    if inbox.held is None:
        inbox.held = []
        _HOLDING.add(inbox)
        loop.call_soon(inbox.start_held)


def start_held() -> None:
    """Start the calls held on the running loop now, if any (before running tool code there)."""
    if _HOLDING:
        inbox = _INBOXES.get(asyncio.get_running_loop())
        if inbox is not None:
            inbox.start_held()


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

    __slots__ = ("held", "lock", "results", "waking")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.results: list[_Result] = []
        self.waking = False
        self.held: list[_Job] | None = None
        """Calls made on the loop while a batch starts them together (see `start_together`)."""

    def start_held(self) -> None:
        held, self.held = self.held, None
        _HOLDING.discard(self)
        if held:
            _POOL.submit(held)

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
_HOLDING: set[_Inbox] = set()
"""Inboxes holding calls until their loop's next round: while none does, `start_held` is
one test."""


def _inbox_for(loop: asyncio.AbstractEventLoop) -> _Inbox:
    inbox = _INBOXES.get(loop)
    if inbox is None:
        inbox = _INBOXES[loop] = _Inbox()
    return inbox


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
    """One daemon thread and the socket pair it waits on while idle."""

    __slots__ = ("bell", "ring")

    def __init__(self) -> None:
        self.bell: socket.socket | None = None
        """Read while idle: one byte means the thread was woken for a call."""
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
    """Queued calls and the daemon threads that take them, each woken through its own socket."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.jobs: collections.deque[_Job] = collections.deque()
        self.waking = 0
        """Threads woken or started that have not yet looked for a call."""
        self.idle: list[_Worker] = []
        """Threads waiting to be woken, the most recently idle last (the next one woken)."""
        self.workers: set[_Worker] = set()
        """Threads holding a socket pair, for a forked child to close its copies."""

    def submit(self, jobs: Iterable[_Job]) -> None:
        """Queue ``jobs``, then wake threads one at a time while calls outnumber the woken."""
        with self.lock:
            self.jobs.extend(jobs)
        while True:
            with self.lock:
                if len(self.jobs) <= self.waking:
                    return
                self.waking += 1
                worker = self.idle.pop() if self.idle else None
            if worker is None:
                self._start()
            else:
                assert worker.ring is not None  # an idle thread has its pair
                worker.ring.send(b"\0")

    def _start(self) -> None:
        try:
            worker = threading.Thread(target=self._work, args=(_Worker(),), daemon=True)
            worker.name = "ponder-tool-idle"
            worker.start()
        except Exception as exc:  # the calls no other thread is on its way for fail with it
            with self.lock:
                self.waking -= 1
                stranded = [self.jobs.pop() for _ in range(len(self.jobs) - self.waking)]
            for job in stranded:
                job.inbox.put(job.loop, (job.worker, job.waiter, None, exc))

    def _work(self, worker: _Worker) -> None:
        while True:  # woken or just started: counted in ``waking``
            with self.lock:
                self.waking -= 1
                taken = self._take(worker)
            while isinstance(taken, _Job):
                result = taken.run()
                loop, inbox = taken.loop, taken.inbox
                del taken
                with self.lock:  # idle before the result wakes the loop: it may submit again
                    taken = self._take(worker)
                if not isinstance(taken, _Job):
                    threading.current_thread().name = "ponder-tool-idle"
                inbox.put(loop, result)
                del result, loop, inbox
            if not (taken and self._wait(worker)):
                self._end(worker)
                return

    def _take(self, worker: _Worker) -> _Job | bool:
        """The next queued call; else True once ``worker`` is idle, False if it ends (locked)."""
        if self.jobs:
            return self.jobs.popleft()
        if len(self.idle) >= MAX_IDLE:
            return False
        if worker.bell is None:
            try:
                worker.open()
            except OSError:  # out of file descriptors: a later call starts a thread
                return False
            self.workers.add(worker)
        self.idle.append(worker)
        return True

    def _wait(self, worker: _Worker) -> bool:
        """Wait until ``worker`` is woken; False if it was not in time (it ends)."""
        assert worker.bell is not None
        while True:
            try:
                worker.bell.recv(1)
                return True
            except TimeoutError:
                with self.lock:
                    if worker in self.idle:  # nobody woke this thread: end it
                        self.idle.remove(worker)
                        return False
                # woken meanwhile: its byte is on the way

    def _end(self, worker: _Worker) -> None:
        with self.lock:
            self.workers.discard(worker)
        worker.close()


_POOL = _Pool()


def _reset_after_fork() -> None:
    """A forked child has none of the parent's threads (nor their locks): start afresh."""
    global _POOL, _INBOXES, _HOLDING
    for worker in _POOL.workers:  # their threads did not survive the fork
        worker.close()
    _POOL = _Pool()
    _INBOXES = weakref.WeakKeyDictionary()
    _HOLDING = set()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
