"""The agent runtime: `Agent`, strategies, and the workflows they run on the VM."""

from ponder.agent.agent import Agent
from ponder.agent.chat import NoActionStrategy
from ponder.agent.hooks import Hooks, ModelCall
from ponder.agent.rag import RagStrategy
from ponder.agent.react import ReActStrategy
from ponder.agent.result import RunResult
from ponder.agent.run import RunContext
from ponder.agent.state import RunState
from ponder.agent.step_react import StepReActStrategy
from ponder.agent.strategy import AgentStrategy, StrategyCategory
from ponder.agent.stream import RunStream

__all__ = [
    "Agent",
    "AgentStrategy",
    "Hooks",
    "ModelCall",
    "NoActionStrategy",
    "RagStrategy",
    "ReActStrategy",
    "RunContext",
    "RunResult",
    "RunState",
    "RunStream",
    "StepReActStrategy",
    "StrategyCategory",
]
