"""Property-based requests from the OpenAPI schema (schemathesis): never a 5xx."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from ponder.server.app import create_app
from ponder.store import MemoryStore

from .live import LiveServer, echo_agent, live_server


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    app = create_app(echo_agent(), max_body_bytes=100_000, store=MemoryStore())
    with live_server(app) as running:
        yield running


def test_schema_describes_every_endpoint(server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    paths = set(schema.raw_schema["paths"])
    assert paths == {
        "/v1/runs",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}/cancel",
        "/v1/runs/{run_id}/resume",
        "/v1/runs/{run_id}/elicitations",
        "/v1/runs/{run_id}/elicitations/{request_id}",
        "/v1/chat/completions",
        "/v1/config",
        "/v1/models",
        "/v1/models/{model_id}",
        "/v1/agui",
    }


def test_no_generated_request_gets_a_server_error(server: LiveServer) -> None:
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    tested = []
    for operation in schema.get_all_operations():
        api_operation = operation.ok()  # type: ignore[union-attr]

        @settings(
            max_examples=15,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        @given(case=api_operation.as_strategy())
        def check(case: schemathesis.Case) -> None:
            response = case.call(base_url=server.url, timeout=30)
            case.validate_response(response, checks=[not_a_server_error])

        check()
        tested.append(api_operation.label)
    assert len(tested) == 14
    # generated bodies really reached the agent: runs were started and answered
    runs = httpx.get(server.url + "/v1/runs").json()["runs"]
    assert runs and all(r["status"] in ("completed", "running") for r in runs)
