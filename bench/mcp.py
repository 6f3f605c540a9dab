"""MCP tool-call latency: one pooled session versus a fresh connection per call.

The fresh-connection column is what a runtime pays when it reconnects (and, over stdio,
spawns the server process) on every call. Both use the Python fixture server.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.common import ROOT, fmt_ratio, table
from ponder.mcp import MCPServerConfig, MCPToolset, parse_server_spec
from ponder.tools.tool import Tool, ToolContext

SERVER = ROOT / "tests" / "fixtures" / "mcp_server.py"
POOLED_CALLS = 200
FRESH_CALLS = 20
CTX = ToolContext(run_id="bench", call_id="c", tool_name="add")


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


async def _median(call: Callable[[], Awaitable[Any]], n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def _add_tool(toolset: MCPToolset) -> Tool:
    return next(t for t in await toolset.tools() if t.name == "add")


async def _pooled(config: MCPServerConfig) -> float:
    async with MCPToolset([config]) as toolset:
        add = await _add_tool(toolset)
        for _ in range(10):
            await add.function(CTX, {"a": 1, "b": 2})
        return await _median(lambda: add.function(CTX, {"a": 1, "b": 2}), POOLED_CALLS)


async def _fresh(config: MCPServerConfig) -> float:
    async def once() -> None:
        async with MCPToolset([config]) as toolset:
            result = await (await _add_tool(toolset)).function(CTX, {"a": 1, "b": 2})
            assert result.output == "3", result

    return await _median(once, FRESH_CALLS)


def _start_http() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http"], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    return proc, f"http://127.0.0.1:{port}/mcp"


def run() -> str:
    stdio = parse_server_spec(f"{sys.executable} {SERVER} stdio")
    proc, url = _start_http()
    try:
        http = parse_server_spec(url)
        rows = []
        for label, config in (("stdio", stdio), ("streamable HTTP", http)):
            pooled = asyncio.run(_pooled(config))
            fresh = asyncio.run(_fresh(config))
            rows.append([label, fmt_ms(pooled), fmt_ms(fresh), fmt_ratio(fresh, pooled)])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    return (
        "## MCP tool calls\n\n"
        f"Median latency of one `tools/call` (`add`) on the Python fixture server: "
        f"{POOLED_CALLS} calls on ponder's pooled session versus {FRESH_CALLS} calls that "
        "each open a new connection (spawning the process for stdio), list tools, call and "
        "close, as a reconnect-per-call client does.\n\n"
        + table(
            ["transport", "pooled session", "fresh connection per call", "fresh / pooled"], rows
        )
    )


if __name__ == "__main__":
    print(run())
