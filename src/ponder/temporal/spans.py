"""The spans a traced run's activities make (imported only when a worker traces).

See ``ponder.temporal.tracing``: ``invoke_agent ponder`` in ``ponder.prepare``, ``round
N`` and ``chat {model}`` in a model request, ``execute_tool {name}`` in a tool call, each
with the run's ``ponder.run_id``, under the parent the activity was given. A span lasts
as long as the activity that makes it: the run's and a round's end before the spans of
their later activities, which are still their children.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ponder._version import __version__
from ponder.messages import ToolCallPart
from ponder.models.base import ModelResponse
from ponder.observability.instrumentation import Instrumentation
from ponder.observability.otel import set_response_attributes
from ponder.observability.propagation import set_header_source
from ponder.tools.executor import ToolOutcome

__all__ = ["ActivitySpans"]

_W3C = TraceContextTextMapPropagator()


def _split(model: str) -> tuple[str, str]:
    provider, _, name = model.partition(":")
    return (provider, name) if name else ("", provider)


def _current_headers() -> dict[str, str]:
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier


def _traceparent(span: Span) -> str:
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, context=trace.set_span_in_context(span))
    return carrier["traceparent"]


class ActivitySpans:
    """The spans of one activity of a traced run, under the parent it was given."""

    def __init__(self, settings: Instrumentation, trace_data: dict[str, Any]) -> None:
        self.tracer = trace.get_tracer(
            "ponder", __version__, tracer_provider=settings.tracer_provider
        )
        self.data = trace_data
        parent = trace_data.get("parent")
        carrier = {"traceparent": parent} if isinstance(parent, str) and parent else {}
        self.parent: otel_context.Context = _W3C.extract(carrier)
        set_header_source(_current_headers)  # MCP requests of a tool carry its span

    def _attributes(self, **extra: Any) -> dict[str, Any]:
        found: dict[str, Any] = {"ponder.run_id": str(self.data.get("run_id", ""))}
        if self.data.get("round"):
            found["ponder.round"] = int(self.data["round"])
        return {**found, **extra}

    def run_span(self, model_name: str, workflow: str) -> str:
        """Make the run's ``invoke_agent ponder`` span; its ``traceparent``."""
        provider, model = _split(model_name)
        attributes = self._attributes(
            **{
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "ponder",
                "gen_ai.request.model": model,
                "ponder.workflow": workflow,
            }
        )
        if provider:
            attributes["gen_ai.provider.name"] = provider
        span = self.tracer.start_span(
            "invoke_agent ponder", context=self.parent, attributes=attributes
        )
        span.end()
        return _traceparent(span)

    @contextmanager
    def request(self, model_name: str, attempt: int) -> Iterator[dict[str, Any]]:
        """A model request's ``chat`` span (in a new round's span when it opens one).

        Yields a dict: set ``response`` in it before the block ends; ``round_traceparent``
        is in it when a round's span was made.
        """
        found: dict[str, Any] = {}
        parent, round_span = self.parent, None
        opens = self.data.get("open_round")
        if opens:
            round_span = self.tracer.start_span(
                f"round {opens}",
                context=parent,
                attributes=self._attributes(
                    **{"ponder.round": int(opens), "ponder.attempt": attempt}
                ),
            )
            parent = trace.set_span_in_context(round_span)
            found["round_traceparent"] = _traceparent(round_span)
        provider, model = _split(model_name)
        attributes = self._attributes(
            **{"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        )
        if provider:
            attributes["gen_ai.provider.name"] = provider
        span = self.tracer.start_span(
            f"chat {model}", context=parent, kind=SpanKind.CLIENT, attributes=attributes
        )
        try:
            with trace.use_span(span, end_on_exit=True, record_exception=True):
                yield found
                response = found.get("response")
                if isinstance(response, ModelResponse):
                    set_response_attributes(span, response)
        finally:
            if round_span is not None:
                round_span.end()

    @contextmanager
    def tool(self, call: ToolCallPart) -> Iterator[dict[str, Any]]:
        """A tool call's ``execute_tool`` span, current while the call runs.

        Set ``outcome`` in the yielded dict before the block ends.
        """
        attributes = self._attributes(
            **{
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.type": "function",
            }
        )
        span = self.tracer.start_span(
            f"execute_tool {call.name}", context=self.parent, attributes=attributes
        )
        found: dict[str, Any] = {}
        with trace.use_span(span, end_on_exit=True, record_exception=True):
            yield found
            outcome = found.get("outcome")
            if isinstance(outcome, ToolOutcome) and outcome.status != "ok":
                span.set_attribute("error.type", outcome.status)
                span.set_status(Status(StatusCode.ERROR, (outcome.result.error or "")[:500]))
