"""`AgentStrategy`: the hooks a workflow program calls, with sensible defaults.

The driver creates a strategy for each run (and each resume). A strategy keeps nothing of
its own: all it knows is in ``RunState``, so a restored run gets a fresh strategy and goes
on as if it had never stopped. Categories: ``agent`` strategies are driven by the
framework loop (``single_execute`` → go on?); ``step`` strategies (`StepReActStrategy` and
its subclasses) run the step loop; ``rag``, ``chat`` and ``workflow`` strategies take full
control in ``run``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from ponder.agent.strategies import prompts
from ponder.agent.strategies.answer import (
    answer_problem,
    gathered_results,
    lost_results,
    strip_markup,
    without_call_text,
    without_repeats,
)
from ponder.agent.strategies.echo import (
    ECHO_WINDOW,
    Said,
    said_by_runtime,
    substantive,
    without_echo,
)
from ponder.agent.strategies.fitting import request_in_window
from ponder.events import AnswerWithdrawn, LimitReached, TextDelta
from ponder.messages import SystemMessage, ToolCallPart
from ponder.status import LIMIT_STOP_REASONS, LoopLimit, StopReason
from ponder.tools.tool import ToolResult

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext

__all__ = ["REFUSALS_EXHAUSTED", "AgentStrategy", "StrategyCategory"]

StrategyCategory = Literal["agent", "step", "rag", "chat", "workflow"]

REFUSALS_EXHAUSTED = (
    "[ponder] The model kept calling tools after the tool budget was spent; the turn was "
    "closed without an answer."
)


class AgentStrategy:
    """Base class of strategies. Subclass it and override the hooks you need."""

    category: ClassVar[StrategyCategory] = "agent"

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.state = ctx.state
        self.config = ctx.config

    @classmethod
    def get_category(cls) -> StrategyCategory:
        """How the workflow drives this strategy."""
        return cls.category

    async def on_init(self) -> None:
        """Put the system prompt and the user's message into the ledger (once per turn)."""
        ledger = self.state.ledger
        system = prompts.system_prompt(self.ctx.instructions, self.protocol())
        if system and not any(isinstance(m, SystemMessage) for m in ledger.messages[:1]):
            ledger.replace([SystemMessage(content=system), *ledger.messages])
        ledger.append(self.state.prompt_message())

    def protocol(self) -> str:
        """What the system prompt says about the strategy's tools (none by default)."""
        return ""

    async def on_entry(self) -> None:
        """Called once when the strategy starts working on the turn."""

    async def single_execute(self) -> bool:
        """One framework-driven round; return True to go on. Agent category only."""
        raise NotImplementedError(f"{type(self).__name__} does not run rounds")

    async def after_round(self) -> None:
        """Called after every round that returned True (the loop body)."""

    async def run(self) -> None:
        """Full control of the turn (``rag``, ``chat`` and ``workflow`` categories)."""
        raise NotImplementedError(f"{type(self).__name__} does not take full control")

    async def call_tool(self, call: ToolCallPart) -> ToolResult:
        """Run one tool call outside a batch and return its result."""
        outcomes = await self.ctx.executor.run_batch(
            [call],
            run_id=self.state.run_id,
            states=self.state.tool_states,
            deps=self.ctx.deps,
            run=self.ctx,
        )
        return outcomes[0].result

    async def usage_limited(self) -> bool:
        """True when a limit of the run's `UsageLimits` ended the loop (with an answer)."""
        state = self.state
        limits = state.limits
        if limits is None or state.done:
            return False
        reached = limits.reached(state.usage, state.tool_calls)
        if reached is None:
            return False
        await self.on_limited(*reached)
        return True

    async def on_limited(self, limit: LoopLimit, value: int) -> None:
        """A limit ended the tool loop: by default, answer without tools."""
        await self.ctx.bus.emit(LimitReached(limit=limit, value=value))
        stop_reason = LIMIT_STOP_REASONS[limit]
        gathered = gathered_results(self.state.ledger.messages)
        await self.final_answer(prompts.limit_instruction(limit, value, gathered), stop_reason)

    async def on_exception(self, exc: BaseException) -> None:
        """Called when the turn fails, before the error reaches the caller."""

    async def on_post_process(self) -> None:
        """Called once at the end of the turn; makes sure there is an output."""
        if self.state.output is None:
            await self.final_answer(None, self.state.stop_reason or "answered")

    async def final_answer(self, instruction: str | None, stop_reason: StopReason) -> None:
        """Ask for the answer with tools off (after an optional instruction) and keep it.

        An answer that still calls tools gets refusals and is asked again, at most
        ``agent_tool_refusal_rounds`` times; then the turn closes with a notice.
        """
        if instruction:
            self.ctx.append_user(instruction)
        for _ in range(self.config.agent_tool_refusal_rounds):
            output = self.ctx.answer_schema
            response = await request_in_window(self.ctx, "final_answer", (), "none", output=output)
            self.state.ledger.append(response.to_message())
            for call in response.tool_calls:
                refused = ToolResult.fail("tools are off now; answer in plain text")
                self.state.ledger.append(refused.to_message(call))
            if response.text.strip() or not response.tool_calls:
                await self.settle_answer(response.text, stop_reason)
                return
        self.finish(REFUSALS_EXHAUSTED, stop_reason)

    async def settle_answer(self, text: str, stop_reason: StopReason) -> None:
        """Keep ``text`` as the answer; one more request first if it echoes ponder's markup.

        An answer is asked for again when it has markup or says nothing but ponder's own
        instructions (see `ponder.agent.strategies.echo`); one that still has markup after
        that is cleaned of it (an empty one was already asked for again by
        ``RunContext.request``). Streamed text that is not kept is withdrawn.
        """
        said = self.said()
        problem = answer_problem(text, said) if text.strip() else None
        if problem is not None and not self.state.answer_retried:
            self.state.answer_retried = True
            self.withdraw(text, problem, retrying=True)
            await self.final_answer(prompts.answer_correction(problem), stop_reason)
            return
        self.finish_cleaned(text, stop_reason, said)

    def said(self) -> Said:
        """What ponder told the model that an answer may echo.

        The system prompt, the turn's prompt and the latest `ECHO_WINDOW` messages.
        """
        messages = self.state.ledger.messages
        head = [m for m in messages[:1] if isinstance(m, SystemMessage)]
        recent = messages[-ECHO_WINDOW:]
        return said_by_runtime([*head, self.state.prompt_message(), *recent])

    def finish_cleaned(self, text: str, stop_reason: StopReason, said: Said | None = None) -> None:
        """Finish with ``text`` cleaned of markup and of ponder's instructions.

        Nothing left is no answer, unless tools gave results: then those are the answer.
        """
        if said is None:
            said = self.said()
        cleaned = strip_markup(text)
        messages = self.state.ledger.messages
        if self.ctx.output is None:  # a JSON answer is checked against its schema instead
            cleaned = without_repeats(without_call_text(cleaned, messages))
        cleaned, echoed = without_echo(cleaned, said)
        if echoed and not substantive(cleaned):
            cleaned = ""
        if text.strip() and not cleaned:
            cleaned = gathered_results(messages)  # the tools' results are the answer
            if not cleaned:
                stop_reason = "empty_answer"
        elif cleaned and self.config.answer_keeps_results and self.ctx.output is None:
            lost = lost_results(cleaned, messages)
            if lost:
                cleaned = f"{cleaned}\n\n{lost}"
        if cleaned != text.strip():
            self.withdraw(text, "cleaned of markup, instructions or repeats", retrying=False)
        self.finish(cleaned, stop_reason)

    def withdraw(self, text: str, reason: str, *, retrying: bool) -> None:
        """Tell stream consumers that the answer text streamed so far is not the answer."""
        ctx = self.ctx
        if ctx.caller.answer_streamed:
            ctx.caller.answer_streamed = False
            ctx.bus.emit_now(AnswerWithdrawn(text=text, reason=reason, retrying=retrying))

    def finish(self, output: str, stop_reason: StopReason) -> None:
        """Record the turn's answer and end the loop.

        An empty "answer" after the model gave no answer twice (empty, or withheld by a
        content filter) stops with that reason instead of ``answered``.
        """
        blank = self.ctx.caller.unanswered
        if stop_reason == "answered" and blank is not None and not output.strip():
            stop_reason = "content_filter" if blank == "content_filter" else "empty_answer"
        self.state.output = output
        self.state.stop_reason = stop_reason
        self.state.done = True
        ctx = self.ctx
        if (
            output
            and ctx.caller.stream_text
            and not ctx.caller.answer_streamed
            and ctx.output is None
        ):
            ctx.bus.emit_now(
                TextDelta(text=output)
            )  # settled from a reply that streamed as reasoning
