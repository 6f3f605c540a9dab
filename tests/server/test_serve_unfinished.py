"""Runs a crash left before their first checkpoint: started over if a server accepted them,
a clear 409 (and ``failed``, not ``running``) otherwise. ``ponder serve`` as a subprocess."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from ponder.server.accepted import remember
from ponder.store import open_store
from ponder.testing import FakeOpenAIServer

from .serve_process import AUTH, STEPS, Serve, store_url


def dead_owner() -> str:
    """A lease owner like a ponder process's, of a process on this host that has exited."""
    command = [sys.executable, "-c", "import os; print(os.getpid())"]
    gone = subprocess.run(command, capture_output=True, text=True, check=True)
    return f"{socket.gethostname()}:{gone.stdout.strip()}:0123abcd"


def crashed_before_checkpoint(url: str, prompt: str | None) -> str:
    """A run whose process took the lease and died; ``prompt``: a server accepted it."""
    run_id = uuid.uuid4().hex

    async def write() -> None:
        store = open_store(url)
        try:
            await store.acquire(run_id, dead_owner(), 600.0)
            if prompt is not None:
                await remember(store, run_id, prompt, [])
        finally:
            await store.close()

    asyncio.run(write())
    return run_id


def test_an_accepted_run_killed_before_its_first_checkpoint_starts_over(serve: Serve) -> None:
    label = f"early-{serve.port}"
    run_id = crashed_before_checkpoint(serve.store, label)
    serve.start()
    run = serve.wait_done([run_id])[run_id]
    assert run["status"] == "completed" and run["output"] == f"finished {label}", run
    assert serve.stop() == 0, serve.output()
    assert serve.steps() == [f"{label} {n}" for n in range(1, STEPS + 1)]


def test_resume_starts_over_an_accepted_run_that_has_no_checkpoint(serve: Serve) -> None:
    label = f"manual-early-{serve.port}"
    run_id = crashed_before_checkpoint(serve.store, label)
    serve.start("--no-resume-runs")
    resumed = httpx.post(
        f"{serve.url}/v1/runs/{run_id}/resume", json={"decision": None}, headers=AUTH
    )
    assert resumed.status_code == 200, resumed.text
    run = serve.wait_done([run_id])[run_id]
    assert run["status"] == "completed" and run["output"] == f"finished {label}", run
    assert serve.stop() == 0


def test_a_run_from_elsewhere_without_a_checkpoint_is_left_alone_then_refused(
    serve: Serve,
) -> None:
    run_id = crashed_before_checkpoint(serve.store, None)
    serve.start()
    assert serve.run(run_id)["status"] == "running"  # not this server's: not picked up
    resumed = httpx.post(
        f"{serve.url}/v1/runs/{run_id}/resume", json={"decision": None}, headers=AUTH
    )
    assert resumed.status_code == 409, resumed.text
    assert "first checkpoint" in resumed.json()["error"]["message"]
    assert serve.run(run_id)["status"] == "failed"
    assert serve.stop() == 0
    assert serve.stored_statuses([run_id]) == {run_id: "failed"}


def test_a_damaged_run_is_found_as_failed_and_its_resume_is_a_clear_409(
    provider: FakeOpenAIServer, tmp_path: Path
) -> None:
    serve = Serve(store_url("sqlite", tmp_path), provider.base_url, tmp_path).start()
    try:
        damage_and_resume(serve, tmp_path)
    finally:
        serve.close()


def damage_and_resume(serve: Serve, tmp_path: Path) -> None:
    run_id = serve.post("to be damaged").json()["id"]
    serve.wait_done([run_id])
    assert serve.stop() == 0
    with sqlite3.connect(tmp_path / "runs.sqlite3") as db:  # changed by something else
        db.execute("UPDATE ponder_runs SET header = '{\"format\": 7}', status = 'running'")
    serve.start("--no-resume-runs")
    listed = httpx.get(f"{serve.url}/v1/runs", headers=AUTH).json()["runs"]
    assert run_id in [r["id"] for r in listed]
    shown = serve.run(run_id)
    assert shown["status"] == "failed" and "format" in shown["error"]
    resumed = httpx.post(
        f"{serve.url}/v1/runs/{run_id}/resume", json={"decision": None}, headers=AUTH
    )
    assert resumed.status_code == 409 and resumed.headers["content-type"] == "application/json"
    assert "cannot be resumed" in resumed.json()["error"]["message"]
    assert serve.stop() == 0
