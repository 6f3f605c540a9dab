"""Reflection after ``agent_stop``: the spec's three checks, every round.

A round asks for all three checks (``self_check``, ``contradiction_check``,
``completeness_check``) in one request: only ``verify_reasoning`` is offered, with
tool_choice ``required``. A check the response left out — a provider that makes one call
per response, or a model that skipped one — is then asked for alone with
``verify_reasoning`` forced (once more when the reply gave another check type instead),
until every check has a verdict or one has failed. Each verdict is streamed as a
``Reflection`` event. Any ``fail`` (or a check still without a verdict) sends the model
back to work with the failed checks' details, and its next ``agent_stop`` starts another
round, up to ``reflection_depth`` rounds; otherwise the final-answer instruction follows.

One request for the three checks was measured against three forced requests (``python -m
bench reflection``, the fake provider's count of characters / 4): 756 vs 2,530 tokens
after 2 small tool rounds, 3,841 vs 11,785 after 6 rounds of 2,000 characters, 13,184 vs
39,815 after 12 rounds of 4,000 — three requests resend the transcript, about 3× the cost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ponder.agent.strategies import prompts
from ponder.agent.strategies.acting import act
from ponder.agent.strategies.fitting import request_in_window
from ponder.models.base import ForceTool, ToolChoice
from ponder.tools.builtin import VERIFY_REASONING

if TYPE_CHECKING:
    from ponder.agent.run.context import RunContext
    from ponder.agent.run.state import RunState
    from ponder.agent.strategies.builtins import Builtins

__all__ = ["CHECKS", "check_request", "checks_request", "judge_reflection", "reflect"]

CHECKS = ("self_check", "contradiction_check", "completeness_check")
ASKS_PER_CHECK = 2
"""How often a missing check is asked for alone: again after a reply of another check type."""
_MEANING = {
    "self_check": "is each step of the reasoning logically sound?",
    "contradiction_check": "do any of your statements or findings contradict each other?",
    "completeness_check": "does the answer cover everything the user asked for?",
}


def checks_request() -> str:
    """Asks for the three checks at once."""
    lines = "\n".join(f"- {name}: {_MEANING[name]}" for name in CHECKS)
    return (
        "<BEGIN_OF_REFLECTION>Before answering, verify your reasoning chain: call "
        "verify_reasoning three times now, in this one reply, once for each check_type, "
        f"each with result pass, warning or fail and a short detail.\n{lines}"
        "<END_OF_REFLECTION>"
    )


def check_request(name: str) -> str:
    """Asks for one check the previous reply left out."""
    return (
        f"<BEGIN_OF_REFLECTION>Now call verify_reasoning with check_type {name}: "
        f"{_MEANING[name]}<END_OF_REFLECTION>"
    )


async def _ask(ctx: RunContext, builtins: Builtins, instruction: str, choice: ToolChoice) -> None:
    ctx.append_user(instruction)
    offered = [builtins.definitions[VERIFY_REASONING]]
    response = await request_in_window(ctx, "reflection", offered, choice)
    await act(ctx, response, builtins, ctx.state.rounds + 1)


def _failed(state: RunState) -> list[str]:
    checks = state.reflection_checks
    return [f"{name}: {detail}" for name, (v, detail) in checks.items() if v == "fail"]


async def reflect(ctx: RunContext, builtins: Builtins, *, then_answer: bool = True) -> None:
    """One reflection round: the three checks, then a correction or the final instruction.

    Without ``then_answer`` a pass adds no instruction (the caller asks for the answer).

    The round's verdicts live in the run state, so a run restored mid-reflection (its
    ``phase`` is ``reflection``) is judged by `judge_reflection` as if uninterrupted.
    """
    state = ctx.state
    state.reflection_attempts += 1
    state.reflection_verdicts, state.reflection_checks = (), {}
    phase, state.phase = state.phase, "reflection"
    await _ask(ctx, builtins, checks_request(), "required")
    for name in CHECKS:
        for _ in range(ASKS_PER_CHECK):
            if _failed(state) or name in state.reflection_checks:
                break
            given = len(state.reflection_verdicts)
            await _ask(ctx, builtins, check_request(name), ForceTool(VERIFY_REASONING))
            if len(state.reflection_verdicts) == given:
                break  # no verdict at all: asking again would not get one either
    state.phase = phase
    judge_reflection(ctx, then_answer=then_answer)


def judge_reflection(ctx: RunContext, *, then_answer: bool = True) -> None:
    """A fail or a missing check sends the model back to work; else it writes the answer."""
    state = ctx.state
    failed = _failed(state)
    if not failed:
        given = state.reflection_checks
        failed = [f"{name}: no verdict given" for name in CHECKS if name not in given]
    if failed:
        state.suggested_stop = False
        ctx.append_user(prompts.reflection_correction("; ".join(failed)))
    elif then_answer:
        ctx.append_user(prompts.FINAL_ANSWER_INSTRUCTION)
