"""What watches runs from outside: logging, tracing, recording and replay.

Observers see a run through `RunTap` (``ponder.observability.tap``) and depend on the
event stream only, never on the run machinery. `run_taps` (``ponder.observability.wiring``)
builds one run's taps from an agent's options.
"""

__all__: list[str] = []
