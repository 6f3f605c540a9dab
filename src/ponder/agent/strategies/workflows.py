"""The workflows as VM programs, built from the spec's named nodes.

```
REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY
              >> WHILE(SINGLE_STRATEGY_CALL).ACTION(REACT_COUNTER) >> AGENT_POST_PROCESS
RUN_BLOCK   = STRATEGY_INIT >> AGENT_ENTRY >> STRATEGY_RUN >> AGENT_POST_PROCESS
```

Step-react's program (`STEP_REACT_BLOCK`) lives with its strategy, in
`ponder.agent.strategies.step_react.program`, imported when a step strategy first needs
it; the nodes shared by all, in `run.nodes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.nodes import (
    agent_entry,
    agent_post_process,
    react_counter,
    single_strategy_call,
    strategy_init,
    strategy_run,
)
from ponder.exceptions import UserError
from ponder.vm import WHILE, Program, compile_program

if TYPE_CHECKING:
    from ponder.agent.strategies.step_react.program import STEP_REACT_BLOCK

    WORKFLOWS: dict[str, tuple[Program, str]]
    """Every built-in workflow program by name, with what runs it."""

__all__ = ["REACT_BLOCK", "RUN_BLOCK", "STEP_REACT_BLOCK", "WORKFLOWS", "program_for"]

REACT_BLOCK: Program = compile_program(
    strategy_init
    >> agent_entry
    >> WHILE(single_strategy_call).ACTION(react_counter)
    >> agent_post_process
)
RUN_BLOCK: Program = compile_program(
    strategy_init >> agent_entry >> strategy_run >> agent_post_process
)


def _step_react_block() -> Program:
    from ponder.agent.strategies.step_react.program import STEP_REACT_BLOCK

    return STEP_REACT_BLOCK


def __getattr__(name: str) -> Any:
    if name == "STEP_REACT_BLOCK":
        return _step_react_block()
    if name == "WORKFLOWS":
        workflows: dict[str, tuple[Program, str]] = {
            "react": (REACT_BLOCK, "the ReAct loop (agent_workflow = 'react')"),
            "step-react": (
                _step_react_block(),
                "the step-driven loop (agent_workflow = 'step-react')",
            ),
            "run": (RUN_BLOCK, "one strategy run: chat (no-action / none) and rag modes"),
        }
        globals()["WORKFLOWS"] = workflows
        return workflows
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def program_for(strategy: type[AgentStrategy]) -> Program:
    """The program that drives ``strategy``, by its category.

    The step program's nodes call `StepReActStrategy`'s hooks, so a ``step`` strategy
    must be one; anything else is a ``UserError``.
    """
    category = strategy.get_category()
    if category == "agent":
        return REACT_BLOCK
    if category != "step":
        return RUN_BLOCK
    from ponder.agent.strategies.step_react.strategy import StepReActStrategy

    if not issubclass(strategy, StepReActStrategy):
        raise UserError(
            f"{strategy.__name__} has category 'step' but is no StepReActStrategy; "
            "subclass StepReActStrategy for the step workflow"
        )
    return _step_react_block()
