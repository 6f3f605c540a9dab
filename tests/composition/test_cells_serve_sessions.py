"""The matrix's ``ponder serve`` column for sessions: turns of one ``session_id`` posted to
the runs API of `create_app` (a real uvicorn server, a SQLite store), the model a real
HTTP provider (`FakeOpenAIServer`), each run read back from its SSE events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from ponder.agent import Agent
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from ponder.testing import FakeOpenAIServer, FakeReply, FakeToolCall
from tests.server.live import live_server, run_events


def post_turn(client: httpx.Client, prompt: str, session: str) -> str:
    """Start a run of ``session``; its id."""
    started = client.post("/v1/runs", json={"prompt": prompt, "session_id": session})
    assert started.status_code == 201, started.text
    return str(started.json()["id"])


def finished(client: httpx.Client, run_id: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run's events, read until its stream ends, and its summary."""
    events = run_events(client, run_id)
    return client.get(f"/v1/runs/{run_id}").json(), events


def said(body: dict[str, Any], role: str) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == role]


def answer_slowly(body: dict[str, Any]) -> FakeReply:
    """Answer the last user message, after a pause that lets concurrent turns overlap."""
    return FakeReply(content=f"answer to {said(body, 'user')[-1]}", delay=0.3)


def test_concurrent_turns_of_one_session_over_http_are_serialised(tmp_path: Path) -> None:
    with FakeOpenAIServer(answer_slowly) as provider:

        def make() -> Agent:
            return Agent(
                "openai:fake", base_url=provider.base_url, api_key="k", tool_calling_mode="none"
            )

        store = SQLiteStore(tmp_path / "runs.db")
        with live_server(create_app(make, store=store)) as server:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                both = [post_turn(client, "A", "s-1"), post_turn(client, "B", "s-1")]
                done = [finished(client, run_id)[0] for run_id in both]
                last, _ = finished(client, post_turn(client, "C", "s-1"))
    assert [d["status"] for d in done] == ["completed", "completed"]
    assert last["status"] == "completed"
    third = provider.requests[-1]
    assert sorted(said(third, "user")[:2]) == ["A", "B"] and said(third, "user")[2] == "C"
    assert sorted(said(third, "assistant")) == ["answer to A", "answer to B"]  # no turn lost


def calls(*items: tuple[str, dict[str, Any]]) -> FakeReply:
    return FakeReply(tool_calls=[FakeToolCall(name=n, arguments=a) for n, a in items])


def thought(number: int, text: str) -> tuple[str, dict[str, Any]]:
    args = {"thought": text, "thought_number": number, "total_thoughts": 3}
    return ("sequential_thinking", {**args, "next_thought_needed": number < 3})


def plan(status: str) -> tuple[str, dict[str, Any]]:
    steps = [
        {"id": 1, "description": "Look it up", "status": status},
        {"id": 2, "description": "Answer", "status": "pending"},
    ]
    return ("todo_write", {"task": "answer the question", "steps": steps})


STOP = calls(("agent_stop", {}))
TURN_ONE = [calls(thought(1, "Start from the question.")), calls(plan("in_progress")), STOP]
TURN_TWO = [calls(thought(2, "Go on from the first thought.")), calls(plan("completed")), STOP]


def test_a_sessions_thinking_and_todos_carry_to_its_next_turn_over_http(tmp_path: Path) -> None:
    script: list[FakeReply | str] = [*TURN_ONE, "first answer", *TURN_TWO, "second answer"]
    with FakeOpenAIServer(script) as provider:

        def make() -> Agent:
            return Agent(
                "openai:fake",
                base_url=provider.base_url,
                api_key="k",
                agent_thought_mode="chat",
                enable_todo_tool=True,
            )

        store = SQLiteStore(tmp_path / "runs.db")
        with live_server(create_app(make, store=store)) as server:
            with httpx.Client(base_url=server.url, timeout=60) as client:
                first, _ = finished(client, post_turn(client, "question one", "s-1"))
                second, events = finished(client, post_turn(client, "question two", "s-1"))
    assert (first["status"], second["status"]) == ("completed", "completed")
    thinking = [e["data"] for e in events if e["kind"] == "thinking"]
    assert thinking[-1]["thought_history_length"] == 2  # the first turn's thought counts
    todos = [e["data"] for e in events if e["kind"] == "todo"]
    assert todos[-1]["changed"] == ["1"]  # the plan the first turn wrote was there
    # the second turn's first request carries the first turn: its plan and its answer
    opening = provider.requests[len(TURN_ONE) + 1]
    assert said(opening, "user") == ["question one", "question two"]
    assert any("1. Look it up (in progress)" in text for text in said(opening, "tool"))
    assert "first answer" in said(opening, "assistant")
