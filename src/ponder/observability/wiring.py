"""Which taps watch a new run: the one place that names every observer.

The agent hands its options here; the run machinery only sees the combined `RunTap`.
Logging is always on (it costs nothing until a ``ponder`` logger is enabled); tracing
when ``instrument`` (or ``ponder.instrument()``) asks for it; recording with ``record``;
replay when the model is a replaying one (it offers a ``run_tap``).
"""

from __future__ import annotations

import os

from ponder.models.base import Model
from ponder.observability.instrumentation import Instrumentation, resolve_instrumentation
from ponder.observability.logs import log_tap
from ponder.observability.tap import RunTap, combine_taps
from ponder.replay.record import Recorder

__all__ = ["run_taps"]


def run_taps(
    model: Model,
    *,
    record: str | os.PathLike[str] | None = None,
    record_tools_spec: str | None = None,
    instrument: bool | Instrumentation | None = None,
    resumed: bool = False,
) -> RunTap | None:
    """The taps of one run (None when nothing watches it).

    A ``resumed`` run is logged and traced, never recorded or replayed: a cassette holds a
    whole run from its first request.
    """
    recorder = None
    if record is not None and not resumed:
        recorder = Recorder(record, tools_spec=record_tools_spec)
    make_tap = getattr(model, "run_tap", None)
    replay: RunTap | None = make_tap() if callable(make_tap) and not resumed else None
    tracer: RunTap | None = None
    tracing = resolve_instrumentation(instrument)
    if tracing is not None:
        # the `otel` extra: opentelemetry is imported only when tracing is asked for
        from ponder.observability.otel import OtelTap

        tracer = OtelTap(tracing)
    return combine_taps(log_tap(), tracer, recorder, replay)  # the recorder sees the replay's
