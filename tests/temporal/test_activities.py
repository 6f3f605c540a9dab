"""What activities carry: streamed text to observers, MCP calls, a bounded payload per round."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from ponder import Agent, tool
from ponder.cli.view import RunView
from ponder.messages import TextPart, ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.base import StreamEvent, TextDelta
from ponder.temporal import TemporalAgent, build_worker
from tests.agent.scripts import stop
from tests.temporal.test_runs import assert_replays

ROOT = Path(__file__).resolve().parents[2]
ANSWER = ["The answer ", "streams in ", "three pieces."]


class GatedModel:
    """Streams its answer's first piece, then waits for ``gate`` before the rest.

    The first request calls ``agent_stop``; the answer request streams ``ANSWER``.
    """

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    @property
    def name(self) -> str:
        return "test:gated"

    async def request(self, request: ModelRequest) -> ModelResponse:
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            return call_tools(("agent_stop", {"result": "ready"}))
        return ModelResponse(parts=(TextPart(text="".join(ANSWER)),), finish_reason="stop")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        response = await self.request(request)
        if response.tool_calls:
            yield response
            return
        yield TextDelta(ANSWER[0])
        await self.gate.wait()  # released once an observer has seen the first piece
        for piece in ANSWER[1:]:
            yield TextDelta(piece)
        yield response


def gated_agent() -> tuple[Agent, GatedModel]:
    model = GatedModel()
    agent = Agent(model, agent_thought_mode="chat", enable_thinking_tool=False)
    return agent, model


@pytest.mark.timeout(120)
async def test_streamed_text_reaches_the_events_query_while_the_request_runs(
    client: Client, task_queue: str
) -> None:
    agent, model = gated_agent()
    async with build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue)
        run_id = await remote.start("Answer slowly")
        seen: list[str] = []
        view = RunView()  # what `ponder run --temporal` shows live
        handle = client.get_workflow_handle(run_id)
        async for event in remote.follow(run_id):
            view.apply(event)
            if event.kind == "text_delta":
                seen.append(event.text)
                if not model.gate.is_set():
                    assert view.answer == ANSWER[0] and view.status == "running"
                    for junk in (
                        "text",
                        {"key": "1"},
                        {"key": 2, "deltas": "x"},
                        {"key": 2, "deltas": [["text"], ["text", 3], 7]},
                    ):
                        await handle.signal("model_deltas", junk)  # ignored, not fatal
                model.gate.set()  # the request is still open: the piece came from its stream
        result = await remote.result(run_id)
        await assert_replays(client, run_id)
    assert seen[0] == ANSWER[0] and "".join(seen) == "".join(ANSWER)
    assert result.output == "".join(ANSWER)


@pytest.mark.timeout(120)
async def test_run_temporal_shows_the_answer_as_it_streams(
    client: Client, task_queue: str, temporal_address: str
) -> None:
    agent, model = gated_agent()
    command = [
        sys.executable,
        "-m",
        "ponder.cli.main",
        "run",
        "--temporal",
        temporal_address,
        "--task-queue",
        task_queue,
        "--json",
        "Answer slowly",
    ]
    async with build_worker(client, task_queue, agent):
        proc = await asyncio.create_subprocess_exec(
            *command, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        assert proc.stdout is not None
        kinds: list[str] = []
        async with asyncio.timeout(90):
            async for line in proc.stdout:
                event = json.loads(line)
                kinds.append(event["kind"])
                if event["kind"] == "text_delta":
                    assert event["text"] == ANSWER[0] or model.gate.is_set()
                    model.gate.set()
            await proc.wait()
    assert proc.returncode == 0
    assert "text_delta" in kinds and kinds.index("text_delta") < kinds.index("run_finished")


THINKING_SERVER = "stdio://" + json.dumps([sys.executable, "-m", "ponder.mcp.thinking.server"])


def think_twice(request: ModelRequest) -> Any:
    done = sum(isinstance(m, ToolMessage) for m in request.messages)
    if done < 2:
        arguments = {
            "thought": f"step {done + 1}",
            "thoughtNumber": done + 1,
            "totalThoughts": 2,
            "nextThoughtNeeded": done == 0,
        }
        return call_tools(("sequentialthinking", arguments))
    if done == 2:
        return call_tools(("agent_stop", {}))
    return reply("thought twice")


@pytest.mark.timeout(120)
async def test_an_mcp_servers_tools_run_as_activities_on_the_worker(
    client: Client, task_queue: str
) -> None:
    agent = Agent(
        ScriptedModel(think_twice),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[THINKING_SERVER],
    )
    async with agent, build_worker(client, task_queue, agent):
        remote = TemporalAgent(client, task_queue, require_tools=["sequentialthinking"])
        result = await remote.run("think")
        history = await client.get_workflow_handle(result.run_id).fetch_history()
        await assert_replays(client, result.run_id)
    thoughts = [m for m in result.messages if isinstance(m, ToolMessage)][:2]
    payloads = [json.loads(m.content) for m in thoughts]
    assert [p["thoughtHistoryLength"] for p in payloads] == [1, 2]  # one server session
    assert result.output == "thought twice"
    calls = [
        e.activity_task_scheduled_event_attributes.input.payloads[0].data
        for e in history.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == "ponder.tool_call"
    ]
    assert sum(b'"sequentialthinking"' in data for data in calls) == 2


@tool
def bulky(n: int) -> str:
    """A long result.

    Args:
        n: Which one.
    """
    return f"result {n}: " + "x" * 2000


def bulky_agent(rounds: int) -> Agent:
    def answer(request: ModelRequest) -> Any:
        done = sum(isinstance(m, ToolMessage) for m in request.messages)
        if done < rounds:
            return call_tools(("bulky", {"n": done}))
        return stop("done") if done == rounds else reply("all done")

    return Agent(
        ScriptedModel(answer),
        tools=[bulky],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_tool_call_limit=1000,
    )


@pytest.mark.timeout(180)
async def test_the_history_grows_linearly_with_the_rounds(client: Client, task_queue: str) -> None:
    """The conversation is not in the model activities' input, so a round costs the same."""
    sizes = {}
    for rounds in (4, 12, 20):
        async with build_worker(client, task_queue, bulky_agent(rounds)):
            result = await TemporalAgent(client, task_queue).run("go")
        assert result.output == "all done"
        history = await client.get_workflow_handle(result.run_id).fetch_history()
        sizes[rounds] = sum(event.ByteSize() for event in history.events)
    early, late = (sizes[12] - sizes[4]) / 8, (sizes[20] - sizes[12]) / 8
    assert late < 1.25 * early  # quadratic growth would make a late round far dearer
    assert late < 8 * 2000  # a round holds the bulky result a few times, not the ledger
