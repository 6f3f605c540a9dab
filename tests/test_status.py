"""The closed sets of `ponder.status` agree with what runs, the store and the server emit."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console

from ponder.agent import Agent, UsageLimits
from ponder.cli.render import render_view
from ponder.cli.view import RunView
from ponder.events import Event, ToolCallFailed
from ponder.exceptions import PonderError
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.server.stored import suspension_of
from ponder.status import (
    CALL_STATUSES,
    LIMIT_STOP_REASONS,
    RUN_STATUSES,
    STOP_REASONS,
    SUSPENSION_REASONS,
)
from ponder.store import MemoryStore, SQLiteStore
from ponder.tools import tool

from .server.live import LiveServer, echo_agent, live_server


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


@tool(requires_approval=True)
def deploy(target: str) -> str:
    """Deploy.

    Args:
        target: Where to.
    """
    return f"deployed {target}"


def multiply_thrice(request: ModelRequest) -> ModelResponse:
    """Three multiply calls, then ``agent_stop``; an answer whenever tools are off."""
    if request.tool_choice == "none":
        return reply("391")
    if sum(isinstance(m, ToolMessage) for m in request.messages) < 3:
        return call_tools(("multiply", {"a": 17, "b": 23}))
    return call_tools(("agent_stop", {"result": "391"}))


def fail_twice_then_stop(request: ModelRequest) -> ModelResponse:
    """An unknown tool and bad arguments in one round, then ``agent_stop``."""
    if request.tool_choice == "none":
        return reply("I could not do that.")
    if not any(isinstance(m, ToolMessage) for m in request.messages):
        return call_tools(("launch_rocket", {}), ("multiply", {"a": "many", "b": 2}))
    return call_tools(("agent_stop", {"result": "I could not do that."}))


def _agent(model: ScriptedModel, store: Any = None) -> Agent[Any]:
    return Agent(
        model,
        tools=[multiply, deploy],
        store=store,
        enable_thinking_tool=False,
        agent_thought_mode="chat",
    )


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with live_server(create_app(echo_agent(), store=MemoryStore())) as running:
        yield running


def test_the_server_schema_offers_exactly_the_run_statuses(server: LiveServer) -> None:
    schema = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    status = schema["components"]["schemas"]["RunSummary"]["properties"]["status"]
    assert status["enum"] == list(RUN_STATUSES)


def test_a_served_run_ends_in_a_run_status(server: LiveServer) -> None:
    run_id = httpx.post(f"{server.url}/v1/runs", json={"prompt": "hello"}, timeout=30).json()["id"]
    with httpx.stream("GET", f"{server.url}/v1/runs/{run_id}/events", timeout=30) as response:
        for _ in response.iter_lines():
            pass
    summary = httpx.get(f"{server.url}/v1/runs/{run_id}", timeout=30).json()
    assert summary["status"] == "completed" and summary["stop_reason"] in STOP_REASONS
    listed = httpx.get(f"{server.url}/v1/runs", timeout=30).json()["runs"]
    assert listed and {run["status"] for run in listed} <= set(RUN_STATUSES)


async def test_stored_runs_end_in_run_statuses_and_suspend_for_a_known_reason(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    done = await _agent(ScriptedModel(multiply_thrice), store).run("17 times 23?")
    waiting = await _agent(ScriptedModel([call_tools(("deploy", {"target": "prod"}))]), store).run(
        "deploy to prod"
    )
    with pytest.raises(PonderError):
        await _agent(ScriptedModel([call_tools(("multiply", {"a": 1, "b": 2}))]), store).run("x")
    runs = {record.run_id: record.status for record in await store.list_runs()}
    assert set(runs.values()) == {"completed", "suspended", "failed"}
    assert set(runs.values()) <= set(RUN_STATUSES)
    assert runs[done.run_id] == done.status == "completed"
    assert runs[waiting.run_id] == waiting.status == "suspended"
    assert waiting.suspension is not None
    assert waiting.suspension["reason"] in SUSPENSION_REASONS
    suspension = suspension_of(await store.load(waiting.run_id))
    assert suspension is not None and suspension["reason"] == "approval"
    await store.close()


@pytest.mark.parametrize(
    ("limits", "config", "reason"),
    [
        (None, {}, "answered"),
        (UsageLimits(requests=2), {}, "requests_limit"),
        (UsageLimits(tool_calls=1), {}, "call_limit"),
        (None, {"agent_tool_call_limit": 1}, "round_limit"),
    ],
)
async def test_every_way_a_run_stops_is_a_stop_reason(
    limits: UsageLimits | None, config: dict[str, Any], reason: str
) -> None:
    agent = Agent(
        ScriptedModel(multiply_thrice), tools=[multiply], enable_thinking_tool=False, **config
    )
    result = await agent.run("17 times 23?", limits=limits)
    assert result.stop_reason == reason and result.stop_reason in STOP_REASONS


def test_every_usage_limit_has_its_stop_reason() -> None:
    assert set(UsageLimits.model_fields) <= set(LIMIT_STOP_REASONS)
    assert set(LIMIT_STOP_REASONS.values()) <= STOP_REASONS


async def test_the_live_view_shows_the_statuses_runs_emit() -> None:
    stream = _agent(ScriptedModel(fail_twice_then_stop)).stream("launch a rocket and multiply")
    events: list[Event] = [event async for event in stream]
    failed = [event.status for event in events if isinstance(event, ToolCallFailed)]
    assert sorted(failed) == ["invalid_arguments", "unknown_tool"]
    assert set(failed) <= set(CALL_STATUSES)
    view = RunView()
    for event in events:
        view.apply(event)
    assert view.status == stream.result.status == "completed"
    assert sorted(call.status for call in view.calls.values()) == sorted(failed)
    console = Console(width=100, file=io.StringIO(), record=True, color_system=None)
    console.print(render_view(view))
    text = console.export_text()
    assert "✓ completed" in text
    unknown = next(line for line in text.splitlines() if "launch_rocket" in line)
    assert unknown.split()[0] == "?"
