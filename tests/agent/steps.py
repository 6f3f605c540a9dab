"""Script pieces for step-workflow tests: plans and step summaries as the model writes them."""

from __future__ import annotations

import json
from typing import Any

from ponder.agent import Agent
from ponder.models import ModelResponse, ScriptedModel, reply
from ponder.tools import tool


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def plan(*steps: tuple[str, str, list[str]], reason: str = "several parts") -> ModelResponse:
    items = [{"id": i, "description": d, "depends_on": deps} for i, d, deps in steps]
    return reply(json.dumps({"needs_decomposition": True, "reason": reason, "steps": items}))


def no_plan(reason: str = "simple") -> ModelResponse:
    return reply(json.dumps({"needs_decomposition": False, "reason": reason, "steps": []}))


def summary(text: str, *outputs: str) -> ModelResponse:
    return reply(json.dumps({"summary": text, "outputs": list(outputs)}))


def step_agent(model: ScriptedModel, **config: Any) -> Agent:
    config.setdefault("agent_thought_mode", "chat")
    config.setdefault("agent_workflow", "step-react")
    return Agent(model, tools=[lookup], enable_thinking_tool=False, **config)


def tool_names(request: Any) -> list[str]:
    return [t.name for t in request.tools]
