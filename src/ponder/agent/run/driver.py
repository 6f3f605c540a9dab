"""Driving one run on the VM to its end: finished, suspended, failed, cancelled or interrupted.

The driver builds what a run needs around its `RunContext`: the strategy and the
`RunDeps` the nodes get; a resumed run's context is built (by the caller's
`ContextBuilder`) only once its state is restored. With a store, the run's lease is
taken before anything is loaded, renewed while the run is driven (every third of
``Store.lease_seconds``), and released after the final status is written. Checkpoints are
fenced by the lease: a process that lost it cannot overwrite the run, and gets
`RunLeaseError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from functools import partial
from typing import Any

from ponder.agent.result import RunResult
from ponder.agent.run.approval import (
    accept_decision,
    check_child_decisions,
    check_pending_tools,
)
from ponder.agent.run.checkpointer import load_checkpoint
from ponder.agent.run.context import ContextBuilder, Resumed, RunContext
from ponder.agent.run.deps import RunDeps, Strategy, StrategyType
from ponder.agent.run.leases import is_dead_here, lease_owner
from ponder.agent.run.shielding import settled
from ponder.agent.run.state import RunState
from ponder.events import RunCancelled, RunFailed, RunFinished, RunResumed, RunStarted, RunSuspended
from ponder.exceptions import RunLeaseError, StoreError, UserError, VMError
from ponder.store.base import Store
from ponder.vm import Finished, Interpreter, Outcome, Program

__all__ = ["INTERRUPT", "drive", "prepare_start", "resume_run", "start_run"]

INTERRUPT = "ponder: run interrupted"
"""The cancel message that stops a run as ``interrupted`` (resumable), not ``cancelled``."""
_HELD_HERE: set[str] = set()
"""The lease owners of this process whose runs are started or driven now. A lease of this
process left by another owner (its release failed: a full disk) is taken over at once."""


async def start_run(
    ctx: RunContext, strategy_type: StrategyType, program: Program, store: Store | None
) -> RunResult:
    """Run a fresh state from the program's start."""
    deps, vm, owner = await prepare_start(ctx, strategy_type, program, store)
    return await drive(deps, vm, store, owner)


async def prepare_start(
    ctx: RunContext, strategy_type: StrategyType, program: Program, store: Store | None
) -> tuple[RunDeps[Strategy], Interpreter, str]:
    """What `drive` needs to run a fresh state: its deps, its VM and the lease owner.

    The lease is taken and `RunStarted` emitted. `start_run` is this and `drive`; a caller
    that awaits the two itself keeps one coroutine fewer alive while the run waits.
    """
    checkpointer = ctx.checkpointer
    deps = RunDeps(ctx, strategy_type(ctx))
    after = checkpointer.after_node if checkpointer is not None else None
    before = ctx.tap.node if ctx.tap is not None and ctx.tap.wants_nodes else None
    vm = Interpreter(program, ctx.state, deps=deps, before=before, after=after)
    state, owner = ctx.state, lease_owner() if store is not None else ""  # a lease needs one
    acquired = False
    try:
        if store is not None:
            await _acquire(store, state.run_id, owner)
            acquired = True
        await ctx.bus.emit(
            RunStarted(
                prompt=state.prompt, workflow=ctx.config.agent_workflow, model=ctx.model.name
            )
        )
    except BaseException as error:
        if store is not None and acquired:  # stopped while starting: stored, lease given back
            await _stopped_early(store, state.run_id, owner, error)
        if ctx.tap is not None:
            ctx.tap.finish(ctx, error)
        raise
    return deps, vm, owner


async def _stopped_early(store: Store, run_id: str, owner: str, error: BaseException) -> None:
    """Record a run that stopped after taking its lease, before it was driven.

    A store that fails here is not reported: ``error`` is what the caller needs to see.
    """
    if not isinstance(error, asyncio.CancelledError):
        status = "failed"
    else:
        status = "interrupted" if INTERRUPT in error.args else "cancelled"
    with contextlib.suppress(StoreError):
        await settled(lambda: store.set_status(run_id, status))
    with contextlib.suppress(StoreError):
        await _release(store, run_id, owner)


async def resume_run(
    build: ContextBuilder,
    strategy_type: StrategyType,
    program: Program,
    store: Store,
    run_id: str,
    value: Any,
) -> RunResult:
    """Continue a stored run after a crash or a suspension; ``build`` makes its context.

    The lease is taken first, so what is loaded cannot change under the run.
    """
    owner = lease_owner()
    await _acquire(store, run_id, owner)
    try:
        ctx, restored = await _restore(build, strategy_type, program, store, run_id, value)
    except BaseException:
        await _release(store, run_id, owner)
        raise
    if restored is None:
        await _release(store, run_id, owner)
        return RunResult.from_state(ctx.state, ctx.output)
    deps, vm = restored
    await ctx.bus.emit(RunResumed(pc=vm.pc))
    return await drive(deps, vm, store, owner, resume=vm.status == "suspended", value=value)


async def _restore(
    build: ContextBuilder,
    strategy_type: StrategyType,
    program: Program,
    store: Store,
    run_id: str,
    value: Any,
) -> tuple[RunContext, tuple[RunDeps[Strategy], Interpreter] | None]:
    """Load the run and build its context: with its deps and VM, or None if it is over."""
    stored = await store.load(run_id)
    if stored.record.status == "cancelled":
        raise UserError(f"run {run_id!r} was cancelled and cannot be resumed")
    if not stored.has_checkpoint:
        await store.set_status(run_id, "failed")
        raise StoreError(
            f"run {run_id!r} stopped before its first checkpoint, so there is nothing to "
            "resume; it is now marked failed: start the task again as a new run"
        )
    loaded = load_checkpoint(stored)
    vm = Interpreter.restore(program, loaded.snapshot, state_type=RunState)
    state = vm.state
    assert isinstance(state, RunState)  # state_type=RunState
    state.ledger = loaded.ledger
    resumed = Resumed()
    ctx = await build(state, resumed)
    checkpointer = ctx.checkpointer
    assert checkpointer is not None  # built with the store the run is resumed from
    checkpointer.continue_from(loaded)
    vm.after = checkpointer.after_node
    if stored.record.status == "completed" or vm.is_finished:
        if stored.record.status != "completed":  # a stop marked it after its end was stored
            await store.set_status(run_id, "completed")
        return ctx, None
    accept_decision(ctx, value, suspended=vm.status == "suspended")
    suspension = vm.suspension  # with the suspensions of the sub-agents that wait
    if suspension is not None:
        check_child_decisions({"reason": suspension.reason, "payload": suspension.payload}, value)
    check_pending_tools(ctx)
    asked = {str(q.get("call_id")) for q in state.awaiting_input}
    resumed.interrupted = {
        c
        for c in loaded.ledger.open_calls
        if checkpointer.saved(c) is None and c not in state.awaiting_approval and c not in asked
    }
    # the strategy is built from the restored state, so the nodes get their deps only now
    deps = RunDeps(ctx, strategy_type(ctx))
    vm.deps = vm.ctx.deps = deps
    state.status = "running"
    return ctx, (deps, vm)


async def drive(
    deps: RunDeps[Strategy],
    vm: Interpreter,
    store: Store | None,
    owner: str,
    *,
    resume: bool = False,
    value: Any = None,
) -> RunResult:
    """Drive ``vm`` to its outcome (``resume``: a suspended one, with ``value``).

    One coroutine, awaiting the VM's: every level kept while a run waits is one more object
    for the cyclic collector to walk, thousands of times over with thousands of runs.
    """
    ctx = deps.run
    state = ctx.state
    renewing: asyncio.Task[None] | None = None
    if ctx.checkpointer is not None:
        ctx.checkpointer.vm, ctx.checkpointer.owner = vm, owner
    if store is not None:
        renewing = asyncio.create_task(_renew(store, state.run_id, owner))
    error: BaseException | None = None
    cut: asyncio.CancelledError | None = None
    try:
        try:
            outcome = await (vm.resume(value) if resume else vm.run())
        except VMError as failure:
            cause = failure.__cause__ or failure
            await _failed(deps, cause)
            raise cause from None
        except asyncio.CancelledError as cancel:
            await _cancelled(ctx, cancel)
            raise
        await _settled(ctx, outcome)
        if ctx.checkpointer is not None:
            # the run said how it ended: a stop arriving now must not keep that from the store
            cut = await settled(partial(ctx.checkpointer.checkpoint, state.status))
        return _result(ctx, outcome)
    except BaseException as exc:
        error = exc
        raise
    finally:
        if renewing is not None:
            renewing.cancel()
        held = await _release(store, state.run_id, owner) or cut
        vm.close()
        ctx.close()
        if ctx.tap is not None:
            ctx.tap.finish(ctx, error)  # a replay that ends early or differently raises here
        if held is not None and error is None:
            raise held  # the run is over, but its caller was cancelled meanwhile


async def _acquire(store: Store, run_id: str, owner: str) -> None:
    """Take the run's lease, also from a process on this host that has died."""
    ttl = store.lease_seconds
    _HELD_HERE.add(owner)  # before the store has it: no moment where it looks abandoned
    try:
        try:
            await store.acquire(run_id, owner, ttl)
        except RunLeaseError as busy:
            if busy.holder is None or not _is_dead_here(busy.holder):
                raise
            await store.acquire(run_id, owner, ttl, takeover=busy.holder)
    except BaseException:
        _HELD_HERE.discard(owner)
        raise


async def _release(store: Store | None, run_id: str, owner: str) -> asyncio.CancelledError | None:
    """Give the lease back, even if the run is cancelled again meanwhile (returned).

    If the store fails to, this process still lets the lease go (`_is_dead_here`).
    """
    _HELD_HERE.discard(owner)
    if store is None:
        return None
    return await settled(lambda: store.release(run_id, owner))


async def _renew(store: Store, run_id: str, owner: str) -> None:
    """Extend the lease while the run is driven; stop once another process holds it."""
    while True:
        await asyncio.sleep(store.lease_seconds / 3)
        try:
            await store.acquire(run_id, owner, store.lease_seconds)
        except RunLeaseError:
            return  # the fenced checkpoints now fail: the run stops at its next boundary
        except StoreError:
            continue  # the store is unreachable for now: the lease may still be renewed


def _is_dead_here(holder: str) -> bool:
    """True for a lease nobody uses: of an exited process on this host, or of this one.

    This process's own is dead once it no longer drives the run (the store refused its
    release, on a full disk say).
    """
    host, _, rest = holder.partition(":")
    if host == socket.gethostname() and rest.partition(":")[0] == str(os.getpid()):
        return holder not in _HELD_HERE
    return is_dead_here(holder)


async def _failed(deps: RunDeps[Strategy], cause: BaseException) -> None:
    """Store and report a run that an error ended."""
    ctx = deps.run
    ctx.state.status = "failed"
    await _save(ctx, "failed")
    await deps.strategy.on_exception(cause)
    await ctx.bus.emit(RunFailed(error=str(cause), error_type=type(cause).__name__))
    await _save_events(ctx)


async def _cancelled(ctx: RunContext, cancel: asyncio.CancelledError) -> None:
    """Store and report a cancelled run: ``interrupted`` (resumable) or ``cancelled``."""
    resumable = INTERRUPT in cancel.args
    ctx.state.status = "interrupted" if resumable else "cancelled"
    # written to the end even if the run is cancelled again meanwhile: it ends cancelled anyway
    await settled(lambda: _save(ctx, ctx.state.status))
    with contextlib.suppress(asyncio.CancelledError):
        await ctx.bus.emit(RunCancelled(resumable=resumable))
    await settled(lambda: _save_events(ctx))


async def _settled(ctx: RunContext, outcome: Outcome) -> None:
    """Set the run's status from the VM's outcome and report it."""
    state = ctx.state
    if isinstance(outcome, Finished):
        state.status = "completed"
        await ctx.bus.emit(
            RunFinished(
                output=state.output or "",
                stop_reason=state.stop_reason or "",
                usage=state.usage.model_dump(),
                cost=state.cost,
            )
        )
    else:
        state.status = "suspended"
        await ctx.bus.emit(RunSuspended(reason=outcome.reason, payload=outcome.payload))


async def _save(ctx: RunContext, status: str) -> None:
    if ctx.checkpointer is not None:
        try:
            await ctx.checkpointer.checkpoint(status)
        except RunLeaseError:
            pass  # another process holds the run now: what it stores stands
        except StoreError:
            # the checkpoint cannot be written: the final status at least must not stay running
            await ctx.checkpointer.store.set_status(ctx.state.run_id, status)
            raise


async def _save_events(ctx: RunContext) -> None:
    """Write the run's last events (after its last checkpoint) to the store's log."""
    if ctx.checkpointer is not None:
        try:
            await ctx.checkpointer.flush_events()
        except StoreError:
            pass  # the log misses its end; the run's status and ledger are stored


def _result(ctx: RunContext, outcome: Outcome) -> RunResult:
    result = RunResult.from_state(ctx.state, ctx.output)
    if isinstance(outcome, Finished):
        return result
    return result.suspended(outcome.reason, outcome.payload)
