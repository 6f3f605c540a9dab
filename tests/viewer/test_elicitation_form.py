"""The viewer answers an MCP server's question with a form built from its schema (Chromium).

A stored run suspends on the fixture server's ``ask_contact`` question; the page shows the
form, refuses an answer that does not match the schema, and resumes the run with a good one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from ponder.server.app import create_app
from ponder.store import SQLiteStore
from tests.mcp.test_rest_elicitation import contact_agent, wait_status
from tests.server.live import live_server

from .conftest import PHONE


def test_a_question_is_answered_from_a_form(open_page: Any, sync_api: Any, tmp_path: Path) -> None:
    expect = sync_api.expect
    store = SQLiteStore(tmp_path / "runs.db")
    with live_server(create_app(contact_agent(), store=store)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            run_id = client.post("/v1/runs", json={"prompt": "add a contact"}).json()["id"]
            wait_status(client, run_id, "suspended")
            watched = open_page(PHONE, allowed=(400,))  # the refused answer
            page = watched.page
            page.goto(f"{server.url}/#run={run_id}")
            panel = page.get_by_test_id("elicitation")
            expect(panel.get_by_test_id("elicitation-message")).to_have_text("Who should I add?")
            expect(panel.locator("input[name=age][type=number]")).to_have_count(1)
            page.fill("#elicit-name", "Ada")
            page.fill("#elicit-age", "500")
            page.click("[data-testid=elicitation-form] [data-action=accept]")
            expect(panel.get_by_test_id("elicitation-error")).to_contain_text("age")
            assert client.get(f"/v1/runs/{run_id}").json()["status"] == "suspended"
            watched.check("viewer-elicitation", visible=("[data-testid=elicitation]",))
            page.fill("#elicit-age", "36")
            page.click("[data-testid=elicitation-form] [data-action=accept]")
            finished = wait_status(client, run_id, "completed")
            expect(panel).to_be_hidden()
    assert finished["output"] == "added Ada (36)"
    assert watched.problems == []
