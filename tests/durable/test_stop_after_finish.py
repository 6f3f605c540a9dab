"""A run stopped after it said it finished stays finished, in the store and on the server.

The chaos lane (tests/chaos) found it: a server stop arriving between a run's
``run_finished`` and the end of its stream marked the run ``interrupted`` in the store, and
the next server's resume, finding the run over, answered ``completed`` but left the store
saying ``interrupted``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx

from ponder.agent import Agent
from ponder.events import Event
from ponder.models import ScriptedModel
from ponder.server.app import create_app
from ponder.server.local_launcher import RunLauncher
from ponder.store import SQLiteStore
from tests.server.live import live_server


def answering(store: SQLiteStore) -> Agent:
    return Agent(ScriptedModel(lambda _: "the answer"), agent_thought_mode="chat", store=store)


async def test_resuming_a_finished_run_a_stop_marked_interrupted_stores_it_completed(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = answering(store)
    await agent.run("question", run_id="ended")
    await store.set_status("ended", "interrupted")  # what the stop wrote after the end
    resumed = await agent.resume("ended")
    assert (resumed.status, resumed.output) == ("completed", "the answer")
    assert (await store.load("ended")).record.status == "completed"
    await store.close()


def test_a_server_stop_right_after_run_finished_keeps_the_run_completed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = answering(store)
    app = create_app(agent, store=store)
    launcher = app.state.launcher
    assert isinstance(launcher, RunLauncher)

    @agent.on_event("run_finished")
    async def stop_now(event: Event) -> Any:
        launcher.interrupt(event.run_id)  # as a server stop does, the moment the run ends

    with live_server(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        run_id = client.post("/v1/runs", json={"prompt": "question"}).json()["id"]
        deadline = time.monotonic() + 30
        while (shown := client.get(f"/v1/runs/{run_id}").json())["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert (shown["status"], shown["output"]) == ("completed", "the answer")
    assert asyncio.run(stored_status(tmp_path / "runs.sqlite3", run_id)) == "completed"


async def stored_status(path: Path, run_id: str) -> str:
    store = SQLiteStore(path)
    try:
        return (await store.load(run_id)).record.status
    finally:
        await store.close()
