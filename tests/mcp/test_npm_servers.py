"""MCPToolset against the npm reference servers (installed into a cache by the test setup)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from ponder.mcp import MCPServerConfig, MCPToolset, parse_server_spec
from tests.mcp.conftest import descendants, kill_stdio_servers
from tests.mcp.test_stdio_toolset import by_name, call
from tests.support.npm import npm_bin_command

pytestmark = pytest.mark.npm


def npm_server(package: str, *args: str) -> MCPServerConfig:
    argv = [*npm_bin_command(f"@modelcontextprotocol/{package}"), *args]
    return parse_server_spec("stdio://" + json.dumps(argv))


async def test_everything_echo_image_and_progress(events: list[dict[str, Any]]) -> None:
    config = npm_server("server-everything", "stdio")
    assert config.name == "server-everything"
    async with MCPToolset([config], on_event=events.append) as toolset:
        tools = by_name(await toolset.tools())
        assert (await call(tools["echo"], {"message": "hi"})).output.endswith("hi")
        image = await call(tools["get-tiny-image"], {})
        assert image.success
        blocks = [b for b in image.data["content"] if b["type"] == "image"]
        assert blocks and blocks[0]["mimeType"] == "image/png"
        assert base64.b64decode(blocks[0]["data"]).startswith(b"\x89PNG")
        assert "[image image/png" in image.output
        long = tools["trigger-long-running-operation"]
        assert (await call(long, {"duration": 0.2, "steps": 2})).success
        structured = await call(tools["get-structured-content"], {"location": "New York"})
        assert structured.data["structured_content"]
    assert [e["progress"] for e in events if e["kind"] == "mcp.progress"] == [1.0, 2.0]


async def test_memory_server_keeps_state_across_pooled_calls(tmp_path: Path) -> None:
    config = npm_server("server-memory").model_copy(
        update={"env": {"MEMORY_FILE_PATH": str(tmp_path / "memory.jsonl")}}
    )
    async with MCPToolset([config]) as toolset:
        tools = by_name(await toolset.tools())
        entity = {"name": "ponder", "entityType": "project", "observations": ["runs agents"]}
        assert (await call(tools["create_entities"], {"entities": [entity]})).success
        graph = await call(tools["read_graph"], {})
        assert "runs agents" in graph.output


async def test_filesystem_server_reads_and_writes(tmp_path: Path) -> None:
    config = npm_server("server-filesystem", str(tmp_path))
    async with MCPToolset([config]) as toolset:
        tools = by_name(await toolset.tools())
        target = str(tmp_path / "note.txt")
        written = await call(tools["write_file"], {"path": target, "content": "hello mcp"})
        assert written.success, written.output
        assert (tmp_path / "note.txt").read_text() == "hello mcp"
        read = await call(tools["read_text_file"], {"path": target})
        assert read.output == "hello mcp"
        outside = await call(tools["read_text_file"], {"path": "/etc/hostname"})
        assert not outside.success


async def test_everything_killed_mid_run_reconnects(events: list[dict[str, Any]]) -> None:
    before = descendants()
    async with MCPToolset([npm_server("server-everything", "stdio")], on_event=events.append) as ts:
        echo = by_name(await ts.tools())["echo"]
        assert (await call(echo, {"message": "a"})).success
        assert kill_stdio_servers(before)
        assert not (await call(echo, {"message": "b"})).success
        assert (await call(echo, {"message": "c"})).output.endswith("c")
    assert descendants() - before == set()


async def test_collision_between_two_npm_servers(tmp_path: Path) -> None:
    memory = npm_server("server-memory").model_copy(
        update={"env": {"MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")}}
    )
    before = descendants()
    async with MCPToolset([memory, memory]) as toolset:
        tools = by_name(await toolset.tools())
        assert "read_graph" not in tools
        assert {"server-memory__read_graph", "server-memory_2__read_graph"} <= tools.keys()
        assert toolset.renamed["server-memory_2__read_graph"] == ("server-memory_2", "read_graph")
        assert len(descendants() - before) == 2
    assert descendants() - before == set()


def test_the_readme_mcp_example_works_as_written(tmp_path: Path) -> None:
    import re
    import shutil

    from tests.cli.test_commands import ponder

    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    [line] = [m for m in re.findall(r"^agent_mcp_server_scripts = .*$", readme, re.M) if "npx" in m]
    config = tmp_path / "ponder.toml"
    config.write_text(
        f'agent_mcp_client_enable = true\n{line}\nagent_thought_mode = "chat"\n'
        "enable_thinking_tool = false\n"
    )
    result = ponder("run", "hi", "-m", "scripted", "--config", str(config), "--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    kinds = {e.get("type") for e in events if e["kind"] == "mcp_event"}
    listed = [e for e in events if e.get("type") == "tools_listed"]
    assert "connect_failed" not in kinds and listed and listed[0]["data"]["count"] > 0
