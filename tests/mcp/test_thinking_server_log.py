"""The stderr box of the thinking server (conformance rows L1–L13)."""

from __future__ import annotations

import io
from typing import Any

import pytest
from mcp import Client

from ponder.mcp.thinking.log import cell_width, is_logging_disabled, render_thought_box
from ponder.mcp.thinking.server import ThinkingServerOptions, build_server
from ponder.tools.thinking_state import ThoughtEntry
from tests.mcp.test_thinking_server import NAME, T


def entry(**over: Any) -> ThoughtEntry:
    fields: dict[str, Any] = {
        "seq": 1,
        "thought": "a thought",
        "thought_number": 1,
        "total_thoughts": 3,
        "next_thought_needed": True,
    }
    return ThoughtEntry(**(fields | over))


def header(**over: Any) -> str:
    return render_thought_box(entry(**over)).splitlines()[1][2:].rstrip(" │")


@pytest.mark.parametrize(
    ("over", "expected"),
    [
        ({}, "💭 Thought 1/3"),
        (
            {"thought_number": 2, "is_revision": True, "revises_thought": 1},
            "🔄 Revision 2/3 (revising thought 1)",
        ),
        ({"is_revision": True}, "🔄 Revision 1/3"),
        ({"branch_from_thought": 1, "branch_id": "alt"}, "🌿 Branch 1/3 (from thought 1, ID: alt)"),
        ({"branch_from_thought": 2}, "🌿 Branch 1/3 (from thought 2)"),
        (
            {"is_revision": True, "revises_thought": 1, "branch_from_thought": 1, "branch_id": "x"},
            "🔄 Revision 1/3 (revising thought 1)",
        ),
        ({"thought_number": 4, "total_thoughts": 4}, "💭 Thought 4/4"),
    ],
)
def test_l4_to_l10_headers(over: dict[str, Any], expected: str) -> None:
    assert header(**over) == expected
    assert "undefined" not in render_thought_box(entry(**over))


@pytest.mark.parametrize(
    "thought",
    [
        "x" * 300,
        "第一行很长的中文思考\n第二行 🙂🙂\n",
        "tab\there\r\nand \x1b[31mansi\x1b[0m",
        "e\u0301 combining",
        "",
    ],
)
@pytest.mark.parametrize("colour", [False, True])
def test_l11_l13_frame_stays_intact(thought: str, colour: bool) -> None:
    box = render_thought_box(entry(thought=thought), colour=colour)
    lines = box.rstrip("\n").split("\n")
    visible = [line.replace("\x1b[34m", "").replace("\x1b[0m", "") for line in lines]
    widths = {cell_width(line) for line in visible}
    assert len(widths) == 1, visible
    assert visible[0].startswith("┌") and visible[-1].startswith("└")
    assert all(line.startswith("│") and line.endswith("│") for line in visible[1:2] + visible[3:-1])
    assert "\x1b[31m" not in box, "control characters from the thought are neutralised"


def test_wide_characters_count_two_cells() -> None:
    assert cell_width("中文") == 4 and cell_width("🙂") == 2 and cell_width("e\u0301") == 1


@pytest.mark.parametrize(
    ("value", "disabled"),
    [
        ("true", True),
        ("TRUE", True),
        ("True", True),
        ("1", True),
        ("yes", True),
        ("on", True),
        (" On ", True),
        ("false", False),
        ("", False),
        ("0", False),
        ("no", False),
    ],
)
def test_l1_l2_l3_environment_values(value: str, disabled: bool) -> None:
    assert is_logging_disabled({"DISABLE_THOUGHT_LOGGING": value}) is disabled
    assert is_logging_disabled({}) is False


async def test_l1_l12_one_box_per_accepted_thought() -> None:
    stream = io.StringIO()
    async with Client(build_server(ThinkingServerOptions(log_stream=stream))) as client:
        await client.call_tool(NAME, T(thought="kept"))
        await client.call_tool(NAME, T(thought=""))
        await client.call_tool(NAME, T(thoughtNumber=0))
        await client.call_tool(NAME, T(thoughtNumber=2, thought="also kept"))
    text = stream.getvalue()
    assert text.count("┌") == 2 and "kept" in text and "also kept" in text
