"""Agno ``Agent`` with a minimal custom ``Model`` subclass that reads the last message.

Agno's ``Model.aresponse`` runs the tool loop: it calls ``ainvoke`` for each turn, runs
the tool calls the returned ``ModelResponse`` names, and calls ``ainvoke`` again. The fake
answers from the tail of the history (the last tool result is the count so far), so it
is stateless and O(1) per turn. Telemetry is off (``telemetry=False``).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from agno.agent import Agent
from agno.models.base import Model
from agno.models.message import Message
from agno.models.response import ModelResponse
from peer_harness import FANOUT, FINAL, add, fail_tool, main, time_async


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass
class StepModel(Model):
    """K calls to ``add``, then the answer; ``fanout`` calls in one turn when set."""

    id: str = "bench-steps"
    name: str = "bench"
    provider: str = "bench"
    steps: int = 0
    fanout: list[str] = field(default_factory=list)

    def _decide(self, messages: list[Message]) -> ModelResponse:
        last = messages[-1]
        if self.fanout:
            if last.role == "tool":
                return ModelResponse(role="assistant", content=FINAL)
            calls = [_call(f"c{i}", n, {"a": i, "b": 1}) for i, n in enumerate(self.fanout)]
            return ModelResponse(role="assistant", tool_calls=calls)
        done = int(str(last.content)) if last.role == "tool" else 0
        if done >= self.steps:
            return ModelResponse(role="assistant", content=FINAL)
        call = _call(f"c{done}", "add", {"a": done, "b": 1})
        return ModelResponse(role="assistant", tool_calls=[call])

    def invoke(self, messages: list[Message], **kwargs: Any) -> ModelResponse:
        return self._decide(messages)

    async def ainvoke(self, messages: list[Message], **kwargs: Any) -> ModelResponse:
        return self._decide(messages)

    def invoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    def ainvoke_stream(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        found: ModelResponse = response  # ainvoke already returns a ModelResponse
        return found

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        found: ModelResponse = response
        return found


def _agent(model: StepModel, tools: list[Any]) -> Agent:
    return Agent(model=model, tools=tools, telemetry=False)


def steps(k: int, options: list[str]) -> float:
    agent = _agent(StepModel(steps=k), [add])

    async def once() -> None:
        result = await agent.arun("count")
        assert result.content == FINAL, result.content

    return time_async(once)


def parallel(options: list[str]) -> float:
    agent = _agent(StepModel(fanout=["add"] * FANOUT), [add])

    async def once() -> None:
        result = await agent.arun("count")
        assert result.content == FINAL, result.content

    return time_async(once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    agent = _agent(StepModel(fanout=["add", "fail_tool", "add"]), [add, fail_tool])
    try:
        result = asyncio.run(agent.arun("count"))
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    outputs = [m for m in result.messages or [] if m.role == "tool"]
    kept = sum(not m.tool_call_error for m in outputs)
    detail = "; ".join(str(m.content)[:50] for m in outputs)
    return {"survived": result.content == FINAL, "kept": kept, "detail": detail}


MODEL = StepModel()


def instantiate() -> Agent:
    return _agent(MODEL, [add])


if __name__ == "__main__":
    main(steps, parallel, failure, instantiate)
