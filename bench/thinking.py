"""sequential_thinking throughput: MCP stdio (ponder vs the npm reference) and in process."""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
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
PONDER = [sys.executable, "-m", "ponder.mcp.thinking.server"]
MCP_CALLS = 400
MCP_ROUNDS = 7
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


@dataclass
class _Connection:
    """One server over stdio, its process id (Linux), and what each timed round measured."""

    client: Client
    pid: int | None
    rates: list[float] = field(default_factory=list)
    cpu_per_call: list[float] = field(default_factory=list)


def _children() -> set[int]:
    """Process ids whose parent is this process (empty where /proc is missing)."""
    found = set()
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            found.add(int(entry.parent.name))
    return found


def _cpu_seconds(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _connect(stack: AsyncExitStack, command: list[str]) -> _Connection:
    params = StdioServerParameters(
        command=command[0], args=command[1:], env={"DISABLE_THOUGHT_LOGGING": "true"}
    )
    before = _children()
    client = await stack.enter_async_context(Client(params))
    started = _children() - before
    connection = _Connection(client, started.pop() if len(started) == 1 else None)
    for n in range(1, 51):
        await client.call_tool("sequentialthinking", _args(n))
    return connection


async def _time_round(connection: _Connection) -> None:
    cpu, start = _cpu_seconds(connection.pid), time.perf_counter()
    for n in range(1, MCP_CALLS + 1):
        result = await connection.client.call_tool("sequentialthinking", _args(n))
        assert not result.is_error
    connection.rates.append(MCP_CALLS / (time.perf_counter() - start))
    connection.cpu_per_call.append((_cpu_seconds(connection.pid) - cpu) / MCP_CALLS)


async def _stdio_rounds(commands: list[list[str]]) -> list[_Connection]:
    """Every server on its own connection, timed in alternating rounds."""
    async with AsyncExitStack() as stack:
        connections = [await _connect(stack, command) for command in commands]
        for _ in range(MCP_ROUNDS):
            for connection in connections:
                await _time_round(connection)
    return connections


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


def _stdio_row(label: str, connection: _Connection | None, ponder_rate: float) -> list[str]:
    if connection is None:
        return [label, "n/a", "n/a", "n/a", "n/a"]
    rate = statistics.median(connection.rates)
    cpu = statistics.median(connection.cpu_per_call) if connection.pid else None
    return [
        label,
        f"{rate:,.0f}",
        fmt_us(1 / rate),
        fmt_us(cpu) if cpu else "n/a",
        fmt_ratio(rate, ponder_rate),
    ]


def _rows(
    ponder: _Connection, reference: _Connection | None, tool_s: float, direct_s: float
) -> list[Any]:
    ponder_rate = statistics.median(ponder.rates)
    local = [
        ("in process, `sequential_thinking` Tool.function", tool_s),
        ("in process, `record_thought` (no event loop)", direct_s),
    ]
    return [
        _stdio_row("MCP stdio, ponder `python -m ponder.mcp.thinking.server`", ponder, ponder_rate),
        _stdio_row(f"MCP stdio, npm `{REFERENCE}`", reference, ponder_rate),
        *(
            [label, f"{1 / s:,.0f}", fmt_us(s), "", fmt_ratio(1 / s, ponder_rate)]
            for label, s in local
        ),
    ]


def _round_ratios(ponder: _Connection, reference: _Connection | None) -> str:
    if reference is None:
        return "The npm reference server was not available (no npm).\n\n"
    ratios = sorted(p / r for p, r in zip(ponder.rates, reference.rates, strict=True))
    return (
        f"ponder ÷ npm calls per second, round by round: median {statistics.median(ratios):.2f}× "
        f"(from {ratios[0]:.2f}× to {ratios[-1]:.2f}×).\n\n"
    )


def run() -> str:
    """One Markdown section."""
    command = _reference_command()
    connections = asyncio.run(_stdio_rounds([PONDER, *([command] if command else [])]))
    ponder, reference = connections[0], (connections[1] if command else None)
    tool_seconds = median_seconds(_local_batch, repeat=5, warmup=1) / LOCAL_CALLS
    direct_seconds = median_seconds(_direct_batch, repeat=5, warmup=1) / LOCAL_CALLS
    rows = _rows(ponder, reference, tool_seconds, direct_seconds)
    headers = ["path", "calls/s", "per call", "server CPU per call", "ratio"]
    return (
        "## sequential_thinking\n\n"
        "Sequential `sequentialthinking` calls through the official `mcp` Python client, one "
        f"stdio connection per server, timed in {MCP_ROUNDS} alternating rounds of "
        f"{MCP_CALLS} calls (medians; logging off; every fifth call files a branch); server "
        "CPU is the server process's user + system time per call (Linux `/proc`). "
        f"{LOCAL_CALLS} in-process calls per run. Ratio = calls per second relative to "
        "ponder's stdio server.\n\n" + _round_ratios(ponder, reference) + table(headers, rows)
    )


if __name__ == "__main__":
    print(run())
