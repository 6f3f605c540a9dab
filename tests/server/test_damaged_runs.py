"""A stored run the store cannot read back is listed and shown alike: ``failed``, with why.

Each case damages a finished run's rows the way a hand edit or another program could;
the list must still answer (every other run with it), and opening the run must show the
same record the list shows, never a 404 or a 500.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from ponder.server.app import create_app
from ponder.store import SQLiteStore

from .live import echo_agent, live_server

DAMAGES = {
    "checkpoint-of-wrong-types": (
        "UPDATE ponder_runs SET header = json_set(header, '$.vm.state.usage',"
        ' json(\'{"input_tokens": "many"}\'))'
    ),
    "row-of-wrong-types": "UPDATE ponder_runs SET created = 'yesterday'",
    "message-not-json": "UPDATE ponder_messages SET body = 'not json'",
    "header-of-another-format": "UPDATE ponder_runs SET header = '{\"format\": 7}'",
}


def finished_run(path: Path) -> str:
    with live_server(create_app(echo_agent, store=SQLiteStore(path))) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            run_id: str = client.post("/v1/runs", json={"prompt": "hello"}).json()["id"]
            deadline = time.monotonic() + 30
            while client.get(f"/v1/runs/{run_id}").json()["status"] == "running":
                assert time.monotonic() < deadline
                time.sleep(0.05)
    return run_id


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_damaged_run_is_listed_and_shown_alike_as_failed(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "runs.sqlite3"
    damaged, intact = finished_run(path), finished_run(path)
    with sqlite3.connect(path) as db:
        db.execute(damage + " WHERE run_id = ?", (damaged,))
    with live_server(create_app(echo_agent, store=SQLiteStore(path))) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            listing = client.get("/v1/runs")
            assert listing.status_code == 200, listing.text
            listed = {r["id"]: r for r in listing.json()["runs"]}
            shown = client.get(f"/v1/runs/{damaged}")
            assert shown.status_code == 200, shown.text
            resumed = client.post(f"/v1/runs/{damaged}/resume", json={"decision": None})
    assert listed[intact]["status"] == "completed"
    assert listed[damaged]["status"] == shown.json()["status"] == "failed"
    assert listed[damaged]["error"] == shown.json()["error"]
    assert shown.json()["error"].startswith("StoreError: ")
    assert resumed.status_code == 409, resumed.text
