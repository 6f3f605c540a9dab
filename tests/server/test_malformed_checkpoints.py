"""``GET /v1/runs/{id}`` of a run whose checkpoint was changed behind ponder's back: the run
is shown as ``failed`` with a `StoreError` naming the bad field; listing and the server go on."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ponder.server.app import create_app
from ponder.store import SQLiteStore
from tests.cli.test_malformed_checkpoints import DAMAGES, damaged

from .live import echo_agent, live_server


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_malformed_checkpoint_is_shown_failed_with_the_store_error(
    tmp_path: Path, damage: str
) -> None:
    url, run_id, fragment = damaged(tmp_path, damage)
    store = SQLiteStore(url.removeprefix("sqlite:///"))
    with live_server(create_app(echo_agent(), store=store)) as server:
        listed = httpx.get(f"{server.url}/v1/runs").json()["runs"]
        assert run_id in [r["id"] for r in listed]
        shown = httpx.get(f"{server.url}/v1/runs/{run_id}")
        assert shown.status_code == 200, shown.text
        run = shown.json()
        assert run["status"] == "failed", run
        assert run["error"].startswith(f"StoreError: run {run_id!r}") and fragment in run["error"]
        assert httpx.get(f"{server.url}/v1/runs/{run_id[:8]}").json()["id"] == run_id
        fresh = httpx.post(f"{server.url}/v1/runs", json={"prompt": "hello"})
        assert fresh.status_code in (200, 201, 202), fresh.text  # the server goes on
