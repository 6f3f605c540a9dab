"""The viewer in headless Chromium: a scripted run with a branch and a revision, shown live."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ponder.server.app import create_app
from ponder.store import SQLiteStore
from tests.server.live import ANSWER, live_server, thinking_agent_factory
from tests.server.test_resume import PUBLISHED, approval_agent

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"
    ),
]

sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def check_thinking_structure(page: Any) -> None:
    """Thought 3 sits in branch "tool-path" under thought 1; thought 4 revises 2."""
    expect = sync_api.expect
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
    browser: object, gate: threading.Event
) -> None:
    expect = sync_api.expect
    with live_server(create_app(thinking_agent_factory(gate))) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server.url + "/")
        page.fill("#prompt", "Add 1+2 and 3+4.")
        page.click("#new-run button[type=submit]")

        # live: the run stops at the gated tool call, and the page already shows the thinking
        status = page.get_by_test_id("run-status")
        thoughts = page.get_by_test_id("thought")
        expect(thoughts).to_have_count(4)
        expect(page.locator("[data-testid=tool-call][data-name=gated_add]")).to_have_attribute(
            "data-status", "running"
        )
        expect(status).to_have_text("running")
        expect(page.get_by_test_id("thought-progress")).to_have_text("4/4")

        check_thinking_structure(page)
        gate.set()
        expect(status).to_have_text("completed")
        expect(page.get_by_test_id("answer")).to_have_text(ANSWER)
        expect(page.get_by_test_id("usage")).to_contain_text("tokens: in ")
        gated = page.locator("[data-testid=tool-call][data-name=gated_add]")
        expect(gated).to_have_attribute("data-status", "ok")
        expect(gated).to_contain_text("7")
        expect(page.get_by_test_id("round")).to_have_count(5)
        expect(page.locator("[data-testid=run-item][data-status=completed]")).to_have_count(1)

        expect(page.get_by_test_id("run")).not_to_contain_text("null")
        expect(page.get_by_test_id("run")).not_to_contain_text("undefined")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "viewer-run.png"), full_page=True)
        assert errors == []


def test_viewer_uses_the_token_from_the_address(browser: object, gate: threading.Event) -> None:
    expect = sync_api.expect
    gate.set()
    with live_server(create_app(thinking_agent_factory(gate), token="tok-123")) as server:
        run = httpx.post(
            server.url + "/v1/runs",
            json={"prompt": "Add them."},
            headers={"Authorization": "Bearer tok-123"},
        ).json()
        page = browser.new_page()  # type: ignore[attr-defined]
        page.goto(f"{server.url}/#token=tok-123&run={run['id']}")
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        expect(page.get_by_test_id("thought")).to_have_count(4)
        expect(page.get_by_test_id("run-item")).to_have_count(1)


def test_viewer_without_the_token_says_so(browser: object, gate: threading.Event) -> None:
    expect = sync_api.expect
    with live_server(create_app(thinking_agent_factory(gate), token="tok-123")) as server:
        page = browser.new_page()  # type: ignore[attr-defined]
        page.goto(server.url + "/")
        expect(page.locator("#connection")).to_contain_text("token needed")
        expect(page.get_by_test_id("run-item")).to_have_count(0)


def test_bad_prompt_shows_the_servers_error(browser: object, gate: threading.Event) -> None:
    expect = sync_api.expect
    with live_server(create_app(thinking_agent_factory(gate), max_body_bytes=2000)) as server:
        page = browser.new_page()  # type: ignore[attr-defined]
        page.goto(server.url + "/")
        page.fill("#prompt", "x" * 5000)
        page.click("#new-run button[type=submit]")
        expect(page.locator("#form-error")).to_contain_text("larger than 2000 bytes")
        assert httpx.get(server.url + "/v1/runs").json()["runs"] == []


def test_a_suspended_run_is_approved_from_the_page(browser: object, tmp_path: Path) -> None:
    expect = sync_api.expect
    PUBLISHED.clear()
    app = create_app(approval_agent(), store=SQLiteStore(tmp_path / "runs.sqlite3"))
    with live_server(app) as server:
        page = browser.new_page(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
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
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "viewer-approval.png"), full_page=True)

        page.get_by_test_id("approve").click()
        expect(status).to_have_text("completed")
        expect(page.get_by_test_id("approval")).to_have_count(0)
        expect(page.get_by_test_id("answer")).to_have_text("Done: published 'report'")
        expect(page.locator("[data-testid=tool-call][data-name=publish]")).to_have_attribute(
            "data-status", "ok"
        )
        expect(page.locator("[data-testid=run-item][data-status=completed]")).to_have_count(1)
        assert PUBLISHED == ["report"] and errors == []


def test_a_refused_resume_shows_the_servers_error(browser: object) -> None:
    expect = sync_api.expect
    with live_server(create_app(approval_agent())) as server:
        page = browser.new_page()  # type: ignore[attr-defined]
        page.goto(server.url + "/")
        page.fill("#prompt", "Publish the report.")
        page.click("#new-run button[type=submit]")
        page.get_by_test_id("approve").click()
        expect(page.get_by_test_id("approval-error")).to_contain_text("has no store")
        expect(page.get_by_test_id("run-status")).to_have_text("suspended")
