"""The texts the runtime injects into a conversation. Kept together so they can be read."""

from __future__ import annotations

from collections.abc import Sequence

from ponder.config import AgentConfig

__all__ = [
    "AGENT_PROTOCOL",
    "COMPACTION_INSTRUCTION",
    "FINAL_ANSWER_INSTRUCTION",
    "REASONING_RECORDED",
    "STEP_SUMMARY_HEADER",
    "compaction_instruction",
    "limit_instruction",
    "loop_correction",
    "loop_final_instruction",
    "rag_system_prompt",
    "reflection_correction",
    "reflection_request",
    "report_instruction",
    "structured_correction",
    "structured_guidance",
    "system_prompt",
]

AGENT_PROTOCOL = (
    "You work in rounds. In each round, think first with think_and_reason, then act by "
    "calling the tools you need (several at once when they are independent). When you "
    "have enough information, call agent_stop, then write the final answer for the user."
)

REASONING_RECORDED = "Reasoning recorded. Now act on it."

FINAL_ANSWER_INSTRUCTION = (
    "<BEGIN_OF_INSTRUCTIONS>You have stopped the tool loop. Now generate the final, "
    "comprehensive response to the user's request from what you found. You must NOT call "
    "any tools again.<END_OF_INSTRUCTIONS>"
)


def structured_guidance(config: AgentConfig) -> str:
    """Guidance for the ``summary`` field when structured reasoning is on."""
    if not config.structured_reasoning:
        return ""
    text = (
        f"Write the summary as at most {config.reasoning_depth} blocks, each starting with "
        "'[Step N/M] [phase]' where phase is one of analyze, plan, execute, verify, "
        "followed by the sub-problem on the same line."
    )
    if config.tool_prediction:
        text += (
            " End with '[TOOL_PREDICTION] tool_a, tool_b -> next action' naming the tools "
            "you expect to need."
        )
    return text


def system_prompt(instructions: str, config: AgentConfig) -> str:
    """The system prompt: the user's instructions plus the round protocol in agent mode."""
    parts = [instructions.strip()] if instructions.strip() else []
    if config.tool_calling_mode == "agent" and config.agent_strategy != "no-action":
        parts.append(AGENT_PROTOCOL)
        guidance = structured_guidance(config)
        if guidance:
            parts.append(guidance)
    return "\n\n".join(parts)


def limit_instruction(limit: str, value: int) -> str:
    """Told to the model when a limit ends the tool loop."""
    what = {"rounds": "tool rounds", "tool_calls": "tool calls"}.get(limit, limit)
    return (
        f"<BEGIN_OF_INSTRUCTIONS>The limit of {value} {what} has been reached, so no more "
        "tools can be called. Answer the user's request now with what you have found, and "
        "say briefly what is still missing, if anything.<END_OF_INSTRUCTIONS>"
    )


def loop_correction(repeats: int) -> str:
    """Injected when rounds repeat."""
    return (
        f"<BEGIN_OF_LOOP_CORRECTION>Your last {repeats} rounds repeated the same reasoning or "
        "the same tool calls without progress. Stop repeating: try a different approach, "
        "use what you already have, or call agent_stop.<END_OF_LOOP_CORRECTION>"
    )


def loop_final_instruction() -> str:
    """Injected when the repetition goes on after the correction."""
    return (
        "<BEGIN_OF_INSTRUCTIONS>The task was stopped because your rounds kept repeating "
        "after a correction. Do not call any tools. Tell the user plainly that you got "
        "stuck repeating the same steps, then give the best answer you can from what you "
        "found.<END_OF_INSTRUCTIONS>"
    )


def reflection_request() -> str:
    """Injected before a forced ``verify_reasoning`` call."""
    return (
        "<BEGIN_OF_REFLECTION>Before answering, verify your reasoning chain with "
        "verify_reasoning: its logic, its consistency, and whether it covers everything "
        "the user asked.<END_OF_REFLECTION>"
    )


def reflection_correction(detail: str) -> str:
    """Injected when reflection fails."""
    return (
        "<BEGIN_OF_REFLECTION_CORRECTION>Your verification failed: "
        f"{detail.strip() or 'no detail given'}. Fix the problem — reason again and use "
        "tools as needed — then call agent_stop again.<END_OF_REFLECTION_CORRECTION>"
    )


STEP_SUMMARY_HEADER = "[Summary of previous steps]"

_COMPACTION_TASK = (
    "Summarise the conversation above for your own later use: the user's requests, the "
    "facts and tool results found, decisions made and what is still open. Be concise and "
    "keep names, numbers and identifiers exact. Plain text only."
)
COMPACTION_INSTRUCTION = f"<BEGIN_OF_COMPACTION>{_COMPACTION_TASK}<END_OF_COMPACTION>"


def compaction_instruction(budget: int | None) -> str:
    """The summary request; ``budget`` is the summary's size in tokens (``None``: no limit)."""
    limit = "" if budget is None else f" Use at most {budget} tokens."
    return f"<BEGIN_OF_COMPACTION>{_COMPACTION_TASK}{limit}<END_OF_COMPACTION>"


def structured_correction(error: str) -> str:
    """Told to the model when its structured output could not be used."""
    return (
        f"<BEGIN_OF_CORRECTION>Your previous reply could not be used: {error}. Reply again "
        "with JSON only, matching the requested structure exactly.<END_OF_CORRECTION>"
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
