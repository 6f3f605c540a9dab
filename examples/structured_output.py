"""A typed final answer: ``output_type`` makes ``result.output`` a pydantic model.

Runs offline on a scripted model (``python examples/structured_output.py``); swap in
``"openai:gpt-4o-mini"`` for a real one — the answer is then asked for with the
provider's JSON-schema ``response_format`` (or a forced output tool where it has none).
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from ponder import Agent, tool
from ponder.models import ScriptedModel, call_tools, reply


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str
    high_celsius: int
    summary: str


@tool
def weather(city: str) -> str:
    """Tomorrow's forecast for a city.

    Args:
        city: The city's name.
    """
    return f"{city}: sunny, high 24 C, light wind"


MODEL = ScriptedModel(
    [
        call_tools(("weather", {"city": "Lisbon"})),
        call_tools(("agent_stop", {"result": "have the forecast"})),
        reply("Lisbon will be sunny tomorrow with a high of 24 C."),
        # the answer was prose: ponder asks for the structure, and the model gives it
        reply('{"city": "Lisbon", "high_celsius": "warm", "summary": "sunny"}'),
        # that did not validate: the errors went back to the model, which fixes it
        reply('{"city": "Lisbon", "high_celsius": 24, "summary": "sunny, light wind"}'),
    ]
)


async def main() -> None:
    """Run the agent and print its typed answer."""
    agent = Agent(
        MODEL,
        tools=[weather],
        output_type=Forecast,
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
    stream = agent.stream("What's the weather in Lisbon tomorrow?")
    async for event in stream:
        if event.kind == "output_rejected":
            print("rejected:", event.problem)
        elif event.kind == "output_partial":
            print("partial:", event.output)
    forecast: Forecast = stream.result.output
    print(f"{forecast.city}: {forecast.high_celsius} °C, {forecast.summary}")


if __name__ == "__main__":
    asyncio.run(main())
