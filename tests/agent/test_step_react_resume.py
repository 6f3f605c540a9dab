"""A step run that crashes mid-plan resumes from its checkpoint in a fresh agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from ponder.exceptions import ModelResponseError
from ponder.messages import ToolMessage
from ponder.models import ScriptedModel, call_tools, reply
from ponder.store import SQLiteStore

from .scripts import stop
from .steps import plan, step_agent, summary


async def test_a_crashed_step_run_resumes_with_its_plan_and_step_results(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.sqlite3")
    first = ScriptedModel(
        [
            plan(("a", "Find x", []), ("b", "Use x", ["a"])),
            call_tools(("lookup", {"key": "x"})),
            stop("found x"),
            summary("Found x.", "value of x"),
        ]
    )
    with pytest.raises(ModelResponseError, match="out of script"):
        await step_agent(first, store=store).run("use x", run_id="run-1")

    # a real provider never reuses call ids; give the second script's call its own
    resumed_stop = call_tools(("agent_stop", {"result": "used x"}, "call_after_resume"))
    second = ScriptedModel([resumed_stop, summary("Used x."), reply("x is value of x")])
    result = await step_agent(second, store=store).resume("run-1")
    assert result.output == "x is value of x"
    # no plan request again, and step a's work and summary survived the crash
    assert all(r.output is None or r.output.name != "task_plan" for r in second.requests)
    first_request = second.requests[0]
    assert "[Current step] b: Use x" in first_request.messages[-1].content  # type: ignore[union-attr]
    assert "Found x." in first_request.messages[-1].content  # type: ignore[union-attr]
    lookups = [m for m in result.messages if isinstance(m, ToolMessage) and m.name == "lookup"]
    assert len(lookups) == 1
    assert "value of x" in second.requests[-1].messages[-1].content  # type: ignore[union-attr]
