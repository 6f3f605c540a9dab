"""amrita-sense 1.1.3: the workloads of bench/vm.py on its WorkflowInterpreter.

Prints one JSON line: seconds per node / per iteration, and render time of 100k nodes.
Sync nodes use amrita-sense's default (``wrap_to_async=True``: a thread hop per call).
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from amrita_sense.logging import logger

logger.remove()

from amrita_sense import WHILE, Node, WorkflowInterpreter  # noqa: E402

CHAIN, LOOP, BIG = 2000, 1000, 100_000
COUNTER = {"i": 0}


async def timed(run: Callable[[], Awaitable[Any]], repeat: int = 5) -> float:
    await run()
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return min(times)  # best of N, like ponder's side


def make(kind: str, tag: str, fn_kind: str) -> Any:
    if fn_kind == "body":
        if kind == "async":

            async def body() -> None:
                COUNTER["i"] += 1

            return Node(tag=tag)(body)

        def sync_body() -> None:
            COUNTER["i"] += 1

        return Node(tag=tag)(sync_body)
    if kind == "async":

        async def cond() -> bool:
            return COUNTER["i"] < LOOP

        return Node(tag=tag)(cond)

    def sync_cond() -> bool:
        return COUNTER["i"] < LOOP

    return Node(tag=tag)(sync_cond)


def chain_of(nodes: list[Any]) -> Any:
    chain = nodes[0]
    for item in nodes[1:]:
        chain = chain >> item
    return chain


async def per_node(kind: str) -> float:
    rendered = chain_of([make(kind, f"n{k}", "body") for k in range(CHAIN)]).render()

    async def run() -> None:
        await WorkflowInterpreter(rendered).run()

    return await timed(run) / CHAIN


async def per_iteration(kind: str) -> float:
    program = WHILE(make(kind, "cond", "cond")).ACTION(make(kind, "body", "body"))

    async def run() -> None:
        COUNTER["i"] = 0
        await WorkflowInterpreter(program).run()
        assert COUNTER["i"] == LOOP

    return await timed(run, repeat=3) / LOOP


def render_big() -> float:
    chain = chain_of([make("async", f"n{k}", "body") for k in range(BIG)])
    times = []
    for _ in range(3):
        gc.collect()
        start = time.perf_counter()
        chain.render()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def main() -> None:
    result = {
        "chain_async": await per_node("async"),
        "chain_sync": await per_node("sync"),
        "while_async": await per_iteration("async"),
        "while_sync": await per_iteration("sync"),
        "compile_100k": render_big(),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
