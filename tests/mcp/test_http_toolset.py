"""MCPToolset over streamable HTTP against the Python fixture server on 127.0.0.1."""

from __future__ import annotations

from typing import Any

from ponder.mcp import MCPToolset, parse_server_spec
from tests.mcp.conftest import HTTPServer, stdio_entry
from tests.mcp.test_stdio_toolset import by_name, call


async def test_plain_http_url_uses_streamable_http(http_server: HTTPServer) -> None:
    config = parse_server_spec(http_server.url)
    assert (config.transport, config.name) == ("streamable_http", "127_0_0_1")
    async with MCPToolset([config]) as toolset:
        tools = by_name(await toolset.tools())
        assert (await call(tools["whoami"], {})).output == "web"
        assert (await call(tools["add"], {"a": 1, "b": 2})).output == "3"
        image = await call(tools["picture"], {})
        assert image.data["content"][0]["type"] == "image"


async def test_streamable_scheme_and_progress_over_http(
    http_server: HTTPServer, events: list[dict[str, Any]]
) -> None:
    entry = f"streamable+http://127.0.0.1:{http_server.port}/mcp"
    async with MCPToolset([parse_server_spec(entry)], on_event=events.append) as toolset:
        count = by_name(await toolset.tools())["count"]
        assert (await call(count, {"steps": 2})).output == "counted 2"
    assert [e["progress"] for e in events if e["kind"] == "mcp.progress"] == [1.0, 2.0]


async def test_bearer_token_from_url_is_sent() -> None:
    server = HTTPServer("--name", "secure", "--token", "s3cret")
    try:
        good = parse_server_spec(f"http://s3cret@127.0.0.1:{server.port}/mcp")
        bad = parse_server_spec(f"http://wrong@127.0.0.1:{server.port}/mcp")
        bad = bad.model_copy(update={"name": "bad"})
        async with MCPToolset([good, bad], init_timeout=5) as toolset:
            tools = by_name(await toolset.tools())
            assert (await call(tools["whoami"], {})).output == "secure"
            assert "bad" in toolset.errors and "whoami" in tools
    finally:
        server.stop()


async def test_stdio_and_http_servers_together(http_server: HTTPServer) -> None:
    specs = [parse_server_spec(stdio_entry("--name", "local")), parse_server_spec(http_server.url)]
    async with MCPToolset(specs) as toolset:
        tools = by_name(await toolset.tools())
        assert (await call(tools["mcp_server__whoami"], {})).output == "local"
        assert (await call(tools["127_0_0_1__whoami"], {})).output == "web"


async def test_http_server_gone_gives_error_results(events: list[dict[str, Any]]) -> None:
    server = HTTPServer("--name", "first")
    config = parse_server_spec(server.url)
    async with MCPToolset([config], call_timeout=10, init_timeout=5, on_event=events.append) as ts:
        whoami = by_name(await ts.tools())["whoami"]
        assert (await call(whoami, {})).output == "first"
        server.stop()
        down = await call(whoami, {})
        assert not down.success
        assert "mcp_server" not in down.output  # names the HTTP server, not another one
        assert config.name in (down.error or "")
    assert any(e["kind"] in ("mcp.disconnected", "mcp.transport_error") for e in events)
