"""Trace context for what ponder starts outside the process: W3C ``traceparent`` values.

Without tracing this is empty and costs nothing. With instrumentation on (see
``ponder.observability.otel``), `trace_headers` gives the headers of the span in progress — the tool
call's while a tool runs — for MCP HTTP requests, and `trace_env` the same as
``TRACEPARENT``/``TRACESTATE`` environment variables for MCP stdio servers.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["set_header_source", "trace_env", "trace_headers"]

_source: Callable[[], dict[str, str]] | None = None


def set_header_source(source: Callable[[], dict[str, str]] | None) -> None:
    """Where `trace_headers` comes from (set by the tracer; None: nothing)."""
    global _source
    _source = source


def trace_headers() -> dict[str, str]:
    """``traceparent`` (and ``tracestate``) of the span in progress; ``{}`` without tracing."""
    return _source() if _source is not None else {}


def trace_env() -> dict[str, str]:
    """`trace_headers` as environment variables (``TRACEPARENT``, ``TRACESTATE``)."""
    return {name.upper(): value for name, value in trace_headers().items()}
