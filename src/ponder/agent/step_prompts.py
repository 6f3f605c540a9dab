"""The texts the step-driven workflow, compaction, RAG and the report guard inject."""

from __future__ import annotations

from collections.abc import Sequence

from ponder.agent.step_state import PlanStep

__all__ = [
    "COMPACTION_INSTRUCTION",
    "DECOMPOSE_INSTRUCTION",
    "STEP_SUMMARY_HEADER",
    "abandon_instruction",
    "plan_status",
    "rag_system_prompt",
    "replan_instruction",
    "report_instruction",
    "stall_correction",
    "step_stop_result",
    "step_summary_instruction",
    "steps_final_instruction",
    "structured_correction",
]

DECOMPOSE_INSTRUCTION = (
    "<BEGIN_OF_PLANNING>Decide whether the task above needs several steps. Reply with JSON "
    'only: {"needs_decomposition": bool, "reason": str, "steps": [{"id": str, '
    '"description": str, "depends_on": [ids]}]}. Chit-chat or a task one tool call can '
    "do needs no decomposition (steps: []). Otherwise give 2 or more steps with unique "
    "ids; depends_on lists the steps that must finish first; no cycles.<END_OF_PLANNING>"
)

STEP_SUMMARY_HEADER = "[Summary of previous steps]"

COMPACTION_INSTRUCTION = (
    "<BEGIN_OF_COMPACTION>Summarise the conversation above for your own later use: the "
    "user's requests, the facts and tool results found, decisions made and what is still "
    "open. Be concise and keep names, numbers and identifiers exact. Plain text only."
    "<END_OF_COMPACTION>"
)


def structured_correction(error: str) -> str:
    """Told to the model when its structured output could not be used."""
    return (
        f"<BEGIN_OF_CORRECTION>Your previous reply could not be used: {error}. Reply again "
        "with JSON only, matching the requested structure exactly.<END_OF_CORRECTION>"
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


def rag_system_prompt(instructions: str, passages: Sequence[str]) -> str:
    """The system prompt of a RAG answer: instructions plus the retrieved passages."""
    found = "\n\n".join(passages) if passages else "(no matching documents were found)"
    head = instructions.strip() + "\n\n" if instructions.strip() else ""
    return (
        f"{head}Answer the user's question from the documents below. Cite the source "
        "names you use. If the documents do not contain the answer, say so.\n\n"
        f"<documents>\n{found}\n</documents>"
    )


_LEVELS = {
    "low": "Flag only clearly severe content: instructions for serious violence, weapons "
    "capable of mass harm, sexual content involving minors.",
    "medium": "Flag severe content, and also harassment, hate speech, threats, self-harm "
    "encouragement, or requests to facilitate crime.",
    "high": "Be strict: flag anything severe or abusive, and also insults, explicit sexual "
    "content, or borderline requests that could enable harm.",
}


def report_instruction(level: str) -> str:
    """The classifier prompt of the content report guard at ``level``."""
    return (
        "You are a content moderation classifier. Classify the user's message below. "
        f"Strictness: {level}. {_LEVELS.get(level, _LEVELS['medium'])} Reply with JSON "
        'only: {"flagged": bool, "category": str, "reason": str}; category is '
        "'none' when not flagged."
    )
