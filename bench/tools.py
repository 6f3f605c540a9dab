"""Tool dispatch overhead: one call and an 8-call batch of trivial tools through ToolExecutor.

Each call goes the whole way: argument parse check, validation and coercion, context,
timeout scope, result conversion, ledger message. The baseline calls the same function
directly (and an 8-way ``asyncio.gather`` of direct awaits for batches). The thread hop
row is the floor of any call made in another thread: ``loop.run_in_executor`` on one warm
thread of a ``ThreadPoolExecutor``, calling ``add`` directly (no validation, no message).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.common import fmt_us, median_seconds, table
from ponder.messages import ToolCallPart
from ponder.tools import ToolExecutor, ToolRegistry, tool

ROUNDS = 2000


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TOOLS = {
    "sync, worker thread (default)": tool(name="add_thread")(add),
    "sync, inline": tool(name="add_inline", run_in_thread=False)(add),
    "async": tool(name="add_async")(add_async),
}
EXECUTOR = ToolExecutor(ToolRegistry(TOOLS.values()))


def _calls(name: str, count: int) -> list[ToolCallPart]:
    return [ToolCallPart.from_raw(f"c{i}", name, '{"a": 2, "b": "3"}') for i in range(count)]


def _per_round(loop: asyncio.AbstractEventLoop, step: Callable[[], Awaitable[Any]]) -> float:
    async def rounds() -> None:
        for _ in range(ROUNDS):
            await step()

    return median_seconds(lambda: loop.run_until_complete(rounds()), repeat=7) / ROUNDS


def _baseline(loop: asyncio.AbstractEventLoop, size: int) -> float:
    async def direct() -> list[int]:
        return [add(2, 3)]

    async def gathered() -> list[int]:
        return list(await asyncio.gather(*(add_async(2, 3) for _ in range(size))))

    return _per_round(loop, direct if size == 1 else gathered)


def _thread_hop(loop: asyncio.AbstractEventLoop) -> float:
    with ThreadPoolExecutor(1) as pool:

        async def hop() -> int:
            return await loop.run_in_executor(pool, add, 2, 3)

        return _per_round(loop, hop)


def _measure(loop: asyncio.AbstractEventLoop, name: str, size: int) -> float:
    calls = _calls(name, size)

    async def step() -> None:
        outcomes = await EXECUTOR.run_batch(calls, run_id="bench", states={})
        assert all(o.status == "ok" for o in outcomes)

    return _per_round(loop, step)


def run() -> str:
    """Dispatch overhead per batch, per call, and against calling the function directly."""
    loop = asyncio.new_event_loop()
    try:
        rows = []
        for size in (1, 8):
            base = _baseline(loop, size)
            rows.append([f"{size} call(s)", "direct call (baseline)", fmt_us(base), "", ""])
            if size == 1:
                hop = _thread_hop(loop)
                floor = "thread hop floor (`run_in_executor`, direct call)"
                rows.append(["1 call(s)", floor, fmt_us(hop), fmt_us(hop), fmt_us(hop - base)])
            for label, made in TOOLS.items():
                spent = _measure(loop, made.name, size)
                rows.append(
                    [
                        f"{size} call(s)",
                        label,
                        fmt_us(spent),
                        fmt_us(spent / size),
                        fmt_us((spent - base) / size),
                    ]
                )
    finally:
        loop.close()
    headers = ["batch", "tool kind", "per batch", "per call", "overhead per call"]
    return (
        "## Tool dispatch\n\n"
        "`ToolExecutor.run_batch` on a trivial `add(a: int, b: int)` tool, arguments "
        '`{"a": 2, "b": "3"}` (one string coerced), validated and turned into ledger '
        f"messages; median of 7 runs of {ROUNDS} batches. Overhead per call = (per batch - "
        "baseline) / calls.\n\n" + table(headers, rows)
    )


if __name__ == "__main__":
    print(run())
