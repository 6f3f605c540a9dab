"""Trace context crosses into MCP servers: TRACEPARENT for stdio, a header over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.observability.instrumentation import Instrumentation
from tests.agent.scripts import stop, think

SERVER = Path(__file__).with_name("trace_server.py")


@pytest.fixture
def http_url() -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.startswith("PORT "), line
    yield f"http://127.0.0.1:{line.split()[1]}/mcp"
    process.terminate()
    process.wait(timeout=10)


def traced_agent(server: str | dict, exporter: InMemorySpanExporter) -> Agent:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    script = [
        think("Look."),
        call_tools(("trace_context", {})),
        think("Seen.", "looked"),
        stop(),
        reply("done"),
    ]
    return Agent(
        ScriptedModel(script),
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[server],
        instrument=Instrumentation(tracer_provider=provider),
    )


async def test_an_http_mcp_call_carries_the_tool_span_as_traceparent(http_url: str) -> None:
    exporter = InMemorySpanExporter()
    async with traced_agent({"name": "trace", "url": http_url}, exporter) as agent:
        result = await agent.run("What trace am I in?")
    output = [m for m in result.messages if getattr(m, "name", None) == "trace_context"]
    seen = json.loads(output[0].content)  # type: ignore[union-attr]
    (span,) = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    version, trace_id, parent_id, _ = seen["header"].split("-")
    assert version == "00" and trace_id == format(span.context.trace_id, "032x")
    assert parent_id == format(span.context.span_id, "016x")


async def test_a_stdio_mcp_server_starts_with_the_trace_in_its_environment() -> None:
    from opentelemetry import trace

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    command = {"name": "trace", "command": [sys.executable, str(SERVER), "stdio"]}
    with trace.get_tracer("test", tracer_provider=provider).start_as_current_span("outer") as outer:
        async with traced_agent(command, exporter) as agent:
            result = await agent.run("What trace am I in?")
    output = [m for m in result.messages if getattr(m, "name", None) == "trace_context"]
    seen = json.loads(output[0].content)  # type: ignore[union-attr]
    assert seen["env"].split("-")[1] == format(outer.get_span_context().trace_id, "032x")
    (run,) = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent ponder"]
    assert run.parent is not None and run.parent.span_id == outer.get_span_context().span_id
