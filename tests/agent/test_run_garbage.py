"""A finished run is freed by reference counting alone: it leaves no reference cycles.

Many concurrent runs keep their objects alive across model requests; anything a run
leaves for the cycle collector makes every full collection of a busy process longer. The
runs here are made with the collector off, then the collector is asked what it finds.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import types
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import pytest

from ponder.agent import Agent
from ponder.agent.run.context import RunContext
from ponder.agent.run.state import RunState
from ponder.agent.strategies.react import ReActStrategy
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.models.base import ModelRequest, ModelResponse
from ponder.store import SQLiteStore
from ponder.tools import tool

from .scripts import stop


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _steps(request: ModelRequest) -> ModelResponse:
    """Two ``add`` calls, ``agent_stop``, then the answer."""
    last = request.messages[-1]
    stopped = isinstance(last, ToolMessage) and last.name == "agent_stop"
    if request.tool_choice == "none" or stopped:
        return reply("3")
    results = sum(1 for m in request.messages if isinstance(m, ToolMessage) and m.name == "add")
    if results < 2:
        return call_tools(("add", {"a": results, "b": 1}))
    return stop("3")


def _is_ponders(obj: Any) -> bool:
    if isinstance(obj, types.CoroutineType | types.FrameType):
        code = obj.cr_code if isinstance(obj, types.CoroutineType) else obj.f_code
        return "ponder" in code.co_filename
    return type(obj).__module__.startswith("ponder.")


@contextmanager
def cycle_garbage() -> Iterator[list[Any]]:
    """What the cycle collector finds of ponder's after the block (the collector off in it)."""
    gc.collect()
    found: list[Any] = []
    gc.disable()
    try:
        yield found
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        found.extend(o for o in gc.garbage if _is_ponders(o))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _agent(*, thread: bool, store: SQLiteStore | None = None) -> Agent:
    made = tool(add) if thread else tool(run_in_thread=False)(add)
    return Agent(ScriptedModel(_steps), tools=[made], store=store, enable_thinking_tool=False)


@pytest.mark.parametrize("thread", [False, True], ids=["inline tool", "tool in a thread"])
async def test_a_finished_run_leaves_no_reference_cycles(thread: bool) -> None:
    agent = _agent(thread=thread)
    assert (await agent.run("warm up")).output == "3"
    with cycle_garbage() as found:
        result = await agent.run("count")
        assert result.output == "3"
        del result
    assert [type(o).__qualname__ for o in found] == []


async def test_a_checkpointed_run_leaves_no_reference_cycles(tmp_path: Any) -> None:
    agent = _agent(thread=False, store=SQLiteStore(tmp_path / "runs.db"))
    assert (await agent.run("warm up")).output == "3"
    with cycle_garbage() as found:
        assert (await agent.run("count")).output == "3"
    assert [type(o).__qualname__ for o in found] == []


class _Watched(ReActStrategy):
    """The default strategy, keeping a weak reference to each run's state."""

    states: ClassVar[list[weakref.ref[RunState]]] = []

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        self.states.append(weakref.ref(ctx.state))


async def test_the_run_state_dies_with_its_run() -> None:
    agent = Agent(
        ScriptedModel(_steps),
        tools=[tool(run_in_thread=False)(add)],
        strategy=_Watched,
        enable_thinking_tool=False,
    )
    gc.disable()
    try:
        assert (await agent.run("count")).output == "3"
        assert [ref() for ref in _Watched.states] == [None]
    finally:
        gc.enable()


class _Parking:
    """`_steps` as a model that parks every run in its third request until released."""

    name = "parking"

    def __init__(self, runs: int) -> None:
        self.runs, self.parked = runs, 0
        self.all_parked, self.release = asyncio.Event(), asyncio.Event()

    async def request(self, request: ModelRequest) -> ModelResponse:
        results = sum(1 for m in request.messages if isinstance(m, ToolMessage))
        if results == 2 and not self.release.is_set():
            self.parked += 1
            if self.parked == self.runs:
                self.all_parked.set()
            await self.release.wait()
        return _steps(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelResponse]:
        yield await self.request(request)


async def test_a_waiting_run_keeps_few_objects_for_the_collector() -> None:
    """Every full collection walks what waiting runs keep (94, 77, 64, 62, now 60 a run here)."""
    runs = 200
    model = _Parking(runs)
    agent = Agent(model, tools=[tool(run_in_thread=False)(add)], enable_thinking_tool=False)
    warm = _Parking(1)
    warm.release.set()
    await Agent(warm, tools=[tool(run_in_thread=False)(add)], enable_thinking_tool=False).run("x")
    gc.collect()
    before = len(gc.get_objects())
    tasks = [asyncio.ensure_future(agent.run("count")) for _ in range(runs)]
    await asyncio.wait_for(model.all_parked.wait(), 30)
    gc.collect()
    per_run = (len(gc.get_objects()) - before) / runs
    model.release.set()
    assert [r.output for r in await asyncio.gather(*tasks)] == ["3"] * runs
    assert per_run <= 63, f"a waiting run keeps {per_run:.1f} GC-tracked objects"


async def test_a_run_waiting_on_a_tool_thread_keeps_few_objects_for_the_collector() -> None:
    """What a run keeps while its call runs in a worker thread (86, now 78 a run here).

    The pool's threads are started by a first batch of runs, so the count is the calls'
    own objects (at most 32 idle threads wait for calls, so the batches are smaller).
    """
    runs = 30
    gate, arrived = threading.Event(), threading.Semaphore(0)

    @tool(name="add")
    def blocking_add(a: int, b: int) -> int:
        """Add two integers, once the test lets the call go on."""
        arrived.release()
        gate.wait(30)
        return a + b

    agent = Agent(ScriptedModel(_steps), tools=[blocking_add], enable_thinking_tool=False)
    loop = asyncio.get_running_loop()

    async def all_in_the_tool() -> list[asyncio.Future[Any]]:
        tasks: list[asyncio.Future[Any]] = []
        for _ in range(runs):
            tasks.append(asyncio.ensure_future(agent.run("count")))
        for _ in range(runs):
            assert await loop.run_in_executor(None, arrived.acquire, True, 30)
        return tasks

    async def release(tasks: list[asyncio.Future[Any]]) -> None:
        gate.set()
        assert [r.output for r in await asyncio.gather(*tasks)] == ["3"] * runs
        gate.clear()

    await release(await all_in_the_tool())  # starts the threads (and the loop's executor)
    gc.collect()
    before = len(gc.get_objects())
    tasks = await all_in_the_tool()
    gc.collect()
    per_run = (len(gc.get_objects()) - before) / runs
    await release(tasks)
    assert per_run <= 82, f"a run waiting on its tool's thread keeps {per_run:.1f} objects"
