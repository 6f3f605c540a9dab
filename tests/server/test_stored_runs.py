"""After a restart the server shows its runs as they ended, and client tool loops go on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import openai

from ponder.server.app import create_app
from ponder.store import SQLiteStore

from .live import echo_agent, live_server, sse_events
from .openai_agents import weather_agent
from .test_openai_tools import QUESTION, WEATHER_TOOL


def events_of(url: str, **headers: str) -> list[dict[str, str]]:
    with httpx.stream("GET", url, headers=headers, timeout=30) as response:
        return list(sse_events(response.iter_lines()))


def kinds(events: list[dict[str, str]]) -> list[str]:
    """Event kinds with each run of deltas as one (the store merges them)."""
    found: list[str] = []
    for event in events:
        kind = event["event"]
        if kind == "checkpoint_written" or (found and kind == found[-1] and "delta" in kind):
            continue
        found.append(kind)
    return found


def test_a_run_from_before_a_restart_is_shown_and_replayed(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with live_server(create_app(echo_agent(), store=SQLiteStore(path))) as first:
        run_id = httpx.post(f"{first.url}/v1/runs", json={"prompt": "hello"}).json()["id"]
        live = events_of(f"{first.url}/v1/runs/{run_id}/events")
        before = httpx.get(f"{first.url}/v1/runs/{run_id}").json()
    with live_server(create_app(echo_agent(), store=SQLiteStore(path))) as second:
        after = httpx.get(f"{second.url}/v1/runs/{run_id}").json()
        for key in ("status", "output", "usage", "stop_reason"):
            assert after[key] == before[key], key
        assert after["output"] and after["usage"]["requests"] >= 1
        replayed = events_of(f"{second.url}/v1/runs/{run_id}/events")
        assert kinds(replayed) == kinds(live)
        assert replayed[-1]["data"] == live[-1]["data"]  # run_finished, as it was sent
        gone = httpx.get(
            f"{second.url}/v1/runs/{run_id}/events", headers={"Last-Event-ID": replayed[-1]["id"]}
        )
        assert gone.status_code == 204
        assert httpx.get(f"{second.url}/v1/runs/{run_id[:8]}").json()["id"] == run_id


def test_run_ids_are_found_by_a_unique_prefix(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = echo_agent()
    for run_id in ("abcd1", "abcd2"):
        asyncio.run(agent.run("task", run_id=run_id, store=store))
    with live_server(create_app(echo_agent(), store=store)) as server:
        assert httpx.get(f"{server.url}/v1/runs/abcd2").json()["status"] == "completed"
        ambiguous = httpx.get(f"{server.url}/v1/runs/abcd/events")
        assert ambiguous.status_code == 400
        assert "ambiguous" in ambiguous.json()["error"]["message"]
        assert httpx.get(f"{server.url}/v1/runs/zzzz").status_code == 404


def test_client_tool_results_resume_a_run_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    with live_server(create_app(weather_agent(), store=SQLiteStore(path))) as first:
        client = openai.OpenAI(base_url=f"{first.url}/v1", api_key="k", max_retries=0)
        asked = client.chat.completions.create(model="m", messages=[QUESTION], tools=[WEATHER_TOOL])
    message = asked.choices[0].message
    calls = message.tool_calls or []
    history: list[Any] = [
        QUESTION,
        message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": "fog"},
    ]
    with live_server(create_app(weather_agent(), store=SQLiteStore(path))) as second:
        client = openai.OpenAI(base_url=f"{second.url}/v1", api_key="k", max_retries=0)
        answer = client.chat.completions.create(model="m", messages=history, tools=[WEATHER_TOOL])
        assert answer.choices[0].message.content == "In Paris: fog."
        assert answer.id == asked.id
        replayed = events_of(f"{second.url}/v1/runs/{asked.id.removeprefix('chatcmpl-')}/events")
        finished = json.loads(replayed[-1]["data"])
        assert finished["kind"] == "run_finished" and finished["output"] == "In Paris: fog."
