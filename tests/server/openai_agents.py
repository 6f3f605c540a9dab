"""Agents for the OpenAI-endpoint tests: their models are pure functions of the request."""

from __future__ import annotations

import json

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from tests.server.test_resume import PUBLISHED, publish
from tests.server.test_resume import script as publish_script

__all__ = [
    "PUBLISHED",
    "publish_agent",
    "report_agent",
    "report_script",
    "weather_agent",
    "weather_script",
]


def weather_script(request: ModelRequest) -> ModelResponse:
    """Calls the client's ``get_weather`` when it is offered, then answers from its result."""
    results = [m for m in request.messages if isinstance(m, ToolMessage)]
    if results and results[-1].name == "get_weather":
        return reply(f"In Paris: {results[-1].content}.")
    if any(t.name == "get_weather" for t in request.tools):
        return call_tools(("get_weather", {"city": "Paris"}))
    return reply(f"{len(request.messages)} messages")


def weather_agent() -> Agent:
    """One agent shared by every request; answers in ``chat`` mode (a text reply ends it)."""
    return Agent(
        ScriptedModel(weather_script), agent_thought_mode="chat", enable_thinking_tool=False
    )


def report_script(request: ModelRequest) -> ModelResponse:
    """`weather_script`, whose answer, once asked for a structure, is a weather report."""
    if request.output is None:
        return weather_script(request)
    results = [m.content for m in request.messages if isinstance(m, ToolMessage)]
    sky = results[-1] if results else "unknown"
    if "items" in json.dumps(request.output.json_schema):
        return reply(json.dumps({"response": [{"city": "Paris", "sky": sky}]}))
    return reply(json.dumps({"city": "Paris", "sky": sky}))


def report_agent() -> Agent:
    """Answers in text, or with a ``{"city", "sky"}`` report when the request types it."""
    return Agent(
        ScriptedModel(report_script), agent_thought_mode="chat", enable_thinking_tool=False
    )


def publish_agent() -> Agent:
    """An agent whose one tool waits for approval."""
    return Agent(
        ScriptedModel(publish_script),
        tools=[publish],
        agent_thought_mode="chat",
        enable_thinking_tool=False,
    )
