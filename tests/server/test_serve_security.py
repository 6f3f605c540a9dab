"""No takeover without a token: ``ponder serve`` makes one up, and the settings API keeps
its hands off secrets and off the keys that start processes or reach the network."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ponder.agent import Agent
from ponder.config import AgentConfig
from ponder.models import ScriptedModel
from ponder.server.app import create_app
from tests.cli.test_commands import PONDER, ROOT, environment, free_port, one_line_error, ponder

from .live import LiveServer, live_server

TOKEN = "security-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SECRETS = {
    "base_url": "https://proxy-user:url-password@llm.example/v1?api_key=query-key",
    "agent_mcp_server_scripts": [
        {
            "name": "files",
            "command": "mcp-files",
            "args": ["--root", "/srv"],
            "env": {"FILES_TOKEN": "env-secret", "LOG_LEVEL": "debug"},
        },
        {
            "name": "remote",
            "url": "https://mcp.example/mcp",
            "headers": {"X-Api-Key": "header-secret"},
            "token": "bearer-secret",
        },
        {"name": "basic", "url": "https://mcp.example/b", "username": "u", "password": "pw-secret"},
        {
            "name": "oauth",
            "url": "https://mcp.example/o",
            "oauth": {
                "flow": "client_credentials",
                "client_id": "ponder-client",
                "client_secret": "oauth-secret",
                "token_endpoint_auth_method": "client_secret_basic",
            },
        },
        "https://viewer:script-url-password@mcp.example/sse",
    ],
    "api_key": "sk-api-key",
}
LEAKS = [
    "url-password",
    "query-key",
    "env-secret",
    "header-secret",
    "bearer-secret",
    "pw-secret",
    "oauth-secret",
    "script-url-password",
    "sk-api-key",
]


def secret_agent() -> Agent:
    return Agent(ScriptedModel(["hello"]), config=AgentConfig.from_mapping(SECRETS))


@pytest.fixture
def server() -> Iterator[LiveServer]:
    with live_server(create_app(secret_agent(), token=TOKEN)) as running:
        yield running


def config_values(url: str) -> dict[str, Any]:
    shown = httpx.get(f"{url}/v1/config", headers=AUTH)
    assert shown.status_code == 200, shown.text
    return {k["key"]: k["value"] for s in shown.json()["sections"] for k in s["keys"]}


def test_no_secret_is_shown_by_the_config_api(server: LiveServer) -> None:
    text = httpx.get(f"{server.url}/v1/config", headers=AUTH).text
    assert [leak for leak in LEAKS if leak in text] == []
    values = config_values(server.url)
    assert values["base_url"] == "https://proxy-user:********@llm.example/v1?api_key=********"
    files, remote, basic, oauth, url = values["agent_mcp_server_scripts"]
    assert files["env"] == {"FILES_TOKEN": "********", "LOG_LEVEL": "********"}
    assert files["command"] == "mcp-files" and files["args"] == ["--root", "/srv"]
    assert remote["headers"] == {"X-Api-Key": "********"} and remote["token"] == "********"
    assert basic["password"] == "********" and basic["username"] == "u"
    assert oauth["oauth"]["client_secret"] == "********"
    assert oauth["oauth"]["client_id"] == "ponder-client"
    assert oauth["oauth"]["token_endpoint_auth_method"] == "client_secret_basic"
    assert url == "https://viewer:********@mcp.example/sse"
    assert values["api_key"] is True


def test_unsafe_keys_are_refused_over_http(server: LiveServer) -> None:
    attempts = {
        "base_url": "http://127.0.0.1:9/v1",
        "agent_mcp_server_scripts": ["sh -c id"],
        "agent_mcp_client_enable": True,
        "mcp_roots": ["/"],
        "rag_index_path": "/etc/passwd",
    }
    for key, value in attempts.items():
        answer = httpx.patch(
            f"{server.url}/v1/config", json={"values": {key: value}, "save": True}, headers=AUTH
        )
        assert answer.status_code == 403, (key, answer.text)
        assert answer.json()["error"]["param"] == key
        assert "--allow-unsafe-config" in answer.json()["error"]["message"]
    assert config_values(server.url)["base_url"].startswith("https://proxy-user:")
    safe = httpx.patch(
        f"{server.url}/v1/config", json={"values": {"agent_tool_call_limit": 3}}, headers=AUTH
    )
    assert safe.status_code == 200, safe.text


def test_a_shown_value_sent_back_keeps_its_secrets(server: LiveServer) -> None:
    """The settings page sends back what it showed: nothing changes, nothing is refused."""
    values = config_values(server.url)
    shown = {k: values[k] for k in ("base_url", "agent_mcp_server_scripts")}
    back = httpx.patch(f"{server.url}/v1/config", json={"values": shown}, headers=AUTH)
    assert back.status_code == 200, back.text
    assert config_values(server.url) == values


def test_with_the_opt_in_unsafe_keys_change_and_masked_parts_keep_their_secrets() -> None:
    app = create_app(secret_agent(), token=TOKEN, allow_unsafe_config=True)
    live = app.state.live_config
    with live_server(app) as server:
        scripts = config_values(server.url)["agent_mcp_server_scripts"]
        scripts[0]["env"]["LOG_LEVEL"] = "info"  # the rest of the masked env stays
        body = {"values": {"agent_mcp_server_scripts": scripts, "base_url": "https://b.example"}}
        changed = httpx.patch(f"{server.url}/v1/config", json=body, headers=AUTH)
        assert changed.status_code == 200, changed.text
    real = live.config
    assert real.base_url == "https://b.example"
    first = real.agent_mcp_server_scripts[0]
    assert isinstance(first, dict)
    assert first["env"] == {"FILES_TOKEN": "env-secret", "LOG_LEVEL": "info"}
    assert real.agent_mcp_server_scripts[4] == "https://viewer:script-url-password@mcp.example/sse"
    oauth = real.agent_mcp_server_scripts[3]
    assert isinstance(oauth, dict) and oauth["oauth"]["client_secret"] == "oauth-secret"


def test_a_malformed_masked_value_is_a_clear_400(server: LiveServer) -> None:
    body = {"values": {"temperature": "********"}}
    answer = httpx.patch(f"{server.url}/v1/config", json=body, headers=AUTH)
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "temperature"


def _serve(*args: str) -> tuple[subprocess.Popen[str], str, str]:
    """A ``ponder serve`` process, its base URL and its first lines of output."""
    port = free_port()
    process = subprocess.Popen(
        [PONDER, "serve", "--port", str(port), "-m", "scripted", *args],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while not any(line.startswith("Ctrl-C") for line in lines):
        assert time.monotonic() < deadline and process.poll() is None, process.stderr
        lines.append(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}", "".join(lines)


def _stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=30)
    assert process.returncode == 0


def test_serve_makes_up_a_token_even_on_loopback_and_prints_it() -> None:
    process, url, banner = _serve()
    try:
        found = re.search(r"open the viewer at (\S+)/#token=(\S+)", banner)
        assert found is not None, banner
        assert found.group(1) == url
        token = found.group(2)
        assert len(token) >= 24
        assert httpx.get(f"{url}/v1/runs").status_code == 401
        assert httpx.get(f"{url}/v1/config").status_code == 401
        assert httpx.get(f"{url}/v1/runs", headers={"Authorization": f"Bearer {token}"}).is_success
        wrong = {"Authorization": "Bearer not-it"}
        patched = httpx.patch(f"{url}/v1/config", json={"values": {}}, headers=wrong)
        assert patched.status_code == 401
        assert httpx.get(f"{url}/").status_code == 200  # the page asks for the token
    finally:
        _stop(process)


def test_no_token_is_an_explicit_loopback_only_choice() -> None:
    process, url, banner = _serve("--no-token")
    try:
        assert "any local process can use this server" in banner
        assert httpx.get(f"{url}/v1/runs").status_code == 200
    finally:
        _stop(process)
    refused = ponder("serve", "--host", "0.0.0.0", "--no-token", "-m", "scripted")
    assert refused.returncode == 2 and "--no-token is for loopback" in one_line_error(refused)
    empty = ponder("serve", "--token", " ", "-m", "scripted")
    assert empty.returncode == 2 and "token is empty" in one_line_error(empty)
