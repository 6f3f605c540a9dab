"""Durable runs over HTTP: a run suspends for approval, any client approves it, SSE shows it.

A real uvicorn server with a SQLite store in ``tmp_path``; requests through httpx.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from ponder.tools import tool

from .live import LiveServer, live_server, sse_events

PUBLISHED: list[str] = []


@tool(requires_approval=True)
def publish(text: str) -> str:
    """Publish a text.

    Args:
        text: What to publish.
    """
    PUBLISHED.append(text)
    return f"published {text!r}"


def script(request: ModelRequest) -> ModelResponse:
    results = [m for m in request.messages if isinstance(m, ToolMessage)]
    if not results:
        return call_tools(("publish", {"text": "report"}, "p1"))
    return reply(f"Done: {results[-1].content}")


def approval_agent() -> Agent:
    """One agent shared by every run (its model is a pure function of the request)."""
    model = ScriptedModel(script)
    return Agent(model, tools=[publish], agent_thought_mode="chat", enable_thinking_tool=False)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    PUBLISHED.clear()
    return SQLiteStore(tmp_path / "runs.sqlite3")


@pytest.fixture
def server(store: SQLiteStore) -> Iterator[LiveServer]:
    with live_server(create_app(approval_agent(), store=store)) as running:
        yield running


def read_events(client: httpx.Client, run_id: str, until: str) -> list[dict[str, Any]]:
    events = []
    with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        assert response.status_code == 200
        for message in sse_events(response.iter_lines()):
            events.append(json.loads(message["data"]))
            if events[-1]["kind"] == until:
                return events
    return events


class Follower(threading.Thread):
    """Reads one SSE connection until ``run_finished``."""

    def __init__(self, url: str, run_id: str) -> None:
        super().__init__(daemon=True)
        self.url, self.run_id = url, run_id
        self.events: list[dict[str, Any]] = []
        self.suspended = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            for event in self._iter(client):
                self.events.append(event)
                if event["kind"] == "run_suspended":
                    self.suspended.set()
                if event["kind"] == "run_finished":
                    return

    def _iter(self, client: httpx.Client) -> Iterator[dict[str, Any]]:
        with client.stream("GET", f"/v1/runs/{self.run_id}/events") as response:
            for message in sse_events(response.iter_lines()):
                yield json.loads(message["data"])


def start(client: httpx.Client) -> str:
    response = client.post("/v1/runs", json={"prompt": "Publish the report."})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_suspend_then_approve_over_http_on_one_sse_connection(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = start(client)
        follower = Follower(server.url, run_id)
        follower.start()
        assert follower.suspended.wait(30)
        record = client.get(f"/v1/runs/{run_id}").json()
        assert record["status"] == "suspended"
        assert record["suspension"] == {
            "reason": "approval",
            "payload": {
                "calls": [{"id": "p1", "name": "publish", "arguments": {"text": "report"}}]
            },
        }
        assert PUBLISHED == []
        resumed = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert resumed.status_code == 200, resumed.text
        follower.join(30)
        assert not follower.is_alive()
        kinds = [e["kind"] for e in follower.events]
        assert (
            kinds.index("run_suspended") < kinds.index("run_resumed") < kinds.index("run_finished")
        )
        seqs = [e["seq"] for e in follower.events]
        assert seqs == list(range(1, len(seqs) + 1))
        done = client.get(f"/v1/runs/{run_id}").json()
        assert done["status"] == "completed" and done["output"] == "Done: published 'report'"
        assert done["suspension"] is None and PUBLISHED == ["report"]
        again = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert again.status_code == 409 and "completed" in again.json()["error"]["message"]
        assert PUBLISHED == ["report"]


def suspend_elsewhere(path: Path) -> str:
    """Start a run with its own store connection and event loop, as another process would."""

    async def go() -> str:
        other = SQLiteStore(path)
        try:
            result = await approval_agent().run("Publish from elsewhere.", store=other)
        finally:
            await other.close()
        assert result.status == "suspended"
        return result.run_id

    return asyncio.run(go())


def test_a_run_suspended_elsewhere_is_listed_shown_and_resumed(
    server: LiveServer, tmp_path: Path
) -> None:
    run_id = suspend_elsewhere(tmp_path / "runs.sqlite3")
    with httpx.Client(base_url=server.url, timeout=30) as client:
        listed = client.get("/v1/runs").json()["runs"]
        assert [(r["id"], r["status"]) for r in listed] == [(run_id, "suspended")]
        record = client.get(f"/v1/runs/{run_id}").json()
        calls = record["suspension"]["payload"]["calls"]
        assert [c["id"] for c in calls] == ["p1"]
        replay = read_events(client, run_id, until="run_suspended")
        assert replay[-1]["payload"]["calls"] == calls
        edit = {"p1": {"action": "edit", "arguments": {"text": "edited"}}}
        assert client.post(f"/v1/runs/{run_id}/resume", json={"decision": edit}).status_code == 200
        events = read_events(client, run_id, until="run_finished")
        assert events[-1]["output"] == "Done: published 'edited'"
        seqs = [e["seq"] for e in events]
        assert seqs == sorted(set(seqs))
    assert PUBLISHED == ["edited"]


def wait_suspended(client: httpx.Client) -> str:
    run_id = start(client)
    read_events(client, run_id, until="run_suspended")
    return run_id


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"decision": "maybe"}, 400, "resume a run waiting for approval"),
        ({"decision": 42}, 400, "resume a run waiting for approval"),
        ({"decision": {"p9": "approve"}}, 400, "no decision for pending call(s): p1"),
        ({"decision": {"p1": {"action": "edit"}}}, 400, "decision for call 'p1' must be"),
        ({}, 422, "decision"),
        ({"decision": "approve", "extra": 1}, 422, "extra"),
    ],
)
def test_bad_decisions_are_refused_and_lose_nothing(
    server: LiveServer, body: dict[str, Any], status: int, fragment: str
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = wait_suspended(client)
        response = client.post(f"/v1/runs/{run_id}/resume", json=body)
        assert response.status_code == status, response.text
        assert fragment in response.json()["error"]["message"]
        record = client.get(f"/v1/runs/{run_id}").json()
        assert record["status"] == "suspended" and record["suspension"]["reason"] == "approval"
        ok = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "reject"})
        assert ok.status_code == 200
        events = read_events(client, run_id, until="run_finished")
        assert "rejected this call" in events[-1]["output"]
    assert PUBLISHED == []


def test_unknown_runs_and_held_leases(server: LiveServer, store: SQLiteStore) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        missing = client.post("/v1/runs/nope/resume", json={"decision": "approve"})
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "not_found"
        run_id = wait_suspended(client)

        async def hold() -> None:
            await store.acquire(run_id, "elsewhere:1:abc", 600)

        asyncio.run(hold())
        busy = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert busy.status_code == 409, busy.text
        assert "is being run by elsewhere:1:abc" in busy.json()["error"]["message"]
        assert client.get(f"/v1/runs/{run_id}").json()["status"] == "suspended"
        asyncio.run(store.release(run_id, "elsewhere:1:abc"))
        assert client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"}).is_success
        assert read_events(client, run_id, until="run_finished")[-1]["kind"] == "run_finished"
    assert PUBLISHED == ["report"]


def test_cancel_a_suspended_run(server: LiveServer, store: SQLiteStore) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = wait_suspended(client)
        cancelled = client.post(f"/v1/runs/{run_id}/cancel", json={}).json()
        assert cancelled["status"] == "cancelled" and cancelled["suspension"] is None
        refused = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert refused.status_code == 409
        events = read_events(client, run_id, until="run_failed")
        assert events[-1]["error_type"] == "Cancelled"
    stored = asyncio.run(store.list_runs(status="cancelled"))
    assert [r.run_id for r in stored] == [run_id] and PUBLISHED == []


def test_without_a_store_a_suspended_run_cannot_be_resumed() -> None:
    with (
        live_server(create_app(approval_agent())) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        run_id = wait_suspended(client)
        response = client.post(f"/v1/runs/{run_id}/resume", json={"decision": "approve"})
        assert response.status_code == 400
        assert "has no store" in response.json()["error"]["message"]
