"""The texts the runtime injects into a conversation. Kept together so they can be read."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ponder.config import AgentConfig

__all__ = [
    "COMPACTION_INSTRUCTION",
    "CONTROL_PHRASES",
    "FINAL_ANSWER_INSTRUCTION",
    "REASONING_RECORDED",
    "REASONING_TEMPLATE",
    "STEP_SUMMARY_HEADER",
    "agent_protocol",
    "answer_correction",
    "compaction_instruction",
    "limit_instruction",
    "loop_correction",
    "loop_final_instruction",
    "rag_system_prompt",
    "reasoning_feedback",
    "reflection_correction",
    "reflection_request",
    "report_instruction",
    "stop_protocol_reminder",
    "structured_correction",
    "structured_guidance",
    "system_prompt",
]

REASONING_RECORDED = "Reasoning recorded."

REASONING_TEMPLATE = (
    "<BEGIN_OF_REASONING>\n"
    "Request: {request}\n"
    "{last_step}"
    "Reasoning: {summary}\n"
    "{act}\n"
    "<END_OF_REASONING>"
)
"""Rendered as a system message after each round's reasoning; it drives the next action.

Kept short: it is sent again with every later request of the run (small local models
have 2k-token windows)."""

_REQUEST_CHARS = 200


def reasoning_feedback(summary: str, last_step: str, request: str, *, step_mode: bool) -> str:
    """The round's reasoning as the system message that drives its action request."""
    request = " ".join(request.split())
    if len(request) > _REQUEST_CHARS:
        request = request[:_REQUEST_CHARS] + " [...]"
    done = "the step is done" if step_mode else "you can answer"
    return REASONING_TEMPLATE.format(
        request=request or "(none)",
        last_step=f"Last step: {last_step}\n" if last_step else "",
        summary=summary,
        act=f"Act on it now, or call agent_stop when {done}.",
    )


def agent_protocol(offered: Collection[str], thought_mode: str, *, reflection: bool) -> str:
    """The round protocol, naming only the built-in tools that are ``offered``."""
    lines = ["You work in rounds."]
    if "think_and_reason" in offered:
        lines.append(
            {
                "reasoning-required": "Each round starts with think_and_reason: say what the "
                "last step did and what you will do next.",
                "reasoning": "The first round starts with think_and_reason: say what you "
                "will do. Call it again whenever you need to re-plan.",
            }.get(
                thought_mode,
                "Call think_and_reason beside your other calls to say what the last step "
                "did and what you will do next.",
            )
        )
    lines.append("Act by calling the tools you need (several at once when they are independent).")
    if "processing_message" in offered:
        lines.append("Tell the user about your progress with processing_message.")
    stop = "When you have enough information, call agent_stop"
    if reflection:
        stop += "; you will then check your reasoning with verify_reasoning"
    lines.append(stop + ". Then write the final answer for the user in plain text.")
    return " ".join(lines)


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


def system_prompt(instructions: str, protocol: str = "", guidance: str = "") -> str:
    """The system prompt: the user's instructions, then the round protocol, if any."""
    parts = [instructions.strip()] if instructions.strip() else []
    parts += [text for text in (protocol, guidance) if text]
    return "\n\n".join(parts)


def _results_part(gathered: str) -> str:
    """The sentence that lists the gathered results inside an instruction (a space if none)."""
    return f" The results of your tool calls:\n{gathered}\n" if gathered else " "


def limit_instruction(limit: str, value: int, gathered: str = "") -> str:
    """Told to the model when a limit ends the tool loop, with the results it gathered."""
    what = {"rounds": "tool rounds", "tool_calls": "tool calls"}.get(limit, limit)
    found = _results_part(gathered)
    return (
        f"<BEGIN_OF_INSTRUCTIONS>The limit of {value} {what} has been reached, so no more "
        f"tools can be called.{found}Answer the user's request now from these results, and "
        "say briefly what is still missing, if anything.<END_OF_INSTRUCTIONS>"
    )


def overflow_instruction(gathered: str = "") -> str:
    """Told to the model when the context window ended the tool loop."""
    found = _results_part(gathered)
    return (
        "<BEGIN_OF_INSTRUCTIONS>The context window is full, so no more tools can be "
        f"called.{found}Answer the user's request now in a few sentences from what you "
        "have.<END_OF_INSTRUCTIONS>"
    )


def loop_correction(repeats: int) -> str:
    """Injected when rounds repeat."""
    return (
        f"<BEGIN_OF_LOOP_CORRECTION>Your last {repeats} rounds repeated the same reasoning or "
        "the same tool calls without progress. Stop repeating: try a different approach, "
        "use what you already have, or call agent_stop.<END_OF_LOOP_CORRECTION>"
    )


def loop_final_instruction(gathered: str = "") -> str:
    """Injected when the repetition goes on after the correction."""
    found = _results_part(gathered)
    return (
        "<BEGIN_OF_INSTRUCTIONS>The task was stopped because your rounds kept repeating "
        f"after a correction. Do not call any tools.{found}Tell the user plainly that you "
        "got stuck repeating the same steps, then give the best answer you can from what "
        "you found.<END_OF_INSTRUCTIONS>"
    )


def stop_protocol_reminder(*, step_mode: bool = False) -> str:
    """Told to the model when it replies in text before calling agent_stop."""
    taken = "the result of the current step" if step_mode else "your final answer"
    return (
        "<BEGIN_OF_INSTRUCTIONS>That reply was not a tool call. Call the tools you need, or "
        "call agent_stop if you have enough to answer. If you reply in text again, that "
        f"text is taken as {taken}.<END_OF_INSTRUCTIONS>"
    )


def answer_correction(problem: str) -> str:
    """Told to the model when its answer could not be given to the user as it was."""
    return (
        f"<BEGIN_OF_INSTRUCTIONS>Your answer {problem}. Write the answer to the user's "
        "request again, in plain words only, without any markup or instructions."
        "<END_OF_INSTRUCTIONS>"
    )


CONTROL_PHRASES = (
    "You must NOT call any tools again",
    "no more tools can be called",
    "Answer the user's request now from these results",
    "Act on it now, or call agent_stop when",
    "That reply was not a tool call",
    "Reasoning recorded.",
    "repeated the runtime's instructions",
    "contained markup that is not meant for the user",
    "Write the answer to the user's request again",
)
"""Sentences of ponder's own instructions; an answer that repeats one echoed them."""


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


def output_instruction(name: str) -> str:
    """Asks for the final answer in the run's output structure."""
    return (
        f"<BEGIN_OF_OUTPUT>Give your final answer now as JSON only, in the requested "
        f"structure ({name}), drawing on everything above.<END_OF_OUTPUT>"
    )


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
