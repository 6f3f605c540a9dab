"""ponder on Temporal: throughput with 1, 2 and 4 worker processes, and per-step overhead.

A local dev server (``TemporalDevServer``, SQLite-backed) runs the bench agent of
``bench.agent`` (one ``add`` call per step, chat mode) with a 20 ms model latency. The
throughput rows start ``RUNS`` runs at once against ``W`` worker processes; the overhead
rows time one ``STEPS``-step run on Temporal (one in-process worker, no model latency)
against the same run locally with the SQLite checkpoint store. The history rows give
the bytes of one run's Temporal history by its number of rounds.

Run it alone with ``python -m bench.temporal`` (it rewrites its own section of
bench/RESULTS.md; worker processes are ``python -m bench.temporal worker ADDRESS QUEUE``).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.agent import check, ponder_agent
from bench.common import ROOT, table, write_section
from ponder.store import SQLiteStore

__all__ = ["run"]

RUNS = 40
RUN_STEPS = 3
LATENCY = 0.02
STEPS = 20
REPEAT = 3
WORKERS = (1, 2, 4)
HISTORY_ROUNDS = (10, 20, 40, 80)
HISTORY_BEFORE = {10: 62_860, 20: 146_640, 40: 403_306, 80: 1_273_136}
"""History bytes measured the same way while model requests carried the whole conversation."""


async def history_bytes(client: object, queue: str, rounds: int) -> int:
    """Bytes of the Temporal history of one ``rounds``-step run (its events, serialized)."""
    from temporalio.client import Client

    from ponder.temporal import TemporalAgent

    assert isinstance(client, Client)
    result = await TemporalAgent(client, queue).run("count", run_id=f"size-{uuid.uuid4().hex}")
    history = await client.get_workflow_handle(result.run_id).fetch_history()
    return sum(event.ByteSize() for event in history.events)


async def _history_sizes(address: str) -> dict[int, int]:
    from ponder.temporal import build_worker, connect

    client = await connect(address)
    queue = f"bench-{uuid.uuid4().hex}"
    sizes = {}
    for rounds in HISTORY_ROUNDS:
        async with build_worker(client, queue, ponder_agent(rounds)):
            sizes[rounds] = await history_bytes(client, queue, rounds)
    return sizes


async def _throughput(address: str, workers: int) -> float:
    from ponder.temporal import TemporalAgent, connect

    queue = f"bench-{uuid.uuid4().hex}"
    command = [sys.executable, "-m", "bench.temporal", "worker", address, queue]
    procs = [subprocess.Popen(command, cwd=ROOT) for _ in range(workers)]
    try:
        remote = TemporalAgent(await connect(address), queue)
        async with asyncio.timeout(120):
            while not await remote.has_worker():
                await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # let every process start polling
        await remote.run("warm up")
        start = time.perf_counter()
        results = await asyncio.gather(*(remote.run(f"count {n}") for n in range(RUNS)))
        elapsed = time.perf_counter() - start
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
    for result in results:
        check(result, RUN_STEPS)
    return RUNS / elapsed


async def _per_step(address: str) -> tuple[float, float]:
    from ponder.temporal import TemporalAgent, build_worker, connect

    client = await connect(address)
    queue = f"bench-{uuid.uuid4().hex}"
    agent = ponder_agent(STEPS)
    temporal_times, local_times = [], []
    with tempfile.TemporaryDirectory() as folder:
        local = ponder_agent(STEPS, store=SQLiteStore(Path(folder) / "runs.db"))
        async with build_worker(client, queue, agent):
            remote = TemporalAgent(client, queue)
            check(await remote.run("warm up"), STEPS)
            for _ in range(REPEAT):
                start = time.perf_counter()
                check(await remote.run("count"), STEPS)
                temporal_times.append(time.perf_counter() - start)
                start = time.perf_counter()
                check(await local.run("count"), STEPS)
                local_times.append(time.perf_counter() - start)
    return statistics.median(temporal_times) / STEPS, statistics.median(local_times) / STEPS


async def _measure(address: str) -> str:
    load = os.getloadavg()[0]
    rates = {w: await _throughput(address, w) for w in WORKERS}
    on_temporal, on_sqlite = await _per_step(address)
    sizes = await _history_sizes(address)
    rows = [
        (f"{w} worker process(es)", f"{rates[w]:.1f} runs/s", f"{rates[w] / rates[1]:.2f}×")
        for w in WORKERS
    ]
    steps = [
        ("local, SQLite checkpoint store", f"{on_sqlite * 1e3:.2f} ms", "1.0×"),
        (
            "Temporal (1 worker, dev server)",
            f"{on_temporal * 1e3:.2f} ms",
            f"{on_temporal / on_sqlite:.1f}×",
        ),
    ]
    history = [
        (n, f"{HISTORY_BEFORE[n]:,}", f"{sizes[n]:,}", f"{sizes[n] / n:,.0f}")
        for n in HISTORY_ROUNDS
    ]
    return (
        "## Temporal\n\n"
        f"{RUNS} concurrent runs of {RUN_STEPS} steps, {LATENCY * 1e3:.0f} ms model latency, "
        "against a local dev server (SQLite):\n\n"
        + table(["workers", "throughput", "vs 1 worker"], rows)
        + f"\n\nTime per step of one {STEPS}-step run (no model latency), median of "
        f"{REPEAT}:\n\n"
        + table(["where", "per step", "ratio"], steps)
        + "\n\nHistory bytes of one run (chat mode, one `add` call a round), before and "
        "after model requests read their conversation from the workflow by Query instead "
        "of carrying it in their input:\n\n"
        + table(["rounds", "bytes before", "bytes now", "bytes/round now"], history)
        + "\n\nOn Temporal every step is two activities (model, tool) and their workflow "
        "tasks, each a round trip through the server; the dev server's SQLite file is the "
        "shared bottleneck here, so the worker scaling is a lower bound. A model request "
        "also costs one Query round trip now (its conversation, by reference): in "
        "alternating runs of the per-step row on 2026-12-01 under the same load, the old "
        "inline version took 243 and 282 ms a step, this one 310 and 395 ms. "
        f"The machine was shared with other work (1-minute load average {load:.1f} on "
        f"{os.cpu_count()} cores at the start), so absolute rates are pessimistic; the "
        "ratios within the section are from the same run.\n"
    )


def run() -> str:
    """The Markdown section."""
    from ponder.testing import TemporalDevServer

    with TemporalDevServer() as server:
        return asyncio.run(_measure(server.address))


def _serve(address: str, queue: str) -> None:
    from ponder.temporal import build_worker, connect

    async def serve() -> None:
        client = await connect(address)
        agent = ponder_agent(RUN_STEPS, latency=LATENCY)
        async with build_worker(client, queue, agent):
            await asyncio.Event().wait()

    asyncio.run(serve())


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        _serve(sys.argv[2], sys.argv[3])
    else:
        section = run()
        print(section, flush=True)
        write_section(section)
        os._exit(0)  # the SDK's threads can abort a finalizing interpreter (sdk-python#300)
