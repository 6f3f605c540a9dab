"""The official AG-UI JS client (``@ag-ui/client``) runs ponder agents end to end."""

from __future__ import annotations

from ponder.server.app import create_app
from tests.server.live import live_server
from tests.server.test_resume import PUBLISHED, approval_agent

from .agui_agents import showcase_agent
from .npm import run_script


def test_the_js_client_streams_tools_state_and_an_approval() -> None:
    PUBLISHED.clear()
    with (
        live_server(create_app(showcase_agent())) as showcase,
        live_server(create_app(approval_agent())) as approval,
    ):
        seen = run_script("agui_client.mjs", showcase.url, approval.url)
    assert seen["invalid"] == []  # every event passed @ag-ui/core's schemas
    kinds = seen["firstTypes"]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    for kind in ("REASONING_MESSAGE_CONTENT", "STATE_SNAPSHOT", "TOOL_CALL_RESULT"):
        assert kind in kinds
    assert seen["firstOutcome"] == "success"
    assert seen["pendingName"] == "get_weather"
    assert [s["description"] for s in seen["state"]["todos"]["steps"]] == [
        "Add the numbers",
        "Ask the weather",
    ]
    assert seen["secondText"] == "1 + 2 = 3; Paris: sunny."
    assert seen["resumedResult"] == "1 + 2 = 3; Paris: sunny."
    assert seen["interruptReasons"] == ["tool_approval"]
    assert seen["approvedOutcome"] == "success"
    assert seen["approvedText"] == "Done: published 'report'"
    assert PUBLISHED == ["report"]
