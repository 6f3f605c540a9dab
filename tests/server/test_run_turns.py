"""The runs API's ``session_id`` and ``limits``: a served run can be a session's next turn
and can be bounded, through a real uvicorn server (`create_app`) and its SSE events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from ponder.agent import Agent
from ponder.messages import UserMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from ponder.tools import tool
from tests.server.live import live_server, run_events


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def agent(model: ScriptedModel, **config: Any) -> Agent:
    return Agent(
        model, tools=[add], enable_thinking_tool=False, agent_thought_mode="chat", **config
    )


def run(client: httpx.Client, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    started = client.post("/v1/runs", json=body)
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    events = run_events(client, run_id)
    return client.get(f"/v1/runs/{run_id}").json(), events


def test_a_session_id_makes_a_served_run_the_sessions_next_turn(tmp_path: Path) -> None:
    model = ScriptedModel([reply("Noted: the code is 41."), reply("The code is 41.")])
    store = SQLiteStore(tmp_path / "runs.db")
    chat = agent(model, tool_calling_mode="none")  # one request per turn
    with live_server(create_app(chat, store=store)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            first, _ = run(client, {"prompt": "Remember the code 41.", "session_id": "s-1"})
            second, _ = run(client, {"prompt": "What is the code?", "session_id": "s-1"})
            other, _ = run(client, {"prompt": "What is the code?", "session_id": "s-2"})
    assert (first["status"], second["status"]) == ("completed", "completed")
    assert other["status"] == "failed"  # the script is used up: only two answers were given
    seen = [m.content for m in model.requests[1].messages if isinstance(m, UserMessage)]
    assert seen == ["Remember the code 41.", "What is the code?"]  # the first turn came along
    fresh = [m.content for m in model.requests[2].messages if isinstance(m, UserMessage)]
    assert fresh == ["What is the code?"]  # another session starts empty


def test_limits_bound_a_served_run() -> None:
    model = ScriptedModel(
        [call_tools(("add", {"a": 1, "b": 2})), call_tools(("add", {"a": 3, "b": 4})), reply("3")]
    )
    with live_server(create_app(agent(model))) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            done, events = run(client, {"prompt": "Add.", "limits": {"tool_calls": 1}})
    finished = [e for e in events if e["kind"] == "run_finished"]
    assert done["status"] == "completed" and finished[0]["stop_reason"] == "call_limit"
    assert [e["kind"] for e in events].count("tool_call_finished") == 1


def test_bad_turn_fields_are_refused_and_nothing_starts() -> None:
    model = ScriptedModel([reply("never")])
    with live_server(create_app(agent(model))) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            no_store = client.post("/v1/runs", json={"prompt": "x", "session_id": "s-1"})
            bad_id = client.post("/v1/runs", json={"prompt": "x", "session_id": "a b/../c"})
            bad_limit = client.post("/v1/runs", json={"prompt": "x", "limits": {"requests": 0}})
            unknown = client.post("/v1/runs", json={"prompt": "x", "limits": {"turns": 3}})
            listed = client.get("/v1/runs").json()
    assert no_store.status_code == 400 and "needs a store" in no_store.json()["error"]["message"]
    assert bad_id.status_code == 422 and "session_id" in bad_id.text
    assert bad_limit.status_code == 400 and "requests" in bad_limit.json()["error"]["message"]
    assert unknown.status_code == 400 and "turns" in unknown.json()["error"]["message"]
    assert listed["runs"] == [] and model.requests == []
