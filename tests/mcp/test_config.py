"""Parsing `agent_mcp_server_scripts` entries and structured tables."""

from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from ponder.exceptions import ConfigError
from ponder.mcp import MCPServerConfig, parse_server_spec, parse_server_specs


def test_stdio_json_list() -> None:
    config = parse_server_spec('stdio://["node", "/srv/server-everything/dist/index.js", "stdio"]')
    assert config.transport == "stdio"
    assert config.command == "node"
    assert config.args == ["/srv/server-everything/dist/index.js", "stdio"]
    assert config.name == "server-everything"


def test_plain_command_line_and_script_path() -> None:
    config = parse_server_spec("npx -y @modelcontextprotocol/server-memory@1.2")
    assert (config.command, config.args) == (
        "npx",
        ["-y", "@modelcontextprotocol/server-memory@1.2"],
    )
    assert config.name == "server-memory"
    script = parse_server_spec("tools/weather.py --units metric")
    assert script.command == sys.executable
    assert script.args == ["tools/weather.py", "--units", "metric"]
    assert script.name == "weather"


@pytest.mark.parametrize(
    ("entry", "transport", "url"),
    [
        ("http://localhost:8000/mcp", "streamable_http", "http://localhost:8000/mcp"),
        ("https://api.example.com/mcp", "streamable_http", "https://api.example.com/mcp"),
        (
            "streamable+https://api.example.com/mcp",
            "streamable_http",
            "https://api.example.com/mcp",
        ),
        ("streamable+http://h:9/x?a=1", "streamable_http", "http://h:9/x?a=1"),
        ("sse://h:8080/sse", "sse", "http://h:8080/sse"),
        ("sse+https://h/sse", "sse", "https://h/sse"),
    ],
)
def test_url_forms(entry: str, transport: str, url: str) -> None:
    config = parse_server_spec(entry)
    assert (config.transport, config.url) == (transport, url)


def test_basic_and_bearer_auth_from_url() -> None:
    basic = parse_server_spec("sse+https://alice:s%40cret@example.com/sse")
    assert basic.url == "https://example.com/sse"
    expected = base64.b64encode(b"alice:s@cret").decode()
    assert basic.auth_headers() == {"Authorization": f"Basic {expected}"}
    assert "s@cret" not in repr(basic)
    bearer = parse_server_spec("https://tok123@example.com/mcp")
    assert bearer.auth_headers() == {"Authorization": "Bearer tok123"}
    assert bearer.name == "example_com"


def test_structured_table() -> None:
    config = parse_server_spec(
        {
            "name": "files",
            "transport": "stdio",
            "command": "node",
            "args": ["server.js"],
            "env": {"ROOT": "/tmp"},
            "timeout": 5,
        }
    )
    assert (config.name, config.env, config.timeout) == ("files", {"ROOT": "/tmp"}, 5)
    web = parse_server_spec({"url": "https://h/mcp", "headers": {"X-Key": "1"}, "token": "t"})
    assert web.transport == "streamable_http"
    assert web.auth_headers() == {"X-Key": "1", "Authorization": "Bearer t"}
    assert parse_server_spec({"command": ["uvx", "mcp-server-time"]}).name == "mcp-server-time"


def test_names_made_unique_in_order() -> None:
    configs = parse_server_specs(["http://h/a", "http://h/b", "python s.py"])
    assert [c.name for c in configs] == ["h", "h_2", "s"]


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ('stdio://["node", ', "not a JSON list"),
        ("stdio://[1, 2]", "JSON list of strings"),
        ("stdio://[]", "command is empty"),
        ("ftp://example.com/x", "unknown scheme"),
        ("http:///nohost", "no host"),
        ("http://h:notaport/x", "bad host or port"),
        ("python 'unclosed", "cannot split"),
        (42, "expected a string or a table"),
        ({"transport": "stdio"}, "needs a command"),
        ({"transport": "sse", "url": "ftp://x"}, "http(s) url"),
        ({"command": "x", "colour": "red"}, "colour"),
        ({"command": []}, "command list is empty"),
        ({"command": "x", "timeout": -1}, "timeout"),
        ({"url": "http://h/", "token": "t", "username": "u"}, "give one of token"),
    ],
)
def test_malformed_entries_name_the_entry_and_the_accepted_forms(
    entry: object, problem: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_server_spec(entry)  # type: ignore[arg-type]
    message = str(info.value)
    assert info.value.key == "agent_mcp_server_scripts"
    assert repr(entry) in message
    assert problem in message
    assert "accepted forms" in message


def test_entries_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match="expected a list"):
        parse_server_specs("http://h/mcp")  # type: ignore[arg-type]


def test_config_is_frozen() -> None:
    config = parse_server_spec("http://h/mcp")
    with pytest.raises(ValueError):
        config.url = "http://other/"  # type: ignore[misc]
    assert isinstance(config, MCPServerConfig)


def test_parsing_config_does_not_import_the_sdk() -> None:
    code = (
        "import sys, ponder.mcp; ponder.mcp.parse_server_spec('http://h/'); "
        "print('mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
