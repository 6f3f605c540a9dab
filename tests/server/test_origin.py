"""Cross-site requests and foreign Host headers are refused; `ponder serve` knows loopback."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ponder.server.app import create_app

from ..cli.test_commands import one_line_error, ponder
from .live import LiveServer, echo_agent, live_server


@pytest.fixture
def server() -> Iterator[LiveServer]:
    app = create_app(echo_agent(), allowed_hosts=["127.0.0.1", "localhost"])
    with live_server(app) as running:
        yield running


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"content-type": "text/plain"},
        {"content-type": "application/x-www-form-urlencoded"},
        {"content-type": "multipart/form-data; boundary=x"},
    ],
)
def test_a_cross_site_cancel_is_refused(server: LiveServer, headers: dict[str, str]) -> None:
    response = httpx.post(f"{server.url}/v1/runs/some-run/cancel", headers=headers, content=b"")
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "cross_site_request"


def test_json_or_the_custom_header_passes(server: LiveServer) -> None:
    started = httpx.post(f"{server.url}/v1/runs", json={"prompt": "hello"})
    assert started.status_code == 201
    run_id = started.json()["id"]
    plain = httpx.post(f"{server.url}/v1/runs/{run_id}/cancel", headers={"X-Ponder-Request": "1"})
    assert plain.status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "attacker:80"])
def test_a_foreign_host_header_is_refused(server: LiveServer, host: str) -> None:
    response = httpx.get(f"{server.url}/v1/runs", headers={"host": host})
    assert response.status_code == 403
    assert response.json()["error"]["type"] == "host_not_allowed"
    page = httpx.get(f"{server.url}/", headers={"host": host})
    assert page.status_code == 403


def test_the_bound_host_names_are_served(server: LiveServer) -> None:
    port = server.url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", f"localhost:{port}"):
        assert httpx.get(f"{server.url}/v1/runs", headers={"host": host}).status_code == 200


def test_a_host_name_that_starts_with_127_is_not_loopback() -> None:
    result = ponder("serve", "--host", "127.0.0.1.evil.example", "-m", "scripted")
    assert result.returncode == 2
    assert "needs a bearer token" in one_line_error(result)
