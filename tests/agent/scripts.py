"""Script pieces for agent tests: the built-in calls a model makes."""

from __future__ import annotations

from typing import Any

from ponder.agent import Agent
from ponder.events import Event
from ponder.models import ModelResponse, call_tools
from ponder.tools import tool

PROMPT = "What is 17 times 23? Use the multiply tool."


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a * b


def make_agent(model: Any, **config: Any) -> Agent[Any]:
    """An agent with the multiply tool and no sequential thinking (a short prompt)."""
    return Agent(model, tools=[multiply], enable_thinking_tool=False, **config)


def think(summary: str, last_step: str = "") -> ModelResponse:
    return call_tools(("think_and_reason", {"last_step": last_step, "summary": summary}))


def stop(result: str = "done") -> ModelResponse:
    return call_tools(("agent_stop", {"result": result}))


def verify(result: str, detail: str = "", check_type: str = "self_check") -> ModelResponse:
    return call_tools(
        ("verify_reasoning", {"check_type": check_type, "result": result, "detail": detail})
    )


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def of_kind(events: list[Event], kind: str) -> list[Any]:
    return [e for e in events if e.kind == kind]
