"""Timing and output helpers shared by the peer scripts (run inside the peer venv).

Every peer script takes a mode and arguments:

- ``steps K...``: median run time of K sequential ``add`` steps for each K;
- ``parallel``: median time of one turn with 8 parallel ``add`` calls;
- ``failure``: one turn with 3 parallel calls, the middle one raising; what survives;
- ``instantiate``: time and traced memory per agent built with the ``add`` tool;

and prints one JSON document on its last line.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from bench.common import instantiation, median_seconds

__all__ = [
    "FANOUT",
    "FINAL",
    "REPEAT",
    "add",
    "emit",
    "fail_tool",
    "instantiation",
    "main",
    "time_async",
    "time_sync",
]

REPEAT = 7
WARMUP = 2
FANOUT = 8
FINAL = "done"

os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.setdefault("LANGCHAIN_TRACING_V2", "false")
os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
os.environ.setdefault("OPENAI_API_KEY", "sk-unused")
os.environ.setdefault("AGNO_TELEMETRY", "false")
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fail_tool(a: int, b: int) -> int:
    """Add two integers (this one always fails)."""
    raise ValueError("boom")


def time_async(make: Callable[[], Awaitable[Any]], *, repeat: int = REPEAT) -> float:
    """Median wall time of ``await make()`` on one event loop, after warm-ups."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        for _ in range(WARMUP):
            loop.run_until_complete(make())
        times = []
        for _ in range(repeat):
            gc.collect()
            start = time.perf_counter()
            loop.run_until_complete(make())
            times.append(time.perf_counter() - start)
        return statistics.median(times)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())


def time_sync(fn: Callable[[], Any], *, repeat: int = REPEAT) -> float:
    """Median wall time of ``fn()`` after warm-ups."""
    return median_seconds(fn, repeat=repeat, warmup=WARMUP)


def emit(document: dict[str, Any]) -> None:
    """Print the result document as the last line of output."""
    sys.stdout.write("\n" + json.dumps(document) + "\n")
    sys.stdout.flush()


def main(
    steps: Callable[[int, list[str]], float],
    parallel: Callable[[list[str]], float] | None,
    failure: Callable[[list[str]], dict[str, Any]] | None,
    instantiate: Callable[[], Any] | None = None,
) -> None:
    """Dispatch ``sys.argv``: ``steps [options] K...``, ``parallel``, ``failure``, ...

    ``instantiate`` builds one agent with the ``add`` tool (mode ``instantiate``).
    """
    mode, rest = sys.argv[1], sys.argv[2:]
    options = [a for a in rest if not a.isdigit()]
    if mode == "steps":
        ks = [int(a) for a in rest if a.isdigit()]
        emit({"medians": {str(k): steps(k, options) for k in ks}})
    elif mode == "parallel" and parallel is not None:
        emit({"median": parallel(options)})
    elif mode == "failure" and failure is not None:
        emit(failure(options))
    elif mode == "instantiate" and instantiate is not None:
        emit(instantiation(instantiate))
    else:
        emit({"not_measured": f"mode {mode!r} not supported"})
