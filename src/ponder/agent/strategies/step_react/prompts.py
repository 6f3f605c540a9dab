"""The texts the step-driven workflow injects: planning, step status, stalls, summaries."""

from __future__ import annotations

from collections.abc import Sequence

from ponder.agent.run.plan_state import PlanStep

__all__ = [
    "DECOMPOSE_INSTRUCTION",
    "abandon_instruction",
    "plan_status",
    "replan_instruction",
    "stall_correction",
    "step_stop_result",
    "step_summary_instruction",
    "steps_final_instruction",
]

DECOMPOSE_INSTRUCTION = (
    "<BEGIN_OF_PLANNING>Decide whether the task above needs several steps. Reply with JSON "
    'only: {"needs_decomposition": bool, "reason": str, "steps": [{"id": str, '
    '"description": str, "depends_on": [ids]}]}. Chit-chat or a task one tool call can '
    "do needs no decomposition (steps: []). Otherwise give 2 or more steps with unique "
    "ids; depends_on lists the steps that must finish first; no cycles.<END_OF_PLANNING>"
)


def plan_status(rendered: str, current: PlanStep) -> str:
    """The plan's status and the current step, injected when the plan changed."""
    return (
        f"[Plan status]\n{rendered}\n[Current step] {current.id}: {current.description}\n"
        "Work only on the current step. When it is finished, call agent_stop with its "
        "result: that closes this step, and the framework moves to the next one. Use "
        "update_step to revise the plan if it is wrong."
    )


def step_stop_result(step_id: str, remaining: int) -> str:
    """The result of ``agent_stop`` inside a step."""
    if remaining:
        return f"Step {step_id!r} is closed. {remaining} step(s) remain; they run next."
    return f"Step {step_id!r} is closed. It was the last step; the final answer comes next."


def step_summary_instruction(step: PlanStep) -> str:
    """Ask for the summary of a step that just ended."""
    return (
        f"<BEGIN_OF_STEP_SUMMARY>Step {step.id!r} ({step.description}) has ended. Reply "
        'with JSON only: {"summary": str, "outputs": [str]} — one or two sentences on '
        "what the step achieved, and the concrete results later steps need."
        "<END_OF_STEP_SUMMARY>"
    )


def stall_correction(signature: str, repeats: int) -> str:
    """Injected the first time a step stalls."""
    return (
        f"<BEGIN_OF_STALL_CORRECTION>You made the same call {repeats} times in this step "
        f"and got the same result each time: {signature}. Repeating it will not help. Use "
        "the result you have, try a different approach, revise the plan with update_step, "
        "or close the step with agent_stop.<END_OF_STALL_CORRECTION>"
    )


def replan_instruction(step: PlanStep, signature: str) -> str:
    """Ask for a new plan after a step stalled past its correction."""
    return (
        f"<BEGIN_OF_REPLANNING>Step {step.id!r} ({step.description}) is stuck repeating "
        f"{signature}. It is abandoned. Plan the remaining work differently. Reply with "
        'JSON only: {"needs_decomposition": true, "reason": str, "steps": [{"id": '
        'str, "description": str, "depends_on": [ids]}]} listing only the steps still '
        "to do, with new ids; they may depend on finished steps.<END_OF_REPLANNING>"
    )


def abandon_instruction(step: PlanStep, signature: str) -> str:
    """Ask for an honest final answer after a stall ends the task."""
    return (
        "<BEGIN_OF_INSTRUCTIONS>The task was ABANDONED: step "
        f"{step.id!r} ({step.description}) kept repeating {signature} with the same result "
        "even after a correction. Do not call any tools. Tell the user plainly that the task "
        "could not be completed and where it got stuck, then give what was found so far."
        "<END_OF_INSTRUCTIONS>"
    )


def steps_final_instruction(plan: Sequence[PlanStep]) -> str:
    """Ask for the final answer once every step has run, with every step's result."""
    lines = []
    for step in plan:
        outputs = "; ".join(step.outputs)
        line = f"- {step.id} ({step.status}): {step.summary or 'no summary'}"
        lines.append(f"{line} | outputs: {outputs}" if outputs else line)
    results = "\n".join(lines)
    return (
        "<BEGIN_OF_INSTRUCTIONS>All steps of the plan have run. Their results:\n"
        f"{results}\nNow write the final, complete answer to the user's request from these "
        "results. You must NOT call any tools.<END_OF_INSTRUCTIONS>"
    )
