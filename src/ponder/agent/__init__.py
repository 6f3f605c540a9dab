"""The agent runtime: `Agent`, strategies, and the workflows they run on the VM.

Names are imported on first use, so ``from ponder.agent import Agent`` loads the agent's
module alone; what a run needs is loaded when the first agent is built and run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ponder.agent.agent import Agent
    from ponder.agent.hooks import Hooks, ModelCall
    from ponder.agent.limits import UsageLimits
    from ponder.agent.output import OutputSpec
    from ponder.agent.result import RunResult
    from ponder.agent.run.context import RunContext
    from ponder.agent.run.state import RunState
    from ponder.agent.strategies.base import AgentStrategy, StrategyCategory
    from ponder.agent.strategies.chat import NoActionStrategy
    from ponder.agent.strategies.rag import RagStrategy
    from ponder.agent.strategies.react import ReActStrategy
    from ponder.agent.strategies.step_react.strategy import StepReActStrategy
    from ponder.agent.stream import RunStream

__all__ = [
    "Agent",
    "AgentStrategy",
    "Hooks",
    "ModelCall",
    "NoActionStrategy",
    "OutputSpec",
    "RagStrategy",
    "ReActStrategy",
    "RunContext",
    "RunResult",
    "RunState",
    "RunStream",
    "StepReActStrategy",
    "StrategyCategory",
    "UsageLimits",
]

_EXPORTS = {
    "Agent": "ponder.agent.agent",
    "AgentStrategy": "ponder.agent.strategies.base",
    "Hooks": "ponder.agent.hooks",
    "ModelCall": "ponder.agent.hooks",
    "NoActionStrategy": "ponder.agent.strategies.chat",
    "OutputSpec": "ponder.agent.output",
    "RagStrategy": "ponder.agent.strategies.rag",
    "ReActStrategy": "ponder.agent.strategies.react",
    "RunContext": "ponder.agent.run.context",
    "RunResult": "ponder.agent.result",
    "RunState": "ponder.agent.run.state",
    "RunStream": "ponder.agent.stream",
    "StepReActStrategy": "ponder.agent.strategies.step_react.strategy",
    "StrategyCategory": "ponder.agent.strategies.base",
    "UsageLimits": "ponder.agent.limits",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ponder.agent' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
