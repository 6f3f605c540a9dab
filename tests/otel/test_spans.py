"""OpenTelemetry spans of runs, read back from the SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import ponder
from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.observability.instrumentation import Instrumentation
from ponder.testing import FakeOpenAIServer, FakeReply
from ponder.tools import tool
from tests.agent.scripts import PROMPT, make_agent, stop, think, verify
from tests.agent.steps import plan, step_agent, summary

seen_spans: list[str] = []


@tool
def traced(text: str) -> str:
    """Echo text, noting the span it runs in.

    Args:
        text: Anything.
    """
    span = trace.get_current_span()
    seen_spans.append(str(getattr(span, "name", "")))
    return text.upper()


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    yield memory
    memory.clear()


def provider_for(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def tracing(exporter: InMemorySpanExporter) -> Instrumentation:
    return Instrumentation(tracer_provider=provider_for(exporter))


def by_name(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    found: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def parent_name(span: ReadableSpan, spans: list[ReadableSpan]) -> str | None:
    if span.parent is None:
        return None
    for other in spans:
        if other.context.span_id == span.parent.span_id:
            return other.name
    return "?"


def multiply_script() -> list:
    return [
        think("Multiply."),
        call_tools(("multiply", {"a": 17, "b": 23})),
        think("Done.", "multiplied"),
        stop("391"),
        reply("391"),
    ]


async def test_a_run_is_a_tree_of_agent_round_chat_and_tool_spans(
    exporter: InMemorySpanExporter,
) -> None:
    settings = Instrumentation(tracer_provider=provider_for(exporter))
    agent = make_agent(ScriptedModel(multiply_script()), instrument=settings)
    result = await agent.run(PROMPT, session_id="conversation-1")
    assert result.output == "391"
    spans = list(exporter.get_finished_spans())
    names = by_name(spans)
    (run,) = names["invoke_agent ponder"]
    assert run.parent is None and run.kind is SpanKind.INTERNAL
    attributes = dict(run.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.request.model"] == "scripted"
    assert attributes["gen_ai.conversation.id"] == "conversation-1"
    assert attributes["ponder.run_id"] == result.run_id
    assert attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens > 0
    assert attributes["ponder.stop_reason"] == result.stop_reason
    rounds = names["round 1"] + names["round 2"]
    assert all(parent_name(r, spans) == "invoke_agent ponder" for r in rounds)
    chats = names["chat scripted"]
    assert len(chats) == 5
    assert {parent_name(c, spans) for c in chats} == {"round 1", "round 2", "round 3"}
    first = dict(chats[0].attributes or {})
    assert chats[0].kind is SpanKind.CLIENT
    assert first["gen_ai.operation.name"] == "chat" and first["ponder.purpose"] == "reasoning"
    assert isinstance(first["gen_ai.usage.input_tokens"], int)
    assert first["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert "gen_ai.input.messages" not in first  # content is opt-in
    (call,) = names["execute_tool multiply"]
    assert parent_name(call, spans) == "round 1"
    tool_attributes = dict(call.attributes or {})
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "multiply"
    assert tool_attributes["gen_ai.tool.call.id"] == "call_2"
    assert "gen_ai.tool.call.result" not in tool_attributes
    assert (run.start_time or 0) <= (chats[0].start_time or 0)
    assert (chats[-1].end_time or 0) <= (run.end_time or 0)


async def test_content_is_recorded_when_asked(exporter: InMemorySpanExporter) -> None:
    settings = Instrumentation(tracer_provider=provider_for(exporter), capture_content=True)
    agent = make_agent(ScriptedModel(multiply_script()), instrument=settings)
    await agent.run(PROMPT)
    names = by_name(exporter.get_finished_spans())
    chat = dict(names["chat scripted"][0].attributes or {})
    assert PROMPT in str(chat["gen_ai.input.messages"])
    assert "think_and_reason" in str(chat["gen_ai.output.messages"])
    call = dict(names["execute_tool multiply"][0].attributes or {})
    assert call["gen_ai.tool.call.arguments"] == '{"a": 17, "b": 23}'
    assert call["gen_ai.tool.call.result"] == "391"


async def test_the_tool_span_is_current_inside_the_tool(exporter: InMemorySpanExporter) -> None:
    seen_spans.clear()
    script = [
        think("Echo."),
        call_tools(("traced", {"text": "a"}), ("traced", {"text": "b"})),
        think("Done.", "echoed"),
        stop(),
        reply("A B"),
    ]
    agent = Agent(
        ScriptedModel(script),
        tools=[traced],
        enable_thinking_tool=False,
        instrument=tracing(exporter),
    )
    await agent.run("Echo twice.")
    assert seen_spans == ["execute_tool traced", "execute_tool traced"]


async def test_reflection_and_failed_tools_have_their_spans(
    exporter: InMemorySpanExporter,
) -> None:
    script = [
        think("Try."),
        call_tools(("multiply", {"a": "x", "b": 2})),
        think("Stop.", "tried"),
        stop(),
        verify("pass"),
        verify("pass", check_type="contradiction_check"),
        verify("pass", check_type="completeness_check"),
        reply("done"),
    ]
    agent = make_agent(ScriptedModel(script), enable_reflection=True, instrument=tracing(exporter))
    await agent.run(PROMPT)
    spans = list(exporter.get_finished_spans())
    names = by_name(spans)
    (reflection,) = names["reflection"]
    assert parent_name(reflection, spans).startswith("round")  # type: ignore[union-attr]
    inside = [c for c in names["chat scripted"] if parent_name(c, spans) == "reflection"]
    assert inside and all((c.attributes or {})["ponder.purpose"] == "reflection" for c in inside)
    assert [e.name for e in reflection.events][:1] == ["ponder.reflection"]
    (call,) = names["execute_tool multiply"]
    assert call.status.status_code is StatusCode.ERROR
    assert (call.attributes or {})["error.type"] == "invalid_arguments"


async def test_a_failed_request_marks_the_chat_and_run_spans(
    exporter: InMemorySpanExporter,
) -> None:
    async with FakeOpenAIServer([FakeReply(status=500)]) as server:
        agent = make_agent(
            "openai:gpt-4o-mini",
            base_url=server.base_url,
            api_key="k",
            max_retries=0,
            instrument=tracing(exporter),
        )
        with pytest.raises(ponder.RunError):
            await agent.run(PROMPT)
    names = by_name(exporter.get_finished_spans())
    (chat,) = names["chat gpt-4o-mini"]
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})["gen_ai.provider.name"] == "openai"
    (run,) = names["invoke_agent ponder"]
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["error.type"] == "ModelHTTPError"


async def test_streamed_step_runs_nest_rounds_in_steps(exporter: InMemorySpanExporter) -> None:
    two_steps = plan(("a", "First", []), ("b", "Second", ["a"]))
    script = [
        two_steps,
        stop("a"),
        summary("Did a.", "a"),
        stop("b"),
        summary("Did b.", "b"),
        reply("Both done."),
    ]
    agent = step_agent(ScriptedModel(script), instrument=tracing(exporter))
    stream = agent.stream("Do a then b.")
    _ = [e async for e in stream]
    assert stream.result.output == "Both done."
    spans = list(exporter.get_finished_spans())
    names = by_name(spans)
    (step_a,), (step_b,) = names["step a"], names["step b"]
    assert parent_name(step_a, spans) == parent_name(step_b, spans) == "invoke_agent ponder"
    assert (step_a.attributes or {})["ponder.step.status"] == "stopped"
    rounds = [s for s in spans if s.name.startswith("round")]
    assert rounds and {parent_name(r, spans) for r in rounds} == {"step a", "step b"}


def test_instrument_traces_every_agent_until_switched_off(
    exporter: InMemorySpanExporter,
) -> None:
    ponder.instrument(provider_for(exporter))
    try:
        make_agent(ScriptedModel(multiply_script())).run_sync(PROMPT)
        assert "invoke_agent ponder" in by_name(exporter.get_finished_spans())
        exporter.clear()
        make_agent(ScriptedModel(multiply_script()), instrument=False).run_sync(PROMPT)
        assert exporter.get_finished_spans() == ()
    finally:
        ponder.instrument(enabled=False)
    make_agent(ScriptedModel(multiply_script())).run_sync(PROMPT)
    assert exporter.get_finished_spans() == ()


def test_a_wrong_instrument_value_is_a_user_error() -> None:
    with pytest.raises(ponder.UserError, match="instrument must be"):
        make_agent(ScriptedModel([]), instrument="yes")
