"""Concurrent runs sharing one MCP server each receive their own server traffic.

Two runs of one `Agent` call a fixture tool at overlapping times (the tool waits until
both calls are in flight, through a folder both server sessions can see). Each call then
logs, reports progress, asks for a sample and elicits; every one of those must reach the
run whose call caused it, and the answers must reach that call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ponder.agent import Agent
from ponder.events import Event, McpEvent, ToolCallStarted
from ponder.mcp import MCPToolset, parse_server_spec
from ponder.mcp.binding import RunBinding
from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ponder.messages import SystemMessage, ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.tools.tool import Tool, ToolContext
from tests.mcp.conftest import HTTPServer, stdio_entry

SUMMARY_PROMPT = "Summarize in one line."
LABELS = ("alpha", "beta")


def meeting_script(rendezvous: Path) -> Callable[[ModelRequest], ModelResponse]:
    """Each run calls ``meet_and_ask`` with its prompt as the label, then answers its result."""

    def script(request: ModelRequest) -> ModelResponse:
        system = [m for m in request.messages if isinstance(m, SystemMessage)]
        if any(m.content == SUMMARY_PROMPT for m in system):
            asked = [m for m in request.messages if isinstance(m, UserMessage)]
            return reply(f"sum-{asked[-1].content}")
        label = next(m for m in request.messages if isinstance(m, UserMessage)).content
        results = [m for m in request.messages if isinstance(m, ToolMessage)]
        if not results:
            return call_tools(("meet_and_ask", {"label": label, "rendezvous": str(rendezvous)}))
        if len(results) == 1:
            return call_tools(("agent_stop", {}))
        return reply(results[0].content)

    return script


def meeting_agent(rendezvous: Path, server: str | dict[str, Any]) -> Agent:
    return Agent(
        ScriptedModel(meeting_script(rendezvous)),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[server],
        mcp_sampling_limit=1,
    )


async def run_events(agent: Agent, prompt: str) -> tuple[str, list[Event]]:
    stream = agent.stream(prompt)
    events = [event async for event in stream]
    return str(stream.result.output), events


def mcp_events(events: list[Event], kind: str) -> list[McpEvent]:
    return [e for e in events if isinstance(e, McpEvent) and e.type == kind]


async def run_both(agent: Agent) -> dict[str, tuple[str, list[Event]]]:
    """Both labels' runs at once, answering elicitation with the asking run's id."""
    asked: list[ElicitationRequest] = []

    @agent.on_elicitation
    async def answer(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"name": f"for-{request.run_id}", "age": 30})

    done = await asyncio.gather(*(run_events(agent, label) for label in LABELS))
    runs = dict(zip(LABELS, done, strict=True))
    for label, (_, events) in runs.items():
        run_id = events[0].run_id
        assert [q.message for q in asked if q.run_id == run_id] == [f"question of {label}"]
    return runs


def check_own_traffic(label: str, output: str, events: list[Event]) -> None:
    """The run saw its own log, progress, sample and question; its call got its answers."""
    run_id = events[0].run_id
    assert output == f"{label}: summary sum-{label}; added for-{run_id}"
    [call] = [e for e in events if isinstance(e, ToolCallStarted) and e.name == "meet_and_ask"]
    assert [e.data["data"] for e in mcp_events(events, "log")] == [f"log of {label}"]
    progress = mcp_events(events, "progress")
    assert [(e.data["message"], e.data["call_id"]) for e in progress] == [
        (f"progress of {label}", call.call_id)
    ]
    assert [e.data["status"] for e in mcp_events(events, "sampling")] == ["answered"]
    elicited = [e.data["status"] for e in mcp_events(events, "elicitation")]
    assert elicited == ["requested", "accept"]
    assert all(e.run_id == run_id for e in events)


async def test_concurrent_runs_on_one_stdio_server_get_their_own_requests(
    tmp_path: Path,
) -> None:
    async with meeting_agent(tmp_path, stdio_entry("--name", "fix")) as agent:
        runs = await run_both(agent)
    for label, (output, events) in runs.items():
        check_own_traffic(label, output, events)


@pytest.fixture
def shared_http() -> Any:
    server = HTTPServer("--name", "shared")
    yield server
    server.stop()


async def test_concurrent_runs_on_one_http_server_get_their_own_requests(
    tmp_path: Path, shared_http: HTTPServer
) -> None:
    async with meeting_agent(tmp_path, shared_http.url) as agent:
        runs = await run_both(agent)
    for label, (output, events) in runs.items():
        check_own_traffic(label, output, events)


async def call_as(tool: Tool, run_id: str, args: dict[str, Any] | None = None) -> str:
    context = ToolContext(run_id=run_id, call_id=f"{run_id}-call", tool_name=tool.name)
    return (await tool.function(context, args or {})).output


async def test_a_request_on_a_session_with_no_call_in_flight_is_refused(
    shared_http: HTTPServer,
) -> None:
    asked: list[ElicitationRequest] = []
    seen: dict[str, list[Event]] = {"owner": [], "other": []}
    operator: list[dict[str, Any]] = []

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {})

    config = parse_server_spec(shared_http.url)
    async with MCPToolset([config], on_event=operator.append) as toolset:
        tools = {t.name: t for t in await toolset.tools()}
        register, ask = tools["register"], tools["ask_session"]
        owner, other = RunBinding("owner", elicit=elicit), RunBinding("other", elicit=elicit)
        owner.attach(seen["owner"].append)
        other.attach(seen["other"].append)
        with toolset.bind(owner), toolset.bind(other):
            held = [await call_as(register, run) for run in ("owner", "other", "stranger")]
            assert held == ["0", "1", "2"]  # owner and other keep theirs; stranger's is idle
            held_elsewhere = await call_as(ask, "other", {"number": 0})
            idle = await call_as(ask, "other", {"number": 2})
    for refused in (held_elsewhere, idle):
        assert refused.startswith("error: elicitation refused: no tool call of a run")
    assert asked == []
    assert not mcp_events([*seen["owner"], *seen["other"]], "elicitation")
    statuses = [e["status"] for e in operator if e["kind"] == "mcp.elicitation"]
    assert statuses == ["refused", "refused"]
    # a log goes to the run whose session it came on; from an idle session, to no run
    assert [e.data["data"] for e in mcp_events(seen["owner"], "log")] == ["log for session 0"]
    assert mcp_events(seen["other"], "log") == []
    assert [e["data"] for e in operator if e["kind"] == "mcp.log"] == [
        "log for session 0",
        "log for session 2",
    ]


async def test_a_resource_read_asks_the_run_that_reads_it(shared_http: HTTPServer) -> None:
    asked: list[ElicitationRequest] = []

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"name": request.run_id, "age": 1})

    async with MCPToolset([parse_server_spec(shared_http.url)]) as toolset:
        tools = {t.name: t for t in await toolset.tools()}
        owner, reader = RunBinding("owner", elicit=elicit), RunBinding("reader", elicit=elicit)
        with toolset.bind(owner), toolset.bind(reader):
            assert await call_as(tools["register"], "owner") == "0"  # owner keeps session 0
            read = {"server": "127_0_0_1", "uri": "ask://lunch"}
            text = await call_as(tools["mcp_read_resource"], "reader", read)
    assert text == "lunch: reader"
    assert [(q.run_id, q.message) for q in asked] == [("reader", "note about lunch?")]
