"""`PonderWorkflow`: one Temporal workflow type that runs any ponder agent's program.

The run's VM program (react, step-react, chat, rag or a custom strategy's) runs inside
the workflow on ponder's own interpreter; its only non-deterministic steps — model
requests, tool calls, retrieval — are activities (see ``ponder.temporal.proxies``), so
Temporal's history replaces ponder's checkpoints and a new worker replays to where the
last one stopped. An approval suspends the run until a ``decide`` Update; cancelling the
workflow cancels the run. Observers read the typed events with the ``events`` Query,
the text of a model request among them as it streams (the ``model_deltas`` Signal). A
run past its history budget continues as new (see ``ponder.temporal.continuation``).

Input (JSON): ``prompt``, and optionally ``attachments`` (the prompt's images and files),
``run_id`` (defaults to the workflow id),
``agent`` (the worker's agent name), ``message_history``, ``session_id``,
``require_tools``, ``heartbeat_timeout`` (seconds), ``history_budget``, ``limits``
(`UsageLimits` as JSON) and ``traceparent`` (the span a traced run's span goes under).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from pydantic import ValidationError

    from ponder.agent.run.approval import accept_decision, check_decision
    from ponder.agent.run.context import RunContext
    from ponder.agent.run.deps import RunDeps
    from ponder.agent.run.state import RunState
    from ponder.agent.strategies.base import AgentStrategy
    from ponder.events import (
        Event,
        RunCancelled,
        RunFailed,
        RunFinished,
        RunResumed,
        RunStarted,
        RunSuspended,
        event_to_dict,
    )
    from ponder.exceptions import PonderError, VMError
    from ponder.temporal.children import RUN_WORKFLOW, SubRuns
    from ponder.temporal.continuation import CONTINUED, Carried, HistoryBudget
    from ponder.temporal.inputs import check_answers
    from ponder.temporal.patching import SUSPENSION_MEMO
    from ponder.temporal.proxies import ModelChannel
    from ponder.temporal.results import result_of
    from ponder.temporal.run_setup import DEFAULT_HEARTBEAT, WorkflowSide, set_up_run
    from ponder.vm import Interpreter, Suspended

__all__ = ["MEMO_STATUS", "MEMO_SUSPENSION", "WORKFLOW_NAME", "PonderWorkflow"]

WORKFLOW_NAME = RUN_WORKFLOW
MEMO_STATUS = "ponder_status"
"""The memo key that says whether a running workflow waits for a decision."""
MEMO_SUSPENSION = "ponder_suspension"
"""The memo key holding what a suspended run waits for (``reason`` and ``payload``)."""


@workflow.defn(name=WORKFLOW_NAME)
class PonderWorkflow:
    """Runs one ponder run; its result is the run's result as JSON data."""

    def __init__(self) -> None:
        self._events: list[dict[str, Any]] = []
        self._state: RunState | None = None
        self._suspension: Suspended | None = None
        self._decision: Any = None
        self._status = "starting"
        self._channel = ModelChannel()
        self._wait_cancel = False
        self._subs = SubRuns()
        self._vm: Interpreter | None = None
        self._budget: HistoryBudget | None = None
        """Set when the run may continue as new (runs begun before that change may not)."""
        self._handed_on: tuple[dict[str, Any], dict[str, Any], int] = ({}, {}, 0)
        """The run input and agent spec to continue as new with, and the rounds at start."""

    @workflow.run
    async def run(self, data: Any) -> dict[str, Any]:
        """Prepare the agent, run its program to the end, and return the result.

        ``data`` is typed ``Any`` so that malformed input reaches the check below and fails
        the run, rather than failing the SDK's decoding (which retries the task forever).
        """
        if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
            raise ApplicationError(
                "bad run input: give a JSON object with a 'prompt' string",
                type="UserError",
                non_retryable=True,
            )
        try:
            carried = Carried.from_data(data[CONTINUED]) if CONTINUED in data else None
            spec = carried.spec if carried is not None else await self._prepare(data)
            side = WorkflowSide(self._channel, self._record, self._subs)
            parts = set_up_run(data, spec, carried, side)
            budget = HistoryBudget.from_data(data.get("history_budget"))
        except (PonderError, ValidationError, LookupError, TypeError, ValueError) as error:
            self._status = "failed"
            raise ApplicationError(
                f"bad run input: {type(error).__name__}: {error}",
                type="UserError",
                non_retryable=True,
            ) from None
        deps, vm, self._wait_cancel = parts.deps, parts.vm, parts.wait_cancel
        ctx, self._vm, self._state = deps.run, vm, deps.run.state
        if carried is not None:
            self._events = list(carried.events)
        if parts.continues:
            self._budget = budget
            self._handed_on = (data, spec, ctx.state.rounds)
            vm.after = self._hand_on_if_spent
        if carried is None:
            await ctx.bus.emit(
                RunStarted(
                    prompt=ctx.state.prompt,
                    workflow=ctx.config.agent_workflow,
                    model=ctx.model.name,
                )
            )
        try:
            if self._wait_cancel:
                await self._until_stopped(self._drive(deps, vm))
            else:
                await self._drive(deps, vm)
        finally:
            vm.close()
            ctx.close()
        return self._result(ctx.state)

    async def _prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        request = {
            "agent": data.get("agent", "default"),
            "require_tools": list(data.get("require_tools", ())),
            "run_id": str(data.get("run_id") or workflow.info().workflow_id),
            "traceparent": data.get("traceparent"),  # a sub-agent's run: its caller's call
        }
        try:
            spec: dict[str, Any] = await workflow.execute_activity(
                "ponder.prepare",
                request,
                start_to_close_timeout=timedelta(seconds=120),
                heartbeat_timeout=timedelta(
                    seconds=float(data.get("heartbeat_timeout") or DEFAULT_HEARTBEAT)
                ),
                retry_policy=RetryPolicy(maximum_attempts=3),
            )
        except ActivityError as error:
            cause = error.cause or error
            self._status = "failed"
            raise ApplicationError(str(cause), type="PrepareFailed", non_retryable=True) from None
        return spec

    def _record(self, event: Event) -> None:
        self._events.append(event_to_dict(event))

    async def _drive(self, deps: RunDeps[AgentStrategy], vm: Interpreter) -> None:
        ctx = deps.run
        state = ctx.state
        self._status = state.status = "running"
        try:
            # the VM's own status, not its outcome's class: a plain Replayer's sandbox may
            # have loaded ponder.vm twice
            handed = vm.suspension  # the run was handed on while it waited
            if handed is None:
                await vm.run()
            while (suspended := vm.suspension) is not None:
                value = await self._suspend(ctx, suspended, announce=suspended is not handed)
                accept_decision(ctx, value, suspended=True)
                await ctx.bus.emit(RunResumed(pc=vm.pc))
                await vm.resume(value)
        except VMError as error:
            cause = error.__cause__ or error
            self._status = state.status = "failed"
            await deps.strategy.on_exception(cause)
            await ctx.bus.emit(RunFailed(error=str(cause), error_type=type(cause).__name__))
            raise ApplicationError(
                str(cause), type=type(cause).__name__, non_retryable=True
            ) from None
        except asyncio.CancelledError:
            self._status = state.status = "cancelled"
            await ctx.bus.emit(RunCancelled())
            raise
        assert vm.is_finished
        self._status = state.status = "completed"
        await ctx.bus.emit(
            RunFinished(
                output=state.output or "",
                stop_reason=state.stop_reason or "",
                usage=state.usage.model_dump(),
                cost=state.cost,
            )
        )

    def _hand_on_if_spent(self, vm: Interpreter, pc: int) -> None:
        """Continue as new when the history budget is spent and nothing is in flight.

        The interpreter's ``after`` hook (``pc``: the node that ran), and a suspension's.
        """
        budget, (data, spec, rounds) = self._budget, self._handed_on
        state = self._state
        if budget is None or state is None or self._decision is not None or self._subs.waiting:
            return
        if state.ledger.open_calls and vm.suspension is None:
            return  # mid-batch: the calls' results would be lost
        waiting = vm.suspension is not None  # the round that waits has begun: it counts
        if not budget.is_spent(state.rounds - rounds + waiting):
            return
        handed = {k: v for k, v in data.items() if k not in (CONTINUED, "message_history")}
        handed[CONTINUED] = Carried.take(spec, vm, self._events).to_data()
        workflow.continue_as_new(handed, memo=workflow.memo())

    async def _until_stopped(self, work: Any) -> None:
        """Run ``work``; on cancel, say ``cancelling`` until its activities have stopped.

        Each running call learns of the cancel at its next heartbeat; nothing goes on after.
        """
        task = asyncio.ensure_future(work)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                raise
            self._status = "cancelling"
            workflow.upsert_memo({MEMO_STATUS: "cancelling"})
            task.cancel()
            await task

    async def _suspend(self, ctx: RunContext, suspended: Suspended, *, announce: bool) -> Any:
        """Wait for the ``decide`` Update; returns the decision.

        ``announce``: say so (an event, the memo, the parent); a run handed on while it
        waited has said it already. An approval is waited for in the next run of the
        chain when the history budget is spent.
        """
        self._status = ctx.state.status = "suspended"
        self._suspension = suspended
        described = workflow.patched(SUSPENSION_MEMO)
        if announce:
            await ctx.bus.emit(RunSuspended(reason=suspended.reason, payload=suspended.payload))
            memo: dict[str, Any] = {MEMO_STATUS: "suspended"}  # visible without a worker
            if described:
                memo[MEMO_SUSPENSION] = {"reason": suspended.reason, "payload": suspended.payload}
            workflow.upsert_memo(memo)
            await self._subs.tell_parent(self._waiting())
            if suspended.reason == "approval" and self._vm is not None:
                self._hand_on_if_spent(self._vm, self._vm.pc)
        await workflow.wait_condition(lambda: self._decision is not None)
        workflow.upsert_memo(
            {MEMO_STATUS: "running", **({MEMO_SUSPENSION: None} if described else {})}
        )
        value, self._decision, self._suspension = self._decision, None, None
        self._status = ctx.state.status = "running"
        await self._subs.tell_parent(self._waiting())
        return value

    def _waiting(self) -> dict[str, Any] | None:
        """What the run waits for: its own decision, or else a sub-agent's."""
        own = self._suspension
        if own is not None:
            return {"reason": own.reason, "payload": own.payload}
        return self._subs.first()

    async def _child_changed(self) -> None:
        """A sub-agent began or stopped waiting: show the run suspended on it, or not."""
        ctx = self._subs.ctx
        if (
            self._suspension is not None
            or ctx is None
            or self._status not in ("running", "suspended")
        ):
            return
        waiting = self._subs.first()
        if waiting is not None:
            self._status = "suspended"
            ctx.bus.emit_now(RunSuspended(reason=waiting["reason"], payload=waiting["payload"]))
            workflow.upsert_memo({MEMO_STATUS: "suspended", MEMO_SUSPENSION: waiting})
        elif self._status == "suspended":
            self._status = "running"
            ctx.bus.emit_now(RunResumed(pc=self._vm.pc if self._vm is not None else 0))
            workflow.upsert_memo({MEMO_STATUS: "running", MEMO_SUSPENSION: None})
        await self._subs.tell_parent(waiting)

    def _result(self, state: RunState) -> dict[str, Any]:
        found = result_of(state)
        if self._subs.parent_id is not None:  # a sub-agent's: its parent shows its events
            found["events"] = self._events
        return found

    @workflow.query(name="events")
    def events(self, after: int = 0) -> list[dict[str, Any]]:
        """The run's events with a sequence number above ``after``, in order."""
        return self._events[max(after, 0) :]  # sequence numbers count from 1 without gaps

    @workflow.query(name="status")
    def status(self) -> dict[str, Any]:
        """Where the run is: its status, output so far and what a suspension waits for."""
        state = self._state
        return {
            "run_id": None if state is None else state.run_id,
            "status": self._status,
            "output": None if state is None else state.output,
            "last_seq": self._events[-1]["seq"] if self._events else 0,
            "suspension": self._waiting(),
        }

    @workflow.query(name="result")
    def result(self) -> dict[str, Any] | None:
        """The run's result so far (with the suspension it waits on), or None before it starts."""
        state, waiting = self._state, self._waiting()
        if state is None:
            return None
        found = self._result(state)
        found.pop("events", None)
        found["status"] = self._status
        if waiting is not None:
            found["suspension"] = waiting
        return found

    @workflow.query(name="request_messages")
    def request_messages(self, key: int) -> list[dict[str, Any]] | None:
        """The conversation of model request ``key`` while it waits for its answer."""
        return self._channel.messages(key)

    @workflow.signal(name="model_deltas")
    def model_deltas(self, data: Any) -> None:
        """Text a model request streamed: ``{"key": request number, "deltas": [...]}``."""
        if isinstance(data, dict) and isinstance(data.get("key"), int):
            self._channel.push(data["key"], data.get("deltas"), data.get("attempt", 1))

    @workflow.update(name="decide")
    async def decide(self, value: Any) -> str:
        """Resume a suspended run with ``value`` (approval: ``"approve"``, ``"reject"``, ...).

        A run that waits on a sub-agent hands the decision to that sub-agent's run.
        """
        await self._take(value)
        return "accepted"

    async def _take(self, value: Any) -> None:
        if self._suspension is None and self._subs.waiting:
            await self._subs.hand_on(value)
            await self._child_changed()
        else:
            self._decision = value

    @workflow.signal(name="child_waits")
    async def child_waits(self, data: Any) -> None:
        """A sub-agent's run tells what it now waits for (see ``ponder.temporal.children``)."""
        if self._subs.note(data):
            await self._child_changed()

    @workflow.signal(name="decide_later")
    async def decide_later(self, value: Any) -> None:
        """The ``decide`` Update's value, sent while no worker could take the Update.

        A Signal waits in the history for the next worker; one that no longer fits (the
        run was decided meanwhile) is dropped.
        """
        try:
            self.check(value)
        except ApplicationError:
            return
        await self._take(value)

    @decide.validator
    def check(self, value: Any) -> None:
        """Refuse a decision unless the run waits for one and it decides every pending call."""
        suspended = self._waiting()
        if suspended is None or self._decision is not None:
            raise ApplicationError(f"the run is not waiting for a decision (it is {self._status})")
        if value is None:
            raise ApplicationError("a decision cannot be empty")
        if suspended["reason"] == "approval":
            pending = [c["id"] for c in suspended["payload"].get("calls", ())]
            try:
                check_decision(value, pending)
            except PonderError as error:
                raise ApplicationError(str(error), type="UserError") from None
        if suspended["reason"] == "elicitation":
            try:
                check_answers(suspended["payload"], value)
            except PonderError as error:
                raise ApplicationError(str(error), type="UserError") from None
