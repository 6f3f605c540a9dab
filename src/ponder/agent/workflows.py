"""The workflows as VM programs, built from the spec's named nodes.

```
REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY
              >> WHILE(SINGLE_STRATEGY_CALL).ACTION(REACT_COUNTER) >> AGENT_POST_PROCESS
RUN_BLOCK   = STRATEGY_INIT >> AGENT_ENTRY >> STRATEGY_RUN >> AGENT_POST_PROCESS
```

Every node boundary is a suspend point and a possible checkpoint; a node reaches the run
through ``ctx.deps`` (a `RunContext`) and ``ctx.state`` (the `RunState`).
"""

from __future__ import annotations

from ponder.agent.run import RunContext
from ponder.agent.strategy import StrategyCategory
from ponder.vm import WHILE, NodeContext, Program, compile_program, node

__all__ = ["REACT_BLOCK", "RUN_BLOCK", "program_for"]


def _run(ctx: NodeContext) -> RunContext:
    deps = ctx.deps
    assert isinstance(deps, RunContext)
    deps.resume_value = ctx.resume_value
    return deps


@node(name="STRATEGY_INIT")
async def strategy_init(ctx: NodeContext) -> None:
    """Put the system prompt and the user's message into the ledger."""
    await _run(ctx).strategy.on_init()


@node(name="AGENT_ENTRY")
async def agent_entry(ctx: NodeContext) -> None:
    """Let the strategy start working on the turn."""
    await _run(ctx).strategy.on_entry()


@node(name="SINGLE_STRATEGY_CALL")
async def single_strategy_call(ctx: NodeContext) -> bool:
    """One think–act round; its value says whether to go on."""
    return await _run(ctx).strategy.single_execute()


@node(name="REACT_COUNTER")
async def react_counter(ctx: NodeContext) -> None:
    """Count the round and check for loops."""
    await _run(ctx).strategy.after_round()


@node(name="STRATEGY_RUN")
async def strategy_run(ctx: NodeContext) -> None:
    """A strategy that takes full control of the turn."""
    await _run(ctx).strategy.run()


@node(name="AGENT_POST_PROCESS")
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


def program_for(category: StrategyCategory) -> Program:
    """The program that drives a strategy of ``category``."""
    return REACT_BLOCK if category == "agent" else RUN_BLOCK
