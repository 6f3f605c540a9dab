"""Prices of runs from genai-prices: events, results, the CLI and the server show them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from ponder.agent import Agent
from ponder.cost import request_cost
from ponder.models.base import Usage
from ponder.server.app import create_app
from ponder.testing import FakeOpenAIServer
from tests.cli.test_commands import agent_script, ponder
from tests.server.live import live_server
from tests.server.test_runs_sse import follow


def price(model: str, input_tokens: int, output_tokens: int) -> float:
    usage = PriceUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return float(calc_price(usage, model_ref=model, provider_id="openai").total_price)


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(agent_script()) as server:
        yield server


async def test_a_known_model_gives_usage_events_and_the_result_a_price(
    provider: FakeOpenAIServer,
) -> None:
    agent = Agent("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k")
    stream = agent.stream("What is the answer?")
    events = [e async for e in stream]
    usages = [e for e in events if e.kind == "usage"]
    expected, total = [], 0.0
    assert len(usages) == len(provider.requests)
    assert {body["model"] for body in provider.requests} == {"gpt-4o-mini"}
    for before, event in zip([None, *usages], usages, strict=False):
        spent_in = event.input_tokens - (before.input_tokens if before else 0)
        spent_out = event.output_tokens - (before.output_tokens if before else 0)
        total += price("gpt-4o-mini", spent_in, spent_out)
        expected.append(pytest.approx(total))
    assert [e.cost for e in usages] == expected and total > 0
    result = stream.result
    assert result.cost == pytest.approx(total)
    assert events[-1].kind == "run_finished" and events[-1].cost == pytest.approx(total)


async def test_an_unknown_model_shows_tokens_only(provider: FakeOpenAIServer) -> None:
    agent = Agent("openai:fake-model", base_url=provider.base_url, api_key="k")
    result = await agent.run("What is the answer?")
    assert result.usage.input_tokens > 0 and result.cost is None


def test_models_without_a_price_are_not_priced() -> None:
    usage = Usage(requests=1, input_tokens=1000, output_tokens=10)
    assert request_cost("scripted", usage) is None
    assert request_cost("ollama:llama3", usage) is None
    assert request_cost("openai:no-such-model-anywhere", usage) is None
    assert request_cost("openai:gpt-4o-mini", usage) == pytest.approx(
        price("gpt-4o-mini", 1000, 10)
    )


def test_the_cli_shows_the_price_beside_the_tokens(provider: FakeOpenAIServer) -> None:
    result = ponder(
        "run",
        "What is the answer?",
        "-m",
        "openai:gpt-4o-mini",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=provider.base_url,
    )
    assert result.returncode == 0, result.stderr
    tokens = next(line for line in result.stdout.splitlines() if "tokens  in " in line)
    assert " · $0.00" in tokens


def test_the_cli_shows_no_price_for_an_unknown_model(provider: FakeOpenAIServer) -> None:
    result = ponder(
        "run",
        "What is the answer?",
        "-m",
        "openai:fake-model",
        "--json",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=provider.base_url,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(e["cost"] is None for e in events if e["kind"] in ("usage", "run_finished"))


def test_the_server_reports_a_runs_price(provider: FakeOpenAIServer) -> None:
    agent = Agent("openai:gpt-4o-mini", base_url=provider.base_url, api_key="k")
    with live_server(create_app(agent)) as server, httpx.Client(base_url=server.url) as client:
        created = client.post("/v1/runs", json={"prompt": "What is the answer?"})
        assert created.status_code == 201, created.text
        run_id = created.json()["id"]
        events = follow(client, run_id)
        assert events[-1]["kind"] == "run_finished" and events[-1]["cost"] > 0
        summary = client.get(f"/v1/runs/{run_id}").json()
    assert summary["cost"] == pytest.approx(events[-1]["cost"])
