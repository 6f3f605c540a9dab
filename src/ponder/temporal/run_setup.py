"""Setting up one run inside the workflow: its state, context, strategy and interpreter.

A run begins from its input and the agent its worker described (``ponder.prepare``); a
run continued as new begins from what the previous run of its chain handed on
(``ponder.temporal.continuation``), so it goes on where that one stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from temporalio import workflow

from ponder.agent.hooks import Hooks
from ponder.agent.limits import UsageLimits
from ponder.agent.run.build import build_context
from ponder.agent.run.context import Resumed, RunContext, RunTools
from ponder.agent.run.deps import RunDeps
from ponder.agent.run.state import RunState
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.workflows import program_for
from ponder.config import AgentConfig
from ponder.events import Event
from ponder.mcp.elicitation import InputHold
from ponder.messages import Ledger, messages_from_json
from ponder.temporal.channel import ModelChannel
from ponder.temporal.children import SubRuns
from ponder.temporal.continuation import Carried
from ponder.temporal.loading import strategy_at
from ponder.temporal.patching import CANCEL_WAITS, CONTINUE_AS_NEW, ELICITATION_HOLDS
from ponder.temporal.prompts import attachments_from_data
from ponder.temporal.proxies import (
    ActivityModel,
    ActivityOptions,
    ActivityToolExecutor,
    registry_from_specs,
)
from ponder.temporal.tracing import RunTrace
from ponder.vm import Interpreter, Program

__all__ = ["DEFAULT_HEARTBEAT", "RunParts", "WorkflowSide", "fresh_state", "restored", "set_up_run"]

DEFAULT_HEARTBEAT = 5.0
"""Seconds: a lost worker is noticed, and a cancel reaches a running tool, within about this."""


@dataclass(frozen=True, slots=True)
class RunParts:
    """One run, ready to drive: its deps (context and strategy) and its interpreter."""

    deps: RunDeps[AgentStrategy]
    vm: Interpreter
    wait_cancel: bool
    """A cancel waits for the run's activities to stop (its patch marker is set)."""
    continues: bool
    """The run may continue as new (its patch marker is set)."""


@dataclass(frozen=True, slots=True)
class WorkflowSide:
    """What the run's context is wired to in its workflow."""

    channel: ModelChannel
    sink: Callable[[Event], None]
    subs: SubRuns


def set_up_run(
    data: dict[str, Any], spec: dict[str, Any], carried: Carried | None, side: WorkflowSide
) -> RunParts:
    """The run of ``data`` on the agent ``spec``, or the one ``carried`` hands on.

    Bad input raises (``PonderError``, ``ValidationError``, ``LookupError``, ...) before any step.
    """
    config = AgentConfig.model_validate(spec["config"])
    heartbeat = float(data.get("heartbeat_timeout") or DEFAULT_HEARTBEAT)
    wait_cancel = workflow.patched(CANCEL_WAITS)
    trace = RunTrace.of(spec, str(data.get("run_id") or workflow.info().workflow_id))
    options = ActivityOptions(
        str(data.get("agent", "default")), config, heartbeat, wait_cancel, trace
    )
    if carried is None:
        ctx, executor = _context(spec, config, options, fresh_state(data), side)
        strategy_type = strategy_at(spec["strategy"], options, retrieves=_retrieves(spec))
        deps = RunDeps(ctx, strategy_type(ctx))
        vm = Interpreter(program_for(strategy_type), ctx.state, deps=deps)
    else:
        strategy_type = strategy_at(spec["strategy"], options, retrieves=_retrieves(spec))
        vm = restored(carried, program_for(strategy_type))
        ctx, executor = _context(spec, config, options, vm.state, side)
        # the strategy is built from the restored state, so the nodes get their deps only now
        deps = RunDeps(ctx, strategy_type(ctx))
        vm.deps = vm.ctx.deps = deps
    continues = workflow.patched(CONTINUE_AS_NEW)
    if continues:  # a sub-agent's run is given the caller's budget
        executor.child_budget = data.get("history_budget")
    return RunParts(deps, vm, wait_cancel, continues)


def _retrieves(spec: dict[str, Any]) -> bool:
    """A RAG run retrieves from the worker's index (agents described before this said so)."""
    return bool(spec.get("retrieves", True))


def restored(carried: Carried, program: Program) -> Interpreter:
    """The interpreter, state and ledger ``carried`` hands on; its deps are set by the caller."""
    vm = Interpreter.restore(program, carried.snapshot, state_type=RunState)
    state = vm.state
    state.ledger = Ledger.from_json(carried.ledger)
    state.ledger.generation = carried.generation
    return vm


def fresh_state(data: dict[str, Any]) -> RunState:
    """The state a run begins with: its id, prompt, limits and the conversation it continues."""
    state = RunState(
        run_id=str(data.get("run_id") or workflow.info().workflow_id),
        session_id=data.get("session_id"),
        prompt=str(data["prompt"]),
        ledger=Ledger(messages_from_json(data.get("message_history") or [])),
    )
    state.attachments = attachments_from_data(data.get("attachments"))
    if data.get("limits"):
        state.limits = UsageLimits(**data["limits"])
    return state


def _context(
    spec: dict[str, Any],
    config: AgentConfig,
    options: ActivityOptions,
    state: RunState,
    side: WorkflowSide,
) -> tuple[RunContext, ActivityToolExecutor]:
    registry = registry_from_specs(spec["tools"])
    executor = ActivityToolExecutor(registry, options)
    inputs = None
    if spec.get("holds_input") and workflow.patched(ELICITATION_HOLDS):
        inputs = executor.inputs = InputHold()
    ctx = build_context(
        config=config,
        model=ActivityModel(spec["model"], options, side.channel),
        hooks=Hooks(),
        state=state,
        tools=RunTools(registry, executor),
        instructions=spec.get("instructions", ""),
        sink=side.sink if options.trace is None else options.trace.watching(side.sink),
        stream=True,
        inputs=inputs,
        clock=workflow.time,
        resumed=Resumed(),  # suspensions are resumed in the workflow itself
    )
    executor.on_child, side.subs.ctx = side.subs.finished, ctx
    return ctx, executor
