"""The spec's shared workflow nodes, used by every program.

A node reaches the run through ``ctx.deps`` (a `RunContext`) and ``ctx.state`` (the
`RunState`). Every node boundary is a suspend point; the boundaries after `durable` nodes (and
every model response with tool calls, and every tool result) are checkpointed.
"""

from __future__ import annotations

from ponder.agent.run.compaction import compact_if_needed
from ponder.agent.run.context import RunContext
from ponder.agent.strategies.report import check_report
from ponder.vm import NodeContext, node

__all__ = [
    "agent_entry",
    "agent_post_process",
    "react_counter",
    "run_context",
    "single_strategy_call",
    "strategy_init",
    "strategy_run",
]


def run_context(ctx: NodeContext) -> RunContext:
    """The run a node belongs to, with the value the run was resumed with."""
    deps = ctx.deps
    assert isinstance(deps, RunContext)
    deps.resume_value = ctx.resume_value
    return deps


@node(name="STRATEGY_INIT", durable=True)
async def strategy_init(ctx: NodeContext) -> None:
    """Put the system prompt and the user's message into the ledger."""
    await run_context(ctx).strategy.on_init()


@node(name="AGENT_ENTRY", durable=True)
async def agent_entry(ctx: NodeContext) -> None:
    """Run the report guard, keep the context in its window, then start the strategy."""
    run = run_context(ctx)
    if await check_report(run):
        return
    await compact_if_needed(run)
    await run.strategy.on_entry()


@node(name="SINGLE_STRATEGY_CALL")
async def single_strategy_call(ctx: NodeContext) -> bool:
    """One think–act round; its value says whether to go on."""
    return await run_context(ctx).strategy.single_execute()


@node(name="REACT_COUNTER")
async def react_counter(ctx: NodeContext) -> None:
    """Count the round and check for loops."""
    await run_context(ctx).strategy.after_round()


@node(name="STRATEGY_RUN", durable=True)
async def strategy_run(ctx: NodeContext) -> None:
    """A strategy that takes full control of the turn (unless the turn is already over)."""
    run = run_context(ctx)
    if not run.state.done:
        await run.strategy.run()


@node(name="AGENT_POST_PROCESS", durable=True)
async def agent_post_process(ctx: NodeContext) -> None:
    """Make sure the turn has an answer."""
    await run_context(ctx).strategy.on_post_process()
