"""OpenTelemetry tracing of runs, following the OpenTelemetry GenAI semantic conventions.

Turned on per agent (``Agent(instrument=True)``) or for every agent
(``ponder.instrument()``, see ``ponder.observability.instrumentation``);
``opentelemetry-api`` is imported only then (``pip install 'ponder[otel]'``). Each run
is an ``invoke_agent`` span; rounds, plan steps and reflection are spans inside it; each
model request is a ``chat {model}`` client span and each tool call an
``execute_tool {name}`` span, with the ``gen_ai.*`` attributes (operation, provider,
model, finish reasons, token usage, tool name and call id). Message content, tool
arguments and tool results are recorded only with ``capture_content=True``.

While a tool runs its span is the current one, so the tool's own spans nest under it;
MCP HTTP requests carry it as a W3C ``traceparent`` header and MCP stdio servers get it
as ``TRACEPARENT`` when they start (see ``ponder.observability.propagation``). Spans go to the
tracer provider given, else the global one: configure an OTLP exporter there.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ponder._version import __version__
from ponder.events import (
    Event,
    Reflection,
    RoundStarted,
    RunFinished,
    RunSuspended,
    StepFinished,
    StepStarted,
)
from ponder.messages import ToolCallPart, messages_to_json
from ponder.models.base import Model, ModelRequest, ModelResponse, StreamEvent
from ponder.observability.instrumentation import Instrumentation
from ponder.observability.propagation import set_header_source
from ponder.observability.tap import RunTap
from ponder.tools.executor import ToolRun, ToolStatus
from ponder.tools.tool import Tool, ToolResult

if TYPE_CHECKING:
    from ponder.observability.tap import TappedRun

__all__ = ["OtelTap", "TracedModel", "set_response_attributes"]

_tool_carriers: list[dict[str, str]] = []
"""The trace headers of the tool calls in progress, newest last (for MCP requests)."""


def _headers() -> dict[str, str]:
    if _tool_carriers:
        return dict(_tool_carriers[-1])
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def _split(model: str) -> tuple[str, str]:
    provider, _, name = model.partition(":")
    return (provider, name) if name else ("", provider)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class OtelTap(RunTap):
    """Traces one run: its span, its rounds, steps and reflection, its requests and calls."""

    wants_nodes = False

    def __init__(self, settings: Instrumentation) -> None:
        self.settings = settings
        self.tracer = trace.get_tracer(
            "ponder", __version__, tracer_provider=settings.tracer_provider
        )
        self.run: Span | None = None
        self.step: Span | None = None
        self.round: Span | None = None
        self.reflection: Span | None = None
        self.ctx: TappedRun | None = None
        set_header_source(_headers)

    def attach(self, ctx: TappedRun) -> None:
        """Start the run's span."""
        self.ctx = ctx
        provider, model = _split(ctx.model.name)
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "ponder",
            "gen_ai.request.model": model,
            "ponder.run_id": ctx.state.run_id,
            "ponder.workflow": ctx.config.agent_workflow,
        }
        if provider:
            attributes["gen_ai.provider.name"] = provider
        if ctx.state.session_id:
            attributes["gen_ai.conversation.id"] = ctx.state.session_id
        self.run = self.tracer.start_span(
            "invoke_agent ponder", kind=SpanKind.INTERNAL, attributes=attributes
        )

    def wrap_model(self, model: Model) -> Model:
        """Trace each request of the run's model."""
        return TracedModel(model, self)

    def parent(self) -> otel_context.Context:
        """The context new spans start in: the innermost open span of the run."""
        span = self.reflection or self.round or self.step or self.run
        return trace.set_span_in_context(span) if span is not None else otel_context.get_current()

    def _start(self, name: str, attributes: dict[str, Any]) -> Span:
        return self.tracer.start_span(name, context=self.parent(), attributes=attributes)

    def _end_round(self) -> None:
        self.purpose("")
        if self.round is not None:
            self.round.end()
            self.round = None

    def purpose(self, purpose: str) -> None:
        """A model request for ``purpose`` starts: open or close the reflection span."""
        if purpose == "reflection" and self.reflection is None:
            self.reflection = self._start("reflection", {"ponder.node": "reflection"})
        elif purpose != "reflection" and self.reflection is not None:
            self.reflection.end()
            self.reflection = None

    def event(self, event: Event) -> None:
        """Open and close the spans of rounds and steps as their events come."""
        match event:
            case RoundStarted():
                self._end_round()
                self.round = self._start(f"round {event.round}", {"ponder.round": event.round})
            case StepStarted():
                self._end_step()
                self.step = self._start(
                    f"step {event.step_id}",
                    {"ponder.step.id": event.step_id, "ponder.step.index": event.index},
                )
            case StepFinished():
                if self.step is not None:
                    self.step.set_attribute("ponder.step.status", event.status)
                self._end_step()
            case Reflection():
                span = self.reflection or self.round or self.run
                if span is not None:
                    span.add_event(
                        "ponder.reflection",
                        {"ponder.check_type": event.check_type, "ponder.verdict": event.result},
                    )
            case RunFinished() if self.run is not None:
                self.run.set_attribute("ponder.stop_reason", event.stop_reason)
            case RunSuspended() if self.run is not None:
                self.run.set_attribute("ponder.suspended", event.reason)
            case _:
                pass

    def _end_step(self) -> None:
        self._end_round()
        if self.step is not None:
            self.step.end()
            self.step = None

    async def tool(
        self, call: ToolCallPart, tool: Tool | None, run: ToolRun
    ) -> tuple[ToolResult, ToolStatus]:
        """Run the call inside its ``execute_tool`` span (the current span while it runs)."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
        }
        if tool is not None and tool.description:
            attributes["gen_ai.tool.description"] = tool.description[:1000]
        if self.settings.capture_content:
            attributes["gen_ai.tool.call.arguments"] = call.arguments
        span = self._start(f"execute_tool {call.name}", attributes)
        carrier: dict[str, str] = {}
        with trace.use_span(span, end_on_exit=True, record_exception=True):
            propagate.inject(carrier)
            _tool_carriers.append(carrier)
            try:
                result, status = await run()
            finally:
                _tool_carriers.remove(carrier)
            if status != "ok":
                span.set_attribute("error.type", status)
                span.set_status(Status(StatusCode.ERROR, (result.error or "")[:500]))
            if self.settings.capture_content:
                span.set_attribute("gen_ai.tool.call.result", result.output)
        return result, status

    def finish(self, ctx: TappedRun, error: BaseException | None) -> None:
        """End every open span; the run's carries the usage and how it ended."""
        self._end_step()
        if self.run is None:
            return
        usage = ctx.state.usage
        self.run.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        self.run.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        self.run.set_attribute("ponder.status", ctx.state.status)
        if error is not None:
            self.run.record_exception(error)
            self.run.set_attribute("error.type", type(error).__name__)
            self.run.set_status(Status(StatusCode.ERROR, str(error)[:500]))
        self.run.end()
        self.run, self.ctx = None, None


class TracedModel:
    """A model whose every request is a ``chat`` client span."""

    def __init__(self, model: Model, tap: OtelTap) -> None:
        self.inner = model
        self.tap = tap

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _start(self, request: ModelRequest) -> Span:
        self.tap.purpose(self.tap.ctx.purpose if self.tap.ctx is not None else "")
        provider, model = _split(self.inner.name)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "ponder.purpose": self.tap.ctx.purpose if self.tap.ctx is not None else "",
        }
        if provider:
            attributes["gen_ai.provider.name"] = provider
        settings = request.settings
        if settings.temperature is not None:
            attributes["gen_ai.request.temperature"] = settings.temperature
        if settings.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = settings.max_tokens
        if request.output is not None:
            attributes["gen_ai.output.type"] = "json"
        if self.tap.settings.capture_content:
            attributes["gen_ai.input.messages"] = _json(messages_to_json(request.messages))
            attributes["gen_ai.tool.definitions"] = _json(
                [t.model_dump(mode="json") for t in request.tools]
            )
        return self.tap.tracer.start_span(
            f"chat {model}", context=self.tap.parent(), kind=SpanKind.CLIENT, attributes=attributes
        )

    def _finish(self, span: Span, response: ModelResponse) -> None:
        set_response_attributes(span, response)
        if self.tap.settings.capture_content:
            output = response.to_message().model_dump(mode="json")
            span.set_attribute("gen_ai.output.messages", _json([output]))

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Send the request inside its span (the current one while it is sent)."""
        span = self._start(request)
        with trace.use_span(span, end_on_exit=True, record_exception=True):
            try:
                response = await self.inner.request(request)
            except Exception as error:
                span.set_attribute("error.type", type(error).__name__)
                raise
            self._finish(span, response)
        return response

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream the response inside its span (it ends with the stream)."""
        span = self._start(request)
        try:
            async for item in self.inner.stream(request):
                if isinstance(item, ModelResponse):
                    self._finish(span, item)
                yield item
        except Exception as error:
            span.set_attribute("error.type", type(error).__name__)
            span.record_exception(error)
            span.set_status(Status(StatusCode.ERROR, str(error)[:500]))
            raise
        finally:
            span.end()


def set_response_attributes(span: Span, response: ModelResponse) -> None:
    """A chat span's GenAI attributes of its response: usage, model, finish reason."""
    usage = response.usage
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    if response.model_name:
        span.set_attribute("gen_ai.response.model", response.model_name)
    if response.finish_reason:
        span.set_attribute("gen_ai.response.finish_reasons", [response.finish_reason])
