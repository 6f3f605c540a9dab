"""The agent runtime: `Agent`, strategies, and the workflows they run on the VM."""

from ponder.agent.agent import Agent
from ponder.agent.chat import NoActionStrategy
from ponder.agent.hooks import Hooks, ModelCall
from ponder.agent.react import ReActStrategy
from ponder.agent.result import RunResult
from ponder.agent.run import RunContext
from ponder.agent.state import RunState
from ponder.agent.strategy import AgentStrategy, StrategyCategory

__all__ = [
    "Agent",
    "AgentStrategy",
    "Hooks",
    "ModelCall",
    "NoActionStrategy",
    "ReActStrategy",
    "RunContext",
    "RunResult",
    "RunState",
    "StrategyCategory",
]
