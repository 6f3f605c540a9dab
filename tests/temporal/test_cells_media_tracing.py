"""Cells of the Temporal matrix for images in the prompt and OpenTelemetry tracing:
on one worker, and when another worker takes the run up."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client

from ponder.agent import Agent
from ponder.exceptions import UserError
from ponder.media import INLINE_MAX_BYTES, Image
from ponder.messages import UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.models.scripted import ScriptEntry
from ponder.observability.instrumentation import Instrumentation
from ponder.temporal import TemporalAgent, build_worker
from ponder.testing import FakeOpenAIServer, FakeReply
from ponder.tools import tool
from tests.temporal.test_cells_takeover import call, held, openai_agent, taken_over
from tests.temporal.test_runs import assert_replays

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
SENT_IMAGE = {"type": "image_url", "image_url": {"url": DATA_URL}}


def user_content(body: dict[str, Any]) -> Any:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def chat_agent(provider: FakeOpenAIServer, **options: Any) -> Agent:
    return openai_agent(
        provider, agent_thought_mode="chat", enable_thinking_tool=False, tools=[shout], **options
    )


@tool
def shout(text: str) -> str:
    """Say it louder.

    Args:
        text: What to say.
    """
    return text.upper()


async def test_an_image_in_the_prompt_reaches_the_model_on_temporal(
    client: Client, task_queue: str
) -> None:
    prompt: list[str | Image] = ["What is this?", Image(PNG)]
    with FakeOpenAIServer([FakeReply(content="A PNG.")]) as provider:
        local = await openai_agent(provider, agent_strategy="no-action").run(prompt)
    with FakeOpenAIServer([FakeReply(content="A PNG.")]) as provider:
        agent = openai_agent(provider, agent_strategy="no-action")
        async with build_worker(client, task_queue, agent):
            remote = await TemporalAgent(client, task_queue).run(prompt)
            await assert_replays(client, remote.run_id)
        [sent] = provider.requests
    assert (remote.status, remote.output) == ("completed", local.output)
    assert user_content(sent) == [{"type": "text", "text": "What is this?"}, SENT_IMAGE]
    [asked] = [m for m in remote.messages if isinstance(m, UserMessage)]
    assert asked.attachments == (Image(PNG),) and asked.content == "What is this?"


@pytest.mark.timeout(240)
async def test_an_image_in_the_prompt_reaches_the_model_from_the_worker_that_takes_over(
    client: Client, task_queue: str
) -> None:
    script = [
        call("shout", text="hi"),
        held(),
        call("agent_stop", result="ok"),
        FakeReply(content="A PNG."),
    ]
    with FakeOpenAIServer(script) as provider:
        result, _ = await taken_over(
            client,
            task_queue,
            lambda: chat_agent(provider),
            provider,
            held_request=2,
            prompt=["What is this?", Image(PNG)],
        )
        sent = provider.requests
    assert (result.status, result.output) == ("completed", "A PNG.")
    assert len(sent) == 4  # the last two sent by the second worker, from the replayed history
    assert all(user_content(body)[1] == SENT_IMAGE for body in sent)


async def test_an_image_a_worker_could_not_read_is_refused_by_temporal_agent_run(
    client: Client, task_queue: str, tmp_path: Path
) -> None:
    large = tmp_path / "large.png"
    large.write_bytes(PNG + b"\x00" * INLINE_MAX_BYTES)
    remote = TemporalAgent(client, task_queue)
    with pytest.raises(UserError, match=r"Image\('large.png'\) is kept by its path.*Temporal"):
        await remote.run(["What is this?", Image(large)])
    many = [Image(PNG + bytes(400_000)) for _ in range(3)]
    with pytest.raises(UserError, match=r"inline data; a run on Temporal carries at most"):
        await remote.run(["What are these?", *many])


def traced(exporter: InMemorySpanExporter) -> Instrumentation:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Instrumentation(tracer_provider=provider)


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def attribute(span: ReadableSpan, name: str) -> Any:
    return (span.attributes or {}).get(name)


async def test_a_run_on_temporal_is_one_trace_of_its_run_id(
    client: Client, task_queue: str
) -> None:
    exporter = InMemorySpanExporter()
    script = [call("shout", text="hi"), call("agent_stop", result="ok"), FakeReply(content="HI")]
    with FakeOpenAIServer(script) as provider:
        async with build_worker(
            client, task_queue, chat_agent(provider, instrument=traced(exporter))
        ):
            result = await TemporalAgent(client, task_queue).run("shout hi")
            await assert_replays(client, result.run_id)
    spans = list(exporter.get_finished_spans())
    [run] = named(spans, "invoke_agent ponder")
    rounds, chats = named(spans, "round "), named(spans, "chat ")
    [tool_span] = named(spans, "execute_tool shout")
    assert result.output == "HI" and len(chats) == 3 and rounds
    assert {s.context.trace_id for s in spans} == {run.context.trace_id}
    assert {attribute(s, "ponder.run_id") for s in spans} == {result.run_id}
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in rounds)
    in_rounds = {s.context.span_id for s in rounds}
    assert tool_span.parent is not None and tool_span.parent.span_id in in_rounds
    assert all(s.parent is not None and s.parent.span_id in in_rounds for s in chats)
    assert attribute(chats[0], "gen_ai.usage.input_tokens") > 0


@pytest.mark.timeout(240)
async def test_the_worker_that_takes_a_run_up_traces_into_the_same_trace(
    client: Client, task_queue: str
) -> None:
    first, second = InMemorySpanExporter(), InMemorySpanExporter()
    exporters = iter([first, second])
    script = [
        call("shout", text="hi"),
        held(),
        call("shout", text="again"),
        call("agent_stop", result="ok"),
        FakeReply(content="HI"),
    ]
    with FakeOpenAIServer(script) as provider:
        result, _ = await taken_over(
            client,
            task_queue,
            lambda: chat_agent(provider, instrument=traced(next(exporters))),
            provider,
            held_request=2,
        )
    before, after = list(first.get_finished_spans()), list(second.get_finished_spans())
    [run] = named(before, "invoke_agent ponder")
    assert result.output == "HI"
    assert named(after, "invoke_agent ponder") == []  # made once, by the first worker
    assert named(before, "execute_tool shout") and named(after, "execute_tool shout")
    assert {s.context.trace_id for s in before + after} == {run.context.trace_id}
    assert {attribute(s, "ponder.run_id") for s in before + after} == {result.run_id}
    retried = [s for s in named(after, "round ") if attribute(s, "ponder.attempt") == 2]
    assert retried and retried[0].parent is not None
    assert retried[0].parent.span_id == run.context.span_id


async def test_a_sub_agents_run_is_in_its_callers_trace_on_temporal(
    client: Client, task_queue: str
) -> None:
    exporter = InMemorySpanExporter()
    settings = traced(exporter)
    child = Agent(
        ScriptedModel([reply("Three years.")]), agent_strategy="no-action", instrument=settings
    )
    script: list[ScriptEntry] = [
        call_tools(("librarian", {"task": "Warranty?"}, "c1")),
        call_tools(("agent_stop", {})),
        "It lasts three years.",
    ]
    parent = Agent(
        ScriptedModel(script),
        tools=[child.as_tool("librarian", "Reads manuals.")],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        instrument=settings,
    )
    async with build_worker(client, task_queue, parent):
        result = await TemporalAgent(client, task_queue).run("How long is the warranty?")
    spans = list(exporter.get_finished_spans())
    runs = {attribute(s, "ponder.run_id"): s for s in named(spans, "invoke_agent ponder")}
    assert result.output == "It lasts three years."
    assert set(runs) == {result.run_id, f"{result.run_id}.c1"}
    assert {s.context.trace_id for s in spans} == {runs[result.run_id].context.trace_id}
    calling = {
        s.context.span_id
        for s in named(spans, "round ")
        if attribute(s, "ponder.run_id") == result.run_id
    }
    below = runs[f"{result.run_id}.c1"].parent
    assert below is not None and below.span_id in calling
