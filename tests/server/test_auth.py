"""Bearer-token protection: required on /v1/ when a token is set, absent otherwise."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from ponder.server.app import create_app

from .live import LiveServer, echo_agent, live_server

TOKEN = "s3cret-token"


@pytest.fixture
def protected() -> Iterator[LiveServer]:
    with live_server(create_app(echo_agent(), token=TOKEN)) as running:
        yield running


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": "Bearer"},
    ],
)
def test_requests_without_the_right_token_are_refused(
    protected: LiveServer, headers: dict[str, str]
) -> None:
    for method, path in (
        ("GET", "/v1/runs"),
        ("POST", "/v1/runs"),
        ("POST", "/v1/chat/completions"),
    ):
        response = httpx.request(
            method, protected.url + path, headers=headers, json={"prompt": "x"}
        )
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["type"] == "authentication_error"
    # nothing ran
    listed = httpx.get(protected.url + "/v1/runs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert listed.json()["runs"] == []


def test_the_right_token_is_accepted(protected: LiveServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    started = httpx.post(protected.url + "/v1/runs", headers=auth, json={"prompt": "hi"})
    assert started.status_code == 201
    run_id = started.json()["id"]
    events = httpx.get(f"{protected.url}/v1/runs/{run_id}/events", headers=auth)
    assert events.status_code == 200 and "event: run_finished" in events.text
    in_query = httpx.get(f"{protected.url}/v1/runs/{run_id}", params={"access_token": TOKEN})
    assert in_query.status_code == 401  # a token in a URL would be logged; never accepted
    client = openai.OpenAI(base_url=protected.url + "/v1", api_key=TOKEN, max_retries=0)
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert answer.choices[0].message.content.startswith("echo:")  # type: ignore[union-attr]
    wrong = openai.OpenAI(base_url=protected.url + "/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


def test_viewer_and_schema_stay_public(protected: LiveServer) -> None:
    page = httpx.get(protected.url + "/")
    assert page.status_code == 200 and "ponder" in page.text
    assert httpx.get(protected.url + "/static/viewer.js").status_code == 200
    assert httpx.get(protected.url + "/openapi.json").status_code == 200


def test_without_a_token_no_header_is_needed() -> None:
    with live_server(create_app(echo_agent())) as server:
        assert httpx.get(server.url + "/v1/runs").status_code == 200
        started = httpx.post(server.url + "/v1/runs", json={"prompt": "hi"})
        assert started.status_code == 201
