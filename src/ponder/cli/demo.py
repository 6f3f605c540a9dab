"""`ponder demo`: an offline agent run on `ScriptedModel`, shown with the live view.

The script exercises the whole think–act round: forced ``think_and_reason``, sequential
thoughts with a branch and a revision, two tool calls run concurrently, ``agent_stop``
and a streamed final answer. No network and no API key are needed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from typing import Any

from ponder.agent import Agent
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.models.base import StreamEvent, TextDelta
from ponder.tools import tool

__all__ = ["DEMO_TASK", "PacedModel", "demo_agent", "demo_script", "main"]

DEMO_TASK = "Which is warmer right now, Lisbon or Oslo, and by how much?"
_TEMPERATURES = {"lisbon": 17.0, "oslo": -3.0}


@tool
async def current_temperature(city: str) -> dict[str, Any]:
    """The current air temperature of a city, in degrees Celsius.

    Args:
        city: The city's name, e.g. "Lisbon".
    """
    await asyncio.sleep(0.05)
    celsius = _TEMPERATURES.get(city.strip().lower())
    if celsius is None:
        raise ValueError(f"no weather station for {city!r}; known: Lisbon, Oslo")
    return {"city": city, "celsius": celsius}


def _think(summary: str, last_step: str = "") -> ModelResponse:
    return call_tools(("think_and_reason", {"last_step": last_step, "summary": summary}))


def _thought(number: int, total: int, text: str, more: bool = True, **extra: Any) -> Any:
    args = {
        "thought": text,
        "thought_number": number,
        "total_thoughts": total,
        "next_thought_needed": more,
        **extra,
    }
    return ("sequential_thinking", args)


def demo_script() -> list[ModelResponse]:
    """The model's side of the demo conversation, one response per request."""
    return [
        _think("I need both cities' current temperatures, then I compare them."),
        call_tools(
            _thought(1, 3, "To compare the cities fairly I need both temperatures right now."),
            _thought(2, 3, "Oslo is far north, so it is probably the colder one; I will check."),
        ),
        _think("Fetch both temperatures at once.", last_step="planned the comparison"),
        call_tools(
            ("current_temperature", {"city": "Lisbon"}),
            ("current_temperature", {"city": "Oslo"}),
        ),
        _think("Lisbon is 17 °C and Oslo -3 °C.", last_step="fetched both temperatures"),
        call_tools(
            _thought(
                3,
                4,
                "Checked: Oslo is -3 °C and Lisbon 17 °C, so the guess holds, now on data.",
                is_revision=True,
                revises_thought=2,
            ),
            _thought(
                4,
                4,
                "Wind can make Oslo feel even colder, which only widens the gap.",
                more=False,
                branch_from_thought=1,
                branch_id="feels-like",
            ),
        ),
        _think("Everything needed is known; answer now.", last_step="compared the readings"),
        call_tools(("agent_stop", {"result": "Lisbon is 20 °C warmer than Oslo."})),
        reply(
            "Lisbon is warmer: it is 17 °C there and -3 °C in Oslo, so Lisbon is "
            "20 degrees Celsius warmer right now."
        ),
    ]


class PacedModel:
    """Wraps a model and waits ``delay`` seconds per request, so a live view can be watched."""

    def __init__(self, inner: ScriptedModel, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    @property
    def name(self) -> str:
        """The wrapped model's name."""
        return self.inner.name

    async def request(self, request: ModelRequest) -> ModelResponse:
        """The wrapped model's response, after the delay."""
        await asyncio.sleep(self.delay)
        return await self.inner.request(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The wrapped model's stream, text split into words and paced."""
        await asyncio.sleep(self.delay)
        async for item in self.inner.stream(request):
            if isinstance(item, TextDelta):
                for word in item.text.split(" ")[:-1]:
                    yield TextDelta(word + " ")
                    await asyncio.sleep(self.delay / 10)
                yield TextDelta(item.text.split(" ")[-1])
            else:
                yield item


def demo_agent(delay: float = 0.4) -> Agent:
    """The demo agent: the script above, the temperature tool, default configuration."""
    model = PacedModel(ScriptedModel(demo_script(), name="scripted-demo"), delay)
    return Agent(
        model,
        tools=[current_temperature],
        instructions="Answer weather questions from measurements, briefly.",
    )


def main() -> None:
    """Run the demo in this terminal (``python -m ponder.cli.demo``)."""
    from ponder.cli.main import main as cli_main

    sys.argv = ["ponder", "demo", *sys.argv[1:]]
    cli_main()


if __name__ == "__main__":
    main()
