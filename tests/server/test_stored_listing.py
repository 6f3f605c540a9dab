"""Runs stored by another process are listed with their outcome, before anyone opens them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from ponder.agent import Agent
from ponder.exceptions import ModelResponseError
from ponder.models import ScriptedModel
from ponder.server.app import create_app
from ponder.store import open_store

from .live import live_server


async def store_two_runs(url: str) -> tuple[str, str]:
    store = open_store(url)
    try:
        done = await Agent("scripted", store=store).run("Paris is sunny.")
        failing = Agent(ScriptedModel([]), agent_thought_mode="chat", store=store)
        with pytest.raises(ModelResponseError):
            await failing.run("This one fails.", run_id="f" * 32)
    finally:
        await store.close()
    return done.run_id, "f" * 32


def test_the_list_shows_stored_runs_outcomes_after_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    answered, failed = asyncio.run(store_two_runs(url))
    agent = Agent(ScriptedModel([]), agent_thought_mode="chat")
    with live_server(create_app(agent, store=open_store(url))) as server:
        listed = httpx.get(f"{server.url}/v1/runs", timeout=60).json()["runs"]
        again = httpx.get(f"{server.url}/v1/runs", timeout=60).json()["runs"]
    runs = {run["run_id"]: run for run in listed}
    assert runs[answered]["status"] == "completed"
    assert runs[answered]["stop_reason"] == "answered"
    assert runs[answered]["output"] == "Paris is sunny."
    assert runs[answered]["usage"]["requests"] == 3
    assert runs[failed]["status"] == "failed"
    assert "ModelResponseError" in (runs[failed]["error"] or "")
    assert again == listed
