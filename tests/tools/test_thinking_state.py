"""Revisions, bounds, JSON round trip and the tool definition of ``sequential_thinking``."""

from __future__ import annotations

from ponder.tools.thinking import ThinkingConfig, ThinkingState, sequential_thinking_tool
from ponder.tools.tool import ToolContext
from tests.tools.test_thinking import Session, T


async def test_replace_supersedes_and_amend_keeps_current() -> None:
    s = Session()
    for n in (1, 2, 3):
        await s.ok(**T(thought=f"t{n}", thought_number=n))
    await s.ok(**T(thought="t2 fixed", thought_number=4, is_revision=True, revises_thought=2))
    amend = await s.ok(
        **T(
            thought="t3 more",
            thought_number=5,
            is_revision="true",
            revises_thought="3",
            revision_type="AMEND",
        )
    )
    assert amend["node"]["revision_type"] == "amend" and amend["node"]["supersedes"] is None
    assert s.state.superseded == {2: 4}
    assert s.state.amendments == {3: [5]}
    assert [e.thought for e in s.state.current_view()] == ["t1", "t3", "t2 fixed", "t3 more"]


async def test_history_is_bounded_and_counts_stay_monotonic() -> None:
    s = Session(ThinkingConfig(max_history=3))
    await s.ok(**T(branch_from_thought=1, branch_id="early"))
    for n in range(2, 6):
        data = await s.ok(**T(thought_number=n, total_thoughts=5))
    assert data["thought_history_length"] == 5
    assert any("oldest thought was dropped" in w for w in data["warnings"])
    assert [e.thought_number for e in s.state.history] == [3, 4, 5]
    assert s.state.branches == {"early": []} and s.state.branch_contents() == {"early": []}


async def test_branch_count_is_bounded() -> None:
    s = Session(ThinkingConfig(max_branches=2))
    await s.ok(**T())
    await s.ok(**T(thought_number=2, branch_from_thought=1, branch_id="a"))
    await s.ok(**T(thought_number=3, branch_from_thought=1, branch_id="b"))
    error = await s.refused(**T(thought_number=4, branch_from_thought=1, branch_id="c"))
    assert "too many branches (at most 2)" in error
    assert (await s.ok(**T(thought_number=4, branch_from_thought=1, branch_id="a")))[
        "branches"
    ] == ["a", "b"]


async def test_state_round_trips_through_json() -> None:
    s = Session(ThinkingConfig(max_history=4))
    await s.ok(**T())
    await s.ok(**T(thought_number=2, branch_from_thought=1, branch_id="__proto__"))
    await s.ok(**T(thought_number=3, is_revision=True, revises_thought=2))
    restored = ThinkingState.model_validate_json(s.state.model_dump_json())
    assert restored == s.state
    assert list(restored.branches) == ["__proto__"]
    s.state = restored
    assert (await s.ok(**T(thought_number=4)))["thought_history_length"] == 4


async def test_tool_definition() -> None:
    tool = sequential_thinking_tool()
    assert tool.name == "sequential_thinking" and tool.builtin and not tool.idempotent
    assert tool.state_type is ThinkingState and tool.validator is None
    assert len(tool.description) <= 1024
    assert "natural, user-friendly language" in tool.description
    assert "NEVER mention tool names" in tool.description
    params = tool.parameters
    assert params["required"] == [
        "thought",
        "next_thought_needed",
        "thought_number",
        "total_thoughts",
    ]
    assert list(params["properties"]) == [
        "thought",
        "next_thought_needed",
        "thought_number",
        "total_thoughts",
        "is_revision",
        "revises_thought",
        "branch_from_thought",
        "branch_id",
        "needs_more_thoughts",
        "revision_type",
    ]


async def test_missing_state_is_an_error_result() -> None:
    tool = sequential_thinking_tool()
    result = await tool.function(ToolContext(run_id="r", call_id="c", tool_name="x"), T())
    assert not result.success and "ThinkingState" in (result.error or "")
