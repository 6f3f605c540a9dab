"""Calls run to their first suspension at once; only a call that suspends is timed.

A call that finishes without suspending must give the same outcome as before; one that
suspends must behave exactly as an awaited coroutine: values and exceptions sent back in,
cancellation thrown in, the timeout counted from the start of the call.
"""

import asyncio
import time

import pytest

from ponder.messages import ToolCallPart
from ponder.tools import ToolExecutor, ToolRegistry, make_tool, tool


def call(name: str, arguments: str = "{}", id: str = "1") -> ToolCallPart:
    return ToolCallPart.from_raw(id, name, arguments)


async def test_a_call_that_suspends_gets_its_futures_results_and_exceptions() -> None:
    loop = asyncio.get_running_loop()

    @tool
    async def relay() -> str:
        """Await a future's value, then catch a future's exception."""
        first: asyncio.Future[str] = loop.create_future()
        loop.call_later(0.01, first.set_result, "value")
        got = await first
        second: asyncio.Future[str] = loop.create_future()
        loop.call_soon(second.set_exception, KeyError("gone"))
        try:
            await second
        except KeyError as exc:
            got += f" and {exc}"
        await asyncio.sleep(0)  # a bare yield passes through as well
        return got

    outcome = await ToolExecutor(ToolRegistry([relay])).run_call(call("relay"), run_id="r")
    assert outcome.status == "ok"
    assert outcome.message.content == "value and 'gone'"


async def test_the_timeout_counts_the_work_done_before_the_first_suspension() -> None:
    @tool(timeout=0.2, run_in_thread=False)
    async def slow_start() -> str:
        """Block the loop past the timeout, then wait."""
        time.sleep(0.3)
        await asyncio.sleep(30)
        return "never"

    started = time.perf_counter()
    outcome = await ToolExecutor(ToolRegistry([slow_start])).run_call(
        call("slow_start"), run_id="r"
    )
    assert outcome.status == "timeout"
    assert "did not finish within 0.2 seconds" in outcome.message.content
    assert time.perf_counter() - started < 10  # the 30 s wait was cut


async def test_a_sync_inline_tool_that_returns_an_awaitable_is_awaited_under_its_timeout() -> None:
    async def later() -> str:
        await asyncio.sleep(30)
        return "never"

    lazy = make_tool(
        "lazy",
        "Return a coroutine from a sync handler.",
        {"type": "object", "properties": {}},
        lambda: later(),
        timeout=0.05,
        run_in_thread=False,
    )
    outcome = await ToolExecutor(ToolRegistry([lazy])).run_call(call("lazy"), run_id="r")
    assert outcome.status == "timeout"


async def test_cancelling_a_suspended_call_reaches_the_tool() -> None:
    seen: list[str] = []
    entered = asyncio.Event()

    @tool
    async def waiter() -> str:
        """Wait until cancelled, and say so."""
        entered.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    task = asyncio.ensure_future(
        ToolExecutor(ToolRegistry([waiter])).run_call(call("waiter"), run_id="r")
    )
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["cancelled"]


async def test_a_call_that_never_suspends_leaves_no_timer_behind() -> None:
    @tool(run_in_thread=False)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    loop = asyncio.get_running_loop()
    executor = ToolExecutor(ToolRegistry([add]), default_timeout=60.0)
    timers = len(loop._scheduled)  # type: ignore[attr-defined]
    outcomes = [
        await executor.run_call(call("add", '{"a": 1, "b": 2}', id=str(n)), run_id="r")
        for n in range(20)
    ]
    assert [o.message.content for o in outcomes] == ["3"] * 20
    assert len(loop._scheduled) == timers  # type: ignore[attr-defined]


async def test_an_exception_in_the_first_step_is_the_calls_error() -> None:
    @tool
    async def broken() -> str:
        """Fail before any await."""
        raise ValueError("bad start")

    outcome = await ToolExecutor(ToolRegistry([broken])).run_call(call("broken"), run_id="r")
    assert outcome.status == "error"
    assert outcome.message.content == "Error: ValueError: bad start"


async def test_a_suspended_call_raising_its_own_timeout_error_is_an_error() -> None:
    @tool
    async def backend() -> str:
        """Wait, then fail with the backend's timeout."""
        await asyncio.sleep(0)
        raise TimeoutError("backend took too long")

    outcome = await ToolExecutor(ToolRegistry([backend])).run_call(call("backend"), run_id="r")
    assert outcome.status == "error"
    assert outcome.message.content == "Error: TimeoutError: backend took too long"


async def test_a_run_cancelled_after_its_calls_timeout_fired_stays_cancelled() -> None:
    caught = asyncio.Event()

    @tool(timeout=0.05)
    async def stubborn() -> str:
        """Outlive the timeout's cancellation, then wait on."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            caught.set()
            await asyncio.sleep(30)
        return "never"

    finished: list[str] = []
    run = asyncio.ensure_future(
        ToolExecutor(ToolRegistry([stubborn])).run_call(
            call("stubborn"), run_id="r", on_finish=lambda o: finished.append(o.status)
        )
    )
    await caught.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert finished == ["cancelled"]


async def test_a_timed_out_call_leaves_its_task_free_of_the_timeouts_cancellation() -> None:
    @tool(timeout=0.05)
    async def sleepy() -> str:
        """Sleep past the timeout."""
        await asyncio.sleep(30)
        return "never"

    outcome = await ToolExecutor(ToolRegistry([sleepy])).run_call(call("sleepy"), run_id="r")
    assert outcome.status == "timeout"
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
    await asyncio.sleep(0)  # and no cancellation is left pending on it
