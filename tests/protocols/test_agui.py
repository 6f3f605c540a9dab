"""AG-UI clients run a ponder agent: every event validates against the official models."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event
from fastapi import FastAPI
from pydantic import TypeAdapter

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.protocols.agui import agui_app
from ponder.server.app import create_app
from ponder.server.local_launcher import RunLauncher
from ponder.server.runs import MemoryRunRegistry
from ponder.store.sqlite import SQLiteStore
from ponder.tools import tool
from tests.server.live import ECHO_FIXED, LiveServer, echoing_agent, live_server
from tests.server.test_resume import PUBLISHED, approval_agent

from .agui_agents import WEATHER_TOOL, broken_agent, showcase_agent

EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(
    thread: str, run: str, messages: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"threadId": thread, "runId": run, "messages": messages}
    body.update({"tools": [], "context": []})
    body.update({"state": {}, "forwardedProps": {}, **extra})
    return body


def user(text: str, message_id: str = "u1") -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def post(url: str, body: Any, **headers: str) -> list[dict[str, Any]]:
    """The events of one AG-UI run, each validated by ag-ui-protocol's models."""
    with httpx.stream("POST", f"{url}/v1/agui", json=body, headers=headers, timeout=30) as got:
        assert got.status_code == 200, got.read()
        assert got.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in got.iter_lines() if line.startswith("data: ")]
    events = [json.loads(line.removeprefix("data: ")) for line in lines]
    for event in events:
        EVENT.validate_python(event)
    return events


def resumed(interrupt: str, approved: bool | None) -> dict[str, Any]:
    payload = None if approved is None else {"approved": approved}
    return {"interruptId": interrupt, "status": "resolved", "payload": payload}


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def text_of(events: list[dict[str, Any]]) -> str:
    return "".join(e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT")


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    PUBLISHED.clear()
    return SQLiteStore(tmp_path / "runs.sqlite3")


@pytest.fixture
def server() -> Iterator[LiveServer]:
    with live_server(create_app(showcase_agent())) as running:
        yield running


def test_a_run_streams_reasoning_state_a_server_tool_and_text(server: LiveServer) -> None:
    events = post(server.url, run_input("t1", "r1", [user("Add 1 and 2.")]))
    kinds = types(events)
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert events[0]["threadId"] == "t1" and events[0]["runId"] == "r1"
    reasoning = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    assert "Plan: add first" in reasoning
    [snapshot] = [e for e in events if e["type"] == "STATE_SNAPSHOT"]
    steps = snapshot["snapshot"]["todos"]["steps"]
    assert [s["description"] for s in steps] == ["Add the numbers", "Ask the weather"]
    [start] = [e for e in events if e["type"] == "TOOL_CALL_START"]
    assert start["toolCallName"] == "add"
    call = start["toolCallId"]
    args = [e["delta"] for e in events if e["type"] == "TOOL_CALL_ARGS"]
    assert json.loads("".join(args)) == {"a": 1, "b": 2}
    [result] = [e for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert result["toolCallId"] == call and result["content"] == "3"
    assert kinds.index("TOOL_CALL_END") < kinds.index("TOOL_CALL_RESULT")
    assert text_of(events) == "1 + 2 = 3; Paris: unknown."
    assert kinds.count("TEXT_MESSAGE_START") == kinds.count("TEXT_MESSAGE_END") == 1
    assert kinds.count("REASONING_START") == kinds.count("REASONING_END")
    assert events[-1]["outcome"] == {"type": "success"}
    assert events[-1]["result"] == "1 + 2 = 3; Paris: unknown."


def test_a_withdrawn_echo_never_reaches_the_client() -> None:
    """The model's first answer repeats ponder's instruction: the client sees only the next."""
    with live_server(create_app(echoing_agent)) as running:
        events = post(running.url, run_input("t6", "r1", [user("Add 17 and 23.")]))
    kinds = types(events)
    pieces = [e["delta"] for e in events if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert "".join(pieces) == ECHO_FIXED == events[-1]["result"]
    assert len(pieces) > 1 and kinds.count("TEXT_MESSAGE_START") == 1
    reasoning = "".join(e["delta"] for e in events if e["type"] == "REASONING_MESSAGE_CONTENT")
    assert "Add 17 and 23 with the tool." in reasoning
    assert kinds.index("REASONING_MESSAGE_CONTENT") < kinds.index("TEXT_MESSAGE_START")


def test_a_frontend_tool_call_ends_the_run_and_its_result_resumes_it(server: LiveServer) -> None:
    first = post(server.url, run_input("t2", "r1", [user("Weather?")], tools=[WEATHER_TOOL]))
    outcome = first[-1]["outcome"]
    [pending] = outcome["pendingToolCallIds"]
    [start] = [e for e in first if e["type"] == "TOOL_CALL_START" and e["toolCallId"] == pending]
    assert start["toolCallName"] == "get_weather"
    arguments = "".join(
        e["delta"] for e in first if e["type"] == "TOOL_CALL_ARGS" and e["toolCallId"] == pending
    )
    assert json.loads(arguments) == {"city": "Paris"}
    call = {
        "id": pending,
        "type": "function",
        "function": {"name": "get_weather", "arguments": arguments},
    }
    messages = [
        user("Weather?"),
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": pending, "content": "sunny"},
    ]
    second = post(server.url, run_input("t2", "r2", messages, tools=[WEATHER_TOOL]))
    assert second[0]["runId"] == "r2"
    assert text_of(second) == "1 + 2 = 3; Paris: sunny."
    assert second[-1]["outcome"] == {"type": "success"}
    runs = httpx.get(f"{server.url}/v1/runs").json()["runs"]
    assert len(runs) == 1  # one ponder run across the two AG-UI runs


def test_an_approval_is_an_interrupt_and_resume_continues_the_stored_run(
    store: SQLiteStore,
) -> None:
    with live_server(create_app(approval_agent(), store=store)) as running:
        first = post(running.url, run_input("t3", "r1", [user("Publish the report.")]))
        outcome = first[-1]["outcome"]
        assert outcome["type"] == "interrupt"
        [interrupt] = outcome["interrupts"]
        assert interrupt["reason"] == "tool_approval"
        assert interrupt["metadata"] == {"name": "publish", "arguments": {"text": "report"}}
        assert PUBLISHED == []
    with live_server(create_app(approval_agent(), store=store)) as restarted:
        replayed = post(restarted.url, run_input("t3", "r1", [user("Publish the report.")]))
        assert types(replayed) == types(first)  # from the store, after the restart
        assert replayed[-1]["outcome"] == outcome
        answer = {
            "interruptId": interrupt["id"],
            "status": "resolved",
            "payload": {"approved": True},
        }
        second = post(restarted.url, run_input("t3", "r2", [], resume=[answer]))
    assert text_of(second) == "Done: published 'report'"
    assert second[-1]["outcome"] == {"type": "success"}
    assert PUBLISHED == ["report"]


def test_a_rejected_interrupt_tells_the_model(store: SQLiteStore) -> None:
    with live_server(create_app(approval_agent(), store=store)) as running:
        first = post(running.url, run_input("t4", "r1", [user("Publish the report.")]))
        [interrupt] = first[-1]["outcome"]["interrupts"]
        answer = {"interruptId": interrupt["id"], "status": "cancelled"}
        second = post(running.url, run_input("t4", "r2", [], resume=[answer]))
    assert second[-1]["type"] == "RUN_FINISHED"
    assert PUBLISHED == []


def test_the_same_run_ids_replay_the_run_after_a_dropped_stream(server: LiveServer) -> None:
    body = run_input("t5", "r1", [user("Add 1 and 2.")])
    with httpx.stream("POST", f"{server.url}/v1/agui", json=body, timeout=30) as got:
        next(got.iter_lines())  # the client goes away after the first event
    again = post(server.url, body)
    assert types(again)[0] == "RUN_STARTED" and types(again)[-1] == "RUN_FINISHED", again[-1]
    assert text_of(again) == "1 + 2 = 3; Paris: unknown."
    assert len(httpx.get(f"{server.url}/v1/runs").json()["runs"]) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"{not json", "not an AG-UI RunAgentInput"),
        ({"threadId": "t", "messages": []}, "runId"),
        ({"threadId": "t", "runId": "r", "messages": "hi"}, "messages"),
        (run_input("t", "r", []), "the last message must be the user's"),
        (run_input("t", "r", [user("  ")]), "has no text"),
        (run_input("t", "r", [user("x")], tools=[WEATHER_TOOL, WEATHER_TOOL]), "given twice"),
        (
            run_input("t", "r", [], resume=[{"interruptId": "nope", "status": "resolved"}]),
            "not an interrupt of this server",
        ),
        (run_input("t", "r", [], resume=[resumed("ponder:run:c", None)]), "a payload is"),
        (run_input("t", "r", [], resume=[resumed(f"ponder:{'a' * 32}:c", True)]), "no run"),
    ],
)
def test_bad_input_is_a_400_never_a_500(server: LiveServer, body: Any, says: str) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    got = httpx.post(
        f"{server.url}/v1/agui", content=content, headers={"content-type": "application/json"}
    )
    assert got.status_code == 400
    assert says in got.json()["error"]["message"]


def test_the_token_guards_the_endpoint() -> None:
    with live_server(create_app(showcase_agent(), token="tok")) as running:
        body = run_input("t", "r", [user("Add 1 and 2.")])
        refused = httpx.post(f"{running.url}/v1/agui", json=body)
        events = post(running.url, body, Authorization="Bearer tok")
    assert refused.status_code == 401
    assert types(events)[-1] == "RUN_FINISHED"


def test_the_endpoint_mounts_in_another_app() -> None:
    outer = FastAPI()
    outer.mount("/agent", agui_app(showcase_agent()))
    with live_server(outer) as running:
        events = post(f"{running.url}/agent", run_input("t", "r", [user("Add 1 and 2.")]))
    assert text_of(events) == "1 + 2 = 3; Paris: unknown."


def test_an_oversized_body_is_a_413(server: LiveServer) -> None:
    body = run_input("t", "r", [user("x" * 1_100_000)])
    got = httpx.post(f"{server.url}/v1/agui", json=body)
    assert got.status_code == 413
    assert got.json()["error"]["type"] == "request_too_large"


def test_a_failed_run_ends_its_stream_with_run_error() -> None:
    with live_server(create_app(broken_agent())) as running:
        events = post(running.url, run_input("t", "r", [user("Hello?")]))
    assert types(events)[0] == "RUN_STARTED"
    assert events[-1]["type"] == "RUN_ERROR"
    assert events[-1]["code"] == "run_failed"
    assert "the provider is down" in events[-1]["message"]


async def test_a_waiter_that_goes_away_never_stops_the_run() -> None:
    """A stream that drops while it waits for the run's task (the replay's window) loses nothing."""
    gate = asyncio.Event()

    @tool
    async def slow(x: int) -> str:
        """Wait for the test.

        Args:
            x: Anything.
        """
        await gate.wait()
        return f"got {x}"

    def script(request: ModelRequest) -> ModelResponse:
        if not any(isinstance(m, ToolMessage) for m in request.messages):
            return call_tools(("slow", {"x": 1}))
        return reply("done")

    agent = Agent(model=ScriptedModel(script), tools=[slow], agent_thought_mode="chat")
    launcher = RunLauncher(agent, MemoryRunRegistry(), None)
    record = launcher.start("go", resumable=True)
    waiter = asyncio.ensure_future(launcher.wait(record.run_id))
    await asyncio.sleep(0.05)
    waiter.cancel()  # the client went away
    await asyncio.gather(waiter, return_exceptions=True)
    gate.set()
    await launcher.wait(record.run_id)
    assert record.status == "completed", record.summary()
    assert record.summary()["output"] == "done"
