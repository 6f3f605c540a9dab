"""MCPToolset over stdio against the Python fixture server (a real subprocess)."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from ponder.mcp import MCPToolset, parse_server_spec
from ponder.tools.tool import Tool, ToolContext, ToolResult
from tests.mcp.conftest import descendants, stdio_entry


async def call(tool: Tool, args: dict[str, Any], call_id: str = "c1") -> ToolResult:
    return await tool.function(
        ToolContext(run_id="run", call_id=call_id, tool_name=tool.name), args
    )


def by_name(tools: list[Tool]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


async def test_tools_become_registry_tools_and_calls_work(events: list[dict[str, Any]]) -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())], on_event=events.append) as toolset:
        tools = by_name(await toolset.tools())
        add = tools["add"]
        assert add.metadata == {"mcp_server": "mcp_server", "mcp_tool": "add"}
        assert add.parameters["properties"].keys() == {"a", "b"}
        assert add.description == "Add two integers."
        result = await call(add, {"a": 2, "b": 40})
        assert (result.success, result.output) == (True, "42")
        assert result.data["structured_content"] == {"result": 42}
    assert [e["kind"] for e in events][:2] == ["mcp.connected", "mcp.tools_listed"]


async def test_one_process_serves_many_calls() -> None:
    before = descendants()
    async with MCPToolset([parse_server_spec(stdio_entry())]) as toolset:
        echo = by_name(await toolset.tools())["echo"]
        results = await asyncio.gather(*(call(echo, {"text": f"m{i}"}) for i in range(20)))
        assert [r.output for r in results] == [f"m{i}" for i in range(20)]
        assert len(descendants() - before) == 1


async def test_image_structured_and_error_results() -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())]) as toolset:
        tools = by_name(await toolset.tools())
        image = await call(tools["picture"], {})
        block = image.data["content"][0]
        assert block["type"] == "image" and block["mimeType"] == "image/png"
        assert base64.b64decode(block["data"]).startswith(b"\x89PNG")
        assert image.output.startswith("[image image/png")
        weather = await call(tools["weather"], {"city": "Oslo"})
        assert weather.data["structured_content"] == {"city": "Oslo", "celsius": 21.5}
        failed = await call(tools["fail"], {"reason": "boom"})
        assert not failed.success
        assert failed.output.startswith("Error: ")
        assert failed.data["content"][0]["type"] == "text"


async def test_bad_arguments_give_an_error_result() -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())]) as toolset:
        add = by_name(await toolset.tools())["add"]
        result = await call(add, {"a": "not a number"})
        assert not result.success
        assert result.error


async def test_progress_notifications_become_events(events: list[dict[str, Any]]) -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())], on_event=events.append) as toolset:
        count = by_name(await toolset.tools())["count"]
        result = await call(count, {"steps": 3}, call_id="call-7")
        assert result.output == "counted 3"
    progress = [e for e in events if e["kind"] == "mcp.progress"]
    assert [(e["progress"], e["total"], e["message"]) for e in progress] == [
        (1.0, 3.0, "step 1"),
        (2.0, 3.0, "step 2"),
        (3.0, 3.0, "step 3"),
    ]
    assert {(e["server"], e["tool"], e["call_id"]) for e in progress} == {
        ("mcp_server", "count", "call-7")
    }


async def test_tools_list_changed_is_honoured(events: list[dict[str, Any]]) -> None:
    async with MCPToolset([parse_server_spec(stdio_entry())], on_event=events.append) as toolset:
        tools = by_name(await toolset.tools())
        assert "fresh" not in tools
        await call(tools["grow"], {"tool_name": "fresh"})
        for _ in range(100):  # the notification arrives asynchronously
            if any(e["kind"] == "mcp.tools_changed" for e in events):
                break
            await asyncio.sleep(0.02)
        fresh = by_name(await toolset.tools())["fresh"]
        assert (await call(fresh, {})).output == "I am fresh"


async def test_name_collision_is_resolved_deterministically(events: list[dict[str, Any]]) -> None:
    specs = [parse_server_spec(stdio_entry("--name", n)) for n in ("alpha", "beta")]
    specs = [
        s.model_copy(update={"name": n}) for s, n in zip(specs, ("alpha", "beta"), strict=True)
    ]
    async with MCPToolset(specs, on_event=events.append) as toolset:
        tools = by_name(await toolset.tools())
        assert "whoami" not in tools
        assert (await call(tools["alpha__whoami"], {})).output == "alpha"
        assert (await call(tools["beta__whoami"], {})).output == "beta"
        assert toolset.renamed["alpha__whoami"] == ("alpha", "whoami")
        assert toolset.renamed["beta__echo"] == ("beta", "echo")
        assert tools["beta__echo"].metadata == {"mcp_server": "beta", "mcp_tool": "echo"}
    renamed = [e for e in events if e["kind"] == "mcp.tools_renamed"]
    assert renamed and renamed[0]["renamed"]["alpha__add"] == "alpha/add"


async def test_same_entry_twice_gets_unique_server_names() -> None:
    spec = parse_server_spec(stdio_entry())
    async with MCPToolset([spec, spec]) as toolset:
        assert [s.name for s in toolset.servers] == ["mcp_server", "mcp_server_2"]
        tools = by_name(await toolset.tools())
        assert {"mcp_server__add", "mcp_server_2__add"} <= tools.keys()


async def test_no_process_left_after_close() -> None:
    before = descendants()
    specs = [parse_server_spec(stdio_entry()) for _ in range(3)]
    async with MCPToolset(specs) as toolset:
        await toolset.tools()
        assert len(descendants() - before) == 3
    assert descendants() - before == set()
