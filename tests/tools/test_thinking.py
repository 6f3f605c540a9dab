"""Contract tests of ``sequential_thinking`` through its public Tool (WeKnora-style profile)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ponder.tools.thinking import (
    ThinkingConfig,
    ThinkingState,
    sequential_thinking_tool,
)
from ponder.tools.tool import ToolContext, ToolResult

EIGHT = {
    "thought_number",
    "total_thoughts",
    "next_thought_needed",
    "branches",
    "thought_history_length",
    "display_type",
    "thought",
    "incomplete_steps",
}
RECORDED = "Thought process recorded"
INCOMPLETE = (
    "Thought process recorded - unfinished steps remain, continue exploring and calling tools"
)


class Session:
    """One run's worth of calls against a fresh state."""

    def __init__(self, config: ThinkingConfig | None = None) -> None:
        self.tool = sequential_thinking_tool(config)
        state = self.tool.new_state()
        assert isinstance(state, ThinkingState)
        self.state = state

    async def call(self, **args: Any) -> ToolResult:
        ctx = ToolContext(run_id="r", call_id="c", tool_name=self.tool.name, state=self.state)
        return await self.tool.function(ctx, args)

    async def ok(self, **args: Any) -> dict[str, Any]:
        result = await self.call(**args)
        assert result.success, result.error
        assert result.error is None
        return dict(result.data)

    async def refused(self, **args: Any) -> str:
        before = self.state.model_dump_json()
        result = await self.call(**args)
        assert not result.success
        assert result.error and result.output == f"Error: {result.error}"
        assert result.data is None
        assert self.state.model_dump_json() == before, "a failed call changed the state"
        return result.error


def T(**over: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "thought": "a thought",
        "next_thought_needed": True,
        "thought_number": 1,
        "total_thoughts": 3,
    }
    args.update(over)
    return args


# --- the spec's own examples -------------------------------------------------------------


async def test_spec_seven_step_flow_with_raised_total() -> None:
    s = Session()
    steps = [
        (1, 4, True),
        (2, 4, True),
        (3, 6, True),
        (4, 6, True),
        (5, 6, True),
        (6, 6, True),
        (7, 7, False),
    ]
    for n, t, more in steps:
        data = await s.ok(
            **T(thought=f"step {n}", thought_number=n, total_thoughts=t, next_thought_needed=more)
        )
        assert set(data) == EIGHT, "no warnings or extras on a clean sequence"
        assert (data["thought_number"], data["total_thoughts"]) == (n, t)
        assert data["thought_history_length"] == n
        assert data["incomplete_steps"] is more
        assert data["display_type"] == "thinking" and data["thought"] == f"step {n}"
    assert [e.thought_number for e in s.state.history] == list(range(1, 8))


async def test_spec_two_branch_example() -> None:
    s = Session(ThinkingConfig(include_branch_contents=True))
    await s.ok(**T(thought="初步分析 1", thought_number=1, total_thoughts=5))
    await s.ok(**T(thought="初步分析 2", thought_number=2, total_thoughts=5))
    a = await s.ok(
        thought="让我尝试从技术实现角度分析",
        thought_number=3,
        total_thoughts=5,
        next_thought_needed=True,
        branch_from_thought=2,
        branch_id="tech_analysis",
    )
    b = await s.ok(
        thought="让我也从用户体验角度分析",
        thought_number=4,
        total_thoughts=5,
        next_thought_needed=True,
        branch_from_thought=2,
        branch_id="ux_analysis",
    )
    end = await s.ok(
        **T(
            thought="综合两个分支的结论",
            thought_number=5,
            total_thoughts=5,
            next_thought_needed=False,
        )
    )
    assert a["branches"] == ["tech_analysis"]
    assert b["branches"] == ["tech_analysis", "ux_analysis"]
    assert b["node"]["branch_from_thought"] == 2 and b["node"]["branch_id"] == "ux_analysis"
    assert "warnings" not in b
    assert end["thought_history_length"] == 5, "branch thoughts are in the main history too"
    assert end["incomplete_steps"] is False
    assert end["branch_contents"] == {
        "tech_analysis": [{"thought_number": 3, "thought": "让我尝试从技术实现角度分析"}],
        "ux_analysis": [{"thought_number": 4, "thought": "让我也从用户体验角度分析"}],
    }


# --- W: WeKnora-style profile ---------------------------------------------------------------


async def test_w1_finished_thought() -> None:
    result = await Session().call(
        **T(next_thought_needed=False, thought_number=3, total_thoughts=3)
    )
    assert result.success and result.output == RECORDED
    assert result.data["incomplete_steps"] is False
    assert result.data["display_type"] == "thinking"
    assert set(result.data) == EIGHT


@pytest.mark.parametrize(
    "over", [{"needs_more_thoughts": True}, {"thought_number": 2}, {"next_thought_needed": True}]
)
async def test_w2_incomplete_steps(over: dict[str, Any]) -> None:
    args = T(next_thought_needed=False, thought_number=3, total_thoughts=3) | over
    result = await Session().call(**args)
    assert result.output.startswith(INCOMPLETE)
    assert result.data["incomplete_steps"] is True


async def test_w3_empty_thought_refused() -> None:
    error = await Session().refused(**T(thought=""))
    assert "thought: received string ''" in error and "non-empty" in error


async def test_w4_zero_thought_number_names_field() -> None:
    error = await Session().refused(**T(thought_number=0))
    assert "thought_number: received number 0; expected an integer from 1" in error


async def test_w5_branch_order_is_first_seen() -> None:
    s = Session()
    await s.ok(**T())
    for i, bid in enumerate(["b", "a", "b", "c"], start=2):
        data = await s.ok(
            **T(thought_number=i, total_thoughts=5, branch_from_thought=1, branch_id=bid)
        )
    assert data["branches"] == ["b", "a", "c"]
    assert s.state.branches == {"b": [2, 4], "a": [3], "c": [5]}


async def test_w6_parallel_calls_in_one_turn_are_all_counted() -> None:
    s = Session()
    results = await asyncio.gather(
        *(s.call(**T(thought=f"t{i}", thought_number=i, total_thoughts=50)) for i in range(1, 51))
    )
    assert all(r.success for r in results)
    assert sorted(r.data["thought_history_length"] for r in results) == list(range(1, 51))
    assert [e.seq for e in s.state.history] == list(range(1, 51))


# --- S: state and payload -----------------------------------------------------------------


async def test_s1_s2_basic_payload() -> None:
    data = await Session().ok(**T())
    assert {k: data[k] for k in EIGHT} == {
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
        "branches": [],
        "thought_history_length": 1,
        "display_type": "thinking",
        "thought": "a thought",
        "incomplete_steps": True,
    }
    data = await Session().ok(**T(total_thoughts=1, next_thought_needed=False))
    assert (data["total_thoughts"], data["next_thought_needed"], data["incomplete_steps"]) == (
        1,
        False,
        False,
    )


async def test_s4_s5_s6_total_raised_never_remembered() -> None:
    assert (await Session().ok(**T(thought_number=5, total_thoughts=3)))["total_thoughts"] == 5
    s = Session()
    assert (await s.ok(**T(thought_number=8, total_thoughts=2)))["total_thoughts"] == 8
    lowered = await s.ok(**T(thought_number=9, total_thoughts=2))
    assert lowered["total_thoughts"] == 9
    s = Session()
    await s.ok(**T(thought_number=3, total_thoughts=3))
    assert (await s.ok(**T(thought_number=4, total_thoughts=9)))["total_thoughts"] == 9


async def test_s7_repeated_and_backward_numbers_accepted_with_warnings() -> None:
    s = Session()
    await s.ok(**T(thought_number=1))
    await s.ok(**T(thought_number=2))
    again = await s.ok(**T(thought_number=2))
    back = await s.ok(**T(thought_number=1))
    assert (back["thought_number"], back["thought_history_length"]) == (1, 4)
    assert "does not follow the previous thought (2)" in again["warnings"][0]
    assert "Warnings:" in (await s.call(**T(thought_number=1))).output


async def test_numbering_gap_is_a_warning_not_an_error() -> None:
    s = Session()
    await s.ok(**T(thought_number=1))
    data = await s.ok(**T(thought_number=5, total_thoughts=7))
    assert data["warnings"] == ["thought_number jumps from 1 to 5: thought(s) 2-4 missing"]
    result = await s.call(**T(thought_number=7, total_thoughts=7))
    assert result.success and "thought(s) 6 missing" in result.output


async def test_s8_s9_revision_payload() -> None:
    s = Session()
    await s.ok(**T())
    data = await s.ok(**T(thought_number=2, is_revision=True, revises_thought=1))
    assert {
        k: data[k]
        for k in ("thought_number", "total_thoughts", "branches", "thought_history_length")
    } == {"thought_number": 2, "total_thoughts": 3, "branches": [], "thought_history_length": 2}
    assert data["node"]["supersedes"] == 1 and data["node"]["revision_type"] == "replace"
    first = await Session().ok(**T(thought_number=2, is_revision=True, revises_thought=1))
    assert first["thought_history_length"] == 1
    assert "revises_thought 1 is not a recorded thought" in first["warnings"]


@pytest.mark.parametrize(
    ("over", "warning"),
    [
        ({"revises_thought": 99, "is_revision": True}, "revises_thought 99 is not a recorded"),
        ({"is_revision": True}, "revises_thought is missing"),
        ({"revises_thought": 1}, "is_revision is not true"),
        ({"revision_type": "amend"}, "revision_type is set but is_revision is not true"),
        ({"branch_id": "x"}, "branch_from_thought is missing"),
        ({"branch_from_thought": 1}, "branch_id is missing or empty"),
        ({"branch_from_thought": 1, "branch_id": ""}, "branch_id is missing or empty"),
        ({"branch_from_thought": 9, "branch_id": "x"}, "branch_from_thought 9 is not a recorded"),
        ({"branch_from_thought": 2, "branch_id": "x"}, "should be earlier than thought_number 2"),
        ({"is_revision": True, "revises_thought": 2}, "should be earlier than thought_number 2"),
    ],
)
async def test_s10_s14_cross_field_lenient_warns_strict_refuses(
    over: dict[str, Any], warning: str
) -> None:
    lenient = Session()
    await lenient.ok(**T())
    data = await lenient.ok(**T(thought_number=2) | over)
    assert any(warning in w for w in data["warnings"]), data["warnings"]
    assert data["thought_history_length"] == 2
    strict = Session(ThinkingConfig(strict=True))
    await strict.ok(**T())
    error = await strict.refused(**T(thought_number=2) | over)
    assert warning in error and "Nothing was recorded" in error


async def test_s11_needs_more_thoughts() -> None:
    data = await Session().ok(
        **T(needs_more_thoughts=True, next_thought_needed=False, total_thoughts=1)
    )
    assert data["incomplete_steps"] is True and data["next_thought_needed"] is False


async def test_s12_to_s16_branch_filing() -> None:
    s = Session()
    await s.ok(**T())
    assert (await s.ok(**T(thought_number=2, branch_from_thought=1, branch_id="alt")))[
        "branches"
    ] == ["alt"]
    assert (await s.ok(**T(thought_number=3, branch_id="nofork")))["branches"] == ["alt"]
    assert (await s.ok(**T(thought_number=4, branch_from_thought=1)))["branches"] == ["alt"]
    data = await s.ok(**T(thought_number=5, branch_from_thought=1, branch_id=""))
    assert data["branches"] == ["alt"] and data["thought_history_length"] == 5
    far = await Session().ok(**T(branch_from_thought=42, branch_id="far"))
    assert far["branches"] == ["far"]
    both = await s.ok(
        **T(
            thought_number=6,
            is_revision=True,
            revises_thought=2,
            branch_from_thought=1,
            branch_id="both",
        )
    )
    assert both["branches"] == ["alt", "both"] and both["node"]["supersedes"] == 2


@pytest.mark.parametrize(
    "bid",
    ["with space", "ünïcödé", "a/b.c-d", "constructor", "__proto__", "toString", "hasOwnProperty"],
)
async def test_s17_s18_any_string_is_an_opaque_branch_id(bid: str) -> None:
    s = Session()
    data = await s.ok(**T(branch_from_thought=1, branch_id=bid))
    assert data["branches"] == [bid] and data["thought_history_length"] == 1
    data = await s.ok(**T(thought_number=2, branch_from_thought=1, branch_id=bid))
    assert s.state.branches == {bid: [1, 2]}


async def test_s19_s20_constructor_branch_sequence() -> None:
    s = Session()
    await s.ok(**T(branch_from_thought=1, branch_id="alt"))
    await s.ok(**T(thought_number=2, branch_from_thought=1, branch_id="constructor"))
    last = await s.ok(
        **T(
            thought_number=3,
            total_thoughts=3,
            next_thought_needed=False,
            branch_from_thought=1,
            branch_id="constructor",
        )
    )
    assert (
        last["thought_number"],
        last["total_thoughts"],
        last["next_thought_needed"],
        last["branches"],
        last["thought_history_length"],
    ) == (3, 3, False, ["alt", "constructor"], 3)
    assert (await Session().ok(**T(branch_id="constructor")))["branches"] == []


async def test_s21_thought_length_limit_is_configurable() -> None:
    assert (await Session().ok(**T(thought="x" * 2000)))["thought_history_length"] == 1
    error = await Session().refused(**T(thought="x" * 2001))
    assert "at most 2000 characters" in error
    big = Session(ThinkingConfig(max_thought_chars=10_000))
    assert (await big.ok(**T(thought="y" * 10_000)))["thought"] == "y" * 10_000


async def test_s22_unknown_key_ignored_with_warning() -> None:
    data = await Session().ok(**T(somethingElse=1))
    assert data["warnings"] == ["ignored unknown field 'somethingElse'"]


async def test_s23_rejected_call_then_valid_call() -> None:
    s = Session()
    await s.refused(**T(next_thought_needed="yes"))
    assert (await s.ok(**T()))["thought_history_length"] == 1


async def test_s25_states_are_isolated() -> None:
    a, b = Session(), Session()
    await a.ok(**T())
    await a.ok(**T(thought_number=2))
    assert (await b.ok(**T()))["thought_history_length"] == 1
