"""Scale: 1k, 10k and 50k concurrent runs on one event loop, and where their time goes.

Each run is the concurrency section's run (4 ``add`` steps + ``agent_stop`` + answer = 6
model requests of 20 ms, the tool inline), all started together on one shared agent.
Throughput is compared with the CPU ceiling, 1 / (one run alone whose model answers
through an expiring timer, the timed runs' request path at full CPU); the time spent in
cyclic-GC collections is measured in the same pass by ``gc.callbacks`` (the
interpreter's GC settings are left as they are). Memory per idle run: N runs parked inside
a model request, the traced growth (tracemalloc) and, in a separate pass without
tracemalloc (whose own bookkeeping counts in RSS), the RSS growth, each divided by N.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from bench.agent import FINAL, ponder_agent
from bench.common import in_fresh_interpreter, table
from bench.concurrency import (
    LATENCY,
    STEPS,
    park_and_measure,
    rss_per_idle_run,
    traced_per_idle_run,
)
from ponder.agent import Agent
from ponder.tuning import restore_gc, tune_gc

__all__ = ["COUNTS", "GcTally", "cpu_per_run", "run", "scale_pass", "tracked_per_run"]

COUNTS = (1_000, 10_000, 50_000)
PASSES = {1_000: 3, 10_000: 1, 50_000: 1}
"""Timed passes per count (the median is shown); one at 10k and 50k keeps the section short."""
MEMORY_AT = (1_000, 10_000)
"""Counts whose idle memory is measured (per run it is flat from 1k to 50k)."""
TUNED = (10_000, 50_000)
"""Counts shown once more with the opt-in `tune_gc` (not what the rows above rely on)."""
UNCOLLECTED = 10_000
"""Count shown once more with the collector off for the pass (an experiment, not a setting)."""
TIMER = 1e-6
"""A model latency whose timer expires at once: the runs alone take the request path of the
timed runs (a timer, an event-loop turn) without idling, so their CPU time is exact. The
timer path costs about a fifth of a zero-latency run more."""


@dataclass
class GcTally:
    """Collections, and the wall and CPU seconds spent in them, per generation (``gc.callbacks``).

    CPU seconds (``time.process_time``) are what a busy machine distorts least.
    """

    count: list[int] = field(default_factory=lambda: [0, 0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    cpu: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    _started: tuple[float, float] = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = (time.perf_counter(), time.process_time())
            return
        generation = info["generation"]
        self.count[generation] += 1
        self.seconds[generation] += time.perf_counter() - self._started[0]
        self.cpu[generation] += time.process_time() - self._started[1]

    @property
    def total(self) -> float:
        """Wall seconds in all collections."""
        return sum(self.seconds)

    @property
    def total_cpu(self) -> float:
        """CPU seconds in all collections."""
        return sum(self.cpu)


@dataclass(frozen=True)
class Pass:
    """One timed pass of ``n`` concurrent runs."""

    wall: float
    cpu: float
    gc: GcTally
    alive_after: int
    """GC-tracked objects alive once the runs are over and their results dropped."""


async def _gather(agent: Agent, n: int) -> None:
    results = await asyncio.gather(*(agent.run("count") for _ in range(n)))
    if any(r.output != FINAL for r in results):
        raise RuntimeError("a concurrent run ended without its answer")


def scale_pass(
    n: int, *, thread: bool = False, tuned: bool = False, collector: bool = True
) -> Pass:
    """``n`` concurrent runs with 20 ms model latency, the GC watched by a callback.

    ``tuned``: with `ponder.tuning.tune_gc` for the pass (restored after it);
    ``collector=False``: the cyclic collector disabled for the pass (re-enabled after it).
    """
    agent = ponder_agent(STEPS, latency=LATENCY, thread=thread)
    loop = asyncio.new_event_loop()
    tally = GcTally()
    try:
        loop.run_until_complete(_gather(agent, min(n, 100)))
        gc.collect()
        baseline = len(gc.get_objects())
        settings = tune_gc() if tuned else None
        gc.callbacks.append(tally)
        if not collector:
            gc.disable()
        try:
            start, cpu0 = time.perf_counter(), time.process_time()
            loop.run_until_complete(_gather(agent, n))
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        finally:
            gc.enable()
            gc.callbacks.remove(tally)
            if settings is not None:
                restore_gc(settings)
        gc.collect()
        alive = len(gc.get_objects()) - baseline
    finally:
        loop.close()
    return Pass(wall, cpu, tally, alive)


async def _sequential(agent: Agent, repeat: int) -> tuple[float, float]:
    times = []
    cpu = time.process_time()
    for _ in range(repeat):
        start = time.perf_counter()
        await agent.run("count")
        times.append(time.perf_counter() - start)
    return statistics.median(times), (time.process_time() - cpu) / repeat


def cpu_per_run(*, thread: bool, repeat: int = 300, latency: float = 0.0) -> tuple[float, float]:
    """One run at a time on one loop: (median wall time, mean CPU time)."""
    agent = ponder_agent(STEPS, latency=latency, thread=thread)
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(_sequential(agent, 30))
        return loop.run_until_complete(_sequential(agent, repeat))
    finally:
        loop.close()


def tracked_per_run(n: int = 1_000) -> float:
    """GC-tracked objects a parked run holds (parked as in the memory rows)."""
    return park_and_measure(n, lambda: len(gc.get_objects()), thread=False)


def _row(n: int, *, tuned: bool = False, collector: bool = True) -> list[str]:
    """One table row, measured in a fresh interpreter.

    Fresh: what an earlier pass left in the heap (arenas, frozen objects, the collector's
    generations) would otherwise change every later row.
    """
    code = (
        "import json; from bench.scale import _row_here as f; "
        f"print(json.dumps(f({n}, {tuned}, {collector})))"
    )
    return [str(cell) for cell in json.loads(in_fresh_interpreter(code))]


def _row_here(n: int, tuned: bool, collector: bool) -> list[str]:
    before = cpu_per_run(thread=False, latency=TIMER)
    once = tuned or not collector
    passes = [
        scale_pass(n, tuned=tuned, collector=collector) for _ in range(1 if once else PASSES[n])
    ]
    # a shared machine's speed drifts over minutes: the ceiling is the faster of the runs
    # alone measured just before and just after the row's passes
    after = cpu_per_run(thread=False, latency=TIMER)
    alone = min(before, after, key=lambda measured: measured[1])
    chosen = sorted(passes, key=lambda p: p.wall)[len(passes) // 2]
    ideal = n / ((STEPS + 2) * LATENCY)
    rate = n / chosen.wall
    gc_cpu = chosen.gc.total_cpu
    if once or n not in MEMORY_AT:
        memory = ["—", "—"]
    else:
        traced, rss = traced_per_idle_run(n, thread=False), rss_per_idle_run(n, thread=False)
        memory = [f"{traced / 1024:.1f} KB", f"{rss / 1024:.1f} KB"]
    label = ", `tune_gc()` (opt-in)" if tuned else ""
    label += "" if collector else ", collector off (experiment)"
    return [
        f"{n:,}{label}",
        f"{chosen.wall * 1e3:,.0f} ms",
        f"{rate:,.0f}",
        f"{rate / min(ideal, 1 / alone[0]):.0%}",
        f"{n * alone[1] / chosen.cpu:.0%}",
        f"{gc_cpu:.2f} s ({gc_cpu / chosen.cpu:.0%})",
        f"{chosen.gc.count[2]} ({chosen.gc.cpu[2]:.2f} s)",
        f"{chosen.alive_after / n:.1f}",
        *memory,
    ]


HEADERS = [
    "Concurrent runs",
    "Wall",
    "Runs/s",
    "% of min(ideal, CPU ceiling)",
    "CPU per run alone / CPU per run here",
    "CPU in GC (share of CPU)",
    "Full collections (CPU)",
    "GC objects left per run",
    "Traced per idle run",
    "RSS per idle run",
]


CPU_HEADERS = ["Sync tool runs", "Wall per run", "CPU per run", "CPU ceiling runs/s"]


def run() -> str:
    """The scale section."""
    kinds = (
        ("tool inline (`run_in_thread=False`)", False, 0.0),
        ("tool inline, the model answering through an expiring timer", False, TIMER),
        ("worker thread (default)", True, 0.0),
    )
    cpu = [cpu_per_run(thread=thread, latency=latency) for _, thread, latency in kinds]
    tracked = tracked_per_run()
    rows = [_row(n) for n in COUNTS]
    rows += [_row(n, tuned=True) for n in TUNED]
    rows.append(_row(UNCOLLECTED, collector=False))
    cpu_rows = [
        [kind, f"{wall * 1e3:.3f} ms", f"{spent * 1e3:.3f} ms", f"{1 / spent:,.0f}"]
        for (kind, _, _), (wall, spent) in zip(kinds, cpu, strict=True)
    ]
    return "\n".join(
        [
            "## Scale: 1k, 10k and 50k concurrent runs",
            "",
            f"Each run: {STEPS} `add` steps + `agent_stop` + answer = {STEPS + 2} model "
            f"requests of {LATENCY * 1e3:.0f} ms, the tool inline; all runs start together "
            "on one shared `Agent`, default asyncio loop and the interpreter's default GC "
            "settings. Each row is measured in a fresh interpreter. The CPU ceiling is 1 / "
            "(one run, the runs one after another on one loop, "
            "the model answering through a timer that expires at once: the timed runs' own "
            "request path, a timer and an event-loop turn a request, with no idle time for the "
            "kernel's CPU accounting to misread), measured just before and just after each row, "
            "the faster of the two counting (a shared machine's speed drifts over minutes); the "
            "CPU "
            "column compares CPU time (`time.process_time`) per run, which a shared machine "
            "distorts less than wall time. GC time is measured in the same pass with "
            "`gc.callbacks` (CPU seconds); the objects left are "
            "the GC-tracked objects alive after the runs, their results dropped. Memory: N "
            "runs parked inside a model request after 2 steps; traced = tracemalloc growth "
            "/ N, RSS = RSS growth / N in a pass without tracemalloc. Median of "
            f"{PASSES[1_000]} passes at 1k, {PASSES[10_000]} at 10k and 50k; idle memory at 1k "
            "and 10k (per run it does not grow with N). The last rows "
            "run once with the opt-in `ponder.tuning.tune_gc()` (young-generation threshold "
            "50,000, startup objects frozen), restored after the pass; ponder never changes "
            "the GC settings itself. The very last row disables the collector for one pass, "
            "an experiment showing how much of the gap to the ceiling the collector is.",
            "",
            table(HEADERS, rows),
            "",
            f"A parked run holds {tracked:.0f} GC-tracked objects.",
            "",
            "Cost of one run (6 requests) measured alone: median wall time and mean CPU time "
            "of 300 (zero latency unless the row says otherwise):",
            "",
            table(CPU_HEADERS, cpu_rows),
        ]
    )
