"""The spec's shared workflow nodes, used by every program, and what they are given.

A node gets a `RunNode`: ``ctx.state`` is the `RunState` and ``ctx.deps`` the run's
`RunDeps` — its `RunContext` and its strategy, both built by the driver. Every node
boundary is a suspend point; the boundaries after `durable` nodes (and every model
response with tool calls, and every tool result) are checkpointed.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeAlias

from ponder.agent.run.deps import RunDeps
from ponder.agent.run.state import RunState
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.compaction import compact_if_needed
from ponder.agent.strategies.final_output import settle_output
from ponder.agent.strategies.report import check_report
from ponder.vm import NodeContext, node

__all__ = [
    "RunDeps",
    "RunNode",
    "agent_entry",
    "agent_post_process",
    "react_counter",
    "single_strategy_call",
    "strategy_init",
    "strategy_run",
]

RunNode: TypeAlias = NodeContext[RunState, RunDeps[AgentStrategy]]


@node(name="STRATEGY_INIT", durable=True)
async def strategy_init(ctx: RunNode) -> None:
    """Put the system prompt and the user's message into the ledger."""
    await ctx.deps.strategy.on_init()


@node(name="AGENT_ENTRY", durable=True)
async def agent_entry(ctx: RunNode) -> None:
    """Run the report guard, keep the context in its window, then start the strategy."""
    run = ctx.deps.run
    if await check_report(run):
        return
    await compact_if_needed(run)
    await ctx.deps.strategy.on_entry()


@node(name="SINGLE_STRATEGY_CALL", returns_awaitable=True)
def single_strategy_call(ctx: RunNode) -> Awaitable[bool]:
    """One think–act round; its value says whether to go on.

    The strategy's coroutine is handed to the VM to await: a run waiting on its model keeps
    no coroutine of this node's.
    """
    return ctx.deps.strategy.single_execute()


@node(name="REACT_COUNTER")
async def react_counter(ctx: RunNode) -> None:
    """Count the round and check for loops."""
    await ctx.deps.strategy.after_round()


@node(name="STRATEGY_RUN", durable=True)
async def strategy_run(ctx: RunNode) -> None:
    """A strategy that takes full control of the turn (unless the turn is already over)."""
    if not ctx.state.done:
        await ctx.deps.strategy.run()


@node(name="AGENT_POST_PROCESS", durable=True)
async def agent_post_process(ctx: RunNode) -> None:
    """Make sure the turn has an answer (of the run's output type, when it has one)."""
    await ctx.deps.strategy.on_post_process()
    await settle_output(ctx.deps.run)
