"""smolagents ``ToolCallingAgent`` with a ``Model`` subclass (logging off)."""

from __future__ import annotations

import time
from typing import Any

from peer_harness import FANOUT, FINAL, main, time_sync
from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from smolagents.monitoring import LogLevel


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first integer
        b: the second integer
    """
    return a + b


@tool
def fail_tool(a: int, b: int) -> int:
    """Add two integers (this one always fails).

    Args:
        a: the first integer
        b: the second integer
    """
    raise ValueError("boom")


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content or "")


def _done(messages: list[Any]) -> int:
    for message in reversed(messages[-3:]):
        if message.role == MessageRole.TOOL_RESPONSE:
            last = _text(message).strip().splitlines()[-1]
            return int(last) if last.isdigit() else 0
        if message.role == MessageRole.USER:
            return 0
    return 0


def _call(call_id: str, name: str, args: dict[str, Any]) -> ChatMessageToolCall:
    function = ChatMessageToolCallFunction(name=name, arguments=args)
    return ChatMessageToolCall(function=function, id=call_id, type="function")


class StepModel(Model):
    """K calls to ``add``, then ``final_answer``; ``fanout`` calls in one turn when set."""

    def __init__(self, steps: int = 0, fanout: list[str] | None = None) -> None:
        super().__init__(model_id="bench-steps")
        self.steps = steps
        self.fanout = fanout or []

    def generate(
        self,
        messages: list[Any],
        stop_sequences: Any = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        if self.fanout:
            if messages[-1].role == MessageRole.TOOL_RESPONSE:
                calls = [_call("final", "final_answer", {"answer": FINAL})]
            else:
                calls = [_call(f"c{i}", n, {"a": i, "b": 1}) for i, n in enumerate(self.fanout)]
        else:
            done = _done(messages)
            if done >= self.steps:
                calls = [_call("final", "final_answer", {"answer": FINAL})]
            else:
                calls = [_call(f"c{done}", "add", {"a": done, "b": 1})]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)


def _agent(model: StepModel, tools: list[Any], max_steps: int) -> ToolCallingAgent:
    return ToolCallingAgent(
        tools=tools, model=model, max_steps=max_steps, verbosity_level=LogLevel.OFF
    )


def steps(k: int, options: list[str]) -> float:
    agent = _agent(StepModel(k), [add], k + 10)

    def once() -> None:
        result = agent.run("count")
        assert result == FINAL, result

    return time_sync(once)


def parallel(options: list[str]) -> float:
    agent = _agent(StepModel(fanout=["add"] * FANOUT), [add], 10)

    def once() -> None:
        assert agent.run("count") == FINAL

    return time_sync(once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    agent = _agent(StepModel(fanout=["add", "fail_tool", "add"]), [add, fail_tool], 10)
    start = time.perf_counter()
    try:
        result = agent.run("count")
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    step = agent.memory.steps[1]
    observations = str(getattr(step, "observations", "") or "")
    error = str(getattr(step, "error", "") or "")
    kept = sum(line.strip().isdigit() for line in observations.splitlines())
    detail = f"answer={result!r}; step error: {error[:60]}; observations={observations[:40]!r}"
    return {
        "survived": True,
        "kept": kept,
        "detail": detail,
        "seconds": time.perf_counter() - start,
    }


MODEL = StepModel()


def instantiate() -> ToolCallingAgent:
    return _agent(MODEL, [add], 10)


if __name__ == "__main__":
    main(steps, parallel, failure, instantiate)
