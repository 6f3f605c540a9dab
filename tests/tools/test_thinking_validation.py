"""Validation of ``sequential_thinking`` arguments (conformance rows V1–V23, snake_case)."""

from __future__ import annotations

from typing import Any

import pytest

from ponder.tools.thinking import sequential_thinking_tool
from ponder.tools.thinking_schema import ThinkingConfig, ThoughtInput, parse_thought_arguments
from tests.tools.test_thinking import Session, T

REQUIRED = ["thought", "next_thought_needed", "thought_number", "total_thoughts"]


def problem_fields(error: str) -> list[str]:
    return [line[2:].split(":", 1)[0] for line in error.splitlines() if line.startswith("- ")]


async def test_v1_v2_missing_required_field_says_missing() -> None:
    args = T()
    del args["next_thought_needed"]
    error = await Session().refused(**args)
    assert problem_fields(error) == ["next_thought_needed"]
    assert "received nothing (missing)" in error and "NaN" not in error
    args = T()
    del args["thought"]
    assert problem_fields(await Session().refused(**args)) == ["thought"]


async def test_v3_v4_all_problems_in_one_result_in_schema_order() -> None:
    error = await Session().refused(thought="t")
    assert problem_fields(error) == REQUIRED[1:]
    assert error.startswith("invalid arguments for sequential_thinking (3 problems):")
    assert "Hint:" in error
    assert problem_fields(await Session().refused()) == REQUIRED


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("True", True),
        ("FALSE", False),
        ("true", True),
        ("false", False),
        (True, True),
        (False, False),
        (" true ", True),
    ],
)
async def test_v5_boolean_coercion(raw: Any, value: bool) -> None:
    data = await Session().ok(**T(next_thought_needed=raw))
    assert data["next_thought_needed"] is value


@pytest.mark.parametrize("raw", ["yes", "", "1", 1, 0, None, "on", [True]])
async def test_v6_v7_ambiguous_booleans_refused(raw: Any) -> None:
    error = await Session().refused(**T(next_thought_needed=raw))
    assert problem_fields(error) == ["next_thought_needed"]
    assert 'expected a boolean (true or false; the strings "true"/"false" are accepted)' in error


async def test_v8_optional_booleans() -> None:
    s = Session()
    await s.ok(**T())
    data = await s.ok(
        **T(thought_number=2, is_revision="TRUE", revises_thought=1, needs_more_thoughts="False")
    )
    assert data["node"]["is_revision"] is True
    assert s.state.history[-1].needs_more_thoughts is False
    assert problem_fields(await s.refused(**T(is_revision="maybe"))) == ["is_revision"]


@pytest.mark.parametrize(
    ("n", "t", "expected"),
    [("2", "4", (2, 4)), (" 3 ", 3, (3, 3)), (2.0, 3, (2, 3)), ("+2", 3, (2, 3))],
)
async def test_v9_v12_integer_coercion(n: Any, t: Any, expected: tuple[int, int]) -> None:
    data = await Session().ok(**T(thought_number=n, total_thoughts=t))
    assert (data["thought_number"], data["total_thoughts"]) == expected


@pytest.mark.parametrize(
    ("field", "raw", "shown"),
    [
        ("thought_number", True, "received true"),
        ("thought_number", [2], "received array"),
        ("thought_number", "0x10", "received string '0x10'"),
        ("thought_number", "2.0", "received string '2.0'"),
        ("thought_number", 0, "received number 0"),
        ("total_thoughts", -1, "received number -1"),
        ("revises_thought", 0, "received number 0"),
        ("thought_number", "", "received string ''"),
        ("thought_number", None, "received null"),
        ("thought_number", 1.5, "received number 1.5"),
        ("thought_number", "abc", "received string 'abc'"),
        ("branch_from_thought", "x", "received string 'x'"),
        ("thought_number", 1e20, "received number 1e+20"),
        ("thought_number", 2**53, "received number 9007199254740992"),
        ("thought_number", {"n": 1}, "received object"),
    ],
)
async def test_v10_v17_bad_integers(field: str, raw: Any, shown: str) -> None:
    error = await Session().refused(**T(**{field: raw}))
    assert problem_fields(error) == [field]
    assert f"{field}: {shown}; expected an integer from 1 to 9007199254740991" in error


@pytest.mark.parametrize("raw", [123, "", "   ", "\n\t", None, ["a"]])
async def test_v18_v19_bad_thoughts(raw: Any) -> None:
    error = await Session().refused(**T(thought=raw))
    assert problem_fields(error) == ["thought"]
    assert "not only whitespace" in error


async def test_v20_branch_id_must_be_a_string() -> None:
    error = await Session().refused(**T(branch_from_thought=1, branch_id=7))
    assert problem_fields(error) == ["branch_id"]
    assert "branch_id: received number 7; expected a string of at most 128 characters" in error
    assert problem_fields(await Session().refused(**T(branch_id="x" * 129))) == ["branch_id"]


async def test_v21_null_optional_field_is_absent() -> None:
    data = await Session().ok(
        **T(
            is_revision=None,
            revises_thought=None,
            branch_id=None,
            branch_from_thought=None,
            needs_more_thoughts=None,
            revision_type=None,
        )
    )
    assert "warnings" not in data and "node" not in data


async def test_v22_camel_case_aliases_accepted() -> None:
    s = Session()
    await s.ok(thought="a", nextThoughtNeeded=True, thoughtNumber=1, totalThoughts=3)
    data = await s.ok(
        thought="b",
        nextThoughtNeeded="false",
        thoughtNumber="2",
        totalThoughts=2,
        branchFromThought=1,
        branchId="alt",
        isRevision=False,
        needsMoreThoughts=False,
    )
    assert data["branches"] == ["alt"] and data["next_thought_needed"] is False
    assert "warnings" not in data


async def test_both_spellings_same_value_ok_different_values_refused() -> None:
    same = await Session().ok(**T(thought_number=2, thoughtNumber="2"))
    assert same["thought_number"] == 2
    error = await Session().refused(**T(thought_number=2, thoughtNumber=3))
    assert "thought_number/thoughtNumber: received number 2 and number 3" in error
    assert "send only one spelling" in error


async def test_v23_four_issues_in_schema_order() -> None:
    error = await Session().refused(
        thought=5, thought_number=0, total_thoughts="z", next_thought_needed="maybe"
    )
    assert problem_fields(error) == REQUIRED
    assert "(4 problems)" in error


@pytest.mark.parametrize("raw", ["sideways", 1, ""])
async def test_revision_type_values(raw: Any) -> None:
    error = await Session().refused(**T(is_revision=True, revises_thought=1, revision_type=raw))
    assert "revision_type: received" in error and 'expected "replace" or "amend"' in error


@pytest.mark.parametrize("raw", [[1, 2], "thought", 3, None])
def test_arguments_that_are_not_an_object(raw: Any) -> None:
    problems = parse_thought_arguments(raw, ThinkingConfig())
    assert not isinstance(problems, ThoughtInput)
    assert [p.field for p in problems] == ["arguments"]
    assert problems[0].expected == "a JSON object"


async def test_tool_refuses_non_object_arguments_without_crashing() -> None:
    s = Session()
    tool = sequential_thinking_tool()
    from ponder.tools.tool import ToolContext

    ctx = ToolContext(run_id="r", call_id="c", tool_name=tool.name, state=s.state)
    result = await tool.function(ctx, ["not", "an", "object"])  # type: ignore[arg-type]
    assert not result.success and "arguments: received array" in (result.error or "")
    assert s.state.recorded == 0
