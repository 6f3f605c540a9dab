"""MCP elicitation answered over the runs API of ``ponder serve`` (real HTTP, real MCP server)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

from ponder.agent import Agent
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from tests.mcp.conftest import stdio_entry
from tests.mcp.test_client_features import results_of
from tests.server.live import live_server


def script(request: ModelRequest) -> ModelResponse:
    done = len(results_of(request))
    if done < 2:
        return call_tools(("ask_contact", {}))
    if done == 2:
        return call_tools(("agent_stop", {}))
    return reply(" | ".join(m.content for m in results_of(request)[:2]))


def waiting(client: httpx.Client, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = client.get(f"/v1/runs/{run_id}/elicitations").json()["data"]
        if found:
            return dict(found[0])
        time.sleep(0.1)
    raise AssertionError("no elicitation request arrived")


def test_a_servers_question_is_answered_over_the_api() -> None:
    agent = Agent(
        ScriptedModel(script),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[stdio_entry("--name", "fix")],
    )
    with live_server(create_app(agent)) as server, httpx.Client(base_url=server.url) as client:
        run_id = client.post("/v1/runs", json={"prompt": "add contacts"}).json()["id"]
        first = waiting(client, run_id)
        assert first["message"] == "Who should I add?" and first["mode"] == "form"
        assert set(first["schema"]["properties"]) == {"name", "age"}
        path = f"/v1/runs/{run_id}/elicitations"
        assert client.post(f"{path}/nosuch", json={"action": "accept"}).status_code == 404
        assert client.post(f"{path}/{first['id']}", json={"action": "maybe"}).status_code == 422
        bad = {"action": "accept", "content": {"name": "Ada", "age": 500}}
        assert client.post(f"{path}/{first['id']}", json=bad).status_code == 200
        second = waiting(client, run_id)
        assert second["id"] != first["id"]
        good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
        assert client.post(f"{path}/{second['id']}", json=good).status_code == 200
        with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
            events = [
                json.loads(line[len("data: ") :])
                for line in response.iter_lines()
                if line.startswith("data: ")
            ]
    finished = events[-1]
    assert finished["kind"] == "run_finished"
    invalid, added = finished["output"].split(" | ")
    assert "does not match the requested schema" in invalid and added == "added Ada (36)"
    requested = [
        e["data"]["id"]
        for e in events
        if e.get("type") == "elicitation" and e["data"]["status"] == "requested"
    ]
    assert requested == [first["id"], second["id"]]


def wait_status(client: httpx.Client, run_id: str, status: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = client.get(f"/v1/runs/{run_id}").json()
        if found["status"] == status:
            return dict(found)
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} never became {status}")


def contact_agent() -> Agent:
    def one_question(request: ModelRequest) -> ModelResponse:
        done = len(results_of(request))
        if done == 0:
            return call_tools(("ask_contact", {}))
        if done == 1:
            return call_tools(("agent_stop", {}))
        return reply(results_of(request)[0].content)

    return Agent(
        ScriptedModel(one_question),
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_mcp_client_enable=True,
        agent_mcp_server_scripts=[stdio_entry("--name", "fix")],
    )


def test_with_a_store_the_question_survives_a_server_restart(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    with live_server(create_app(contact_agent(), store=store)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            run_id = client.post("/v1/runs", json={"prompt": "add a contact"}).json()["id"]
            suspended = wait_status(client, run_id, "suspended")
    assert suspended["suspension"]["reason"] == "elicitation"
    with live_server(create_app(contact_agent(), store=store)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:  # the answer resumes
            [question] = client.get(f"/v1/runs/{run_id}/elicitations").json()["data"]
            assert question["message"] == "Who should I add?"
            path = f"/v1/runs/{run_id}/elicitations/{question['id']}"
            bad = client.post(path, json={"action": "accept", "content": {"name": "Ada"}})
            assert bad.status_code == 400 and "'age' is a required property" in bad.text
            assert client.get(f"/v1/runs/{run_id}").json()["status"] == "suspended"
            good = {"action": "accept", "content": {"name": "Ada", "age": 36}}
            answered = client.post(path, json=good)
            assert answered.status_code == 200 and answered.json()["resumed"] is True
            finished = wait_status(client, run_id, "completed")
            assert client.get(f"/v1/runs/{run_id}/elicitations").json()["data"] == []
    assert finished["output"] == "added Ada (36)"
