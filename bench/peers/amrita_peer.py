"""amrita-core ``AgentRuntime`` (ReAct strategy) with a fake ``ModelAdapter``.

The adapter registers its own protocol; ``call_tools`` decides from the last few messages
(``add`` returns the step count), ``call_api`` streams the final answer. A run ends the
tool loop with a round that calls no tool (amrita's own end of loop), then its separate
answer completion: K + 2 model requests, like ponder's K add rounds + ``agent_stop`` +
answer. Logging is removed; a fresh session per run so memory does not carry over.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from amrita_sense.logging import logger

logger.remove()

from amrita_core import AgentRuntime, AmritaConfig, minimal_init, simple_tool  # noqa: E402
from amrita_core.base.adapter import ModelAdapter  # noqa: E402
from amrita_core.types import ModelPreset, UniResponse  # noqa: E402
from amrita_core.types.tool import Function, ToolCall  # noqa: E402
from peer_harness import FANOUT, FINAL, main, time_async  # noqa: E402

PLAN: dict[str, Any] = {"steps": 0, "fanout": []}


def _get(message: Any, key: str) -> Any:
    return message.get(key) if isinstance(message, dict) else getattr(message, key, None)


def _done(messages: list[Any]) -> int:
    for message in reversed(messages[-3:]):
        role = _get(message, "role")
        if role == "tool" and _get(message, "name") == "add":
            return int(_get(message, "content"))
        if role == "user":
            return 0
    return 0


def _call(call_id: str, name: str, args: dict[str, Any]) -> ToolCall:
    return ToolCall(id=call_id, function=Function(name=name, arguments=json.dumps(args)))


class StepAdapter(ModelAdapter):
    """History-driven fake: K ``add`` rounds, then a round without calls."""

    @staticmethod
    def get_adapter_protocol() -> str:
        return "bench-steps"

    async def call_tools(
        self, messages: Any, tools: Any, tool_choice: Any = None, **kwargs: Any
    ) -> UniResponse[None, list[ToolCall] | None]:
        messages = messages if isinstance(messages, list) else list(messages)
        fanout: list[str] = PLAN["fanout"]
        calls: list[ToolCall] | None
        if fanout:
            last_is_tool = _get(messages[-1], "role") == "tool"
            calls = (
                None
                if last_is_tool
                else [_call(f"c{i}", n, {"a": i, "b": 1}) for i, n in enumerate(fanout)]
            )
        else:
            done = _done(messages)
            calls = (
                None if done >= PLAN["steps"] else [_call(f"c{done}", "add", {"a": done, "b": 1})]
            )
        return UniResponse(role="assistant", content=None, tool_calls=calls)

    async def call_api(self, messages: Any, **kwargs: Any) -> Any:
        yield FINAL
        yield UniResponse(role="assistant", content=FINAL, tool_calls=None)


@simple_tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a (int): the first integer
        b (int): the second integer
    """
    return a + b


@simple_tool
def fail_tool(a: int, b: int) -> int:
    """Add two integers (this one always fails).

    Args:
        a (int): the first integer
        b (int): the second integer
    """
    raise ValueError("boom")


def _config() -> AmritaConfig:
    config = AmritaConfig()
    config.function_config.agent_tool_call_limit = 100_000
    config.function_config.agent_middle_message = False
    config.llm.memory_length_limit = 1_000_000
    config.llm.context_strategy = "none"
    return config


PRESET = ModelPreset(
    name="bench", model="bench", protocol="bench-steps", base_url="http://x", api_key="k"
)
READY: list[AmritaConfig] = []


async def _run_once(expected: str = FINAL) -> list[Any]:
    if not READY:
        READY.append(_config())
        await minimal_init(READY[0])
    runtime = AgentRuntime(
        READY[0], PRESET, {"role": "system", "content": "Be brief."}, session_id=uuid.uuid4().hex
    )
    chat = runtime.get_chatobject("count")
    async with chat.begin():
        answer = await chat.full_response()
    if answer != expected:
        raise RuntimeError(f"unexpected answer {answer!r}")
    return list(chat.data.messages) if hasattr(chat, "_di_memory") else []


def steps(k: int, options: list[str]) -> float:
    PLAN.update(steps=k, fanout=[])
    return time_async(_run_once)


def parallel(options: list[str]) -> float:
    PLAN.update(steps=0, fanout=["add"] * FANOUT)
    return time_async(_run_once, repeat=21)


def failure(options: list[str]) -> dict[str, Any]:
    PLAN.update(steps=0, fanout=["add", "fail_tool", "add"])
    try:
        messages = asyncio.run(_run_once())
    except Exception as exc:
        return {"survived": False, "kept": 0, "detail": f"{type(exc).__name__}: {exc}"[:120]}
    results = [str(_get(m, "content")) for m in messages if _get(m, "role") == "tool"]
    kept = sum(r.strip().isdigit() for r in results)
    return {"survived": True, "kept": kept, "detail": "; ".join(r[:50] for r in results)}


if __name__ == "__main__":
    main(steps, parallel, failure)
