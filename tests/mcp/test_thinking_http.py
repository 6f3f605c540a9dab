"""``ponder mcp thinking --http``: per-session state, the token, DNS-rebinding protection."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ponder.mcp import MCPServerConfig, MCPToolset
from ponder.tools.tool import Tool, ToolContext
from tests.cli.test_commands import PONDER, ROOT, environment, one_line_error, ponder

TOKEN = "s3cret-token"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class ThinkingHTTP:
    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [PONDER, "mcp", "thinking", "--http", "127.0.0.1:0", *args],
            env=environment(DISABLE_THOUGHT_LOGGING="true"),
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        if "listening on " not in line:
            self.process.kill()
            raise RuntimeError(f"the thinking server did not start: {line!r}")
        self.url = line.split("listening on ", 1)[1].strip()
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture(scope="module")
def server() -> Iterator[ThinkingHTTP]:
    running = ThinkingHTTP("--token", TOKEN)
    yield running
    running.stop()


def thought(number: int) -> dict[str, Any]:
    return {
        "thought": f"thought {number}",
        "thoughtNumber": number,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
    }


async def think(tool: Tool, number: int) -> dict[str, Any]:
    result = await tool.function(
        ToolContext(run_id="r", call_id="c", tool_name=tool.name), thought(number)
    )
    assert result.success, result.error
    data: dict[str, Any] = result.data["structured_content"]
    return data


async def test_each_http_session_has_its_own_thinking_state(server: ThinkingHTTP) -> None:
    config = MCPServerConfig(name="t", transport="streamable_http", url=server.url, token=TOKEN)
    async with MCPToolset([config]) as first, MCPToolset([config.model_copy()]) as second:
        [one] = await first.tools()
        [two] = await second.tools()
        assert (await think(one, 1))["thoughtHistoryLength"] == 1
        assert (await think(one, 2))["thoughtHistoryLength"] == 2
        assert (await think(two, 1))["thoughtHistoryLength"] == 1
        assert (await think(one, 3))["thoughtHistoryLength"] == 3


async def test_a_client_without_the_token_is_refused(server: ThinkingHTTP) -> None:
    config = MCPServerConfig(name="t", transport="streamable_http", url=server.url, token="wrong")
    async with MCPToolset([config], init_timeout=5) as toolset:
        assert await toolset.tools() == []
        assert "t" in toolset.errors
    async with httpx.AsyncClient() as client:
        bare = await client.post(server.url, json=INIT, headers=ACCEPT)
    assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"


async def test_rebinding_hosts_and_foreign_origins_are_refused(server: ThinkingHTTP) -> None:
    auth = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient() as client:
        evil_host = await client.post(server.url, json=INIT, headers={**auth, "Host": "evil.test"})
        evil_origin = await client.post(
            server.url, json=INIT, headers={**auth, "Origin": "http://evil.test"}
        )
        good = await client.post(
            server.url, json=INIT, headers={**auth, "Host": f"localhost:{server.port}"}
        )
    assert evil_host.status_code == 421
    assert evil_origin.status_code == 403
    assert good.status_code == 200
    assert good.headers.get("mcp-session-id")
    body = good.text.split("data: ", 1)[-1] if "data: " in good.text else good.text
    assert json.loads(body)["result"]["serverInfo"]["name"] == "ponder-sequential-thinking"


def test_bad_http_options_are_one_line_errors() -> None:
    for args, expected in [
        (["--http", "no-port"], "--http expects HOST:PORT"),
        (["--http", "0.0.0.0:0"], "needs a token"),
    ]:
        result = ponder("mcp", "thinking", *args)
        assert result.returncode == 2, result.stderr
        assert expected in one_line_error(result)
