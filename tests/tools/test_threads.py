"""Sync tools on worker threads: context, names, errors, cancellation and many at once."""

from __future__ import annotations

import asyncio
import contextvars
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path

import pytest

from ponder.messages import ToolCallPart
from ponder.tools import ToolContext, ToolExecutor, ToolRegistry, tool
from ponder.tools.threads import run_in_daemon_thread

ROOT = Path(__file__).resolve().parents[2]
REQUEST = contextvars.ContextVar("REQUEST", default="none")


def executor_for(*tools: object) -> ToolExecutor:
    return ToolExecutor(ToolRegistry(tools))  # type: ignore[arg-type]


async def test_a_threaded_tool_sees_the_callers_context_variables_and_cannot_change_them() -> None:
    @tool
    def whoami() -> str:
        """Say which request this is."""
        seen = REQUEST.get()
        REQUEST.set("changed in the tool")
        return seen

    executor = executor_for(whoami)
    for name in ("first", "second", "third"):
        REQUEST.set(name)
        outcome = await executor.run_call(ToolCallPart.from_args("c", "whoami", {}), run_id="r")
        assert outcome.message.content == name
        assert REQUEST.get() == name


async def test_a_context_variable_set_in_one_call_does_not_reach_the_next_on_that_thread() -> None:
    @tool
    def leak(value: str) -> str:
        """Set a variable and report what was there."""
        seen = REQUEST.get()
        REQUEST.set(value)
        return seen

    executor = executor_for(leak)
    REQUEST.set("caller")
    for value in ("a", "b", "c"):
        outcome = await executor.run_call(
            ToolCallPart.from_args("c", "leak", {"value": value}), run_id="r"
        )
        assert outcome.message.content == "caller"


async def test_a_threaded_tool_runs_off_the_loop_thread_under_its_own_name() -> None:
    @tool
    def where() -> str:
        """Name the thread."""
        current = threading.current_thread()
        return f"{current.name} {current.daemon} {current is threading.main_thread()}"

    outcome = await executor_for(where).run_call(
        ToolCallPart.from_args("c", "where", {}), run_id="r"
    )
    assert outcome.message.content == "ponder-tool-where True False"


async def test_many_threaded_calls_run_at_the_same_time() -> None:
    size = 40
    barrier = threading.Barrier(size, timeout=20)

    @tool
    def meet(i: int) -> int:
        """Wait until every sibling is running."""
        barrier.wait()
        return i

    calls = [ToolCallPart.from_args(f"c{i}", "meet", {"i": i}) for i in range(size)]
    for _ in range(3):  # again on the threads the first round left idle
        outcomes = await executor_for(meet).run_batch(calls, run_id="r")
        assert [o.message.content for o in outcomes] == [str(i) for i in range(size)]


async def test_an_exception_in_a_thread_reaches_the_caller_with_its_traceback() -> None:
    def deep() -> None:
        raise LookupError("nothing under that key")

    def shallow() -> None:
        deep()

    ctx = ToolContext(run_id="r", call_id="c", tool_name="shallow")
    with pytest.raises(LookupError) as caught:
        await run_in_daemon_thread(shallow, ctx)
    names = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert names[-2:] == ["shallow", "deep"]
    assert ctx.worker is not None and ctx.worker.done()


async def test_an_exception_in_a_threaded_tool_is_that_calls_error() -> None:
    @tool
    def explode() -> str:
        """Fail."""
        raise ValueError("broken on purpose")

    outcomes = await executor_for(
        explode, tool(name="ok", description="Say fine.")(lambda: "fine")
    ).run_batch(
        [ToolCallPart.from_args("1", "explode", {}), ToolCallPart.from_args("2", "ok", {})],
        run_id="r",
    )
    assert [o.status for o in outcomes] == ["error", "ok"]
    assert outcomes[0].message.content == "Error: ValueError: broken on purpose"


async def test_cancelling_a_threaded_call_leaves_its_thread_running_and_holding_its_slot() -> None:
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    @tool(max_concurrency=1)
    def slow() -> str:
        """Block until released."""
        started.set()
        release.wait(20)
        finished.set()
        return "done"

    executor = executor_for(slow)
    first = asyncio.ensure_future(
        executor.run_call(ToolCallPart.from_args("1", "slow", {}), run_id="r")
    )
    await asyncio.to_thread(started.wait, 20)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    started.clear()
    second = asyncio.ensure_future(
        executor.run_call(ToolCallPart.from_args("2", "slow", {}), run_id="r")
    )
    await asyncio.sleep(0.1)
    assert not started.is_set()  # the cancelled call's thread still holds the only slot
    release.set()
    outcome = await second
    assert outcome.status == "ok" and finished.is_set()


async def test_a_timed_out_threaded_call_is_reported_and_its_thread_finishes_later() -> None:
    release, finished = threading.Event(), threading.Event()

    @tool(timeout=0.1)
    def slow() -> str:
        """Block until released."""
        release.wait(20)
        finished.set()
        return "late"

    outcome = await executor_for(slow).run_call(ToolCallPart.from_args("1", "slow", {}), run_id="r")
    assert outcome.status == "timeout"
    assert "still running in the background" in outcome.message.content
    release.set()
    assert await asyncio.to_thread(finished.wait, 20)
    outcome = await executor_for(
        tool(name="after", description="Say next.")(lambda: "next")
    ).run_call(ToolCallPart.from_args("2", "after", {}), run_id="r")
    assert outcome.message.content == "next"


async def test_threaded_calls_from_two_event_loops_each_come_back_to_their_own() -> None:
    @tool
    def loop_id() -> str:
        """Return nothing of interest."""
        return "x"

    def in_new_loop() -> list[str]:
        async def main() -> list[str]:
            calls = [ToolCallPart.from_args(f"c{i}", "loop_id", {}) for i in range(8)]
            outcomes = await executor_for(loop_id).run_batch(calls, run_id="other")
            return [o.message.content for o in outcomes]

        return asyncio.run(main())

    other = asyncio.ensure_future(asyncio.to_thread(in_new_loop))
    here = await executor_for(loop_id).run_batch(
        [ToolCallPart.from_args(f"c{i}", "loop_id", {}) for i in range(8)], run_id="r"
    )
    assert [o.message.content for o in here] == ["x"] * 8
    assert await other == ["x"] * 8


FORKED = """
import asyncio, os, sys
from ponder.messages import ToolCallPart
from ponder.tools import ToolExecutor, ToolRegistry, tool

@tool
def pid() -> int:
    '''The process id.'''
    return os.getpid()

executor = ToolExecutor(ToolRegistry([pid]))
def once() -> str:
    call = ToolCallPart.from_args("c", "pid", {})
    return asyncio.run(executor.run_call(call, run_id="r")).message.content

assert once() == str(os.getpid())
child = os.fork()
if child == 0:
    os._exit(0 if once() == str(os.getpid()) else 3)
_, status = os.waitpid(child, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_threaded_tools_on_threads_of_its_own() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FORKED], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "0"


def open_descriptors() -> int:
    return len(os.listdir("/dev/fd"))


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd")
async def test_calls_one_after_another_reuse_one_idle_thread_and_its_descriptors() -> None:
    @tool
    def thread_id() -> int:
        """Which thread runs this."""
        return threading.get_ident()

    executor = executor_for(thread_id)
    before = open_descriptors()
    seen = set()
    for n in range(50):
        outcome = await executor.run_call(
            ToolCallPart.from_args(str(n), "thread_id", {}), run_id="r"
        )
        seen.add(outcome.message.content)
    assert len(seen) == 1
    assert open_descriptors() - before <= 2  # the one idle thread's socket pair


async def test_a_batchs_threaded_call_runs_while_an_inline_sibling_holds_the_loop() -> None:
    started = threading.Event()

    @tool
    def first() -> str:
        """Say it started."""
        started.set()
        return "started"

    @tool(run_in_thread=False)
    def second() -> bool:
        """Block the loop until the threaded sibling has started, or give up."""
        return started.wait(20)

    outcomes = await executor_for(first, second).run_batch(
        [ToolCallPart.from_args("1", "first", {}), ToolCallPart.from_args("2", "second", {})],
        run_id="r",
    )
    assert [o.message.content for o in outcomes] == ["started", "true"]
