"""``GET/PATCH /v1/config`` over HTTP: grouped keys, validation, new runs only, saving."""

from __future__ import annotations

import stat
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from ponder.agent import Agent
from ponder.config import load_config
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store import SQLiteStore

from .live import add, gated_adder, live_server, think
from .test_resume import PUBLISHED, approval_agent

TOKEN = "cfg-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
CONFIG = """\
# served by ponder
[core.function_config]
agent_tool_call_limit = 5  # rounds

[llm]
agent_workflow = "react"
"""


def looping_agent(gate: threading.Event, path: Path) -> Agent:
    """Every round calls a tool; the first call waits for the gate. Ends at the round limit."""

    def respond(request: Any) -> Any:
        if request.tool_choice not in ("auto", "required", "none"):
            return think("again")  # the forced reasoning request
        if request.tool_choice == "required":
            first = not any("gated_add" in str(m) for m in request.messages)
            return call_tools(("gated_add" if first else "add", {"a": 1, "b": 2}))
        return reply("done")

    return Agent(
        ScriptedModel(respond), tools=[add, gated_adder(gate)], config=load_config(path, environ={})
    )


def events_of(url: str, run_id: str, auth: dict[str, str] = AUTH) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run = httpx.get(f"{url}/v1/runs/{run_id}", headers=auth).json()
        if run["status"] not in ("running", "suspended"):
            break
        time.sleep(0.05)
    text = httpx.get(f"{url}/v1/runs/{run_id}/events", headers=auth).text
    return [{"kind": line[7:]} for line in text.splitlines() if line.startswith("event: ")]


def rounds(events: list[dict[str, Any]]) -> int:
    return sum(e["kind"] == "round_started" for e in events)


def test_config_is_read_grouped_and_needs_the_token(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    gate = threading.Event()
    gate.set()
    app = create_app(looping_agent(gate, path), token=TOKEN, config_path=path)
    with live_server(app) as server:
        assert httpx.get(server.url + "/v1/config").status_code == 401
        body = httpx.get(server.url + "/v1/config", headers=AUTH).json()
        assert body["path"] == str(path)
        names = [s["name"] for s in body["sections"]]
        assert names[:5] == [
            "core.function_config",
            "core.builtin",
            "core.builtin.react_config",
            "llm",
            "llm.tools",
        ]
        limit = next(k for k in body["sections"][0]["keys"] if k["key"] == "agent_tool_call_limit")
        assert (limit["value"], limit["default"], limit["bounds"]) == (5, 10, {"ge": 1.0})
        assert limit["description"].startswith("Tool rounds a turn may take")


def test_invalid_edits_are_refused_with_the_loaders_message(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    gate = threading.Event()
    app = create_app(looping_agent(gate, path), token=TOKEN, config_path=path)
    with live_server(app) as server:
        url = server.url + "/v1/config"
        for values, param, words in (
            ({"agent_workflow": "sideways"}, "agent_workflow", "allowed: react, step-react"),
            ({"agent_tool_call_limit": 0}, "agent_tool_call_limit", "greater than or equal to 1"),
            ({"agent_tool_call_limt": 2}, "agent_tool_call_limt", "did you mean"),
            ({"reasoning_depth": "deep"}, "reasoning_depth", "valid integer"),
        ):
            answer = httpx.patch(url, headers=AUTH, json={"values": values, "save": True})
            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["param"] == param and words in error["message"], error
        bodies: list[dict[str, Any]] = [
            {"values": []},
            {"value": {}},
            {"values": {}, "save": "yes"},
        ]
        for malformed in bodies:
            assert httpx.patch(url, headers=AUTH, json=malformed).status_code == 422
        assert httpx.patch(url, headers=AUTH, content=b"{").status_code == 403  # not JSON
        as_json = {**AUTH, "content-type": "application/json"}
        assert httpx.patch(url, headers=as_json, content=b"{").status_code == 422
        assert path.read_text() == CONFIG
        assert httpx.get(url, headers=AUTH).json() == httpx.get(url, headers=AUTH).json()
        limit = httpx.get(url, headers=AUTH).json()["sections"][0]["keys"][0]
        assert limit["value"] == 5


def test_an_edit_reaches_new_runs_only_and_is_saved(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    gate = threading.Event()
    app = create_app(looping_agent(gate, path), token=TOKEN, config_path=path)
    with live_server(app) as server:
        in_flight = httpx.post(server.url + "/v1/runs", headers=AUTH, json={"prompt": "go"}).json()
        changed = httpx.patch(
            server.url + "/v1/config",
            headers=AUTH,
            json={"values": {"agent_tool_call_limit": 2}, "save": True},
        )
        assert changed.status_code == 200, changed.text
        gate.set()
        assert rounds(events_of(server.url, in_flight["id"])) == 5  # the old limit
        new = httpx.post(server.url + "/v1/runs", headers=AUTH, json={"prompt": "go"}).json()
        assert rounds(events_of(server.url, new["id"])) == 2
    assert path.read_text() == CONFIG.replace("= 5  # rounds", "= 2  # rounds")


def test_a_read_only_file_refuses_the_save_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    path.chmod(stat.S_IRUSR)
    gate = threading.Event()
    gate.set()
    app = create_app(looping_agent(gate, path), token=TOKEN, config_path=path)
    with live_server(app) as server:
        url = server.url + "/v1/config"
        answer = httpx.patch(
            url, headers=AUTH, json={"values": {"agent_tool_call_limit": 2}, "save": True}
        )
        assert answer.status_code == 409
        assert answer.json()["error"]["message"].endswith("read-only; nothing was written")
        assert httpx.get(url, headers=AUTH).json()["sections"][0]["keys"][0]["value"] == 5
        applied = httpx.patch(url, headers=AUTH, json={"values": {"agent_tool_call_limit": 2}})
        assert applied.status_code == 200
        assert applied.json()["sections"][0]["keys"][0]["value"] == 2
    assert path.read_text() == CONFIG


def test_without_a_config_file_edits_apply_but_cannot_be_saved() -> None:
    gate = threading.Event()
    with live_server(create_app(Agent(ScriptedModel([reply("hi")])))) as server:
        url = server.url + "/v1/config"
        assert httpx.get(url).json()["path"] is None
        refused = httpx.patch(url, json={"values": {"max_retries": 1}, "save": True})
        assert refused.status_code == 409 and "without --config" in refused.text
        assert httpx.patch(url, json={"values": {"max_retries": 1}}).status_code == 200
        secret = httpx.patch(url, json={"values": {"api_key": "sk-hidden"}})
        assert "sk-hidden" not in secret.text
    gate.set()


def test_a_suspended_run_resumes_with_the_config_it_started_with(tmp_path: Path) -> None:
    PUBLISHED.clear()
    app = create_app(approval_agent(), store=SQLiteStore(tmp_path / "runs.sqlite3"))
    with live_server(app) as server:
        waiting = httpx.post(server.url + "/v1/runs", json={"prompt": "Publish."}).json()
        while waiting["status"] != "suspended":
            waiting = httpx.get(f"{server.url}/v1/runs/{waiting['id']}").json()
        limit = {"values": {"agent_tool_call_limit": 1}}
        assert httpx.patch(server.url + "/v1/config", json=limit).status_code == 200
        resumed = httpx.post(
            f"{server.url}/v1/runs/{waiting['id']}/resume", json={"decision": "approve"}
        )
        assert resumed.status_code == 200, resumed.text
        kinds = [e["kind"] for e in events_of(server.url, waiting["id"], auth={})]
        assert "run_finished" in kinds and "limit_reached" not in kinds  # the old limit
        assert PUBLISHED == ["report"]
        PUBLISHED.clear()
        new = httpx.post(server.url + "/v1/runs", json={"prompt": "Publish."}).json()
        while new["status"] != "suspended":
            new = httpx.get(f"{server.url}/v1/runs/{new['id']}").json()
        httpx.post(f"{server.url}/v1/runs/{new['id']}/resume", json={"decision": "approve"})
        kinds = [e["kind"] for e in events_of(server.url, new["id"], auth={})]
        assert "limit_reached" in kinds  # the new limit
