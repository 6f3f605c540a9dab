"""Switching tracing on: `instrument` for every agent, ``Agent(instrument=...)`` for one.

This module never imports OpenTelemetry; ``ponder.observability.otel`` does, and only once a run is
traced. Without instrumentation a run has no tracing code in its path at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ponder.exceptions import UserError

__all__ = ["Instrumentation", "current_settings", "instrument", "resolve_instrumentation"]


@dataclass(frozen=True, slots=True)
class Instrumentation:
    """How runs are traced: where spans go and whether message content is recorded.

    ``tracer_provider`` is an OpenTelemetry ``TracerProvider`` (None: the global one);
    ``capture_content`` records messages, tool arguments and tool results on the spans.
    """

    tracer_provider: Any = None
    capture_content: bool = False


_settings: Instrumentation | None = None


def _require_opentelemetry() -> None:
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        raise UserError("tracing needs OpenTelemetry: pip install 'ponder[otel]'") from None


def instrument(
    tracer_provider: Any = None, *, capture_content: bool = False, enabled: bool = True
) -> None:
    """Trace the runs of every agent from now on; ``enabled=False`` stops it."""
    global _settings
    if enabled:
        _require_opentelemetry()
    _settings = Instrumentation(tracer_provider, capture_content) if enabled else None


def current_settings() -> Instrumentation | None:
    """What `instrument` switched on, if anything."""
    return _settings


def resolve_instrumentation(value: bool | Instrumentation | None) -> Instrumentation | None:
    """An agent's ``instrument`` option as settings: its own, else the global ones."""
    if value is None or value is False:
        return _settings if value is None else None
    if value is True:
        _require_opentelemetry()
        return _settings or Instrumentation()
    if isinstance(value, Instrumentation):
        _require_opentelemetry()
        return value
    raise UserError(f"instrument must be True, False or an Instrumentation, got {value!r}")
