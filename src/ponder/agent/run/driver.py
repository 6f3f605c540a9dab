"""Driving one run on the VM to its end: finished, suspended, failed or cancelled.

The driver builds what a run needs around its `RunContext`: the checkpointer (with a
store), the strategy, and the `RunDeps` the nodes get. With a store, the run holds a lease
for as long as it is driven, the durable boundaries are checkpointed, and the run's final
status is written before the lease is released.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from ponder.agent.result import RunResult
from ponder.agent.run.approval import accept_decision
from ponder.agent.run.checkpointer import Checkpointer
from ponder.agent.run.context import RunContext
from ponder.agent.run.nodes import RunDeps
from ponder.agent.run.state import RunState
from ponder.agent.strategies.base import AgentStrategy
from ponder.events import RunCancelled, RunFailed, RunFinished, RunResumed, RunStarted, RunSuspended
from ponder.exceptions import RunLeaseError, UserError, VMError
from ponder.store.base import Store
from ponder.vm import Finished, Interpreter, Outcome, Program

__all__ = ["LEASE_SECONDS", "resume_run", "start_run"]

LEASE_SECONDS = 600.0


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


async def start_run(
    ctx: RunContext, strategy_type: type[AgentStrategy], program: Program, store: Store | None
) -> RunResult:
    """Run a fresh state from the program's start."""
    checkpointer = ctx.checkpointer = Checkpointer(store, ctx) if store is not None else None
    deps = RunDeps(ctx, strategy_type(ctx))
    after = checkpointer.after_node if checkpointer is not None else None
    vm = Interpreter(program, ctx.state, deps=deps, after=after)
    state = ctx.state
    await ctx.emit(
        RunStarted(prompt=state.prompt, workflow=ctx.config.agent_workflow, model=ctx.model.name)
    )
    return await _drive(deps, vm, store, vm.run)


async def resume_run(
    ctx: RunContext,
    strategy_type: type[AgentStrategy],
    program: Program,
    store: Store,
    run_id: str,
    value: Any,
) -> RunResult:
    """Continue a stored run after a crash or a suspension; ``ctx`` gets its restored state."""
    stored = await store.load(run_id)
    if stored.record.status == "cancelled":
        raise UserError(f"run {run_id!r} was cancelled and cannot be resumed")
    checkpointer = Checkpointer(store, ctx)
    snapshot, ledger = checkpointer.load(stored)
    vm = Interpreter.restore(program, snapshot, state_type=RunState, after=checkpointer.after_node)
    state = vm.state
    assert isinstance(state, RunState)  # state_type=RunState
    state.ledger = ledger
    ctx.state, ctx.checkpointer = state, checkpointer
    if stored.record.status == "completed" or vm.is_finished:
        return RunResult.from_state(state)
    accept_decision(ctx, value, suspended=vm.status == "suspended")
    ctx.interrupted = {
        c
        for c in ledger.open_calls
        if c not in checkpointer.effects and c not in state.awaiting_approval
    }
    # the strategy is built from the restored state, so the nodes get their deps only now
    deps = RunDeps(ctx, strategy_type(ctx))
    vm.deps = vm.ctx.deps = deps
    state.status = "running"
    await ctx.emit(RunResumed(pc=vm.pc))
    start: Callable[[], Awaitable[Outcome]] = (
        (lambda: vm.resume(value)) if vm.status == "suspended" else vm.run
    )
    return await _drive(deps, vm, store, start)


async def _drive(
    deps: RunDeps[AgentStrategy],
    vm: Interpreter,
    store: Store | None,
    start: Callable[[], Awaitable[Outcome]],
) -> RunResult:
    ctx = deps.run
    state, owner = ctx.state, _owner()
    if ctx.checkpointer is not None:
        ctx.checkpointer.vm = vm
    if store is not None:
        await _acquire(store, state.run_id, owner)
    try:
        outcome = await _outcome(deps, vm, start)
        if ctx.checkpointer is not None:
            await ctx.checkpointer.checkpoint(state.status)
        return _result(ctx, outcome)
    finally:
        if store is not None:
            await store.release(state.run_id, owner)
        vm.close()
        ctx.close()


async def _acquire(store: Store, run_id: str, owner: str) -> None:
    """Take the run's lease, also from a process on this host that has died."""
    try:
        await store.acquire(run_id, owner, LEASE_SECONDS)
    except RunLeaseError as busy:
        if busy.holder is None or not _is_dead_here(busy.holder):
            raise
        await store.acquire(run_id, owner, LEASE_SECONDS, takeover=busy.holder)


def _is_dead_here(holder: str) -> bool:
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


async def _outcome(
    deps: RunDeps[AgentStrategy], vm: Interpreter, start: Callable[[], Awaitable[Outcome]]
) -> Outcome:
    ctx = deps.run
    state = ctx.state
    try:
        outcome = await start()
    except VMError as error:
        cause = error.__cause__ or error
        state.status = "failed"
        await _save(ctx, "failed")
        await deps.strategy.on_exception(cause)
        await ctx.emit(RunFailed(error=str(cause), error_type=type(cause).__name__))
        raise cause from None
    except asyncio.CancelledError:
        state.status = "cancelled"
        await asyncio.shield(_save(ctx, "cancelled"))
        await ctx.emit(RunCancelled())
        raise
    if isinstance(outcome, Finished):
        state.status = "completed"
        await ctx.emit(
            RunFinished(
                output=state.output or "",
                stop_reason=state.stop_reason or "",
                usage=state.usage.model_dump(),
            )
        )
    else:
        state.status = "suspended"
        await ctx.emit(RunSuspended(reason=outcome.reason, payload=outcome.payload))
    return outcome


async def _save(ctx: RunContext, status: str) -> None:
    if ctx.checkpointer is not None:
        await ctx.checkpointer.checkpoint(status)


def _result(ctx: RunContext, outcome: Outcome) -> RunResult:
    result = RunResult.from_state(ctx.state)
    if isinstance(outcome, Finished):
        return result
    return result.suspended(outcome.reason, outcome.payload)
