"""`ponder mcp thinking --branch-contents`: a branch thought's text shows the other branches."""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

COMMAND = [sys.executable, "-m", "ponder.mcp.thinking.server"]


def thought(number: int, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "thought": text,
        "thoughtNumber": number,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        **extra,
    }


async def shown_after_branches(*flags: str) -> dict[str, Any]:
    params = StdioServerParameters(
        command=COMMAND[0], args=[*COMMAND[1:], *flags], env={"DISABLE_THOUGHT_LOGGING": "true"}
    )
    async with Client(stdio_client(params)) as client:
        await client.call_tool("sequentialthinking", thought(1, "root"))
        await client.call_tool(
            "sequentialthinking", thought(2, "ALPHA-IDEA", branchFromThought=1, branchId="alpha")
        )
        result = await client.call_tool(
            "sequentialthinking", thought(2, "BETA-IDEA", branchFromThought=1, branchId="beta")
        )
    [text] = result.content
    assert isinstance(text, types.TextContent)
    assert "branchContents" not in (result.structured_content or {})  # the reference's schema
    return dict(json.loads(text.text))


async def test_the_branch_contents_flag_shows_the_model_every_branch() -> None:
    shown = await shown_after_branches("--branch-contents", "4000")
    contents = shown["branchContents"]
    assert [t["thought"] for t in contents["alpha"]] == ["ALPHA-IDEA"]
    assert [t["thought"] for t in contents["beta"]] == ["BETA-IDEA"]


async def test_without_the_flag_the_text_is_the_reference_payload() -> None:
    shown = await shown_after_branches()
    assert "branchContents" not in shown and shown["branches"] == ["alpha", "beta"]
