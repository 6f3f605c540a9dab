"""The workflows as VM programs, built from the spec's named nodes.

```
REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY
              >> WHILE(SINGLE_STRATEGY_CALL).ACTION(REACT_COUNTER) >> AGENT_POST_PROCESS
RUN_BLOCK   = STRATEGY_INIT >> AGENT_ENTRY >> STRATEGY_RUN >> AGENT_POST_PROCESS
STEP_REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY >> DO(STEP_BODY).WHILE(TASK_COND)
                   >> AGENT_POST_PROCESS
STEP_BODY   = NODE_INTRO >> WHILE(ITER_COND).ACTION(STEP_EXEC) >> NODE_LEAVE
```

Every node boundary is a suspend point; the boundaries after `durable` nodes (and every
model response with tool calls, and every tool result) are checkpointed. A node reaches the run
through ``ctx.deps`` (a `RunContext`) and ``ctx.state`` (the `RunState`).
"""

from __future__ import annotations

from ponder.agent.compaction import compact_if_needed
from ponder.agent.report import check_report
from ponder.agent.run import RunContext
from ponder.agent.step_react import StepReActStrategy
from ponder.agent.strategy import StrategyCategory
from ponder.vm import DO, WHILE, NodeContext, Program, compile_program, node

__all__ = ["REACT_BLOCK", "RUN_BLOCK", "STEP_REACT_BLOCK", "program_for"]


def _run(ctx: NodeContext) -> RunContext:
    deps = ctx.deps
    assert isinstance(deps, RunContext)
    deps.resume_value = ctx.resume_value
    return deps


@node(name="STRATEGY_INIT", durable=True)
async def strategy_init(ctx: NodeContext) -> None:
    """Put the system prompt and the user's message into the ledger."""
    await _run(ctx).strategy.on_init()


def _stepper(ctx: NodeContext) -> StepReActStrategy:
    strategy = _run(ctx).strategy
    assert isinstance(strategy, StepReActStrategy)
    return strategy


@node(name="AGENT_ENTRY", durable=True)
async def agent_entry(ctx: NodeContext) -> None:
    """Run the report guard, keep the context in its window, then start the strategy."""
    run = _run(ctx)
    if await check_report(run):
        return
    await compact_if_needed(run)
    await run.strategy.on_entry()


@node(name="SINGLE_STRATEGY_CALL")
async def single_strategy_call(ctx: NodeContext) -> bool:
    """One think–act round; its value says whether to go on."""
    return await _run(ctx).strategy.single_execute()


@node(name="REACT_COUNTER")
async def react_counter(ctx: NodeContext) -> None:
    """Count the round and check for loops."""
    await _run(ctx).strategy.after_round()


@node(name="STRATEGY_RUN", durable=True)
async def strategy_run(ctx: NodeContext) -> None:
    """A strategy that takes full control of the turn (unless the turn is already over)."""
    run = _run(ctx)
    if not run.state.done:
        await run.strategy.run()


@node(name="NODE_INTRO", durable=True)
async def node_intro(ctx: NodeContext) -> None:
    """Start the next ready step of the plan."""
    await _stepper(ctx).step_intro()


@node(name="ITER_COND")
async def iter_cond(ctx: NodeContext) -> bool:
    """Whether the current step runs another round (budgets, stall, stop)."""
    return await _stepper(ctx).iteration_continues()


@node(name="STEP_EXEC")
async def step_exec(ctx: NodeContext) -> None:
    """One round of the current step, with stall detection."""
    await _stepper(ctx).step_execute()


@node(name="NODE_LEAVE", durable=True)
async def node_leave(ctx: NodeContext) -> None:
    """Summarise and close the step; compact finished steps when due."""
    await _stepper(ctx).step_leave()


@node(name="TASK_COND")
async def task_cond(ctx: NodeContext) -> bool:
    """Whether the plan still has a step to run."""
    return await _stepper(ctx).task_pending()


@node(name="AGENT_POST_PROCESS", durable=True)
async def agent_post_process(ctx: NodeContext) -> None:
    """Make sure the turn has an answer."""
    await _run(ctx).strategy.on_post_process()


REACT_BLOCK: Program = compile_program(
    strategy_init
    >> agent_entry
    >> WHILE(single_strategy_call).ACTION(react_counter)
    >> agent_post_process
)
RUN_BLOCK: Program = compile_program(
    strategy_init >> agent_entry >> strategy_run >> agent_post_process
)

STEP_BODY = node_intro >> WHILE(iter_cond).ACTION(step_exec) >> node_leave
STEP_REACT_BLOCK: Program = compile_program(
    strategy_init >> agent_entry >> DO(STEP_BODY).WHILE(task_cond) >> agent_post_process
)


def program_for(category: StrategyCategory) -> Program:
    """The program that drives a strategy of ``category``."""
    if category == "agent":
        return REACT_BLOCK
    return STEP_REACT_BLOCK if category == "step" else RUN_BLOCK
