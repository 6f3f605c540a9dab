"""A real uvicorn server on 127.0.0.1 (ephemeral port) in a thread, and scripted agents."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from ponder.agent import Agent
from ponder.messages import AssistantMessage, ToolMessage, UserMessage
from ponder.models import ModelRequest, ModelResponse, ScriptedModel, call_tools, reply
from ponder.tools import tool

ANSWER = "The sums are 3 and 7."


class LiveServer:
    """Serves ``app`` until ``stop``; ``url`` is its base URL."""

    def __init__(self, app: FastAPI) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = ""

    def start(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@contextmanager
def live_server(app: FastAPI) -> Iterator[LiveServer]:
    server = LiveServer(app).start()
    try:
        yield server
    finally:
        server.stop()


def thought(number: int, total: int, text: str, more: bool = True, **extra: Any) -> Any:
    args = {"thought": text, "thought_number": number, "total_thoughts": total}
    return ("sequential_thinking", {**args, "next_thought_needed": more, **extra})


def think(summary: str) -> ModelResponse:
    return call_tools(("think_and_reason", {"last_step": "", "summary": summary}))


def thinking_script() -> list[ModelResponse]:
    """Reasoning, two thoughts, a branch and a revision, two parallel calls (one gated), stop."""
    return [
        think("Plan: think it through, then add."),
        call_tools(thought(1, 3, "Two sums are needed."), thought(2, 3, "Add them by hand.")),
        think("Explore another way and correct the plan."),
        call_tools(
            thought(3, 4, "Or use the adder tool.", branch_from_thought=1, branch_id="tool-path"),
            thought(4, 4, "Use the adder, not by hand.", is_revision=True, revises_thought=2),
        ),
        think("Add both pairs at once."),
        call_tools(("add", {"a": 1, "b": 2}), ("gated_add", {"a": 3, "b": 4})),
        think("Both sums known."),
        call_tools(("agent_stop", {"result": "3 and 7"})),
        reply(ANSWER),
    ]


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def gated_adder(gate: threading.Event) -> Any:
    @tool
    async def gated_add(a: int, b: int) -> int:
        """Add two integers once the test opens the gate.

        Args:
            a: The first number.
            b: The second number.
        """
        await asyncio.to_thread(gate.wait, 60)
        return a + b

    return gated_add


def thinking_agent_factory(gate: threading.Event) -> Any:
    """A fresh agent per run, each with its own copy of the script."""

    def make() -> Agent:
        model = ScriptedModel(thinking_script())
        return Agent(model, tools=[add, gated_adder(gate)], instructions="Be brief.")

    return make


ECHO_FIXED = "17 + 23 = 40."


def echoing_script(request: ModelRequest) -> ModelResponse:
    """Reason, add, stop; answer with ponder's own instruction first, then with the sum."""
    results = {m.name: m.content for m in request.messages if isinstance(m, ToolMessage)}
    if "think_and_reason" not in results:
        return think("Add 17 and 23 with the tool.")
    if "add" not in results:
        return call_tools(("add", {"a": 17, "b": 23}))
    if "agent_stop" not in results:
        return call_tools(("agent_stop", {"result": "40"}))
    if any(isinstance(m, AssistantMessage) and m.text for m in request.messages):
        return reply(ECHO_FIXED)  # asked again after the echo
    last = request.messages[-1]
    assert isinstance(last, ToolMessage | UserMessage)
    return reply(re.sub(r"<[^>]+>", "", str(last.content)))  # ponder's instruction, untagged


def echoing_agent() -> Agent:
    """An agent whose first answer echoes ponder's instruction (a small model's habit)."""
    return Agent(ScriptedModel(echoing_script), tools=[add], enable_thinking_tool=False)


def _echo(request: ModelRequest) -> str:
    return f"echo: {len(request.messages)} messages"


def echo_agent() -> Agent:
    """An agent whose model answers every request with text (no tools, never runs out)."""
    return Agent(ScriptedModel(_echo), instructions="Be brief.")


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """Parse server-sent events from text lines (id, event, data fields)."""
    fields: dict[str, str] = {}
    for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if "data" in fields:
                yield fields
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        fields[name] = fields[name] + "\n" + value if name in fields else value


def run_events(client: httpx.Client, run_id: str) -> list[dict[str, Any]]:
    """A run's events from ``GET /v1/runs/{id}/events``, read until the stream ends."""
    with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        return [json.loads(event["data"]) for event in sse_events(response.iter_lines())]
