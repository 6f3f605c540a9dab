"""Scale: 1k, 10k, 50k and 100k concurrent runs on one event loop, and where their time goes.

Each run is the concurrency section's run (4 ``add`` steps + ``agent_stop`` + answer = 6
model requests of 20 ms, the tool inline), all started together on one shared agent.
Throughput is compared with the ceiling: the same runs with the cyclic collector off for
the pass, so the share is what the collector costs (the rest of the work is the same); the
time spent in collections is measured in the same pass by ``gc.callbacks`` (the
interpreter's GC settings are left as they are, except in the opt-in `tune_gc` rows).
Memory per idle run: N runs parked inside a model request, the traced growth
(tracemalloc) and, in a separate pass without tracemalloc (whose own bookkeeping counts in
RSS), the RSS growth, each divided by N.
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
from ponder.tuning import DEFAULT_MIDDLE, DEFAULT_THRESHOLD, restore_gc, tune_gc

__all__ = ["COUNTS", "GcTally", "cpu_per_run", "run", "scale_pass", "tracked_per_run"]

COUNTS = (1_000, 10_000, 50_000, 100_000)
PASSES = {1_000: 3, 10_000: 1, 50_000: 1, 100_000: 1}
"""Timed passes per count (the median is shown); one from 10k on keeps the section short."""
MEMORY_AT = (1_000, 10_000, 100_000)
"""Counts whose idle memory is measured."""
TUNED = (10_000, 50_000, 100_000)
"""Counts shown once more with the opt-in `tune_gc` (not what the rows above rely on)."""
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


def measure(n: int, mode: str) -> dict[str, float]:
    """The passes of one row, measured in a fresh interpreter.

    ``mode``: ``"default"`` (the interpreter's GC settings), ``"tuned"`` (the opt-in
    `tune_gc`) or ``"off"`` (the collector off for the pass: the ceiling).

    Fresh: what an earlier pass left in the heap (arenas, frozen objects, the collector's
    generations) would otherwise change every later row.
    """
    code = (
        "import json; from bench.scale import _measure_here as f; "
        f"print(json.dumps(f({n}, {mode!r})))"
    )
    found: dict[str, float] = json.loads(in_fresh_interpreter(code))
    return found


def _measure_here(n: int, mode: str) -> dict[str, float]:
    passes = [
        scale_pass(n, tuned=mode == "tuned", collector=mode != "off") for _ in range(PASSES[n])
    ]
    chosen = sorted(passes, key=lambda p: p.wall)[len(passes) // 2]
    found = {
        "wall": chosen.wall,
        "cpu": chosen.cpu,
        "gc_cpu": chosen.gc.total_cpu,
        "full": chosen.gc.count[2],
        "full_cpu": chosen.gc.cpu[2],
        "alive": chosen.alive_after,
    }
    if mode == "default" and n in MEMORY_AT:
        found["traced"] = traced_per_idle_run(n, thread=False)
        found["rss"] = rss_per_idle_run(n, thread=False)
    return found


_LABELS = {"default": "", "tuned": ", `tune_gc()` (opt-in)", "off": ", collector off (ceiling)"}


def _row(n: int, mode: str, found: dict[str, float], ceiling: dict[str, float]) -> list[str]:
    """A table row; ``ceiling`` is the collector-off measurement of the same count."""
    rate = n / found["wall"]
    ideal = n / ((STEPS + 2) * LATENCY)
    share = "—" if mode == "off" else f"{rate / min(ideal, n / ceiling['wall']):.0%}"
    memory = ["—", "—"]
    if "traced" in found:
        memory = [f"{found['traced'] / 1024:.1f} KB", f"{found['rss'] / 1024:.1f} KB"]
    return [
        f"{n:,}{_LABELS[mode]}",
        f"{found['wall'] * 1e3:,.0f} ms",
        f"{rate:,.0f}",
        share,
        f"{found['cpu'] / n * 1e3:.3f} ms",
        f"{found['gc_cpu']:.2f} s ({found['gc_cpu'] / found['cpu']:.0%})",
        f"{found['full']:.0f} ({found['full_cpu']:.2f} s)",
        f"{found['alive'] / n:.1f}",
        *memory,
    ]


HEADERS = [
    "Concurrent runs",
    "Wall",
    "Runs/s",
    "% of min(ideal, ceiling)",
    "CPU per run",
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
    ceilings: dict[int, dict[str, float]] = {}
    rows, tuned = [], []
    # a machine's speed drifts: a count's passes run one after another, between two
    # collector-off passes, and the faster of those is the count's ceiling
    for n in COUNTS:
        first = measure(n, "off")
        found = measure(n, "default")
        again = measure(n, "tuned") if n in TUNED else None
        last = measure(n, "off")
        ceilings[n] = min(first, last, key=lambda measured: measured["wall"])
        rows.append(_row(n, "default", found, ceilings[n]))
        if again is not None:
            tuned.append(_row(n, "tuned", again, ceilings[n]))
    rows += tuned
    rows += [_row(n, "off", ceilings[n], ceilings[n]) for n in COUNTS]
    cpu_rows = [
        [kind, f"{wall * 1e3:.3f} ms", f"{spent * 1e3:.3f} ms", f"{1 / spent:,.0f}"]
        for (kind, _, _), (wall, spent) in zip(kinds, cpu, strict=True)
    ]
    return "\n".join(
        [
            "## Scale: many concurrent runs on one event loop",
            "",
            f"Each run: {STEPS} `add` steps + `agent_stop` + answer = {STEPS + 2} model "
            f"requests of {LATENCY * 1e3:.0f} ms, the tool inline; all runs start together "
            "on one shared `Agent`, default asyncio loop. Each row is measured in a fresh "
            "interpreter. The ceiling of a count is the same runs with the cyclic collector "
            "off for the pass (its own rows, last; the faster of one pass just before the "
            "count's other rows and one just after them): everything else (ponder, the loop, the "
            "timers) is the same work, so the share is what the collector costs; the "
            "latency-bound ideal (N / 120 ms) is far above it. CPU per run is the pass's CPU "
            "time (`time.process_time`) / N; a run alone costs what the table below says, so "
            "the collector-off rows show what many concurrent runs cost beyond that. GC time "
            "is measured in the same pass with `gc.callbacks` (CPU seconds); the objects left "
            "are the GC-tracked objects alive after the runs, their results dropped. Memory: "
            "N runs parked inside a model request after 2 steps; traced = tracemalloc growth "
            "/ N, RSS = RSS growth / N in a pass without tracemalloc. Median of "
            f"{PASSES[1_000]} passes at 1k, {PASSES[10_000]} from 10k on; idle memory at 1k, "
            "10k and 100k. The first rows use the interpreter's "
            "default GC settings; the `tune_gc()` rows the opt-in "
            f"`ponder.tuning.tune_gc()` (young-generation threshold {DEFAULT_THRESHOLD:,}, "
            f"middle-generation threshold {DEFAULT_MIDDLE}, startup objects frozen), restored "
            "after the pass; ponder never changes the GC settings itself.",
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
