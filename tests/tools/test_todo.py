"""Contract tests of ``todo_write`` through its public Tool."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.tools.todo import TodoState, todo_write_tool
from ponder.tools.tool import ToolContext, ToolResult


class Plan:
    def __init__(self) -> None:
        self.tool = todo_write_tool()
        state = self.tool.new_state()
        assert isinstance(state, TodoState)
        self.state = state

    async def call(self, args: Any) -> ToolResult:
        ctx = ToolContext(run_id="r", call_id="c", tool_name=self.tool.name, state=self.state)
        return await self.tool.function(ctx, args)

    async def refused(self, args: Any) -> str:
        before = self.state.model_dump_json()
        result = await self.call(args)
        assert not result.success and result.error
        assert result.output == f"Error: {result.error}"
        assert self.state.model_dump_json() == before
        return result.error


def steps(*statuses: str) -> list[dict[str, Any]]:
    return [{"id": i, "description": f"step {i}", "status": s} for i, s in enumerate(statuses, 1)]


async def test_plan_summary_and_data() -> None:
    plan = Plan()
    result = await plan.call(
        {"task": "Ship it", "steps": steps("completed", "in_progress", "pending")}
    )
    assert result.success
    assert result.output == (
        "**Plan: Ship it** — 1/3 completed\n"
        "- [x] 1. step 1\n"
        "- [~] 2. step 2 (in progress)\n"
        "- [ ] 3. step 3"
    )
    assert result.data == {
        "display_type": "plan",
        "task": "Ship it",
        "steps": [
            {"id": "1", "description": "step 1", "status": "completed"},
            {"id": "2", "description": "step 2", "status": "in_progress"},
            {"id": "3", "description": "step 3", "status": "pending"},
        ],
        "completed": 1,
        "total": 3,
        "in_progress": ["2"],
        "changed": ["1", "2", "3"],
    }
    assert plan.state.task == "Ship it" and len(plan.state.steps) == 3


async def test_update_replaces_plan_and_reports_changes() -> None:
    plan = Plan()
    await plan.call({"task": "t", "steps": steps("in_progress", "pending")})
    result = await plan.call({"task": "t", "steps": steps(" Completed ", "IN_PROGRESS")})
    assert result.data["changed"] == ["1", "2"]
    assert [s.status for s in plan.state.steps] == ["completed", "in_progress"]
    again = await plan.call({"task": "t", "steps": steps("completed", "in_progress")})
    assert again.data["changed"] == []


async def test_several_in_progress_is_a_warning() -> None:
    result = await Plan().call({"task": "t", "steps": steps("in_progress", "in_progress")})
    assert result.success and result.data["warnings"] == [
        "2 steps are in progress; keep one at a time"
    ]
    assert result.output.endswith("> Warning: 2 steps are in progress; keep one at a time")


@pytest.mark.parametrize("status", ["done", "todo", "in progress", "", None, 1, "cancelled"])
async def test_unknown_status_refused(status: Any) -> None:
    plan = Plan()
    await plan.call({"task": "t", "steps": steps("pending")})
    error = await plan.refused({"task": "t", "steps": steps("pending", status)})
    assert "steps[1].status: received" in error
    assert "expected one of pending, in_progress, completed" in error
    assert "The plan was not changed." in error


async def test_every_problem_listed_in_order() -> None:
    error = await Plan().refused(
        {"steps": [{"id": "a", "description": "", "status": "x"}, {"id": "a"}, "bad", {}]}
    )
    lines = [line for line in error.splitlines() if line.startswith("- ")]
    assert [line.split(":")[0] for line in lines] == [
        "- task",
        "- steps[0].description",
        "- steps[0].status",
        "- steps[1].id",
        "- steps[1].description",
        "- steps[1].status",
        "- steps[2]",
        "- steps[3].id",
        "- steps[3].description",
        "- steps[3].status",
    ]
    assert "task: received nothing (missing)" in error
    assert "steps[1].id: received string 'a'; expected an id not used by another step" in error


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"task": "t", "steps": []}, "steps: received array; expected an array of 1 to 50"),
        ({"task": "t"}, "steps: received nothing (missing)"),
        ({"task": "t", "steps": "1. do it"}, "steps: received string"),
        ({"task": "   ", "steps": steps("pending")}, "task: received string '   '"),
        ({"task": "t", "steps": steps(*["pending"] * 51)}, "expected an array of 1 to 50"),
        (
            {"task": "t", "steps": [{"id": True, "description": "d", "status": "pending"}]},
            "steps[0].id: received true",
        ),
        ([1, 2], "arguments: received array"),
    ],
)
async def test_malformed_arguments(args: Any, needle: str) -> None:
    assert needle in await Plan().refused(args)


async def test_tool_definition_and_state_round_trip() -> None:
    plan = Plan()
    assert plan.tool.name == "todo_write" and plan.tool.state_type is TodoState
    assert plan.tool.parameters["required"] == ["task", "steps"]
    assert plan.tool.parameters["properties"]["steps"]["items"]["properties"]["status"]["enum"] == [
        "pending",
        "in_progress",
        "completed",
    ]
    await plan.call({"task": "t", "steps": steps("pending")})
    assert TodoState.model_validate_json(plan.state.model_dump_json()) == plan.state
