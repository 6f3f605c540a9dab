"""Running a coroutine's first step at once, and arming its timeout only if it suspends.

Most tool calls finish without ever suspending: a sync function run inline, an async tool
that computes its answer, the built-in thinking tools. Such a call needs no timer: a timer
cannot interrupt code that never yields, so arming one (a ``TimerHandle`` pushed into the
loop's heap and cancelled a moment later) is pure cost. `step_once` runs the call up to its
first suspension; only a call that suspended is finished by `resume` under its deadline,
exactly as though it had been awaited from the start.
"""

from __future__ import annotations

import asyncio
import time
import types
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any, TypeVar

__all__ = ["CallTimedOut", "await_timed", "resume", "step_once"]

T = TypeVar("T")


class CallTimedOut(Exception):
    """A call's timeout expired (a ``TimeoutError`` the call raised itself is not this)."""


async def await_timed(call: Awaitable[T], timeout: float | None, started: float) -> T:
    """Await ``call``, timed only if it suspends, by what is left of ``timeout``.

    ``started`` is the ``time.perf_counter()`` at which the call began: work done before
    its first suspension counts. Raises `CallTimedOut` when the timeout expires.
    """
    if isinstance(call, types.CoroutineType):
        done, value = step_once(call)
        if done:
            return value  # type: ignore[no-any-return]
        call = resume(call, value)
    if timeout is None:
        return await call
    deadline = _Deadline(max(0.0, timeout - (time.perf_counter() - started)))
    try:
        value = await call
    except asyncio.CancelledError as exc:
        if deadline.stop() and type(exc) is asyncio.CancelledError:
            raise CallTimedOut from None
        raise
    except TimeoutError:
        deadline.stop()
        if deadline.expired:
            raise CallTimedOut from None
        raise
    except BaseException:
        deadline.stop()
        raise
    deadline.stop()
    return value


class _Deadline:
    """What ``asyncio.timeout`` does for the awaiting task, without its context manager.

    One timer a call and no coroutines to enter and leave it: the timer cancels the task;
    `stop` takes that cancellation back, as ``Timeout.__aexit__`` does.
    """

    __slots__ = ("cancelling", "expired", "task", "timer")

    def __init__(self, delay: float) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("a timed call must be awaited in a task")
        self.task = task
        self.cancelling = task.cancelling()
        self.expired = False
        loop = task.get_loop()
        self.timer: asyncio.Handle
        if delay > 0:
            self.timer = loop.call_later(delay, self._expire)
        else:  # already due: on the next round of the loop, as asyncio.timeout does
            self.timer = loop.call_soon(self._expire)

    def _expire(self) -> None:
        self.task.cancel()
        self.expired = True

    def stop(self) -> bool:
        """Disarm; True if the deadline cancelled the task and nothing else cancelled it since."""
        self.timer.cancel()
        return self.expired and self.task.uncancel() <= self.cancelling


def step_once(coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
    """Run ``coro`` to its first suspension.

    Returns ``(True, result)`` if it finished, else ``(False, what it yielded)``, to be
    handed to `resume`. Its exceptions propagate.
    """
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        return True, stop.value
    return False, yielded


@types.coroutine
def resume(coro: Coroutine[Any, Any, Any], yielded: Any) -> Generator[Any, Any, Any]:
    """Go on with a coroutine that `step_once` suspended; awaiting this awaits the rest.

    What the coroutine yields goes to the awaiting task, and what the task sends or throws
    (a future's wake-up, a cancellation) goes back to the coroutine.
    """
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:
            try:
                yielded = coro.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = coro.send(sent)
            except StopIteration as stop:
                return stop.value
