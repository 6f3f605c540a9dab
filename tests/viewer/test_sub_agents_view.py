"""A sub-agent's run shows under the parent's call in the viewer (headless Chromium)."""

from __future__ import annotations

from typing import Any

import httpx

from ponder.agent import Agent
from ponder.models import ScriptedModel, call_tools, reply
from ponder.server.app import create_app
from tests.server.live import live_server

from .conftest import PHONE


def parent_agent() -> Agent[Any]:
    child = Agent(
        ScriptedModel([reply("Paris has 2.1 million people.")], name="child"),
        agent_strategy="no-action",
    )
    model = ScriptedModel(
        [
            call_tools(("researcher", {"task": "Population of Paris?"}, "c1")),
            call_tools(("agent_stop", {"result": "found"})),
            reply("About 2.1 million."),
        ],
        name="parent",
    )
    return Agent(
        model,
        tools=[child.as_tool("researcher", "Finds facts.")],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )


def test_the_childs_run_is_nested_under_the_parents_call(open_page: Any, sync_api: Any) -> None:
    expect = sync_api.expect
    with live_server(create_app(parent_agent)) as server:
        run_id = httpx.post(server.url + "/v1/runs", json={"prompt": "How many?"}).json()["id"]
        watched = open_page(PHONE)
        page = watched.page
        page.goto(f"{server.url}/#run={run_id}")
        expect(page.get_by_test_id("run-status")).to_have_text("completed")
        call = page.locator("[data-testid=tool-call][data-name=researcher]")
        expect(call).to_have_attribute("data-status", "ok")
        nested = call.get_by_test_id("sub-agent-events")
        expect(nested).to_contain_text("answers: Paris has 2.1 million people.")
        expect(page.get_by_test_id("answer")).to_have_text("About 2.1 million.")
        expect(page.get_by_test_id("usage")).not_to_contain_text("$")  # no price known
        watched.check("viewer-sub-agent-390", visible=("[data-testid=sub-agent-events]",))
