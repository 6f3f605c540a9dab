"""OpenAI Agents ``Runner`` with a stateless custom ``Model`` (tracing disabled)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.testing import assistant_message, function_call
from agents.usage import Usage
from peer_harness import FANOUT, FINAL, add, fail_tool, main, time_async

set_tracing_disabled(True)


def _item(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _done(items: Any) -> int:
    if isinstance(items, str):
        return 0
    for item in reversed(items[-3:]):
        kind = _item(item, "type")
        if kind == "function_call_output":
            return int(_item(item, "output"))
        if _item(item, "role") == "user":
            return 0
    return 0


class StepModel(Model):
    """K calls to ``add``, then the answer; ``fanout`` calls in one turn when set."""

    def __init__(self, steps: int = 0, fanout: list[str] | None = None) -> None:
        self.steps = steps
        self.fanout = fanout or []

    def _output(self, items: Any) -> list[Any]:
        if self.fanout:
            if not isinstance(items, str) and _item(items[-1], "type") == "function_call_output":
                return [assistant_message(FINAL)]
            return [
                function_call(n, {"a": i, "b": 1}, call_id=f"c{i}")
                for i, n in enumerate(self.fanout)
            ]
        done = _done(items)
        if done >= self.steps:
            return [assistant_message(FINAL)]
        return [function_call("add", {"a": done, "b": 1}, call_id=f"c{done}")]

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        return ModelResponse(output=self._output(input), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the benchmark does not stream")


def _agent(model: StepModel, tools: list[Any]) -> Agent[Any]:
    return Agent(name="bench", model=model, tools=[function_tool(t) for t in tools])


def steps(k: int, options: list[str]) -> float:
    agent = _agent(StepModel(k), [add])

    async def once() -> None:
        result = await Runner.run(agent, "count", max_turns=100_000)
        assert result.final_output == FINAL, result.final_output

    return time_async(once)


def parallel(options: list[str]) -> float:
    agent = _agent(StepModel(fanout=["add"] * FANOUT), [add])

    async def once() -> None:
        result = await Runner.run(agent, "count", max_turns=100)
        assert result.final_output == FINAL

    return time_async(once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    agent = _agent(StepModel(fanout=["add", "fail_tool", "add"]), [add, fail_tool])
    try:
        result = asyncio.run(Runner.run(agent, "count", max_turns=100))
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    outputs = [
        str(_item(i, "output"))
        for i in result.to_input_list()
        if _item(i, "type") == "function_call_output"
    ]
    kept = sum(o.isdigit() for o in outputs)
    return {"survived": True, "kept": kept, "detail": "; ".join(o[:50] for o in outputs)}


MODEL = StepModel()
ADD = function_tool(add)  # the decorator, applied once as at a definition


def instantiate() -> Agent[Any]:
    return Agent(name="bench", model=MODEL, tools=[ADD])


if __name__ == "__main__":
    main(steps, parallel, failure, instantiate)
