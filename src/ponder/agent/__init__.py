"""The agent runtime: `Agent`, strategies, and the workflows they run on the VM."""

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
