"""The step-driven ReAct strategy (``agent_workflow = "step-react"``).

```
STEP_REACT_BLOCK = STRATEGY_INIT >> AGENT_ENTRY >> DO(STEP_BODY).WHILE(TASK_COND)
                   >> AGENT_POST_PROCESS
STEP_BODY        = NODE_INTRO >> WHILE(ITER_COND).ACTION(STEP_EXEC) >> NODE_LEAVE
```

AGENT_ENTRY decomposes the task (structured output, validated, retried); a simple task
runs as one implicit step. NODE_INTRO picks the next step in dependency order, exposes
``update_step`` once and injects the plan's status when it changed. Each STEP_EXEC is one
ReAct round plus stall detection; the step ends on ``agent_stop``, a plain answer,
``step_iteration_limit``, ``agent_step_token_budget`` or a stall. With
``enable_reflection`` the ``agent_stop`` that closes the last step is verified first (the
three checks); a fail sends the model back to that step. NODE_LEAVE summarises
the step (structured output) and compacts finished steps into their summaries when the
budget or the window trigger was hit. The final answer draws on every step's result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from ponder.agent.run.plan_state import PlanStep, StepRunState
from ponder.agent.strategies.answer import strip_markup
from ponder.agent.strategies.base import StrategyCategory
from ponder.agent.strategies.builtins import Builtins
from ponder.agent.strategies.compaction import (
    compact_step_if_needed,
    compact_steps,
    context_messages,
    is_over_window,
)
from ponder.agent.strategies.react import ReActStrategy
from ponder.agent.strategies.reflection import judge_reflection, reflect
from ponder.agent.strategies.step_react import prompts as step_prompts
from ponder.agent.strategies.step_react.plan import (
    DECOMPOSITION_SCHEMA,
    Decomposition,
    next_ready_step,
    pending_steps,
    plan_problems,
    render_plan,
    steps_from_specs,
)
from ponder.agent.strategies.step_react.plan_update import apply_update
from ponder.agent.strategies.step_react.stall import (
    Stall,
    display_signature,
    record_round,
    round_signatures,
)
from ponder.agent.strategies.step_react.summary import summarise_step
from ponder.agent.strategies.structured_ask import request_structured
from ponder.events import (
    LimitReached,
    PlanReplanned,
    PlanUpdated,
    ReplanTrigger,
    StallDetected,
    StepFinished,
    StepStarted,
)
from ponder.messages import ToolCallPart, UserMessage
from ponder.tools import builtin
from ponder.tools.arguments import ArgumentIssue
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["MAX_STALL_REPLANS", "StepBuiltins", "StepReActStrategy"]

MAX_STALL_REPLANS = 2


class StepBuiltins(Builtins):
    """The built-ins of the step loop: ``agent_stop`` closes a step; ``update_step``."""

    def __init__(self, ctx: RunContext, strategy: StepReActStrategy) -> None:
        super().__init__(ctx)
        self.strategy = strategy
        if ctx.state.step.update_step_exposed:
            self.expose_update_step()

    def expose_update_step(self) -> None:
        """Offer ``update_step`` from now on (idempotent)."""
        if builtin.UPDATE_STEP not in self.definitions:  # shared with other runs: replaced
            update = {builtin.UPDATE_STEP: builtin.update_step_definition()}
            self.definitions = {**self.definitions, **update}

    async def dispatch(
        self, name: str, args: dict[str, Any], issues: list[ArgumentIssue], round_no: int
    ) -> ToolResult:
        """``update_step`` here; every other built-in as in ReAct."""
        if name == builtin.UPDATE_STEP:
            return await self.strategy.update_plan(args)
        if name == builtin.AGENT_STOP:
            return self.strategy.close_step(args, issues)
        return await super().dispatch(name, args, issues, round_no)


def _dump(plan: Sequence[PlanStep]) -> list[dict[str, Any]]:
    return [step.model_dump(mode="json") for step in plan]


class StepReActStrategy(ReActStrategy):
    """ReAct rounds grouped into the steps of a plan the model writes and revises."""

    category: ClassVar[StrategyCategory] = "step"  # type: ignore[assignment]

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        self.step_builtins = StepBuiltins(ctx, self)
        self.builtins = self.step_builtins

    @property
    def step(self) -> StepRunState:
        """The step loop's state (part of `RunState`)."""
        return self.state.step

    def current(self) -> PlanStep | None:
        """The step being worked on, if it is still in the plan."""
        return next((s for s in self.step.plan if s.id == self.step.current_id), None)

    # AGENT_ENTRY ---------------------------------------------------------------------

    async def on_entry(self) -> None:
        """Decompose the task into a plan (or one implicit step)."""
        if self.state.done or self.step.plan:
            return
        messages = [
            *context_messages(self.state, self.config.use_minimal_context),
            UserMessage(content=step_prompts.DECOMPOSE_INSTRUCTION),
        ]
        decision = await request_structured(
            self.ctx, "decompose", messages, DECOMPOSITION_SCHEMA, Decomposition, _check_plan
        )
        if decision is not None and decision.needs_decomposition:
            self.step.plan, reason = steps_from_specs(decision.steps), decision.reason
        else:
            reason = "no usable plan; running as one step" if decision is None else decision.reason
            self.step.simple_mode = True
            self.step.plan = [PlanStep(id="task", description=self.state.prompt)]
        await self._plan_changed(reason or "plan created")

    async def _plan_changed(
        self, reason: str, replanned: tuple[ReplanTrigger, set[str]] | None = None
    ) -> None:
        """Count a plan revision and report it; ``replanned`` = (trigger, unfinished ids before)."""
        self.step.revision += 1
        steps = _dump(self.step.plan)
        if replanned is not None:
            trigger, before = replanned
            replaced = sorted(before - self._unfinished())
            await self.ctx.bus.emit(
                PlanReplanned(
                    revision=self.step.revision,
                    trigger=trigger,
                    reason=reason,
                    replaced=replaced,
                    steps=steps,
                )
            )
        await self.ctx.bus.emit(
            PlanUpdated(revision=self.step.revision, steps=steps, reason=reason)
        )

    def _unfinished(self) -> set[str]:
        return {s.id for s in self.step.plan if s.status in ("pending", "running")}

    # NODE_INTRO ----------------------------------------------------------------------

    async def step_intro(self) -> None:
        """Start the next ready step: expose ``update_step``, inject the plan if changed."""
        step, state = self.step, self.state
        ready = None if state.done else next_ready_step(step.plan)
        if ready is None:
            step.current_id = None
            return
        if not step.update_step_exposed:
            step.update_step_exposed = True
            self.step_builtins.expose_update_step()
            self._tools = None
        if step.steps_begin is None:
            step.steps_begin = len(state.ledger)
        ready.status = "running"
        step.current_id, step.step_number, step.end = ready.id, step.step_number + 1, None
        step.iterations, step.signatures, step.stall_signature, step.stop_result = 0, (), "", ""
        step.input_tokens_at_start, step.ledger_start = state.usage.input_tokens, len(state.ledger)
        self._inject_status(ready)
        await self.ctx.bus.emit(
            StepStarted(
                step_id=ready.id,
                description=ready.description,
                index=1 + sum(s.status in ("done", "skipped") for s in step.plan),
                total=len(step.plan),
            )
        )

    def _inject_status(self, ready: PlanStep) -> None:
        if self.step.simple_mode:
            return
        status = render_plan(self.step.plan)
        if status != self.step.injected_status:
            self.step.injected_status = status
            self.ctx.append_user(step_prompts.plan_status(status, ready))

    # ITER_COND / STEP_EXEC -----------------------------------------------------------

    async def iteration_continues(self) -> bool:
        """True while the current step should run another round."""
        step, config = self.step, self.config
        if self.state.done or step.current_id is None or step.end is not None:
            return False
        if step.iterations >= config.step_iteration_limit:
            await self.ctx.bus.emit(LimitReached(limit="step_iterations", value=step.iterations))
            step.end = "limit"
            return False
        budget = config.agent_step_token_budget
        if budget > 0 and self.state.usage.input_tokens - step.input_tokens_at_start >= budget:
            await self.ctx.bus.emit(LimitReached(limit="token_budget", value=budget))
            step.end = "budget"
            return False
        return True

    async def step_execute(self) -> None:
        """One ReAct round of the current step, then the stall check."""
        if not self.state.ledger.open_calls:  # not resumed in the middle of a round
            self.step.round_calls = ()
        go_on = await self.single_execute()
        self.state.round_signature = ""
        self.step.iterations += 1
        self.state.rounds += 1
        if not go_on and not self.state.done and self.step.end is None:
            self.step.end = "done"
        if self.step.round_calls and not self.state.done:
            skip = self.builtins.definitions
            signatures = round_signatures(self.state.ledger.messages, self.step.round_calls, skip)
            stall = record_round(self.step, signatures, self.config.loop_reasoning_trigger)
            if stall is not None:
                await self._on_stall(stall)
        if not self.state.done and self.step.end is None:
            await compact_step_if_needed(self.ctx)

    async def on_text_reply(self, text: str) -> bool:
        """A text reply ends the step (the task, if simple) by the stop protocol."""
        if self.step.simple_mode:
            return await super().on_text_reply(text)
        if text.strip() and self.remind_once():
            return True
        self.step.stop_result = strip_markup(text)
        return False

    async def after_calls(self, calls: tuple[ToolCallPart, ...]) -> None:
        """Keep the step's calls for stall detection, then as in ReAct."""
        self.step.round_calls = (*self.step.round_calls, *calls)
        await super().after_calls(calls)

    async def after_round(self) -> None:
        """Not used: STEP_EXEC counts rounds and checks stalls itself."""

    # built-in effects ----------------------------------------------------------------

    def close_step(self, args: dict[str, Any], issues: list[ArgumentIssue]) -> ToolResult:
        """``agent_stop`` inside a step: that step ends; the plan goes on."""
        result = args.get("result")
        if result is not None and not isinstance(result, str):
            issues.append(ArgumentIssue("result", "expected a string"))
            return ToolResult.fail("invalid")
        step_id = self.step.current_id or "task"
        self.step.end, self.step.stop_result = "stopped", (result or "").strip()
        remaining = len([s for s in pending_steps(self.step.plan) if s.id != step_id])
        text = step_prompts.step_stop_result(step_id, remaining)
        if remaining == 0 and self.config.enable_reflection:
            self.state.suggested_stop = True  # the task's stop: reflection runs before the answer
            if self.builtins.reflection_pending:
                text += " Your reasoning will be verified first."
        return ToolResult.ok(text)

    async def update_plan(self, args: dict[str, Any]) -> ToolResult:
        """``update_step``: revise the plan (raises `ArgumentError` when invalid)."""
        step = self.step
        before = self._unfinished()
        change = apply_update(step.plan, step.current_id, args)
        step.plan, step.simple_mode = change.plan, False
        if change.ends_current:
            step.end = "done" if self.current() is not None else "replaced"
        replanned: tuple[ReplanTrigger, set[str]] | None = None
        if args.get("action") == "replan":
            replanned = ("update_step", before)
        await self._plan_changed(f"update_step {args.get('action')}: {change.message}", replanned)
        return ToolResult.ok(f"<STEP_PLAN_UPDATED> {change.message}\n{render_plan(step.plan)}")

    async def _reflect(self) -> None:
        """Reflection after the last step's ``agent_stop``: a fail reopens that step."""
        await reflect(self.ctx, self.builtins, then_answer=False)
        self._after_reflection()

    def judge(self) -> None:
        """Judge a reflection round restored mid-way, as `_reflect` would have."""
        judge_reflection(self.ctx, then_answer=False)
        self._after_reflection()

    def _after_reflection(self) -> None:
        if not self.state.suggested_stop:  # failed: the model goes on with the step
            self.step.end, self.step.stop_result = None, ""
        self.state.suggested_stop = False  # steps use no stop flag; the answer follows them

    # stalls --------------------------------------------------------------------------

    async def _on_stall(self, stall: Stall) -> None:
        shown, step_id = display_signature(stall.signature), self.step.current_id or ""
        if stall.stage == "corrected":
            await self.ctx.bus.emit(
                StallDetected(
                    step_id=step_id, signature=shown, repeats=stall.repeats, action="corrected"
                )
            )
            self.ctx.append_user(step_prompts.stall_correction(shown, stall.repeats))
            return
        action = self.config.stall_action
        if action == "replan" and self.step.stall_replans >= MAX_STALL_REPLANS:
            action = "abandon"
        await self.ctx.bus.emit(
            StallDetected(step_id=step_id, signature=shown, repeats=stall.repeats, action=action)
        )
        current = self.current()
        assert current is not None
        if action == "abandon":
            self.step.end = "abandoned"
            await self.final_answer(step_prompts.abandon_instruction(current, shown), "stalled")
        elif action == "replan" and await self._replan(current, shown):
            self.step.end = "replaced"
        else:
            self.step.end = "skipped"

    async def _replan(self, current: PlanStep, shown: str) -> bool:
        """Ask for a new plan of the remaining work; False if none could be had."""
        self.step.stall_replans += 1
        before = self._unfinished()
        current.status, current.summary = "skipped", f"stalled repeating {shown}"
        finished = [s for s in self.step.plan if s.status in ("done", "skipped")]
        instruction = UserMessage(content=step_prompts.replan_instruction(current, shown))
        messages = [*context_messages(self.state, self.config.use_minimal_context), instruction]

        def check(decision: Decomposition) -> list[str]:
            return plan_problems([*finished, *steps_from_specs(decision.steps)])

        decision = await request_structured(
            self.ctx, "replan", messages, DECOMPOSITION_SCHEMA, Decomposition, check
        )
        if decision is None or not decision.steps:
            current.status = "running"
            return False
        self.step.plan = [*finished, *steps_from_specs(decision.steps)]
        reason = f"stall in step {current.id!r}: {decision.reason}"
        await self._plan_changed(reason, ("stall", before))
        return True

    # NODE_LEAVE / TASK_COND / AGENT_POST_PROCESS ---------------------------------------

    async def step_leave(self) -> None:
        """Close the step: summary, status, event; compact finished steps when due."""
        step = self.step
        if step.current_id is None:
            return
        end = step.end or "done"
        current = self.current()
        if current is not None and current.status == "running":
            if end in ("skipped", "abandoned"):
                current.status, current.summary = "skipped", f"skipped ({end})"
            else:
                if not self.state.done:
                    current.summary, current.outputs = await summarise_step(self.ctx, current)
                current.status = "done"
        summary = current.summary if current is not None else "removed from the plan"
        await self.ctx.bus.emit(StepFinished(step_id=step.current_id, summary=summary, status=end))
        step.current_id = None
        if not self.state.done and self._compaction_due(end):
            await compact_steps(self.ctx)

    def _compaction_due(self, end: str) -> bool:
        if end == "budget":
            return True
        return self.config.enable_compaction and is_over_window(self.ctx)

    async def task_pending(self) -> bool:
        """True while the plan has a step ready to run."""
        return not self.state.done and next_ready_step(self.step.plan) is not None

    async def on_post_process(self) -> None:
        """The final answer, drawing on every step's result."""
        if self.state.output is None:
            instruction = step_prompts.steps_final_instruction(self.step.plan)
            await self.final_answer(instruction, self.state.stop_reason or "answered")


def _check_plan(decision: Decomposition) -> list[str]:
    if not decision.needs_decomposition:
        return []
    return plan_problems(steps_from_specs(decision.steps))
