"""The step-driven workflow (`step-react`): run time at 3 and 10 plan steps.

A zero-latency fake answers each kind of request from the request alone: the plan
(N linear steps), then per step one ``add`` call, ``agent_stop`` and the step summary,
then the final answer — 3N + 2 model requests a run. Beside it, the same number of
``add`` calls in the plain ReAct loop, so the table shows what planning costs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import time
from collections.abc import AsyncIterator

from bench.agent import add_tool, ponder_agent
from bench.common import table
from ponder.agent import Agent
from ponder.messages import ToolCallPart, ToolMessage
from ponder.models.base import ModelRequest, ModelResponse, StreamEvent
from ponder.models.scripted import reply

__all__ = ["PlanModel", "run"]

STEPS = (3, 10)
REPEAT = 7


class PlanModel:
    """Plans ``steps`` linear steps, does one ``add`` per step, then answers."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self._calls = 0
        self.requests = 0

    @property
    def name(self) -> str:
        """The fake's name."""
        return "bench:plan"

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Answer from the request alone."""
        self.requests += 1
        if request.output is not None:
            return reply(json.dumps(self._structured(request.output.name)))
        if not request.tools:
            return reply("done")
        last = request.messages[-1]
        self._calls += 1
        if isinstance(last, ToolMessage) and last.name == "add":
            return _call(f"s{self._calls}", "agent_stop", {"result": last.content})
        return _call(f"a{self._calls}", "add", {"a": 1, "b": 1})

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """The response in one piece."""
        yield await self.request(request)

    def _structured(self, name: str) -> dict[str, object]:
        if name == "task_plan":
            steps = [
                {
                    "id": f"s{i}",
                    "description": f"part {i}",
                    "depends_on": [f"s{i - 1}"] if i > 1 else [],
                }
                for i in range(1, self.steps + 1)
            ]
            return {"needs_decomposition": True, "reason": "parts", "steps": steps}
        return {"summary": "did the part", "outputs": ["2"]}


def _call(call_id: str, name: str, args: dict[str, object]) -> ModelResponse:
    part = ToolCallPart.from_args(call_id, name, args)
    return ModelResponse(parts=(part,), finish_reason="tool_calls")


def step_agent(steps: int) -> Agent:
    """A step-react agent on `PlanModel`."""
    return Agent(
        PlanModel(steps),
        tools=[add_tool()],
        agent_workflow="step-react",
        agent_thought_mode="chat",
        enable_thinking_tool=False,
        agent_middle_message=False,
        context_strategy="none",
        agent_tool_call_limit=10_000,
    )


def median_run(agent: Agent, loop: asyncio.AbstractEventLoop) -> tuple[float, int]:
    """Median seconds per run, and the model requests of one run."""
    model = agent.model
    before = getattr(model, "requests", 0)
    result = loop.run_until_complete(agent.run("do the parts"))
    if result.output != "done":
        raise RuntimeError(f"step run ended wrongly: {result.stop_reason}")
    requests = getattr(model, "requests", 0) - before
    times = []
    for _ in range(REPEAT):
        gc.collect()
        start = time.perf_counter()
        loop.run_until_complete(agent.run("do the parts"))
        times.append(time.perf_counter() - start)
    return statistics.median(times), requests


def run() -> str:
    """The Markdown section."""
    loop = asyncio.new_event_loop()
    rows = []
    try:
        for n in STEPS:
            step_time, requests = median_run(step_agent(n), loop)
            react_time, _ = median_run(ponder_agent(n), loop)
            rows.append(
                [
                    n,
                    requests,
                    f"{step_time * 1e3:.2f} ms",
                    f"{step_time / n * 1e3:.3f}",
                    f"{react_time * 1e3:.2f} ms",
                    f"{step_time / react_time:.1f}×",
                ]
            )
    finally:
        loop.close()
    headers = [
        "plan steps",
        "model requests",
        "step-react run",
        "ms per plan step",
        "react, same tool calls",
        "step-react / react",
    ]
    return (
        "## Step-driven ReAct\n\n"
        + (__doc__ or "").split("\n\n", 1)[1].strip()
        + "\n\n"
        + (table(headers, rows))
    )
