"""What tracing and recording cost per step: the per-step overhead run with them off and on.

The same K-step chat-mode ReAct run as ``bench.agent`` (a zero-latency fake model, one
sync ``add`` call per step): as it is, traced with OpenTelemetry (the SDK's tracer
provider with a span processor that exports nowhere, so the cost is ponder's spans, not
an exporter's), and recorded to a cassette.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.agent import check, ponder_agent
from bench.common import table
from ponder.agent import Agent

__all__ = ["run"]

STEPS = (20, 160)
REPEAT = 7


def _traced(agent: Agent) -> Agent:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    from ponder.observability.instrumentation import Instrumentation

    class Nowhere(SpanExporter):
        def export(self, spans: Sequence[object]) -> SpanExportResult:  # type: ignore[override]
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Nowhere()))
    agent.instrument = Instrumentation(tracer_provider=provider)
    return agent


def _medians(configure: Callable[[Agent], Agent]) -> dict[int, float]:
    loop = asyncio.new_event_loop()
    medians: dict[int, float] = {}
    try:
        for k in STEPS:
            agent = configure(ponder_agent(k))
            for _ in range(2):
                check(loop.run_until_complete(agent.run("count")), k)
            times = []
            for _ in range(REPEAT):
                gc.collect()
                start = time.perf_counter()
                loop.run_until_complete(agent.run("count"))
                times.append(time.perf_counter() - start)
            medians[k] = statistics.median(times)
    finally:
        loop.close()
    return medians


def run() -> str:
    """The tracing and recording overhead section."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    folder = tempfile.TemporaryDirectory()

    def recorded(agent: Agent) -> Agent:
        agent.record = Path(folder.name) / "run.json"
        return agent

    rows_in = [
        ("off (no tracing, no recording)", _medians(lambda agent: agent)),
        ("OpenTelemetry on (SDK provider, exporting nowhere)", _medians(_traced)),
        ("recording a cassette (`record=`)", _medians(recorded)),
    ]
    folder.cleanup()
    base = rows_in[0][1]
    hi = STEPS[-1]
    rows = []
    for label, found in rows_in:
        cells = [f"{found[k] * 1e3:.1f} ms ({found[k] / k * 1e3:.3f})" for k in STEPS]
        extra = (found[hi] - base[hi]) / hi * 1e3
        rows.append([label, *cells, f"{extra:+.3f}", f"{found[hi] / base[hi]:.2f}×"])
    headers = ["ponder ReAct, chat mode", *(f"K={k}" for k in STEPS)]
    headers += [f"added ms/step at K={hi}", "vs off"]
    return "\n".join(
        [
            "## Tracing and recording overhead per step",
            "",
            "The per-step run above (chat mode, tool in a thread), with OpenTelemetry tracing "
            "and with cassette recording switched on. Cells: median run time (average ms per "
            f"step), 2 warm-ups, median of {REPEAT}. Off, no tracing code runs at all (and "
            "OpenTelemetry is not imported); on, each step adds a round, a chat and an "
            "execute_tool span. A recording serialises each new message once (a request "
            "keeps only what it adds to the previous one). `python -m bench observability`.",
            "",
            f"{os.cpu_count()} CPUs, load average {load} at the start.",
            "",
            table(headers, rows),
        ]
    )
