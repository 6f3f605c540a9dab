"""Agents for the AG-UI tests: their models are pure functions of the request."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.messages import ToolMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from tests.server.live import add, think

WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "The weather in a city (the browser knows it).",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}
PLAN = [
    {"id": "1", "description": "Add the numbers", "status": "in_progress"},
    {"id": "2", "description": "Ask the weather", "status": "pending"},
]


def showcase_script(request: ModelRequest) -> ModelResponse:
    """Reason, write a plan, call the server's ``add``, the frontend's ``get_weather``, stop."""
    results = {m.name: m.content for m in request.messages if isinstance(m, ToolMessage)}
    if "think_and_reason" not in results:
        return think("Plan: add first, then ask the browser for the weather.")
    if "todo_write" not in results:
        return call_tools(("todo_write", {"task": "answer", "steps": PLAN}))
    if "add" not in results:
        return call_tools(("add", {"a": 1, "b": 2}))
    offered = any(t.name == "get_weather" for t in request.tools)
    if offered and "get_weather" not in results:
        return call_tools(("get_weather", {"city": "Paris"}))
    if "agent_stop" not in results:
        return call_tools(("agent_stop", {"result": "done"}))
    return reply(f"1 + 2 = {results['add']}; Paris: {results.get('get_weather', 'unknown')}.")


def showcase_agent() -> Agent:
    return Agent(ScriptedModel(showcase_script), tools=[add], enable_todo_tool=True)


def broken_script(request: ModelRequest) -> ModelResponse:
    """A model whose provider is down."""
    raise ConnectionError("the provider is down")


def broken_agent() -> Agent:
    return Agent(ScriptedModel(broken_script), agent_thought_mode="chat")
