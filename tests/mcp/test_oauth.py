"""OAuth 2.1 against a local OAuth-protected MCP server (the SDK's server auth pieces).

The "browser" is `tests/fixtures/fake_browser.py`, registered with `webbrowser.register`:
it follows the authorization URL like a user who approves, which lands on ponder's local
redirect listener.
"""

from __future__ import annotations

import asyncio
import json
import stat
import subprocess
import sys
import webbrowser
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ponder.exceptions import ConfigError
from ponder.mcp import MCPToolset, parse_server_spec
from ponder.mcp.config import OAuthSettings
from ponder.tools.tool import Tool, ToolContext

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


class OAuthServer:
    def __init__(self, *args: str) -> None:
        command = [sys.executable, str(FIXTURES / "oauth_mcp_server.py"), *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"the OAuth fixture did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture(autouse=True, scope="module")
def approving_browser() -> None:
    browser = webbrowser.GenericBrowser([sys.executable, str(FIXTURES / "fake_browser.py"), "%s"])
    webbrowser.register("ponder-test-browser", None, browser, preferred=True)


@pytest.fixture
def start_server() -> Iterator[Callable[..., OAuthServer]]:
    started: list[OAuthServer] = []

    def start(*args: str) -> OAuthServer:
        started.append(OAuthServer(*args))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def toolset(server: OAuthServer, store: Path, events: list[dict[str, Any]]) -> MCPToolset:
    entry = {"name": "guarded", "url": server.url, "oauth": {"token_store": str(store)}}
    return MCPToolset([parse_server_spec(entry)], init_timeout=20, on_event=events.append)


async def call(tool: Tool) -> str:
    result = await tool.function(ToolContext(run_id="r", call_id="c", tool_name=tool.name), {})
    assert result.success, result.error
    return result.output


async def test_browser_flow_registers_authorizes_and_keeps_tokens(
    start_server: Callable[..., OAuthServer], tmp_path: Path
) -> None:
    oauth_server = start_server()
    events: list[dict[str, Any]] = []
    async with toolset(oauth_server, tmp_path, events) as first:
        tools = {t.name: t for t in await first.tools()}
        assert await call(tools["secret"]) == "the secret is 42"
    [stored] = list(tmp_path.glob("*.json"))
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    saved = json.loads(stored.read_text())
    token = saved["tokens"]["access_token"]
    assert saved["url"] == oauth_server.url and saved["client"]["client_id"]
    assert token not in json.dumps(events, default=str)

    async with toolset(oauth_server, tmp_path, events) as again:  # a restart: no new consent
        tools = {t.name: t for t in await again.tools()}
        counts = json.loads(await call(tools["stats"]))
    assert counts == {"registered": 1, "authorized": 1, "exchanged": 1, "refreshed": 0}


async def test_an_expired_access_token_is_refreshed(
    start_server: Callable[..., OAuthServer], tmp_path: Path
) -> None:
    oauth_server = start_server("--expires", "2")
    async with toolset(oauth_server, tmp_path, []) as ts:
        tools = {t.name: t for t in await ts.tools()}
        assert not ts.errors, ts.errors
        await call(tools["secret"])
        await asyncio.sleep(2.5)
        counts = json.loads(await call(tools["stats"]))
    # the client may also see a 401 first when its clock runs behind the server's
    assert counts["refreshed"] >= 1


async def test_a_refused_refresh_falls_back_to_a_new_authorization(
    start_server: Callable[..., OAuthServer], tmp_path: Path
) -> None:
    oauth_server = start_server("--expires", "1", "--no-refresh")
    async with toolset(oauth_server, tmp_path, []) as ts:
        tools = {t.name: t for t in await ts.tools()}
        assert not ts.errors, ts.errors
        await call(tools["secret"])
        await asyncio.sleep(1.5)
        counts = json.loads(await call(tools["stats"]))
    assert counts["authorized"] >= 2 and counts["refreshed"] == 0


async def test_a_refusing_authorization_server_is_an_error_for_that_server(
    start_server: Callable[..., OAuthServer], tmp_path: Path
) -> None:
    oauth_server = start_server("--deny")
    events: list[dict[str, Any]] = []
    async with toolset(oauth_server, tmp_path, events) as ts:
        assert await ts.tools() == []
        assert "authorization refused: access_denied" in ts.errors["guarded"]
    failed = [e for e in events if e["kind"] == "mcp.connect_failed"]
    assert failed and "access_denied" in failed[0]["error"]


def test_oauth_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="needs client_id and client_secret"):
        parse_server_spec({"url": "https://x.test/mcp", "oauth": {"flow": "client_credentials"}})
    with pytest.raises(ConfigError, match="oauth is for HTTP servers"):
        parse_server_spec({"command": ["srv"], "oauth": True})
    with pytest.raises(ConfigError, match="one of token"):
        parse_server_spec({"url": "https://x.test/mcp", "token": "t", "oauth": True})
    config = parse_server_spec({"url": "https://x.test/mcp", "oauth": True})
    assert config.oauth == OAuthSettings()
    secret = {"flow": "client_credentials", "client_id": "c", "client_secret": "hush"}
    described = parse_server_spec({"url": "https://x.test/mcp", "oauth": secret})
    assert "hush" not in repr(described) and "hush" not in described.describe()


async def test_the_extension_flows_check_their_settings(tmp_path: Path) -> None:
    url = "https://x.test/mcp"
    with pytest.raises(ConfigError, match="private_key_jwt flow needs client_id"):
        parse_server_spec({"url": url, "oauth": {"flow": "private_key_jwt"}})
    with pytest.raises(ConfigError, match="needs private_key or private_key_file"):
        parse_server_spec({"url": url, "oauth": {"flow": "private_key_jwt", "client_id": "c"}})
    with pytest.raises(ConfigError, match="needs issuer and id_token and idp_token_endpoint"):
        parse_server_spec(
            {
                "url": url,
                "oauth": {"flow": "identity_assertion", "client_id": "c", "client_secret": "s"},
            }
        )
    from ponder.mcp.oauth import build_oauth

    missing = tmp_path / "nope.pem"
    config = parse_server_spec(
        {
            "url": url,
            "oauth": {
                "flow": "private_key_jwt",
                "client_id": "c",
                "private_key_file": str(missing),
            },
        }
    )
    with pytest.raises(ConfigError, match="private_key_file: cannot read"):
        await build_oauth(config)


async def test_an_identity_provider_that_refuses_the_exchange_is_a_clear_error() -> None:
    from mcp.client.auth import OAuthFlowError

    from ponder.mcp.oauth_grants import id_jag_exchange
    from tests.server.live import live_server

    seen: list[dict[str, Any]] = []

    app = FastAPI()

    @app.post("/token")
    async def token(request: Request) -> JSONResponse:
        seen.append(dict(await request.form()))
        return JSONResponse({"error": "invalid_grant"}, status_code=400)

    with live_server(app) as idp:
        settings = OAuthSettings(
            flow="identity_assertion",
            client_id="c",
            client_secret="s",
            issuer="https://as",
            id_token="the-id-token",
            idp_token_endpoint=f"{idp.url}/token",
            idp_client_id="i",
        )
        exchange = id_jag_exchange(settings)
        with pytest.raises(OAuthFlowError, match=r"refused the token exchange \(400 invalid_grant"):
            await exchange("https://as", "https://mcp.test/mcp")
    [form] = seen
    assert form["subject_token"] == "the-id-token" and form["audience"] == "https://as"
    assert form["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_tokens_are_kept_in_the_run_store_when_it_is_configured(
    kind: str, start_server: Callable[..., OAuthServer], tmp_path: Path
) -> None:
    from ponder.store import open_store
    from tests.store.conftest import PG_DSN, isolated_schema, postgres_available

    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.db'}"
    else:
        if not postgres_available():
            pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
        url = f"{PG_DSN}?options=-csearch_path%3D{isolated_schema()}"
    oauth_server = start_server()
    events: list[dict[str, Any]] = []
    entry = {"name": "guarded", "url": oauth_server.url, "oauth": {"token_store": url}}

    def toolset() -> MCPToolset:
        return MCPToolset([parse_server_spec(entry)], init_timeout=20, on_event=events.append)

    async with toolset() as first:
        tools = {t.name: t for t in await first.tools()}
        assert await call(tools["secret"]) == "the secret is 42"
    store = open_store(url)
    saved = await store.get_secret("mcp-oauth", oauth_server.url)
    await store.close()
    assert saved is not None and saved["client"]["client_id"]
    token = saved["tokens"]["access_token"]
    assert token not in json.dumps(events, default=str)
    assert not list(tmp_path.glob("*.json"))
    async with toolset() as again:  # a restart: the stored tokens are used, no new consent
        tools = {t.name: t for t in await again.tools()}
        counts = json.loads(await call(tools["stats"]))
    assert counts == {"registered": 1, "authorized": 1, "exchanged": 1, "refreshed": 0}


async def test_a_store_without_secrets_says_so() -> None:
    from ponder.exceptions import StoreError
    from ponder.store import MemoryStore
    from ponder.store.base import Store

    memory = MemoryStore()
    await memory.set_secret("s", "n", {"a": 1})
    assert await memory.get_secret("s", "n") == {"a": 1}
    assert await memory.get_secret("s", "other") is None
    with pytest.raises(StoreError, match="keeps no secrets"):
        await Store.get_secret(memory, "s", "n")
