"""Step-react's program: a plan of steps, each run as ReAct rounds until done.

```
STEP_REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY >> DO(STEP_BODY).WHILE(TASK_COND)
                   >> AGENT_POST_PROCESS
STEP_BODY        = NODE_INTRO >> WHILE(ITER_COND).ACTION(STEP_EXEC) >> NODE_LEAVE
```
"""

from __future__ import annotations

from typing import TypeAlias

from ponder.agent.run.state import RunState
from ponder.agent.strategies.nodes import RunDeps, agent_entry, agent_post_process, strategy_init
from ponder.agent.strategies.step_react.strategy import StepReActStrategy
from ponder.vm import DO, WHILE, NodeContext, Program, compile_program, node

__all__ = ["STEP_BODY", "STEP_REACT_BLOCK", "StepNode"]

StepNode: TypeAlias = NodeContext[RunState, RunDeps[StepReActStrategy]]
"""What step-react's own nodes get: the driver gives this program a `StepReActStrategy`."""


@node(name="NODE_INTRO", durable=True)
async def node_intro(ctx: StepNode) -> None:
    """Start the next ready step of the plan."""
    await ctx.deps.strategy.step_intro()


@node(name="ITER_COND")
async def iter_cond(ctx: StepNode) -> bool:
    """Whether the current step runs another round (budgets, stall, stop)."""
    return await ctx.deps.strategy.iteration_continues()


@node(name="STEP_EXEC")
async def step_exec(ctx: StepNode) -> None:
    """One round of the current step, with stall detection."""
    await ctx.deps.strategy.step_execute()


@node(name="NODE_LEAVE", durable=True)
async def node_leave(ctx: StepNode) -> None:
    """Summarise and close the step; compact finished steps when due."""
    await ctx.deps.strategy.step_leave()


@node(name="TASK_COND")
async def task_cond(ctx: StepNode) -> bool:
    """Whether the plan still has a step to run."""
    return await ctx.deps.strategy.task_pending()


STEP_BODY = node_intro >> WHILE(iter_cond).ACTION(step_exec) >> node_leave
STEP_REACT_BLOCK: Program = compile_program(
    strategy_init >> agent_entry >> DO(STEP_BODY).WHILE(task_cond) >> agent_post_process
)
