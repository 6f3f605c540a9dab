"""The viewer in headless Chromium: runs live, the runs list, round details, the plan DAG.

Every test ends in `WatchedPage.check`: a screenshot in the artifacts directory, no console
errors, no failed requests, nothing wider than the screen (also at 390 px).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from ponder.store import SQLiteStore
from ponder.tools import tool
from tests.agent.scripts import stop
from tests.agent.steps import plan, step_agent, summary
from tests.server.live import (
    ANSWER,
    add,
    gated_adder,
    live_server,
    think,
    thinking_agent_factory,
)
from tests.server.test_resume import PUBLISHED, approval_agent

from .conftest import PHONE

TOKEN = "tok-123"


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def expect(sync_api: Any) -> Any:
    return sync_api.expect


def check_thinking_structure(page: Any, expect: Any) -> None:
    """Thought 3 sits in branch "tool-path" under thought 1; thought 4 revises 2."""
    branch = page.locator('[data-testid=branch][data-branch-id="tool-path"]')
    expect(branch).to_have_count(1)
    expect(branch.get_by_test_id("thought")).to_have_count(1)
    expect(branch.get_by_test_id("thought")).to_have_attribute("data-number", "3")
    first = page.locator('[data-testid=thought][data-number="1"]')
    expect(first.locator("[data-testid=branch]")).to_have_count(1)
    second = page.locator('[data-testid=thought][data-number="2"]')
    expect(second).to_have_attribute("data-superseded", "true")
    revision = page.locator('[data-testid=thought][data-number="4"]')
    expect(revision).to_contain_text("revises 2")
    expect(revision).to_have_attribute("data-superseded", "false")
    expect(page.get_by_test_id("round")).to_have_count(3)
    expect(page.get_by_test_id("summary").first).to_have_text("Plan: think it through, then add.")
    expect(page.locator("[data-testid=tool-call][data-name=add]")).to_have_attribute(
        "data-status", "ok"
    )


def test_a_run_with_a_branch_and_a_revision_appears_live(
    open_page: Any, expect: Any, gate: threading.Event
) -> None:
    with live_server(create_app(thinking_agent_factory(gate))) as server:
        watched = open_page()
        page = watched.page
        page.goto(server.url + "/")
        page.fill("#prompt", "Add 1+2 and 3+4.")
        page.click("#new-run button[type=submit]")

        # live: the run stops at the gated tool call, and the page already shows the thinking
        status = page.get_by_test_id("run-status")
        expect(page.get_by_test_id("thought")).to_have_count(4)
        gated = page.locator("[data-testid=tool-call][data-name=gated_add]")
        expect(gated).to_have_attribute("data-status", "running")
        expect(status).to_have_text("running")
        expect(page.get_by_test_id("thought-progress")).to_have_text("4/4")
        check_thinking_structure(page, expect)
        gate.set()

        expect(status).to_have_text("completed")
        expect(page.get_by_test_id("answer")).to_have_text(ANSWER)
        expect(page.get_by_test_id("usage")).to_contain_text("completed (answered) · tokens: in ")
        expect(gated).to_have_attribute("data-status", "ok")
        expect(gated.get_by_test_id("call-args")).to_have_text('{"a":3,"b":4}')
        expect(gated.get_by_test_id("call-result")).to_have_text("7")
        expect(gated.get_by_test_id("call-time")).to_contain_text("s")
        expect(page.get_by_test_id("round")).to_have_count(5)
        # each round lists its model requests: what for, how long, how many tokens
        first_round = page.locator("[data-testid=round][data-round='1']")
        expect(first_round.locator("[data-testid=model-request]")).to_have_count(2)
        reasoning = first_round.locator("[data-testid=model-request][data-purpose=reasoning]")
        expect(reasoning).to_contain_text(" in · ")
        expect(reasoning).to_contain_text("ms")
        item = page.locator("[data-testid=run-item][data-status=completed]")
        expect(item).to_have_count(1)
        expect(item.get_by_test_id("run-reason")).to_have_text("answered")
        expect(item.get_by_test_id("run-tokens")).to_contain_text("tok")
        expect(page.get_by_test_id("run")).not_to_contain_text("null")
        expect(page.get_by_test_id("run")).not_to_contain_text("undefined")
        watched.check("viewer-run")


@tool
def broken(path: str) -> str:
    """Read a file that is never there.

    Args:
        path: The file.
    """
    raise FileNotFoundError(f"no such file: {path}")


def failing_agent() -> Agent:
    """One round whose tool call fails, then the model has nothing left to say: the run fails."""
    script = [think("Read the file."), call_tools(("broken", {"path": "notes.txt"}))]
    return Agent(ScriptedModel(script), tools=[broken], enable_thinking_tool=False)


def test_the_runs_list_filters_and_a_failed_run_keeps_its_usage(
    open_page: Any, expect: Any, gate: threading.Event
) -> None:
    agents = iter([failing_agent(), thinking_agent_factory(gate)(), approval_agent()])
    with live_server(create_app(lambda: next(agents))) as server:
        for prompt in ("Read notes.txt.", "Add 1+2 and 3+4.", "Publish the report."):
            httpx.post(server.url + "/v1/runs", json={"prompt": prompt})
        watched = open_page(PHONE)
        page = watched.page
        page.goto(server.url + "/")
        items = page.get_by_test_id("run-item")
        expect(items).to_have_count(3)
        expect(page.locator("[data-testid=run-item][data-status=suspended]")).to_have_count(1)
        failed = page.locator("[data-testid=run-item][data-status=failed]")
        expect(failed.get_by_test_id("run-reason")).to_have_text("ModelResponseError")
        expect(failed.get_by_test_id("run-age")).to_contain_text("s ago")

        page.select_option("#status-filter", "failed")
        expect(items).to_have_count(1)
        failed.get_by_test_id("run-age").click()  # anywhere on the row opens the run
        expect(page.get_by_test_id("run-status")).to_have_text("failed")
        call = page.locator("[data-testid=tool-call][data-name=broken]")
        expect(call).to_have_attribute("data-status", "error")
        expect(call.get_by_test_id("call-error")).to_contain_text("no such file: notes.txt")
        expect(page.get_by_test_id("run-error")).to_contain_text("ModelResponseError")
        usage = page.get_by_test_id("usage")
        expect(usage).to_contain_text("failed (ModelResponseError) · tokens: in ")
        expect(usage).to_contain_text("2 request(s)")
        watched.check("viewer-failed-390", visible=("#status-filter", "[data-testid=usage]"))

        page.select_option("#status-filter", "")
        expect(items).to_have_count(3)
        page.select_option("#status-filter", "cancelled")
        expect(items).to_have_count(0)
        expect(page.get_by_test_id("runs")).to_contain_text("no cancelled runs")
        gate.set()


def step_dag_agent(gate: threading.Event) -> Agent:
    model = ScriptedModel(
        [
            plan(
                ("report", "Write the report", ["fetch", "parse"]),
                ("parse", "Parse the data", ["fetch"]),
                ("fetch", "Fetch the data", []),
            ),
            stop("fetched"),
            summary("Fetched the data."),
            call_tools(("gated_add", {"a": 1, "b": 2})),
            stop("parsed"),
            summary("Parsed it."),
            stop("written"),
            summary("Wrote the report."),
            reply("The report is written."),
        ]
    )
    agent = step_agent(model)
    return Agent(
        model, tools=[add, gated_adder(gate)], config=agent.config, enable_thinking_tool=False
    )


def test_the_step_plan_is_a_dag_with_each_steps_status(
    open_page: Any, expect: Any, gate: threading.Event
) -> None:
    with live_server(create_app(step_dag_agent(gate))) as server:
        watched = open_page(PHONE)
        page = watched.page
        page.goto(server.url + "/")
        page.fill("#prompt", "Make a report of the data.")
        page.click("#new-run button[type=submit]")

        node = page.locator("[data-testid=plan-node]")
        expect(node).to_have_count(3)
        expect(page.locator("[data-testid=plan-node][data-step-id=parse]")).to_have_attribute(
            "data-status", "running"
        )
        expect(page.locator("[data-step-id=fetch]")).to_have_attribute("data-status", "stopped")
        expect(page.locator("[data-step-id=report]")).to_have_attribute("data-status", "pending")
        edges = page.get_by_test_id("plan-edge")
        expect(edges).to_have_count(3)
        pairs = {(e.get_attribute("data-from"), e.get_attribute("data-to")) for e in edges.all()}
        assert pairs == {("fetch", "parse"), ("fetch", "report"), ("parse", "report")}
        watched.check("viewer-plan-390", visible=("[data-testid=plan-graph]",))

        gate.set()
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        for step in ("fetch", "parse", "report"):
            expect(page.locator(f"[data-step-id={step}]")).to_have_attribute(
                "data-status", "stopped"
            )
        expect(page.get_by_test_id("plan-graph")).to_contain_text("Plan · 3/3 done")
        expect(page.get_by_test_id("answer")).to_have_text("The report is written.")
        watched.check("viewer-plan-done-390")


def test_the_token_comes_from_the_sign_in_form_and_never_goes_into_an_address(
    open_page: Any, expect: Any, gate: threading.Event
) -> None:
    gate.set()
    with live_server(create_app(thinking_agent_factory(gate), token=TOKEN)) as server:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        run = httpx.post(server.url + "/v1/runs", json={"prompt": "Add."}, headers=auth).json()
        watched = open_page(PHONE, allowed=(401,))
        page = watched.page
        page.goto(f"{server.url}/#run={run['id']}")
        expect(page.locator("#connection")).to_contain_text("token needed")
        expect(page.get_by_test_id("run-item")).to_have_count(0)
        page.fill("#token-input", TOKEN)
        page.click("#sign-in button[type=submit]")
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        expect(page.get_by_test_id("thought")).to_have_count(4)
        expect(page.get_by_test_id("run-item")).to_have_count(1)
        expect(page.get_by_test_id("sign-in")).to_be_hidden()
        watched.problems = [p for p in watched.problems if "401" not in p]
        watched.check("viewer-signed-in-390", visible=("[data-testid=run-status]",))

        # a link with the token in its fragment: read once, then gone from the address
        linked = open_page()
        linked.page.goto(f"{server.url}/#token={TOKEN}&run={run['id']}")
        expect(linked.page.get_by_test_id("run-status")).to_have_text("completed")
        assert TOKEN not in linked.page.url and linked.page.url.endswith(f"#run={run['id']}")
        assert not any(TOKEN in url for url in watched.urls + linked.urls)
        linked.check("viewer-token-link")
        in_query = httpx.get(f"{server.url}/v1/runs", params={"access_token": TOKEN})
        assert in_query.status_code == 401  # a token in a URL is never accepted


def test_bad_prompt_shows_the_servers_error(
    open_page: Any, expect: Any, gate: threading.Event
) -> None:
    with live_server(create_app(thinking_agent_factory(gate), max_body_bytes=2000)) as server:
        watched = open_page(allowed=(413,))
        page = watched.page
        page.goto(server.url + "/")
        page.fill("#prompt", "x" * 5000)
        page.click("#new-run button[type=submit]")
        expect(page.locator("#form-error")).to_contain_text("larger than 2000 bytes")
        assert httpx.get(server.url + "/v1/runs").json()["runs"] == []
        assert httpx.get(server.url + "/favicon.ico").status_code == 200
        watched.check("viewer-bad-prompt")


def test_a_suspended_run_is_approved_from_the_page(
    open_page: Any, expect: Any, tmp_path: Path
) -> None:
    PUBLISHED.clear()
    app = create_app(approval_agent(), store=SQLiteStore(tmp_path / "runs.sqlite3"))
    with live_server(app) as server:
        watched = open_page()
        page = watched.page
        page.goto(server.url + "/")
        page.fill("#prompt", "Publish the report.")
        page.click("#new-run button[type=submit]")

        status = page.get_by_test_id("run-status")
        expect(status).to_have_text("suspended")
        pending = page.get_by_test_id("pending-call")
        expect(pending).to_have_count(1)
        expect(pending).to_have_attribute("data-name", "publish")
        expect(pending).to_contain_text('"text":"report"')
        assert PUBLISHED == []
        watched.check("viewer-approval")

        page.get_by_test_id("approve").click()
        expect(status).to_have_text("completed")
        expect(page.get_by_test_id("approval")).to_have_count(0)
        expect(page.get_by_test_id("answer")).to_have_text("Done: published 'report'")
        expect(page.locator("[data-testid=tool-call][data-name=publish]")).to_have_attribute(
            "data-status", "ok"
        )
        expect(page.locator("[data-testid=run-item][data-status=completed]")).to_have_count(1)
        assert PUBLISHED == ["report"]
        watched.check("viewer-approved")


def test_a_refused_resume_shows_the_servers_error(open_page: Any, expect: Any) -> None:
    with live_server(create_app(approval_agent())) as server:
        watched = open_page(allowed=(400,))
        page = watched.page
        page.goto(server.url + "/")
        page.fill("#prompt", "Publish the report.")
        page.click("#new-run button[type=submit]")
        page.get_by_test_id("approve").click()
        expect(page.get_by_test_id("approval-error")).to_contain_text("has no store")
        expect(page.get_by_test_id("run-status")).to_have_text("suspended")
        watched.check("viewer-refused-resume")


def test_a_stored_run_from_another_process_is_shown_as_it_ended(
    open_page: Any, expect: Any, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    agent = Agent(ScriptedModel([reply("Stored answer.")]), agent_strategy="no-action")
    with ThreadPoolExecutor(1) as pool:  # playwright's loop runs on this thread
        done = pool.submit(agent.run_sync, "An earlier question.", store=store).result()
    with live_server(create_app(agent, store=SQLiteStore(tmp_path / "runs.sqlite3"))) as server:
        watched = open_page(PHONE)
        page = watched.page
        page.goto(server.url + "/")
        item = page.locator(f"[data-testid=run-item][data-run-id='{done.run_id}']")
        expect(item).to_have_attribute("data-status", "completed")
        item.click()
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        expect(page.locator(".prompt")).to_have_text("An earlier question.")
        expect(page.locator("#connection")).to_have_text("ended")  # no reconnecting forever
        watched.check("viewer-stored-run-390", visible=("[data-testid=run-status]",))
