"""pydantic-ai ``Agent`` driven by ``FunctionModel`` (its documented test model)."""

from __future__ import annotations

import asyncio
from typing import Any

from peer_harness import FANOUT, FINAL, add, fail_tool, main, time_async
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

LIMITS = UsageLimits(request_limit=None, tool_calls_limit=None)


def _done(messages: list[ModelMessage]) -> int:
    last = messages[-1]
    if isinstance(last, ModelRequest):
        for part in reversed(last.parts):
            if isinstance(part, ToolReturnPart):
                return int(part.content)
            if isinstance(part, UserPromptPart):
                return 0
    return 0


def stepper(k: int) -> FunctionModel:
    def decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = _done(messages)
        if done >= k:
            return ModelResponse(parts=[TextPart(FINAL)])
        return ModelResponse(parts=[ToolCallPart("add", {"a": done, "b": 1}, f"c{done}")])

    return FunctionModel(decide)


def fanout(names: list[str]) -> FunctionModel:
    def decide(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest) and any(
            isinstance(p, ToolReturnPart) for p in last.parts
        ):
            return ModelResponse(parts=[TextPart(FINAL)])
        calls = [ToolCallPart(n, {"a": i, "b": 1}, f"c{i}") for i, n in enumerate(names)]
        return ModelResponse(parts=calls)

    return FunctionModel(decide)


def _agent(model: FunctionModel, tools: list[Any]) -> Agent[None, str]:
    return Agent(model, tools=tools)  # instrumentation is off unless enabled


def steps(k: int, options: list[str]) -> float:
    agent = _agent(stepper(k), [add])

    async def once() -> None:
        result = await agent.run("count", usage_limits=LIMITS)
        assert result.output == FINAL, result.output

    return time_async(once)


def parallel(options: list[str]) -> float:
    agent = _agent(fanout(["add"] * FANOUT), [add])

    async def once() -> None:
        result = await agent.run("count", usage_limits=LIMITS)
        assert result.output == FINAL

    return time_async(once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    agent = _agent(fanout(["add", "fail_tool", "add"]), [add, fail_tool])
    try:
        result = asyncio.run(agent.run("count", usage_limits=LIMITS))
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    returns = [
        p
        for m in result.all_messages()
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    return {"survived": True, "kept": len(returns), "detail": str(result.output)[:120]}


STEPPER = stepper(0)


def instantiate() -> Agent[None, str]:
    return _agent(STEPPER, [add])


if __name__ == "__main__":
    main(steps, parallel, failure, instantiate)
