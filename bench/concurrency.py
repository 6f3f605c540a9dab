"""Many concurrent ponder runs on one event loop, against a model with 20 ms latency.

Throughput: N runs of K steps start together on one agent; each run makes K + 2 model
requests of 20 ms, so the ideal (latency-bound) wall time is (K + 2) × 20 ms whatever N
is, and the ideal throughput is N / that. The table also gives the CPU-bound ceiling
(1 / the zero-latency run time, measured sequentially): past it, no scheduler can reach
the latency-bound ideal on one core.

Memory: N runs are started and held idle inside a model request after ``IDLE_AT`` steps;
the traced allocation growth (tracemalloc) and the RSS growth, divided by N, is the cost
of one idle run.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from bench.agent import FINAL, StepModel, ponder_agent, steps_done
from bench.common import in_fresh_interpreter, table
from ponder.agent import Agent
from ponder.models.base import ModelRequest, ModelResponse

__all__ = [
    "IDLE_AT",
    "LATENCY",
    "STEPS",
    "idle_bytes_per_run",
    "park_and_measure",
    "rss_per_idle_run",
    "run",
    "throughput",
    "traced_per_idle_run",
]

LATENCY = 0.020
STEPS = 4
IDLE_AT = 2
COUNTS = (1_000, 10_000)
CASES = ((1_000, True), (1_000, False), (10_000, True))
REPEAT = 3


class IdleModel(StepModel):
    """`StepModel` that parks every run in its request after ``IDLE_AT`` steps."""

    def __init__(self, steps: int) -> None:
        super().__init__(steps)
        self.release = asyncio.Event()
        self.parked = 0
        self.all_parked = asyncio.Event()
        self.expected = 0

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Park once at ``IDLE_AT`` steps until released."""
        if not self.release.is_set() and steps_done(request.messages) == IDLE_AT:
            self.parked += 1
            if self.parked == self.expected:
                self.all_parked.set()
            await self.release.wait()
        return self.decide(request)


def _rss_bytes() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096.0


async def _gather(agent: Agent, n: int) -> float:
    start = time.perf_counter()
    results = await asyncio.gather(*(agent.run("count") for _ in range(n)))
    wall = time.perf_counter() - start
    if any(r.output != FINAL for r in results):
        raise RuntimeError("a concurrent run ended without its answer")
    return wall


def throughput(
    n: int, *, thread: bool = True, repeat: int = REPEAT, collector: bool = True
) -> float:
    """Median wall time of ``n`` concurrent runs with 20 ms model latency.

    ``collector=False``: the cyclic collector off during each pass (re-enabled after it).
    """
    agent = ponder_agent(STEPS, latency=LATENCY, thread=thread)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_gather(agent, min(n, 100)))
        walls = []
        for _ in range(repeat):
            gc.collect()
            if not collector:
                gc.disable()
            try:
                walls.append(loop.run_until_complete(_gather(agent, n)))
            finally:
                gc.enable()
    finally:
        loop.close()
    return statistics.median(walls)


def _zero_latency_run(thread: bool) -> float:
    agent = ponder_agent(STEPS, thread=thread)
    loop = asyncio.new_event_loop()
    try:
        for _ in range(20):
            loop.run_until_complete(agent.run("count"))
        times = []
        for _ in range(200):
            start = time.perf_counter()
            loop.run_until_complete(agent.run("count"))
            times.append(time.perf_counter() - start)
    finally:
        loop.close()
    return statistics.median(times)


async def _park(n: int, measure: Callable[[], float], thread: bool) -> float:
    model = IdleModel(STEPS)
    model.expected = n
    agent = ponder_agent(STEPS, model=model, thread=thread)
    await ponder_agent(STEPS, thread=thread).run("count")  # lazy imports and caches
    gc.collect()
    before = measure()
    tasks = [asyncio.ensure_future(agent.run("count")) for _ in range(n)]
    parked = asyncio.ensure_future(model.all_parked.wait())
    done, _ = await asyncio.wait([parked, *tasks], return_when=asyncio.FIRST_COMPLETED)
    if parked not in done:  # a run that ended early would leave the others waiting forever
        parked.cancel()
        raise RuntimeError(f"a run ended before it parked: {next(iter(done)).exception()!r}")
    gc.collect()
    after = measure()
    model.release.set()
    results = await asyncio.gather(*tasks)
    if any(r.output != FINAL for r in results):
        raise RuntimeError("a parked run ended without its answer")
    return (after - before) / n


def park_and_measure(n: int, measure: Callable[[], float], *, thread: bool = True) -> float:
    """Growth of ``measure()`` per run while ``n`` runs wait inside a model request."""
    return asyncio.run(_park(n, measure, thread))


def _traced_bytes() -> float:
    return tracemalloc.get_traced_memory()[0]


def traced_per_idle_run(n: int, *, thread: bool = True) -> float:
    """Traced (tracemalloc) bytes per run while ``n`` runs wait inside a model request."""
    tracemalloc.start()
    try:
        return park_and_measure(n, _traced_bytes, thread=thread)
    finally:
        tracemalloc.stop()


def rss_per_idle_run(n: int, *, thread: bool = True) -> float:
    """RSS bytes per idle run, in a fresh interpreter without tracemalloc.

    Fresh: pages an earlier pass made resident would hide the growth; without tracemalloc:
    its own bookkeeping (a trace per allocation) counts in RSS.
    """
    code = f"from bench.concurrency import _rss_in_process as f; print(f({n}, {thread}))"
    return float(in_fresh_interpreter(code))


def _rss_in_process(n: int, thread: bool) -> float:
    return park_and_measure(n, _rss_bytes, thread=thread)


def idle_bytes_per_run(n: int) -> tuple[float, float]:
    """(traced bytes, RSS bytes) per run while ``n`` runs wait inside a model request."""
    return traced_per_idle_run(n), rss_per_idle_run(n)


def _row(n: int, thread: bool, memory: tuple[float, float]) -> list[str]:
    ideal_wall = (STEPS + 2) * LATENCY
    wall = throughput(n, thread=thread)
    ceiling = throughput(n, thread=thread, collector=False)
    return [
        f"{n:,}",
        "worker thread (default)" if thread else "`run_in_thread=False`",
        f"{wall * 1e3:,.0f} ms",
        f"{n / wall:,.0f}",
        f"{n / ideal_wall:,.0f}",
        f"{ideal_wall / wall:.1%}",
        f"{n / ceiling:,.0f}",
        f"{max(ideal_wall, ceiling) / wall:.0%}",  # the slower bound is the one that holds
        f"{memory[0] / 1024:.1f} KB",
        f"{memory[1] / 1024:.1f} KB",
    ]


def _gc_share(n: int) -> tuple[float, float, int]:
    """(wall, seconds in full collections, tracked objects) for ``n`` concurrent runs."""
    spent = {"full": 0.0, "start": 0.0}

    def timer(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            spent["start"] = time.perf_counter()
        elif info["generation"] == 2:
            spent["full"] += time.perf_counter() - spent["start"]

    agent = ponder_agent(STEPS, latency=LATENCY)
    loop = asyncio.new_event_loop()
    gc.collect()
    gc.callbacks.append(timer)
    try:
        wall = loop.run_until_complete(_gather(agent, n))
        tracked = len(gc.get_objects())
    finally:
        gc.callbacks.remove(timer)
        loop.close()
    return wall, spent["full"], tracked


def _gc_note() -> str:
    wall, full, tracked = _gc_share(COUNTS[-1])
    return (
        f"Where the time goes at {COUNTS[-1]:,} runs (one more pass, gc callbacks on): "
        f"{full:.1f} s of {wall:.1f} s wall is spent in full (generation 2) cyclic-GC "
        f"collections; {tracked:,} GC-tracked objects are alive at the end "
        f"(≈{tracked / COUNTS[-1]:.0f} per finished run with its result)."
    )


HEADERS = [
    "Concurrent runs",
    "Sync tool runs in",
    "Wall (median)",
    "Runs/s",
    "Ideal runs/s (latency-bound)",
    "% of ideal",
    "Runs/s, collector off (ceiling)",
    "% of min(ideal, ceiling)",
    "Traced memory per idle run",
    "RSS per idle run",
]


def run() -> str:
    """The concurrency section."""
    requests = STEPS + 2
    ideal_wall = requests * LATENCY
    cpu = {thread: _zero_latency_run(thread) for thread in (True, False)}
    memory = {n: idle_bytes_per_run(n) for n in COUNTS}
    rows = [_row(n, thread, memory[n]) for n, thread in CASES]
    return "\n".join(
        [
            "## Concurrency: many runs on one event loop",
            "",
            f"Each run: {STEPS} `add` steps + `agent_stop` + answer = {requests} model "
            f"requests of {LATENCY * 1e3:.0f} ms, so one run ideally takes "
            f"{ideal_wall * 1e3:.0f} ms however many share the loop. One shared `Agent`, "
            f"chat mode, default asyncio loop, median of {REPEAT}. The ceiling is the same "
            "runs with the cyclic collector off during the pass (everything else is the same "
            "work). A zero-latency run alone takes "
            f"{cpu[True] * 1e3:.3f} ms with the tool in a worker thread and "
            f"{cpu[False] * 1e3:.3f} ms inline; concurrent runs need less a run, since a "
            "loop turn serves many of them and a worker thread runs beside the loop. Memory: "
            f"N runs parked inside a model request after {IDLE_AT} steps (tracemalloc "
            "growth / N; RSS growth / N, measured in a pass without tracemalloc).",
            "",
            table(HEADERS, rows),
            "",
            _gc_note(),
        ]
    )
