"""Sampling, elicitation, roots, logging and failures of MCP servers, seen from a run.

Each test runs an `Agent` on a `ScriptedModel` against the Python fixture server (the
SDK's own server API, over stdio) and reads the run's event stream.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ponder.agent import Agent
from ponder.events import Event, McpEvent
from ponder.mcp.elicitation import ElicitationAnswer, ElicitationRequest
from ponder.messages import SystemMessage, ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from tests.mcp.conftest import raw_entry, stdio_entry

SUMMARY_PROMPT = "Summarize in one line."


def results_of(request: ModelRequest) -> list[ToolMessage]:
    return [m for m in request.messages if isinstance(m, ToolMessage)]


def is_sampling(request: ModelRequest) -> bool:
    return any(
        isinstance(m, SystemMessage) and m.content == SUMMARY_PROMPT for m in request.messages
    )


def calling(*calls: tuple[str, dict[str, Any]]) -> Callable[[ModelRequest], ModelResponse]:
    """A script: the calls one per round, then agent_stop, then the results as the answer."""

    def script(request: ModelRequest) -> ModelResponse:
        if is_sampling(request):
            return reply("a short summary")
        done = len(results_of(request))
        if done < len(calls):
            return call_tools(calls[done])
        if done == len(calls):
            return call_tools(("agent_stop", {}))
        return reply(" | ".join(m.content for m in results_of(request)[: len(calls)]))

    return script


def agent_for(script: Callable[[ModelRequest], ModelResponse], **config: Any) -> Agent:
    return Agent(
        ScriptedModel(script),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[stdio_entry("--name", "fix")],
        **config,
    )


async def run_events(agent: Agent, prompt: str = "go") -> tuple[str, list[Event]]:
    stream = agent.stream(prompt)
    events = [event async for event in stream]
    return str(stream.result.output), events


def mcp_events(events: list[Event], kind: str) -> list[McpEvent]:
    return [e for e in events if isinstance(e, McpEvent) and e.type == kind]


async def test_sampling_is_answered_by_the_agents_model_and_counted() -> None:
    agent = agent_for(calling(("summarize", {"text": "a very long text"})), mcp_sampling_limit=2)
    async with agent:
        output, events = await run_events(agent)
    assert output == "summary: a short summary"
    [sampled] = mcp_events(events, "sampling")
    assert sampled.server == "mcp_server" and sampled.run_id == events[0].run_id
    assert sampled.data["status"] == "answered"
    assert (sampled.data["count"], sampled.data["limit"]) == (1, 2)
    assert sampled.data["model"] == "scripted"
    first_seq = next(e.seq for e in events if e.kind == "run_started")
    assert sampled.seq > first_seq


async def test_sampling_over_the_limit_fails_that_call_only() -> None:
    script = calling(("summarize", {"text": "one"}), ("summarize", {"text": "two"}))
    agent = agent_for(script, mcp_sampling_limit=1)
    async with agent:
        output, events = await run_events(agent)
    first, second = output.split(" | ")
    assert first == "summary: a short summary"
    assert "limit of 1 sampling requests is reached" in second
    statuses = [e.data["status"] for e in mcp_events(events, "sampling")]
    assert statuses == ["answered", "refused"]
    assert events[-1].kind == "run_finished"


async def test_sampling_with_a_failing_model_is_an_error_for_that_call() -> None:
    def script(request: ModelRequest) -> ModelResponse:
        if is_sampling(request):
            raise RuntimeError("the provider is down")
        return calling(("summarize", {"text": "x"}))(request)

    async with agent_for(script) as agent:
        output, events = await run_events(agent)
    assert "sampling failed: RuntimeError: the provider is down" in output
    assert [e.data["status"] for e in mcp_events(events, "sampling")] == ["failed"]


async def test_form_elicitation_is_answered_by_a_python_callback_and_validated() -> None:
    asked: list[ElicitationRequest] = []
    answers = iter(
        [
            ElicitationAnswer("accept", {"name": "Ada", "age": 36}),
            ElicitationAnswer("accept", {"name": "", "age": 200}),
            ElicitationAnswer("decline"),
        ]
    )

    script = calling(*[("ask_contact", {})] * 3)
    async with agent_for(script) as agent:

        @agent.on_elicitation
        async def answer(request: ElicitationRequest) -> ElicitationAnswer:
            asked.append(request)
            return next(answers)

        output, events = await run_events(agent)
    good, bad, declined = output.split(" | ")
    assert good == "added Ada (36)"
    assert "does not match the requested schema" in bad and "age" in bad and "name" in bad
    assert declined == "not added: decline"
    assert asked[0].mode == "form" and asked[0].message == "Who should I add?"
    assert set(asked[0].schema["properties"]) == {"name", "age"}
    statuses = [e.data["status"] for e in mcp_events(events, "elicitation")]
    assert statuses == ["requested", "accept", "requested", "invalid", "requested", "decline"]
    assert all("Ada" not in json.dumps(e.data) for e in mcp_events(events, "elicitation"))


async def test_url_elicitation_and_no_handler() -> None:
    seen: list[ElicitationRequest] = []
    async with agent_for(calling(("visit", {}))) as agent:

        @agent.on_elicitation
        async def answer(request: ElicitationRequest) -> ElicitationAnswer:
            seen.append(request)
            return ElicitationAnswer("accept")

        output, _ = await run_events(agent)
    assert output == "visit: accept"
    assert seen[0].mode == "url" and seen[0].url == "https://example.test/login"


async def test_roots_and_server_logs_reach_the_run(tmp_path: Path) -> None:
    script = calling(("roots", {}), ("chatty", {}), ("count", {"steps": 2}))
    async with agent_for(script, mcp_roots=[str(tmp_path)]) as agent:
        output, events = await run_events(agent)
    roots, chatted, counted = output.split(" | ")
    assert counted == "counted 2"
    progress = mcp_events(events, "progress")
    assert [(e.data["progress"], e.data["total"]) for e in progress] == [(1.0, 2.0), (2.0, 2.0)]
    assert {e.data["tool"] for e in progress} == {"count"}
    assert roots == tmp_path.resolve().as_uri()
    assert chatted == "chatted"
    logs = [(e.data["level"], e.data["data"]) for e in mcp_events(events, "log")]
    assert logs == [("info", "starting"), ("warning", {"detail": "careful"})]


async def test_a_tool_added_mid_run_is_offered_in_the_next_round() -> None:
    def script(request: ModelRequest) -> ModelResponse:
        done = len(results_of(request))
        if done == 0:
            return call_tools(("grow", {"tool_name": "fresh"}))
        if done == 1:
            assert "fresh" in [t.name for t in request.tools]
            return call_tools(("fresh", {}))
        if done == 2:
            return call_tools(("agent_stop", {}))
        return reply(results_of(request)[1].content)

    async with agent_for(script) as agent:
        output, events = await run_events(agent)
    assert output == "I am fresh"
    assert mcp_events(events, "tools_changed")


async def test_a_server_that_dies_mid_call_is_reported_in_the_run() -> None:
    agent = Agent(
        ScriptedModel(calling(("poke", {}))),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[raw_entry("crash")],
    )
    async with agent:
        output, events = await run_events(agent)
    assert "MCP server 'raw_crash'" in output
    dropped = mcp_events(events, "disconnected")
    assert dropped and dropped[0].server == "raw_crash"
    assert events[-1].kind == "run_finished"


async def test_a_server_that_fails_to_start_is_reported_in_the_run_with_its_stderr() -> None:
    broken = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('no API key set\\n'); sys.exit(2)",
    ]
    agent = Agent(
        ScriptedModel(calling(("echo", {"text": "hi"}))),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[
            stdio_entry("--name", "fix"),
            {"name": "broken", "command": broken},
        ],
    )
    async with agent:
        output, events = await run_events(agent)
    assert output == "hi"
    failed = mcp_events(events, "connect_failed")[0]
    assert failed.server == "broken" and "no API key set" in failed.data["error"]
    assert failed.run_id == events[0].run_id


async def test_resources_are_offered_as_read_tools() -> None:
    script = calling(
        ("mcp_list_resources", {}),
        ("mcp_read_resource", {"server": "mcp_server", "uri": "note://greeting"}),
        ("mcp_read_resource", {"server": "mcp_server", "uri": "note://shopping"}),
        ("mcp_read_resource", {"server": "mcp_server"}),
        ("mcp_read_resource", {"server": "elsewhere", "uri": "note://greeting"}),
        ("mcp_read_resource", {"server": "mcp_server", "uri": "nope://missing"}),
    )
    async with agent_for(script) as agent:
        output, _ = await run_events(agent)
        tools = {t.name: t for t in agent.tool_registry()}
    listing, greeting, templated, no_uri, no_server, missing = output.split(" | ")
    listed = json.loads(listing)["mcp_server"]
    assert [r["uri"] for r in listed["resources"]] == ["note://greeting"]
    assert [t["uri_template"] for t in listed["templates"]] == ["note://{name}", "ask://{topic}"]
    assert greeting == "hello from the fixture"
    assert templated == "note shopping"
    assert "'uri' must be a non-empty string" in no_uri
    assert "unknown server 'elsewhere'" in no_server
    assert "mcp_server" in missing and "nope://missing" in missing
    assert tools["mcp_read_resource"].parameters["properties"]["server"]["enum"] == ["mcp_server"]
