"""The ReAct strategy: think (forced), act (tools, concurrently), stop, reflect, answer.

One round, as the spec describes it:

1. ``think_and_reason`` forced with tool_choice (per ``agent_thought_mode``);
2. the action request, tool_choice ``required`` until ``agent_stop``, then ``auto``;
3. every tool call of the response runs concurrently;
4. ``agent_stop`` sets the suggested stop, runs reflection if enabled, and appends the
   final-answer instruction; a response without tool calls is the answer.

Rounds are bounded by ``agent_tool_call_limit`` and ``agent_max_tool_calls`` and guarded
against loops (``loop_reasoning_trigger``); each ends in an answer, never an exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ponder.agent.run.acting import act, answer_open_calls, call_signature
from ponder.agent.run.compaction import compact_if_needed
from ponder.agent.strategies import prompts
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.builtins import Builtins
from ponder.agent.strategies.reflection import judge_reflection, reflect
from ponder.events import LoopDetected, RoundStarted
from ponder.messages import ToolCallPart
from ponder.models.base import ForceTool, ToolChoice, ToolDefinition
from ponder.tools.builtin import THINK_AND_REASON

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["ReActStrategy"]


class ReActStrategy(AgentStrategy):
    """The default strategy: framework-driven think–act rounds."""

    category = "agent"

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        self.builtins = Builtins(ctx)
        self._tools: list[ToolDefinition] | None = None

    @property
    def tools(self) -> list[ToolDefinition]:
        """What the action request offers: the user's tools, then the built-ins."""
        if self._tools is None:
            user = [t for t in self.ctx.tools.definitions() if t.name not in self.builtins]
            self._tools = user + list(self.builtins.definitions.values())
        return self._tools

    async def single_execute(self) -> bool:
        """One round; False when the loop is over."""
        state, config = self.state, self.config
        if state.done:
            return False
        round_no = state.rounds + 1
        if state.ledger.open_calls:  # resumed in the middle of a round
            calls = await answer_open_calls(self.ctx, self.builtins, round_no)
            if state.phase == "reflection":  # resumed mid-reflection (after the action request)
                state.phase = "action"
                judge_reflection(self.ctx)
                return True
            await self.after_calls(calls)
            if state.phase != "reasoning":
                return True
        else:
            if state.rounds >= config.agent_tool_call_limit:
                await self._limit_reached("rounds", config.agent_tool_call_limit)
                return False
            limit = config.agent_max_tool_calls
            if limit is not None and state.tool_calls >= limit:
                await self._limit_reached("tool_calls", limit)
                return False
            await self.ctx.emit(RoundStarted(round=round_no, tool_choice=self._choice()))
            state.last_summary = ""
            if self._must_think(round_no) and not await self.ask(
                "reasoning", ForceTool(THINK_AND_REASON), round_no
            ):
                return False
        return await self.ask("action", self._choice(), round_no)

    def _choice(self) -> Literal["auto", "required"]:
        return "auto" if self.state.suggested_stop else "required"

    async def ask(
        self, phase: Literal["reasoning", "action"], choice: ToolChoice, round_no: int
    ) -> bool:
        """Request, act on the response; False when it was the answer."""
        self.state.phase = phase
        response = await self.ctx.request(phase, self.tools, choice)
        calls = await act(self.ctx, response, self.builtins, round_no)
        if not calls:
            self.finish(response.text, "answered")
            return False
        await self.after_calls(calls)
        return True

    async def after_calls(self, calls: tuple[ToolCallPart, ...]) -> None:
        """After a batch: remember the round's call signature; reflect after a stop."""
        signature = " ".join(sorted(call_signature(c) for c in calls if c.name != THINK_AND_REASON))
        if signature:
            self.state.round_signature = signature
        if self.builtins.reflection_pending:
            await self._reflect()

    def _must_think(self, round_no: int) -> bool:
        if self.state.suggested_stop or THINK_AND_REASON not in self.builtins:
            return False
        mode = self.config.agent_thought_mode
        return mode == "reasoning-required" or (mode == "reasoning" and round_no == 1)

    async def after_round(self) -> None:
        """Count the round, run the loop guard, keep the context inside its window."""
        state = self.state
        state.rounds += 1
        summary = state.last_summary.strip().lower()
        signature, state.round_signature = state.round_signature, ""
        repeated = (summary and summary == state.loop_summary) or (
            signature and signature == state.last_signature
        )
        state.reasoning_pc = state.reasoning_pc + 1 if repeated else 0
        state.loop_summary, state.last_signature = summary, signature
        await self._guard_loop(signature or summary)
        if not state.done:
            await compact_if_needed(self.ctx)

    async def _guard_loop(self, shown: str) -> None:
        state = self.state
        if state.loop_corrected is not None and state.reasoning_pc > 0:
            await self.ctx.emit(
                LoopDetected(signature=shown, repeats=state.reasoning_pc + 1, action="ended")
            )
            await self.final_answer(prompts.loop_final_instruction(), "loop")
            return
        if state.reasoning_pc > self.config.loop_reasoning_trigger:
            repeats = state.reasoning_pc + 1
            await self.ctx.emit(LoopDetected(signature=shown, repeats=repeats, action="corrected"))
            self.ctx.append_user(prompts.loop_correction(repeats))
            state.loop_corrected, state.reasoning_pc = shown, 0

    async def _limit_reached(self, limit: str, value: int) -> None:
        if self.state.suggested_stop:
            await self.final_answer(None, "answered")
        elif limit == "rounds":
            await self.on_limited("rounds", value)
        else:
            await self.on_limited("tool_calls", value)

    async def _reflect(self) -> None:
        """Run the three reflection checks; a fail sends the model back to work."""
        await reflect(self.ctx, self.builtins)
