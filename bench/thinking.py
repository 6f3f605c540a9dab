"""sequential_thinking throughput: MCP stdio (ponder vs the npm reference) and in process."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

from mcp import Client, StdioServerParameters

from bench.common import fmt_ratio, fmt_us, median_seconds, table
from ponder.tools.thinking import (
    ThinkingConfig,
    ThinkingState,
    record_thought,
    sequential_thinking_tool,
)
from ponder.tools.tool import ToolContext

REFERENCE = "@modelcontextprotocol/server-sequential-thinking@2026.8.31"
PONDER = [sys.executable, "-m", "ponder.mcp.thinking_server"]
MCP_CALLS = 400
LOCAL_CALLS = 5000


def _args(n: int) -> dict[str, Any]:
    args: dict[str, Any] = {
        "thought": f"Considering step {n} of the problem in plain words.",
        "nextThoughtNeeded": True,
        "thoughtNumber": n,
        "totalThoughts": n + 2,
    }
    if n % 5 == 0:
        args.update(branchFromThought=n - 1, branchId=f"b{n % 3}")
    return args


async def _stdio_rate(command: list[str]) -> float:
    """Calls per second over one stdio connection (median of three rounds)."""
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={"DISABLE_THOUGHT_LOGGING": "true"}
    )
    rounds = []
    async with Client(params) as client:
        for n in range(1, 51):
            await client.call_tool("sequentialthinking", _args(n))
        for _ in range(3):
            start = time.perf_counter()
            for n in range(1, MCP_CALLS + 1):
                result = await client.call_tool("sequentialthinking", _args(n))
                assert not result.is_error
            rounds.append(MCP_CALLS / (time.perf_counter() - start))
    return sorted(rounds)[1]


def _reference_command() -> list[str] | None:
    import pytest

    from tests.support.npm import npm_bin_command

    try:
        return npm_bin_command(REFERENCE)
    except pytest.skip.Exception:
        return None


def _local_batch() -> None:
    """LOCAL_CALLS tool calls in one run, through the Tool's async function."""
    tool = sequential_thinking_tool()
    ctx = ToolContext(run_id="bench", call_id="c", tool_name=tool.name, state=ThinkingState())

    async def calls() -> None:
        for n in range(1, LOCAL_CALLS + 1):
            await tool.function(ctx, _args(n))

    asyncio.run(calls())


def _direct_batch() -> None:
    state, settings = ThinkingState(), ThinkingConfig()
    for n in range(1, LOCAL_CALLS + 1):
        record_thought(state, settings, _args(n))


def _rows(ponder_rate: float, reference_rate: float, tool_s: float, direct_s: float) -> list[Any]:
    reference = [
        f"{reference_rate:,.0f}",
        fmt_us(1 / reference_rate),
        fmt_ratio(reference_rate, ponder_rate),
    ]
    return [
        [
            "MCP stdio, ponder `python -m ponder.mcp.thinking_server`",
            f"{ponder_rate:,.0f}",
            fmt_us(1 / ponder_rate),
            "1.0×",
        ],
        [f"MCP stdio, npm `{REFERENCE}`", *(reference if reference_rate else ["n/a"] * 3)],
        [
            "in process, `sequential_thinking` Tool.function",
            f"{1 / tool_s:,.0f}",
            fmt_us(tool_s),
            fmt_ratio(1 / tool_s, ponder_rate),
        ],
        [
            "in process, `record_thought` (no event loop)",
            f"{1 / direct_s:,.0f}",
            fmt_us(direct_s),
            fmt_ratio(1 / direct_s, ponder_rate),
        ],
    ]


def run() -> str:
    """One Markdown section."""
    ponder_rate = asyncio.run(_stdio_rate(PONDER))
    command = _reference_command()
    reference_rate = asyncio.run(_stdio_rate(command)) if command else 0.0
    tool_seconds = median_seconds(_local_batch, repeat=5, warmup=1) / LOCAL_CALLS
    direct_seconds = median_seconds(_direct_batch, repeat=5, warmup=1) / LOCAL_CALLS
    rows = _rows(ponder_rate, reference_rate, tool_seconds, direct_seconds)
    return (
        "## sequential_thinking\n\n"
        "Sequential `sequentialthinking` calls over one MCP stdio connection through the "
        f"official `mcp` Python client ({MCP_CALLS} calls, median of 3 rounds, logging off; "
        f"every fifth call files a branch), and {LOCAL_CALLS} in-process calls per run. "
        "Ratio = calls per second relative to ponder's stdio server.\n\n"
        + table(["path", "calls/s", "per call", "ratio"], rows)
    )


if __name__ == "__main__":
    print(run())
