"""Servers that crash, hang, send garbage or never start: error results, never a hang."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ponder.exceptions import UserError
from ponder.mcp import MCPToolset, parse_server_spec
from tests.mcp.conftest import descendants, kill_stdio_servers, raw_entry, stdio_entry
from tests.mcp.test_stdio_toolset import by_name, call


async def test_killed_server_gives_error_then_reconnects(events: list[dict[str, Any]]) -> None:
    before = descendants()
    async with MCPToolset([parse_server_spec(stdio_entry())], on_event=events.append) as ts:
        echo = by_name(await ts.tools())["echo"]
        assert (await call(echo, {"text": "one"})).output == "one"
        killed = kill_stdio_servers(before)
        assert len(killed) == 1
        failed = await call(echo, {"text": "two"})
        assert not failed.success
        assert "disconnected" in (failed.error or "")
        again = await call(echo, {"text": "three"})
        assert again.output == "three"
        alive = descendants() - before
        assert len(alive) == 1 and alive.isdisjoint(killed)
    assert descendants() - before == set()
    kinds = [e["kind"] for e in events]
    assert kinds.count("mcp.connected") == 2
    assert "mcp.disconnected" in kinds


async def test_hanging_tool_times_out_and_the_session_survives() -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())], call_timeout=0.5) as ts:
        tools = by_name(await ts.tools())
        hung = await call(tools["hang"], {})
        assert not hung.success
        assert "did not answer within 0.5s" in (hung.error or "")
        assert (await call(tools["echo"], {"text": "still here"})).output == "still here"


async def test_per_server_timeout_overrides_the_default() -> None:
    config = parse_server_spec(stdio_entry()).model_copy(update={"timeout": 0.3})
    async with MCPToolset([config], call_timeout=60) as ts:
        hang = by_name(await ts.tools())["hang"]
        assert hang.timeout is not None and hang.timeout < 60
        assert "within 0.3s" in ((await call(hang, {})).error or "")


async def test_server_that_never_initialises_is_reported_and_others_work(
    events: list[dict[str, Any]],
) -> None:
    before = descendants()
    specs = [parse_server_spec(raw_entry("silent")), parse_server_spec(stdio_entry())]
    async with MCPToolset(specs, init_timeout=5.0, on_event=events.append) as ts:
        tools = by_name(await ts.tools())
        assert "echo" in tools and "poke" not in tools
        assert "did not initialise within 5s" in ts.errors["raw_silent"]
        assert (await call(tools["echo"], {"text": "ok"})).output == "ok"
    assert descendants() - before == set()
    failed = [e for e in events if e["kind"] == "mcp.connect_failed"]
    assert failed and failed[0]["server"] == "raw_silent"


async def test_garbage_answers_give_error_results_and_a_reconnect(
    events: list[dict[str, Any]],
) -> None:
    before = descendants()
    async with MCPToolset(
        [parse_server_spec(raw_entry("garbage"))],
        call_timeout=2.0,
        init_timeout=3.0,
        on_event=events.append,
    ) as ts:
        poke = by_name(await ts.tools())["poke"]
        result = await call(poke, {})
        assert not result.success
        kinds = [e["kind"] for e in events]
        assert "mcp.transport_error" in kinds  # the unparsable line was seen
        assert "mcp.disconnected" in kinds  # and the session, no longer answering a ping, dropped
        second = await call(poke, {})
        assert not second.success
        assert [e["kind"] for e in events].count("mcp.connected") == 2
    assert descendants() - before == set()


async def test_server_crashing_on_call(events: list[dict[str, Any]]) -> None:
    before = descendants()
    async with MCPToolset([parse_server_spec(raw_entry("crash"))], on_event=events.append) as ts:
        poke = by_name(await ts.tools())["poke"]
        results = [await call(poke, {}) for _ in range(3)]
        assert [r.success for r in results] == [False, False, False]
        assert all("raw_crash" in (r.error or "") for r in results)
    assert descendants() - before == set()


async def test_missing_executable_is_reported() -> None:
    config = parse_server_spec({"name": "ghost", "command": "/nonexistent/mcp-server"})
    async with MCPToolset([config]) as ts:
        assert await ts.tools() == []
        assert "could not start" in ts.errors["ghost"]
        assert "/nonexistent/mcp-server" in ts.errors["ghost"]


async def test_backoff_refuses_immediate_retries() -> None:
    config = parse_server_spec({"name": "ghost", "command": "/nonexistent/mcp-server"})
    async with MCPToolset([config]) as ts:
        await ts.tools()
        await ts.tools()
        assert "next connection attempt in" in ts.errors["ghost"]


async def test_concurrent_calls_during_a_hang_do_not_block_each_other() -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())], call_timeout=1.0) as ts:
        tools = by_name(await ts.tools())
        hung, echoed = await asyncio.gather(
            call(tools["hang"], {}), call(tools["echo"], {"text": "fine"})
        )
        assert not hung.success and echoed.output == "fine"


async def test_closed_toolset() -> None:
    ts = MCPToolset([parse_server_spec(stdio_entry())])
    async with ts:
        echo = by_name(await ts.tools())["echo"]
    assert not (await call(echo, {"text": "x"})).success
    with pytest.raises(UserError):
        await ts.tools()
    with pytest.raises(UserError):
        await ts.start()


def test_invalid_timeouts() -> None:
    with pytest.raises(UserError, match="positive"):
        MCPToolset([], call_timeout=0)


async def test_cancelled_connect_leaves_no_process() -> None:
    before = descendants()
    async with MCPToolset([parse_server_spec(raw_entry("silent"))], init_timeout=60) as ts:
        listing = asyncio.create_task(ts.tools())
        for _ in range(200):  # wait until the server process exists, wherever that lands
            if descendants() - before:
                break
            await asyncio.sleep(0.01)
        listing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await listing
        assert descendants() - before == set()
