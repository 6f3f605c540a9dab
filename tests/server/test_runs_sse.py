"""The runs API over real HTTP: start, follow over SSE, resume with Last-Event-ID, cancel."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ponder.server.app import create_app

from .live import ANSWER, LiveServer, live_server, sse_events, thinking_agent_factory


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def server(gate: threading.Event) -> Iterator[LiveServer]:
    with live_server(create_app(thinking_agent_factory(gate))) as running:
        try:
            yield running
        finally:
            gate.set()  # a cancelled run's tool thread may still wait on it


def follow(
    client: httpx.Client, run_id: str, headers: dict[str, str] | None = None, stop_kind: str = ""
) -> list[dict[str, Any]]:
    """Read a run's SSE stream until it ends (or until an event of ``stop_kind``)."""
    events = []
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers=headers or {}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for message in sse_events(response.iter_lines()):
            event = json.loads(message["data"])
            assert message["id"] == str(event["seq"]) and message["event"] == event["kind"]
            events.append(event)
            if event["kind"] == stop_kind:
                break
    return events


def start(client: httpx.Client, prompt: str = "Add 1+2 and 3+4.") -> str:
    response = client.post("/v1/runs", json={"prompt": prompt})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["status"] == "running" and body["prompt"] == prompt
    return str(body["id"])


def test_scripted_run_streams_every_event_in_order(
    server: LiveServer, gate: threading.Event
) -> None:
    gate.set()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = start(client)
        events = follow(client, run_id)
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert {e["run_id"] for e in events} == {run_id}
        thoughts = [e["data"] for e in events if e["kind"] == "thinking"]
        assert [t["thought_number"] for t in thoughts] == [1, 2, 3, 4]
        assert thoughts[2]["node"]["branch_id"] == "tool-path"
        assert thoughts[3]["node"]["is_revision"] and thoughts[3]["node"]["revises_thought"] == 2
        finished = {e["name"]: e["output"] for e in events if e["kind"] == "tool_call_finished"}
        assert finished["add"] == "3" and finished["gated_add"] == "7"
        assert events[-1]["output"] == ANSWER
        record = client.get(f"/v1/runs/{run_id}").json()
        assert record["status"] == "completed" and record["output"] == ANSWER
        assert record["event_count"] == len(events) and record["usage"]["requests"] == 9
        listed = client.get("/v1/runs").json()["runs"]
        assert [r["id"] for r in listed] == [run_id]
        # a finished run replays in full to a late reader
        assert follow(client, run_id) == events


def test_reconnect_with_last_event_id_loses_no_event(
    server: LiveServer, gate: threading.Event
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = start(client)
        first = follow(client, run_id, stop_kind="thinking")
        assert first[-1]["kind"] == "thinking"
        assert client.get(f"/v1/runs/{run_id}").json()["status"] == "running"
        last_id = first[-1]["seq"]
        gate.set()
        rest = follow(client, run_id, headers={"Last-Event-ID": str(last_id)})
        assert rest[0]["seq"] == last_id + 1
        combined = first + rest
        assert [e["seq"] for e in combined] == list(range(1, len(combined) + 1))
        assert combined == follow(client, run_id)
        # the query form resumes too (for clients that cannot set headers)
        tail = client.get(f"/v1/runs/{run_id}/events", params={"after": len(combined) - 2})
        assert tail.text.count("event: ") == 2


def test_cancel_stops_a_running_run(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = start(client)
        deadline = time.monotonic() + 20
        while client.get(f"/v1/runs/{run_id}").json()["event_count"] < 20:
            assert time.monotonic() < deadline, "the run never reached its gated tool call"
            time.sleep(0.02)
        cancelled = client.post(f"/v1/runs/{run_id}/cancel", json={})
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        events = follow(client, run_id)
        assert events[-1]["kind"] == "run_failed" and events[-1]["error_type"] == "Cancelled"
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        again = client.post(f"/v1/runs/{run_id}/cancel", json={})
        assert again.status_code == 200 and again.json()["status"] == "cancelled"


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("GET", "/v1/runs/nope", {}, 404),
        ("GET", "/v1/runs/nope/events", {}, 404),
        ("POST", "/v1/runs/nope/cancel", {"json": {}}, 404),
        ("POST", "/v1/runs/nope/cancel", {}, 403),
        (
            "POST",
            "/v1/runs",
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            422,
        ),
        ("POST", "/v1/runs", {"json": {"prompt": ""}}, 422),
        ("POST", "/v1/runs", {"json": {"prompt": 5}}, 422),
        ("POST", "/v1/runs", {"json": {"prompt": "x", "surprise": 1}}, 422),
        (
            "POST",
            "/v1/runs",
            {"json": {"prompt": "x", "history": [{"role": "robot", "content": "x"}]}},
            422,
        ),
        ("POST", "/v1/runs", {"json": ["prompt"]}, 422),
        (
            "POST",
            "/v1/runs",
            {"content": b"x" * 1_000_001, "headers": {"content-type": "application/json"}},
            413,
        ),
        ("GET", "/v1/runs", {"params": {"limit": 0}}, 422),
        ("GET", "/v1/runs", {"params": {"limit": "many"}}, 422),
    ],
)
def test_bad_input_gets_a_json_4xx(
    server: LiveServer, method: str, path: str, kwargs: dict[str, Any], status: int
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.request(method, path, **kwargs)
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["message"] and error["type"]
        # nothing was started by a refused request
        assert client.get("/v1/runs").json()["runs"] == []


def test_bad_last_event_id_is_a_400(server: LiveServer, gate: threading.Event) -> None:
    gate.set()
    with httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = start(client)
        for value in ("abc", "-4"):
            response = client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": value})
            assert response.status_code == 400
            assert "Last-Event-ID" in response.json()["error"]["message"]


def test_streamed_oversized_body_is_refused(server: LiveServer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b"x" * 50_000

    with httpx.Client(base_url=server.url, timeout=30) as client:
        response = client.post(
            "/v1/runs", content=chunks(), headers={"content-type": "application/json"}
        )
        assert response.status_code == 413
        assert response.json()["error"]["type"] == "request_too_large"
