"""The official A2A JS client (``@a2a-js/sdk``) sends, streams, gets and cancels tasks."""

from __future__ import annotations

from pathlib import Path

from ponder.server.app import create_app
from ponder.store.sqlite import SQLiteStore
from tests.server.live import live_server
from tests.server.test_resume import PUBLISHED, approval_agent

from .npm import run_script
from .test_a2a_server import plain_agent

ANSWER = "Paris is the capital of France."


def test_the_js_client_sends_streams_gets_answers_and_cancels(tmp_path: Path) -> None:
    PUBLISHED.clear()
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    with (
        live_server(create_app(plain_agent())) as plain,
        live_server(create_app(approval_agent(), store=store)) as approval,
    ):
        seen = run_script("a2a_client.mjs", plain.url, approval.url)
    assert seen["card"] == "ponder"
    assert seen["sent"] == ["TASK_STATE_COMPLETED", ANSWER]
    assert seen["got"] == [True, "TASK_STATE_COMPLETED", ANSWER]
    assert seen["streamed"][0] == ["statusUpdate", "TASK_STATE_SUBMITTED"]
    assert ["artifactUpdate", None] in seen["streamed"]
    assert seen["streamed"][-1] == ["statusUpdate", "TASK_STATE_COMPLETED"]
    state, said = seen["waiting"]
    assert state == "TASK_STATE_INPUT_REQUIRED" and "approval of publish" in said
    assert seen["done"] == [True, "TASK_STATE_COMPLETED", "Done: published 'report'"]
    assert seen["cancelled"] == ["TASK_STATE_CANCELED", "TASK_STATE_CANCELED"]
    assert seen["unknown"] == "JsonRpcTaskNotFoundError"
    assert PUBLISHED == ["report"]
