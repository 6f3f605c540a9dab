"""The OpenAI Agents SDK drives a ponder agent: its function tools loop, its output types."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from ponder.server.app import create_app

from .live import LiveServer, live_server
from .openai_agents import report_agent

agents = pytest.importorskip("agents")
CALLED: list[str] = []


class Report(BaseModel):
    city: str
    sky: str


def weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    CALLED.append(city)
    return "18 °C and cloudy"


get_weather = agents.function_tool(weather, name_override="get_weather")


@pytest.fixture
def server() -> Iterator[LiveServer]:
    agents.set_tracing_disabled(True)  # nothing goes out to OpenAI's trace endpoint
    CALLED.clear()
    with live_server(create_app(report_agent())) as running:
        yield running


def sdk_agent(server: LiveServer, **options: Any) -> Any:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)
    model = agents.OpenAIChatCompletionsModel(model="ponder", openai_client=client)
    return agents.Agent(name="weather", instructions="Be brief.", model=model, **options)


def statuses(server: LiveServer) -> list[str]:
    return [r["status"] for r in httpx.get(f"{server.url}/v1/runs").json()["runs"]]


async def test_a_function_tool_runs_on_the_sdk_side_of_the_loop(server: LiveServer) -> None:
    agent = sdk_agent(server, tools=[get_weather])
    result = await agents.Runner.run(agent, "What is the weather in Paris?")
    assert result.final_output == "In Paris: 18 °C and cloudy."
    assert CALLED == ["Paris"]
    assert statuses(server) == ["completed"]  # one ponder run, suspended and resumed

    streamed = agents.Runner.run_streamed(agent, "What is the weather in Paris?")
    kinds = [event.type async for event in streamed.stream_events()]
    assert "raw_response_event" in kinds
    assert streamed.final_output == "In Paris: 18 °C and cloudy."
    assert CALLED == ["Paris", "Paris"]


async def test_an_output_type_gets_the_typed_answer(server: LiveServer) -> None:
    agent = sdk_agent(server, output_type=Report)
    result = await agents.Runner.run(agent, "What is the weather in Paris?")
    assert result.final_output == Report(city="Paris", sky="unknown")

    with_tool = sdk_agent(server, output_type=Report, tools=[get_weather])
    result = await agents.Runner.run(with_tool, "What is the weather in Paris?")
    assert result.final_output == Report(city="Paris", sky="18 °C and cloudy")
    streamed = agents.Runner.run_streamed(with_tool, "What is the weather in Paris?")
    async for _ in streamed.stream_events():
        pass
    assert streamed.final_output == Report(city="Paris", sky="18 °C and cloudy")
    assert statuses(server) == ["completed"] * 3
