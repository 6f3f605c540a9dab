"""The ReAct strategy: think (forced), act (tools, concurrently), stop, reflect, answer.

One round, as the spec describes it:

1. ``think_and_reason`` forced with tool_choice (per ``agent_thought_mode``), unless the
   previous action request was answered with it (that is this round's reasoning); its summary
   and ``last_step`` come back as a system message (``REASONING_TEMPLATE``, with the
   user's request) appended after the call's result, and drive the action request;
2. the action request, tool_choice ``required`` until ``agent_stop``, then ``auto``;
3. every tool call of the response runs concurrently;
4. ``agent_stop`` sets the suggested stop, runs reflection if enabled, and appends the
   final-answer instruction.

The stop protocol, for providers that do not honour every tool_choice:

- a text reply to the forced reasoning request is the round's reasoning, never the answer;
  the round goes on to act (if that reply called action tools instead, they are its action);
- after ``agent_stop``, a text reply is the answer;
- before ``agent_stop``, a text reply is not the answer: the model is reminded of the
  protocol once, and a second text reply in a row is taken as the answer
  (stop reason ``answered_without_stop``);
- an empty reply is never the answer: `RunContext.request` asks once more, then the run
  ends with stop reason ``empty_answer`` (or ``content_filter``);
- an answer that echoes ponder's markers or instructions is asked for once more, then
  cleaned (see `ponder.agent.strategies.answer`).

A request the provider refuses for the window, once compaction has cut what it can, ends
the loop with an answer (stop reason ``context_overflow``): asked for without tools from
the results gathered, or, when that request does not fit either, those results themselves.
With compaction off, or nothing gathered and the prompt itself too long, the error stands.

Rounds are bounded by ``agent_tool_call_limit`` and ``agent_max_tool_calls`` and guarded
against loops (``loop_reasoning_trigger``): a repeated call, or a repeated summary in a
round that did not call a stateful tool (``sequential_thinking``, ``todo_write``) or
``update_step``; a round that stops is never a loop. Each run ends in an answer, never an
exception.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ponder.agent.strategies import prompts
from ponder.agent.strategies.acting import act, answer_open_calls, call_signature
from ponder.agent.strategies.answer import gathered_results, strip_markup
from ponder.agent.strategies.base import AgentStrategy
from ponder.agent.strategies.builtins import Builtins
from ponder.agent.strategies.compaction import compact_if_needed, compaction_on
from ponder.agent.strategies.fitting import prompt_fits, refit
from ponder.agent.strategies.reflection import judge_reflection, reflect
from ponder.config import DEFAULT_THOUGHT_MODE
from ponder.events import LoopDetected, Reasoning, RoundStarted
from ponder.exceptions import ContextOverflowError
from ponder.messages import AssistantMessage, SystemMessage, ToolCallPart, UserMessage
from ponder.models.base import ForceTool, ModelResponse, ToolChoice, ToolDefinition
from ponder.tools.builtin import PROCESSING_MESSAGE, THINK_AND_REASON, UPDATE_STEP

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["ReActStrategy"]

FORCE_THINKING = ForceTool(THINK_AND_REASON)
"""The reasoning request's tool choice (one shared value: a waiting run keeps no copy)."""

_TEXT_REASONING_CHARS = 2000


class ReActStrategy(AgentStrategy):
    """The default strategy: framework-driven think–act rounds."""

    category = "agent"

    def __init__(self, ctx: RunContext) -> None:
        super().__init__(ctx)
        self.builtins = Builtins(ctx)
        self._tools: tuple[ToolDefinition, ...] | None = None
        self.progressed = False
        """The round called a tool that moves the work on: a repeated summary is no loop."""

    @property
    def tools(self) -> tuple[ToolDefinition, ...]:
        """What the action request offers: the user's tools, then the built-ins."""
        if self._tools is None:
            self._tools = self.ctx.tools.offered_with(tuple(self.builtins.definitions.values()))
        return self._tools

    def protocol(self) -> str:
        """The round protocol, naming exactly the built-ins this run offers."""
        offered = self.builtins.definitions
        protocol = prompts.agent_protocol(
            offered, self._thought_mode(), reflection=self.config.enable_reflection
        )
        guidance = prompts.structured_guidance(self.config) if THINK_AND_REASON in offered else ""
        return f"{protocol}\n\n{guidance}" if guidance else protocol

    async def single_execute(self) -> bool:
        """One round; False when the loop is over."""
        state = self.state
        if state.done:
            return False
        round_no = state.rounds + 1
        if state.ledger.open_calls:  # resumed in the middle of a round
            calls = await answer_open_calls(self.ctx, self.builtins, round_no)
            if state.phase == "reflection":  # resumed mid-reflection (after the action request)
                state.phase = "action"
                self.judge()
                return True
            await self.after_calls(calls)
            if state.phase != "reasoning" or not self._needs_action(calls):
                return True
        else:
            over = self._over_limit()
            if over is not None:
                await self._limit_reached(*over)
                return False
            if self.ctx.toolset.source is not None and await self.ctx.toolset.refresh(self.state):
                self._tools = None
            if self.ctx.bus.heard:
                await self.ctx.bus.emit(RoundStarted(round=round_no, tool_choice=self._choice()))
            else:
                self.ctx.bus.skip()
            if state.last_summary:  # a state assignment costs more than this test
                state.last_summary = ""
            if self._must_think(round_no) and not await self.think(round_no):
                return not state.done
        return await self.ask("action", self._choice(), round_no)

    def _over_limit(self) -> tuple[Literal["rounds", "tool_calls"], int] | None:
        """The limit the run has reached, and its value (a test, not a coroutine, per round)."""
        state, config = self.state, self.config
        if state.rounds >= config.agent_tool_call_limit:
            return "rounds", config.agent_tool_call_limit
        limit = config.agent_max_tool_calls
        if limit is not None and state.tool_calls >= limit:
            return "tool_calls", limit
        return None

    def _choice(self) -> Literal["auto", "required"]:
        return "auto" if self.state.suggested_stop else "required"

    async def think(self, round_no: int) -> bool:
        """The forced reasoning request; True when the round still needs its action request."""
        if await self.usage_limited():
            return False
        self.state.phase = "reasoning"
        try:  # `request_in_window` inline: a waiting run keeps one coroutine level fewer
            response = await self.ctx.caller.request("reasoning", self.tools, FORCE_THINKING)
        except ContextOverflowError as exc:
            refitted = await self.refit_or_answer(exc, "reasoning", FORCE_THINKING)
            if refitted is None:
                return False
            response = refitted
        calls = await act(self.ctx, response, self.builtins, round_no)
        if not calls:
            await self.reason_from_text(response.text, round_no)
            return True
        await self.after_calls(calls)
        return not self.state.done and self._needs_action(calls)

    @staticmethod
    def _needs_action(calls: tuple[ToolCallPart, ...]) -> bool:
        return all(c.name in (THINK_AND_REASON, PROCESSING_MESSAGE) for c in calls)

    async def reason_from_text(self, text: str, round_no: int) -> None:
        """A text reply to the forced reasoning request: the round's reasoning, fed back."""
        summary = strip_markup(text)[:_TEXT_REASONING_CHARS].strip()
        if not summary:
            return
        self.state.last_summary = summary
        await self.ctx.bus.emit(
            Reasoning(round=round_no, last_step="", summary=summary, source="text")
        )
        await self.builtins.emit_structured(summary)
        self.feed_back_reasoning()

    def feed_back_reasoning(self) -> None:
        """Append the round's reasoning as the system message that drives its action."""
        state = self.state
        text = prompts.reasoning_feedback(
            state.last_summary,
            state.last_step,
            state.prompt,
            step_mode=self.get_category() == "step",
        )
        state.ledger.append(SystemMessage(content=text))

    async def ask(
        self, phase: Literal["reasoning", "action"], choice: ToolChoice, round_no: int
    ) -> bool:
        """Request, act on the response; False when it ended the loop."""
        state = self.state
        if await self.usage_limited():
            return False
        if state.phase != phase:
            state.phase = phase
        try:  # `request_in_window` inline, as in `think`
            response = await self.ctx.caller.request(phase, self.tools, choice)
        except ContextOverflowError as exc:
            refitted = await self.refit_or_answer(exc, phase, choice)
            if refitted is None:
                return False
            response = refitted
        calls = await act(self.ctx, response, self.builtins, round_no)
        if not calls:
            return await self.on_text_reply(response.text)
        if state.text_replies:
            state.text_replies = 0
        await self.after_calls(calls)
        return True

    async def refit_or_answer(
        self, exc: ContextOverflowError, phase: str, choice: ToolChoice
    ) -> ModelResponse | None:
        """The round's request made to fit after ``exc``; None when the loop ended instead."""
        try:
            return await refit(self.ctx, exc, phase, self.tools, choice)
        except ContextOverflowError as final:
            await self.answer_on_overflow(final)
            return None

    async def answer_on_overflow(self, exc: ContextOverflowError) -> None:
        """End the loop with an answer after the window refused a round's request.

        Raises ``exc`` when compaction is off, or when nothing was gathered and the prompt
        itself is too long.
        """
        if not compaction_on(self.config):
            raise exc
        gathered = gathered_results(self.state.ledger.messages)
        if not gathered and not prompt_fits(self.ctx, exc):
            raise exc
        try:
            await self.final_answer(prompts.overflow_instruction(gathered), "context_overflow")
        except ContextOverflowError:
            if not gathered:
                raise
            self.finish(gathered, "context_overflow")

    async def on_text_reply(self, text: str) -> bool:
        """A reply without tool calls in the acting phase, by the stop protocol."""
        if self.state.suggested_stop:
            await self.settle_answer(text, "answered")
            return False
        if not text.strip():  # already asked for twice by RunContext.request
            self.finish("", "answered")
            return False
        if self.remind_once():
            return True
        await self.settle_answer(text, "answered_without_stop")
        return False

    def remind_once(self) -> bool:
        """Remind the model of the stop protocol after its first text reply in a row."""
        state = self.state
        state.text_replies += 1
        if state.text_replies > 1:
            return False
        step_mode = self.get_category() == "step"
        self.ctx.append_user(prompts.stop_protocol_reminder(step_mode=step_mode))
        return True

    async def after_calls(self, calls: tuple[ToolCallPart, ...]) -> None:
        """After a batch: feed reasoning back, keep the call signature, reflect after a stop."""
        thought = False
        signatures: list[str] = []
        for call in calls:
            if call.name == THINK_AND_REASON:
                thought = True
            else:
                signatures.append(call_signature(call))
                if not self.progressed and self._advances(call.name):
                    self.progressed = True
        if signatures:
            signatures.sort()
            self.state.round_signature = " ".join(signatures)
        if thought and self.state.last_summary:
            self.feed_back_reasoning()
        if self.builtins.reflection_pending:
            await self._reflect()

    def _advances(self, name: str) -> bool:
        """True for a call that moves the work on: a stateful tool (thinking, todo), the plan."""
        if name == UPDATE_STEP:
            return True
        found = self.ctx.tools.get(name)
        return found is not None and found.state_type is not None

    def _must_think(self, round_no: int) -> bool:
        if self.state.suggested_stop or THINK_AND_REASON not in self.builtins:
            return False
        mode = self._thought_mode()
        if mode == "reasoning-required":
            return not self._reasoned_last()
        return mode == "reasoning" and round_no == 1

    def _thought_mode(self) -> str:
        """The config's mode; an agent sets it from its profile, a bare config may not."""
        return self.config.agent_thought_mode or DEFAULT_THOUGHT_MODE

    def _reasoned_last(self) -> bool:
        """Whether the previous action request was answered with reasoning only.

        That reasoning is this round's: forcing another would spend a request on the same
        thought (small models answer the action request with ``think_and_reason`` often).
        """
        for message in reversed(self.state.ledger.messages):
            if isinstance(message, AssistantMessage):
                names = {c.name for c in message.tool_calls}
                return THINK_AND_REASON in names and self._needs_action(message.tool_calls)
            if isinstance(message, UserMessage):
                return False  # the runtime said something since (a correction, a summary)
        return False

    async def after_round(self) -> None:
        """Count the round, run the loop guard, keep the context inside its window."""
        state = self.state
        state.rounds += 1
        summary = state.last_summary.strip().lower()
        signature, state.round_signature = state.round_signature, ""
        progressed, self.progressed = self.progressed, False
        repeated = (summary and summary == state.loop_summary and not progressed) or (
            signature and signature == state.last_signature
        )
        if repeated or state.reasoning_pc:
            state.reasoning_pc = state.reasoning_pc + 1 if repeated else 0
        if summary != state.loop_summary:
            state.loop_summary = summary
        state.last_signature = signature
        if state.reasoning_pc and not state.suggested_stop:  # a repeat; a stop is never one
            await self._guard_loop(signature or summary)
        if not state.done:
            await compact_if_needed(self.ctx)

    async def _guard_loop(self, shown: str) -> None:
        state = self.state
        if state.loop_corrected is not None and state.reasoning_pc > 0:
            await self.ctx.bus.emit(
                LoopDetected(signature=shown, repeats=state.reasoning_pc + 1, action="ended")
            )
            gathered = gathered_results(self.state.ledger.messages)
            await self.final_answer(prompts.loop_final_instruction(gathered), "loop")
            return
        if state.reasoning_pc > self.config.loop_reasoning_trigger:
            repeats = state.reasoning_pc + 1
            await self.ctx.bus.emit(
                LoopDetected(signature=shown, repeats=repeats, action="corrected")
            )
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

    def judge(self) -> None:
        """Judge the verdicts of a reflection round restored mid-way."""
        judge_reflection(self.ctx)
